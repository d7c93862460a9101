"""Issue 19: the catalog against Alibaba's DescribeInstanceTypes listing (recorded in tools/data/), and answers
priced from the public price list. No network: the listing and the price list are recorded files."""

from __future__ import annotations

import argparse
import io
import json
import random
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gpu_advisor.kb.catalog_loader import clear_catalog_cache, load_catalog
from gpu_advisor.cli.commands import add_refresh_parser, cmd_catalog
from gpu_advisor.kb.refresh import run_refresh

REPO = Path(__file__).resolve().parents[1]
LISTING = json.loads((REPO / "tools" / "data" / "alicloud_gpu_instance_types.json").read_text(encoding="utf-8"))
ROWS = {r["type"]: r for r in LISTING["instance_types"]}
PRICES = REPO / "tests" / "fixtures" / "public_price" / "instancePrice.json"

# The families and sizes issue 19 lists as sold by Alibaba but missing from the catalog.
NEW_FAMILIES = ["gn8e", "gn8ep", "gn8ia", "gn8t", "ebmgn8t", "ebmgn8ts", "gn8te", "ebmgn8te", "gn8ga", "ebmgn8ga",
                "gn9g", "ebmgn9ge-1.5t", "gn9t", "ebmgn9t", "ebmgn7v", "ebmgn7vx", "gn7t", "ebmgn7t", "gn7ia", "gn8v-tdx"]
NEW_SIZES = ["ecs.gn7-c13g1.6xlarge", "ecs.gn7s.2xlarge", "ecs.gn7s.4xlarge", "ecs.gn7i-c48e.12xlarge",
             "ecs.gn5i-c12g1.6xlarge", "ecs.gn5i-c40g1.10xlarge", "ecs.gn5i-c48g1.12xlarge"]
NOT_IN_LISTING = ["ecs.gn9gc.4xlarge", "ecs.gn9gc.8xlarge", "ecs.gn9gc-2x.16xlarge", "ecs.gn9gc-4x.32xlarge",
                  "ecs.gn9gc-8x.64xlarge", "ecs.ebmgn9gc.64xlarge", "ecs.gn6e-c12g1.6xlarge"]


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    ns = argparse.Namespace(catalog_action=None, gpu=None, min_gpu_memory=None, rdma=None, region=None, json=True)
    out = io.StringIO()
    assert cmd_catalog(ns, io.StringIO(), out) == 0
    return {r["instance_type"]: r for r in json.loads(out.getvalue())}


def test_every_listed_family_and_size_is_in_catalog_json(rows):
    for fam in NEW_FAMILIES:
        listed = [name for name, r in ROWS.items() if r["family"] == f"ecs.{fam}"]
        assert listed, fam
        for name in listed:
            r = rows[name]
            assert r["family"] == fam and r["gpu_spec"] == ROWS[name]["gpu_spec"] and r["in_api_listing"] is True
            assert r["rdma"] in ("none", "erdma", "roce") and r["rdma_note"], name  # eRDMA per type, with its basis
            assert r["source"] and "sc-data-dumps" in r["source"] and r["as_of"] == LISTING["provenance"]["date"]
    for name in NEW_SIZES:
        assert rows[name]["gpu_spec"] == ROWS[name]["gpu_spec"] and rows[name]["as_of"] == "2026-01-31"


def test_a_random_sample_of_20_types_matches_the_recorded_listing(rows):
    seed = time.time_ns()
    listed = sorted(set(rows) & set(ROWS))
    sample = random.Random(seed).sample(listed, 20)
    cat = load_catalog()
    for name in sample:
        t, api = cat.instance_types[name], ROWS[name]
        where = f"{name} (seed {seed})"
        assert t.gpu_spec == api["gpu_spec"], where
        if t.api_listing_note and "the API listing states" in t.api_listing_note:
            continue  # a difference between the family page and the API, stated on the entry
        assert (t.vcpu, t.memory_gib) == (api["vcpu"], api["memory_gib"]), where
        if not t.vgpu:
            assert t.gpu_count == api["gpu_count"], where
            assert t.gpu_memory_gb == api["gpu_memory_gib"], where


def test_stated_differences_are_real_differences():
    cat = load_catalog()
    noted = [t for t in cat.instance_types.values() if t.api_listing_note and "the API listing states" in t.api_listing_note]
    assert noted
    for t in noted:
        api = ROWS[t.type]
        assert (t.vcpu, t.memory_gib, t.gpu_memory_gb) != (api["vcpu"], api["memory_gib"], api["gpu_memory_gib"]) or (
            not t.vgpu and t.gpu_count != api["gpu_count"])


def test_types_not_in_the_listing_are_preview_or_unverified():
    cat = load_catalog()
    for name in NOT_IN_LISTING:
        t = cat.instance_types[name]
        assert name not in ROWS and t.in_api_listing is False and t.status in ("preview", "unverified"), name
    assert cat.instance_types["ecs.gn6e-c12g1.6xlarge"].status == "unverified"
    listed_elsewhere = [t.type for t in cat.instance_types.values() if t.in_api_listing is False]
    assert sorted(listed_elsewhere) == sorted(NOT_IN_LISTING)


def test_gpu_names_follow_the_api_gpuspec():
    cat = load_catalog()
    for fam in ("gn7e", "ebmgn7e", "ebmgn7ex", "sccgn7ex"):
        for t in cat.types_in_family(fam):
            assert t.gpu_spec == "A100" and cat.gpus[t.gpu_id].display_name == "NVIDIA A100 80 GB"
    for fam in ("gn8v", "gn8v-tee", "ebmgn8v", "gn8v-tdx"):  # "GPU H": still unnamed
        for t in cat.types_in_family(fam):
            assert t.gpu_spec == "GPU H" and "not named by Alibaba" in cat.gpus[t.gpu_id].display_name
    assert cat.gpus[cat.instance("ecs.gn8ia.4xlarge").gpu_id].id == "L20"
    assert "not named by Alibaba" in cat.gpus[cat.instance("ecs.gn8e.6xlarge").gpu_id].display_name  # "GPU H-e"
    assert cat.gpus[cat.instance("ecs.gn8ga.8xlarge").gpu_id].display_name == "NVIDIA RTX 5880 48 GB"
    assert cat.gpus[cat.instance("ecs.ebmgn7vx.32xlarge").gpu_id].display_name == "NVIDIA A800 80 GB"


def test_gn8v_tee_has_the_nvlink_of_the_shared_gn8v_section():
    cat = load_catalog()
    t = cat.instance("ecs.gn8v-tee-8x.48xlarge")
    assert t.nvlink and "900 GB/s" in t.nvlink_note
    assert not cat.instance("ecs.gn8v-tee.4xlarge").nvlink  # one GPU: nothing to link


def test_types_from_the_listing_alone_claim_no_rdma_or_nvlink_they_do_not_state():
    cat = load_catalog()
    for t in cat.instance_types.values():
        if t.family in NEW_FAMILIES:
            assert t.rdma == "none" and "EriQuantity" in t.rdma_note and not t.nvlink and not t.intended_use_tags


def _answers(tmp_path) -> list:
    parser = argparse.ArgumentParser()
    add_refresh_parser(parser.add_subparsers())
    out = tmp_path / "override.yaml"
    ns = parser.parse_args(["refresh", "--public", "--price-url", PRICES.as_uri(), "--output", str(out)])
    assert run_refresh(ns, io.StringIO(), now=datetime(2026, 12, 1, tzinfo=timezone.utc)) == 0
    from gpu_advisor import advisor

    kb = advisor.get_knowledge(override=str(out))
    lora = {"task": "llm_finetune", "model": "Llama 3.1 70B", "finetune_method": "lora", "seq_len": 2048,
            "num_samples": 10000, "epochs": 1, "region": "ap-southeast-1"}
    serve = {"task": "inference", "model": "Qwen2.5 72B", "seq_len": 4096, "batch_size_per_gpu": 1,
             "region": "ap-southeast-1"}
    return [advisor.recommend(lora, "en", knowledge=kb), advisor.recommend(serve, "en", knowledge=kb)]


def test_70b_lora_and_72b_serving_get_three_priced_options_with_totals(tmp_path):
    from gpu_advisor.answer.render import render_markdown

    try:
        for rec in _answers(tmp_path):
            priced = [o for o in rec.cost.options if o.hourly_total is not None and o.payg_mid is not None]
            assert len(priced) >= 3, [o.instance_type for o in rec.cost.options]
            assert {o.currency for o in priced} == {"USD"} and {o.price_as_of for o in priced} == {"2026-11-20"}
            text = render_markdown(rec, "en")
            assert "USD" in text and "2026-11-20" in text
            for o in rec.cost.options:  # no "model not named" for a type whose GPUSpec names the GPU
                gpu = load_catalog().gpus[o.gpu_id]
                if gpu.named_by_alibaba:
                    assert "not named by Alibaba" not in o.gpu_display
            assert "80 GB Ampere GPU (model not named by Alibaba)" not in text
    finally:
        clear_catalog_cache()


def test_the_answer_says_which_prices_are_older_than_12_months(tmp_path):
    from datetime import date

    from gpu_advisor.advisor import recommend
    from gpu_advisor.costing.notes import price_note

    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "seq_len": 2048,
                     "num_samples": 50_000, "epochs": 1}, "en")  # shipped snapshot, cn-hangzhou
    dates = {o.price_as_of for o in rec.cost.options if o.price_per_hour is not None}
    assert dates == {"2024-12-30"}
    note = price_note(rec.cost.options, today=date(2026, 12, 1))
    assert "2024-12-30 are more than 12 months old" in note.text.en and "超过 12 个月" in note.text.zh
    assert note.value == ["2024-12-30"]
    assert price_note(rec.cost.options, today=date(2025, 6, 1)).value is None  # within 12 months then
    fresh = [a for a in _answers(tmp_path)[0].cost.options if a.price_per_hour is not None]
    assert price_note(fresh, today=date(2026, 12, 1)).value is None  # the 2026-11-20 price list is current
    assert any("more than 12 months old" in n.text.en for n in rec.cost.assumptions)  # stated in today's answer
