"""A "how many GPUs" question ("需要多少张 A100？", "how many GPUs?") about a training job that the fewest GPUs hold but
would take weeks: the fewest that hold it is half the answer. The other half is the time on a full instance of that GPU
(8 cards, one machine, no inter-node network): the job is planned again with num_gpus = 8 on the same GPU, and the line
says both, and that a deadline gives the count that meets it. Nothing is sized here: both figures are the advisor's."""

from __future__ import annotations

from typing import Any, Callable

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util.i18n import Text

LONG_JOB_HOURS = 168.0    # a week of wall-clock on the leading option: the count that merely holds the job is not enough
# a month on the leading option: said also when the question does not ask for a count ("DETR 训练 500 个 epoch 需要什么
#配置？" answered with one card for half a year is not a configuration anyone runs)
VERY_LONG_JOB_HOURS = 720.0
FULL_INSTANCE_GPUS = 8    # the most GPUs one catalog instance carries (gn7i-8x, gn7e-c16g1.32xlarge, ebmgn8v)


def _wall_mid(rec: Any) -> float | None:
    cost = getattr(rec, "cost", None)
    inst = getattr(rec, "instance", None)
    if cost is None or inst is None or cost.basis != "job":
        return None
    o = cost.option(inst.instance_type)
    return o.time.wall_hours.mid if o is not None and o.time is not None and o.time.wall_hours is not None else None


def _span(h: float) -> tuple[str, str]:
    if h >= 48:
        d = h / 24
        return (f"{d / 365:.1f} years", f"{d / 365:.1f} 年") if d >= 365 else (f"{d:,.0f} days", f"{d:,.0f} 天")
    return f"{h:,.0f} h", f"{h:,.0f} 小时"


def scale_out_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any,
                   plan_on: Callable[[dict[str, Any]], Any]) -> Text | None:
    """The line, or None: the GPUs or a deadline stated, serving, or a job under a week (a month when the question
    does not ask how many GPUs)."""
    return scale_out(parsed, fields, rec, plan_on)[0]


def scale_out(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any,
              plan_on: Callable[[dict[str, Any]], Any]) -> tuple[Text | None, bool]:
    """(the line or None, whether it carries a deadline-scaled count: the 30-day plan of a job a full instance runs
    for over a month), so the caller does not add a second assumed-deadline plan beside it."""
    from gpu_advisor.ask.lexicon import load_lexicon

    pattern = load_lexicon().keywords.get("count_question")
    if {"num_gpus", "num_nodes", "deadline_hours"} & parsed.stated():
        return None, False
    asks_count = pattern is not None and pattern.search(parsed.text) is not None
    wall, inst = _wall_mid(rec), getattr(rec, "instance", None)
    if wall is None or inst is None or inst.total_gpus >= FULL_INSTANCE_GPUS \
            or wall < (LONG_JOB_HOURS if asks_count else VERY_LONG_JOB_HOURS):
        return None, False
    wider = plan_on({**fields, "num_gpus": FULL_INSTANCE_GPUS, "gpu_preference": inst.gpu_id})
    wide_wall, wide = _wall_mid(wider), getattr(wider, "instance", None)
    if wide_wall is None or wide is None or wide.gpu_id != inst.gpu_id or wide_wall >= wall:
        return None, False
    one_en, one_zh = _span(wall)
    all_en, all_zh = _span(wide_wall)
    nodes = getattr(wide, "nodes", 1) or 1
    where_en = f"{wide.instance_type}" + (f" x {nodes}" if nodes > 1 else "")
    where_zh = f"{wide.instance_type}" + (f" × {nodes} 台" if nodes > 1 else "")
    month_en, month_zh = _month_plan(fields, inst.gpu_id, wide_wall, plan_on)
    return Text(
        en=f"{'How many GPUs' if asks_count else 'GPU count'}: {inst.total_gpus} × {inst.gpu_display} "
           f"{'holds the job but takes' if inst.total_gpus == 1 else 'hold the job but take'} about {one_en} (mid estimate); "
           f"{wide.total_gpus} ({where_en}) about {all_en}{month_en}. A deadline gives the count that meets it.",
        zh=f"{'需要几张卡' if asks_count else '卡数'}：{inst.total_gpus} 张 {inst.gpu_display} 放得下，但约需 {one_zh}"
           f"（中间估计）；{wide.total_gpus} 张（{where_zh}）约 {all_zh}{month_zh}。给出期限可得满足它的卡数。"), bool(month_en)


def _month_plan(fields: dict[str, Any], gpu_id: str, wide_wall: float,
                plan_on: Callable[[dict[str, Any]], Any]) -> tuple[str, str]:
    """When a full instance still takes over a month: the planner's own count for a 30-day deadline (said as that
    assumption), or nothing when it finds none on that GPU."""
    if wide_wall <= VERY_LONG_JOB_HOURS:
        return "", ""
    from gpu_advisor.errors import AdvisorError

    try:
        month = plan_on({**fields, "deadline_hours": VERY_LONG_JOB_HOURS, "gpu_preference": gpu_id})
    except AdvisorError:   # a deadline the catalog cannot meet is no line to add, not a failure of the answer
        return "", ""
    wall, inst = _wall_mid(month), getattr(month, "instance", None)
    if wall is None or inst is None or inst.gpu_id != gpu_id or wall > VERY_LONG_JOB_HOURS:
        return "", ""
    nodes = getattr(inst, "nodes", 1) or 1
    where = f"{inst.instance_type}" + (f" x {nodes}" if nodes > 1 else "")
    span_en, span_zh = _span(wall)
    return (f"; to finish within about 30 days (an assumed deadline) {inst.total_gpus} ({where}), about {span_en}",
            f"；约 30 天内完成（假设的期限）需 {inst.total_gpus} 张（{where.replace(' x ', ' × ')} 台），约 {span_zh}")
