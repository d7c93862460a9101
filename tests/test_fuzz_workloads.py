"""Property-based fuzzing of recommend() over random valid Workloads.

Every generated workload passes Workload validation. recommend() must then answer without raising
(models are drawn from those the knowledge base knows for the task, or left to the default);
the answer must validate against its own model, and:
- the chosen configuration fits its cards with the planner's 5 % headroom, or the answer says nothing fits;
- every instance type it names is in the catalog; every cost is non-negative and finite;
- it renders in zh and en.

A few hundred examples run in the suite; ``GPU_ADVISOR_FUZZ_EXAMPLES=5000`` runs thousands.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_advisor import Recommendation, recommend
from gpu_advisor.advisor import get_knowledge
from gpu_advisor.errors import AdvisorError
from gpu_advisor.kb.models import knowledge as model_knowledge
from gpu_advisor.workload import (MAX_GPUS, MAX_SEQ_LEN, MAX_SIDE_PX, Augmentation, Distributed, FinetuneMethod,
                                  Optimizer, Precision, Quantization, Stage, Task, Workload)

EXAMPLES = int(os.environ.get("GPU_ADVISOR_FUZZ_EXAMPLES", "250"))
HEADROOM = 0.05  # engine/plan/planner.py FIT_HEADROOM, restated: the answer promises 5 % of the card free
TOLERANCE_GIB = 0.01  # planned_mem_gib is rounded to 2 decimals

_MK = model_knowledge()
LLM_NAMES = sorted(s.display for s in _MK.transformers.values() if s.family == "llm")
NLP_NAMES = sorted(s.display for s in _MK.transformers.values() if s.family != "llm")
SEG_METHODS = sorted(m.display for m in _MK.methods.values() if m.family.endswith("segmentation"))
DET_METHODS = sorted(m.display for m in _MK.methods.values() if m.family == "detection")
CLS_METHODS = sorted(m.display for m in _MK.methods.values() if m.family == "classification")
BACKBONES = sorted(b.display for b in _MK.backbones.values())
# derived as one network (Ultralytics YOLO: the model YAML is backbone, neck and head): another backbone is refused
WHOLE_NETWORK = {m.display for m in _MK.methods.values() if m.whole_network}

TEXT_TASKS = {Task.llm_finetune, Task.llm_pretrain, Task.nlp_finetune}


def _models_for(task: Task) -> st.SearchStrategy[dict[str, Any]]:
    """Model (and backbone) choices that fit the task, or none (the advisor picks its default)."""
    none = st.just({})
    if task in (Task.llm_finetune, Task.llm_pretrain):
        named = st.sampled_from(LLM_NAMES).map(lambda m: {"model": m})
        custom = st.floats(0.01, 2000, allow_nan=False).map(lambda p: {"params_billion": round(p, 3)})
        return st.one_of(none, named, custom)
    if task == Task.nlp_finetune:
        return st.one_of(none, st.sampled_from(NLP_NAMES).map(lambda m: {"model": m}))
    if task == Task.inference:
        return st.one_of(none, st.sampled_from(LLM_NAMES + NLP_NAMES).map(lambda m: {"model": m}))
    if task == Task.preprocessing:
        return none
    methods = {Task.semantic_segmentation: SEG_METHODS, Task.panoptic_segmentation: SEG_METHODS,
               Task.instance_segmentation: [m for m in DET_METHODS if m not in WHOLE_NETWORK],  # YOLO detect: no masks
               Task.object_detection: DET_METHODS,
               Task.image_classification: CLS_METHODS}[task]
    named = st.sampled_from(methods).flatmap(
        lambda m: st.just({"model": m}) if m in WHOLE_NETWORK
        else st.fixed_dictionaries({"model": st.just(m)}, optional={"backbone": st.sampled_from(BACKBONES)}))
    return st.one_of(none, named, st.sampled_from(BACKBONES).map(lambda b: {"backbone": b}))


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


OPTIONAL: dict[str, st.SearchStrategy[Any]] = {
    "stage": st.sampled_from(list(Stage)).map(lambda e: e.value),
    "input_size": st.tuples(st.integers(16, MAX_SIDE_PX), st.integers(16, MAX_SIDE_PX)).map(list)
    | st.sampled_from([[512, 512], [1024, 1024], [512, 1024], [224, 224], [800, 1333]]),
    "seq_len": st.integers(1, MAX_SEQ_LEN) | st.sampled_from([128, 512, 2048, 4096, 8192, 32768]),
    "batch_size_per_gpu": st.integers(1, 4096) | st.integers(1, 64),
    "num_gpus": st.integers(1, MAX_GPUS) | st.sampled_from([1, 2, 4, 8, 16, 64]),
    "precision": st.sampled_from(list(Precision)).map(lambda e: e.value),
    "optimizer": st.sampled_from(list(Optimizer)).map(lambda e: e.value),
    "gradient_checkpointing": st.booleans(),
    "quantization": st.sampled_from(list(Quantization)).map(lambda e: e.value),
    "distributed": st.sampled_from(list(Distributed)).map(lambda e: e.value),
    "pytorch_version": st.sampled_from(["1.8", "1.13", "2.0", "2.4", "2.9"]),
    "num_classes": st.integers(1, 100_000),
    "num_samples": st.integers(1, 10_000_000_000),
    "dataset_size_gb": st.floats(1e-3, 10_000_000, allow_nan=False, allow_infinity=False),
    "epochs": st.floats(1e-3, 100_000, allow_nan=False, allow_infinity=False),
    "data_loader_workers": st.integers(0, 256),
    "augmentation": st.sampled_from(list(Augmentation)).map(lambda e: e.value),
    "region": st.sampled_from(["mainland", "international", "cn-hangzhou", "cn-beijing", "cn-shanghai",
                               "cn-hongkong", "ap-southeast-1", "us-east-1", "eu-central-1", "xx-nowhere"]),
    "budget_per_hour": st.floats(0.01, 1_000_000, allow_nan=False),
    "budget_total": st.floats(0.01, 1_000_000_000, allow_nan=False),
    "deadline_hours": st.floats(0.01, 100_000, allow_nan=False),
    "interruptible": st.booleans(),
    "expected_months_of_use": st.floats(0.01, 120, allow_nan=False),
    "lang": st.sampled_from(["zh", "en"]),
}


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    task = draw(st.sampled_from(list(Task)))
    data: dict[str, Any] = {"task": task.value, **draw(_models_for(task))}
    for name, strategy in OPTIONAL.items():
        value = draw(_opt(strategy))
        if value is not None:
            data[name] = value
    method = draw(_opt(st.sampled_from(list(FinetuneMethod))))
    if method is not None:
        data["finetune_method"] = method.value
        if method != FinetuneMethod.full and draw(st.booleans()):
            data["lora_rank"] = draw(st.integers(1, 4096))
    Workload.model_validate(data)  # the generator only makes valid workloads
    return data


def _finite_non_negative(value: Any, where: str) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        assert math.isfinite(value) and value >= 0, f"{where} = {value!r}"


def _walk_costs(node: Any, where: str = "cost") -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if any(word in key for word in ("price", "cost", "cny", "total", "hours", "per_hour")):
                _finite_non_negative(value, f"{where}.{key}")
            _walk_costs(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk_costs(value, f"{where}[{i}]")


def check_invariants(rec: Recommendation, data: dict[str, Any]) -> None:
    kb = get_knowledge()
    dumped = rec.model_dump(mode="json")
    # The output validates: a JSON round trip through its own model gives the same answer.
    again = Recommendation.model_validate(json.loads(json.dumps(dumped)))
    assert again.model_dump(mode="json") == dumped
    # Every instance type it names exists in the catalog.
    for name in rec.instance_types():
        assert kb.catalog.is_known_type(name), f"{name} not in the catalog"
    # Fits with the stated headroom, or says it does not fit.
    fired = {t.rule_id for t in rec.trace}
    if data["task"] == "preprocessing":
        # CPU-only: no GPU option; a CPU type, or (known bug, see test_preprocessing_too_big_for_one_cpu_type)
        # the answer says nothing fits.
        assert rec.instance is None and not rec.alternatives
        assert rec.cpu_instance is not None or "TIER-CPU" in fired
    elif rec.instance is None:
        assert "FIT-NONE" in fired or rec.rejected or rec.warnings, "no instance and no explanation"
        assert any(item.rule_id.startswith("FIT") for item in rec.sections), "no instance and no FIT-* line"
    for option in [o for o in [rec.instance, *rec.alternatives] if o is not None]:
        limit = option.gpu_memory_gib * (1 - HEADROOM) + TOLERANCE_GIB
        assert option.planned_mem_gib <= limit, (option.instance_type, option.planned_mem_gib, option.gpu_memory_gib)
        assert option.headroom_pct >= 100 * HEADROOM - 0.1, (option.instance_type, option.headroom_pct)
        assert option.total_gpus == option.nodes * option.gpus_per_node >= 1
        for price in (option.price_per_hour,):
            _finite_non_negative(price, f"{option.instance_type}.price_per_hour")
    for component, gib in rec.memory.breakdown.items():
        _finite_non_negative(gib, f"memory.breakdown.{component}")
    _finite_non_negative(rec.memory.device_total_gib, "memory.device_total_gib")
    if rec.cost is not None:
        _walk_costs(rec.cost.model_dump(mode="json"))
    # Renders in both languages, no template residue.
    for lang in ("zh", "en"):
        text = rec.render(lang)
        assert text.strip() and "{{" not in text and "{%" not in text
        if rec.instance is not None:
            assert rec.instance.instance_type in text


def run_one(data: dict[str, Any]) -> Recommendation:
    try:
        rec = recommend(data, data.get("lang", "en"))
    except AdvisorError as exc:  # a valid workload is always answered (possibly with "nothing fits")
        raise AssertionError(f"{type(exc).__name__} on a valid workload {data}: {exc.en}") from None
    check_invariants(rec, data)
    return rec


@settings(max_examples=EXAMPLES, deadline=None, derandomize="GPU_ADVISOR_FUZZ_SEED" not in os.environ,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(workloads())
def test_random_valid_workloads_are_answered_with_invariants(data: dict[str, Any]) -> None:
    run_one(data)


def test_preprocessing_too_big_for_one_cpu_type_still_names_cpu_instances() -> None:
    rec = recommend({"task": "preprocessing", "num_gpus": 39}, "en")
    assert rec.cpu_instance is not None
    assert "GPU instance type" not in rec.render("en")


@settings(max_examples=min(EXAMPLES, 150), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_resolved_workload_has_the_same_estimate(data: dict[str, Any]) -> None:
    """resolve_job reuses the estimate of the workload as given for the resolved one (defaults written in):
    the planner and the host sizing rely on both giving the same figures."""
    from gpu_advisor.plan.defaults import resolve_job
    from gpu_advisor.memory import estimate_host, estimate_memory
    from gpu_advisor.validation import workload_from_dict

    try:
        job = resolve_job(workload_from_dict(data), get_knowledge().catalog)
    except AdvisorError:
        return
    again = estimate_memory(job.workload)
    assert again.breakdown == job.memory.breakdown
    assert (again.allocated_peak_gib, again.device_total_gib, again.allocated_upper_gib) == (
        job.memory.allocated_peak_gib, job.memory.device_total_gib, job.memory.allocated_upper_gib)
    assert again.profile == job.memory.profile
    assert again.train_flops_per_sample == job.memory.train_flops_per_sample
    host = estimate_host(job.workload, max(1, job.workload.num_gpus or 1))
    assert (host.ram_gib, host.vcpu, host.breakdown) == (job.host.ram_gib, job.host.vcpu, job.host.breakdown)
