"""Totals of one option under pay-as-you-go, spot and a savings plan (ranges, never invented prices)."""

from __future__ import annotations

from functools import lru_cache

from gpu_advisor.costing import basis
from gpu_advisor.costing.models import PurchaseLine, Range
from gpu_advisor.costing.spot_history import SpotObservation
from gpu_advisor.util.i18n import Text


# Lines and sentences that depend on no option are built once (the models are frozen, so they can be shared):
# a cost report prices about six options under three purchase models per answer.
_PAYG_NO_PRICE = PurchaseLine(model="payg", available=False, note=Text(
    en="no price for this type in this region in the catalog: ranked by time only",
    zh="目录中没有该规格在此地域的价格：仅按时间排序"))
_PAYG_HOURLY_ONLY = Text(en="hourly price only: the job time is unknown", zh="仅有小时价：作业时长未知")
_PAYG_UNIT = {True: Text(en="pay-as-you-go list price, per month of 24x7 operation (730 h)",
                         zh="按量付费目录价，按每月 24×7 运行（730 小时）"),
              False: Text(en="pay-as-you-go list price, price x instances x wall-clock hours",
                          zh="按量付费目录价，单价 × 实例数 × 运行小时数")}


def payg_line(hourly: float | None, hours: Range | None, per_month: bool) -> PurchaseLine:
    if hourly is None:
        return _PAYG_NO_PRICE
    if hours is None:
        return PurchaseLine(model="payg", hourly=Range(low=hourly, high=hourly), note=_PAYG_HOURLY_ONLY)
    return PurchaseLine(model="payg", hourly=Range(low=hourly, high=hourly), total=hours.scale(hourly),
                        note=_PAYG_UNIT[per_month])


def rework_hours(hours: float) -> float:
    """Hours redone after interruptions at the assumed worst-case rate (no protection period)."""
    per_interruption = basis.CHECKPOINT_INTERVAL_H / 2 + basis.RESTART_H
    return hours * basis.INTERRUPTIONS_PER_H_HIGH * per_interruption


def _spot_fraction(observed: SpotObservation | None) -> tuple[float, float, Text]:
    if observed is not None:
        return observed.min_ratio, observed.max_ratio, Text(
            en=f"observed spot/pay-as-you-go ratio {observed.min_ratio:.2f}-{observed.max_ratio:.2f} over "
               f"{observed.period} in {', '.join(observed.zones)} ({observed.source}, {observed.as_of}); past "
               "prices do not bound future ones",
            zh=f"{observed.period} 期间在 {', '.join(observed.zones)} 观察到的抢占式/按量价格比为 "
               f"{observed.min_ratio:.2f}–{observed.max_ratio:.2f}（{observed.source}，{observed.as_of}）；历史价格不代表未来")
    return basis.SPOT_FRACTION_LOW, basis.SPOT_FRACTION_HIGH, _SPOT_PUBLISHED


_SPOT_PUBLISHED = Text(
    en="Alibaba states spot prices go as low as 10 % of pay-as-you-go (up to 90 % off) and states no minimum "
       "discount, so the range runs from 10 % to the full pay-as-you-go price (assumed ceiling)",
    zh="阿里云称抢占式实例价格最低可至按量价格的 10 %（最高省 90 %），未给出最低折扣，因此区间为按量价格的 "
       "10 % 至 100 %（上限为假设）")
_SPOT_NOT_OFFERED = PurchaseLine(model="spot", available=False, note=Text(
    en="not offered: the job is not marked interruptible (it must resume from checkpoints)",
    zh="不提供：作业未标明可中断（需能从检查点恢复）"))
_SPOT_NO_TOTAL = PurchaseLine(model="spot", available=False, note=Text(
    en="no total: price or time unknown", zh="无法给出总价：价格或时长未知"))
_SPOT_REWORK = Text(
    en=f"rework assumed up to one interruption per {1 / basis.INTERRUPTIONS_PER_H_HIGH:g} h, each losing half a "
       f"{basis.CHECKPOINT_INTERVAL_H * 60:g}-minute checkpoint interval plus {basis.RESTART_H * 60:g} min restart; "
       "the instance is released 5 minutes after the notice (save a checkpoint then); an optional 1-hour "
       "protection period avoids interruptions in the first hour at a higher, uncatalogued price",
    zh=f"返工按最坏每 {1 / basis.INTERRUPTIONS_PER_H_HIGH:g} 小时中断一次计，每次损失半个 "
       f"{basis.CHECKPOINT_INTERVAL_H * 60:g} 分钟的检查点间隔另加 {basis.RESTART_H * 60:g} 分钟重启；"
       "中断通知后 5 分钟释放实例（可在此时保存检查点）；可选 1 小时保护期可避免首小时被中断，但价格更高且目录中没有")


def spot_line(hourly: float | None, hours: Range | None, interruptible: bool,
              observed: SpotObservation | None) -> PurchaseLine:
    if not interruptible:
        return _SPOT_NOT_OFFERED
    if hourly is None or hours is None:
        return _SPOT_NO_TOTAL
    low_f, high_f, why = _spot_fraction(observed)
    # spot never bills above pay-as-you-go an hour; with the worst rework at that ceiling spot would cost more than
    # pay-as-you-go for the job, which is then the better choice: the spot range ends at the pay-as-you-go total
    raw_high = (hours.high + rework_hours(hours.high)) * hourly * high_f
    payg_high = hours.high * hourly
    total = Range(low=hours.low * hourly * low_f, high=min(raw_high, payg_high))
    cap_en = cap_zh = ""
    if raw_high > payg_high:
        cap_en = ("; the upper end is capped at the pay-as-you-go total: at a spot price near pay-as-you-go, with "
                  "rework, pay-as-you-go costs less, so use it")
        cap_zh = "；上限取按量付费总价：抢占式价格接近按量价格时，算上返工反而更贵，应改用按量付费"
    return PurchaseLine(model="spot", total=total, hourly=Range(low=hourly * low_f, high=hourly * high_f),
                        note=Text(en=f"{why.en}; {_SPOT_REWORK.en}{cap_en}", zh=f"{why.zh}；{_SPOT_REWORK.zh}{cap_zh}"))


@lru_cache(maxsize=8)  # the report asks for utilisation 1.0 once per option
def break_even_months(utilisation: float = 1.0) -> Range:
    """Months of use after which a 1-year commitment at the assumed discount beats pay-as-you-go.

    commitment = (1 - d) x hourly x 8760; pay-as-you-go after m months = hourly x 730 x u x m
    => m* = 12 x (1 - d) / u  (independent of the price).
    """
    term = basis.SAVINGS_TERM_MONTHS
    return Range(low=term * (1 - basis.SAVINGS_DISCOUNT_HIGH) / utilisation,
                 high=term * (1 - basis.SAVINGS_DISCOUNT_LOW) / utilisation)


def savings_line(payg: PurchaseLine, months: float | None, per_month: bool = False) -> PurchaseLine:
    """A job shorter than the break-even point still pays the whole commitment: its total is then the 1-year
    commitment (hourly x (1 - discount) x 12 x 730 h), never a discounted job total that would undercut the
    pay-as-you-go it is said to lose to."""
    keep_low, keep_high = 1 - basis.SAVINGS_DISCOUNT_HIGH, 1 - basis.SAVINGS_DISCOUNT_LOW
    even = break_even_months()
    if payg.hourly is None:
        return _savings_unavailable(months)
    total = None if payg.total is None else Range(low=payg.total.low * keep_low, high=payg.total.high * keep_high)
    if total is not None and not per_month and (months is None or months < even.high):
        term_h = basis.SAVINGS_TERM_MONTHS * basis.HOURS_PER_MONTH
        commitment = Range(low=payg.hourly.low * keep_low * term_h, high=payg.hourly.high * keep_high * term_h)
        total = Range(low=max(total.low, commitment.low), high=max(total.high, commitment.high))
    hourly = Range(low=payg.hourly.low * keep_low, high=payg.hourly.high * keep_high)
    return PurchaseLine(model="savings_plan", total=total, hourly=hourly, break_even_months=even,
                        note=_savings_note(months))


@lru_cache(maxsize=256)
def _savings_unavailable(months: float | None) -> PurchaseLine:
    return PurchaseLine(model="savings_plan", available=False, break_even_months=break_even_months(),
                        note=_savings_note(months))


@lru_cache(maxsize=256)  # the same for every option of an answer: it depends on the expected months of use only
def _savings_note(months: float | None) -> Text:
    even = break_even_months()
    base = Text(
        en=f"ASSUMED discount {basis.SAVINGS_DISCOUNT_LOW:.0%}-{basis.SAVINGS_DISCOUNT_HIGH:.0%} (Alibaba publishes "
           f"'up to 76 %'; GPU-family rates are not in the catalog, query QuerySavingsPlansDiscount); a 1-year "
           f"commitment breaks even after 12 x (1 - discount) = {even.low:.1f}-{even.high:.1f} months of 24x7 use",
        zh=f"假设折扣 {basis.SAVINGS_DISCOUNT_LOW:.0%}–{basis.SAVINGS_DISCOUNT_HIGH:.0%}（阿里云公布“最高 76 %”；目录中没有 "
           f"GPU 规格族的费率，请用 QuerySavingsPlansDiscount 查询）；1 年期承诺在 24×7 使用 12 × (1 − 折扣) = "
           f"{even.low:.1f}–{even.high:.1f} 个月后回本")
    verdict = _verdict(months, even)
    return Text(en=f"{base.en}; {verdict.en}", zh=f"{base.zh}；{verdict.zh}")


def _verdict(months: float | None, even: Range) -> Text:
    if months is None or months < even.low:
        shown = "under 1" if months is None else f"{months:g}"
        return Text(en=f"with {shown} month(s) of expected use, pay-as-you-go is cheaper",
                    zh=f"预计使用 {'不足 1' if months is None else f'{months:g}'} 个月，按量付费更便宜")
    if months >= even.high:
        return Text(en=f"with {months:g} months of expected use, a commitment pays off at any assumed discount",
                    zh=f"预计使用 {months:g} 个月，在假设的任一折扣下承诺都更划算")
    return Text(en=f"with {months:g} months of expected use, it depends on the actual discount",
                zh=f"预计使用 {months:g} 个月，是否划算取决于实际折扣")
