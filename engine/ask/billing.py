"""The answer to a question about how to pay or where to run ("抢占式划算吗", "包年包月和按量哪个划算", "spot: how much
cheaper?", "用 PAI-EAS 部署和自己买 ECS 哪个便宜"): the purchase models of the leading option side by side, and what the
knowledge base says about the platform named, first. The figures are the cost report's (costing/): nothing is computed
here, and what the catalog lacks (a subscription price, a PAI unit price) is said, never invented. The patterns are the
lexicon's (`interruptible_yes`, `subscription_question`, `platform_*`)."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.verdict import _money, _range
from gpu_advisor.util.i18n import Text

# platform words of the lexicon (keywords platform_*) -> the rules whose advice answers them
PLATFORM_RULES = {"platform_eas": ("PLAT-EAS", "COST-SERVE-ALWAYS-ON"), "platform_dlc": ("PLAT-DLC",),
                  "platform_dsw": ("PLAT-DSW",), "platform_lingjun": ("PLAT-LINGJUN",), "platform_fc": ("PLAT-FC-GPU",)}


def _asks(parsed: ParsedQuestion, key: str) -> bool:
    from gpu_advisor.ask.lexicon import load_lexicon

    pattern = load_lexicon().keywords.get(key)
    return pattern is not None and pattern.search(parsed.text) is not None


def _span(line: Any) -> str | None:
    return _range(line.total, _money) if line is not None and line.available and line.total is not None else None


def billing_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """Pay-as-you-go against spot (when the question asks about spot) and against a commitment (when it asks about a
    subscription or long-term use), for the leading option; None when not asked or there is no priced option."""
    spot, commit = _asks(parsed, "interruptible_yes"), _asks(parsed, "subscription_question")
    inst, cost = rec.instance, getattr(rec, "cost", None)
    opt = cost.option(inst.instance_type) if (spot or commit) and inst is not None and cost is not None else None
    payg = opt.purchase("payg") if opt is not None else None
    if payg is None or not payg.available or payg.total is None:
        return None
    cur = opt.currency or "CNY"
    month = cost.basis == "month"
    en = [f"pay-as-you-go {_span(payg)} {cur} {'a month (24×7)' if month else 'for the job'}"]
    zh = [f"按量付费{'每月（24×7）' if month else '整个作业'}约 {_span(payg)} {cur}"]
    if spot:
        line = opt.purchase("spot")
        if _span(line):
            en.append(f"spot about {_span(line)} {cur} (the spot price floats between 10 % and 100 % of pay-as-you-go; "
                      "rework after interruptions included)")
            zh.append(f"抢占式约 {_span(line)} {cur}（抢占价在按量价的 10%–100% 间浮动，含中断后的返工）")
        elif line is not None:
            en.append(f"spot: {line.note.en}")
            zh.append(f"抢占式：{line.note.zh}")
        if month:   # a service: spot can be taken back at any time, which a 24x7 service alone cannot take
            en.append("but a spot instance can be reclaimed (released 5 minutes after the interruption notice, once its "
                      "protected first hour is over), so a service on spot alone goes down when it is: keep the "
                      "replicas that must stay up on pay-as-you-go (or subscription) and add spot ones only for extra "
                      "capacity (an Auto Provisioning group mixes the two and falls back to pay-as-you-go)")
            zh.append("但抢占式实例随时可能被回收（中断通知后 5 分钟释放，默认保护期 1 小时之后），只用抢占式的服务会随之中断："
                      "必须常在线的副本用按量付费（或包年包月），抢占式只用于额外容量（弹性供应组可混合两者，并在抢占式不足时"
                      "改用按量付费）")
    if commit:
        line = opt.purchase("savings_plan")
        en.append("the catalog has no subscription (monthly / yearly) price for GPU types")
        zh.append("目录中没有 GPU 规格的包年包月价格")
        if line is not None and line.available and line.hourly is not None and payg.hourly is not None:
            be = line.break_even_months
            be_en = f", paying off after {_range(be, lambda v: f'{v:.1f}')} months of 24×7 use" if be else ""
            be_zh = f"，24×7 使用 {_range(be, lambda v: f'{v:.1f}')} 个月后回本" if be else ""
            en.append(f"a 1-year savings plan at an ASSUMED 30–76 % discount is {_range(line.hourly, _money)} {cur}/h "
                      f"against {_range(payg.hourly, _money)} {cur}/h pay-as-you-go{be_en}")
            zh.append(f"1 年期节省计划按假设折扣 30%–76% 约每小时 {_range(line.hourly, _money)} {cur}（按量 "
                      f"{_range(payg.hourly, _money)} {cur}）{be_zh}")
    return Text(en=f"On {inst.instance_type}: {'; '.join(en)}.", zh=f"按 {inst.instance_type}：{'；'.join(zh)}。")


QUANTIZED = ("int8", "int4", "fp8", "fp4")


def _month_or_job(rec: Any) -> tuple[float, str] | None:
    """(the leading option's pay-as-you-go total at its mid, its currency) or None."""
    inst, cost = rec.instance, getattr(rec, "cost", None)
    opt = cost.option(inst.instance_type) if inst is not None and cost is not None else None
    payg = opt.purchase("payg") if opt is not None else None
    if payg is None or not payg.available or payg.total is None:
        return None
    return (payg.total.low + payg.total.high) / 2, opt.currency or "CNY"


def savings_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any, plan_on: Any) -> Text | None:
    """"换成 int4 量化能省多少钱": the serving plan with the stated weight format against the same job with 16-bit
    weights (each a plan of its own, priced the same way), and the difference; None when not asked or not priced."""
    fmt = str(fields.get("quantization") or "")
    if not _asks(parsed, "savings_question") or fmt not in QUANTIZED or fields.get("task") != "inference":
        return None
    try:
        other = plan_on({**fields, "quantization": "none", "lang": rec.lang})
    except Exception:   # noqa: BLE001 - no 16-bit plan to compare with: nothing is said
        return None
    mine, theirs = _month_or_job(rec), _month_or_job(other)
    if mine is None or theirs is None or mine[1] != theirs[1] or other.instance is None:
        return None
    a, b = rec.instance, other.instance
    month = rec.cost.basis == "month"
    per_en, per_zh = ("a month (24×7)", "每月（24×7）") if month else ("for the job", "整个作业")
    saved = theirs[0] - mine[0]
    pct = 100 * saved / theirs[0] if theirs[0] else 0.0
    verb_en = f"saves about {_money(saved)} {mine[1]} {per_en} ({pct:.0f} %)" if saved > 0 else "saves nothing here"
    verb_zh = f"{per_zh}约省 {_money(saved)} {mine[1]}（{pct:.0f}%）" if saved > 0 else "在这里省不了钱"
    return Text(
        en=f"{fmt.upper()} weights: {a.total_gpus} × {a.gpu_display} ({a.instance_type}) about {_money(mine[0])} "
           f"{mine[1]} {per_en}; 16-bit weights: {b.total_gpus} × {b.gpu_display} ({b.instance_type}) about "
           f"{_money(theirs[0])}: {fmt.upper()} {verb_en}. Evaluate accuracy before serving quantized weights.",
        zh=f"{fmt.upper()} 权重：{a.total_gpus} 张 {a.gpu_display}（{a.instance_type}）{per_zh}约 {_money(mine[0])} {mine[1]}；"
           f"16 位权重：{b.total_gpus} 张 {b.gpu_display}（{b.instance_type}）约 {_money(theirs[0])} {mine[1]}：{fmt.upper()} "
           f"{verb_zh}。上线量化权重前请评测精度。")


def _meets(rec: Any, fields: dict[str, Any]) -> bool | None:
    """Whether the leading option keeps the stated budgets (per hour, total); None when it cannot be told."""
    inst, cost = rec.instance, getattr(rec, "cost", None)
    opt = cost.option(inst.instance_type) if inst is not None and cost is not None else None
    if opt is None:
        return None
    per_hour, total = fields.get("budget_per_hour"), fields.get("budget_total")
    payg = opt.purchase("payg")
    checks = []
    if per_hour is not None and opt.hourly_total is not None:
        checks.append(opt.hourly_total <= per_hour)
    if total is not None and payg is not None and payg.total is not None:
        checks.append(payg.total.low <= total)
    return all(checks) if checks else None


def budget_route_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any, plan_on: Any) -> Text | None:
    """"预算每小时 20 块，能部署 Qwen2.5-14B 吗？": a serving plan over the stated budget, with no weight format stated,
    may keep the budget with 8- or 4-bit weights; the first that does is said (a plan of its own), never chosen for the
    user: the question did not ask to quantize."""
    if (fields.get("task") != "inference" or fields.get("quantization") is not None
            or (fields.get("budget_per_hour") is None and fields.get("budget_total") is None) or _meets(rec, fields) is not False):
        return None
    for fmt in ("int8", "int4"):
        try:
            other = plan_on({**fields, "quantization": fmt, "lang": rec.lang})
        except Exception:   # noqa: BLE001 - a format the model cannot take: try the next
            continue
        if other.instance is None or _meets(other, fields) is not True:
            continue
        b = other.instance
        opt = other.cost.option(b.instance_type)
        hourly = opt.hourly_total if opt is not None else None
        cur = (opt.currency if opt is not None else None) or "CNY"
        price_en = f", {_money(hourly)} {cur}/h" if hourly is not None else ""
        price_zh = f"，每小时 {_money(hourly)} {cur}" if hourly is not None else ""
        return Text(en=f"Within the budget with {fmt.upper()} weights (not asked for): {b.total_gpus} × {b.gpu_display} "
                       f"({b.instance_type}){price_en}. Evaluate accuracy before serving quantized weights.",
                    zh=f"用 {fmt.upper()} 权重可在预算内（问题未要求量化）：{b.total_gpus} 张 {b.gpu_display}"
                       f"（{b.instance_type}）{price_zh}。上线量化权重前请评测精度。")
    return None


def platform_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """A PAI platform (or Function Compute) named in the question: what the rules say about it for this job, and that
    the prices shown are ECS list prices (the catalog has no PAI unit price)."""
    named = [key for key in PLATFORM_RULES if _asks(parsed, key)]
    if not named or rec.instance is None:
        return None
    fired = {i.rule_id: i for i in rec.sections}
    rules = [r for key in named for r in PLATFORM_RULES[key] if r in fired]
    en = "".join(f"{r}: {fired[r].text.en} " for r in rules)
    zh = "".join(f"{r}：{fired[r].text.zh}" for r in rules)
    return Text(en=f"{en}Prices here are ECS pay-as-you-go list prices of the same instance type; the catalog has no "
                   "PAI unit price: compare with the PAI console's price for that type.",
                zh=f"{zh}此处价格为同一实例规格的 ECS 按量目录价；目录中没有 PAI 的单价，请在 PAI 控制台核对该规格的价格。")


__all__ = ["billing_line", "budget_route_line", "platform_line", "savings_line"]
