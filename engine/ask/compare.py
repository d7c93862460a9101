"""A question that compares GPUs ("A10 和 L20 哪个部署 Qwen2.5-14B 更划算？", "T4 or A10?"): the job is planned on each
GPU named, and the answer says first what each one needs and costs, then which is cheaper among those that hold the job
as asked. Nothing is sized here: every figure is the advisor's plan with that GPU as the preference."""

from __future__ import annotations

import re
from typing import Any, Callable

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util.i18n import Text

HOURS_PER_MONTH = 730     # costing/basis.py: 8760 h / 12


def _monthly(rec: Any) -> tuple[float, str] | None:
    o = rec.cost.option(rec.instance.instance_type) if rec.cost is not None else None
    hourly = o.hourly_total if o is not None and o.hourly_total is not None else None
    if hourly is None and rec.instance.price_per_hour is not None:
        hourly = rec.instance.price_per_hour * rec.instance.nodes
    return None if hourly is None else (hourly * HOURS_PER_MONTH, rec.instance.currency or "CNY")


def _job_total(rec: Any) -> tuple[float, float | None, str] | None:
    """(pay-as-you-go total for the whole job, mid wall-clock hours, currency) of a training plan, or None (serving,
    or no price / no time): a training job is compared by what the run costs, not by a month of the instance."""
    cost = getattr(rec, "cost", None)
    if cost is None or cost.basis != "job":
        return None
    o = cost.option(rec.instance.instance_type)
    if o is None or o.payg_mid is None:
        return None
    hours = o.time.wall_hours.mid if o.time.wall_hours is not None else None
    return o.payg_mid, hours, o.currency or rec.instance.currency or "CNY"


def _price_text(rec: Any) -> tuple[str, str, float | None]:
    """What one plan costs in the comparison (en, zh, the figure compared): the job total for training (with its time),
    else a month of pay-as-you-go."""
    job = _job_total(rec)
    if job is not None:
        total, hours, cur = job
        when_en = f" in about {hours:,.1f} h" if hours is not None else ""
        when_zh = f"，约 {hours:,.1f} 小时" if hours is not None else ""
        return (f"about {total:,.0f} {cur} for the whole job pay-as-you-go{when_en}",
                f"整个作业按量付费约 {total:,.0f} {cur}{when_zh}", total)
    if getattr(getattr(rec, "cost", None), "basis", None) == "job":
        return "no job total (no price or no time in the catalog for this region)", "无法算出作业总价（该地域缺少价格或时间）", None
    month = _monthly(rec)
    if month is None:
        return "no list price in the catalog for this region", "目录中没有该地域的价格", None
    return (f"{month[0]:,.0f} {month[1]} a month pay-as-you-go", f"按量付费每月约 {month[0]:,.0f} {month[1]}", month[0])


def _row(gpu: str, rec: Any) -> tuple[Text, float | None, bool]:
    """(what the plan on this GPU is, its monthly price when it holds the job as asked, whether it holds it)."""
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.preference import resolve_gpu_preference

    inst = getattr(rec, "instance", None)
    if inst is None or inst.gpu_id not in resolve_gpu_preference(load_catalog(), gpu):
        return Text(en=f"{gpu}: does not hold the job", zh=f"{gpu}：放不下此作业"), None, False
    changed = [m for m in inst.mitigations if m.en in ("INT8 weights",)]
    extra_en = f", only with {', '.join(m.en for m in changed)}" if changed else ""
    extra_zh = f"，且必须用{'、'.join(m.zh for m in changed)}" if changed else ""
    price_en, price_zh, figure = _price_text(rec)
    return (Text(en=f"{gpu}: {inst.total_gpus} × {inst.gpu_display} ({inst.instance_type}), about {inst.planned_mem_gib:.1f} "
                    f"GiB per GPU{extra_en}, {price_en}",
                 zh=f"{gpu}：{inst.total_gpus} 张 {inst.gpu_display}（{inst.instance_type}），每卡约 {inst.planned_mem_gib:.1f} "
                    f"GiB{extra_zh}，{price_zh}"),
            figure if figure is not None and not changed else None, not changed)


def _family_labels(parsed: ParsedQuestion) -> dict[str, str]:
    from gpu_advisor.ask.families import mentioned_gpu

    out: dict[str, str] = {}
    for h in parsed.hints:
        if h.kind == "instance_family" and (gpu := mentioned_gpu(h.matched)):
            out.setdefault(gpu, f"{h.matched} ({gpu})")
    return out


def off_catalog_compared(parsed: ParsedQuestion) -> list[str]:
    """GPUs the question weighs (lexicon keywords.gpu_comparison) that the catalog does not list by that name ("H800 和
    A100 哪个更适合": H800), in the order written; a GPU said with a negation before it ("不要 H800") is not compared."""
    from gpu_advisor.ask.lexicon import load_lexicon
    from gpu_advisor.ask.verdict import owned_cue_before
    from gpu_advisor.ask.on_card import sold_by_catalog

    lex = load_lexicon()
    cue = lex.keywords.get("gpu_comparison")
    if cue is None or not cue.search(parsed.text):
        return []
    out: list[str] = []
    for m in lex.gpus.finditer(parsed.text):
        name = m.group("gpu").upper().replace(" ", "")
        if name in out or NEGATED.search(parsed.text[max(0, m.start() - 8):m.start()]):
            continue
        if owned_cue_before(parsed.text.lower(), m.start()):
            continue   # "我们有 4 张 4090，还是租 A10": the user's own card, sized by the verdict (ask/verdict.owned_card)
        if not sold_by_catalog(name):
            out.append(name)
    return out


def _off_catalog_text(off: list[str], first: Any, rec: Any) -> Text:
    from gpu_advisor.kb.catalog_loader import load_catalog

    names = ", ".join(off)
    compiled = load_catalog().meta.compiled_on
    when_en, when_zh = (f" (compiled {compiled})", f"（{compiled} 编制）") if compiled else ("", "")
    inst = getattr(rec, "instance", None)
    if inst is not None and first:
        rest_en = f"; the figures below are for {first}: {inst.total_gpus} × {inst.gpu_display} ({inst.instance_type})"
        rest_zh = f"；以下数字只针对 {first}：{inst.total_gpus} 张 {inst.gpu_display}（{inst.instance_type}）"
    else:
        rest_en, rest_zh = "; the plan below uses the catalog's GPUs", "；以下方案用目录中的 GPU"
    return Text(en=f"Not comparable here: {names} is not in the Alibaba Cloud GPU catalog gpu-advisor carries{when_en}, "
                   f"so it is neither sized nor priced{rest_en}.",
                zh=f"无法对比：{'、'.join(off)} 不在 gpu-advisor 收录的阿里云 GPU 目录中{when_zh}，因此不估算也不报价{rest_zh}。")


def compare_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any,
                 plan_on: Callable[[dict[str, Any]], Any]) -> Text | None:
    """The comparison line, or None when the question compares no GPUs. ``plan_on`` answers the fields with another
    GPU as the preference. A compared GPU the catalog lacks is said first as neither sized nor priced."""
    others = [h.matched for h in parsed.hints if h.kind == "gpu_compare"]
    first = fields.get("gpu_preference")
    off = off_catalog_compared(parsed)
    if off and (not others or not first or getattr(rec, "instance", None) is None):
        return _off_catalog_text(off, first, rec)
    if not others or not first or getattr(rec, "instance", None) is None:
        return None
    rows = [_row(str(first), rec)] + [_row(g, plan_on({**fields, "gpu_preference": g})) for g in others]
    names = [str(first), *others]
    labels = _family_labels(parsed)   # "gn7i (A10)": the family the user named, with the GPU it was read as
    if labels:
        rows = [(Text(en=labels.get(n, n) + r.en[len(n):], zh=labels.get(n, n) + r.zh[len(n):]), m, ok)
                for (r, m, ok), n in zip(rows, names)]
        names = [labels.get(n, n) for n in names]
    priced = [(m, n) for (_, m, _), n in zip(rows, names) if m is not None]
    as_asked = [n for (_, _, ok), n in zip(rows, names) if ok]
    training = getattr(getattr(rec, "cost", None), "basis", None) == "job"
    if len(priced) >= 2:
        best = min(priced)[1]
        end_en = f"Cheaper {'for the whole job' if training else 'as asked'}: {best}."
        end_zh = f"{'整个作业更省钱' if training else '按要求部署更省钱'}的是 {best}。"
    elif len(priced) == 1 and len(as_asked) > 1:
        end_en = f"Only {priced[0][1]} has a list price here: compare at the console's price for the other."
        end_zh = f"只有 {priced[0][1]} 在该地域有目录价：另一个请按控制台价格比较。"
    elif as_asked and len(as_asked) < len(names):
        end_en = (f"As asked, only {', '.join(as_asked)} hold{'s' if len(as_asked) == 1 else ''} it; the others need a "
                  "change the question did not ask for" + (f", so {as_asked[0]} it is" if priced else
                                                            "; check the console's price before choosing") + ".")
        end_zh = (f"按要求只有 {'、'.join(as_asked)} 放得下；其他的都要做问题没有要求的改动"
                  + (f"，因此选 {as_asked[0]}" if priced else "；选择前请在控制台查价") + "。")
    else:
        end_en, end_zh = "", ""
    line = Text(en="Compared: " + "; ".join(r.en for r, _, _ in rows) + ". " + end_en,
                zh="对比：" + "；".join(r.zh for r, _, _ in rows) + "。" + end_zh)
    if off:
        head = _off_catalog_text(off, None, None)
        line = Text(en=head.en.split(";")[0] + ". " + line.en, zh=head.zh.split("；")[0] + "。" + line.zh)
    return line


METHOD_NAMES = {"full": ("full fine-tuning", "全参微调"), "lora": ("LoRA", "LoRA"), "qlora": ("QLoRA", "QLoRA")}
ALTERNATIVE = re.compile(r"还是|或者|或|\bor\b|\bvs\.?|versus|/|和|\band\b|跟|与", re.IGNORECASE)
NEGATED = re.compile(r"(?:不用|不做|不要|不|没有|没|\bno|\bnot|\bwithout)\s*$", re.IGNORECASE)


def _methods_asked(parsed: ParsedQuestion, field: str = "finetune_method") -> list[str]:
    """The fine-tuning methods (or, with ``field="distributed"``, the sharding strategies) a question weighs against
    each other ("全参微调还是LoRA", "full fine-tuning or LoRA?", "ZeRO-2 还是 ZeRO-3"): two different values of the
    lexicon's enum joined by an alternative word, neither negated; else []."""
    from gpu_advisor.ask.lexicon import load_lexicon

    text = parsed.text
    found: list[tuple[int, int, str]] = []
    for entry in load_lexicon().enums[field]:
        for m in entry.pattern.finditer(text):
            if not NEGATED.search(text[max(0, m.start() - 8):m.start()]):
                found.append((m.start(), m.end(), entry.value))
    found.sort()
    for (_, end, a), (start, _, b) in zip(found, found[1:]):
        if a != b and ALTERNATIVE.search(text[end:start]) and len(text[end:start]) <= 12:
            return [a, b]
    return []


# What each strategy shards and moves per step, Rajbhandari et al. 2019 (arXiv:1910.02054) sec. 5 and 7: DDP and
# ZeRO-1 / ZeRO-2 move 2 x params per step (a reduce-scatter and an all-gather, the all-reduce of DDP), ZeRO-3 3 x
# (a parameter all-gather in forward and again in backward); PyTorch FSDP FULL_SHARD is ZeRO-3's layout, SHARD_GRAD_OP
# ZeRO-2's (PyTorch FSDP docs, ShardingStrategy).
STRATEGY_NAMES = {"ddp": ("DDP", "DDP"), "zero1": ("ZeRO-1", "ZeRO-1"), "zero2": ("ZeRO-2", "ZeRO-2"),
                  "zero3": ("ZeRO-3", "ZeRO-3"), "fsdp": ("FSDP (FULL_SHARD)", "FSDP（FULL_SHARD）")}
STRATEGY_TRAFFIC = {"ddp": 2.0, "zero1": 2.0, "zero2": 2.0, "zero3": 3.0, "fsdp": 3.0}


def strategy_compare_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any,
                          plan_on: Callable[[dict[str, Any]], Any]) -> Text | None:
    """"ZeRO-2 还是 ZeRO-3", "ZeRO-3 or FSDP?": the job planned with each strategy named, what each needs per GPU and
    costs, and which to take: the least traffic among those that hold the job on the same GPUs. The parser keeps one
    strategy as the Workload's value; the other is planned here, never dropped."""
    named = _methods_asked(parsed, "distributed")
    if not named or getattr(rec, "instance", None) is None:
        return None
    from gpu_advisor.workload import enum_value

    rows, held = [], []
    for strategy in named:
        other = rec if fields.get("distributed") == strategy else plan_on({**fields, "distributed": strategy})
        inst = getattr(other, "instance", None)
        en_name, zh_name = STRATEGY_NAMES.get(strategy, (strategy, strategy))
        if inst is None:
            rows.append(Text(en=f"{en_name}: no configuration in the catalog holds it", zh=f"{zh_name}：目录中没有放得下的配置"))
            continue
        got = enum_value(other.planned_memory.profile.job.distributed, strategy) if other.planned_memory else strategy
        used_en = "" if got == strategy else f" (it needs {STRATEGY_NAMES.get(got, (got,))[0]} there)"
        used_zh = "" if got == strategy else f"（需改用 {STRATEGY_NAMES.get(got, (got, got))[1]}）"
        price_en, price_zh, _ = _price_text(other)
        rows.append(Text(en=f"{en_name}: {inst.total_gpus} × {inst.gpu_display}, about {inst.planned_mem_gib:.1f} GiB "
                            f"per GPU{used_en}, {price_en}",
                         zh=f"{zh_name}：{inst.total_gpus} 张 {inst.gpu_display}，每卡约 {inst.planned_mem_gib:.1f} GiB"
                            f"{used_zh}，{price_zh}"))
        if got == strategy:
            held.append((STRATEGY_TRAFFIC.get(strategy, 3.0), inst.total_gpus, en_name, zh_name))
    same = {"zero3", "fsdp"} == set(named)
    if same:
        end_en = (" ZeRO-3 and FSDP FULL_SHARD shard the same states (weights, gradients, optimizer) and move the same "
                  "3 x params per step, so memory and time are the same: take the one your trainer uses (DeepSpeed "
                  "config vs PyTorch FSDP / accelerate).")
        end_zh = ("ZeRO-3 与 FSDP FULL_SHARD 分片的状态相同（权重、梯度、优化器），每步通信同为 3 倍参数量，显存与耗时相同："
                  "按你的训练框架选（DeepSpeed 配置或 PyTorch FSDP / accelerate）。")
    elif len(held) == 1 and len(named) > 1:
        end_en = f" Take {held[0][2]}: the only one of them that holds the job as named."
        end_zh = f"选 {held[0][3]}：其中只有它按所述放得下此作业。"
    elif held:
        best = min(held)
        end_en = (f" Take {best[2]}: it holds the job and moves the least per step (DDP / ZeRO-1 / ZeRO-2 2 x params, "
                  "ZeRO-3 3 x: a parameter all-gather in forward and backward; Rajbhandari et al. 2019, arXiv:1910.02054).")
        end_zh = (f"选 {best[3]}：它放得下且每步通信最少（DDP / ZeRO-1 / ZeRO-2 为 2 倍参数量，ZeRO-3 为 3 倍：前向与反向各一次"
                  "参数 all-gather；Rajbhandari et al. 2019，arXiv:1910.02054）。")
    else:
        end_en = end_zh = ""
    return Text(en="Compared: " + "; ".join(r.en for r in rows) + "." + end_en,
                zh="对比：" + "；".join(r.zh for r in rows) + "。" + end_zh)


def method_compare_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any,
                        plan_on: Callable[[dict[str, Any]], Any]) -> Text | None:
    """"全参还是 LoRA?": the job planned with each method named, what each needs and costs first. The parser keeps one
    of the two as the Workload's value; the other is never dropped: it is planned here."""
    methods = _methods_asked(parsed)
    if not methods or getattr(rec, "instance", None) is None:
        return None
    rows, priced = [], []
    for method in methods:
        other = rec if fields.get("finetune_method") == method else plan_on({**fields, "finetune_method": method})
        inst = getattr(other, "instance", None)
        en_name, zh_name = METHOD_NAMES.get(method, (method, method))
        if inst is None:
            rows.append(Text(en=f"{en_name}: no configuration in the catalog holds it",
                             zh=f"{zh_name}：目录中没有放得下的配置"))
            continue
        price_en, price_zh, figure = _price_text(other)
        rows.append(Text(en=f"{en_name}: {inst.total_gpus} × {inst.gpu_display} ({inst.instance_type}), about "
                            f"{inst.planned_mem_gib:.1f} GiB per GPU, {price_en}",
                         zh=f"{zh_name}：{inst.total_gpus} 张 {inst.gpu_display}（{inst.instance_type}），每卡约 "
                            f"{inst.planned_mem_gib:.1f} GiB，{price_zh}"))
        if figure is not None:
            priced.append((figure, en_name, zh_name))
    end_en = end_zh = ""
    if len(priced) == 2:
        best = min(priced)
        end_en, end_zh = f" Cheaper: {best[1]}.", f"更省钱的是 {best[2]}。"
    note_en = (" Which one reaches the quality you need is a question of the task and data, not of the hardware: "
               "gpu-advisor sizes both.")
    note_zh = "哪种能达到所需效果取决于任务与数据，而不是硬件：gpu-advisor 只估算两者的资源。"
    return Text(en="Compared: " + "; ".join(r.en for r in rows) + "." + end_en + note_en,
                zh="对比：" + "；".join(r.zh for r in rows) + "。" + end_zh + note_zh)


def method_default_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any,
                        plan_on: Callable[[dict[str, Any]], Any]) -> Text | None:
    """"V100 还能用来微调 7B 模型吗": a fine-tune with no method said is sized as a full fine-tune (the Workload's
    default), which can need several times the GPUs of the LoRA most such questions mean. When the LoRA plan differs
    (another GPU or count), the default is said first with both plans; otherwise it decides nothing and is not said."""
    if (fields.get("task") != "llm_finetune" or fields.get("finetune_method") is not None or _methods_asked(parsed)
            or getattr(rec, "instance", None) is None or any(a.field == "task" for a in parsed.assumed)):
        return None
    try:
        lora = plan_on({**fields, "finetune_method": "lora"})
    except Exception:   # noqa: BLE001 - no LoRA plan to compare with: the default is still in the assumptions
        return None
    a, b = rec.instance, getattr(lora, "instance", None)
    if b is None or (a.total_gpus, a.gpu_display) == (b.total_gpus, b.gpu_display):
        return None
    pa_en, pa_zh, _ = _price_text(rec)
    pb_en, pb_zh, _ = _price_text(lora)
    return Text(
        en=f"No fine-tuning method said: sized as a full fine-tune ({a.total_gpus} × {a.gpu_display}, about "
           f"{a.planned_mem_gib:.1f} GiB per GPU, {pa_en}); with LoRA it is {b.total_gpus} × {b.gpu_display} "
           f"({b.instance_type}), about {b.planned_mem_gib:.1f} GiB per GPU, {pb_en}. Say 'LoRA', 'QLoRA' or 'full'.",
        zh=f"未说明微调方法：按全参微调估算（{a.total_gpus} 张 {a.gpu_display}，每卡约 {a.planned_mem_gib:.1f} GiB，{pa_zh}）；"
           f"若用 LoRA：{b.total_gpus} 张 {b.gpu_display}（{b.instance_type}），每卡约 {b.planned_mem_gib:.1f} GiB，{pb_zh}。"
           "可写明“LoRA / QLoRA / 全参”。")


__all__ = ["compare_line", "method_compare_line", "method_default_line"]
