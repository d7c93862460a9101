"""Whether a multi-node training job needs RDMA (costing/internode.py): traffic per step over TCP against compute."""

import pytest

from gpu_advisor.advisor import evaluate_facts
from gpu_advisor.costing import basis
from gpu_advisor.costing.internode import REQUIRED_SLOWDOWN, internode
from gpu_advisor.workload import Workload

RESNET_4X8 = {"task": "image_classification", "model": "ResNet-50", "num_gpus": 32, "num_nodes": 4}
LLAMA70_4X8 = {"task": "llm_finetune", "model": "Llama 3.1 70B", "finetune_method": "full", "seq_len": 2048,
               "num_gpus": 32, "num_nodes": 4}
LORA7_2X8 = {"task": "llm_finetune", "model": "Qwen2.5 7B", "finetune_method": "lora", "num_gpus": 16,
             "num_nodes": 2, "gpu_preference": "A100"}


def facts(w: dict) -> tuple[dict, set[str]]:
    f, fired = evaluate_facts(Workload(**w))
    return f, {x.rule_id for x in fired}


def test_threshold_is_the_rdma_scaling_floor():
    assert REQUIRED_SLOWDOWN == pytest.approx(1 / basis.SCALING_RDMA.low) == pytest.approx(1.25)
    assert 0 < basis.LINK_TCP.low < basis.LINK_TCP.high < basis.LINK_NETWORK.low  # TCP below the RDMA ring band
    assert basis.SRC_NCCL_TCP in basis.LINK_TCP.sources


def test_resnet50_ddp_over_tcp_is_recommended_not_required():
    f, fired = facts(RESNET_4X8)
    assert f["nodes"] == 4 and f["planned_sharding"] == "ddp"
    # DDP all-reduce: 2 x (n-1)/n x 25.6 M fp32 gradients ~ 0.2 GB per step
    assert 0.1 < f["internode_gb_step"] < 0.25
    assert f["rdma_required"] is False and f["tcp_mid_slowdown"] < REQUIRED_SLOWDOWN
    assert "NET-TCP-OK" in fired and "NET-MULTINODE" not in fired and "PLAT-LINGJUN" not in fired


def test_resnet50_on_stated_v100_takes_a_tcp_type():
    f, fired = facts({**RESNET_4X8, "gpu_preference": "V100"})
    assert f["gpu_arch"] == "Volta" and f["instance_rdma"] == "none" and f["nodes"] == 4
    assert "NET-TCP-OK" in fired


def test_llama70b_zero3_over_tcp_requires_rdma():
    f, fired = facts(LLAMA70_4X8)
    assert f["planned_sharding"] == "zero3" and f["instance_rdma"] != "none"
    assert f["internode_gb_step"] > 300  # two 16-bit parameter all-gathers + gradients per micro-step
    assert f["rdma_required"] is True and f["tcp_mid_slowdown"] >= 2
    assert {"NET-MULTINODE", "NET-RDMA-OK"} <= fired and "NET-TCP-OK" not in fired


def test_lora_adapters_are_all_the_traffic():
    f, fired = facts(LORA7_2X8)
    assert f["internode_gb_step"] < 1.0 and f["rdma_required"] is False and "NET-TCP-OK" in fired


def test_slowdown_bands_are_ordered_and_rdma_is_faster():
    from gpu_advisor.plan.defaults import resolve_job
    from gpu_advisor.plan.planner import plan
    from gpu_advisor.kb.bundle import get_knowledge

    kb = get_knowledge()
    job = resolve_job(Workload(**LLAMA70_4X8), kb.catalog)
    verdicts = [v for v in map(internode, plan(kb.catalog, job.workload, "cn-hangzhou").options) if v is not None]
    assert verdicts  # A100 options have TFLOPS and network figures
    v = verdicts[0]
    assert v.tcp_slowdown[0] <= v.tcp_slowdown[1] and v.compute_s[0] < v.compute_s[1]
    assert v.rdma_slowdown is not None and v.rdma_slowdown[1] < v.tcp_slowdown[1]


def test_no_compute_figure_keeps_rdma_as_the_safe_side():
    f, fired = facts({"task": "llm_pretrain", "model": "Llama 3.1 70B", "seq_len": 4096})
    if f["internode_known"]:
        pytest.skip("the chosen GPU has a TFLOPS figure now")
    assert f["rdma_required"] is True and "NET-RDMA-UNSIZED" in fired and "NET-MULTINODE" not in fired


def test_a_tcp_type_is_dropped_where_the_traffic_needs_rdma():
    from gpu_advisor.kb.bundle import get_knowledge
    from gpu_advisor.plan.defaults import resolve_job
    from gpu_advisor.plan.planner import plan

    kb = get_knowledge()
    job = resolve_job(Workload(**LLAMA70_4X8), kb.catalog)
    p = plan(kb.catalog, job.workload, "cn-hangzhou")
    assert p.options and all(c.instance.rdma != "none" for c in p.options if c.nodes > 1)
    resnet = plan(kb.catalog, resolve_job(Workload(**RESNET_4X8), kb.catalog).workload, "cn-hangzhou")
    tcp = [c for c in resnet.options if c.nodes > 1 and c.instance.rdma == "none"]
    assert tcp  # the same GPUs without RDMA stay on offer for a job whose traffic TCP carries
