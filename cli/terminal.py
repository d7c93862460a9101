"""`gpu-advisor ask` in a terminal: the answer as text blocks (tables, bars, numbered lines) and the "how N"
explanation of one numbered line."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.report import value_of, field_label, fmt_value, ui
from gpu_advisor.cli.textui import Style, bars, table
from gpu_advisor.util.i18n import section_label
from gpu_advisor.util.numfmt import purchase_total, span


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
    price = value_of(option, "price_per_hour")
    if price is None:
        return ui("unpriced", lang)
    return f"{price:,.2f} {value_of(option, 'currency') or 'CNY'}"


def _type_cell(option: Any) -> str:
    """The instance type, × the instances when there are several (the row's GPUs, vCPU and RAM are per instance)."""
    nodes = (value_of(option, "nodes") or 1) * (value_of(option, "replicas") or 1)   # serving replicas are instances too
    return f"{option.instance_type} × {nodes}" if nodes > 1 else option.instance_type


def _gpu_cell(option: Any) -> str:
    count = value_of(option, "gpus_per_node") or value_of(option, "gpu_count") or value_of(option, "total_gpus") or ""
    return f"{value_of(option, 'gpu_display', '?')} × {count}" if count else str(value_of(option, "gpu_display", "?"))


def instance_block(rec: Any, lang: str, style: Style) -> list[str]:
    out = [style(ui("answer", lang), "bold")]
    inst = value_of(rec, "instance")
    cpu = value_of(rec, "cpu_instance")
    if inst is None and cpu:  # preprocessing: a CPU type, as the Markdown answer gives it
        count = cpu.get("instances", 1)
        name = f"{cpu['instance_type']} × {count}" if count > 1 else cpu["instance_type"]
        headers = [ui(k, lang) for k in ("instance", "vcpu", "ram")]
        return out + [table(headers, [[name, str(cpu["vcpu"]), fmt_value(cpu["memory_gib"], lang)]], style),
                      "  " + ui("cpu_only", lang)]
    if inst is None:
        return out + ["  " + ui("none", lang)]
    headers = [ui(k, lang) for k in ("instance", "gpu", "vcpu", "ram", "price")]
    row = [_type_cell(inst), _gpu_cell(inst), str(value_of(inst, "vcpu", "")), fmt_value(value_of(inst, "memory_gib", ""), lang),
           _price(inst, lang)]
    return out + [table(headers, [row], style)]


def memory_block(rec: Any, lang: str, style: Style) -> list[str]:
    mem = value_of(rec, "planned_memory") or value_of(rec, "memory")
    breakdown = dict(value_of(mem, "breakdown") or {})
    if not breakdown:
        return []
    capacity = value_of(rec, "gpu_memory_gib")
    items = [(name, float(v)) for name, v in breakdown.items() if float(v) > 0]
    return [style(ui("memory", lang), "bold"),
            bars(items, float(capacity) if capacity else None, style=style, capacity_label=ui("card", lang))]


def numbered_lines(rec: Any, lang: str, style: Style) -> list[str]:
    out = []
    for i, item in enumerate(value_of(rec, "sections") or [], start=1):
        out.append(f" {style(f'[{i}]', 'cyan')} {style(section_label(item.section, lang), 'bold')}: {item.text.get(lang)}")
    return out


def cost_block(rec: Any, lang: str, style: Style) -> list[str]:
    """The shown instance's time and pay-as-you-go total, why the cost report picks it, and what misses a budget or
    deadline (the Markdown answer's cost table, in a few lines)."""
    cost, inst = value_of(rec, "cost"), value_of(rec, "instance")
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
        spot = purchase_total(option, "spot", "-") if cost.basis == "job" else "-"
        if spot != "-" and not spot.endswith("/h"):   # purchase_total: "-" when spot is not offered or has no total
            parts.append(f"{ui('spot_job', lang)} {spot} {option.currency or ''}".rstrip())
        if parts:
            colon, sep = ("：", "；") if lang == "zh" else (": ", "; ")
            out.append(f"  {inst.instance_type}{colon}{sep.join(parts)}")
        for v in option.violations:
            out.append(f"  {style(ui('misses', lang), 'red')}: {v.get(lang)}")
    if cost.why is not None and cost.recommended == inst.instance_type:
        out.append(f"  {cost.why.get(lang)}")
    if cost.recommended is None:
        w = value_of(rec, "workload") or {}
        budget, deadline = bool(w.get("budget_per_hour") or w.get("budget_total")), bool(w.get("deadline_hours"))
        key = {(True, True): "none_fits_both", (True, False): "none_fits_budget",
               (False, True): "none_fits_deadline"}.get((budget, deadline), "none_fits")  # only the constraints given
        out.append(f"  {style(ui(key, lang), 'red')}")
        out += [f"  - {x.get(lang)}" for x in cost.relax]
    return out if len(out) > 1 else []


def alternatives_block(rec: Any, lang: str, style: Style) -> list[str]:
    alts = value_of(rec, "alternatives") or []
    if not alts:
        return []
    rows = [[_type_cell(a), _gpu_cell(a), _price(a, lang), a.reason.get(lang)] for a in alts]
    headers = [ui("instance", lang), ui("gpu", lang), ui("price", lang), ui("reason", lang)]
    return [style(ui("alternatives", lang), "bold"), table(headers, rows, style, max_col=60)]


def rejected_block(rec: Any, lang: str, style: Style) -> list[str]:
    """The GPUs ruled out and why: the answer's findings refer to this section by name."""
    rejected = value_of(rec, "rejected") or []
    if not rejected:
        return []
    from gpu_advisor.util.i18n import messages

    label = messages().get("rejected") or {}
    title = label.get(lang) or ("被排除的 GPU" if lang == "zh" else "GPUs ruled out")
    return [style(title, "bold"), *(f"  - {r.get(lang)}" for r in rejected)]


def notes_block(rec: Any, lang: str, style: Style) -> list[str]:
    out = []
    for note in value_of(rec, "assumptions") or []:
        out.append(f"  {style(ui('assumed', lang), 'yellow')}: {note.get(lang)}")
    for note in value_of(rec, "warnings") or []:
        out.append(f"  {style(ui('warnings', lang), 'red')}: {note.get(lang)}")
    return out


def lead_block(rec: Any, lang: str, style: Style) -> list[str]:
    """What the answer must say first (a tight card, a default that decides the answer, a deadline), before the table."""
    return [f"{style('!', 'yellow')} {style(line.get(lang), 'bold')}" for line in value_of(rec, "lead") or []]


def render_terminal(parsed: ParsedQuestion, rec: Any, lang: str, color: bool = False, header: bool = True) -> str:
    style = Style(color)
    blocks = [understood_block(parsed, lang, style) if header else [], lead_block(rec, lang, style),
              instance_block(rec, lang, style), memory_block(rec, lang, style),
              numbered_lines(rec, lang, style), cost_block(rec, lang, style), alternatives_block(rec, lang, style),
              rejected_block(rec, lang, style), notes_block(rec, lang, style)]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_how(rec: Any, lang: str, n: int | None, style: Style | None = None) -> str:
    """The rules behind numbered line n (all fired rules when n is None)."""
    style = style or Style()
    sections = value_of(rec, "sections") or []
    trace = value_of(rec, "trace") or []
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
    matched = value_of(t, "matched") or {}
    if matched:
        label = "条件" if lang == "zh" else "because"
        out.append(f"    {label}: " + ", ".join(f"{k} = {fmt_value(v, lang)}" for k, v in matched.items()))
    sources = value_of(t, "sources") or []
    if sources:
        out.append(f"    {'来源' if lang == 'zh' else 'sources'}: " + "; ".join(sources))
    return "\n".join(out)
