"""Cost report end to end over seed scenarios: real plans on the shipped catalog, totals, marks, constraints, rendering."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gpu_advisor.advisor import get_knowledge
from gpu_advisor.costing import build_cost_report, job_hours
from gpu_advisor.costing.purchase import break_even_months, spot_line
from gpu_advisor.costing.spot_history import sidecar_path
from gpu_advisor.plan.defaults import resolve_job
from gpu_advisor.plan.planner import plan
from gpu_advisor.answer.render import _environment
from gpu_advisor.workload import Workload

KB = get_knowledge()
DEEPLAB = {"task": "semantic_segmentation", "model": "DeepLabV3+", "backbone": "R-50-D8", "input_size": [1024, 1024],
           "batch_size_per_gpu": 8, "num_classes": 19, "dataset_size_gb": 11, "num_samples": 2975, "epochs": 200}
LLAMA_LORA = {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "seq_len": 2048,
              "num_samples": 50_000, "epochs": 3}
SWIN_L = {"task": "semantic_segmentation", "model": "UPerNet", "backbone": "Swin-L", "input_size": [1536, 1536],
          "batch_size_per_gpu": 8, "num_classes": 150, "num_gpus": 16, "num_samples": 20210, "epochs": 50}
SERVE = {"task": "inference", "model": "Llama 3.1 8B", "seq_len": 4096, "batch_size_per_gpu": 8}


def report(workload: dict, catalog=None):
    catalog = catalog or KB.catalog
    job = resolve_job(Workload.model_validate(workload), catalog)
    the_plan = plan(catalog, job.workload, job.region)
    return build_cost_report(the_plan, job, catalog), the_plan, job


def render(rep, lang: str) -> str:
    return _environment(lang).get_template("cost.md.j2").render(r=SimpleNamespace(cost=rep))


@pytest.mark.parametrize("workload", [DEEPLAB, {**DEEPLAB, "interruptible": True, "expected_months_of_use": 12}])
def test_seed_segmentation_has_three_real_options_with_totals_and_break_even(workload):
    rep, _, _ = report(workload)
    totals = [o for o in rep.options if o.payg_mid is not None]
    assert len(totals) >= 3
    for o in totals:
        assert KB.catalog.instance(o.instance_type) is not None
        assert o.time.wall_hours.low <= o.time.wall_hours.high
        assert o.purchase("savings_plan").break_even_months.low == pytest.approx(12 * 0.24)
        assert o.price_as_of and o.currency == "CNY" and o.region == "cn-hangzhou"
    assert {"cheapest", "recommended"} <= {m for o in rep.options for m in o.marks}
    assert rep.recommended and rep.why is not None
    spot = [o.purchase("spot") for o in totals]
    assert all(s.available for s in spot) == bool(workload.get("interruptible"))


def test_each_gpu_model_appears_once_and_only_catalog_types():
    rep, the_plan, _ = report(DEEPLAB)
    gpus = [o.gpu_id for o in rep.options]
    assert len(gpus) == len(set(gpus)) == len({c.gpu.id for c in the_plan.options})
    assert all(KB.catalog.instance(o.instance_type) for o in rep.options)


def test_options_without_a_price_have_no_total_and_say_so():
    rep, _, _ = report(DEEPLAB)
    unpriced = [o for o in rep.options if o.price_per_hour is None]
    assert unpriced
    for o in unpriced:
        assert o.purchase("payg").total is None and "no price" in o.purchase("payg").note.en
    assert rep.by_cost[-len(unpriced):] == [o.instance_type for o in rep.options[-len(unpriced):]]


def test_unnamed_gpu_without_tflops_gets_no_time():
    rep, _, _ = report(LLAMA_LORA)  # bf16: the unnamed 96 GB GPU has only an FP32 figure
    gn8v = next(o for o in rep.options if o.gpu_id == "GN8V-96GB-HBM3")
    assert gn8v.time.wall_hours is None and gn8v.payg_mid is None
    ampere80 = next(o for o in rep.options if o.gpu_id == "AMPERE-80GB")  # A100 80 GB: datasheet figures (issue 19)
    assert ampere80.time.wall_hours is not None and ampere80.payg_mid is not None


def test_a_deadline_nothing_meets_says_what_to_relax():
    rep, _, _ = report({**LLAMA_LORA, "deadline_hours": 1})
    assert rep.recommended is None
    assert any("deadline" in x.en for x in rep.relax)
    assert all(o.violations for o in rep.options)


def test_budget_per_hour_excludes_dear_options():
    rep, _, _ = report({**DEEPLAB, "budget_per_hour": 10})
    rec = rep.option(rep.recommended)
    assert rec.hourly_total <= 10
    assert all(o.violations for o in rep.options if o.hourly_total and o.hourly_total > 10)


def test_total_budget_too_small_asks_to_raise_it():
    rep, _, _ = report({**DEEPLAB, "budget_total": 1})
    assert rep.recommended is None and any("budget" in x.en for x in rep.relax)


def test_multi_node_jobs_list_shared_storage_without_a_price():
    from gpu_advisor.costing.notes import storage_lines

    _, _, job = report(DEEPLAB)
    lines = storage_lines(job, KB.catalog, nodes=2)
    assert any("CPFS" in s.item.en for s in lines) and all(s.price is None for s in lines)
    assert lines[0].size_gib == 11 and "not in the catalog" in lines[0].note.en


def test_serving_is_costed_per_month():
    rep, _, _ = report(SERVE)
    assert rep.basis == "month"
    a10 = next(o for o in rep.options if o.price_per_hour)
    assert a10.payg_mid == pytest.approx(a10.hourly_total * 730)


def test_job_hours_is_the_mid_estimate_of_an_option():
    rep, the_plan, job = report(DEEPLAB)
    hours = job_hours(the_plan.chosen, job)
    opt = rep.option(the_plan.chosen.instance.type)
    assert hours == pytest.approx(opt.time.wall_hours.mid)
    assert job_hours(the_plan.chosen, resolve_job(Workload.model_validate(SERVE), KB.catalog)) is None


def test_report_is_json_serialisable():
    rep, _, _ = report({**DEEPLAB, "interruptible": True})
    assert json.loads(rep.model_dump_json())["options"]


@pytest.mark.parametrize("lang,words", [("en", ["Time and cost", "Break-even", "recommended"]),
                                        ("zh", ["时间与费用", "回本月数", "推荐"])])
def test_partial_renders_the_table_in_both_languages(lang, words):
    rep, _, _ = report({**DEEPLAB, "interruptible": True})
    text = render(rep, lang)
    assert all(w in text for w in words)
    assert text.count("| `ecs.") == len(rep.options)


def test_partial_renders_nothing_without_a_report():
    assert render(None, "en").strip() == ""


def test_spot_range_spans_alibabas_published_floor_to_full_price_capped_at_payg():
    from gpu_advisor.costing.models import Range

    line = spot_line(10.0, Range(low=10, high=20), True, None)
    assert line.total.low == pytest.approx(10 * 10 * 0.10)
    # full price plus rework would exceed pay-as-you-go, which is then the choice: capped there, and said
    assert line.total.high == pytest.approx(20 * 10)
    assert "capped at the pay-as-you-go total" in line.note.en
    assert not spot_line(10.0, Range(low=10, high=20), False, None).available


def test_break_even_formula():
    even = break_even_months()
    assert (even.low, even.high) == (pytest.approx(12 * 0.24), pytest.approx(12 * 0.70))
    assert break_even_months(0.5).high == pytest.approx(2 * even.high)


def test_observed_spot_history_replaces_the_published_range(tmp_path):
    from gpu_advisor.kb.catalog_loader import load_catalog_dir
    from importlib.resources import files

    override = tmp_path / "override.yaml"
    override.write_text("prices: []\n", encoding="utf-8")
    sidecar_path(override).write_text(
        "spot_price_history:\n- {type: ecs.gn7i-c8g1.2xlarge, region: cn-hangzhou, min_ratio: 0.2, max_ratio: 0.4, "
        "samples: 3, zones: [cn-hangzhou-h], period: 2026-11-22/2026-11-29, currency: CNY, "
        "source: DescribeSpotPriceHistory, as_of: '2026-11-29'}\n", encoding="utf-8")
    catalog = load_catalog_dir(str(files("gpu_advisor.knowledge") / "catalog"), override)
    rep, _, _ = report({**DEEPLAB, "interruptible": True}, catalog)
    line = rep.option("ecs.gn7i-c8g1.2xlarge").purchase("spot")
    assert line.hourly.low == pytest.approx(9.5326 * 0.2) and "observed" in line.note.en


def test_why_never_claims_an_unpriced_option_costs_more():
    rep, _, _ = report(DEEPLAB)
    fast = rep.option(rep.fastest)
    if rep.fastest != rep.recommended and fast.payg_mid is None:
        assert "no price" in rep.why.en and "costs more" not in rep.why.en
