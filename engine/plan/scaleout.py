"""Scale a plan out until it meets the stated deadline: more GPUs in one instance, then more instances.

The planner sizes each GPU model by memory alone (the fewest GPUs that hold the job). When the user gives a
deadline and has not fixed the GPU count, each GPU model's plan that misses it (mid estimate, costing/timing.py)
is replaced by the same plan on twice the GPUs, again and again up to ladder.MAX_TOTAL_GPUS, until its time fits;
beyond one instance only types Alibaba positions for training qualify, with RDMA where the traffic over TCP would
dominate (planner._candidates_for, costing/internode.py).
What cannot be met is said with the numbers: the best time reached and on how many GPUs.
"""

from __future__ import annotations

import math

from typing import TYPE_CHECKING, Any

from gpu_advisor.costing.timing import estimate_time
from gpu_advisor.util.i18n import Text
from gpu_advisor.plan.ladder import MAX_TOTAL_GPUS, ZERO_STAGES, Variant, _offload_applies, _stages
from gpu_advisor.plan.planner import (Candidate, Plan, _candidates_for, _estimate, _fits, _prices, _usable_types_by_gpu,
                                      stage_key)
from gpu_advisor.workload import Distributed, Task

if TYPE_CHECKING:
    from gpu_advisor.kb.catalog import Catalog
    from gpu_advisor.plan.defaults import Job



DEADLINE_PLAN_EN = "To finish within the"   # how the plan scaled out for a deadline starts (ask/asked.count_line)

def _mid_hours(c: Candidate, job: Job) -> float | None:
    hours = estimate_time(c, job).wall_hours
    return None if hours is None else hours.mid


def _wider(c: Candidate, n: int, stage: Distributed | None = None) -> Variant:
    w = c.variant.workload
    update: dict[str, Any] = {"num_gpus": n}
    if stage is not None:
        update["distributed"] = stage
    elif w.distributed in (None, Distributed.none):
        update["distributed"] = Distributed.ddp
    # a sequence-parallel plan keeps its degree: n / sp data-parallel groups of sp GPUs (DeepSpeed-Ulysses with DP)
    return Variant(c.variant.step, w.model_copy(update=update), n, c.variant.accum_steps, c.variant.sp)


def _widest_fit(c: Candidate, n: int, job: Job, memo: dict) -> tuple[Variant, Any]:
    """The plan of ``c`` on n GPUs. A ZeRO plan the user did not fix takes, at n, the stage that moves the fewest
    bytes per micro-step among those that fit the card (costing/comm.stage_bytes; equal traffic: more memory to
    spare), as the planner does at the memory-alone count (planner._best_stage): ZeRO-3 needed on 2 GPUs is not
    needed on 32, where its parameter all-gathers are pure cost. The ladder's stages for the job bound the choice
    (ladder._stages: ZeRO-3 only for LoRA / QLoRA; never less than the user asked for)."""
    variant = _wider(c, n)
    estimate = _estimate(memo, variant.workload, variant.sp)
    given = c.variant.workload.distributed
    if given not in ZERO_STAGES or job.original.distributed is not None:
        return variant, estimate
    allowed = _stages(job.original.distributed, _offload_applies(job.workload))
    best = None
    for stage in allowed:
        v = variant if stage == given else _wider(c, n, stage)
        est = estimate if stage == given else _estimate(memo, v.workload, v.sp)
        if not _fits(est, c.gpu, strict=True) and not (stage == given and _fits(est, c.gpu)):
            continue
        key = stage_key(v, est)
        if best is None or key < best[0]:
            best = (key, v, est)
    return (variant, estimate) if best is None else (best[1], best[2])


def _scale_one(catalog: Catalog, c: Candidate, job: Job, region: str, memo: dict, hosts: dict,
               deadline: float) -> tuple[list[Candidate], float | None, int, list[Candidate]]:
    """The cheapest-ranked candidates of this GPU at the fewest GPUs that meet the deadline (empty when none), the
    best mid time reached with its GPU count, and the candidates at that count."""
    types, max_per_node = _usable_types_by_gpu(catalog, True).get(c.gpu.id, ({}, 0))
    prices = _prices(catalog, region)
    best_hours, best_gpus, fastest = _mid_hours(c, job), c.total_gpus, []
    counts = sorted(k for k in types if k > c.total_gpus)
    n = max_per_node * 2
    while n <= MAX_TOTAL_GPUS:
        if n > c.total_gpus:
            counts.append(n)
        n *= 2
    for n in counts:
        variant, estimate = _widest_fit(c, n, job, memo)
        if not _fits(estimate, c.gpu):
            break
        tight = not _fits(estimate, c.gpu, strict=True)
        cands = sorted(_candidates_for(variant.workload, c.gpu, types, max_per_node, variant, estimate, prices, hosts,
                                       tight), key=Candidate.rank_key)
        if not cands:
            if n > max_per_node:
                break  # several instances need RDMA and a family positioned for training: none of this GPU has both
            continue
        for cand in cands:
            cand.scaled_from = c.total_gpus
        hours = _mid_hours(cands[0], job)
        if hours is None:
            break
        if best_hours is None or hours < best_hours:
            best_hours, best_gpus, fastest = hours, n, cands
        if hours <= deadline:
            return cands, hours, n, cands
    return [], best_hours, best_gpus, fastest


def scale_for_deadline(catalog: Catalog, the_plan: Plan, job: Job, region: str, memo: dict, hosts: dict) -> Plan:
    """``the_plan`` with every GPU model's plan scaled out to meet the deadline where it can (in place)."""
    w = job.workload
    deadline = w.deadline_hours
    if deadline and w.task != Task.inference and (job.original.num_gpus or job.original.num_nodes) \
            and the_plan.chosen is not None:
        _stated_count_deadline(the_plan, job, deadline)
    if not deadline or w.task == Task.inference or job.original.num_gpus or job.original.num_nodes \
            or not the_plan.options:
        return the_plan
    firsts: dict[str, Candidate] = {}
    for c in the_plan.options:
        firsts.setdefault(c.gpu.id, c)
    options: list[Candidate] = []
    best: tuple[float, int, Candidate] | None = None
    for gpu_id, first in firsts.items():
        same = [c for c in the_plan.options if c.gpu.id == gpu_id]
        hours = _mid_hours(first, job)
        if hours is None:  # no time: it cannot be shown to meet the deadline, so it ranks after those that do
            for c in same:
                c.misses_deadline = True
        if hours is None or hours <= deadline:
            options.extend(same)
            continue
        scaled, reached, gpus, fastest = _scale_one(catalog, first, job, region, memo, hosts, deadline)
        if scaled:
            options.extend(scaled)
        else:  # the fastest this GPU gets, marked: the answer shows how close it comes
            for c in fastest or same:
                c.misses_deadline = True
            options.extend(fastest or same)
        if reached is not None and (best is None or reached < best[0]):
            best = (reached, gpus, first)
    options.sort(key=Candidate.rank_key)
    if the_plan.preferred:
        options.sort(key=lambda c: c.gpu.id not in the_plan.preferred)
    the_plan.options = options
    the_plan.chosen = options[0]
    hours_of = {id(c): _mid_hours(c, job) for c in options}
    timed = [c for c in options if hours_of[id(c)] is not None]
    if timed and all(c.misses_deadline for c in timed) and best is not None:
        cannot = _cannot(catalog, deadline, best, job, options)
        the_plan.deadline_notes.append(cannot)
        the_plan.deadline_relax.append(cannot)
        # nothing meets it: the fastest plan with a time leads (an option without one cannot be shown to come closer)
        options.sort(key=lambda c: (c.hard_shortfall, hours_of[id(c)] is None, hours_of[id(c)] or 0.0))
        the_plan.chosen = options[0]
    elif the_plan.chosen.scaled_from and not the_plan.chosen.misses_deadline:
        c = the_plan.chosen
        hours = _mid_hours(c, job) or 0.0
        link_en, link_zh = ("RDMA", "RDMA") if c.instance.rdma != "none" else ("TCP", "TCP")
        nodes_en = f" on {c.nodes} machines connected over {link_en}" if c.nodes > 1 else " in one instance"
        nodes_zh = f"，{c.nodes} 台机器经 {link_zh} 互联" if c.nodes > 1 else "，单台实例"
        the_plan.deadline_notes.append(Text(
            en=f"{DEADLINE_PLAN_EN} {deadline:g} h deadline the plan uses {c.total_gpus} × {c.gpu.display_name}"
               f"{nodes_en} (memory alone needs {c.scaled_from}): about {hours:,.0f} h (mid estimate).",
            zh=f"为在 {deadline:g} 小时期限内完成，方案用 {c.total_gpus} 张 {c.gpu.display_name}{nodes_zh}"
               f"（仅按显存只需 {c.scaled_from} 张）：约 {hours:,.0f} 小时（中间估计）。"))
    return the_plan


def _stated_count_deadline(the_plan: Plan, job: Job, deadline: float) -> None:
    """The GPU count is stated (so nothing is scaled out) and the leading option misses the stated deadline: said
    first, with the GPUs of this kind the deadline would take at its rate (GPU-hours / deadline, a lower bound:
    more GPUs add communication)."""
    c = the_plan.chosen
    hours = _mid_hours(c, job)
    if hours is None or hours <= deadline:
        return
    time = estimate_time(c, job)
    gpu_hours = time.gpu_hours.mid if time.gpu_hours else hours * c.total_gpus
    needed = math.ceil(gpu_hours / deadline)
    c.misses_deadline = True
    the_plan.deadline_notes.append(Text(
        en=f"The {deadline:g} h deadline is not met on the {c.total_gpus} × {c.gpu.display_name} stated: about "
           f"{hours:,.0f} h (mid estimate). The job is about {gpu_hours:,.0f} GPU-hours on this GPU, so {deadline:g} h "
           f"takes at least {needed} of them (more GPUs add communication); ask without the GPU count to plan it, or "
           "reduce the job (samples, epochs, sequence length).",
        zh=f"按所述 {c.total_gpus} 张 {c.gpu.display_name}，{deadline:g} 小时的期限无法满足：约需 {hours:,.0f} 小时（中间估计）。"
           f"该作业在此 GPU 上约 {gpu_hours:,.0f} GPU 时，{deadline:g} 小时内完成至少需 {needed} 张（卡越多通信越多）；"
           "去掉卡数再问即可按期限规划，或缩小作业（样本数、轮数、序列长度）。"))


def _cannot(catalog: Catalog, deadline: float, best: tuple[float, int, Candidate], job: Job,
            options: list[Candidate]) -> Text:
    """Why the deadline cannot be met, with the numbers: the fastest plan found, the GPUs the deadline would take at
    that plan's rate, and what limits scaling out (no multi-machine type of that GPU; GPUs without a throughput)."""
    hours, gpus, first = best
    time = estimate_time(first, job)
    gpu_hours = time.gpu_hours.mid if time.gpu_hours else hours * gpus
    needed = math.ceil(gpu_hours / deadline)
    types, max_per_node = _usable_types_by_gpu(catalog, True).get(first.gpu.id, ({}, 0))
    untimed = sorted({c.gpu.display_name for c in options if _mid_hours(c, job) is None})
    if needed <= gpus:
        limit_en = limit_zh = ""
    elif gpus >= MAX_TOTAL_GPUS:
        limit_en = f"this advisor plans at most {MAX_TOTAL_GPUS} GPUs in one job (and scaling is not linear that far)"
        limit_zh = f"本工具单个作业最多规划 {MAX_TOTAL_GPUS} 张 GPU（且扩展到这个规模时并非线性加速）"
    elif gpus <= max_per_node:
        limit_en = (f"one instance carries at most {max_per_node} of them and the catalog has no multi-machine type of "
                    "this GPU that Alibaba positions for training (with RDMA where the traffic needs it)")
        limit_zh = f"单台实例最多 {max_per_node} 张，而目录中没有该 GPU 定位于训练（通信需要时带 RDMA）的多机规格"
    else:
        limit_en = f"more than {gpus} of them did not fit the job or had no usable instance layout"
        limit_zh = f"超过 {gpus} 张时作业放不下或没有可用的实例组合"
    untimed_en = (f"; {', '.join(untimed)} have no throughput figure for this precision in the catalog, so whether "
                  "they meet it is unknown" if untimed else "")
    untimed_zh = (f"；{'、'.join(untimed)} 在目录中没有该精度的算力数据，能否满足无法判断" if untimed else "")
    return Text(
        en=f"The {deadline:g} h deadline cannot be met: the fastest plan found, {gpus} × {first.gpu.display_name}, needs "
           f"about {hours:,.0f} h (mid estimate); the job is about {gpu_hours:,.0f} GPU-hours on this GPU, so {deadline:g} h "
           f"would take about {needed} of them" + (f", but {limit_en}" if limit_en else "") + untimed_en
           + f". Allow about {hours:,.0f} h, or reduce the job (tokens / samples, epochs, model size).",
        zh=f"{deadline:g} 小时的期限无法满足：找到的最快方案为 {gpus} 张 {first.gpu.display_name}，约需 {hours:,.0f} 小时（中间估计）；"
           f"该作业在此 GPU 上约 {gpu_hours:,.0f} GPU 时，{deadline:g} 小时内完成约需 {needed} 张"
           + (f"，但{limit_zh}" if limit_zh else "") + untimed_zh
           + f"。请放宽到约 {hours:,.0f} 小时，或缩小作业（token / 样本数、轮数、模型规模）。")
