"""Time-to-train: FLOPs / (dense peak x utilisation x GPUs x scaling), with hand-built options on real catalog GPUs."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.costing import basis
from gpu_advisor.costing.timing import estimate_time, scaling_for
from gpu_advisor.workload import Workload

CATALOG = load_catalog()


@dataclass
class FakeCandidate:
    gpu: object
    instance: object
    variant: object
    estimate: object
    nodes: int = 1
    gpus_per_node: int = 1
    price: object = None
    shortfalls: list = field(default_factory=list)

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node


def make(instance_type: str, workload: dict, family: str = "llm", flops: float = 6e9 * 2048, nodes: int = 1,
         per_node: int = 1) -> tuple[FakeCandidate, SimpleNamespace]:
    inst = CATALOG.require_instance(instance_type)
    w = Workload.model_validate(workload)
    estimate = SimpleNamespace(train_flops_per_sample=flops, infer_flops_per_sample=flops / 3,
                               profile=SimpleNamespace(family=family))
    cand = FakeCandidate(CATALOG.gpu_of(inst), inst, SimpleNamespace(workload=w, step=0), estimate, nodes, per_node)
    return cand, SimpleNamespace(workload=w, region="cn-hangzhou")


LLM = {"task": "llm_finetune", "precision": "bf16", "num_samples": 10_000, "epochs": 2}


def test_hours_follow_the_formula_on_an_a10():
    cand, job = make("ecs.gn7i-c8g1.2xlarge", LLM)
    t = estimate_time(cand, job)
    flops = 6e9 * 2048 * 10_000 * 2
    util = basis.UTILISATION["llm"]
    assert t.peak_tflops.low == t.peak_tflops.high == 125  # A10 datasheet, dense BF16
    assert t.wall_hours.low == pytest.approx(flops / (125e12 * util.high) / 3600)
    assert t.wall_hours.high == pytest.approx(flops / (125e12 * util.low) / 3600)
    assert t.gpu_hours == t.wall_hours and t.missing is None


def test_checkpointing_costs_four_thirds():
    plain, job = make("ecs.gn7i-c8g1.2xlarge", LLM)
    ckpt, job2 = make("ecs.gn7i-c8g1.2xlarge", {**LLM, "gradient_checkpointing": True})
    ratio = estimate_time(ckpt, job2).wall_hours.mid / estimate_time(plain, job).wall_hours.mid
    assert ratio == pytest.approx(4 / 3)


def test_unknown_tflops_give_no_time_and_say_so():
    cand, job = make("ecs.gn8t.4xlarge", LLM)  # GPUSpec G49: Alibaba states no throughput
    t = estimate_time(cand, job)
    assert t.wall_hours is None and t.gpu_hours is None
    assert "not known" in t.missing.en and "未知" in t.missing.zh
    assert "the catalog has no figure for this GPU" in t.missing.en and "目录中没有该 GPU 的任何算力数据" in t.missing.zh


def test_unknown_tflops_name_the_figures_the_catalog_has_not_its_maintainers_notes():
    cand, job = make("ecs.gn8v.4xlarge", LLM)  # Alibaba states only FP32 39.5 TFLOPS for gn8v's GPU
    t = estimate_time(cand, job)
    assert t.wall_hours is None
    assert "the catalog lists only FP32 39.5 TFLOPS for this GPU" in t.missing.en
    assert "目录中该 GPU 只有 FP32 39.5 TFLOPS" in t.missing.zh
    assert "estimator" not in t.missing.en  # gpus.yaml's tflops_basis is written for maintainers


def test_unknown_num_samples_gives_no_time():
    cand, job = make("ecs.gn7i-c8g1.2xlarge", {"task": "llm_finetune", "precision": "bf16"})
    t = estimate_time(cand, job)
    assert t.wall_hours is None and "num_samples" in t.missing.en


def test_missing_epochs_is_one_pass_and_a_note():
    cand, job = make("ecs.gn7i-c8g1.2xlarge", {"task": "llm_finetune", "precision": "bf16", "num_samples": 100})
    t = estimate_time(cand, job)
    assert t.wall_hours is not None and any(n.code == "time_one_epoch" for n in t.notes)


def test_fp32_convolutions_on_ampere_run_at_the_tf32_peak_as_a_stated_assumption():
    # cuDNN's default; NVIDIA's TF32 ResNet-50 row (938 img/s on one A100) is above the FP32 peak, so FP32 is no bound
    cand, job = make("ecs.gn7i-c8g1.2xlarge", {"task": "semantic_segmentation", "precision": "fp32",
                                               "num_samples": 100}, family="cnn_segmentation", flops=1e12)
    t = estimate_time(cand, job)
    assert t.peak_tflops.low == t.peak_tflops.high == 62.5
    tf32 = next(n for n in t.notes if n.code == "time_tf32")
    assert "allow_tf32=False" in tf32.text.en and "31.2" in tf32.text.en  # what disabling TF32 would mean
    assert (t.utilisation.low, t.utilisation.high) == (basis.UTILISATION["cnn_segmentation"].low,
                                                       basis.UTILISATION["cnn_segmentation"].high)


def test_fp32_on_a_gpu_without_tf32_uses_fp32_only_with_the_cuda_core_band():
    cand, job = make("ecs.gn6v-c8g1.2xlarge", {"task": "semantic_segmentation", "precision": "fp32",
                                               "num_samples": 100}, family="cnn_segmentation", flops=1e12)
    t = estimate_time(cand, job)
    assert t.peak_tflops.low == t.peak_tflops.high == 15.7
    band = basis.UTILISATION_FP32_CONV
    assert (t.utilisation.low, t.utilisation.high) == (band.low, band.high)
    assert band.low > basis.UTILISATION["cnn_segmentation"].high  # CUDA-core peak: a far larger share is reached
    # mixed precision on the same GPU is measured against the Tensor-Core peak and keeps the Tensor-Core band
    amp, job = make("ecs.gn6v-c8g1.2xlarge", {"task": "semantic_segmentation", "precision": "fp16_amp",
                                              "num_samples": 100}, family="cnn_segmentation", flops=1e12)
    assert estimate_time(amp, job).utilisation.high == basis.UTILISATION["cnn_segmentation"].high


def test_more_gpus_are_faster_but_not_linearly():
    one, job = make("ecs.gn7i-c8g1.2xlarge", LLM)
    four, job4 = make("ecs.gn7i-c32g1.32xlarge", LLM, per_node=4)
    t1, t4 = estimate_time(one, job), estimate_time(four, job4)
    assert t4.wall_hours.mid < t1.wall_hours.mid / 3
    assert t4.gpu_hours.mid > t1.gpu_hours.mid  # scaling loss shows up as extra GPU-hours


def test_scaling_is_lower_across_nodes_without_rdma():
    rdma = SimpleNamespace(rdma="erdma", nvlink=False)
    tcp = SimpleNamespace(rdma="none", nvlink=False)
    assert scaling_for(tcp, 2, 16).high < scaling_for(rdma, 2, 16).low
    assert scaling_for(rdma, 1, 1).low == 1.0


def test_serving_has_no_job_time():
    cand, job = make("ecs.gn7i-c8g1.2xlarge", {"task": "inference", "requests_per_second": 10})
    assert estimate_time(cand, job).wall_hours is None


def test_an_offline_pass_over_stated_inputs_is_a_job_with_a_time():
    # "classify 2M images": forward FLOPs x inputs at the dense peak x the utilisation band, one pass
    cand, job = make("ecs.gn7i-c8g1.2xlarge", {"task": "inference", "num_samples": 100_000}, family="classification")
    t = estimate_time(cand, job)
    assert t.wall_hours is not None and 0 < t.wall_hours.low < t.wall_hours.high
    flops = cand.estimate.infer_flops_per_sample * 100_000
    assert t.total_pflop == pytest.approx(flops / 1e15)
    assert t.wall_hours.low == pytest.approx(flops / (t.peak_tflops.high * 1e12 * t.utilisation.high) / 3600)


def test_two_rdma_instances_use_the_rdma_scaling_range():
    cand, job = make("ecs.ebmgn7ix.32xlarge", LLM, nodes=2, per_node=8)
    t = estimate_time(cand, job)
    assert (t.scaling.low, t.scaling.high) == (basis.SCALING_RDMA.low, basis.SCALING_RDMA.high)
    assert t.gpu_hours.mid == pytest.approx(t.wall_hours.mid * 16)


def test_lora_counts_four_n_when_the_estimator_counts_six_n():
    full, job = make("ecs.gn7i-c8g1.2xlarge", LLM)
    lora, job2 = make("ecs.gn7i-c8g1.2xlarge", {**LLM, "finetune_method": "lora"})
    t_full, t_lora = estimate_time(full, job), estimate_time(lora, job2)
    assert t_lora.total_pflop == pytest.approx(t_full.total_pflop * 4 / 6)
    assert any(n.code == "time_lora_flops" for n in t_lora.notes)


def test_vision_flops_count_two_per_multiply_accumulate() -> None:
    """ResNet-50's published 4.1 G 'FLOPs' at 224x224 are multiply-accumulates (He et al. 2015; torchvision's fvcore
    count): 8.2 GFLOP forward, 24.6 GFLOP a training image (forward + 2 x backward). With the MAC count used as FLOPs
    the time estimates of every vision job were half what the GPU's peak allows at the stated utilisation."""
    from gpu_advisor import Workload, estimate_memory

    e = estimate_memory(Workload(task="inference", backbone="ResNet-50", input_size=(224, 224), batch_size_per_gpu=1))
    assert e.infer_flops_per_sample == pytest.approx(8.2e9, rel=0.01)
    assert e.train_flops_per_sample == pytest.approx(3 * 8.2e9, rel=0.01)


def test_peak_tflops_memo_matches_the_uncached_figure_and_hands_out_its_own_list():
    """peak_tflops is memoised per (GPU object, precision, family): the same figures and notes as computed afresh,
    a new list each call (callers extend it), and a GPU record built anew (another catalog) is looked up anew."""
    from gpu_advisor.costing.timing import _peak_tflops, peak_tflops

    for gpu in CATALOG.gpus.values():
        for precision in ("fp32", "bf16_amp", "fp16_amp", "fp8"):
            for family in ("llm", "detection"):
                first, again = peak_tflops(gpu, precision, family), peak_tflops(gpu, precision, family)
                assert first == again == _peak_tflops(gpu, precision, family)
                assert first[1] is not again[1]
    a10 = next(g for g in CATALOG.gpus.values() if g.tflops("bf16"))
    other = a10.model_copy(update={"dense_tflops": a10.dense_tflops.model_copy(update={"bf16": 1.0})})
    assert peak_tflops(other, "bf16", "llm")[0].high == 1.0
    assert peak_tflops(a10, "bf16", "llm")[0].high == a10.tflops("bf16")
