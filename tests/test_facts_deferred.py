"""Deferred facts (gpu_advisor.rules.facts.Facts): computed on first read, type-checked then, complete in comparisons."""

import pytest

from gpu_advisor.advisor import build_facts, get_knowledge
from gpu_advisor.plan.defaults import resolve_job
from gpu_advisor.errors import EngineError
from gpu_advisor.rules.facts import Facts, check_facts
from gpu_advisor.plan.planner import plan
from gpu_advisor.validation import workload_from_dict


def _facts(data):
    kb = get_knowledge()
    job = resolve_job(workload_from_dict(data), kb.catalog)
    return job, build_facts(job, plan(kb.catalog, job.workload, job.region))


def test_savings_are_computed_only_when_read():
    calls = []
    facts = Facts({"a": 1}, {"amp_saving_gib": lambda: calls.append(1) or 1.5})
    assert "amp_saving_gib" in facts and facts.pending == {"amp_saving_gib"}
    assert calls == []
    assert facts["amp_saving_gib"] == 1.5 and facts.get("amp_saving_gib") == 1.5
    assert calls == [1] and facts.pending == frozenset()
    assert facts["amp_saving_gib"] == 1.5 and calls == [1]  # once
    with pytest.raises(KeyError):
        facts["no_such_fact"]


def test_a_deferred_fact_of_the_wrong_type_is_refused_when_computed():
    facts = Facts({}, {"ckpt_saving_gib": lambda: "3 GiB"})
    with pytest.raises(EngineError, match="ckpt_saving_gib"):
        facts["ckpt_saving_gib"]


def test_recommend_facts_defer_the_savings_and_equal_the_eager_values():
    job, facts = _facts({"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024],
                         "precision": "fp32", "batch_size_per_gpu": 8})
    assert facts.pending == {"amp_saving_gib", "ckpt_saving_gib"}
    check_facts(facts)  # the record is complete without computing them
    assert facts.pending == {"amp_saving_gib", "ckpt_saving_gib"}
    eager = {name: make() for name, make in job.deferred_facts().items()}
    assert eager["amp_saving_gib"] > 0 and eager["ckpt_saving_gib"] > 0
    assert {name: facts[name] for name in eager} == eager


def test_equality_compares_the_complete_records():
    _, one = _facts({"task": "llm_finetune", "model": "Qwen2.5 7B", "precision": "fp32"})
    _, two = _facts({"task": "llm_finetune", "model": "Qwen2.5 7B", "precision": "fp32"})
    assert one == two and not one.pending and not two.pending
