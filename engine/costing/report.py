"""build_cost_report: one best option per GPU model, priced under each purchase model, ranked by cost and time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_advisor.costing import notes as N
from gpu_advisor.costing.basis import HOURS_PER_MONTH
from gpu_advisor.costing.models import CostOption, CostReport, Range, TimeEstimate
from gpu_advisor.costing.purchase import payg_line, savings_line, spot_line
from gpu_advisor.costing.spot_history import load_spot_history
from gpu_advisor.costing.timing import estimate_time, is_batch_inference
from gpu_advisor.util.i18n import Text

if TYPE_CHECKING:
    from gpu_advisor.plan.defaults import Job
    from gpu_advisor.plan.planner import Candidate, Plan

BUDGET_CURRENCY = "CNY"  # Workload.budget_* are in CNY
LEVERS = ("preemptible_spot", "savings_plans")


def best_per_gpu(the_plan: Plan) -> list[Candidate]:
    """The first (best-ranked) option of each GPU model, in the planner's order."""
    seen: set[str] = set()
    out = []
    for c in the_plan.options:
        if c.gpu.id not in seen:
            seen.add(c.gpu.id)
            out.append(c)
    return out


def _is_serving(job: Job) -> bool:
    """A service priced by the month; an offline pass over stated inputs is a job with a total (timing.py)."""
    return getattr(job.workload.task, "value", job.workload.task) == "inference" and not is_batch_inference(job)


def _hours(time: TimeEstimate, job: Job) -> Range | None:
    if _is_serving(job):
        return Range(low=HOURS_PER_MONTH, high=HOURS_PER_MONTH)
    return time.wall_hours


def _violations(c: Candidate, time: TimeEstimate, payg_mid: float | None, job: Job) -> list[Text]:
    w, out = job.workload, list(c.shortfalls)  # frozen Texts: shared, not copied
    in_cny = c.price is not None and c.price.currency == BUDGET_CURRENCY
    if w.budget_per_hour and in_cny and c.hourly > w.budget_per_hour:
        out.append(Text(en=f"{c.hourly:.2f} {BUDGET_CURRENCY}/h exceeds the hourly budget {w.budget_per_hour:g}",
                        zh=f"每小时 {c.hourly:.2f} {BUDGET_CURRENCY} 超出每小时预算 {w.budget_per_hour:g}"))
    if w.budget_total and in_cny and payg_mid is not None and payg_mid > w.budget_total:
        out.append(Text(en=f"about {payg_mid:,.0f} {BUDGET_CURRENCY} (mid estimate) exceeds the total budget {w.budget_total:g}",
                        zh=f"约 {payg_mid:,.0f} {BUDGET_CURRENCY}（中间估计）超出总预算 {w.budget_total:g}"))
    if w.budget_per_hour and c.price is None:
        out.append(Text(en="no price in the catalog: cannot check the hourly budget",
                        zh="目录中没有价格：无法核对每小时预算"))
    elif (w.budget_per_hour or w.budget_total) and c.price is not None and not in_cny:
        out.append(Text(en=f"priced in {c.price.currency}: cannot check a budget in {BUDGET_CURRENCY}",
                        zh=f"价格以 {c.price.currency} 计：无法核对以 {BUDGET_CURRENCY} 计的预算"))
    if w.budget_total and payg_mid is None:
        out.append(Text(en="total cost unknown: cannot check the total budget",
                        zh="总费用未知：无法核对总预算"))
    if w.deadline_hours and time.wall_hours is None and not _is_serving(job):
        out.append(Text(en="time unknown: cannot check the deadline", zh="时长未知：无法核对期限"))
    if w.deadline_hours and time.wall_hours is not None and time.wall_hours.mid > w.deadline_hours:
        out.append(Text(en=f"about {time.wall_hours.mid:.1f} h (mid estimate) misses the {w.deadline_hours:g} h deadline",
                        zh=f"约 {time.wall_hours.mid:.1f} 小时（中间估计）超过 {w.deadline_hours:g} 小时的期限"))
    return out


def cost_option(c: Candidate, job: Job, catalog: Any) -> CostOption:
    time = estimate_time(c, job)
    hours = _hours(time, job)
    history = load_spot_history(catalog.meta.override_file)
    observed = history.find(c.instance.type, job.region) if history else None
    payg = payg_line(c.hourly, hours, _is_serving(job))
    purchases = [payg, spot_line(c.hourly, hours, bool(job.workload.interruptible), observed),
                 savings_line(payg, job.workload.expected_months_of_use, _is_serving(job))]
    p = c.price
    return CostOption(
        instance_type=c.instance.type, family=c.instance.family, gpu_id=c.gpu.id, gpu_display=c.gpu.display_name,
        nodes=c.nodes, gpus_per_node=c.gpus_per_node, total_gpus=c.total_gpus, price_per_hour=c.price_per_hour,
        hourly_total=c.hourly, replicas=c.replicas, currency=p.currency if p else None, region=job.region,
        price_source=p.source if p else None, price_as_of=p.as_of if p else None, price_origin=p.origin if p else None,
        time=time, purchases=purchases,
        violations=_violations(c, time, None if payg.total is None else payg.total.mid, job))


def _cost_key(o: CostOption) -> tuple[int, float]:
    if o.payg_mid is not None:
        return (0, o.payg_mid)
    return (1, o.hourly_total) if o.hourly_total is not None else (2, 0.0)


def _time_key(o: CostOption) -> tuple[int, float]:
    return (0, o.time.wall_hours.mid) if o.time.wall_hours is not None else (1, 0.0)


def _pick(options: list[CostOption], keys: dict[int, tuple[Any, Any]] | None = None
          ) -> tuple[str | None, str | None, str | None]:
    keys = _keys(options) if keys is None else keys
    by_cost = sorted(options, key=lambda o: keys[id(o)])
    by_time = sorted(options, key=lambda o: keys[id(o)][::-1])
    # "cheapest" / "fastest" only among two or more options that have the figure: one option alone is neither
    priced = [o for o in by_cost if _cost_key(o)[0] < 2]
    timed = [o for o in by_time if o.time.wall_hours is not None]
    cheapest = priced[0].instance_type if len(priced) > 1 else None
    fastest = timed[0].instance_type if len(timed) > 1 else None
    fitting = [o for o in by_cost if not o.violations]
    recommended = fitting[0].instance_type if fitting else None
    return cheapest, fastest, recommended


def _keys(options: list[CostOption]) -> dict[int, tuple[Any, Any]]:
    """(cost key, time key) of each option (by id), computed once for the several sorts."""
    return {id(o): (_cost_key(o), _time_key(o)) for o in options}


def _why(report_opts: dict[str, CostOption], cheapest: str | None, fastest: str | None,
         recommended: str | None, serving: bool) -> Text | None:
    if recommended is None:
        return None
    rec = report_opts[recommended]
    basis_en, basis_zh = ("monthly", "每月") if serving else ("total", "总")
    if rec.payg_mid is not None:
        why = Text(en=f"lowest {basis_en} pay-as-you-go cost (about {rec.payg_mid:,.0f} {rec.currency}, mid estimate) "
                      "among the options that meet the constraints",
                   zh=f"在满足约束的方案中按量付费{basis_zh}费用最低（中间估计约 {rec.payg_mid:,.0f} {rec.currency}）")
    elif rec.hourly_total is not None:
        why = Text(en="lowest hourly price among the options that meet the constraints (no job time to compare totals)",
                   zh="在满足约束的方案中小时价最低（缺少作业时长，无法比较总价）")
    else:
        why = Text(en="no option has a price in this region: ranked by time only (planner order where time is unknown)",
                   zh="该地域没有任何方案的价格：仅按时间排序（时间未知时按规划器顺序）")
    unpriced = sum(1 for o in report_opts.values() if o.payg_mid is None)
    untimed = sum(1 for o in report_opts.values() if o.time.wall_hours is None)
    if rec.payg_mid is not None and unpriced:
        why = Text(en=f"{why.en} ({unpriced} of {len(report_opts)} options have no job total to compare: no price or no time)",
                   zh=f"{why.zh}（{len(report_opts)} 个方案中有 {unpriced} 个缺少价格或时间，无法比较总价）")
    timed = len(report_opts) - untimed
    if fastest == recommended and rec.time.wall_hours is not None and timed <= 1:
        why = Text(en=f"{why.en}; it is the only option with a time estimate, so no speed comparison is made",
                   zh=f"{why.zh}；它是唯一有时间估算的方案，因此不作快慢比较")
    elif fastest == recommended and rec.time.wall_hours is not None:
        qual_en = f" of the {timed} options with a time estimate" if untimed else ""
        qual_zh = f"（在 {timed} 个有时间估算的方案中）" if untimed else ""
        why = Text(en=f"{why.en}; it is also the fastest{qual_en}", zh=f"{why.zh}；同时也是最快的{qual_zh}")
    elif fastest is not None and not serving:
        fast = report_opts[fastest]
        but_en, but_zh = ("but costs more", "但更贵") if fast.payg_mid is not None else (
            "but has no price in this region in the catalog", "但目录中没有该地域的价格")
        why = Text(en=f"{why.en}; {fastest} finishes sooner (about {fast.time.wall_hours.mid:.1f} h) {but_en}",
                   zh=f"{why.zh}；{fastest} 更快（约 {fast.time.wall_hours.mid:.1f} 小时）{but_zh}")
    return why


def _relax(options: list[CostOption], job: Job, deadline_notes: list[Text] | None = None) -> list[Text]:
    w, out = job.workload, []
    timed = [o.time.wall_hours.mid for o in options if o.time.wall_hours is not None]
    totals = [o.payg_mid for o in options if o.payg_mid is not None and o.currency == BUDGET_CURRENCY]
    hourly = [o.hourly_total for o in options if o.hourly_total is not None and o.currency == BUDGET_CURRENCY]
    if w.deadline_hours and deadline_notes:
        out.extend(deadline_notes)
    elif w.deadline_hours and timed and min(timed) > w.deadline_hours:
        fastest = min((o for o in options if o.time.wall_hours is not None), key=lambda o: o.time.wall_hours.mid)
        gpu_hours = fastest.time.gpu_hours.mid if fastest.time.gpu_hours else min(timed) * fastest.total_gpus
        needed = -(-int(gpu_hours) // max(1, int(w.deadline_hours)))
        out.append(Text(en=f"deadline: the fastest option needs about {min(timed):.1f} h; allow that, or more GPUs "
                           f"(num_gpus): at {fastest.gpu_display}'s rate ({gpu_hours:,.0f} GPU-hours) about {needed} "
                           f"would meet {w.deadline_hours:g} h",
                        zh=f"期限：最快的方案约需 {min(timed):.1f} 小时；请放宽期限或增加 GPU 数（num_gpus）：按 "
                           f"{fastest.gpu_display} 的速度（{gpu_hours:,.0f} GPU 时），约 {needed} 张可在 {w.deadline_hours:g} 小时内完成"))
    if w.budget_total and totals and min(totals) > w.budget_total and w.interruptible:
        spots = [p.total.low for o in options if o.currency == BUDGET_CURRENCY
                 for p in o.purchases if p.model == "spot" and p.available and p.total is not None]
        low_en = f"; spot (allowed) may cost from about {min(spots):,.0f} CNY, but its price floats and is not " \
                 "guaranteed" if spots else ""
        low_zh = f"；抢占式（已允许）最低约 {min(spots):,.0f} 元起，但价格浮动、没有保证" if spots else ""
        out.append(Text(en=f"total budget: the cheapest option costs about {min(totals):,.0f} CNY pay-as-you-go; raise "
                           f"it{low_en}",
                        zh=f"总预算：最便宜的方案按量约 {min(totals):,.0f} 元；请提高预算{low_zh}"))
    elif w.budget_total and totals and min(totals) > w.budget_total:
        out.append(Text(en=f"total budget: the cheapest option costs about {min(totals):,.0f} CNY pay-as-you-go; raise it, "
                           "or mark the job interruptible to allow spot",
                        zh=f"总预算：最便宜的方案按量约 {min(totals):,.0f} 元；请提高预算，或标明作业可中断以使用抢占式实例"))
    if w.budget_per_hour and hourly and min(hourly) > w.budget_per_hour:
        out.append(Text(en=f"hourly budget: the cheapest option costs {min(hourly):.2f} CNY/h",
                        zh=f"每小时预算：最便宜的方案每小时 {min(hourly):.2f} 元"))
    if not out:
        out.append(Text(en="every option misses a constraint (see each option's notes); relax the budget or deadline, or "
                           "reduce the job (batch, resolution, samples)",
                        zh="每个方案都不满足某项约束（见各方案说明）；请放宽预算或期限，或缩小作业（批大小、分辨率、样本数）"))
    return out


def build_cost_report(plan: Plan | None, job: Job, catalog: Any) -> CostReport | None:
    """Cost and time of the plan's options (one per GPU model); None when there is nothing to cost."""
    if plan is None or not plan.options:
        return None
    cands = best_per_gpu(plan)
    options = [cost_option(c, job, catalog) for c in cands]
    keys = _keys(options)
    cheapest, fastest, recommended = _pick(options, keys)
    by_name = {o.instance_type: o for o in options}
    pairs = sorted(zip(cands, options), key=lambda pair: keys[id(pair[1])])  # each option with its own candidate
    options = [o for _, o in pairs]
    marked = [_marked(o, cheapest, fastest, recommended) for o in options]
    notes, sources = _notes([c for c, _ in pairs], marked)
    priced = next((o for o in options if o.currency), None)
    return CostReport(
        region=job.region, currency=priced.currency if priced else None,
        basis="month" if _is_serving(job) else "job", options=marked,
        by_cost=[o.instance_type for o in sorted(options, key=lambda o: keys[id(o)])],
        by_time=[o.instance_type for o in sorted(options, key=lambda o: keys[id(o)][::-1])],
        cheapest=cheapest, fastest=fastest, recommended=recommended,
        why=_why(by_name, cheapest, fastest, recommended, _is_serving(job)),
        relax=[] if recommended else _relax(options, job, plan.deadline_relax),
        storage=N.storage_lines(job, catalog, max(c.nodes for c in cands), *_storage_basis(by_name, recommended, options)),
        assumptions=notes, sources=sources + _lever_sources(catalog))


def _storage_basis(by_name: dict[str, CostOption], recommended: str | None,
                   options: list[CostOption]) -> tuple[float | None, int]:
    """(mid hours, GPUs) of the option whose read rate the storage lines work out: the recommended one, else the
    fastest with a time."""
    o = by_name.get(recommended) if recommended else None
    if o is None or o.time.wall_hours is None:
        o = min((x for x in options if x.time.wall_hours is not None), key=lambda x: x.time.wall_hours.mid, default=None)
    return (o.time.wall_hours.mid, o.total_gpus) if o is not None else (None, 1)


def _marked(o: CostOption, cheapest: str | None, fastest: str | None, recommended: str | None) -> CostOption:
    """The option with its marks; most options have none and are kept as they are (marks default to [])."""
    marks = [m for m, n in (("cheapest", cheapest), ("fastest", fastest), ("recommended", recommended))
             if n == o.instance_type]
    return o.model_copy(update={"marks": marks}) if marks else o


def _notes(cands: list[Candidate], options: list[CostOption]) -> tuple[list, list[str]]:
    notes, sources = N.base_notes(), []
    for c, o in zip(cands, options):
        if o.time.wall_hours is None:
            continue
        for n, srcs in (N.utilisation_note(c), N.scaling_note(c)):
            notes.append(n)
            sources.extend(s for s in srcs if s not in sources)
        notes.extend(o.time.notes)
    dated = N.price_note(options)
    return N.dedupe(notes + ([dated] if dated else [])), sources


def _lever_sources(catalog: Any) -> list[str]:
    out: list[str] = []
    for lever in LEVERS:
        for fact in catalog.cost_levers.get(lever, ())[:3]:
            if fact.source and fact.source not in out:
                out.append(fact.source)
    return out


def job_hours(candidate: Candidate, job: Job) -> float | None:
    """Wall-clock hours of one option (mid estimate), or None when the time cannot be estimated."""
    hours = estimate_time(candidate, job).wall_hours
    return None if hours is None else hours.mid
