"""Replicas for a serving workload with a request rate (Workload.requests_per_second).

Throughput of one GPU from first principles: dense peak at the serving precision (catalog) x utilisation /
inference FLOPs per request (memory estimator: one image, or one sequence of seq_len tokens). The utilisation band is
the training band of the model family (costing/basis.py, an assumption stated in the answer); an optimised engine
(TensorRT, ONNX Runtime) usually does better, so the replica count is on the safe side. Replicas = ceil(rate /
(per-GPU low x GPUs of the configuration)). Decoder LLMs are not sized this way: their decode step is bound by
memory bandwidth and the output length, which the workload does not state; the answer says so instead.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpu_advisor.costing.timing import peak_tflops, utilisation_for
from gpu_advisor.util.i18n import Text
from gpu_advisor.plan.planner import Candidate, Plan
from gpu_advisor.workload import Task, enum_value

if TYPE_CHECKING:
    from gpu_advisor.plan.defaults import Job


def per_gpu_rate(c: Candidate) -> tuple[float, float] | None:
    """(low, high) requests per second one GPU of ``c`` serves, or None when the catalog lacks the peak."""
    w = c.variant.workload
    flops = c.estimate.infer_flops_per_sample
    family = c.estimate.profile.family
    peak, _ = peak_tflops(c.gpu, enum_value(w.precision, "fp32"), family)
    if not flops or peak is None:
        return None
    util = utilisation_for(family, w)
    return peak.low * 1e12 * util.low / flops, peak.high * 1e12 * util.high / flops


def _faster_en(precision: str) -> str:
    return "Serving in FP16 / INT8 (TensorRT) raises it" if precision == "fp32" else "An INT8 TensorRT engine raises it"


def _faster_zh(precision: str) -> str:
    return "用 FP16 / INT8（TensorRT）部署可提高吞吐" if precision == "fp32" else "用 INT8（TensorRT）部署可进一步提高吞吐"


def size_replicas(the_plan: Plan, job: Job) -> Plan:
    """Every option with the replicas the request rate needs (in place); a lead line says how many and on what."""
    w = job.workload
    rate = w.requests_per_second
    if not rate or w.task != Task.inference or not the_plan.options:
        return the_plan
    if job.memory.profile.is_llm:
        the_plan.deadline_notes.append(Text(
            en=f"{rate:g} requests/s: not turned into a replica count for a decoder LLM: each output token is one "
               "decode step bound by memory bandwidth, so a replica's rate depends on the output length and on how "
               f"many sequences it decodes at once; the plan is one replica holding {job.batch} concurrent "
               f"sequence{'s' if job.batch > 1 else ''} of {w.seq_len or 'the default'} tokens. Measure one replica's "
               "requests/s at your prompt and output lengths (vLLM benchmark_serving) and divide; state the "
               "concurrency (e.g. '32 concurrent') to size its KV cache.",
            zh=f"每秒 {rate:g} 个请求：对解码式 LLM 不换算副本数——每个输出 token 是一步受显存带宽限制的解码，单副本的请求速率取决于"
               f"输出长度和同时解码的序列数；方案按一个副本、同时容纳 {job.batch} 条 {w.seq_len or '默认长度'} token 的序列计。"
               "请按你的输入 / 输出长度实测单副本的请求速率（vLLM benchmark_serving）再相除；给出并发数（如“并发 32”）即可按它估算 KV cache。"))
        return the_plan
    unknown = []
    for c in the_plan.options:
        rates = per_gpu_rate(c)
        if rates is None:
            unknown.append(c)
            continue
        c.replicas = max(1, math.ceil(rate / (rates[0] * c.total_gpus)))
    if len(unknown) < len(the_plan.options):  # a GPU whose rate is unknown cannot be sized: it is not offered
        the_plan.options = [c for c in the_plan.options if c not in unknown]
    the_plan.options.sort(key=Candidate.rank_key)
    if the_plan.preferred:
        the_plan.options.sort(key=lambda c: c.gpu.id not in the_plan.preferred)
    the_plan.chosen = the_plan.options[0]
    c = the_plan.chosen
    rates = per_gpu_rate(c)
    if rates is None:
        the_plan.deadline_notes.append(Text(
            en=f"{rate:g} requests/s: the catalog has no dense figure for {c.gpu.display_name} at this precision, so no "
               "replica count is derived for it.",
            zh=f"每秒 {rate:g} 个请求：目录中没有 {c.gpu.display_name} 在该精度下的算力数据，无法推算副本数。"))
        return the_plan
    low, high = rates[0] * c.total_gpus, rates[1] * c.total_gpus
    best_case = max(1, math.ceil(rate / high))
    flops = c.estimate.infer_flops_per_sample
    precision = enum_value(c.variant.workload.precision, "fp32")
    the_plan.deadline_notes.append(Text(
        en=f"{rate:g} requests/s needs {c.replicas} replica{'s' if c.replicas > 1 else ''}: {c.replicas} × {c.instance.type} ({c.replicas * c.total_gpus} × "
           f"{c.gpu.display_name}; {best_case} at the optimistic end): one replica serves about {low:,.0f}-{high:,.0f} "
           f"requests/s = dense {precision} peak × utilisation ({utilisation_for(c.estimate.profile.family, c.variant.workload).low:.0%}-"
           f"{utilisation_for(c.estimate.profile.family, c.variant.workload).high:.0%}, an assumption) / "
           f"{flops / 1e9:,.1f} GFLOP per request. {_faster_en(precision)}; measure one replica and "
           "add headroom for peaks.",
        zh=f"每秒 {rate:g} 个请求需要 {c.replicas} 个副本，即 {c.replicas} 台 {c.instance.type}（共 {c.replicas * c.total_gpus} 张 "
           f"{c.gpu.display_name}；乐观估计 {best_case} 台）：单副本约 {low:,.0f}–{high:,.0f} 请求/秒 = {precision} 稠密峰值 × "
           f"利用率（{utilisation_for(c.estimate.profile.family, c.variant.workload).low:.0%}–"
           f"{utilisation_for(c.estimate.profile.family, c.variant.workload).high:.0%}，假设）÷ 每请求 {flops / 1e9:,.1f} GFLOP。"
           f"{_faster_zh(precision)}；请实测单副本并为峰值留余量。"))
    return the_plan
