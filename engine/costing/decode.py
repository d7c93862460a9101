"""Speed of one decoder-LLM serving replica, from first principles: decode is bound by memory bandwidth, prefill by
compute (Pope et al. 2022, Efficiently Scaling Transformer Inference, arXiv:2211.05102, sec. 2-3).

decode step = max(bytes read per step / (HBM bandwidth x efficiency), 2 x active params x N / (peak x utilisation))
              / GPUs + tensor-parallel all-reduces
    bytes read per step, per GPU = weights on the GPU (MoE: the weights every token uses - attention, embeddings, dense
              and shared-expert MLPs - plus the share of routed experts N tokens touch, 1 - (1 - k/E)^N for top-k of E
              experts under uniform routing, an upper bound: real routing is skewed and touches fewer; without the
              expert counts, 1 - (1 - a)^N over all weights with a = active / total parameters) + KV cache of the N
              active sequences (mean context prompt + output / 2) / tp
    all-reduces: 2 per layer (after attention and after the MLP, Megatron tensor parallelism, Shoeybi et al. 2019,
              arXiv:1909.08053 sec. 3), each a fixed latency + N x hidden x 2 bytes x 2(t-1)/t over the link (comm.py)
prefill of one prompt = 2 x active params x prompt tokens / (t x peak x utilisation) (+ its all-reduces); attention
    FLOPs (4 x layers x prompt^2 x hidden / 2) are left out: about 2 % of a 72B model's 2k-token prefill.
Closed loop of N concurrent users (continuous batching, every user sends the next request when the last is done):
    the replica's time per round of N requests is N prefills + L decode steps, so by Little's law
    request latency = N x prefill + L x step, requests/s = N / latency, time per output token = step + (N-1) x prefill / L
    (the other users' prefills run between my decode steps), TTFT = one prefill, plus at the slow end the wait behind
    prefills in progress (M/D/1 residual, rho / (2(1 - rho)) prefills) and one decode step per prefill chunk.
Bands: DECODE_HBM and PREFILL_UTIL below, derived from the derivation rows of bench/data/llm_serving_measured.csv
(LMDeploy batch-1 rows and vLLM's latency rows); bench/serve_throughput_accuracy.py checks the other rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpu_advisor.costing import basis
from gpu_advisor.util.i18n import Text

SRC_LMDEPLOY = ("InternLM/lmdeploy docs/en/benchmark/a100_fp16.md @3e391df4 (TurboMind v0.1.0a1, A100-80G, static batch: "
                "per-token latency percentiles and first-token latency)")
SRC_VLLM_CI = ("vLLM nightly performance benchmark, buildkite.com/vllm/performance-benchmark/builds/9515 (H200, batch 8, "
               "32 in / 128 out, mean latency)")
SRC_NCCL_LATENCY = ("NVIDIA/nccl issue #1259 (2 x H100, NVLS, CUDA graphs: ~6 us all-reduce of 128 B-64 kB); NVIDIA/nccl "
                    "issue #1453 (NCCL's own tuning model: 25 us for a small ring all-reduce on H100)")
SRC_VLLM_CHUNK = ("vllm-project/vllm vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: the OpenAI server's "
                  "max_num_batched_tokens is 2048 on A100 and on GPUs under 70 GiB, 8192 on larger ones")

DECODE_HBM = basis.Band(0.50, 0.76, Text(
    en="share of the HBM bandwidth a decode step reaches: 66-76 % for LMDeploy TurboMind at batch 1 on A100 (7B / 13B), "
       "about 51 % for vLLM at batch 8 on H200 (Llama 3.1 8B); so 50-76 %",
    zh="解码步能达到的显存带宽比例：LMDeploy TurboMind 在 A100 上 batch 1 为 66–76 %（7B / 13B），vLLM 在 H200 上 batch 8 约 51 %"
       "（Llama 3.1 8B）；取 50–76 %"), (SRC_LMDEPLOY, SRC_VLLM_CI))
PREFILL_UTIL = basis.Utilisation(0.40, 0.71, Text(
    en="share of the dense peak a prefill reaches: 64-71 % for LMDeploy's 2048-token prompts at batch 1 on A100; the "
       "low end (40 %) is an assumption for engines and GPUs that keep Tensor Cores less busy",
    zh="预填充能达到的稠密峰值比例：LMDeploy 在 A100 上 batch 1、2048 token 提示为 64–71 %；低端 40 % 为假设（其他引擎与 GPU 更低）"),
    (SRC_LMDEPLOY,))
ALLREDUCE_LATENCY_S = (6e-6, 25e-6)   # per all-reduce, fast and slow end (SRC_NCCL_LATENCY)
ACT_BYTES = 2.0                       # 16-bit activations through the all-reduce
MAX_NUM_SEQS = 256                    # vLLM's default max_num_seqs on A100 / GPUs under 70 GiB (SRC_VLLM_CHUNK)


@dataclass(frozen=True)
class Replica:
    """What one serving replica is: the physics inputs (per GPU unless said)."""
    bw_gb_s: float                  # HBM bandwidth of one GPU
    peak_tflops: float              # dense peak at the compute precision
    tp: int                         # GPUs of the replica (tensor parallel)
    weights_bytes: float            # weight bytes resident on one GPU
    active_share: float             # active / total parameters (1 for a dense model)
    kv_bytes_token: float           # KV bytes per token of one sequence, all layers (whole replica)
    active_params: float            # parameters per token (FLOPs)
    layers: int
    hidden: int
    link_gb_s: tuple[float, float] | None = None   # per-direction link rate x efficiency (slow, fast); None: one GPU
    chunk: int = 2048               # prefill tokens per scheduler step
    routed_share: float = 0.0       # MoE: routed-expert weights / all weights (0: a dense model, or counts unknown)
    routed_pick: float = 0.0        # MoE: experts a token is routed to / routed experts per layer (k / E)


@dataclass(frozen=True)
class Speed:
    """(fast, slow) pairs in seconds, or per second where said."""
    step: tuple[float, float]       # decode step with N sequences
    prefill: tuple[float, float]    # one prompt alone
    tpot: tuple[float, float]       # mean time per output token a user sees
    ttft: tuple[float, float]
    rps: tuple[float, float]        # requests per second of the replica (slow, fast)
    out_tok_s: tuple[float, float]  # output tokens per second of the replica (slow, fast)
    user_tok_s: tuple[float, float]  # output tokens per second one user sees (slow, fast)
    batch: int
    prompt: int
    output: int


def _allreduce(r: Replica, tokens: int, end: int) -> float:
    """Seconds of the 2 x layers all-reduces of one step over `tokens` tokens; end 0 fast, 1 slow."""
    if r.tp <= 1 or r.link_gb_s is None:
        return 0.0
    rate = r.link_gb_s[1 - end] * 1e9
    moved = tokens * r.hidden * ACT_BYTES * 2 * (r.tp - 1) / r.tp
    return 2 * r.layers * (ALLREDUCE_LATENCY_S[end] + moved / rate)


def _weights_touched(r: Replica, batch: int) -> float:
    """Share of the replica's weights one decode step over `batch` tokens reads (see the module docstring)."""
    if 0.0 < r.routed_share <= 1.0 and 0.0 < r.routed_pick <= 1.0:
        return (1.0 - r.routed_share) + r.routed_share * (1.0 - (1.0 - r.routed_pick) ** batch)
    return 1.0 - (1.0 - min(1.0, r.active_share)) ** batch


def decode_step(r: Replica, batch: int, context: float, end: int) -> float:
    """Seconds of one decode step of `batch` sequences at a mean context of `context` tokens; end 0 fast, 1 slow."""
    eff = DECODE_HBM.high if end == 0 else DECODE_HBM.low
    util = PREFILL_UTIL.high if end == 0 else PREFILL_UTIL.low
    touched = _weights_touched(r, batch)
    read = r.weights_bytes * touched + batch * context * r.kv_bytes_token / r.tp
    memory = read / (r.bw_gb_s * 1e9 * eff)
    compute = 2 * r.active_params * batch / r.tp / (r.peak_tflops * 1e12 * util)
    return max(memory, compute) + _allreduce(r, batch, end)


def prefill_time(r: Replica, prompt: int, end: int) -> float:
    """Seconds to prefill one prompt alone (compute-bound; at least one read of the weights)."""
    util = PREFILL_UTIL.high if end == 0 else PREFILL_UTIL.low
    eff = DECODE_HBM.high if end == 0 else DECODE_HBM.low
    compute = 2 * r.active_params * prompt / r.tp / (r.peak_tflops * 1e12 * util)
    return max(compute, r.weights_bytes / (r.bw_gb_s * 1e9 * eff)) + _allreduce(r, prompt, end)


def closed_loop(r: Replica, batch: int, prompt: int, output: int) -> Speed:
    """Steady state of `batch` users, each sending a request of `prompt` + `output` tokens as soon as the last ends."""
    batch, output = max(1, batch), max(1, output)
    context = prompt + output / 2
    steps = tuple(decode_step(r, batch, context, e) for e in (0, 1))
    pre = tuple(prefill_time(r, prompt, e) for e in (0, 1))
    latency = tuple(batch * pre[e] + output * steps[e] for e in (0, 1))
    tpot = tuple(steps[e] + (batch - 1) * pre[e] / output for e in (0, 1))
    rho = batch * pre[1] / latency[1]
    wait = pre[1] * rho / (2 * (1 - rho)) if batch > 1 else 0.0
    ttft = (pre[0], pre[1] + wait + math.ceil(prompt / max(1, r.chunk)) * steps[1])
    rps = (batch / latency[1], batch / latency[0])
    return Speed(steps, pre, tpot, ttft, rps, (rps[0] * output, rps[1] * output), (1 / tpot[1], 1 / tpot[0]),
                 batch, prompt, output)


def static_batch(r: Replica, batch: int, prompt: int, output: int) -> Speed:
    """A static batch (all prompts prefilled together, then `output` steps): LMDeploy's profile_generation."""
    context = prompt + output / 2
    steps = tuple(decode_step(r, batch, context, e) for e in (0, 1))
    pre = tuple(prefill_time(r, prompt * batch, e) for e in (0, 1))
    latency = tuple(pre[e] + output * steps[e] for e in (0, 1))
    rps = (batch / latency[1], batch / latency[0])
    return Speed(steps, pre, steps, pre, rps, (rps[0] * output, rps[1] * output), (1 / steps[1], 1 / steps[0]),
                 batch, prompt, output)


def replica_of(candidate: Any, job: Any) -> Replica | None:
    """The Replica of a planned serving option, or None when the catalog lacks the GPU's bandwidth or peak."""
    from gpu_advisor.costing.comm import _link
    from gpu_advisor.memory.core import GIB
    from gpu_advisor.memory.settings import resolve
    from gpu_advisor.workload import enum_value

    gpu, est = candidate.gpu, candidate.estimate
    w = candidate.variant.workload
    prof = est.profile
    if not gpu.memory_bandwidth_gb_s or not prof.is_llm or not prof.kv_cache_bytes_per_token:
        return None
    # FP8 weights run FP8 GEMMs where the GPU has them; otherwise the 16-bit Tensor-Core peak (a GPU without BF16 is
    # served in FP16: the planner's fp16_for_bf16)
    key = "fp8" if enum_value(w.quantization, "none") == "fp8" and gpu.tflops("fp8") else enum_value(w.precision, "bf16")
    peak = gpu.tflops(key.removesuffix("_amp")) or gpu.tflops("fp16") or gpu.tflops("bf16")
    t = resolve(w).transformer
    if not peak or t is None:
        return None
    tp = candidate.total_gpus
    link = None
    if tp > 1:
        found = _link(candidate)
        if found is None:
            return None
        rate, _, eff = found
        link = (rate * eff.low, rate * (eff.high if eff.high != float("inf") else 1.0))
    active = (prof.active_params_billion or prof.params_billion) * 1e9
    chunk = 8192 if (gpu.memory_gb or 0) >= 70 and gpu.architecture != "Ampere" else 2048
    routed = t.routed_expert_params_billion / t.params_billion if t.experts and t.experts_per_tok else 0.0
    return Replica(bw_gb_s=float(gpu.memory_bandwidth_gb_s), peak_tflops=float(peak), tp=tp,
                   weights_bytes=est.breakdown.get("weights", 0.0) * GIB, active_share=active / (prof.params_billion * 1e9),
                   kv_bytes_token=float(prof.kv_cache_bytes_per_token), active_params=active, layers=t.layers,
                   hidden=t.hidden, link_gb_s=link, chunk=chunk, routed_share=min(1.0, routed),
                   routed_pick=t.experts_per_tok / t.experts if t.experts else 0.0)


__all__ = ["DECODE_HBM", "PREFILL_UTIL", "Replica", "Speed", "closed_loop", "decode_step", "prefill_time",
           "replica_of", "static_batch"]
