"""Time to train one option: FLOPs of the job / (dense peak x utilisation x GPUs x scaling efficiency).

compute = (train_flops_per_sample (memory estimator, at the option's resolved size: 6 x parameters x tokens)
           + causal self-attention (attention_flops_per_sample)) x samples x epochs
          x 4/3 when activations are recomputed (ladder.TIME_FACTOR)
wall    = compute / (peak TFLOPS x MFU x GPUs x scaling efficiency); GPU-hours = wall x GPUs.
The low end uses the high utilisation, scaling and peak, the high end the low ones.
"""

from __future__ import annotations

from contextvars import ContextVar

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpu_advisor.costing import basis
from gpu_advisor.costing.comm import Traffic, sharding_traffic, stage_bytes, ulysses_bytes
from gpu_advisor.costing.models import Range, TimeEstimate
from gpu_advisor.util.i18n import Note, Text, note
from gpu_advisor.plan.ladder import STEP_CKPT, TIME_FACTOR
from gpu_advisor.workload import enum_value

CONV_FAMILIES = {"cnn_segmentation", "detection", "classification", "prototype"}
PRECISION_KEY = {"fp32": "fp32", "fp16_amp": "fp16", "fp16": "fp16", "bf16_amp": "bf16", "bf16": "bf16",
                 "fp8": "fp8"}


def utilisation_for(family: str, workload: Any, gpu: Any = None) -> basis.Utilisation:
    """The utilisation band; with the GPU, fp32 convolutions on a GPU without TF32 get the FP32 CUDA-core band."""
    if family == "llm" and enum_value(getattr(workload, "finetune_method", None), "full") == "qlora":
        return basis.UTILISATION["llm_qlora"]
    if (gpu is not None and family in CONV_FAMILIES and enum_value(getattr(workload, "precision", None), "fp32") == "fp32"
            and gpu.tflops("tf32") is None and gpu.tflops("fp32") is not None):
        return basis.UTILISATION_FP32_CONV
    return basis.UTILISATION.get(family, basis.DEFAULT_UTILISATION)


# ---------------------------------------------------------------- the step over TCP across instances (internode.py)
REQUIRED_SLOWDOWN = 1.0 / basis.SCALING_RDMA.low  # 1.25


@dataclass(frozen=True)
class Internode:
    gb_per_step: float                      # GB through each instance's network per micro-step
    compute_s: tuple[float, float]          # (fastest, slowest) compute seconds per micro-step
    tcp_gbit_s: float
    tcp_slowdown: tuple[float, float]       # step over TCP / compute alone
    rdma_gbit_s: float | None               # the type's RDMA (or, for eRDMA without a figure, network) rate
    rdma_slowdown: tuple[float, float] | None
    tcp_mid: float                          # central TCP step (full overlap) / central compute

    @property
    def required(self) -> bool:
        return self.tcp_mid >= REQUIRED_SLOWDOWN


def _slowdown(seconds_fast: float, seconds_slow: float, compute: tuple[float, float]) -> tuple[float, float]:
    return max(1.0, seconds_fast / compute[1]), 1.0 + seconds_slow / compute[0]


def _compute_seconds(candidate: Any) -> tuple[float, float] | None:
    w, est = candidate.variant.workload, candidate.estimate
    family = est.profile.family
    peak, _ = peak_tflops(candidate.gpu, enum_value(w.precision, "fp32"), family)
    if peak is None or not est.train_flops_per_sample:
        return None
    util = utilisation_for(family, w, candidate.gpu)
    lora, _ = lora_factor(est, w)
    per_sample = est.train_flops_per_sample * lora + attention_flops_per_sample(est.profile, w.seq_len or 0)
    flops = per_sample * max(1, w.batch_size_per_gpu or 1) * (TIME_FACTOR[STEP_CKPT] if w.gradient_checkpointing else 1.0)
    flops /= max(1, int(getattr(candidate.variant, "sp", 1) or 1))   # sequence parallelism: sp GPUs share a sequence
    return flops / (peak.high * 1e12 * util.high), flops / (peak.low * 1e12 * util.low)


def internode(candidate: Any) -> Internode | None:
    """The inter-node verdict of a multi-instance training option, or None (one instance, serving, or no figure to
    compute it from: then the caller keeps RDMA as the safe requirement)."""
    t = candidate.instance
    if candidate.nodes <= 1 or not t.network_gbit_s:
        return None
    compute = _compute_seconds(candidate)
    if compute is None or compute[0] <= 0:
        return None
    w = candidate.variant.workload
    moved = stage_bytes(w, candidate.estimate.profile, candidate.total_gpus, getattr(candidate.variant, "accum_steps", 1))
    moved += ulysses_bytes(w, candidate.estimate.profile, int(getattr(candidate.variant, "sp", 1) or 1),
                           w.batch_size_per_gpu or 1)
    tcp = t.network_gbit_s / 8.0 * 1e9
    tcp_slow = _slowdown(moved / (tcp * basis.LINK_TCP.high), moved / (tcp * basis.LINK_TCP.low), compute)
    rdma_gbit = (t.rdma_gbit_s or t.network_gbit_s) if t.rdma != "none" else None
    rdma_slow = None
    if rdma_gbit:
        rate = rdma_gbit / 8.0 * 1e9
        rdma_slow = _slowdown(moved / (rate * basis.LINK_NETWORK.high), moved / (rate * basis.LINK_NETWORK.low), compute)
    mid_eff = (basis.LINK_TCP.low + basis.LINK_TCP.high) / 2.0
    tcp_mid = max(1.0, moved / (tcp * mid_eff) / ((compute[0] + compute[1]) / 2.0))
    return Internode(moved / 1e9, compute, float(t.network_gbit_s), tcp_slow, rdma_gbit, rdma_slow, tcp_mid)


def scaling_for(instance: Any, nodes: int, total_gpus: int, candidate: Any = None) -> basis.Scaling:
    """The scaling band. Several instances without RDMA, with the option (``candidate``): derived from its
    inter-node traffic over TCP (costing/internode.py) on top of the band inside one instance; the assumed
    basis.SCALING_TCP only where that traffic cannot be computed."""
    if total_gpus <= 1:
        return basis.SCALING_ONE_GPU
    if nodes > 1:
        if instance.rdma != "none":
            return basis.SCALING_RDMA
        derived = _tcp_scaling(candidate) if candidate is not None else None
        return derived or basis.SCALING_TCP
    return basis.SCALING_NVLINK if instance.nvlink else basis.SCALING_PCIE


def _tcp_scaling(candidate: Any) -> basis.Scaling | None:
    """Instances over TCP: the band inside one instance divided by the step's slowdown over TCP (between full overlap
    of traffic and compute and none: costing/internode.py, NCCL socket transport at basis.LINK_TCP of the network)."""
    v = internode(candidate)
    if v is None:
        return None
    inside = basis.SCALING_NVLINK if candidate.instance.nvlink else basis.SCALING_PCIE
    low, high = inside.low / v.tcp_slowdown[1], inside.high / v.tcp_slowdown[0]
    gbit = f"{v.tcp_gbit_s:g}"
    return basis.Scaling(round(low, 3), round(high, 3), Text(
        en=f"several instances over TCP ({gbit} Gbit/s, no RDMA): {low:.0%}-{high:.0%}, derived: about "
           f"{v.gb_per_step:.1f} GB through each instance's network per micro-step at "
           f"{basis.LINK_TCP.low:.0%}-{basis.LINK_TCP.high:.0%} of it makes a step {v.tcp_slowdown[0]:.2f}-"
           f"{v.tcp_slowdown[1]:.2f}x its compute, on top of {inside.low:.0%}-{inside.high:.0%} inside one instance",
        zh=f"多台实例经 TCP 互联（{gbit} Gbit/s，无 RDMA）：{low:.0%}–{high:.0%}，推导：每个微步每台实例网络收发约 "
           f"{v.gb_per_step:.1f} GB，按其 {basis.LINK_TCP.low:.0%}–{basis.LINK_TCP.high:.0%} 的带宽计，每步为纯计算的 "
           f"{v.tcp_slowdown[0]:.2f}–{v.tcp_slowdown[1]:.2f} 倍；再乘以单台实例内的 {inside.low:.0%}–{inside.high:.0%}"),
        inside.sources + basis.LINK_TCP.sources)


# peak_tflops by (GPU, precision, family): a pure function of the catalog's GPU record, asked for once per option of
# every answer (about 7) and once more by the serving speed line; keyed by the GPU object (kept beside its answer, so a
# reloaded catalog's GPU at a reused id() is recomputed). A static table of at most GPUs x precisions x families.
_PEAKS: dict[tuple[int, str, str], tuple[Any, Range | None, tuple[Note, ...]]] = {}


def peak_tflops(gpu: Any, precision: str, family: str) -> tuple[Range | None, list[Note]]:
    """Dense peak per GPU at the job's precision; fp32 convolutions may run as TF32 (stated as a note)."""
    key = (id(gpu), precision, family)
    known = _PEAKS.get(key)
    if known is None or known[0] is not gpu:
        if len(_PEAKS) > 4096:
            _PEAKS.clear()
        peak, notes = _peak_tflops(gpu, precision, family)
        known = _PEAKS[key] = (gpu, peak, tuple(notes))
    return known[1], list(known[2])


def _peak_tflops(gpu: Any, precision: str, family: str) -> tuple[Range | None, list[Note]]:
    key = PRECISION_KEY.get(precision, precision)
    base = gpu.tflops(key)
    if base is None:
        return None, []
    tf32 = gpu.tflops("tf32") if key == "fp32" else None
    if tf32 and family in CONV_FAMILIES:
        return Range(low=tf32, high=tf32), [note(
            "time_tf32", f"fp32 training on {gpu.display_name}: cuDNN runs convolutions in TF32 by default, so the "
            f"peak is taken as the TF32 {tf32:g} TFLOPS ({basis.SRC_TF32}; measured: {basis.SRC_TF32_MEASURED}); "
            f"with TF32 disabled (torch.backends.cudnn.allow_tf32=False) the FP32 peak {base:g} TFLOPS applies and "
            "the job is slower.",
            f"{gpu.display_name} 上的 fp32 训练：cuDNN 默认以 TF32 执行卷积，峰值按 TF32 {tf32:g} TFLOPS 计"
            f"（{basis.SRC_TF32}；实测：{basis.SRC_TF32_MEASURED}）；若关闭 TF32（torch.backends.cudnn.allow_tf32=False），"
            f"按 FP32 峰值 {base:g} TFLOPS 计，作业会更慢。", "precision", "fp32")]
    notes = []
    if tf32:
        notes.append(note("time_fp32", f"fp32 matmuls run at the FP32 peak ({base:g} TFLOPS); enabling TF32 "
                          f"(torch.backends.cuda.matmul.allow_tf32) would raise it to {tf32:g} TFLOPS.",
                          f"fp32 矩阵乘法按 FP32 峰值（{base:g} TFLOPS）计；开启 TF32 可提高到 {tf32:g} TFLOPS。",
                          "precision", "fp32"))
    return Range(low=base, high=base), notes


def lora_factor(estimate: Any, workload: Any) -> tuple[float, list[Note]]:
    """2/3 for LoRA/QLoRA when the estimator still counts full 6N training FLOPs (train = 3 x inference)."""
    method = enum_value(getattr(workload, "finetune_method", None), "full")
    infer = getattr(estimate, "infer_flops_per_sample", 0.0) or 0.0
    if method not in ("lora", "qlora") or infer <= 0 or abs(estimate.train_flops_per_sample / infer - 3.0) > 0.05:
        return 1.0, []
    return basis.LORA_FLOPS_FACTOR, [note(
        "time_lora_flops", f"{method}: the frozen base needs no weight gradients, so training costs 4N instead of 6N "
        f"FLOPs per token (x {basis.LORA_FLOPS_FACTOR:.2f}; {basis.SRC_LORA}).",
        f"{method}：冻结的基座权重无需计算权重梯度，每 token 训练 FLOPs 为 4N 而非 6N（× {basis.LORA_FLOPS_FACTOR:.2f}；"
        f"{basis.SRC_LORA}）。", "finetune_method", method)]


def _stated_tflops(gpu: Any) -> str:
    """The dense figures the catalog has for a GPU, e.g. "FP32 39.5 TFLOPS" (its tflops_basis says where from)."""
    figures = [(name, value) for name, value in gpu.dense_tflops.model_dump().items() if value is not None]
    return ", ".join(f"{name.upper()} {value:g} {'TOPS' if name == 'int8' else 'TFLOPS'}" for name, value in figures)


def _missing(en: str, zh: str, **kwargs: Any) -> TimeEstimate:
    return TimeEstimate(missing=Text(en=en, zh=zh), **kwargs)


_SERVING = _missing("serving runs continuously: no job time; costs are per month of operation",
                    "在线服务持续运行：无作业时长；费用按每月运行计")  # frozen: shared by every serving option


@lru_cache(maxsize=64)
def _band(low: float, high: float) -> Range:
    """The Range of an assumed utilisation or scaling band (a handful of constants in basis.py)."""
    return Range(low=low, high=high)


def _job_size(job: Any) -> tuple[float | None, float, list[Note]]:
    w = job.workload
    if w.epochs is not None:
        return w.num_samples, float(w.epochs), []
    return w.num_samples, 1.0, [note("time_one_epoch", "Epochs not given: time and cost are for one pass over the "
                                     "data; multiply by the number of epochs.",
                                     "未给出训练轮数：时间与费用按遍历一次数据计；请乘以实际轮数。", "epochs", 1)]


def is_batch_inference(job: Any, profile: Any = None) -> bool:
    """An offline pass of a non-decoder model over a stated number of inputs ("用 bge-m3 向量化 1000 万篇文档",
    "classify 2M images"): a job with a wall-clock and a total, not a service running by the month. No request rate
    and no concurrent users are stated; a decoder LLM's batch job depends on output lengths and is not timed here."""
    w = job.workload
    return (getattr(w.task, "value", w.task) == "inference" and bool(w.num_samples) and not w.requests_per_second
            and w.concurrent_users is None and not _decoder(profile or job.memory.profile))


def _decoder(profile: Any) -> bool:
    return bool(getattr(profile, "is_llm", getattr(profile, "family", None) == "llm"))


def _batch_inference_time(candidate: Any, job: Any) -> TimeEstimate:
    """Wall-clock of the pass: inputs / (GPUs x dense peak x utilisation / forward FLOPs per input), the same figures a
    request rate is sized with (plan/serving.per_gpu_rate); tokenisation, I/O and writing results are not counted."""
    w = candidate.variant.workload
    precision = enum_value(w.precision, "fp32")
    family = candidate.estimate.profile.family
    flops = candidate.estimate.infer_flops_per_sample
    peak, peak_notes = peak_tflops(candidate.gpu, precision, family)
    if peak is None or not flops:
        return _missing(f"{candidate.gpu.display_name}: dense {precision} TFLOPS not known; no time is given rather than "
                        "a guessed number", f"{candidate.gpu.display_name}：{precision} 稠密算力未知；不给出时间，以免凭空估计",
                        precision=precision)
    util = utilisation_for(family, w)
    gpus = candidate.total_gpus
    total = flops * float(job.workload.num_samples)
    wall = Range(low=total / (peak.high * 1e12 * util.high * gpus) / 3600,
                 high=total / (peak.low * 1e12 * util.low * gpus) / 3600)
    notes = [note("batch_inference", "An offline pass over the stated inputs: forward FLOPs only (one pass, no epochs); "
                  "tokenisation, I/O and writing the results are not counted: measure one batch first.",
                  "对所述输入做一次离线推理：只计前向计算（一遍，无轮数）；未计分词、读写与结果落盘：请先实测一个批次。",
                  "num_samples", job.workload.num_samples)]
    return TimeEstimate(total_pflop=total / 1e15, precision=precision, peak_tflops=peak,
                        utilisation=_band(util.low, util.high), scaling=_band(1.0, 1.0), recompute_factor=1.0,
                        gpu_hours=wall.scale(gpus), wall_hours=wall, notes=notes + peak_notes)


# A training method that computes more per sample than one supervised sequence (DPO: a pair's two sequences plus a
# frozen reference forward, gpu_advisor.ask.alignment.compute_factor): set for one advisor call by the caller that
# knows the method (the Workload has no field for it); 1.0 otherwise.
SAMPLE_COMPUTE: ContextVar[tuple[float, Note | None]] = ContextVar("sample_compute", default=(1.0, None))


def estimate_time(candidate: Any, job: Any) -> TimeEstimate:
    """The wall-clock and GPU-hour range of one option, or what is missing to compute it."""
    w = candidate.variant.workload
    if is_batch_inference(job, candidate.estimate.profile):
        return _batch_inference_time(candidate, job)
    if getattr(job.workload.task, "value", job.workload.task) == "inference":
        return _SERVING
    samples, epochs, notes = _job_size(job)
    precision = enum_value(w.precision, "fp32")
    if samples is None:
        return _missing("number of training samples (num_samples) not given: no time estimate",
                        "未给出训练样本数（num_samples）：无法估算时间", precision=precision)
    family = candidate.estimate.profile.family
    peak, peak_notes = peak_tflops(candidate.gpu, precision, family)
    if peak is None:
        stated = _stated_tflops(candidate.gpu)
        listed_en = f"the catalog lists only {stated} for this GPU" if stated else "the catalog has no figure for this GPU"
        listed_zh = f"目录中该 GPU 只有 {stated}" if stated else "目录中没有该 GPU 的任何算力数据"
        return _missing(f"{candidate.gpu.display_name}: dense {precision} TFLOPS not known ({listed_en}); no time is "
                        "given rather than a guessed number",
                        f"{candidate.gpu.display_name}：{precision} 稠密算力未知（{listed_zh}）；不给出时间，以免凭空估计",
                        precision=precision)
    recompute = TIME_FACTOR[STEP_CKPT] if w.gradient_checkpointing else 1.0
    lora, lora_notes = lora_factor(candidate.estimate, w)
    share = token_share(job, w)
    attention = attention_flops_per_sample(candidate.estimate.profile, (w.seq_len or 0) * share)
    per_sample = candidate.estimate.train_flops_per_sample * lora * share
    method_factor, method_note = SAMPLE_COMPUTE.get()
    flops = (per_sample + attention) * samples * epochs * recompute * method_factor
    if method_note is not None and method_factor != 1.0:
        notes.append(method_note)
    if attention >= 0.1 * (per_sample + attention):
        notes.append(_attention_note(attention / (per_sample + attention), w.seq_len * share))
    util = utilisation_for(family, w, candidate.gpu)
    scale = scaling_for(candidate.instance, candidate.nodes, candidate.total_gpus, candidate)
    gpus = candidate.total_gpus
    fastest = flops / (peak.high * 1e12 * util.high * gpus * scale.high) / 3600
    slowest = flops / (peak.low * 1e12 * util.low * gpus * scale.low) / 3600
    dequant = dequant_seconds(w, candidate.estimate.profile, getattr(candidate.gpu, "memory_bandwidth_gb_s", None))
    if dequant > 0:
        micro_steps = samples * epochs / (gpus * max(1, w.batch_size_per_gpu or 1))
        extra = dequant * micro_steps / 3600
        notes.append(_dequant_note(extra, (fastest, slowest), candidate.gpu))
        fastest, slowest = fastest + extra, slowest + extra
    # over TCP across instances the derived scaling band already counts every byte of the sharding (internode.py)
    tcp_derived = scale is not basis.SCALING_TCP and candidate.nodes > 1 and candidate.instance.rdma == "none"
    traffic = sharding_traffic(candidate) if gpus > 1 and not tcp_derived else None
    comm_notes: list[Note] = []
    if traffic is not None:
        micro = _traffic_micro_batch(candidate, job)
        planned = max(1, w.batch_size_per_gpu or 1)
        stage2 = enum_value(w.distributed, "none") == "zero2"
        if stage2 and micro != planned:  # the same samples per optimizer step in fewer, larger micro-steps
            traffic = sharding_traffic(candidate, accum=-(-candidate.variant.accum_steps * planned // micro))
        elif getattr(candidate.variant, "sp", 1) > 1 and micro != planned:  # the all-to-alls grow with the micro-batch
            traffic = sharding_traffic(candidate, micro=micro)
    if traffic is not None:
        # sequence parallelism: sp GPUs share each sequence, so gpus / sp sequences per micro-step
        steps = samples * epochs * max(1, getattr(candidate.variant, "sp", 1)) / (gpus * micro)
        comm_fast, comm_slow = (s * steps / 3600 for s in traffic.seconds())
        comm_notes.append(_traffic_note(traffic, gpus, steps, (fastest, slowest), (comm_fast, comm_slow), micro,
                                        planned, stage2))
        sp = int(getattr(candidate.variant, "sp", 1) or 1)
        if sp > 1:
            comm_notes.append(_sp_note(w, candidate.estimate.profile, sp, micro))
        fastest, slowest = max(fastest, comm_fast), slowest + comm_slow  # full overlap .. none
    wall = Range(low=fastest, high=slowest)
    return TimeEstimate(total_pflop=flops / 1e15, precision=precision, peak_tflops=peak,
                        utilisation=_band(util.low, util.high),
                        scaling=_band(scale.low, scale.high), recompute_factor=recompute,
                        gpu_hours=wall.scale(gpus), wall_hours=wall,
                        notes=notes + peak_notes + lora_notes + comm_notes)


@lru_cache(maxsize=256)
def _attention_shape(key: str) -> tuple[int, int, float, float, int, int] | None:
    """(layers, heads, q.k width, p.v width, sliding-window layers, window) of a decoder in the registry, or None."""
    from gpu_advisor.kb.models import knowledge   # the registry (imported late: costing loads before the knowledge base)

    t = knowledge().transformers.get(key)
    if t is None or t.family != "llm" or not t.layers or not t.heads:
        return None
    qk = (t.qk_nope_head_dim or 0) + (t.qk_rope_head_dim or 0) or t.head_dim
    return t.layers, t.heads, float(qk), float(t.v_head_dim or t.head_dim), t.sliding_layers, t.sliding_window or 0


def attention_flops_per_sample(profile: Any, tokens: float) -> float:
    """Training FLOPs of causal self-attention for one sample of ``tokens`` tokens, which 6 x parameters x tokens leaves
    out: per layer and head Q.K^T (2 x q.k width) and P.V (2 x p.v width) FLOPs per query-key pair, over the s^2 / 2 pairs
    a causal kernel computes (FlashAttention / SDPA skip the masked half; a sliding window of w: s w - w^2 / 2), times 3
    for forward and backward: Narayanan et al. 2021, arXiv:2104.04473, sec. 5.1 count 12 x layers x hidden x s^2 per
    sample over all pairs; causal kernels skip the masked blocks (FlashAttention-2, Dao 2023, arXiv:2307.08691,
    sec. 3.1.1), half of it. 0 for a model without a registered decoder shape."""
    shape = _attention_shape(getattr(profile, "key", "") or "") if tokens > 0 else None
    if shape is None:
        return 0.0
    layers, heads, qk, pv, local_layers, window = shape

    def pairs(span: float) -> float:
        return tokens * tokens / 2 if span >= tokens else tokens * span - span * span / 2

    local = min(local_layers, layers) if window else 0
    all_pairs = (layers - local) * pairs(tokens) + local * pairs(window)
    return 3.0 * 2.0 * heads * (qk + pv) * all_pairs


def _attention_note(share: float, tokens: float) -> Note:
    return note(
        "time_attention",
        f"At {tokens:,.0f} tokens per sample causal self-attention is {share:.0%} of the training FLOPs (it grows with "
        "the square of the sequence; counted besides 6 x parameters x tokens).",
        f"每个样本 {tokens:,.0f} 个 token 时，因果自注意力占训练 FLOPs 的 {share:.0%}（随序列长度平方增长；在 6 × 参数 × token "
        "之外另计）。", "seq_len", int(tokens))


def dequant_seconds(w: Any, profile: Any, bandwidth_gb_s: float | None) -> float:
    """QLoRA: seconds one GPU spends per micro-step dequantizing the 4-bit base to 16 bits (basis.SRC_DEQUANT): every
    base parameter (all of them counted; the 16-bit embeddings make it a slight overcount) read at 4 bits and written
    at 16 in the forward, again in the backward, and once more in the recomputed forward under checkpointing, at the
    GPU's memory bandwidth. Under FSDP each GPU dequantizes every layer it gathers. 0 for other methods or without a
    bandwidth figure."""
    if enum_value(getattr(w, "finetune_method", None), "full") != "qlora" or not bandwidth_gb_s:
        return 0.0
    passes = 3 if w.gradient_checkpointing else 2
    return passes * profile.params_billion * 1e9 * basis.DEQUANT_BYTES_PER_PARAM / (bandwidth_gb_s * 1e9)


def _dequant_note(hours: float, compute: tuple[float, float], gpu: Any) -> Note:
    return note(
        "time_dequant",
        f"QLoRA: the 4-bit base weights are dequantized to 16 bits before each matmul (forward, backward, and the "
        f"recomputed forward with checkpointing), memory traffic at the {gpu.display_name}'s "
        f"{gpu.memory_bandwidth_gb_s:g} GB/s: about {hours:.2f} h added to {compute[0]:.1f}-{compute[1]:.1f} h of "
        f"matmuls; it shrinks with more tokens per micro-step ({basis.SRC_DEQUANT}).",
        f"QLoRA：4 bit 基座权重在每次矩阵乘法前（前向、反向，开启检查点时还有重算的前向）反量化为 16 位，按 "
        f"{gpu.display_name} 的显存带宽 {gpu.memory_bandwidth_gb_s:g} GB/s 计约增加 {hours:.2f} 小时（矩阵乘法 "
        f"{compute[0]:.1f}–{compute[1]:.1f} 小时）；每个微步的 token 越多，占比越小（{basis.SRC_DEQUANT}）。",
        "finetune_method", "qlora")


MAX_TRAFFIC_MICRO_BATCH = 64


def _traffic_micro_batch(candidate: Any, job: Any) -> int:
    """Samples per micro-step the sharding traffic is counted over: the plan's micro-batch, or, when the user gave no
    batch, the largest that fits the card beside the sharded states (ZeRO-3 / FSDP gather the parameters once per
    micro-step, so a larger micro-batch with fewer accumulation steps moves less per sample). Activations and the
    transient buffers grow linearly with the micro-batch; the rest of the estimate does not."""
    planned = max(1, candidate.variant.workload.batch_size_per_gpu or 1)
    if getattr(job.original, "batch_size_per_gpu", None) is not None:
        return planned
    breakdown = candidate.estimate.breakdown
    per_sample = (breakdown.get("activations", 0.0) + breakdown.get("transient", 0.0)) / planned
    room = 0.95 * (candidate.gpu.memory_gb or 0.0) - candidate.upper_gib  # the planner's margin (planner.upper_gib)
    if per_sample <= 0 or room <= 0:
        return planned
    return int(min(MAX_TRAFFIC_MICRO_BATCH, planned + room // per_sample))


def token_share(job: Any, w: Any) -> float:
    """Mean tokens per sample over seq_len when the job knows its samples are shorter (the default dataset), else 1."""
    tokens = getattr(job, "sample_tokens", None)
    if not tokens or not w.seq_len:
        return 1.0
    return min(1.0, tokens / w.seq_len)


def _gb_s(t: Traffic) -> str:
    return f"{t.link_low:.0f}-{t.link_high:.0f} GB/s" if t.link_high != float("inf") else f">= {t.link_low:.0f} GB/s"


def _sp_note(w: Any, profile: Any, sp: int, micro: int) -> Note:
    from gpu_advisor.costing.comm import ulysses_bytes

    gb = ulysses_bytes(w, profile, sp, micro) / 1e9
    return note(
        "time_sp_traffic",
        f"Sequence parallelism over {sp} GPUs (DeepSpeed-Ulysses): each micro-step {sp} GPUs share one sequence, and "
        f"every layer's q, k, v and attention output cross an all-to-all in the forward and the backward"
        f"{' and the recomputed forward' if w.gradient_checkpointing else ''}: {gb:.1f} GB more per micro-step through "
        f"each GPU's link, counted in the traffic above "
        f"(Jacobs et al. 2023, arXiv:2309.14509 sec. 3.2).",
        f"序列并行 {sp} 卡（DeepSpeed-Ulysses）：每个微步 {sp} 张卡分担一条序列，每层的 q、k、v 与注意力输出在前向、反向"
        f"{'和重算前向' if w.gradient_checkpointing else ''}中各做一次 all-to-all：每个微步每卡链路多收发 {gb:.1f} GB，已计入上面的通信量"
        f"（Jacobs et al. 2023, arXiv:2309.14509 第 3.2 节）。",
        "distributed", round(gb, 2))


def _traffic_note(t: Traffic, gpus: int, steps: float, compute: tuple[float, float], comm: tuple[float, float],
                  micro: int, planned: int, stage2: bool = False) -> Note:
    per_step = t.bytes_per_step / 1e9
    micro_en = micro_zh = ""
    if micro != planned:
        micro_en = (f" Counted at a micro-batch of {micro}, the largest that fits beside the sharded states (batch not "
                    f"given; at {planned} the traffic is {micro / planned:.0f}x larger).")
        micro_zh = f"按能放下的最大微批 {micro} 计（未给出 batch；按 {planned} 计通信量为 {micro / planned:.0f} 倍）。"
    if stage2:
        return note(
            "time_shard_traffic",
            f"ZeRO-2 over {gpus} GPUs: the gradients are reduce-scattered at every micro-step, gradient-accumulation "
            f"steps included, where DDP communicates once per optimizer step; the extra {per_step:.1f} GB per "
            f"micro-step through each GPU's link ({t.link}, {_gb_s(t)} effective: {t.efficiency.why.en}) over "
            f"{steps:,.0f} micro-steps is {comm[0]:.1f}-{comm[1]:.1f} h against {compute[0]:.1f}-{compute[1]:.1f} h of "
            f"compute, taken between full overlap and none ({basis.SRC_DS_STAGE2}).{micro_en}",
            f"ZeRO-2 分片到 {gpus} 张卡：每个微步（含梯度累积步）都要 reduce-scatter 梯度，而 DDP 每个优化器步只通信一次；"
            f"每个微步每卡链路（{t.link}，有效 {_gb_s(t)}：{t.efficiency.why.zh}）多收发 {per_step:.1f} GB，"
            f"{steps:,.0f} 个微步共 {comm[0]:.1f}–{comm[1]:.1f} 小时，计算 {compute[0]:.1f}–{compute[1]:.1f} 小时，"
            f"时间取完全重叠到完全不重叠之间（{basis.SRC_DS_STAGE2}）。{micro_zh}",
            "distributed", round(per_step, 2))
    return note(
        "time_shard_traffic",
        f"ZeRO-3 / FSDP over {gpus} GPUs: every micro-step all-gathers the parameters twice and reduce-scatters the "
        f"trainable gradients, {per_step:.1f} GB through each GPU's link ({t.link}, {_gb_s(t)} effective: "
        f"{t.efficiency.why.en}); over {steps:,.0f} micro-steps that is {comm[0]:.1f}-{comm[1]:.1f} h "
        f"against {compute[0]:.1f}-{compute[1]:.1f} h of compute, so the time is taken between full overlap and none "
        f"({basis.SRC_ZERO_COMM}).{micro_en}",
        f"ZeRO-3 / FSDP 分片到 {gpus} 张卡：每个微步要两次 all-gather 参数、一次 reduce-scatter 可训练梯度，每卡链路"
        f"（{t.link}，有效 {_gb_s(t)}：{t.efficiency.why.zh}）收发 {per_step:.1f} GB；"
        f"{steps:,.0f} 个微步共 {comm[0]:.1f}–{comm[1]:.1f} 小时通信，计算 {compute[0]:.1f}–{compute[1]:.1f} 小时，"
        f"时间取完全重叠到完全不重叠之间（{basis.SRC_ZERO_COMM}）。{micro_zh}",
        "distributed", round(per_step, 2))
