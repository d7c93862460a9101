"""Rendering an answer for `gpu-advisor ask`: terminal text, Markdown for a ticket, JSON for machines,
and the "how N" explanation of one numbered line."""

from __future__ import annotations

import json
from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.questions import load_questions
from gpu_advisor.ask.textui import Style, bars, table
from gpu_advisor.i18n import section_label
from gpu_advisor.numfmt import purchase_total, span

UI = {
    "understood": ("What I understood", "我理解到的"), "assumed": ("Assumed", "假设"),
    "notes": ("Notes", "备注"), "answer": ("Recommendation", "推荐配置"), "alternatives": ("Alternatives", "备选"),
    "memory": ("GPU memory per card", "单卡显存估算"), "warnings": ("Warnings", "注意"),
    "field": ("Field", "字段"), "value": ("Value", "取值"), "from": ("From your words", "原文"),
    "instance": ("Instance type", "实例规格"), "gpu": ("GPU", "GPU"), "vcpu": ("vCPU", "vCPU"),
    "ram": ("RAM (GiB)", "内存 (GiB)"), "price": ("Price / hour", "每小时价格"), "reason": ("Why", "理由"),
    "card": ("card", "单卡显存"), "none": ("No GPU instance fits; see the warnings.", "没有合适的 GPU 实例，请看注意事项。"),
    "how_hint": ("Type 'how N' to see the rules behind line N, 'how' for all rules, Enter to quit.",
                 "输入 “how N” 查看第 N 行依据的规则，“how” 查看全部规则，直接回车退出。"),
    "you_answered": ("Your answers", "您的回答"), "unpriced": ("not listed", "未列出"),
    "cpu_only": ("A CPU instance: this job needs no GPU.", "CPU 实例：该作业不需要 GPU。"),
    "cost": ("Cost and time", "费用与时间"), "wall": ("wall-clock about", "耗时约"),
    "payg_job": ("pay-as-you-go for the job", "按量付费整个作业"), "payg_month": ("pay-as-you-go per month", "按量付费每月"),
    "misses": ("misses", "不满足"), "unused": ("Not used", "未使用"), "none_fits": ("No option meets the budget and deadline. What to relax:",
                                                 "没有方案同时满足预算与期限。可以放宽："),
}


def ui(key: str, lang: str) -> str:
    en, zh = UI[key]
    return zh if lang == "zh" else en


# Labels of fields that have no follow-up question (those take theirs from knowledge/ask/questions.yaml).
FIELD_LABELS = {
    "stage": ("Stage", "阶段"), "backbone": ("Backbone", "骨干网络"), "num_gpus": ("GPUs", "GPU 数"),
    "optimizer": ("Optimizer", "优化器"), "gradient_checkpointing": ("Gradient checkpointing", "梯度检查点"),
    "lora_rank": ("LoRA rank", "LoRA 秩"), "distributed": ("Distributed", "分布式策略"),
    "pytorch_version": ("PyTorch", "PyTorch 版本"), "num_classes": ("Classes", "类别数"),
    "data_loader_workers": ("Loader workers", "数据加载进程"), "augmentation": ("Augmentation", "数据增强"),
    "budget_total": ("Total budget (CNY)", "总预算（元）"), "expected_months_of_use": ("Months of use", "使用月数"),
    "num_nodes": ("Nodes", "机器数"), "training_tokens": ("Training tokens", "训练 token 数"),
    "requests_per_second": ("Requests per second", "每秒请求数"), "concurrent_users": ("Concurrent users", "并发用户数"),
}


def field_label(field: str, lang: str) -> str:
    q = load_questions().questions.get(field)
    if q:
        return q.label.get(lang)
    en, zh = FIELD_LABELS.get(field, (field, field))
    return zh if lang == "zh" else en


def fmt_value(value: Any, lang: str) -> str:
    if isinstance(value, bool):
        return ("是" if value else "否") if lang == "zh" else ("yes" if value else "no")
    if isinstance(value, list | tuple) and len(value) == 2:
        return f"{value[0]}×{value[1]}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return getattr(obj, name, default) if obj is not None else default


def understood_block(parsed: ParsedQuestion, lang: str, style: Style) -> list[str]:
    rows = [[field_label(u.field, lang), fmt_value(u.value, lang), u.matched] for u in parsed.understood]
    out = [style(ui("understood", lang), "bold")]
    out.append(table([ui("field", lang), ui("value", lang), ui("from", lang)], rows, style) if rows else "  —")
    for a in parsed.assumed:
        out.append(f"  {style(ui('assumed', lang), 'yellow')}: {field_label(a.field, lang)} = "
                   f"{fmt_value(a.value, lang)} — {a.reason.get(lang)}")
    for h in parsed.hints:
        out.append(f"  {style(ui('notes', lang), 'dim')}: {h.text.get(lang)}")
    for u in parsed.unused:
        out.append(f"  {style(ui('unused', lang), 'yellow')}: “{u.matched}” — {u.why.get(lang)}")
    return out


def _price(option: Any, lang: str) -> str:
    price = _get(option, "price_per_hour")
    if price is None:
        return ui("unpriced", lang)
    return f"{price:,.2f} {_get(option, 'currency') or 'CNY'}"


def _type_cell(option: Any) -> str:
    """The instance type, × the instances when there are several (the row's GPUs, vCPU and RAM are per instance)."""
    nodes = _get(option, "nodes") or 1
    return f"{option.instance_type} × {nodes}" if nodes > 1 else option.instance_type


def _gpu_cell(option: Any) -> str:
    count = _get(option, "gpus_per_node") or _get(option, "gpu_count") or _get(option, "total_gpus") or ""
    return f"{_get(option, 'gpu_display', '?')} × {count}" if count else str(_get(option, "gpu_display", "?"))


def instance_block(rec: Any, lang: str, style: Style) -> list[str]:
    out = [style(ui("answer", lang), "bold")]
    inst = _get(rec, "instance")
    cpu = _get(rec, "cpu_instance")
    if inst is None and cpu:  # preprocessing: a CPU type, as the Markdown answer gives it
        count = cpu.get("instances", 1)
        name = f"{cpu['instance_type']} × {count}" if count > 1 else cpu["instance_type"]
        headers = [ui(k, lang) for k in ("instance", "vcpu", "ram")]
        return out + [table(headers, [[name, str(cpu["vcpu"]), fmt_value(cpu["memory_gib"], lang)]], style),
                      "  " + ui("cpu_only", lang)]
    if inst is None:
        return out + ["  " + ui("none", lang)]
    headers = [ui(k, lang) for k in ("instance", "gpu", "vcpu", "ram", "price")]
    row = [_type_cell(inst), _gpu_cell(inst), str(_get(inst, "vcpu", "")), fmt_value(_get(inst, "memory_gib", ""), lang),
           _price(inst, lang)]
    return out + [table(headers, [row], style)]


def memory_block(rec: Any, lang: str, style: Style) -> list[str]:
    mem = _get(rec, "planned_memory") or _get(rec, "memory")
    breakdown = dict(_get(mem, "breakdown") or {})
    if not breakdown:
        return []
    capacity = _get(rec, "gpu_memory_gib")
    items = [(name, float(v)) for name, v in breakdown.items() if float(v) > 0]
    return [style(ui("memory", lang), "bold"),
            bars(items, float(capacity) if capacity else None, style=style, capacity_label=ui("card", lang))]


def numbered_lines(rec: Any, lang: str, style: Style) -> list[str]:
    out = []
    for i, item in enumerate(_get(rec, "sections") or [], start=1):
        out.append(f" {style(f'[{i}]', 'cyan')} {style(section_label(item.section, lang), 'bold')}: {item.text.get(lang)}")
    return out


def cost_block(rec: Any, lang: str, style: Style) -> list[str]:
    """The shown instance's time and pay-as-you-go total, why the cost report picks it, and what misses a budget or
    deadline (the Markdown answer's cost table, in a few lines)."""
    cost, inst = _get(rec, "cost"), _get(rec, "instance")
    if cost is None or inst is None:
        return []
    out = [style(ui("cost", lang), "bold")]
    option = cost.option(inst.instance_type)
    if option is not None:
        parts = []
        if option.time.wall_hours is not None:
            wall = span(option.time.wall_hours, "h")
            parts.append(f"{ui('wall', lang)} {wall}{'' if wall.endswith('min') else ' h'}")
        elif option.time.missing is not None and cost.basis == "job":
            parts.append(option.time.missing.get(lang))
        total = purchase_total(option, "payg", "-")
        if total != "-":
            parts.append(f"{ui('payg_month' if cost.basis == 'month' else 'payg_job', lang)} {total} {option.currency or ''}".rstrip())
        if parts:
            colon, sep = ("：", "；") if lang == "zh" else (": ", "; ")
            out.append(f"  {inst.instance_type}{colon}{sep.join(parts)}")
        for v in option.violations:
            out.append(f"  {style(ui('misses', lang), 'red')}: {v.get(lang)}")
    if cost.why is not None and cost.recommended == inst.instance_type:
        out.append(f"  {cost.why.get(lang)}")
    if cost.recommended is None:
        out.append(f"  {style(ui('none_fits', lang), 'red')}")
        out += [f"  - {x.get(lang)}" for x in cost.relax]
    return out if len(out) > 1 else []


def alternatives_block(rec: Any, lang: str, style: Style) -> list[str]:
    alts = _get(rec, "alternatives") or []
    if not alts:
        return []
    rows = [[_type_cell(a), _gpu_cell(a), _price(a, lang), a.reason.get(lang)] for a in alts]
    headers = [ui("instance", lang), ui("gpu", lang), ui("price", lang), ui("reason", lang)]
    return [style(ui("alternatives", lang), "bold"), table(headers, rows, style, max_col=60)]


def rejected_block(rec: Any, lang: str, style: Style) -> list[str]:
    """The GPUs ruled out and why: the answer's findings refer to this section by name."""
    rejected = _get(rec, "rejected") or []
    if not rejected:
        return []
    from gpu_advisor.i18n import messages

    label = messages().get("rejected") or {}
    title = label.get(lang) or ("被排除的 GPU" if lang == "zh" else "GPUs ruled out")
    return [style(title, "bold"), *(f"  - {r.get(lang)}" for r in rejected)]


def notes_block(rec: Any, lang: str, style: Style) -> list[str]:
    out = []
    for note in _get(rec, "assumptions") or []:
        out.append(f"  {style(ui('assumed', lang), 'yellow')}: {note.get(lang)}")
    for note in _get(rec, "warnings") or []:
        out.append(f"  {style(ui('warnings', lang), 'red')}: {note.get(lang)}")
    return out


def render_terminal(parsed: ParsedQuestion, rec: Any, lang: str, color: bool = False, header: bool = True) -> str:
    style = Style(color)
    blocks = [understood_block(parsed, lang, style) if header else [],
              instance_block(rec, lang, style), memory_block(rec, lang, style),
              numbered_lines(rec, lang, style), cost_block(rec, lang, style), alternatives_block(rec, lang, style),
              rejected_block(rec, lang, style), notes_block(rec, lang, style)]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_markdown(parsed: ParsedQuestion, rec: Any, lang: str) -> str:
    """The question, what was understood (a Markdown table), then the advisor's own Markdown."""
    lines = [f"> {parsed.text}", "", f"**{ui('understood', lang)}**", "",
             f"| {ui('field', lang)} | {ui('value', lang)} | {ui('from', lang)} |", "|---|---|---|"]
    for u in parsed.understood:
        cells = [field_label(u.field, lang), fmt_value(u.value, lang), u.matched]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += [f"- {ui('assumed', lang)}: {field_label(a.field, lang)} = {fmt_value(a.value, lang)} — {a.reason.get(lang)}"
              for a in parsed.assumed]
    lines += [f"- {ui('notes', lang)}: {h.text.get(lang)}" for h in parsed.hints]
    lines += [f"- {ui('unused', lang)}: “{u.matched}” — {u.why.get(lang)}" for u in parsed.unused]
    return "\n".join(lines) + "\n\n" + rec.render(lang)


def render_json(parsed: ParsedQuestion, rec: Any, lang: str, answers: dict[str, Any] | None = None) -> str:
    doc = {"question": parsed.text, "lang": lang, "parsed": parsed.model_dump(mode="json"),
           "answers": answers or {}, "recommendation": rec.model_dump(mode="json")}
    return json.dumps(doc, ensure_ascii=False, indent=2, default=str) + "\n"


def render_how(rec: Any, lang: str, n: int | None, style: Style | None = None) -> str:
    """The rules behind numbered line n (all fired rules when n is None)."""
    style = style or Style()
    sections = _get(rec, "sections") or []
    trace = _get(rec, "trace") or []
    if n is not None and not 1 <= n <= len(sections):
        return (f"没有第 {n} 行（共 {len(sections)} 行）。" if lang == "zh" else
                f"There is no line {n} (there are {len(sections)}).")
    entries = trace if n is None else [t for t in trace if t.rule_id == sections[n - 1].rule_id]
    if not entries:
        rule = sections[n - 1].rule_id if n is not None else "-"
        return (f"规则 {rule} 没有记录推理过程。" if lang == "zh" else f"Rule {rule} left no trace entry.")
    return "\n".join(_how_entry(t, lang, style) for t in entries)


def _how_entry(t: Any, lang: str, style: Style) -> str:
    out = [f"{style(t.rule_id, 'cyan')} — {style(t.title.get(lang), 'bold')}", f"    {t.why.get(lang)}"]
    matched = _get(t, "matched") or {}
    if matched:
        label = "条件" if lang == "zh" else "because"
        out.append(f"    {label}: " + ", ".join(f"{k} = {fmt_value(v, lang)}" for k, v in matched.items()))
    sources = _get(t, "sources") or []
    if sources:
        out.append(f"    {'来源' if lang == 'zh' else 'sources'}: " + "; ".join(sources))
    return "\n".join(out)
