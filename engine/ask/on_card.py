"""What the answer says about the time and serving speed on a card the user owns or names that the catalog does not sell
("我想用两张4090微调…多久", "how fast is Qwen2.5-7B on my 4090"): the figures of plan/owned_speed.py for the step that
fits the card (plan/owned.py), with the card's datasheet peak and the bands they rest on, cited."""

from __future__ import annotations

import re
from typing import Any

from gpu_advisor.plan.owned import MAX_GPUS_PER_MACHINE
from gpu_advisor.util.i18n import Text


def _h(h: float) -> str:
    if h < 1:
        return f"{h * 60:.0f} min"
    return f"{h:,.0f} h" if h >= 100 else f"{h:.3g} h"


def _span(low: float, high: float) -> str:
    return f"{_h(low).removesuffix(' h')}–{_h(high)}" if low >= 1 else f"{_h(low)}–{_h(high)}"


def _days(low: float, high: float) -> tuple[str, str]:
    if high < 48:
        return "", ""
    return f" ({low / 24:.1f}–{high / 24:.1f} days)", f"（{low / 24:.1f}–{high / 24:.1f} 天）"


OWNED_CUE_WINDOW = 24   # characters between the end of an ownership cue and the GPU name it is about


def sold_by_catalog(name: str) -> bool:
    """Whether the catalog resolves this GPU name."""
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.preference import resolve_gpu_preference

    try:
        return bool(resolve_gpu_preference(load_catalog(), name.upper().replace(" ", "")))
    except Exception:   # noqa: BLE001 - a name the catalog cannot resolve is no catalog card
        return False


def owned_catalog_gpu(parsed: Any) -> tuple[Any, str] | None:
    """(the catalog GPU, its name as written) when the question says that a GPU the catalog sells is the user's own
    ("我们有8张A100 80G", "服务器是8卡A800", "I have 8x A100"): the lexicon's owned_hardware cue ends at most
    OWNED_CUE_WINDOW characters before the GPU's name, in the same clause, and nothing in the question is about the
    cloud (cloud_context). A name the catalog sells in several memory sizes ("A800": 40 / 80 GB) is read as the largest,
    said in the answer."""
    from gpu_advisor.ask.lexicon import load_lexicon
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.preference import resolve_gpu_preference

    kw = load_lexicon().keywords
    cue, cloud, per_machine = kw.get("owned_hardware"), kw.get("cloud_context"), kw.get("per_machine")
    preference = parsed.workload_fields.get("gpu_preference")
    if cue is None or not preference or (cloud is not None and cloud.search(parsed.text)):
        return None
    text = parsed.text.lower()
    for hint in parsed.hints:
        # the hint's text is the parser's normalised copy ("4 台机器, 每台 8 张 A800"): its last clause is in the question
        seen = re.split(r"[，。；！？：,;!?:]", hint.matched.lower())[-1].strip() if hint.kind == "gpu_preference" else ""
        at = text.find(seen) if seen else -1
        if at < 0:
            continue
        clauses = re.split(r"[，。；！？：,;!?:]", text[:at])
        before = clauses[-1][-OWNED_CUE_WINDOW:]
        # "我们有 4 台机器，每台 8 张 A800": a per-machine clause continues the one before it, whose cue counts
        if per_machine is not None and len(clauses) > 1 and per_machine.search(clauses[-1] + seen):
            before = clauses[-2][-OWNED_CUE_WINDOW:] + "，" + before
        if cue.search(before) is None:
            continue
        named = load_lexicon().gpus.search(seen)
        if named is not None and not sold_by_catalog(named.group("gpu")):
            continue   # "我们有 4 张 4090，还是租 A10": the owned card is not the catalog GPU preferred
        catalog = load_catalog()
        try:
            ids = resolve_gpu_preference(catalog, str(preference))
        except Exception:   # noqa: BLE001 - a preference the catalog cannot resolve is no catalog card
            return None
        gpus = sorted((catalog.gpus[i] for i in ids), key=lambda g: g.memory_gb or 0)
        return (gpus[-1], str(preference)) if gpus and gpus[-1].memory_gb else None
    return None


def _peak(card: Any) -> float | None:
    return card.tflops("bf16") if hasattr(card, "tflops") else card.dense_bf16_tflops


def _nvlink(card: Any) -> bool:
    return bool(getattr(card, "nvlink", None) or card.nvlink_gb_s)


def card_cite(card: Any) -> str:
    """The first address of the card's throughput source (else its source), for the figures said here."""
    sold = hasattr(card, "named_by_alibaba")
    for text in (getattr(card, "throughput_source", None), getattr(card, "tflops_basis", None), card.source):
        found = re.findall(r"(?:https?://)?[\w.-]+\.(?:com|io|org)/[\w./%-]*", text or "")
        if found:
            return found[0]
    return "knowledge/catalog/gpus.yaml" if sold else "knowledge/owned_gpus.yaml"


def _owned_link(fit: Any, card: Any) -> tuple[str, str]:
    """The network between the user's machines as the time counts it: plain TCP at the assumed
    basis.OWNED_NETWORK_GBIT_S, with what the job's own traffic makes of a step (costing/internode.py)."""
    from gpu_advisor.costing.basis import OWNED_NETWORK_GBIT_S
    from gpu_advisor.costing.internode import internode
    from gpu_advisor.plan.owned_speed import on_card

    c = on_card(fit, card, tcp=True)
    v = internode(c) if c is not None else None
    gbit = f"{OWNED_NETWORK_GBIT_S:g}"
    if v is None:
        return (f"TCP between your machines (no RDMA; {gbit} Gbit/s assumed, the question states no network speed)",
                f"机器间 TCP 网络（无 RDMA；问题未说明网速，按 {gbit} Gbit/s 假设）")
    return (f"TCP between your machines (no RDMA; {gbit} Gbit/s assumed, the question states no network speed: "
            f"{v.gb_per_step:.1f} GB through each machine's network per micro-step makes a step "
            f"{v.tcp_slowdown[0]:.2f}-{v.tcp_slowdown[1]:.2f}x its compute; a slower link is slower still)",
            f"机器间 TCP 网络（无 RDMA；问题未说明网速，按 {gbit} Gbit/s 假设：每个微步每台机器收发约 {v.gb_per_step:.1f} GB，"
            f"每步为纯计算的 {v.tcp_slowdown[0]:.2f}–{v.tcp_slowdown[1]:.2f} 倍；网速更低则更慢）")


def time_text(fit: Any, card: Any, sized: list[tuple[str, str]], tcp: bool = False) -> Text | None:
    """"On 2 × RTX 4090 it takes about 35–154 h ..." for a training job that fits the card, or why no time is given;
    tcp: the question says the machines have no RDMA (plan/owned_speed.on_card)."""
    from gpu_advisor.plan.owned_speed import owned_time

    t = owned_time(fit, card, tcp)
    if t is None:
        return None
    n = fit.gpus
    if t.wall_hours is None:
        why = t.missing
        return Text(en=f" On {n} × {card.display_name} the time is not estimated ({why.en if why else 'no figure'}).",
                    zh=f"在 {n} 张 {card.display_name} 上的耗时无法估算（{why.zh if why else '缺少数据'}）。")
    w, u, s = t.wall_hours, t.utilisation, t.scaling
    d_en, d_zh = _days(w.low, w.high)
    link_en = link_zh = "NVLink" if _nvlink(card) else "PCIe"
    if n > MAX_GPUS_PER_MACHINE and tcp:   # said to have no RDMA: TCP at an assumed rate, the job's traffic over it
        link_en, link_zh = _owned_link(fit, card)
    elif n > MAX_GPUS_PER_MACHINE:   # several machines whose network the question does not state: the TCP band
        link_en, link_zh = "a network of unstated speed between machines (no RDMA assumed)", "机器间网络（速率未说明，按无 RDMA）"
    scale_en = f" × {s.low:.0%}–{s.high:.0%} scaling over {link_en}" if n > 1 else ""
    scale_zh = f" × {link_zh}{' ' if link_zh[-1].isascii() else ''}扩展效率 {s.low:.0%}–{s.high:.0%}" if n > 1 else ""
    if any(x.code == "time_shard_traffic" for x in t.notes):
        link = "NVLink" if _nvlink(card) else "PCIe"
        scale_en += f", plus the sharding's parameter traffic over {link} (none to all of it exposed)"
        scale_zh += f"，另加分片的参数通信（经 {link}，从完全重叠到完全不重叠）"
    offload = getattr(fit.variant.workload, "cpu_offload", False)
    off_en = "; CPU offload runs the optimizer step on the CPU, not counted: a lower bound" if offload else ""
    off_zh = "；CPU 卸载使优化器步在 CPU 上执行，未计入：这是下限" if offload else ""
    tail_en = f"; assumed, not stated: {', '.join(x[0] for x in sized)}" if sized else ""
    tail_zh = f"；未说明，按假设：{'、'.join(x[1] for x in sized)}" if sized else ""
    return Text(
        en=f" On {n} × {card.display_name} it takes about {_span(w.low, w.high)} wall-clock{d_en}, {_h(w.mid)} at the mid "
           f"estimate ({t.total_pflop:,.0f} PFLOP at {t.peak_tflops.low:g} TFLOPS dense BF16 per card × "
           f"{u.low:.0%}–{u.high:.0%} utilisation{scale_en}{off_en}; {card_cite(card)}{tail_en}).",
        zh=f"在 {n} 张 {card.display_name} 上的耗时约 {_span(w.low, w.high)}{d_zh}，中间估计 {_h(w.mid)}"
           f"（{t.total_pflop:,.0f} PFLOP，按每卡 BF16 稠密峰值 {t.peak_tflops.low:g} TFLOPS × 利用率 {u.low:.0%}–{u.high:.0%}"
           f"{scale_zh}{off_zh}；{card_cite(card)}{tail_zh}）。")


def speed_text(fit: Any, card: Any) -> Text | None:
    """"On 1 × RTX 4090, about 33–50 output tokens/s per sequence ..." for a serving job that fits the card."""
    from gpu_advisor.costing.decode import DECODE_HBM
    from gpu_advisor.plan.owned_speed import owned_speed

    got = owned_speed(fit, card)
    if got is None:
        lacks = [x for x, v in (("memory bandwidth", card.memory_bandwidth_gb_s),
                                ("dense BF16 peak", _peak(card))) if not v]
        if fit.job is not None and fit.job.workload.task.value == "inference" and fit.variant is not None and lacks:
            zh = "、".join({"memory bandwidth": "显存带宽", "dense BF16 peak": "BF16 稠密峰值"}[x] for x in lacks)
            return Text(en=f" The serving speed on {card.display_name} is not derived (no {' or '.join(lacks)} recorded for it).",
                        zh=f"{card.display_name} 上的速度无法推算（没有记录它的{' ' if zh[0].isascii() else ''}{zh}）。")
        return None
    n, (fast, slow) = got.sequences, got.step
    on_en, on_zh = f"{fit.gpus} × {card.display_name}", f"{fit.gpus} 张 {card.display_name}"
    basis_en = (f"decode reads the weights and KV cache at {DECODE_HBM.low:.0%}–{DECODE_HBM.high:.0%} of "
                f"{card.memory_bandwidth_gb_s:g} GB/s; {card_cite(card)}")
    basis_zh = (f"解码按显存带宽 {card.memory_bandwidth_gb_s:g} GB/s 的 {DECODE_HBM.low:.0%}–{DECODE_HBM.high:.0%} 读取权重与 "
                f"KV cache；{card_cite(card)}")
    agg_en = f", {n / slow:,.0f}–{n / fast:,.0f} tokens/s in all" if n > 1 else ""
    agg_zh = f"，合计 {n / slow:,.0f}–{n / fast:,.0f} token/秒" if n > 1 else ""
    ttft_en = ttft_zh = ""
    if got.speed is not None:
        t0, t1 = got.speed.ttft
        ttft_en = f"; time to first token {t0:.2f}–{t1:.2f} s"
        ttft_zh = f"；首 token 延迟 {t0:.2f}–{t1:.2f} 秒"
    seq = got.context[1] if got.speed is None else got.speed.prompt + got.speed.output
    held_en = (f"; the KV cache left on the cards holds about {got.kv_sequences:,} sequences of {seq:,} tokens at once "
               f"(vLLM gpu_memory_utilization 0.9)")
    held_zh = f"；卡上剩余显存的 KV cache 可同时容纳约 {got.kv_sequences:,} 条 {seq:,} token 的序列（vLLM gpu_memory_utilization 0.9）"
    return Text(
        en=f" On {on_en}, about {1 / slow:.0f}–{1 / fast:.0f} output tokens/s per sequence with {n} sequence"
           f"{'s' if n > 1 else ''} at once{agg_en} (context {got.context[0]:,}–{got.context[1]:,} tokens){ttft_en}"
           f"{held_en} ({basis_en}).",
        zh=f"在 {on_zh} 上同时 {n} 条序列时每条约 {1 / slow:.0f}–{1 / fast:.0f} 个输出 token/秒{agg_zh}"
           f"（上下文 {got.context[0]:,}–{got.context[1]:,} token）{ttft_zh}{held_zh}（{basis_zh}）。")


__all__ = ["card_cite", "speed_text", "time_text"]
