"""What the user stated and the plan could not keep, said first.

- A GPU count (num_gpus, or num_nodes machines) on which no GPU of the catalog holds the job, even after every
  mitigation: the job is planned again with the count free, and the answer says first why the stated count fails
  (the most aggressive plan on that count, per GPU, against the card) and what holds it instead. A stated count is
  never answered with "no instance fits" while the catalog has a configuration that holds the job.
- A distributed strategy (DDP, ZeRO-1 / 2 / 3, FSDP) stated for a training job: every plan shards with it only (no
  ZeRO-3 or CPU offload at ZeRO-3 for a stated ZeRO-2 because it is cheaper); when no GPU holds the job with it, the
  job is planned again with the strategy free (the GPU count kept), and the answer says first why the stated
  strategy fails (its most aggressive plan, per GPU, on the largest card) and what holds it instead.
- Weights quantized although the question did not ask for it (the serving chain's INT8 step) on the option that
  leads: the answer says so first, with the 16-bit need, and names an option that holds the job as asked when the
  plan has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_advisor.plan.ladder import STEP_OFFLOAD
from gpu_advisor.plan.planner import Chains, Plan, _chain, _estimate, _usable_types_by_gpu, plan
from gpu_advisor.util.i18n import Text
from gpu_advisor.workload import Task, Workload, enum_value

if TYPE_CHECKING:
    from gpu_advisor.kb.catalog import GPU, Catalog
    from gpu_advisor.plan.defaults import Job


def _stated(job: Job) -> tuple[int | None, int | None]:
    w = job.workload
    return w.num_gpus if job.original.num_gpus else None, w.num_nodes if job.original.num_nodes else None


def _need_on_stated(catalog: Catalog, job: Job, gpu: GPU, memo: dict) -> tuple[float, bool] | None:
    """Per-GPU device memory of the most aggressive step of the chain on the stated count that keeps the model states
    on the GPUs, on this GPU, and whether the chain has a CPU-offload step beyond it."""
    types, max_per_node = _usable_types_by_gpu(catalog, job.workload.task != Task.inference).get(gpu.id, ({}, 0))
    if not types:
        return None
    steps = _chain(job.workload, gpu, max_per_node, Chains())
    kept = [s for s in steps if s.step != STEP_OFFLOAD]
    last = kept[-1]   # a sequence-parallel step is estimated at its degree (ladder.Step.sp)
    return _estimate(memo, last.variant(job.workload).workload, last.sp).device_total_gib, len(kept) < len(steps)


STRATEGY_NAMES = {"ddp": "DDP", "fsdp": "FSDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3"}


def keeps_strategy(job: Job) -> bool:
    """The user stated the distributed strategy of a training job (the plan then shards with it only)."""
    return job.original.distributed is not None and job.workload.task != Task.inference


def _strategy_name(w: Workload) -> str:
    return STRATEGY_NAMES.get(enum_value(w.distributed, "none"), enum_value(w.distributed, "none"))


def relax_stated_strategy(catalog: Catalog, the_plan: Plan, job: Job, region: str, memo: dict, hosts: dict) -> Plan:
    """``the_plan`` (made with the stated strategy kept) when it has an option or no strategy was stated; else the plan
    with the strategy free (the stated GPU count kept), with why the stated strategy fails said first."""
    if the_plan.chosen is not None or not keeps_strategy(job):
        return the_plan
    free = plan(catalog, job.workload, region, memo=memo, hosts=hosts,
                precision_given=job.original.precision is not None)
    if free.chosen is None:
        return the_plan
    name = _strategy_name(job.workload)
    asked = [catalog.gpus[g] for g in sorted(free.preferred) if g in catalog.gpus]
    card = max(asked or [o.gpu for o in free.options], key=lambda g: g.memory_gb or 0.0)
    types, max_per_node = _usable_types_by_gpu(catalog, True).get(card.id, ({}, 0))
    steps = _chain(job.workload, card, max_per_node, Chains(keep_strategy=True)) if types else []
    kept = [st for st in steps if st.step != STEP_OFFLOAD]
    need_en = need_zh = ""
    if kept:
        last = kept[-1].variant(job.workload).workload
        need = _estimate(memo, last).device_total_gib
        need_en = f": with every other mitigation it needs about {need:.1f} GiB per GPU on {card.display_name}"
        need_zh = f"：采取其他全部显存优化措施后，在 {card.display_name} 上每卡仍约需 {need:.1f} GiB"
    c = free.chosen
    got = c.variant.workload
    change_en = "CPU offload" if got.cpu_offload else _strategy_name(got)
    change_zh = "CPU 卸载" if got.cpu_offload else _strategy_name(got)
    machines_en = f" on {c.nodes} machines" if c.nodes > 1 else ""
    machines_zh = f"（{c.nodes} 台）" if c.nodes > 1 else ""
    note = Text(
        en=f"With {name} as you stated, no GPU of the catalog holds this job{need_en}. The smallest change that holds it "
           f"is {change_en} on {c.total_gpus} × {c.gpu.display_name}{machines_en} ({c.instance.type}, about "
           f"{c.estimate.device_total_gib:.1f} GiB per GPU); the plan below uses it.",
        zh=f"按你给出的 {name}，目录中没有哪种 GPU 放得下此作业{need_zh}。放得下的最小改动是改用 {change_zh}："
           f"{c.total_gpus} 张 {c.gpu.display_name}{machines_zh}（{c.instance.type}，每卡约 "
           f"{c.estimate.device_total_gib:.1f} GiB），下面的方案按它给出。")
    free.deadline_notes.insert(0, note)
    free.stated_pick = (c, note)
    return free


def _memory_class(pref: object) -> bool:
    """A GPU preference that is a memory size only ("80GB": from a GPU the catalog does not name, e.g. "H100 80GB")."""
    import re

    return bool(re.fullmatch(r"\s*\d+(?:\.\d+)?\s*G(?:B|iB)?\s*", str(pref or ""), re.I))


def relax_stated_count(catalog: Catalog, the_plan: Plan, job: Job, region: str, memo: dict, hosts: dict) -> Plan:
    """``the_plan`` when it has an option or the user fixed no count; else the plan with the count free, with the
    reason the stated count fails said first (its first deadline note). ``job.workload`` keeps the stated count."""
    gpus, nodes = _stated(job)
    if the_plan.chosen is not None or (gpus is None and nodes is None):
        return the_plan
    w = job.workload
    count_free = w.model_copy(update={"num_gpus": None, "num_nodes": None})
    free = plan(catalog, count_free, region, memo=memo, hosts=hosts,
                precision_given=job.original.precision is not None, keep_strategy=keeps_strategy(job))
    if free.chosen is None and keeps_strategy(job):  # the stated strategy holds it on no count either
        free = plan(catalog, count_free, region, memo=memo, hosts=hosts,
                    precision_given=job.original.precision is not None)
    if free.chosen is None:
        return the_plan
    # closest to what was stated: the fewest GPU memory in all that holds the job, after the plans that change the job
    # (offload, unasked quantization) or lack the host; the user's GPU first when it holds the job
    free.options.sort(key=lambda c: (c.hard_shortfall, c.variant.step == STEP_OFFLOAD, c.quantized,
                                     c.total_gpus * (c.gpu.memory_gb or 0.0), c.rank_key()))
    if free.preferred:
        free.options.sort(key=lambda c: c.gpu.id not in free.preferred)
    free.chosen = free.options[0]
    asked = [catalog.gpus[g] for g in sorted(free.preferred) if g in catalog.gpus]
    # the reference card: the user's GPU, else the largest card that holds the job on some count
    card = max(asked or [o.gpu for o in free.options], key=lambda g: g.memory_gb or 0.0)
    count_en = f"{gpus} GPU{'s' if gpus and gpus > 1 else ''}" if gpus else f"{nodes} machine(s)"
    count_zh = f"{gpus} 张卡" if gpus else f"{nodes} 台机器"
    if nodes and gpus:
        count_en, count_zh = f"{nodes} machine(s), {gpus} GPUs in all", f"{nodes} 台机器、共 {gpus} 张卡"
    found = _need_on_stated(catalog, job, card, memo)
    need_en = need_zh = ""
    if found is not None:
        need, offload = found
        short_en, short_zh = (" short of CPU offload", "（CPU 卸载之外）") if offload else ("", "")
        need_en = f"; with every mitigation{short_en} it needs about {need:.1f} GiB per GPU on {card.display_name}"
        need_zh = f"；在 {card.display_name} 上采取全部显存优化措施{short_zh}后每卡仍约需 {need:.1f} GiB"
        reason = next((r.reason for r in the_plan.rejected if r.gpu.id == card.id), None) if offload else None
        if reason is not None:  # why the offload step is no plan either (the planner's words)
            need_en += f"; {reason.en}"
            need_zh += f"；{reason.zh}"
    if asked and len({g.display_name for g in asked}) > 1 and _memory_class(w.gpu_preference):
        # "H100 80GB": a GPU the catalog lacks, checked on its memory class; no catalog GPU was named by the user
        head_en = f"On the {count_en} you stated, no {card.memory_gb:g} GB GPU (the memory of the GPU you named) can hold this job"
        head_zh = f"按你给出的 {count_zh}，{card.memory_gb:g} GB 的卡（你所说 GPU 的显存）放不下此作业"
    elif asked:
        head_en = f"On the {count_en} you stated, the {card.display_name} cannot hold this job"
        head_zh = f"按你给出的 {count_zh}，{card.display_name} 放不下此作业"
    else:
        head_en = f"On the {count_en} you stated, no GPU of the catalog holds this job"
        head_zh = f"按你给出的 {count_zh}，目录中没有哪种 GPU 放得下此作业"
    c = free.chosen
    machines_en = f" on {c.nodes} machines" if c.nodes > 1 else ""
    machines_zh = f"（{c.nodes} 台）" if c.nodes > 1 else ""
    other_en = other_zh = ""
    got = c.variant.workload
    if keeps_strategy(job) and not got.cpu_offload and got.distributed != w.distributed and c.total_gpus > 1:
        stated, used = _strategy_name(w), _strategy_name(got)
        other_en = f" with {used}: {stated} as you stated holds it on no GPU count"
        other_zh = f"，用 {used}：按你给出的 {stated}，任何卡数都放不下"
    note = Text(
        en=f"{head_en}{need_en}. The smallest configuration that "
           f"holds it here is {c.total_gpus} × {c.gpu.display_name}{machines_en} ({c.instance.type}, about "
           f"{c.estimate.device_total_gib:.1f} GiB per GPU){other_en}; the plan below uses it.",
        zh=f"{head_zh}{need_zh}。放得下的最小配置是 {c.total_gpus} 张 "
           f"{c.gpu.display_name}{machines_zh}（{c.instance.type}，每卡约 {c.estimate.device_total_gib:.1f} GiB）{other_zh}，下面的方案按它给出。")
    free.deadline_notes.insert(0, note)
    free.stated_pick = (c, note)
    return free


def reconcile_stated_pick(the_plan: Plan | None) -> None:
    """The note of a relaxed stated count / strategy says "the plan below uses" its option; when the plan then leads
    with another one (the cost report's pick: a lower job total, or a time where the named option has none), the
    note says which and why instead (in place)."""
    if the_plan is None or the_plan.stated_pick is None or the_plan.chosen is None:
        return
    named, note = the_plan.stated_pick
    c = the_plan.chosen
    if c is named or c.instance.type == named.instance.type and c.total_gpus == named.total_gpus:
        return
    why_en, why_zh = "it ranks first on the job's total cost and time", "它在作业总费用与耗时上排第一"
    if named.price is None and c.price is None:
        why_en, why_zh = ("neither has a list price here and it has a time estimate",
                          "两者在此都没有目录价，而它有耗时估算")
    elif named.price is None:
        why_en, why_zh = "it has a list price here", "它在此有目录价"
    machines_en = f" on {c.nodes} machines" if c.nodes > 1 else ""
    machines_zh = f"（{c.nodes} 台）" if c.nodes > 1 else ""
    fixed = Text(
        en=note.en.replace("; the plan below uses it.",
                           f". The plan below leads with {c.total_gpus} × {c.gpu.display_name}{machines_en} "
                           f"({c.instance.type}, about {c.estimate.device_total_gib:.1f} GiB per GPU) instead: {why_en}."),
        zh=note.zh.replace("，下面的方案按它给出。",
                           f"。下面的方案改用 {c.total_gpus} 张 {c.gpu.display_name}{machines_zh}（{c.instance.type}，"
                           f"每卡约 {c.estimate.device_total_gib:.1f} GiB）：{why_zh}。"))
    the_plan.deadline_notes[:] = [fixed if n is note else n for n in the_plan.deadline_notes]
    the_plan.stated_pick = (c, fixed)


def quantization_note(the_plan: Plan | None, job: Job) -> Text | None:
    """A line said first when the leading option quantizes weights the question did not ask to quantize."""
    c = the_plan.chosen if the_plan else None
    if c is None or not c.quantized:
        return None
    as_asked = next((o for o in the_plan.options if not o.quantized), None)
    need = job.memory.device_total_gib
    if as_asked is not None:
        alt_en = (f"; with 16-bit weights as asked, {as_asked.total_gpus} × {as_asked.gpu.display_name} "
                  f"({as_asked.instance.type}) holds it")
        alt_zh = f"；按要求用 16 位权重时，{as_asked.total_gpus} 张 {as_asked.gpu.display_name}（{as_asked.instance.type}）放得下"
    else:
        alt_en = "; no option in the catalog holds it with 16-bit weights within the plan's limits"
        alt_zh = "；目录中没有在方案限制内以 16 位权重放得下的配置"
    return Text(
        en=f"This plan serves INT8-quantized weights, which the question did not ask for: 16-bit weights do not fit "
           f"{c.total_gpus} × {c.gpu.display_name} (as configured about {need:.1f} GiB per GPU){alt_en}. "
           "Evaluate accuracy before going live with INT8.",
        zh=f"此方案使用 INT8 量化权重，而问题没有要求量化：16 位权重放不下 {c.total_gpus} 张 {c.gpu.display_name}"
           f"（按原配置每卡约 {need:.1f} GiB）{alt_zh}。上线 INT8 前请评测精度。")


def unpriced_lead_note(the_plan: Plan | None, job: Job) -> Text | None:
    """A line said first when the leading option has no list price in the region while a priced option holds the job:
    why the priced one does not lead (the ranking's first reason that tells them apart)."""
    c = the_plan.chosen if the_plan else None
    if c is None or c.price is not None:
        return None
    priced = next((o for o in the_plan.options if o.price is not None), None)
    if priced is None:
        return None  # nothing has a price here: the cost report says so
    if the_plan.preferred and c.gpu.id in the_plan.preferred and priced.gpu.id not in the_plan.preferred:
        why = Text(en="it is not the GPU you asked for", zh="它不是你指定的 GPU")
    elif priced.hard_shortfall and not c.hard_shortfall:
        why = Text(en="it lacks the vCPU or RAM the job needs", zh="它的 vCPU 或内存不够作业使用")
    elif priced.misses_deadline and not c.misses_deadline:
        why = Text(en="it cannot be shown to meet the deadline", zh="无法确认它能满足期限")
    elif priced.variant.step == STEP_OFFLOAD and c.variant.step != STEP_OFFLOAD:
        why = Text(en="it holds the job only with CPU offload", zh="它只有 CPU 卸载才放得下")
    elif priced.quantized and not c.quantized:
        why = Text(en="it holds the job only with INT8 weight quantization, which the question did not ask for",
                   zh="它只有用 INT8 权重量化才放得下，而问题没有要求量化")
    elif priced.sharded_off_training and not c.sharded_off_training:
        why = Text(en="it shards the model states over GPUs without NVLink of a family not positioned for training",
                   zh="它要把模型状态分片到无 NVLink、非训练定位规格族的 GPU 上")
    else:
        return None
    price = f"{priced.price_per_hour:.2f} {priced.price.currency}/h"
    return Text(
        en=f"{c.instance.type} leads although the catalog has no list price for it in {job.region}: the option with a "
           f"price, {priced.instance.type} ({price}), is not preferred because {why.en}.",
        zh=f"{c.instance.type} 排在首位，但目录中没有它在 {job.region} 的价格：有价格的方案 {priced.instance.type}"
           f"（{price}）没有排在前面，因为{why.zh}。")


def fp16_note(the_plan: Plan | None, job: Job) -> Text | None:
    """A line said first when the leading GPU has no BF16 and the default BF16 precision was planned in FP16 on it."""
    c = the_plan.chosen if the_plan else None
    if c is None or not c.fp16_for_bf16:
        return None
    was, now = job.workload.precision.value, c.variant.workload.precision.value
    arch = c.gpu.architecture or "its architecture"
    return Text(en=f"{c.gpu.display_name} has no BF16 ({arch}); the precision was not given, so it is sized and timed in "
                   f"{now} instead of the default {was} (AMP with loss scaling; set precision to override).",
                zh=f"{c.gpu.display_name} 不支持 BF16（{arch} 架构）；问题未指定精度，因此在它上面按 {now} 而不是默认的 {was} "
                   "估算显存与时间（混合精度需配合 loss scaling；可用 precision 指定）。")


def priced_wider_note(the_plan: Plan | None, job: Job) -> Text | None:
    """A line said first when the leading option has more GPUs than memory needs because no type with the fewest
    GPUs that hold the job has a list price in the region (planner._priced_layout)."""
    c = the_plan.chosen if the_plan else None
    if c is None or not c.priced_from or job.workload.task == Task.inference:
        return None
    return Text(en=f"Memory alone needs {c.priced_from} × {c.gpu.display_name}, but no type with {c.priced_from} of them "
                   f"has a list price in {job.region}; the plan uses {c.total_gpus}, the fewest with a price (the time "
                   "counts the sharding traffic over them).",
                zh=f"仅按显存需要 {c.priced_from} 张 {c.gpu.display_name}，但 {job.region} 没有 {c.priced_from} 卡规格的目录价格；"
                   f"方案用有价格的最少卡数 {c.total_gpus} 张（时间已计入分片到这些卡上的通信）。")
