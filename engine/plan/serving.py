"""Replicas for a serving workload with a request rate (Workload.requests_per_second).

Throughput of one GPU from first principles: dense peak at the serving precision (catalog) x utilisation /
inference FLOPs per request (memory estimator: one image, or one sequence of seq_len tokens). The utilisation band is
the training band of the model family (costing/basis.py, an assumption stated in the answer); an optimised engine
(TensorRT, ONNX Runtime) usually does better, so the replica count is on the safe side. Replicas = ceil(rate /
(per-GPU low x GPUs of the configuration)). Decoder LLMs are not sized this way: their decode step is bound by
memory bandwidth: costing/decode.py gives a replica's decode step, prefill, time per output token and requests/s from
the GPU's bandwidth and peak, and llm_speed() below says them first in the answer and turns a stated request rate into
replicas = ceil(rate / (the replica's requests/s at the slow end)).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpu_advisor.costing.decode import (DECODE_HBM, MAX_NUM_SEQS, PREFILL_UTIL, Speed, closed_loop, decode_step,
                                        prefill_time, replica_of)
from gpu_advisor.costing.timing import peak_tflops, utilisation_for
from gpu_advisor.memory.core import CUDA_CONTEXT_GIB, GIB
from gpu_advisor.memory.serving import DEFAULT_UTILIZATION
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
    if w.task == Task.inference and the_plan.options and job.memory.profile.is_llm:
        return llm_speed(the_plan, job)
    if w.task == Task.inference and not rate and w.num_samples and w.concurrent_users is None and the_plan.options \
            and not job.memory.profile.is_llm:
        return batch_job(the_plan, job)
    if not rate or w.task != Task.inference or not the_plan.options:
        return the_plan
    if job.memory.profile.is_llm:
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


def batch_job(the_plan: Plan, job: Job) -> Plan:
    """An offline pass of a non-decoder model over a stated number of inputs ("用 bge-m3 向量化 1000 万篇文档",
    "classify 2M images"): its time and total come from the cost report (costing/timing.is_batch_inference); when one
    GPU would take over a day, the line adds the rate and a full 8-GPU instance of the same GPU (data parallel)."""
    c, n = the_plan.chosen, float(job.workload.num_samples or 0)
    rates = per_gpu_rate(c)
    if rates is None or n <= 0:
        return the_plan
    low, high = rates[0] * c.total_gpus, rates[1] * c.total_gpus
    slow_h, fast_h = n / low / 3600, n / high / 3600
    util = utilisation_for(c.estimate.profile.family, c.variant.workload)
    precision = enum_value(c.variant.workload.precision, "fp32")
    wide_en = wide_zh = ""
    if c.total_gpus == 1 and slow_h > 24:
        wide_en = (f"; on 8 × {c.gpu.display_name} (data parallel, one copy of the model per GPU) about "
                   f"{_hours_span(fast_h / 8, slow_h / 8)}")
        wide_zh = f"；8 张 {c.gpu.display_name}（数据并行，每卡一份模型）约 {_hours_span(fast_h / 8, slow_h / 8)}"
    if not wide_en:
        return the_plan   # the time and the total lead from the cost report (costing/timing.is_batch_inference)
    the_plan.deadline_notes.append(Text(
        en=f"{low:,.0f}-{high:,.0f} inputs/s on {c.total_gpus} × {c.gpu.display_name} (dense {precision} peak × "
           f"utilisation {util.low:.0%}-{util.high:.0%}, an assumption, / {c.estimate.infer_flops_per_sample / 1e9:,.1f} "
           f"GFLOP per input){wide_en}.",
        zh=f"{c.total_gpus} 张 {c.gpu.display_name} 每秒 {low:,.0f}–{high:,.0f} 条（{precision} 稠密峰值 × 利用率 "
           f"{util.low:.0%}–{util.high:.0%}，假设，÷ 每条 {c.estimate.infer_flops_per_sample / 1e9:,.1f} GFLOP）"
           f"{wide_zh}。"))
    return the_plan


def _hours_span(fast: float, slow: float) -> str:
    if slow >= 48:
        return f"{fast / 24:,.1f}-{slow / 24:,.1f} d"
    if slow >= 1:
        return f"{fast:,.1f}-{slow:,.1f} h"
    return f"{fast * 60:,.0f}-{slow * 60:,.0f} min"


SPEED_SOURCE = "costing/decode.py"   # the measured bands and how they check


def _kv_sequences(c: Candidate, seq: int) -> int:
    """Sequences of seq tokens the replica's KV budget holds (vLLM's gpu_memory_utilization, memory/serving.py)."""
    per_token = c.estimate.profile.kv_cache_bytes_per_token or 0.0
    b = c.estimate.breakdown
    budget = (DEFAULT_UTILIZATION * float(c.gpu.memory_gb or 0) - b.get("weights", 0.0) - b.get("activations", 0.0)
              - b.get("cuda_context", CUDA_CONTEXT_GIB))
    if per_token <= 0 or seq <= 0 or budget <= 0:
        return 1
    return max(1, int(budget * GIB * c.total_gpus // (per_token * seq)))


def _load(c: Candidate, job: Job) -> tuple[int, bool]:
    """Sequences one replica decodes at once, and whether that is the stated concurrency (else: a full replica)."""
    w, original = job.workload, job.original
    if original.concurrent_users is not None or original.batch_size_per_gpu is not None or not w.requests_per_second:
        return max(1, c.variant.workload.batch_size_per_gpu or job.batch), True
    return min(MAX_NUM_SEQS, _kv_sequences(c, int(c.variant.workload.seq_len or w.seq_len or 0))), False


def assumed_output(job: Job) -> int | None:
    """Output tokens a request when a request rate is stated without them: the task default (knowledge/models/
    defaults.yaml, task_defaults.inference.output_tokens, cited there), at most half the context; None otherwise."""
    w = job.workload
    if w.output_tokens or not w.requests_per_second:
        return None
    from gpu_advisor.kb.models import knowledge

    typical = int(knowledge().task_defaults.get("inference", {}).get("output_tokens") or 0)
    seq = int(w.seq_len or 0)
    return min(typical, seq // 2) or None if typical and seq > 1 else None


def _output(job: Job) -> int | None:
    return job.workload.output_tokens or assumed_output(job)


def _assumed_text(job: Job) -> tuple[str, str]:
    out = assumed_output(job)
    if out is None:
        return "", ""
    return (f" Output length not stated: {out} tokens a request assumed (a long chat answer; LMSYS-Chat-1M averages "
            f"~215, arXiv:2309.11998); replicas scale about with it, so state yours (e.g. 'output 200 tokens').",
            f"未给出输出长度：按每请求 {out} 个输出 token 假设（偏长的对话回答；LMSYS-Chat-1M 平均约 215，arXiv:2309.11998）；"
            "副本数大致与之成正比，请给出实际长度（如“输出 200 token”）。")


def _speed(c: Candidate, job: Job) -> tuple[Speed, int, bool] | None:
    out = _output(job)
    seq = int(c.variant.workload.seq_len or job.workload.seq_len or 0)
    replica = replica_of(c, job)
    if replica is None or not out or out >= seq:
        return None
    n, stated = _load(c, job)
    full = closed_loop(replica, n, seq - out, out)
    rate = job.workload.requests_per_second
    if stated or not rate:
        return full, n, stated
    # no concurrency stated: the replicas are counted at full load; the users then see the speed at the load each
    # replica actually carries, the fewest sequences whose requests/s (slow end) still meet its share of the rate
    share = rate / max(c.replicas, math.ceil(rate / full.rps[0]))
    low, high = 1, n
    while low < high:
        mid = (low + high) // 2
        if closed_loop(replica, mid, seq - out, out).rps[0] >= share:
            high = mid
        else:
            low = mid + 1
    return closed_loop(replica, low, seq - out, out), low, False


def min_user_tok_s() -> float:
    """The slowest per-user output tokens/s an interactive answer should give (knowledge/models/defaults.yaml,
    task_defaults.inference.min_user_tok_s, cited there); 0 when not set."""
    from gpu_advisor.kb.models import knowledge

    return float(knowledge().task_defaults.get("inference", {}).get("min_user_tok_s") or 0)


def _most_sequences(ok: Any, n: int) -> int:
    """The most sequences (1..n) a replica carries with ok(k) still true (ok falls with k); 0 when even one fails."""
    if not ok(1):
        return 0
    low, high = 1, n
    while low < high:
        mid = (low + high + 1) // 2
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _floor_text(c: Candidate, slow_tok_s: float, users: int, ok: Any) -> tuple[str, str]:
    """When the slow end of the per-user speed is under the floor: the sequences a replica may carry for it, and the
    replicas of this option the users then take (said, not applied: the plan is sized on memory and the stated rate)."""
    floor = min_user_tok_s()
    if not floor or round(slow_tok_s) >= floor or users <= 1:   # as shown: "20-46" is not under 20
        return "", ""
    k = _most_sequences(ok, users)
    src_en = ("interactive-chat floor; MLPerf Inference Llama 2 70B Interactive: TPOT 40 ms = 25 tokens/s; reading "
              "~5 tokens/s: knowledge/models/defaults.yaml")
    src_zh = "交互式对话的下限；MLPerf Inference Llama 2 70B Interactive 要求 TPOT 40 ms 即 25 token/秒；阅读约 5 token/秒：knowledge/models/defaults.yaml"
    if k == 0:
        return (f" Below {floor:g} tokens/s per user ({src_en}) even with one sequence on this replica: use a faster "
                "GPU or more GPUs in tensor parallel.",
                f"即使单副本只跑 1 条序列，每个用户也达不到 {floor:g} token/秒（{src_zh}）：请换更快的 GPU 或用更多卡做张量并行。")
    r = math.ceil(users / k)
    return (f" That is under {floor:g} tokens/s per user, a usable streaming speed ({src_en}): for it a replica carries "
            f"at most {k} sequences, so {users} sequences in flight take {r} replicas ({r} × {c.instance.type}, {r * c.total_gpus} GPUs), "
            f"not {c.replicas} (said, not applied to the plan below).",
            f"慢的一端低于每用户 {floor:g} token/秒的可用流式速度（{src_zh}）：要达到它，每副本至多 {k} 条序列，同时 {users} 条序列需 {r} 个副本"
            f"（{r} 台 {c.instance.type}，共 {r * c.total_gpus} 张卡），而不是 {c.replicas} 个（仅说明，未改动下面的方案）。")


def _rps(pair: tuple[float, float]) -> tuple[str, str]:
    """Requests/s of a replica, with the digits that tell the ends apart (0.06-0.12, not 0.1-0.1)."""
    digits = 1 if pair[0] >= 1 else 2 if pair[0] >= 0.1 else 3
    return f"{pair[0]:.{digits}f}", f"{pair[1]:.{digits}f}"


def _tok(pair: tuple[float, float]) -> tuple[str, str]:
    """Output tokens/s a user sees, with a decimal below 1 (0.2-0.4, not 0-0)."""
    digits = 0 if pair[0] >= 1 else 1 if pair[0] >= 0.1 else 2
    return f"{pair[0]:.{digits}f}", f"{pair[1]:.{digits}f}"


def _ms(pair: tuple[float, float]) -> str:
    return f"{pair[0] * 1e3:.0f}-{pair[1] * 1e3:.0f} ms"


def _s(pair: tuple[float, float]) -> str:
    """Seconds with the digits that tell the ends apart: milliseconds under a second (60-110 ms, not 0.1-0.1 s)."""
    if pair[1] < 0.95:
        return _ms(pair)
    return f"{pair[0]:.1f}-{pair[1]:.1f} s"


def _basis(c: Candidate) -> tuple[str, str]:
    bw = f"{c.gpu.memory_bandwidth_gb_s:g} GB/s"
    return (f"HBM {DECODE_HBM.low:.0%}-{DECODE_HBM.high:.0%} of {bw}, prefill {PREFILL_UTIL.low:.0%}-"
            f"{PREFILL_UTIL.high:.0%} of peak: bench/serve_throughput_accuracy.py",
            f"显存带宽 {bw} 的 {DECODE_HBM.low:.0%}–{DECODE_HBM.high:.0%}，预填充为峰值的 {PREFILL_UTIL.low:.0%}–"
            f"{PREFILL_UTIL.high:.0%}：bench/serve_throughput_accuracy.py")


def _decode_only(the_plan: Plan, job: Job) -> None:
    """No output length: the decode speed at the stated context, and what is missing for requests/s."""
    c, original = the_plan.chosen, job.original
    if c is None:
        return
    replica = replica_of(c, job)
    seq = int(c.variant.workload.seq_len or job.workload.seq_len or 0)
    if replica is None or seq <= 1:
        return
    unloaded = original.concurrent_users is None and original.batch_size_per_gpu is None and not original.requests_per_second
    n = 1 if unloaded else max(1, c.variant.workload.batch_size_per_gpu or job.batch)
    fast, slow = decode_step(replica, n, seq / 2, 0), decode_step(replica, n, seq, 1)
    pre = (prefill_time(replica, seq, 0), prefill_time(replica, seq, 1))
    the_plan.serving_speed = {"ttft_s": [round(pre[0], 4), round(pre[1], 4)], "queued": False, "prompt_tokens": seq,
                              "sequences": n, "user_tok_s": [round(1 / slow, 1), round(1 / fast, 1)],
                              "gpus": c.total_gpus, "gpu": c.gpu.display_name}
    if unloaded:
        return                                       # no load stated: the answer stays on memory (the ask layer
                                                     # says the single-stream figures when latency is asked)
    rate = job.workload.requests_per_second
    en, zh = _basis(c)
    # the prefill of one prompt as long as the whole context, alone: the time to first token with nothing queued ahead
    # of it (an upper bound on the prompt, a lower bound on the TTFT under load); the queue needs the output length
    pre_en = (f" A prompt of up to {seq} tokens prefills alone in about {_s(pre)} (the time to first token with no other "
              "request queued; under load it grows).")
    pre_zh = f"一条至多 {seq} token 的提示单独预填充约 {_s(pre)}（无其他请求排队时的首 token 延迟；有负载时更长）。"
    rate_en = (f" {rate:g} requests/s is not turned into replicas: state the output length (e.g. 'output 500 tokens')."
               if rate else "")
    rate_zh = f"每秒 {rate:g} 个请求暂不换算副本数：请给出输出长度（如“输出 500 token”）。" if rate else ""
    users = n * c.replicas if original.concurrent_users is not None else 0
    floor_en, floor_zh = _floor_text(c, 1 / slow, users, lambda k: 1 / decode_step(replica, k, seq, 1) >= min_user_tok_s())
    rate_en, rate_zh = floor_en + rate_en, floor_zh + rate_zh
    the_plan.speed_notes.append(Text(
        en=f"Decode speed: about {1 / slow:.0f}-{1 / fast:.0f} output tokens/s per sequence with {n} sequence"
           f"{'s' if n > 1 else ''} on one replica ({c.total_gpus} × {c.gpu.display_name}; {_ms((fast, slow))} a step at "
           f"a context of {seq // 2}-{seq} tokens).{pre_en} The output length is not stated, so the time to first token under "
           f"load and requests/s are not given.{rate_en} [{en}]",
        zh=f"解码速度：单副本（{c.total_gpus} 张 {c.gpu.display_name}）同时 {n} 条序列时每条约 {1 / slow:.0f}–{1 / fast:.0f} "
           f"个输出 token/秒（上下文 {seq // 2}–{seq} token 时每步 {_ms((fast, slow))}）。{pre_zh}未给出输出长度，因此不给出"
           f"有负载时的首 token 延迟和每秒请求数。{rate_zh}［{zh}］"))


def llm_speed(the_plan: Plan, job: Job) -> Plan:
    """A decoder LLM's serving speed said first; a stated request rate sets the replicas of every option (in place)."""
    w = job.workload
    rate = w.requests_per_second
    if not _output(job):
        _decode_only(the_plan, job)
        return the_plan
    if rate:
        sized = []
        for c in the_plan.options:
            found = _speed(c, job)
            if found is None:
                continue
            c.replicas = max(c.replicas, math.ceil(rate / found[0].rps[0]))
            sized.append(c)
        if sized and len(sized) < len(the_plan.options):  # an option whose speed is unknown cannot be sized
            the_plan.options = sized
        the_plan.options.sort(key=Candidate.rank_key)
        if the_plan.preferred:
            the_plan.options.sort(key=lambda c: c.gpu.id not in the_plan.preferred)
        the_plan.chosen = the_plan.options[0]
    return speed_note(the_plan, job)


def speed_note(the_plan: Plan, job: Job) -> Plan:
    """The speed line of the plan's chosen option (again when the cost report chose another option: the line must
    be about the option the answer recommends, with its replicas)."""
    if not _output(job):
        _decode_only(the_plan, job)
        return the_plan
    rate = job.workload.requests_per_second
    c = the_plan.chosen
    found = _speed(c, job)
    if found is None:
        if replica_of(c, job) is None:
            the_plan.speed_notes.append(Text(
                en=f"Serving speed: the catalog states no memory bandwidth or dense peak for {c.gpu.display_name}, so no "
                   "tokens/s or requests/s is derived for it.",
                zh=f"服务速度：目录中没有 {c.gpu.display_name} 的显存带宽或稠密算力，无法推算 token/秒和每秒请求数。"))
        return the_plan
    sp, n, stated = found
    seq = int(c.variant.workload.seq_len or job.workload.seq_len or 0)
    the_plan.serving_speed = {"ttft_s": [round(sp.ttft[0], 4), round(sp.ttft[1], 4)], "queued": True,
                              "prompt_tokens": seq - (_output(job) or 0), "sequences": n,
                              "user_tok_s": [round(sp.user_tok_s[0], 1), round(sp.user_tok_s[1], 1)],
                              "gpus": c.total_gpus, "gpu": c.gpu.display_name}
    en, zh = _basis(c)
    load_en = f"at {n} concurrent" if stated else f"at the rate's load, about {n} sequences a replica"
    load_zh = f"并发 {n} 时" if stated else f"按该请求速率每副本约 {n} 条序列时"
    rate_en = rate_zh = ""
    if rate:
        best = max(1, math.ceil(rate / sp.rps[1]))
        rate_en = f"; {rate:g} requests/s: {c.replicas} replica{'s' if c.replicas > 1 else ''} ({best} at best)"
        rate_zh = f"；每秒 {rate:g} 个请求：{c.replicas} 个副本（最好 {best} 个）"
    said_en, said_zh = _assumed_text(job)
    if (stated and job.original.concurrent_users is not None) or rate:
        replica, out = replica_of(c, job), _output(job) or 0
        floor_en, floor_zh = _floor_text(
            c, sp.user_tok_s[0], n * c.replicas,
            lambda k: closed_loop(replica, k, seq - out, out).user_tok_s[0] >= min_user_tok_s())  # type: ignore[arg-type]
        if "at most" in floor_en and not job.original.seq_len:   # the assumed prompt decides the prefills between my decode steps
            floor_en += f" This counts the {seq - out}-token prompt assumed; shorter prompts allow more sequences a replica."
            floor_zh += f"此处按假设的 {seq - out} token 提示计算；提示更短则每副本可承载更多序列。"
        said_en, said_zh = floor_en + said_en, floor_zh + said_zh
    if rate and not job.original.seq_len:
        seq = int(c.variant.workload.seq_len or job.workload.seq_len or 0)
        said_en += (f" Prompt length not stated: {seq - _output(job)} input tokens a request assumed (the {seq}-token "
                    "sequence less the output); prefill scales with it, so shorter prompts need fewer replicas.")
        said_zh += (f"未给出输入长度：按每请求 {seq - _output(job)} 个输入 token 假设（{seq} token 序列减去输出）；"
                    "预填充算力与之成正比，输入更短则副本更少。")
    the_plan.speed_notes.append(Text(
        en=f"{_tok(sp.user_tok_s)[0]}-{_tok(sp.user_tok_s)[1]} output tokens/s per user {load_en}, TTFT {_s(sp.ttft)}, "
           f"{_rps(sp.rps)[0]}-{_rps(sp.rps)[1]} requests/s a replica{rate_en} ({SPEED_SOURCE}).{said_en}",
        zh=f"{load_zh}每个用户 {_tok(sp.user_tok_s)[0]}–{_tok(sp.user_tok_s)[1]} 个输出 token/秒，首 token 延迟 {_s(sp.ttft)}，"
           f"每副本每秒 {_rps(sp.rps)[0]}–{_rps(sp.rps)[1]} 个请求{rate_zh}（{SPEED_SOURCE}）。{said_zh}"))
    return the_plan
