"""Numbers as an answer shows them: hours, money, ranges, purchase totals (no template engine needed)."""

from __future__ import annotations

from typing import Any


def num(value: Any) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value == int(value) and abs(value) >= 10:
        return f"{value:.0f}"
    return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"


def hours(x: float) -> str:
    return f"{'%.0f' % (x * 60)} min" if x < 1 else num(x)


def money(x: float) -> str:
    return "{:,.0f}".format(x) if x >= 100 else "%.2f" % x


def _cell(x: float, kind: str) -> str:
    return hours(x) if kind == "h" else money(x) if kind == "m" else num(x)


def span(rg: Any, kind: str) -> str:
    """A Range as "low" (when low == high) or "low–high", each formatted by kind: h(ours), m(oney), n(umber)."""
    if rg.high - rg.low < 1e-9 * (rg.high + 1):
        return _cell(rg.low, kind)
    return f"{_cell(rg.low, kind)}–{_cell(rg.high, kind)}"


def purchase_total(option: Any, model: str, not_offered: str) -> str:
    """The total (or hourly) cost cell of one purchase model of a cost option."""
    line = option.purchase(model)
    if line is None or not line.available:
        return not_offered
    if line.total is not None:
        return span(line.total, "m")
    if line.hourly is not None:
        return span(line.hourly, "m") + "/h"
    return "-"


__all__ = ["hours", "money", "num", "purchase_total", "span"]
