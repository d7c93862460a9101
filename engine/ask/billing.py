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


__all__ = ["billing_line", "platform_line"]
