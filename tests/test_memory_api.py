"""estimate_dict / estimate_jsonl / validation messages."""

from __future__ import annotations

import json

import pytest

from gpu_advisor.errors import WorkloadError
from gpu_advisor.memory import estimate_dict, estimate_host, estimate_jsonl
from gpu_advisor.validation import bounds, enum_choices, workload_from_dict
from gpu_advisor.workload import Workload


def test_estimate_dict_ok_and_error_forms() -> None:
    ok = estimate_dict({"task": "semantic_segmentation", "model": "PSPNet", "backbone": "R-50-D8"})
    mem = ok["memory"]
    assert {"allocated_peak_gib", "device_total_gib", "breakdown", "assumptions", "warnings"} <= set(mem)
    assert isinstance(mem["allocated_peak_gib"], float)
    json.dumps(ok)   # serialisable
    bad = estimate_dict({"task": "semantic_segmentation", "model": "NoSuchNet"}, lang="zh")
    assert bad["error"]["code"] == "unknown_model" and bad["error"]["field"] == "model"
    assert "未知" in bad["error"]["message"]


@pytest.mark.parametrize("d", [{"task": "semantic_segmentation", "batch_size_per_gpu": 0}, {"task": "nope"},
                               {"task": "semantic_segmentation", "colour": "red"}, {}, {"task": "llm_finetune", "seq_len": "long"},
                               {"task": "llm_finetune", "pytorch_version": "latest"}])
def test_estimate_dict_never_raises(d: dict) -> None:
    out = estimate_dict(d)
    assert set(out) == {"error"} and out["error"]["message"]


def test_jsonl_keeps_order_and_reports_bad_lines() -> None:
    lines = ['{"task": "semantic_segmentation", "model": "FCN"}', "not json", "", "[1, 2]",
             '{"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "qlora"}',
             '{"task": "semantic_segmentation", "batch_size_per_gpu": -1}']
    out = [json.loads(x) for x in estimate_jsonl(lines, "en")]
    assert [next(iter(o)) for o in out] == ["memory", "error", "error", "memory", "error"]
    assert "line 2" in out[1]["error"]["message"]
    assert out[3]["memory"]["profile"]["key"] == "qwen2.5-7b"
    assert out[4]["error"]["field"] == "batch_size_per_gpu"


def test_validation_messages_name_field_and_range() -> None:
    with pytest.raises(WorkloadError) as info:
        workload_from_dict({"task": "semantic_segmentation", "batch_size_per_gpu": 0})
    assert info.value.message("en") == "batch_size_per_gpu: must be between 1 and 4096 (got 0)"
    assert info.value.message("zh") == "batch_size_per_gpu：取值范围为 1 到 4096（收到 0）"
    assert info.value.field == "batch_size_per_gpu"


def test_validation_reads_bounds_from_the_model() -> None:
    assert bounds("num_gpus") == (1, 4096)
    assert bounds("seq_len") == (1, 1_048_576)
    assert bounds("params_billion") == (0.001, 2000)  # a physical minimum (issue 21)
    with pytest.raises(WorkloadError) as info:
        workload_from_dict({"task": "llm_finetune", "params_billion": 5000})
    assert "2000" in info.value.message("en") and "2000" in info.value.message("zh")
    with pytest.raises(WorkloadError) as size:
        workload_from_dict({"task": "semantic_segmentation", "input_size": [8, 512]})
    assert size.value.field == "input_size" and "16" in size.value.message("en")


def test_validation_enum_and_extra_fields() -> None:
    with pytest.raises(WorkloadError) as info:
        workload_from_dict({"task": "semantic_segmentation", "precision": "fp64"})
    assert all(c in info.value.message("en") for c in enum_choices("precision"))
    assert "fp16_amp" in info.value.message("zh")
    with pytest.raises(WorkloadError) as extra:
        workload_from_dict({"task": "semantic_segmentation", "gpu_count": 2})
    assert extra.value.message("en").startswith("unknown field gpu_count; allowed: task, stage")
    assert "未知字段 gpu_count" in extra.value.message("zh")


def test_host_estimate_scales_with_gpus_and_workers() -> None:
    w = Workload(task="semantic_segmentation", data_loader_workers=4)
    one, eight = estimate_host(w, 1), estimate_host(w, 8)
    assert eight.vcpu == 8 * (4 + 1) and one.vcpu == 5
    assert eight.ram_gib > one.ram_gib
    assert sum(eight.breakdown.values()) == pytest.approx(eight.ram_gib, abs=0.05)
    heavy = estimate_host(w.model_copy(update={"augmentation": "heavy"}), 8)
    assert heavy.vcpu > eight.vcpu
    assert "vCPU" in eight.formula.en and "vCPU" in eight.formula.zh


def test_what_if_copies_are_fast() -> None:
    import time
    from gpu_advisor.memory import estimate_memory
    base = Workload(task="semantic_segmentation", model="DeepLabV3+", backbone="R-101-D8")
    estimate_memory(base)
    start = time.perf_counter()
    for b in range(1, 201):
        estimate_memory(base.model_copy(update={"batch_size_per_gpu": b}))
    assert (time.perf_counter() - start) / 200 < 0.005


GIB = 2.0**30


def _staging(host) -> float:
    return host.breakdown.get("checkpoint_staging", 0.0)


def test_lora_stages_its_adapters_not_the_base_model() -> None:
    """PEFT saves the adapters' state_dict: fp32 adapters + AdamW's two states, 12 B per trainable parameter."""
    from gpu_advisor.memory import estimate_memory
    w = Workload(task="llm_finetune", model="Qwen2.5 72B", finetune_method="lora", seq_len=8192)
    est = estimate_memory(w)
    host = estimate_host(w, 1, est)
    adapters = est.profile.trainable_params_billion * 1e9
    assert 0.05e9 < adapters < 1e9
    assert _staging(host) == pytest.approx(adapters * 12 / GIB, abs=0.01)
    assert host.ram_gib < 20 < est.profile.params_billion * 2  # the 145 GB base model is not staged
    assert not [k for k in host.breakdown if "offload" in k]


def test_sharded_state_is_staged_by_each_rank_replicated_state_once() -> None:
    from gpu_advisor.memory import estimate_memory
    base = dict(task="llm_finetune", model="Llama 3.1 8B", finetune_method="full", precision="bf16_amp")
    one = estimate_host(Workload(**base, num_gpus=1), 1)
    full = _staging(one)  # bf16 weights 2 + fp32 master 4 + AdamW 8 = 14 B per parameter
    params = estimate_memory(Workload(**base, num_gpus=1)).profile.params_billion * 1e9
    assert full == pytest.approx(params * 14 / GIB, abs=0.01)
    zero3 = Workload(**base, num_gpus=8, distributed="zero3")
    assert _staging(estimate_host(zero3, 8)) == pytest.approx(full, abs=0.02)       # all 8 shards on one node
    assert _staging(estimate_host(zero3, 4)) == pytest.approx(full / 2, abs=0.02)   # 4 of 8 shards per node
    zero2 = Workload(**base, num_gpus=8, distributed="zero2")                         # weights replicated
    assert _staging(estimate_host(zero2, 4)) == pytest.approx(params * (2 + 12 / 2) / GIB, abs=0.02)
    ddp = Workload(**base, num_gpus=2, distributed="ddp")
    assert _staging(estimate_host(ddp, 2)) == pytest.approx(full, abs=0.01)         # rank 0 saves one copy
    serving = estimate_host(Workload(task="inference", model="Llama 3.1 8B"), 1)
    assert _staging(serving) == 0.0


def test_cpu_offload_holds_what_the_gpu_estimate_moved_off_the_card() -> None:
    from gpu_advisor.memory import estimate_memory
    on_card = Workload(task="llm_pretrain", model="Llama 3.1 70B", num_gpus=16, distributed="zero3",
                       precision="bf16_amp")
    assert not [k for k in estimate_host(on_card, 8).breakdown if "offload" in k]  # none unless the job asks for it
    offload = on_card.model_copy(update={"cpu_offload": True})
    before, after = estimate_memory(on_card), estimate_memory(offload)
    moved = sum(before.breakdown.get(k, 0.0) - after.breakdown.get(k, 0.0)
                for k in ("weights", "gradients", "optimizer", "master_weights"))
    assert moved > 10  # GiB per GPU
    host = estimate_host(offload, 8, after)
    assert host.breakdown["cpu_offload"] == pytest.approx(8 * moved, abs=0.05)
    assert _staging(host) == 0.0  # the offloaded shards are saved from host memory, not copied again
