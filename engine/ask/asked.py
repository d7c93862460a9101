"""The answer to a question that asks for a time or a cost ("大概要多久？", "how long will it take", "要花多少钱？",
"how much will it cost"): the leading option's wall-clock time or job total first, decision-first, instead of only an
instance table with the figure further down. Yes / no questions keep their verdict (ask/verdict.py): this line is
for the open "how long / how much" questions. The patterns are the lexicon's (`time_question`, `cost_question`)."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.verdict import _job_size_defaults, _money, _off_catalog_gpu, _owned_verdict, _range, owned_card
from gpu_advisor.util.i18n import Text


def _asks(parsed: ParsedQuestion, key: str) -> bool:
    from gpu_advisor.ask.lexicon import load_lexicon

    pattern = load_lexicon().keywords.get(key)
    return pattern is not None and pattern.search(parsed.text) is not None


def _num(h: float) -> str:
    return f"{h:,.0f}" if h >= 100 else f"{h:.3g}"


def _hours(h: float) -> str:
    return f"{h * 60:.0f} min" if h < 1 else f"{_num(h)} h"


def _hours_span(low: float, high: float) -> str:
    if abs(high - low) < 1e-9:
        return _hours(low)
    return f"{_num(low)}–{_num(high)} h" if low >= 1 else f"{_hours(low)}–{_hours(high)}"


def _days(h: float, long_job: bool = False) -> tuple[str, str]:
    """A long time also in days (or years): 8,566 h is easier read as about a year; ``long_job``: the range's other end
    is two days or more, so this end is said in days too."""
    if h < 48 and not long_job:
        return "", ""
    d = h / 24
    if d >= 365:
        return f"{d / 365:.1f} years", f"{d / 365:.1f} 年"
    return (f"{d:,.0f} days", f"{d:,.0f} 天") if d >= 10 else (f"{d:.1f} days", f"{d:.1f} 天")


def asked_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """The first line for a "how long" / "how much" question, or None (not asked, no option, or no figure: then the
    answer says why where it always does, in its cost section)."""
    wants_time, wants_cost = _asks(parsed, "time_question"), _asks(parsed, "cost_question")
    inst, cost = rec.instance, getattr(rec, "cost", None)
    if not (wants_time or wants_cost) or inst is None or cost is None:
        return None
    opt = cost.option(inst.instance_type)
    if opt is None:
        return None
    what_en = f"{inst.instance_type} ({inst.total_gpus} × {inst.gpu_display})"
    what_zh = f"{inst.instance_type}（{inst.total_gpus} 张 {inst.gpu_display}）"
    en, zh = [], []
    front: Text | None = None   # the leading option's figure at another region's price, said first
    wall = opt.time.wall_hours if opt.time is not None else None
    if wall is not None:
        d_en, d_zh = _days(wall.low, wall.high >= 48)
        d_hi_en, d_hi_zh = _days(wall.high)
        days_en = f" ({d_en}–{d_hi_en})" if d_en and d_hi_en else ""
        days_zh = f"（{d_zh}–{d_hi_zh}）" if d_zh and d_hi_zh else ""
        en.append(f"about {_hours_span(wall.low, wall.high)} wall-clock{days_en}, {_hours(wall.mid)} at the "
                  "mid estimate")
        zh.append(f"耗时约 {_hours_span(wall.low, wall.high)}{days_zh}，中间估计 {_hours(wall.mid)}")
    elif wants_time:
        en.append("no time estimate (the catalog has no throughput figure for this GPU at this precision, or the job "
                  "size is unknown: see Time and cost)")
        zh.append("无法估算耗时（目录中没有该 GPU 在此精度下的算力数据，或作业规模未知：见时间与费用）")
    if wants_cost or (wants_time and wall is not None):
        payg = opt.purchase("payg")
        cur = opt.currency or inst.currency or "CNY"
        span = _range(payg.total, _money) if payg is not None and payg.total is not None else None
        if span is not None and cost.basis == "month":   # serving: a month of the instance running 24 x 7
            en.append(f"pay-as-you-go about {span} {cur} a month (24×7)")
            zh.append(f"按量付费每月（24×7）约 {span} {cur}")
        elif span is not None:
            en.append(f"pay-as-you-go total about {span} {cur}")
            zh.append(f"按量付费整个作业约 {span} {cur}")
        elif wants_cost:
            hourly = opt.hourly_total
            if hourly is not None:
                en.append(f"{hourly:,.2f} {cur}/h (no job total: no time estimate)")
                zh.append(f"每小时 {hourly:,.2f} {cur}（没有时间估算，无法给出总价）")
            else:
                front = _elsewhere_figure(opt, cost)
                if front is None:
                    en.append("no list price for it in this region in the catalog")
                    zh.append("目录中没有它在该地域的价格")
                priced = _priced_alternative(cost, opt)
                if priced is not None:
                    en.append(priced.en)
                    zh.append(priced.zh)
    if not en and front is None:
        return None
    sized = _job_size_defaults(rec)
    tail_en = f" (assumed, not stated: {', '.join(s[0] for s in sized)})" if sized else ""
    tail_zh = f"（未说明，按假设：{'、'.join(s[1] for s in sized)}）" if sized else ""
    if front is not None:   # the figure before the first clause end: a shortened brief keeps it
        rest_en, rest_zh = (f": on {what_en}, {'; '.join(en)}", f"：按 {what_zh}，{'；'.join(zh)}") if en else ("", "")
        cloud = Text(en=f"{front.en}{rest_en}{tail_en}.", zh=f"{front.zh}{rest_zh}{tail_zh}。")
    else:
        cloud = Text(en=f"On {what_en}: {'; '.join(en)}{tail_en}.", zh=f"按 {what_zh}：{'；'.join(zh)}{tail_zh}。")
    # "我想用两张4090微调…多久": the fit and the time on the user's own cards first, then the figure above labelled as the
    # cloud option; a card knowledge/owned_gpus.yaml lacks: the figure is the cloud's, never presented as the card's
    own = _off_catalog_gpu(parsed)
    on_card = _owned_verdict(parsed, rec, cloud, cloud_last=True) if owned_card(parsed) is not None else None
    if on_card is not None:
        return on_card
    if own is None:
        return cloud
    return Text(en=f"{own} is not an Alibaba Cloud GPU, so its time is not estimated here. {cloud.en}",
                zh=f"{own} 不是阿里云的 GPU，此处不估算它的耗时。{cloud.zh}")


def memory_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any, plan_on: Any) -> Text | None:
    """The first line for a "how much memory" question: the memory as configured (weights and KV cache named), and the
    plan's per-GPU figure when the job is split; a minimum asked for a 16-bit serving job also gets its INT8 and INT4
    figures (each a plan of its own), since the weight format is what makes the minimum."""
    mem, inst = rec.memory, rec.instance
    if not _asks(parsed, "memory_question") or mem is None:
        return None
    parts = mem.breakdown
    largest = sorted((k for k in parts if parts[k] >= 0.05), key=lambda k: -parts[k])[:3]
    what_en = ", ".join(f"{COMPONENTS.get(k, (k, k))[0]} {parts[k]:.1f} GiB" for k in largest)
    what_zh = "、".join(f"{COMPONENTS.get(k, (k, k))[1]} {parts[k]:.1f} GiB" for k in largest)
    gpus = int(rec.workload.get("num_gpus") or 1)
    on_en = f" on each of {gpus} GPUs" if gpus > 1 else ""
    on_zh = f"（每卡，共 {gpus} 卡）" if gpus > 1 else ""
    fmt = _weight_format(rec.workload)
    fmt_en = f", {fmt} weights" if fmt else ""
    fmt_zh = f"，{fmt} 权重" if fmt else ""
    en = [f"about {mem.device_total_gib:.1f} GiB of GPU memory as configured{on_en} ({what_en}{fmt_en})"]
    zh = [f"按所述配置约需 {mem.device_total_gib:.1f} GiB 显存{on_zh}（{what_zh}{fmt_zh}）"]
    planned = rec.planned_memory
    if inst is not None and planned is not None and (inst.total_gpus != gpus or abs(planned.device_total_gib - mem.device_total_gib) > 0.5):
        en.append(f"the plan uses {inst.total_gpus} × {inst.gpu_display} at about {planned.device_total_gib:.1f} GiB each")
        zh.append(f"方案用 {inst.total_gpus} 张 {inst.gpu_display}，每卡约 {planned.device_total_gib:.1f} GiB")
    stated_fmt = ({"quantization", "precision"} & parsed.stated()) and fmt not in (None, "BF16", "FP16", "FP32")
    if stated_fmt and str(fields.get("task")) == "inference":
        # "405B 推理需要多少显存？FP8 呢？": the stated format's figure leads, the 16-bit one beside it for comparison
        base = {k: v for k, v in fields.items() if k not in ("quantization", "precision")}
        try:
            other = plan_on({**base, "precision": "bf16", "lang": rec.lang}).memory
        except Exception:   # noqa: BLE001 - no 16-bit plan to compare with: the stated format's figure stands alone
            other = None
        if other is not None:
            en.append(f"with 16-bit (BF16) weights about {other.device_total_gib:.1f} GiB")
            zh.append(f"16 位（BF16）权重约 {other.device_total_gib:.1f} GiB")
    if (_asks(parsed, "minimum_cue") and fields.get("quantization") is None and str(fields.get("task")) == "inference"
            and parts.get("kv_cache") is not None):
        for fmt in ("int8", "int4"):
            try:
                other = plan_on({**fields, "quantization": fmt, "lang": rec.lang}).memory
            except Exception:   # noqa: BLE001 - a format the model cannot take is left out, never guessed
                continue
            en.append(f"with {fmt.upper()} weights about {other.device_total_gib:.1f} GiB")
            zh.append(f"{fmt.upper()} 权重约 {other.device_total_gib:.1f} GiB")
        en[-1] += " (evaluate accuracy before serving quantized weights)"
        zh[-1] += "（上线量化权重前请评测精度）"
    host = getattr(rec, "host", None)
    if _asks(parsed, "host_ram_question") and host is not None and inst is not None \
            and str(fields.get("task")) != "inference":
        # "需要多大显存和内存": the machine's RAM too (memory/host.py: OS, data workers, pinned memory, offload); not for
        # serving, whose weight loading (safetensors mmap, page cache up to the checkpoint's size) host.py does not model
        en.append(f"host RAM about {host.ram_gib:.1f} GiB and {host.vcpu} vCPU per machine ({inst.instance_type} has "
                  f"{inst.memory_gib:g} GiB and {inst.vcpu} vCPU)")
        zh.append(f"主机内存每台约 {host.ram_gib:.1f} GiB、{host.vcpu} 个 vCPU（{inst.instance_type} 有 {inst.memory_gib:g} GiB、"
                  f"{inst.vcpu} 个 vCPU）")
    return Text(en=f"Memory: {'; '.join(en)}.", zh=f"显存：{'；'.join(zh)}。")


def _weight_format(workload: dict[str, Any]) -> str | None:
    """The weights' format the estimate used, as people write it (INT4, FP8, BF16), from the workload it sized."""
    quant = str(workload.get("quantization") or "none").lower()
    if quant not in ("none", ""):
        return quant.upper()
    prec = str(workload.get("precision") or "").lower()
    if not prec:
        return None
    return {"bf16_amp": "BF16", "fp16_amp": "FP16"}.get(prec, prec.upper())


def count_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """The first line for a "how many machines / GPUs" question that is not a yes / no one: the leading option's
    instances and GPUs, and the memory each GPU needs."""
    inst = rec.instance
    if not _asks(parsed, "count_question") or parsed.yes_no or inst is None:
        return None
    from gpu_advisor.plan.scaleout import DEADLINE_PLAN_EN

    if any(t.en.startswith(DEADLINE_PLAN_EN) for t in rec.lead):
        return None   # the plan scaled out for the deadline says the count (GPUs, machines) and why: said once
    per = inst.planned_mem_gib
    copies = int(getattr(inst, "replicas", 1) or 1)
    if copies > 1:   # serving replicas: every copy is its own instance(s) behind a load balancer
        machines, gpus = copies * inst.nodes, copies * inst.total_gpus
        return Text(en=f"{machines} machines of {inst.instance_type} ({copies} replicas of {inst.total_gpus} × "
                       f"{inst.gpu_display}, {gpus} GPUs in all), about {per:.1f} GiB per GPU.",
                    zh=f"需要 {machines} 台 {inst.instance_type}（{copies} 个副本，每个 {inst.total_gpus} 张 "
                       f"{inst.gpu_display}，共 {gpus} 张），每卡约 {per:.1f} GiB。")
    if inst.nodes > 1:
        return Text(en=f"{inst.nodes} machines of {inst.instance_type} ({inst.gpus_per_node} GPUs each, {inst.total_gpus} × "
                       f"{inst.gpu_display} in all), about {per:.1f} GiB per GPU.",
                    zh=f"需要 {inst.nodes} 台 {inst.instance_type}（每台 {inst.gpus_per_node} 张，共 {inst.total_gpus} 张 "
                       f"{inst.gpu_display}），每卡约 {per:.1f} GiB。")
    return Text(en=f"One machine: {inst.total_gpus} × {inst.gpu_display} ({inst.instance_type}), about {per:.1f} GiB per GPU.",
                zh=f"需要 1 台：{inst.total_gpus} 张 {inst.gpu_display}（{inst.instance_type}），每卡约 {per:.1f} GiB。")


# the memory estimate's components (memory/estimate.py breakdown keys) as the answer names them
COMPONENTS = {"weights": ("weights", "权重"), "gradients": ("gradients", "梯度"), "optimizer": ("optimizer states", "优化器状态"),
              "master_weights": ("fp32 master weights", "fp32 主权重"), "activations": ("activations", "激活值"),
              "transient": ("transient buffers", "临时缓冲"), "framework_extras": ("framework extras", "框架开销"),
              "kv_cache": ("KV cache", "KV cache"), "cuda_context": ("CUDA context", "CUDA 上下文"),
              "allocator_slack": ("allocator slack", "分配器余量")}



WINDOW_H = 168.0   # one week: the window a training job longer than it is also planned for (said as an example)


def _mid_and_total(rec: Any) -> tuple[float | None, str | None, str | None]:
    """The leading option's mid wall-clock hours, its pay-as-you-go job total (a range) and currency."""
    inst, cost = rec.instance, getattr(rec, "cost", None)
    opt = cost.option(inst.instance_type) if inst is not None and cost is not None else None
    wall = opt.time.wall_hours if opt is not None and opt.time is not None else None
    if wall is None:
        return None, None, None
    payg = opt.purchase("payg")
    span = _range(payg.total, _money) if payg is not None and payg.total is not None else None
    return wall.mid, span, opt.currency or inst.currency or "CNY"


def window_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any, plan_on: Any) -> Text | None:
    """A training job whose leading (cheapest) plan takes more than a week, with no GPU count, machine count or
    deadline stated: the same job planned to finish within a week (scale_for_deadline adds GPUs, then machines), so
    "多少卡多少天" gets the wider configuration beside the cheapest one. The week is an example window, said so."""
    stated = parsed.stated()
    if {"num_gpus", "num_nodes", "deadline_hours"} & stated or str(fields.get("task")) in ("inference", "preprocessing"):
        return None
    cost = getattr(rec, "cost", None)
    mid, _, _ = _mid_and_total(rec)
    if cost is None or cost.basis != "job" or mid is None or mid <= WINDOW_H:
        return None
    other = plan_on({**fields, "deadline_hours": WINDOW_H})
    o_mid, o_span, cur = _mid_and_total(other)
    inst = other.instance
    if inst is None or o_mid is None or o_mid > WINDOW_H or inst.instance_type == rec.instance.instance_type \
            and inst.total_gpus == rec.instance.total_gpus:
        return None
    nodes_en = f" on {inst.nodes} machines" if inst.nodes > 1 else ""
    nodes_zh = f"（{inst.nodes} 台）" if inst.nodes > 1 else ""
    money_en = f", pay-as-you-go total about {o_span} {cur}" if o_span else ", no list price here"
    money_zh = f"，按量付费整个作业约 {o_span} {cur}" if o_span else "，该地域无目录价"
    d_en, d_zh = _days(mid, True)
    lead = rec.instance
    return Text(
        en=f"To finish within a week instead (an example window, not stated): {inst.total_gpus} × {inst.gpu_display}"
           f"{nodes_en} ({inst.instance_type}), about {_hours(o_mid)} at the mid estimate{money_en}; the cheapest plan, "
           f"{lead.total_gpus} × {lead.gpu_display} ({lead.instance_type}), takes about {d_en}.",
        zh=f"若要一周内完成（示例期限，问题未说明）：{inst.total_gpus} 张 {inst.gpu_display}{nodes_zh}"
           f"（{inst.instance_type}），中间估计约 {_hours(o_mid)}{money_zh}；总价最低的方案 {lead.total_gpus} 张 "
           f"{lead.gpu_display}（{lead.instance_type}）约需 {d_zh}。")


def _total(o: Any, basis: str) -> tuple[str, str] | None:
    payg = o.purchase("payg")
    if payg is None or payg.total is None:
        return None
    cur = o.currency or "CNY"
    span = f"{_range(payg.total, _money)} {cur}"
    return (f"about {span} a month (24×7)", f"每月（24×7）约 {span}") if basis == "month" else \
        (f"pay-as-you-go total about {span}", f"按量付费整个作业约 {span}")


def _priced_alternative(cost: Any, lead: Any) -> Text | None:
    """A cost question whose leading option has no price here: the cheapest priced option that meets every stated
    limit, else the priced option with the shortest time, with its time and total (and the limit it misses)."""
    priced = [o for o in cost.options if o.instance_type != lead.instance_type and _total(o, cost.basis) is not None]
    if not priced:
        return None
    meets = [o for o in priced if not o.violations]
    if meets:
        o = min(meets, key=lambda x: x.purchase("payg").total.mid)
        head_en, head_zh, miss_en, miss_zh = "the cheapest priced option that meets it", "满足要求且有价格的最便宜方案", "", ""
    else:
        timed = [x for x in priced if x.time is not None and x.time.wall_hours is not None]
        o = min(timed or priced, key=lambda x: x.time.wall_hours.mid if x.time and x.time.wall_hours else float("inf"))
        head_en, head_zh = "the priced option closest to it", "有价格的方案中最接近要求的"
        miss_en = f", but {'; '.join(v.en for v in o.violations)}"
        miss_zh = f"，但{'；'.join(v.zh for v in o.violations)}"
    total_en, total_zh = _total(o, cost.basis) or ("", "")
    wall = o.time.wall_hours if o.time is not None else None
    t_en = f"about {_hours_span(wall.low, wall.high)}, " if wall is not None else ""
    t_zh = f"耗时约 {_hours_span(wall.low, wall.high)}，" if wall is not None else ""
    what_en = f"{o.instance_type}{f' × {o.nodes}' if o.nodes > 1 else ''} ({o.total_gpus} × {o.gpu_display})"
    what_zh = f"{o.instance_type}{f' × {o.nodes}' if o.nodes > 1 else ''}（{o.total_gpus} 张 {o.gpu_display}）"
    return Text(en=f"{head_en} in {cost.region} is {what_en}: {t_en}{total_en}{miss_en}",
                zh=f"{cost.region} {head_zh}是 {what_zh}：{t_zh}{total_zh}{miss_zh}")


def _elsewhere_figure(opt: Any, cost: Any) -> Text | None:
    """The leading option's list price in the nearest priced region of the same area (costing/elsewhere.py), else the
    cheapest option of the report listed there, as a job (or month) figure labelled as that region's: for reference,
    never this region's price."""
    from gpu_advisor.costing.elsewhere import nearby_regions
    from gpu_advisor.kb.catalog_loader import load_catalog

    catalog = load_catalog()
    for other in nearby_regions(catalog, cost.region):
        if (p := catalog.price(opt.instance_type, other)) is not None:
            return _labelled(opt, p, other, cost, named=False)
        listed = [(o, q) for o in cost.options if (q := catalog.price(o.instance_type, other)) is not None]
        if listed:
            o, q = min(listed, key=lambda oq: oq[1].price_per_hour * oq[0].nodes)
            return _labelled(o, q, other, cost, named=True)
    return None


def _labelled(o: Any, p: Any, other: str, cost: Any, named: bool) -> Text:
    from gpu_advisor.costing.basis import HOURS_PER_MONTH

    hourly = p.price_per_hour * o.nodes
    wall = o.time.wall_hours if o.time is not None else None
    if cost.basis == "month":
        fig_en = f"About {_money(hourly * HOURS_PER_MONTH)} {p.currency} a month (24×7)"
        fig_zh = f"每月（24×7）约 {_money(hourly * HOURS_PER_MONTH)} {p.currency}"
    elif wall is not None:
        fig_en = f"About {_money(hourly * wall.low)}–{_money(hourly * wall.high)} {p.currency} for the job"
        fig_zh = f"整个作业约 {_money(hourly * wall.low)}–{_money(hourly * wall.high)} {p.currency}"
    else:
        fig_en, fig_zh = f"{hourly:,.2f} {p.currency}/h", f"每小时 {hourly:,.2f} {p.currency}"
    nodes = f" × {o.nodes}" if o.nodes > 1 else ""
    on_en = f" on {o.instance_type}{nodes} ({o.total_gpus} × {o.gpu_display})" if named else ""
    on_zh = f"，{o.instance_type}{nodes}（{o.total_gpus} 张 {o.gpu_display}）" if named else ""
    return Text(en=f"{fig_en}{on_en} at {other}'s list price ({p.price_per_hour:,.2f} {p.currency}/h an instance, "
                   f"{p.as_of}, another region's price for reference only, none listed in {cost.region})",
                zh=f"{fig_zh}（按 {other} 目录价每台 {p.price_per_hour:,.2f} {p.currency}/h{on_zh}，{p.as_of}，其他地域价格，"
                   f"仅供参考，{cost.region} 无目录价）")


__all__ = ["asked_line", "count_line", "memory_line", "window_line"]
