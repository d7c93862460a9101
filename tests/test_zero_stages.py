"""ZeRO-1 / ZeRO-2 beside ZeRO-3: memory per the ZeRO paper, traffic per stage, and the planner's choice by traffic.

Figures: Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054, Figure 1 (7.5B parameters, 64 GPUs, mixed-precision Adam:
120 GB replicated, 31.4 GB P_os, 16.6 GB P_os+g, 1.9 GB P_os+g+p); DeepSpeed stage_1_and_2.py @38327e07 for the
reduce bucket and the fp32 gradient partition (engine/memory/states.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpu_advisor import recommend
from gpu_advisor.advisor import _plan_and_cost, get_knowledge
from gpu_advisor.costing.comm import sharding_traffic, stage_bytes
from gpu_advisor.memory.states import DS_REDUCE_BUCKET, model_states
from gpu_advisor.plan.ladder import training_steps
from gpu_advisor.workload import Distributed, Workload

PSI, N = 7.5e9, 64


def _states(dist: str) -> float:
    s = {"precision": "bf16_amp", "optimizer": "adamw", "num_gpus": N, "distributed": dist}
    st = model_states(PSI, PSI, None, s, True, 0.0)
    return st.weights + st.gradients + st.optimizer + st.master_weights + st.ddp_buckets


@pytest.mark.parametrize("dist, paper_gb, extra", [
    ("ddp", 120.0, 2 * PSI),                                 # DDP's bucket copy of the 16-bit gradients
    ("zero1", 31.4, 4 * PSI / N + 2 * DS_REDUCE_BUCKET),     # + fp32 partition at the step + reduce bucket
    ("zero2", 16.6, 4 * PSI / N + 2 * DS_REDUCE_BUCKET),
])
def test_model_states_follow_the_paper_plus_deepspeed_buffers(dist: str, paper_gb: float, extra: float) -> None:
    assert _states(dist) == pytest.approx(paper_gb * 1e9 + extra, rel=0.01)


def test_zero3_states_follow_the_paper() -> None:
    assert _states("zero3") == pytest.approx(1.9e9, rel=0.03)  # the gathered layers in flight are apart (layer 0 here)


def _profile(billion: float) -> SimpleNamespace:
    return SimpleNamespace(params_billion=billion, trainable_params_billion=billion)


def _w(dist: str) -> Workload:
    return Workload(task="llm_finetune", params_billion=7, finetune_method="full", precision="bf16_amp",
                    distributed=dist, num_gpus=8)


def test_stage_traffic_orders_by_sharding_and_accumulation() -> None:
    p = _profile(7.0)
    one = {d: stage_bytes(_w(d), p, 8, 1) for d in ("ddp", "zero1", "zero2", "zero3")}
    assert one["ddp"] == one["zero1"] == pytest.approx(one["zero2"])        # 2 Psi: the volume of data parallelism
    assert one["zero3"] == pytest.approx(1.5 * one["zero2"])               # 3 Psi (sec. 7.2.2)
    eight = {d: stage_bytes(_w(d), p, 8, 8) for d in ("zero1", "zero2", "zero3")}
    assert eight["zero1"] < eight["zero2"] < eight["zero3"]                  # ZeRO-2 reduce-scatters every micro-step
    assert stage_bytes(_w("zero2"), p, 1, 8) == 0.0


def test_zero2_time_counts_only_the_reduce_scatters_beyond_ddp() -> None:
    gpu = SimpleNamespace(nvlink_gb_s=600.0, architecture="Ampere")
    inst = SimpleNamespace(nvlink=True)
    est = SimpleNamespace(profile=_profile(7.0))

    def cand(dist: str, accum: int) -> SimpleNamespace:
        return SimpleNamespace(variant=SimpleNamespace(workload=_w(dist), accum_steps=accum), total_gpus=8, nodes=1,
                               instance=inst, gpu=gpu, estimate=est)

    assert sharding_traffic(cand("zero2", 1)) is None and sharding_traffic(cand("zero1", 8)) is None
    t = sharding_traffic(cand("zero2", 8))
    assert t is not None and t.bytes_per_step == pytest.approx(7e9 * 2 * (7 / 8) * (7 / 8))
    assert sharding_traffic(cand("zero3", 1)).bytes_per_step == pytest.approx(stage_bytes(_w("zero3"), est.profile, 8, 1))


def _chosen(**fields):
    job, plan, _ = _plan_and_cost(get_knowledge(), Workload(**fields))
    return plan.chosen


def test_seven_b_full_finetune_on_eight_a100_takes_zero2_with_zero3_memory_said() -> None:
    c = _chosen(task="llm_finetune", model="Llama 2 7B", finetune_method="full", num_gpus=8, gpu_preference="A100")
    assert c.variant.workload.distributed == Distributed.zero2
    assert 0 < c.zero3_gib < c.estimate.device_total_gib < 0.95 * c.gpu.memory_gb
    rec = recommend({"task": "llm_finetune", "model": "Llama 2 7B", "finetune_method": "full", "num_gpus": 8,
                     "gpu_preference": "A100", "lang": "en"})
    fired = {t.rule_id for t in rec.trace}
    assert "MIT-ZERO2" in fired and "MIT-SHARD" not in fired
    assert "zero_optimization.stage: 2" in rec.render("en")


def test_accumulation_makes_zero1_cheaper_when_it_fits() -> None:
    c = _chosen(task="llm_finetune", model="Llama 2 7B", finetune_method="full", num_gpus=8, gpu_preference="A100",
                batch_size_per_gpu=8)
    assert c.variant.accum_steps > 1 and c.variant.workload.distributed == Distributed.zero1


def test_a_job_that_asks_for_zero3_is_not_planned_with_less() -> None:
    w = Workload(task="llm_finetune", model="Llama 3.1 8B", finetune_method="full", num_gpus=4, distributed="zero3")
    stages = {dict(s.update).get("distributed") for s in training_steps(w, bf16=True, gpus=4, fixed_gpus=True,
                                                                          max_gpus_per_node=8)}
    assert stages <= {None, Distributed.zero3}


def test_lora_is_sharded_with_zero3_only() -> None:
    w = Workload(task="llm_finetune", model="Llama 3.1 70B", finetune_method="lora")
    stages = {dict(s.update).get("distributed") for s in training_steps(w, bf16=True, gpus=1, fixed_gpus=False,
                                                                          max_gpus_per_node=8)}
    assert stages == {None, Distributed.zero3}


def test_a_plan_scaled_out_for_a_deadline_still_says_what_zero3_would_need() -> None:
    import re

    rec = recommend({"task": "llm_finetune", "model": "Llama 2 7B", "finetune_method": "full", "num_samples": 2000000,
                     "seq_len": 2048, "deadline_hours": 24, "lang": "en"})
    said = re.search(r"ZeRO-3 / FSDP would need about ([\d.]+) GiB per GPU", rec.render("en"))
    assert rec.instance.total_gpus > 8 and "MIT-ZERO2" in {t.rule_id for t in rec.trace}   # scaled out beyond memory
    assert said is not None and float(said.group(1)) > 0
