"""A serving budget no option meets: the changes that would bring a priced option within it, with their figures.

"预算每月2万，部署 Qwen2.5-72B 够吗" is answered "no" by the plan; what the user needs next is what the budget does buy.
Each change below is planned again on the same catalog and region (replan: the advisor's own plan and cost, so
nothing is estimated here) and said back with the cheapest priced option that meets the hourly budget:
- 4-bit weights (AWQ / GPTQ, W4A16: Lin et al. 2023, arXiv:2306.00978), when the weights are 16-bit or 8-bit;
- an FP8 KV cache (vLLM --kv-cache-dtype fp8, half the KV bytes), when the KV cache is 16-bit and several sequences
  are served;
- half the stated concurrent users, half the stated context (the KV cache shrinks in proportion);
- the largest smaller model of the same series in the knowledge base (e.g. Qwen2.5 32B for Qwen2.5 72B), as stated
  otherwise.
Where no single change fits, 4-bit weights with an FP8 KV cache together are tried; where that misses too, the
answer says what the cheapest such option costs. Quantized weights are a choice to evaluate (accuracy), said so.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from gpu_advisor.costing.basis import HOURS_PER_MONTH
from gpu_advisor.errors import AdvisorError
from gpu_advisor.util.i18n import Text
from gpu_advisor.workload import Task, enum_value

Replan = Callable[[dict[str, Any]], Any]   # Workload update -> (job, plan, report)

MAX_SAID = 3
SIZED_KEY = re.compile(r"^(?P<series>.+-)(?P<size>\d+(?:\.\d+)?)b$")


def _cheapest_within(report: Any, budget: float) -> Any | None:
    opts = [o for o in (report.options if report else []) if o.hourly_total is not None and o.currency == "CNY"]
    fit = [o for o in opts if o.hourly_total <= budget + 1e-9]
    return min(fit, key=lambda o: o.hourly_total) if fit else None


def _cheapest(report: Any) -> Any | None:
    opts = [o for o in (report.options if report else []) if o.hourly_total is not None and o.currency == "CNY"]
    return min(opts, key=lambda o: o.hourly_total) if opts else None


def _smaller_sibling(key: str) -> Any | None:
    """The largest model of the same series (registry key '<series>-<size>b') smaller than this one."""
    from gpu_advisor.kb.models import knowledge

    m = SIZED_KEY.match(key)
    if not m:
        return None
    specs = knowledge().transformers
    mine = specs.get(key)
    if mine is None:
        return None
    smaller = [s for k, s in specs.items() if k != key and (sm := SIZED_KEY.match(k)) and sm.group("series") == m.group("series")
               and s.family == "llm" and s.params_billion < mine.params_billion * 0.8 and s.experts == mine.experts]
    return max(smaller, key=lambda s: s.params_billion) if smaller else None


def _changes(job: Any) -> list[tuple[dict[str, Any], Text]]:
    w, original = job.workload, job.original
    out: list[tuple[dict[str, Any], Text]] = []
    quant = enum_value(w.quantization, "none")
    if quant in ("none", "int8", "fp8") and enum_value(w.precision, "bf16") != "fp32":
        out.append(({"quantization": "int4"}, Text(en="4-bit weights (AWQ / GPTQ INT4, evaluate the accuracy first)",
                                                   zh="INT4 权重（AWQ / GPTQ，上线前请评测精度）")))
    users = original.concurrent_users or original.batch_size_per_gpu
    kv = enum_value(w.kv_cache_dtype, "auto")
    if kv != "fp8" and (users or 1) > 1 and (job.memory.profile.kv_cache_bytes_per_token or 0) > 0:
        out.append(({"kv_cache_dtype": "fp8"}, Text(en="an FP8 KV cache (vLLM --kv-cache-dtype fp8)",
                                                    zh="FP8 KV cache（vLLM --kv-cache-dtype fp8）")))
    if users and users > 1:
        half = max(1, users // 2)
        upd = {"concurrent_users": half, "batch_size_per_gpu": half} if original.concurrent_users else \
            {"batch_size_per_gpu": half}
        out.append((upd, Text(en=f"{half} concurrent users instead of {users}", zh=f"并发 {half} 路（而不是 {users}）")))
    if original.seq_len and original.seq_len > 4096:
        half_seq = original.seq_len // 2
        if not w.output_tokens or w.output_tokens < half_seq:
            out.append(({"seq_len": half_seq}, Text(en=f"a {half_seq}-token context instead of {original.seq_len}",
                                                    zh=f"上下文 {half_seq} token（而不是 {original.seq_len}）")))
    sibling = _smaller_sibling(job.memory.profile.key)
    if sibling is not None:
        out.append(({"model": sibling.display}, Text(en=f"the smaller {sibling.display}", zh=f"换用更小的 {sibling.display}")))
    return out


def _zh(*parts: str) -> str:
    """Chinese text joined with a space between Han and Latin / digits (STYLE.md)."""
    out = ""
    for p in parts:
        if out and p and (out[-1].isascii() != p[0].isascii()) and out[-1] not in "（）：，。；" and p[0] not in "（）：，。；":
            out += " "
        out += p
    return out


def _volta(gpu_id: str) -> bool:
    """vLLM's AWQ kernels need compute capability 7.5 (Turing) or newer (AWQConfig.get_min_capability = 75); its GPTQ
    kernels run from 6.0: on a Volta card a 4-bit checkpoint is a GPTQ one."""
    from gpu_advisor.kb.bundle import get_knowledge

    gpu = get_knowledge().catalog.gpus.get(gpu_id)
    return gpu is not None and gpu.architecture == "Volta"


def _said(change: Text, o: Any) -> Text:
    month = o.hourly_total * HOURS_PER_MONTH   # a month of 24x7 operation
    if _volta(o.gpu_id) and "AWQ / GPTQ" in change.en:
        change = Text(en=change.en.replace("AWQ / GPTQ", "GPTQ; AWQ kernels need Turing or newer"),
                      zh=change.zh.replace("AWQ / GPTQ", "GPTQ；AWQ 需 Turing 及更新架构"))
    count_en = f"{o.replicas} × " if o.replicas > 1 else ""
    count_zh = f"{o.replicas} 台 " if o.replicas > 1 else ""
    return Text(en=f"{change.en}, on {count_en}{o.instance_type} ({o.total_gpus} × {o.gpu_display}) at {o.hourly_total:.2f} "
                   f"CNY/h (about {month:,.0f} CNY a month)",
                zh=f"{change.zh}，用 {count_zh}{o.instance_type}（{o.total_gpus} 张 {o.gpu_display}）每小时 {o.hourly_total:.2f} CNY"
                   f"（每月约 {month:,.0f} CNY）")


def budget_fit_lead(job: Any, report: Any, replan: Replan) -> list[Text]:
    """One line: what brings a served LLM within the hourly budget no option meets (see the module docstring)."""
    w = job.workload
    budget = w.budget_per_hour
    if (w.task != Task.inference or not budget or report is None or not job.memory.profile.is_llm
            or job.region is None):
        return []
    cheapest = _cheapest(report)
    if cheapest is None or cheapest.hourly_total <= budget:
        return []
    fits: list[Text] = []
    tried: dict[str, Any] = {}
    for update, text in _changes(job):
        try:
            _, _, other = replan(update)
        except (AdvisorError, ValueError):   # a change the workload rejects is skipped
            continue
        tried[next(iter(update))] = other
        o = _cheapest_within(other, budget)
        if o is not None:
            fits.append(_said(text, o))
        if len(fits) >= MAX_SAID:
            break
    head_en, tail_en = f"Within {budget:.2f} CNY/h this fits", f" (as asked, the cheapest option costs {cheapest.hourly_total:.2f} CNY/h)."
    head_zh, tail_zh = f"每小时 {budget:.2f} CNY 预算内可行的改动是", f"（按所述配置最便宜每小时 {cheapest.hourly_total:.2f} CNY）。"
    if fits:
        return [Text(en=f"{head_en} " + ", or ".join(t.en for t in fits) + tail_en,
                     zh=_zh(head_zh, *[p for i, t in enumerate(fits) for p in ((("，或",) if i else ()) + (t.zh,))]) + tail_zh)]
    last = None
    for update, label in _combinations(job, tried):
        try:
            _, _, other = replan(update)
        except (AdvisorError, ValueError):   # a change the workload rejects is skipped
            continue
        o = _cheapest_within(other, budget)
        if o is not None:
            said = _said(label, o)
            return [Text(en=f"{head_en} {said.en}{tail_en}", zh=_zh(head_zh, said.zh) + tail_zh)]
        last = (label, _cheapest(other)) if _cheapest(other) is not None else last
    if last is None:
        return []
    label, low = last
    return [Text(en=f"No change tried fits {budget:.2f} CNY/h: even with {label.en} the cheapest option, {low.instance_type}, "
                    f"costs {low.hourly_total:.2f} CNY/h (about {low.hourly_total * HOURS_PER_MONTH:,.0f} CNY a month); "
                    "run it part of the day, or raise the budget.",
                 zh=_zh(f"尝试的改动都进不了每小时 {budget:.2f} CNY 的预算：即使", label.zh) + f"，最便宜的 {low.instance_type} 也要每小时 "
                    f"{low.hourly_total:.2f} CNY（每月约 {low.hourly_total * HOURS_PER_MONTH:,.0f} CNY）；可按需开停，或提高预算。")]


def _combinations(job: Any, tried: dict[str, Any]) -> list[tuple[dict[str, Any], Text]]:
    """When no single change fits: 4-bit weights with an FP8 KV cache, then the smaller model of the series with them."""
    quant = {"quantization": "int4"} if "quantization" in tried else {}
    kv = {"kv_cache_dtype": "fp8"} if "kv_cache_dtype" in tried else {}
    out = []
    if quant and kv:
        out.append(({**quant, **kv}, Text(en="4-bit weights with an FP8 KV cache (evaluate the accuracy first)",
                                          zh="INT4 权重 + FP8 KV cache（上线前请评测精度）")))
    elif quant:
        out.append((quant, Text(en="4-bit weights (AWQ / GPTQ INT4)", zh="INT4 权重（AWQ / GPTQ）")))
    sibling = _smaller_sibling(job.memory.profile.key)
    if sibling is not None and quant:
        out.append(({"model": sibling.display, **quant, **kv}, Text(
            en=f"the smaller {sibling.display} with 4-bit weights{' and an FP8 KV cache' if kv else ''}",
            zh=f"换用更小的 {sibling.display} 并用 INT4 权重{' + FP8 KV cache' if kv else ''}")))
    return out


def stated_card_fit_lead(job: Any, the_plan: Any) -> list[Text]:
    """A served LLM the stated GPUs do not hold at the stated concurrency ("Qwen2.5-72B int4 放一张 A100 80G，32 并发
    8k 上下文够吗"): how many sequences of that context those GPUs do hold, with a 16-bit and an FP8 KV cache. The
    KV room is vLLM's: gpu_memory_utilization (0.9) of each card less the weights, activations and CUDA context of one
    sequence (the estimator's, memory/serving.py), shared by the tensor-parallel GPUs."""
    from gpu_advisor.memory import estimate_memory
    from gpu_advisor.memory.core import CUDA_CONTEXT_GIB, GIB
    from gpu_advisor.memory.serving import DEFAULT_UTILIZATION
    from gpu_advisor.workload import Workload

    w, original = job.workload, job.original
    c = the_plan.chosen if the_plan else None
    n = original.num_gpus
    users = original.concurrent_users or original.batch_size_per_gpu
    per_token = job.memory.profile.kv_cache_bytes_per_token or 0.0
    if (w.task != Task.inference or c is None or not n or c.total_gpus <= n or not users or users < 2
            or per_token <= 0 or not w.seq_len):
        return []
    update = {"num_gpus": n, "batch_size_per_gpu": 1, "concurrent_users": 1}
    if n > 1:
        update["distributed"] = "zero3"   # the serving chain's spelling of "split over the GPUs" (plan/ladder.py)
    try:
        one = estimate_memory(Workload.model_validate({**w.model_dump(), **update}))
    except (AdvisorError, ValueError):
        return []
    b = one.breakdown
    card = float(c.gpu.memory_gb or 0)
    room = DEFAULT_UTILIZATION * card - b.get("weights", 0.0) - b.get("activations", 0.0) - b.get("cuda_context", CUDA_CONTEXT_GIB)
    seqs = int(room * n * GIB // (per_token * w.seq_len)) if room > 0 else 0
    if seqs < 1 or seqs >= users:
        return []
    kv16 = enum_value(w.kv_cache_dtype, "auto") != "fp8"
    fp8_en = f" ({2 * seqs} with an FP8 KV cache)" if kv16 else ""
    fp8_zh = f"（FP8 KV cache 约 {2 * seqs} 路）" if kv16 else ""
    return [Text(en=f"On the stated {n} × {c.gpu.display_name}: about {room * n:.1f} GiB is left for the KV cache beside the "
                    f"weights (vLLM gpu_memory_utilization 0.9), which holds about {seqs} concurrent {w.seq_len}-token "
                    f"sequences{fp8_en}, not {users}.",
                 zh=f"按你给出的 {n} 张 {c.gpu.display_name}：权重之外约剩 {room * n:.1f} GiB 给 KV cache（vLLM "
                    f"gpu_memory_utilization 0.9），约能同时服务 {seqs} 路 {w.seq_len} token 的序列{fp8_zh}，而不是 {users} 路。")]


def budget_size_lead(job: Any, report: Any, replan: Replan) -> list[Text]:
    """A serving budget that names no model ("预算每月2万，能部署多大的模型"): the largest size of the knowledge base's
    budget ladder (knowledge/models/defaults.yaml task_defaults.inference.budget_ladder) whose cheapest priced option
    meets the hourly budget at the question's load, with 16-bit weights and with 4-bit weights, largest first."""
    from gpu_advisor.kb.models import knowledge

    w = job.workload
    budget = w.budget_per_hour
    if (w.task != Task.inference or job.original.model is not None or not budget or report is None
            or job.region is None or not job.memory.profile.is_llm):
        return []
    specs = knowledge().transformers
    ladder = [specs[k] for k in reversed(knowledge().task_defaults.get("inference", {}).get("budget_ladder", []))
              if k in specs]
    found: dict[str, tuple[Any, Any]] = {}
    for spec in ladder:
        for quant in ("int4", "none"):
            if quant in found:
                continue
            try:
                _, _, other = replan({"model": spec.display, "quantization": quant})
            except (AdvisorError, ValueError):
                continue
            o = _cheapest_within(other, budget)
            if o is not None:
                found[quant] = (spec, o)
            elif quant == "int4":
                break            # 4-bit weights of this size miss the budget: 16-bit weights miss it too
        if "none" in found:
            break
    if not found:
        return []
    load_en = f"{w.batch_size_per_gpu or 1} concurrent, {w.seq_len} tokens"
    load_zh = f"并发 {w.batch_size_per_gpu or 1}、{w.seq_len} token"
    parts = []
    for quant, label in (("int4", Text(en="4-bit weights (AWQ / GPTQ)", zh="INT4 权重，AWQ / GPTQ")),
                         ("none", Text(en="16-bit weights", zh="16 位权重"))):
        if quant in found:
            spec, o = found[quant]
            said = _said(Text(en=f"{spec.display} with {label.en}", zh=f"{spec.display}（{label.zh}）"), o)
            parts.append(said)
    return [Text(en=f"Largest model within {budget:.2f} CNY/h ({load_en}, the Qwen2.5 sizes): "
                    + "; ".join(t.en for t in parts) + ".",
                 zh=_zh(f"每小时 {budget:.2f} CNY 预算内能部署的最大模型（{load_zh}，按 Qwen2.5 各尺寸）是",
                        *[p for i, t in enumerate(parts) for p in ((("，或",) if i else ()) + (t.zh,))]) + "。")]


__all__ = ["budget_fit_lead", "budget_size_lead", "stated_card_fit_lead"]
