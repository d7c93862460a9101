"""A GPU the user names: honoured when it holds the job, explained when it does not, refused when unknown."""

from __future__ import annotations

import pytest

from gpu_advisor import recommend
from gpu_advisor.ask import parse_question
from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.errors import WorkloadError
from gpu_advisor.plan.preference import resolve_gpu_preference

CATALOG = load_catalog()


@pytest.mark.parametrize("text, ids", [
    ("A10", {"A10"}), ("a100", {"A100-40GB", "AMPERE-80GB"}), ("V100", {"V100-SXM2-16GB", "V100-SXM2-32GB"}),
    ("V100 32GB", {"V100-SXM2-32GB"}), ("NVIDIA L20", {"L20"}), ("80GB", {"AMPERE-80GB", "A800-80GB"}),
    ("96 GB", {"GN8V-96GB-HBM3"}), ("A100 80GB", {"AMPERE-80GB"}), ("A800", {"A800-40GB", "A800-80GB"}),
    ("RTX 5880", {"RTX5880-48GB"}),
])
def test_names_resolve_to_catalog_gpus(text, ids):
    assert resolve_gpu_preference(CATALOG, text) == ids


@pytest.mark.parametrize("text", ["H100", "H20", "RTX 4090", "gpu.t4.xlarge"])
def test_gpus_alibaba_does_not_sell_by_name_are_refused_with_the_named_list(text):
    with pytest.raises(WorkloadError) as info:
        resolve_gpu_preference(CATALOG, text)
    assert info.value.field == "gpu_preference" and "A10" in info.value.message("en")
    assert "gpu_preference" in info.value.message("zh")


def test_preferred_gpu_leads_when_it_holds_the_job():
    rec = recommend({"task": "semantic_segmentation", "gpu_preference": "T4"}, "en")
    assert rec.instance.gpu_id == "T4"
    assert rec.cost is None or rec.cost.recommended == rec.instance.instance_type
    assert "FIT-PREF-MET" in [e.rule_id for e in rec.trace]


def test_preferred_gpu_that_cannot_hold_the_job_is_explained_not_used():
    # 8B full on one T4 now holds in FP16 with CPU offload (the precision is a default; test_fp16_for_bf16 below)
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 70B", "finetune_method": "full", "num_gpus": 1,
                     "gpu_preference": "T4"}, "en")
    assert rec.instance is None or rec.instance.gpu_id != "T4"
    assert "FIT-PREF-UNMET" in [e.rule_id for e in rec.trace]
    assert any("T4" in r.en for r in rec.rejected)


def test_unknown_preference_is_a_workload_error_through_recommend():
    with pytest.raises(WorkloadError) as info:
        recommend({"task": "semantic_segmentation", "gpu_preference": "H800"}, "zh")
    assert info.value.field == "gpu_preference"


def test_ask_reads_a_catalog_gpu_as_a_preference_and_an_unknown_one_as_a_note():
    parsed = parse_question("用两张A10微调 Llama 3.1 8B，LoRA")
    assert parsed.workload_fields.get("gpu_preference") == "A10" and parsed.workload_fields.get("num_gpus") == 2
    parsed = parse_question("用H100训练 Llama 3.1 8B")
    assert "gpu_preference" not in parsed.workload_fields
    assert any(h.kind == "gpu_preference" for h in parsed.hints)


def test_a_default_bf16_runs_in_fp16_on_a_gpu_without_bf16_and_the_answer_says_so():
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "qlora", "seq_len": 1024,
                     "gpu_preference": "T4"}, "en")
    assert rec.instance.gpu_id == "T4"  # was: rejected for no BF16 although the user never asked for BF16
    assert "no BF16" in rec.lead[0].en and "fp16_amp" in rec.lead[0].en
    assert not rec.instance.mitigations  # fp16 for a defaulted bf16 is not an AMP mitigation
    # an explicit bf16 is the user's: the T4 is then rejected for it
    stated = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "qlora", "seq_len": 1024,
                        "precision": "bf16", "gpu_preference": "T4"}, "en")
    assert stated.instance.gpu_id != "T4" and any("BF16" in r.en and "T4" in r.en for r in stated.rejected)
    # unasked, a GPU without BF16 never displaces one with it, even when its total is lower
    free = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "full",
                      "region": "ap-southeast-1", "num_gpus": 8}, "en")
    assert rec.instance is not None and free.instance.gpu_id not in ("T4", "V100-SXM2-16GB", "V100-SXM2-32GB", "P100")
