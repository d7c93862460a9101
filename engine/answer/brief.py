"""The decision of a Recommendation, short enough for an assistant to relay (issue 23).

``brief(rec, lang)`` is a plain dict (JSON data) with the decision first: the instance type, its GPUs, the memory
each GPU needs against the card's, price and total; then the 3-5 reasons that decide it (with their rule ids), what
would change the answer, the assumptions that matter and the two best alternatives. ``brief_text(rec, lang)`` is
the same as Markdown, about 400-700 tokens. Nothing here computes: every value is read from the Recommendation
(the library and ``--json`` keep the whole of it; the MCP tools return this by default).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from gpu_advisor.answer.render import md_escape

MAX_REASONS = 4
MAX_ALTERNATIVES = 2
MAX_ASSUMPTIONS = 4
MAX_SCENARIOS = 4

# Sections of a Recommendation whose items decide the instance, in the order a reader needs them; the later ones
# only fill up to MIN_REASONS.
DECIDING_SECTIONS = ("tier", "mitigation", "warning", "gpu", "memory", "precision")
FILLING_SECTIONS = ("inference", "network", "cost")
MIN_REASONS = 3

# Assumed fields that move the plan or the price: the ones worth stating back to the user.
DECIDING_FIELDS = ("model", "num_gpus", "batch_size_per_gpu", "sequences_per_sample", "seq_len", "input_size", "precision", "finetune_method",
                   "quantization", "gradient_checkpointing", "distributed", "region", "interruptible", "num_samples",
                   "dataset_size_gb", "epochs", "stage", "params_billion")

_L = {
    "title": {"en": "GPU recommendation", "zh": "GPU 配置建议"},
    "recommended": {"en": "Recommended", "zh": "推荐"},
    "per_gpu_needs": {"en": "needs {need} GiB per GPU of the {card} GB card ({head}% headroom)",
                      "zh": "每卡需 {need} GiB，卡上 {card} GB（余量 {head}%）"},
    "price": {"en": "Price", "zh": "价格"},
    "no_price": {"en": "no price in the catalog for this region", "zh": "目录中该地域无价格"},
    "total": {"en": "total", "zh": "总计"},
    "spot_total": {"en": "spot {span} {cur} for the job (the price floats; rework after interruptions included)",
                   "zh": "抢占式整个作业 {span} {cur}（价格浮动；含中断后的返工）"},
    "per_month": {"en": "per month (24x7)", "zh": "每月（24×7）"},
    "for_job": {"en": "for the job, {h} h", "zh": "整个作业，{h} 小时"},
    "mitigations": {"en": "Needs", "zh": "需要"},
    "misses": {"en": "Constraints not met or not checkable", "zh": "未满足或无法核对的约束"},
    "why": {"en": "Why", "zh": "原因"},
    "change": {"en": "What would change the answer", "zh": "什么会改变结论"},
    "assumed": {"en": "Assumed (not given)", "zh": "假设（未给出）"},
    "more_assumed": {"en": "and {n} more defaults", "zh": "另有 {n} 项默认值"},
    "alternatives": {"en": "Alternatives", "zh": "备选"},
    "scenarios": {"en": "By scenario (no model named)", "zh": "按场景（未指定模型）"},
    "cpu_plan": {"en": "CPU instance (no GPU needed)", "zh": "CPU 实例（无需 GPU）"},
    "no_plan": {"en": "No instance type in the catalog fits this job.", "zh": "目录中没有适合此任务的实例规格。"},
    "more": {"en": "More: detail='full' or sections; a rule: explain_rule. Prices: list prices as of {on}, confirm in the console.",
             "zh": "更多：detail='full' 或 sections；规则：explain_rule。价格为截至 {on} 的目录价，请在控制台确认。"},
    "state_it": {"en": "Stating {fields} (assumed above) may change the plan or the price",
                 "zh": "给出 {fields} 的实际值（上面为假设值）可能改变方案或价格"},
    "spot": {"en": "If the job can resume from checkpoints (interruptible: true), spot instances become an option",
             "zh": "若作业可从检查点恢复（interruptible: true），可考虑抢占式实例"},
    "alt_change": {"en": "{it}: {why}", "zh": "{it}：{why}"},
    "sep": {"en": "; ", "zh": "；"},
    "colon": {"en": ": ", "zh": "："},
}


def _t(key: str, lang: str, **values: Any) -> str:
    text = _L[key]["zh" if lang == "zh" else "en"]
    return text.format(**values) if values else text


def _get(value: Any, lang: str) -> str:
    """A Text (or Note) in lang; a plain value as text."""
    if value is None:
        return ""
    return value.get(lang) if hasattr(value, "get") and not isinstance(value, dict) else str(value)


def _num(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(float(value), digits)


_CLAUSE_ENDS = ("。", "；", "; ", ": ", "：", ". ")


def short(text: str, limit: int = 180) -> str:
    """The sentence up to its first clause end past a few words, when the whole is longer than ``limit``
    (the rule's full text stays one explain_rule call away); a hard cut with an ellipsis only as a last resort."""
    if len(text) <= limit:
        return text
    # a clause end past half the limit: a head of a few words ("Qwen2.5-7B 的 DPO（在监督微调之上）：") says nothing
    ends = [i for i in (text.find(mark, max(30, limit // 2)) for mark in _CLAUSE_ENDS) if 0 < i < limit]
    if ends:
        return text[:min(ends)].rstrip() + " …"
    return _cut_between_words(text, limit - 2).rstrip() + " …"


def _cut_between_words(text: str, at: int) -> str:
    """``text[:at]``, moved back to the start of a Latin word or number it would split: "NVIDIA A100 80 GB" cut at
    "A10" would name another GPU ("2 张 NVIDIA A10 …"), "41.3 GiB" cut at "41." another figure."""
    word = re.compile(r"[A-Za-z0-9._/+-]")
    end = at
    while 0 < end < len(text) and word.match(text[end]) and word.match(text[end - 1]):
        end -= 1
    return text[:end] if end > at // 2 else text[:at]


def _option(option: Any) -> dict[str, Any]:
    return {"instance_type": option.instance_type, "gpu": option.gpu_display, "total_gpus": option.total_gpus,
            "gpu_memory_gb": option.gpu_memory_gib, "price_per_hour": _num(option.price_per_hour, 2),
            "currency": option.currency}


def _why(option: Any, lang: str) -> str | None:
    """Why an alternative lost, unless the sentence only restates its price (or its missing price)."""
    if option.price_per_hour is None:
        return None
    why = option.reason.get(lang)
    return None if f"{option.price_per_hour:.2f}" in why else short(why, 120)


def _misses(rec: Any, lang: str) -> list[str]:
    """The constraints the user stated (budget, deadline) that the recommended option does not meet."""
    if rec.cost is None or rec.instance is None:
        return []
    option = next((o for o in rec.cost.options if o.instance_type == rec.instance.instance_type), None)
    return [v.get(lang) for v in option.violations] if option is not None else []


def _alternative(option: Any, lang: str) -> dict[str, Any]:
    # "why" is always present (null when the reason only restates the price), as in the MCP output schema
    return {**_option(option), "why": _why(option, lang)}


def _total(rec: Any) -> dict[str, Any] | None:
    """The pay-as-you-go total of the recommended option (job total, or per month when serving)."""
    if rec.cost is None or rec.instance is None:
        return None
    option = next((o for o in rec.cost.options if o.instance_type == rec.instance.instance_type), None)
    line = option.purchase("payg") if option is not None else None
    if line is None or line.total is None:
        return None
    hours = option.time.wall_hours if option is not None else None
    # a total under 100 keeps its cents, as the lead says it ("53.36–267 CNY", not "53.00–267")
    return {"low": _num(line.total.low, 0 if line.total.low >= 100 else 2),
            "high": _num(line.total.high, 0 if line.total.high >= 100 else 2), "currency": option.currency,
            "basis": rec.cost.basis, "hours_low": _num(hours.low, 1) if hours else None,
            "hours_high": _num(hours.high, 1) if hours else None}


def spot_total(rec: Any) -> tuple[float, float] | None:
    """(low, high) spot total of the recommended option's whole job when the job is interruptible and has one."""
    if rec.cost is None or rec.instance is None or rec.cost.basis != "job":
        return None
    option = rec.cost.option(rec.instance.instance_type)
    line = option.purchase("spot") if option is not None else None
    if line is None or not line.available or line.total is None:
        return None
    return line.total.low, line.total.high


def _first(item: Any) -> bool:
    """Items about what the user asked for (a GPU preference) or that no plan exists: never left out."""
    return "-PREF" in item.rule_id or item.rule_id == "FIT-NONE"


def _reasons(rec: Any, lang: str) -> list[dict[str, str]]:
    order = {section: i for i, section in enumerate(DECIDING_SECTIONS + FILLING_SECTIONS)}
    items = sorted((item for item in rec.sections if item.section in order),
                   key=lambda item: (not _first(item), order[item.section]))  # stable: the rules' order within
    limit = 110 if lang == "zh" else 180
    if rec.instance is None and not rec.cpu_instance:
        limit *= 3  # no plan: the reason is the answer, with what to change
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for item in items:
        if item.rule_id in seen or (item.section in FILLING_SECTIONS and len(out) >= MIN_REASONS):
            continue
        seen.add(item.rule_id)
        out.append({"rule_id": item.rule_id, "text": short(item.text.get(lang), limit)})
        if len(out) >= MAX_REASONS:
            break
    return out


def _unsourced(text: str) -> str:
    """An assumption without the source in its closing parentheses (the full answer keeps it)."""
    for opening, closing in (("（", "）"), (" (", ")")):
        start = text.find(opening, 20)
        if start > 0 and text.rstrip("。. ").endswith(closing):
            return text[:start].rstrip()
    return text


def _assumptions(rec: Any, lang: str) -> tuple[list[dict[str, Any]], int]:
    deciding = [a for a in rec.assumptions if a.field in DECIDING_FIELDS]
    w = getattr(rec, "workload", None)
    get = w.get if isinstance(w, dict) else (lambda f: getattr(w, f, None))
    limited = w is not None and any(get(f) for f in ("deadline_hours", "budget_total"))
    # with a deadline or a total budget stated, the job size decides the yes or no: its assumptions come first
    first = ("epochs", "num_samples", "dataset_size_gb") if limited else ()
    deciding.sort(key=lambda a: (a.field not in first, DECIDING_FIELDS.index(a.field)))
    chosen = deciding[:MAX_ASSUMPTIONS - 1 if rec.scenarios else MAX_ASSUMPTIONS]  # the scenario rows show the rest
    return [short(_unsourced(a.text.get(lang)), 80 if lang == "zh" else 120) for a in chosen], len(rec.assumptions) - len(chosen)


def _would_change(rec: Any, lang: str) -> list[str]:
    out: list[str] = []
    if rec.cost is not None:
        out += [short(x.get(lang)) for x in rec.cost.relax]
    if rec.instance is not None and rec.instance.reason is not None:
        reason = rec.instance.reason.get(lang)
        # the planner's own words when another option wins on another criterion ("ecs.… finishes sooner ..."): a
        # trade-off names that other type; "it is also the fastest" changes nothing
        tail = reason.split(";", 1)[1].strip() if ";" in reason else ""
        if "ecs." in tail:
            out.append(short(tail))
    # the fields the advisor filled in (a default); not a note about a stated value ("Time counts each sample as the
    # stated seq_len" is about the data, the seq_len itself was given)
    assumed = {a.field: a for a in rec.assumptions if a.code.startswith("default")}
    interruptible = assumed.get("interruptible")
    training = rec.cost is None or rec.cost.basis == "job"
    if interruptible is not None and interruptible.value is False and rec.instance is not None and training:
        out.append(_t("spot", lang))
    fields = [f for f in ("num_gpus", "batch_size_per_gpu", "seq_len", "input_size", "region", "num_samples")
              if f in assumed]
    if fields:
        out.append(_t("state_it", lang, fields=", ".join(fields)))
    return out[:4]


def brief(rec: Any, lang: str | None = None, reserve: float = 0.0) -> dict[str, Any]:
    """The decision fields of ``rec`` (a Recommendation) in one language, as plain JSON data."""
    lang = lang or rec.lang
    inst = rec.instance
    instance = None
    if inst is not None:
        instance = {**{k: v for k, v in _option(inst).items() if k != "instance_type"}, "gpus_per_node": inst.gpus_per_node, "nodes": inst.nodes, "vcpu": inst.vcpu, "ram_gib": inst.memory_gib,
                    "needed_per_gpu_gib": _num(inst.planned_mem_gib), "headroom_pct": _num(inst.headroom_pct, 1),
                    "mitigations": [m.get(lang) for m in inst.mitigations],
                    "price_region": inst.price_region, "price_as_of": inst.price_as_of}
    assumptions, more = _assumptions(rec, lang)
    out: dict[str, Any] = {
        "lang": lang,
        "lead": [line.get(lang) for line in rec.lead],
        "instance_type": inst.instance_type if inst is not None else None,
        "instance": instance,
        "cpu_instance": ({k: rec.cpu_instance.get(k) for k in ("instance_type", "instances", "vcpu", "memory_gib")}
                         if rec.cpu_instance and inst is None else None),
        "total_cost": _total(rec),
        "misses": _misses(rec, lang),
        "tier": rec.tier,
        "reasons": _reasons(rec, lang),
        "would_change": _would_change(rec, lang),
        "assumptions": assumptions,
        "more_assumptions": more,
        "alternatives": [_alternative(o, lang) for o in rec.alternatives[:MAX_ALTERNATIVES]],
        "knowledge_version": rec.knowledge.get("version"),
        "catalog_compiled_on": rec.knowledge.get("catalog_compiled_on"),
    }
    for key in ("lead", "cpu_instance", "misses"):  # only when there is one
        if not out[key]:
            del out[key]
    if rec.scenarios:
        out["scenarios"] = [{"label": row.label.get(lang), "instance_type": row.instance_type,
                             "total_gpus": row.total_gpus, "needed_per_gpu_gib": _num(row.mem_planned_gib, 1),
                             "price_per_hour": _num(row.price_per_hour, 2)}
                            for row in rec.scenarios[:MAX_SCENARIOS]]
    return fit_budget(out, lang, reserve)


# The brief travels twice (structuredContent and its Markdown text), so its size counts about twice against an
# assistant's context; issue 23 caps a default answer at 1,500 tokens (o200k) for both together. The estimate below
# counts ASCII at 4 characters and other characters at 0.75 a token; measured on 12 answers (zh and en) the o200k count
# was 1.25-1.34x of it, so the budget is kept with a 1.4x margin. Trimming drops the least deciding parts first; what
# is dropped stays one detail="full" / sections call away.
ANSWER_TOKENS = 1450
TOKENS_PER_ESTIMATE = 1.4


def estimated_tokens(data: Any) -> float:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return ascii_chars / 4 + (len(text) - ascii_chars) * 0.75


def _trims(out: dict[str, Any], lang: str) -> list[Callable[[], None]]:
    """The trims in the order they are applied: each drops a little of what decides the answer least."""
    n_zh = lang == "zh"

    def alt_why() -> None:
        for o in out.get("alternatives", []):
            o.pop("why", None)

    def keep(key: str, n: int) -> Callable[[], None]:
        def trim() -> None:
            items = out.get(key) or []
            if key == "assumptions" and len(items) > n:
                out["more_assumptions"] = out.get("more_assumptions", 0) + len(items) - n
            if len(items) > n:
                out[key] = items[:n]
        return trim

    def shorten(key: str, limit: int) -> Callable[[], None]:
        def trim() -> None:
            items = out.get(key) or []
            if key == "reasons":
                out[key] = [{**r, "text": short(r["text"], limit)} for r in items]
            else:
                out[key] = [short(x, limit) for x in items]
        return trim

    def shorten_lead(first: int | None = None, tail: int | None = None) -> Callable[[], None]:
        # the first line is what was asked (the figure, the verdict): kept whole until nothing else is left to trim
        def trim() -> None:
            items = out.get("lead") or []
            head = items[:1] if first is None else [short(x, first) for x in items[:1]]
            out["lead"] = head + [short(x, tail or (120 if n_zh else 220)) for x in items[1:]]
        return trim

    return [alt_why, keep("assumptions", 2), keep("would_change", 2), keep("scenarios", 3), keep("reasons", 3),
            shorten("reasons", 70 if n_zh else 120), shorten("would_change", 60 if n_zh else 100), keep("reasons", 2),
            keep("alternatives", 1), shorten_lead(), keep("scenarios", 1), keep("would_change", 1),
            keep("assumptions", 1), shorten_lead(200 if n_zh else 360),
            # a lead of several lines (default precision, method, deadline, price) under a long what-was-read: the
            # last resorts, so that the answer stays within its budget (all of it one detail="full" call away)
            keep("reasons", 1), shorten_lead(200 if n_zh else 360, 70 if n_zh else 130), keep("would_change", 0)]


def fit_budget(out: dict[str, Any], lang: str, reserve: float = 0.0) -> dict[str, Any]:
    """``out`` trimmed in place until the brief (twice: data and text) fits ANSWER_TOKENS at the estimate's margin;
    ``reserve``: tokens the caller adds around it (the ask tool's what-was-read lines, also twice)."""
    for trim in _trims(out, lang):
        if 2 * estimated_tokens(out) * TOKENS_PER_ESTIMATE + reserve <= ANSWER_TOKENS:
            break
        trim()
    return out


def _money(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def _hours(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def _range(low: float | None, high: float | None, cell: Any = _money) -> str:
    if low is None or high is None:
        return "-"
    return cell(low) if abs(high - low) < 0.5 else f"{cell(low)}–{cell(high)}"


def brief_text(rec: Any, lang: str | None = None, data: dict[str, Any] | None = None) -> str:
    """``brief(rec, lang)`` as Markdown (``data``: that dict when the caller has it already)."""
    lang = lang or rec.lang
    b = data if data is not None else brief(rec, lang)
    colon = _t("colon", lang)
    lines = [f"## {_t('title', lang)}", ""]
    lines += [f"**{md_escape(line)}**" for line in b.get("lead", [])]  # what must be said first (verdict, tight card)
    inst = b["instance"]
    if inst is not None:
        replicas = rec.instance.replicas if rec.instance is not None else 1   # serving copies the request rate needs
        count = inst["nodes"] * replicas
        nodes = f" × {count} nodes" if count > 1 and lang != "zh" else (f" × {count} 台" if count > 1 else "")
        if replicas > 1:
            nodes += f" ({replicas} replicas)" if lang != "zh" else f"（{replicas} 个副本）"
        lines.append(f"**{_t('recommended', lang)}{colon}`{b['instance_type']}`**{nodes} — "
                     f"{inst['gpus_per_node']} × {md_escape(inst['gpu'])}, {inst['vcpu']} vCPU, {inst['ram_gib']:g} GiB RAM; "
                     + _t("per_gpu_needs", lang, need=f"{inst['needed_per_gpu_gib']:.1f}", card=f"{inst['gpu_memory_gb']:g}",
                          head=f"{inst['headroom_pct']:g}"))
        if inst["price_per_hour"] is not None:
            price = f"{inst['price_per_hour']:.2f} {inst['currency']}/h × {count} ({inst['price_region']}, {inst['price_as_of']})"
        else:
            price = _t("no_price", lang)
        total = b["total_cost"]
        if total is not None:
            span = _range(total["low"], total["high"])
            when = _t("per_month", lang) if total["basis"] == "month" else \
                _t("for_job", lang, h=_range(total["hours_low"], total["hours_high"], _hours))
            price += f"{_t('sep', lang)}{_t('total', lang)} {span} {total['currency']} {when}"
            spot = spot_total(rec)
            if spot is not None:
                price += _t("sep", lang) + _t("spot_total", lang, span=_range(_num(spot[0], 0), _num(spot[1], 0)),
                                              cur=total["currency"])
        lines.append(f"- {_t('price', lang)}{colon}{price}")
        if b.get("misses"):
            lines.append(f"- **{_t('misses', lang)}**{colon}" + _t("sep", lang).join(md_escape(m) for m in b["misses"]))
        if inst["mitigations"]:
            lines.append(f"- {_t('mitigations', lang)}{colon}" + " → ".join(md_escape(m) for m in inst["mitigations"]))
    elif b.get("cpu_instance"):
        cpu = b["cpu_instance"]
        count = f" × {cpu['instances']}" if (cpu.get("instances") or 1) > 1 else ""
        lines.append(f"**{_t('cpu_plan', lang)}{colon}`{cpu['instance_type']}`**{count} — {cpu['vcpu']} vCPU, "
                     f"{cpu['memory_gib']:g} GiB")
    else:
        lines.append(f"**{_t('no_plan', lang)}**")
    if b.get("scenarios"):
        lines += ["", f"**{_t('scenarios', lang)}**"]
        for row in b["scenarios"]:
            gpus = f" ({row['total_gpus']} GPU)" if row["total_gpus"] > 1 else ""
            it = f"`{row['instance_type']}`{gpus}" if row["instance_type"] else "-"
            need = f", {row['needed_per_gpu_gib']:g} GiB/GPU" if row["needed_per_gpu_gib"] is not None else ""
            price = f", {row['price_per_hour']:.2f}/h" if row["price_per_hour"] is not None else ""
            lines.append(f"- {md_escape(row['label'])} → {it}{need}{price}")
    if b["reasons"]:
        lines += ["", f"**{_t('why', lang)}**"]
        lines += [f"- [{r['rule_id']}] {md_escape(r['text'])}" for r in b["reasons"]]
    if b["would_change"]:
        lines += ["", f"**{_t('change', lang)}**"]
        lines += [f"- {md_escape(x)}" for x in b["would_change"]]
    if b["assumptions"]:
        lines += ["", f"**{_t('assumed', lang)}**"]
        lines += [f"- {md_escape(a)}" for a in b["assumptions"]]
        if b["more_assumptions"]:
            lines.append(f"- {_t('more_assumed', lang, n=b['more_assumptions'])}")
    if b["alternatives"]:
        lines += ["", f"**{_t('alternatives', lang)}**"]
        for o in b["alternatives"]:
            price = f"{o['price_per_hour']:.2f} {o['currency']}/h" if o["price_per_hour"] is not None else _t("no_price", lang)
            why = f"{_t('sep', lang)}{md_escape(o['why'])}" if o.get("why") else ""
            lines.append(f"- `{o['instance_type']}` — {o['total_gpus']} × {md_escape(o['gpu'])}, {price}{why}")
    inst = b.get("instance") or {}
    # the date of the prices shown (the leading option's price as_of), not the date the catalog was compiled
    lines += ["", _t("more", lang, on=inst.get("price_as_of") or b["catalog_compiled_on"])]
    return "\n".join(lines)
