"""gpu_advisor.answer.brief: the decision of a Recommendation, short, and never without what the user stated."""

import re
import sys
from pathlib import Path

import pytest

from gpu_advisor.answer.brief import brief, brief_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from latency import mixed_workloads  # noqa: E402

CJK = re.compile(r"[\u4e00-\u9fff]")
INSTANCE = re.compile(r"`(ecs\.[a-z0-9.\-]+)`")


@pytest.mark.parametrize("w", mixed_workloads(40, seed=23), ids=lambda w: f"{w['task']}-{w['lang']}")
def test_brief_names_only_the_answers_instances_in_one_language(advise, w) -> None:
    rec = advise(w, w["lang"])
    data, text = brief(rec), brief_text(rec)
    named = set(rec.instance_types()) | {r.instance_type for r in rec.scenarios if r.instance_type}
    assert set(INSTANCE.findall(text)) <= named
    assert data["instance_type"] == (rec.instance.instance_type if rec.instance else None)
    if rec.instance is not None:
        assert f"`{rec.instance.instance_type}`" in text.split("\n\n")[1]  # the decision comes first
        assert data["instance"]["gpu_memory_gb"] == rec.instance.gpu_memory_gib
    assert 1 <= len(data["reasons"]) <= 5 or rec.instance is None and rec.cpu_instance is None
    assert {r["rule_id"] for r in data["reasons"]} <= {e.rule_id for e in rec.trace}
    # two alternatives, one when the answer had to be trimmed to its token budget (brief.fit_budget, trimmed last)
    assert min(1, len(rec.alternatives)) <= len(data["alternatives"]) <= min(2, len(rec.alternatives))
    if w["lang"] == "en":
        assert not CJK.search(text)


def test_an_unmet_gpu_preference_is_always_among_the_reasons(advise) -> None:
    rec = advise({"task": "llm_finetune", "model": "Llama 3.1 70B", "gpu_preference": "T4", "lang": "en"}, "en")
    assert "FIT-PREF-UNMET" in [r["rule_id"] for r in brief(rec)["reasons"]]
    assert "T4" in brief_text(rec)


def test_a_missed_budget_is_stated(advise) -> None:
    rec = advise({"task": "llm_finetune", "model": "Llama 3.1 8B", "budget_per_hour": 1, "lang": "en"}, "en")
    data = brief(rec)
    assert data["misses"] and "budget" in data["misses"][0]
    assert data["misses"][0] in brief_text(rec)


def test_no_plan_keeps_what_to_change(advise) -> None:
    # nothing holds it on any GPU count (a stated count alone is re-planned; a 405B pretraining at 128k tokens now has a
    # plan with sequence parallelism, tests/test_long_context.py, a CNN's activations have no such split)
    rec = advise({"task": "semantic_segmentation", "model": "UNet", "input_size": [16384, 16384],
                  "batch_size_per_gpu": 1, "num_gpus": 1, "lang": "en"}, "en")
    assert rec.instance is None
    reasons = brief(rec)["reasons"]
    none = next(r for r in reasons if r["rule_id"] == "FIT-NONE")
    assert none["text"] == next(i.text.en for i in rec.sections if i.rule_id == "FIT-NONE")
    assert "No instance type" in brief_text(rec)


def test_a_question_without_a_model_gets_the_scenarios(advise) -> None:
    rec = advise({"task": "semantic_segmentation", "lang": "zh"}, "zh")
    data = brief(rec)
    assert rec.scenarios and len(data["scenarios"]) == min(4, len(rec.scenarios))
    assert all(CJK.search(row["label"]) for row in data["scenarios"])


def test_a_brief_is_trimmed_to_its_token_budget_least_deciding_parts_first(advise) -> None:
    from gpu_advisor.answer.brief import ANSWER_TOKENS, TOKENS_PER_ESTIMATE, estimated_tokens

    # a full fine-tune with a defaulted precision that changes the plan: two long lead lines, four reasons
    rec = advise({"task": "llm_finetune", "model": "Qwen2.5 14B", "finetune_method": "full", "num_samples": 100000,
                  "seq_len": 4096, "lang": "en"}, "en")
    data = brief(rec)
    assert 2 * estimated_tokens(data) * TOKENS_PER_ESTIMATE <= ANSWER_TOKENS
    assert data["instance_type"] == rec.instance.instance_type and data["lead"]   # the decision is never trimmed
    assert all("why" not in o for o in data["alternatives"]) or len(data["reasons"]) == 4



def test_a_hard_cut_never_splits_a_gpu_name_or_a_figure() -> None:
    """brief.short's last-resort cut moves back to a word start: "NVIDIA A100 80 GB" cut inside "A100" would name
    another GPU ("而不是 2 张 NVIDIA A10 …", h13-fresh), "41.3 GiB" cut after "41." another figure."""
    from gpu_advisor.answer.brief import short

    text = "答案取决于这一默认" * 11 + "方案为 1 张 NVIDIA A100 80 GB（每卡约 62.9 GiB），而不是 2 张 NVIDIA A100 80 GB"
    for limit in range(100, len(text)):
        cut = short(text, limit).removesuffix(" …")
        assert not re.search(r"A10$|A1$|\b6$|62\.?$|62\.9 Gi?$", cut), (limit, cut[-30:])
        assert len(cut) <= limit


def test_a_job_total_under_100_keeps_its_cents() -> None:
    """The price line said "53.00–267 CNY" under a lead of "53.36–267 CNY" (h13-fresh): a total under 100 is rounded
    to cents, as the lead rounds it."""
    from gpu_advisor import recommend

    rec = recommend({"task": "object_detection", "model": "YOLOv8m", "input_size": [640, 640], "num_samples": 30000,
                     "epochs": 100, "lang": "zh"}, lang="zh")
    total = brief(rec, "zh")["total_cost"]
    line = rec.cost.option(rec.instance.instance_type).purchase("payg").total
    assert total is not None and line.low < 100
    assert total["low"] == round(line.low, 2)


def test_a_bf16_job_served_on_a_card_without_bf16_says_so_in_the_brief() -> None:
    """GLM-4-9B at 128k on one V100: the brief kept TIER-SERVE, FIT-HEADROOM and INF-ENGINE-LLM and dropped INF-FP16
    ("serve the bf16 checkpoint in FP16, vLLM --dtype half"), the one reason the user must act on (h13-fresh)."""
    from gpu_advisor.ask import answer_question

    _, rec = answer_question("用 vLLM 部署 GLM-4-9B，要支持 128k 上下文，单卡能放下吗？")
    assert rec.instance is not None and "V100" in rec.instance.gpu_display
    assert "INF-FP16" in [r["rule_id"] for r in brief(rec, "zh")["reasons"]]
