"""Two models served side by side ("一台机器上同时跑 Qwen2.5-7B 和 bge-m3", "Llama 3.1 8B and bge-m3 on the same GPU").

The plan sizes the first model named; each further model the knowledge base knows is estimated on its own (serving, its
defaults: the estimator's, nothing estimated here) and set beside the plan's card: it shares a GPU of the recommended
instance when its whole device total fits that GPU's room (the card less the first model's per-GPU total, with the
planner's 5 % headroom), else it needs a GPU of its own. One engine process per model: vLLM preallocates
gpu_memory_utilization (0.9 by default) of each card for its own weights and KV cache, so the first model's engine must
be started with a smaller share to leave the second one room (vLLM docs, engine arguments: --gpu-memory-utilization).
"""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.lexicon import load_lexicon
from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util.i18n import Text

HEADROOM = 0.95   # the planner's 5 % headroom (plan/planner.py FIT_HEADROOM, against the card's stated memory)


def _other_total(name: str, lang: str) -> tuple[str, float] | None:
    """(display name, device total GiB on one GPU) of a further model served at its defaults, or None."""
    from gpu_advisor import Workload, estimate_memory
    from gpu_advisor.errors import AdvisorError

    try:
        est = estimate_memory(Workload(task="inference", model=name, lang=lang))
    except (AdvisorError, ValueError):
        return None
    return est.profile.display, float(est.device_total_gib)


def _draft_gib(parsed: ParsedQuestion) -> tuple[str, float] | None:
    """The named draft model's (display name, device total GiB) when the question is about speculative decoding."""
    if (not parsed.other_models or not load_lexicon().keywords["speculative"].search(parsed.text)
            or parsed.workload_fields.get("task") != "inference"):
        return None
    return _other_total(parsed.other_models[0][2], parsed.lang)


def _draft_fits(rec: Any, gib: float) -> bool:
    inst = getattr(rec, "instance", None)
    if inst is None or not inst.gpu_memory_gib:
        return True   # nothing to place it on: the line below says nothing either
    return float(inst.planned_mem_gib) + gib / max(1, int(inst.total_gpus)) <= float(inst.gpu_memory_gib) * HEADROOM


def draft_plan(parsed: ParsedQuestion, fields: dict, rec: Any, plan_on: Any) -> Any:
    """The plan with the draft in it: when the target's plan leaves no room for the draft on its GPUs and the user
    stated no GPU count, the next tensor-parallel size (2, 4, 8) whose plan holds both is the plan (the draft is split
    over the same GPUs), rather than a plan the line below would then call too small."""
    draft = _draft_gib(parsed)
    if draft is None or "num_gpus" in parsed.stated() or _draft_fits(rec, draft[1]):
        return rec
    have = int(getattr(rec.instance, "total_gpus", 1) or 1)
    for n in (2, 4, 8):
        if n <= have:
            continue
        try:
            wider = plan_on({**fields, "num_gpus": n})
        except Exception:   # noqa: BLE001 - a count the catalog cannot lay out: the next one, else the plan as it was
            continue
        if getattr(wider, "instance", None) is not None and _draft_fits(wider, draft[1]):
            return wider
    return rec


def draft_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """Speculative decoding with a named draft model ("Llama 3.1 70B with a Llama 3.2 1B draft"): the engine loads the
    draft beside the target on the replica's GPUs (vLLM --speculative-config; the draft is split over the same
    tensor-parallel GPUs), so its device total, spread over them, adds to each GPU's share."""
    if (not parsed.other_models or not load_lexicon().keywords["speculative"].search(parsed.text)
            or parsed.workload_fields.get("task") != "inference"):
        return None
    inst = getattr(rec, "instance", None)
    other = _other_total(parsed.other_models[0][2], parsed.lang)
    if inst is None or not inst.gpu_memory_gib or other is None:
        return None
    name, gib = other
    n = max(1, int(inst.total_gpus))
    card, first = float(inst.gpu_memory_gib), float(inst.planned_mem_gib)
    per = gib / n
    fits = first + per <= card * HEADROOM
    verdict_en = "still fits" if fits else "no longer fits: plan one more GPU or a smaller draft"
    verdict_zh = "仍放得下" if fits else "放不下：需多一张卡或更小的草稿模型"
    yes_en, yes_zh = (("Yes, with the draft. ", "可以（含草稿模型）。") if fits else ("No, with the draft. ", "不行（含草稿模型）。")) \
        if parsed.yes_no else ("", "")
    return Text(
        en=f"{yes_en}Speculative decoding: the draft {name} (~{gib:.1f} GiB at its defaults) is loaded by the same engine "
           f"(vLLM --speculative-config) over the {n} GPU{'s' if n > 1 else ''}, about {per:.1f} GiB more each: "
           f"{first + per:.1f} GiB of {card:g} GB per {inst.gpu_display}, which {verdict_en}.",
        zh=f"{yes_zh}投机解码：草稿模型 {name}（按其默认约 {gib:.1f} GiB）由同一引擎加载（vLLM --speculative-config），分到 {n} 张卡上"
           f"每卡约多 {per:.1f} GiB：每张 {inst.gpu_display} 约 {first + per:.1f} GiB / {card:g} GB，{verdict_zh}。")


def colocated_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """The line that sets the further models beside the plan's card, or None when the question names none."""
    if (not parsed.other_models or not load_lexicon().keywords["colocate"].search(parsed.text)
            or load_lexicon().keywords["speculative"].search(parsed.text)
            or parsed.workload_fields.get("task") != "inference"):
        return None
    inst = getattr(rec, "instance", None)
    if inst is None or not inst.gpu_memory_gib:
        return None
    card_gib = float(inst.gpu_memory_gib)   # compared as the planner does (_fits)
    first = float(inst.planned_mem_gib)
    room = card_gib * HEADROOM - first
    others = [o for o in (_other_total(name, parsed.lang) for _, _, name in parsed.other_models) if o is not None]
    if not others:
        return None
    need = sum(g for _, g in others)
    names = ", ".join(f"{d} (~{g:.1f} GiB)" for d, g in others)
    names_zh = "、".join(f"{d}（约 {g:.1f} GiB）" for d, g in others)
    share = max(0.05, min(0.9, round(first / card_gib + 0.02, 2)))
    yes = parsed.yes_no
    if need <= room:
        return Text(
            en=f"{'Yes. ' if yes else ''}Both on one GPU: {inst.gpu_display} holds {first:.1f} GiB for the sized model plus {names}, "
               f"{first + need:.1f} GiB of {card_gib:.1f} GiB; start the first engine with --gpu-memory-utilization "
               f"{share:g} (vLLM reserves 0.9 of the card by default) so the second one fits.",
            zh=f"{'可以。' if yes else ''}两个模型可放在同一张卡上：{inst.gpu_display} 上所估模型约 {first:.1f} GiB，另加 {names_zh}，合计约 "
               f"{first + need:.1f} GiB / {card_gib:.1f} GiB；第一个引擎需以 --gpu-memory-utilization {share:g} 启动"
               "（vLLM 默认占用整卡的 0.9），第二个模型才放得下。")
    return Text(
        en=f"{'No. ' if yes else ''}Not on the same GPU: {inst.gpu_display} has about {max(0.0, room):.1f} GiB left beside the sized model "
           f"({first:.1f} GiB), and {names} needs {need:.1f} GiB; give it a GPU of its own (an instance with one GPU "
           "more, one engine per GPU).",
        zh=f"{'不行。' if yes else ''}同一张卡放不下：{inst.gpu_display} 在所估模型（约 {first:.1f} GiB）之外约剩 {max(0.0, room):.1f} GiB，而 "
           f"{names_zh}需要约 {need:.1f} GiB；请给它单独一张卡（多一张 GPU 的实例，每张卡一个引擎）。")


def concurrency_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """A question that asks how many concurrent sequences a deployment serves ("能开多少并发"): the KV room of the
    recommended GPUs, vLLM's gpu_memory_utilization (0.9) of each card less the weights, activations and CUDA context
    (the plan's estimate per GPU), over the KV bytes of one sequence of the stated context, first."""
    from gpu_advisor.memory.core import CUDA_CONTEXT_GIB, GIB
    from gpu_advisor.memory.serving import DEFAULT_UTILIZATION

    if not load_lexicon().keywords["concurrency_question"].search(parsed.text):
        return None
    inst, mem = getattr(rec, "instance", None), getattr(rec, "planned_memory", None)
    if inst is None or mem is None or not inst.gpu_memory_gib or not mem.profile.kv_cache_bytes_per_token:
        return None
    seq = int(getattr(mem.profile.job, "seq_len", 0) or parsed.workload_fields.get("seq_len") or 0)
    if seq <= 0:
        return None
    b = mem.breakdown
    room = (DEFAULT_UTILIZATION * float(inst.gpu_memory_gib) - b.get("weights", 0.0) - b.get("activations", 0.0)
            - b.get("cuda_context", CUDA_CONTEXT_GIB)) * int(inst.total_gpus)
    seqs = int(room * GIB // (mem.profile.kv_cache_bytes_per_token * seq)) if room > 0 else 0
    if seqs < 1:
        return None
    gpus_en = f"{inst.total_gpus} × {inst.gpu_display}"
    gpus_zh = f"{inst.total_gpus} 张 {inst.gpu_display}"
    return Text(
        en=f"About {seqs} concurrent {seq}-token sequences on {gpus_en}: with vLLM's gpu_memory_utilization 0.9 about "
           f"{room:.1f} GiB is left for the KV cache beside the weights ({2 * seqs} with an FP8 KV cache; shorter "
           "requests fit more). Throughput, not memory, then sets the speed each user sees.",
        zh=f"约 {seqs} 路 {seq} token 的并发：{gpus_zh} 按 vLLM 默认 gpu_memory_utilization 0.9，权重之外约剩 {room:.1f} GiB "
           f"给 KV cache（FP8 KV cache 约 {2 * seqs} 路；请求更短则更多）；再往上受吞吐限制，每个用户的速度会下降。")


__all__ = ["colocated_line", "concurrency_line", "draft_line"]
