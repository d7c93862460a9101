"""recommend(): workload -> estimates -> plan on the catalog -> rules -> explained Recommendation."""

from __future__ import annotations

from typing import Any

from gpu_advisor.kb.bundle import Knowledge, get_knowledge
from gpu_advisor.costing import CostReport, build_cost_report, job_hours
from gpu_advisor.plan.defaults import Job, resolve_job
from gpu_advisor.rules.facts import Facts, check_facts
from gpu_advisor.util.i18n import Text
from gpu_advisor.memory import estimate_host
from gpu_advisor.answer.assemble import assemble
from gpu_advisor.answer.recommendation import Recommendation
from gpu_advisor.rules.engine import Firing
from gpu_advisor.answer.scenarios import scenario_rows, wants_scenarios
from gpu_advisor.answer.lead import cv_precision_time_lead, fewer_gpus_lead, unknown_model_lead, precision_lead
from gpu_advisor.answer.budget_fit import budget_fit_lead, budget_size_lead, stated_card_fit_lead
from gpu_advisor.plan.scaleout import scale_for_deadline
from gpu_advisor.memory.core import CUDA_CONTEXT_GIB
from gpu_advisor.memory.serving import DEFAULT_UTILIZATION
from gpu_advisor.plan.replicas import split_concurrency
from gpu_advisor.plan.serving import size_replicas, speed_note
from gpu_advisor.costing.elsewhere import price_elsewhere_note
from gpu_advisor.plan.stated import (fp16_note, keeps_strategy, priced_wider_note, quantization_note,
                                     reconcile_stated_pick, relax_stated_count, relax_stated_strategy,
                                     unpriced_lead_note)
from gpu_advisor.plan.planner import Plan, plan, upper_gib
from gpu_advisor.workload import Task, Workload, enum_value


def recommend(workload: Workload | dict[str, Any], lang: str | None = None, *,
              knowledge: Knowledge | None = None) -> Recommendation:
    """Size a job on Alibaba Cloud. Raises WorkloadError / UnknownModelError for bad input."""
    from gpu_advisor.validation import workload_from_dict

    w = workload if isinstance(workload, Workload) else workload_from_dict(workload)
    lang = lang or w.lang.value
    kb = knowledge or get_knowledge()
    job, the_plan, report = _plan_and_cost(kb, w)
    facts = build_facts(job, the_plan, report, kb.catalog)  # checked there: the engine need not check them again
    firings = getattr(kb.engine, "evaluate_checked", kb.engine.evaluate)(facts)
    lead = precision_lead(job, the_plan, lambda precision: _plan_and_cost(
        kb, w.model_copy(update={"precision": precision}))[1])
    lead += cv_precision_time_lead(job, report, lambda precision: _plan_and_cost(
        kb, w.model_copy(update={"precision": precision}))[2])
    said = [t for t in (quantization_note(the_plan, job), fp16_note(the_plan, job), priced_wider_note(the_plan, job),
                        unpriced_lead_note(the_plan, job), price_elsewhere_note(the_plan, job, kb.catalog))
            if t is not None]
    said += fewer_gpus_lead(the_plan)
    said += stated_card_fit_lead(job, the_plan)
    def replan(update: dict[str, Any]) -> tuple[Job, Plan | None, CostReport | None]:
        return _plan_and_cost(kb, Workload.model_validate({**w.model_dump(), **update}))

    said += budget_fit_lead(job, report, replan) or budget_size_lead(job, report, replan)
    speed = list(the_plan.speed_notes if the_plan else [])
    lead = unknown_model_lead(job) + list(the_plan.deadline_notes if the_plan else []) + said + speed + lead
    rec = assemble(kb, job, the_plan, facts, firings, lang, report, lead)
    if the_plan is not None and the_plan.serving_speed:   # the ask layer compares a stated TTFT target with it
        rec = rec.model_copy(update={"choices": {**rec.choices, "serving_speed": the_plan.serving_speed}})
    if wants_scenarios(w):
        rec = rec.model_copy(update={"scenarios": scenario_rows(w, kb, recommend)})
    return rec


def _plan_and_cost(kb: Knowledge, w: Workload) -> tuple[Job, Plan | None, CostReport | None]:
    """_choose, then the note of a relaxed stated count or strategy names the option that leads."""
    job, the_plan, report = _choose(kb, w)
    reconcile_stated_pick(the_plan)
    return job, the_plan, report


def _choose(kb: Knowledge, w: Workload) -> tuple[Job, Plan | None, CostReport | None]:
    """Plan on the catalog, cost the options, and lead with the option the cost report recommends.

    The planner ranks by effective hourly price; once the job's size is known the cost report ranks by the
    job's total (price x hours, with each GPU's throughput) and respects budget and deadline, so its pick wins.
    """
    job = resolve_job(w, kb.catalog)
    if job.cpu_only:
        return job, None, None
    # the estimates resolve_job already made, for the planner's chain walk and host sizing to reuse
    hosts = {(job.workload, max(1, job.workload.num_gpus or 1)): job.host}
    the_plan = plan(kb.catalog, job.workload, job.region, memo=job.memo, hosts=hosts,
                    precision_given=job.original.precision is not None, keep_strategy=keeps_strategy(job))
    the_plan = relax_stated_strategy(kb.catalog, the_plan, job, job.region, job.memo, hosts)
    the_plan = relax_stated_count(kb.catalog, the_plan, job, job.region, job.memo, hosts)
    the_plan = scale_for_deadline(kb.catalog, the_plan, job, job.region, job.memo, hosts)
    the_plan = split_concurrency(kb.catalog, the_plan, job, job.memo, hosts)
    the_plan = size_replicas(the_plan, job)
    report = build_cost_report(the_plan, job, kb.catalog) if the_plan.chosen else None
    if report is not None and not report.recommended:
        _lead_with_a_time(the_plan, report)
    if report is None or not report.recommended or report.recommended == the_plan.chosen.instance.type:
        return job, the_plan, report
    if the_plan.preference_met:  # the user asked for this GPU and it holds the job: keep it, show the rest
        theirs = report.option(report.recommended)
        return job, the_plan, _keep_planner_choice(report, the_plan.chosen.instance.type, theirs, preferred=True)
    mine, theirs = report.option(the_plan.chosen.instance.type), report.option(report.recommended)
    best = next((c for c in the_plan.options if c.instance.type == report.recommended), None)
    comparable = mine is not None and theirs is not None and None not in (mine.payg_mid, theirs.payg_mid)
    # a cheaper total that quantizes weights the question did not ask to quantize does not displace a plan that
    # serves the model as asked: the answer names it instead
    quantized = best is not None and best.quantized and not the_plan.chosen.quantized
    fp16 = best is not None and best.fp16_for_bf16 and not the_plan.chosen.fp16_for_bf16
    # nor does one that shards the model states over PCIe GPUs of a family not positioned for training, where the
    # planner ranks it after the plan it chose (Candidate.sharded_off_training), now that both have a price
    positioned = best is not None and best.sharded_off_training and not the_plan.chosen.sharded_off_training
    # nor does CPU offload displace a plan that keeps the model states on the GPUs: its total leaves out the CPU
    # optimizer step and the PCIe traffic (ladder.TIME_FACTOR), so it is not comparable
    offloaded = (best is not None and bool(best.variant.workload.cpu_offload)
                 and not the_plan.chosen.variant.workload.cpu_offload)
    cheaper = comparable and theirs.payg_mid < mine.payg_mid
    # neither has a price in the region: the report ranked by time, and an option with a time beats one without
    timed = (mine is not None and theirs is not None and mine.hourly_total is None and theirs.hourly_total is None
             and mine.time.wall_hours is None and theirs.time.wall_hours is not None)
    if (cheaper or timed) and best is not None and not quantized and not fp16 and not positioned and not offloaded:
        the_plan.options.remove(best)  # both job totals are known: the cheaper job wins
        the_plan.options.insert(0, best)
        the_plan.chosen = best
        llm_serving = job.workload.task == Task.inference and job.memory.profile.is_llm
        if (the_plan.speed_notes or the_plan.serving_speed) and llm_serving:
            the_plan.speed_notes.clear()   # the speed line was about the planner's first option: say the chosen one's
            the_plan.serving_speed = {}
            speed_note(the_plan, job)
        return job, the_plan, report
    return job, the_plan, _keep_planner_choice(report, the_plan.chosen.instance.type, theirs, positioned=positioned,
                                               quantized=quantized, fp16=fp16, offloaded=offloaded)


def _lead_with_a_time(the_plan: Plan, report: CostReport) -> None:
    """No option meets every constraint and none has a price: the fastest option with a time estimate on no more GPUs
    leads over an option without one (in place), so a "how long" question gets a time."""
    mine = report.option(the_plan.chosen.instance.type)
    if mine is None or mine.time.wall_hours is not None or any(o.hourly_total is not None for o in report.options):
        return
    timed = [o for o in report.options if o.time.wall_hours is not None and o.total_gpus <= mine.total_gpus]
    if not timed:
        return
    fastest = min(timed, key=lambda o: o.time.wall_hours.mid)
    best = next((c for c in the_plan.options if c.instance.type == fastest.instance_type
                 and not c.quantized and not c.fp16_for_bf16), None)
    if best is not None:
        the_plan.options.remove(best)
        the_plan.options.insert(0, best)
        the_plan.chosen = best


def _keep_planner_choice(report: CostReport, chosen: str, cheapest_known: Any, preferred: bool = False,
                         positioned: bool = False, quantized: bool = False, fp16: bool = False,
                         offloaded: bool = False) -> CostReport:
    """The cost report's pick cannot be compared on job totals with the planner's: keep the planner's, say why."""
    options = [o.model_copy(update={"marks": [m for m in o.marks if m != "recommended"]
                                    + (["recommended"] if o.instance_type == chosen else [])})
               for o in report.options]
    total = f"{cheapest_known.payg_mid:,.0f} {cheapest_known.currency}" if cheapest_known and cheapest_known.payg_mid else "-"
    if preferred:
        why = Text(en=f"the GPU you asked for holds the job; the cheapest option by job total is {report.recommended} "
                      f"(about {total})",
                   zh=f"你指定的 GPU 放得下此作业；按作业总价最便宜的是 {report.recommended}（约 {total}）")
    elif quantized:
        why = Text(en=f"it serves the model as asked, with 16-bit weights; the cheapest option by job total, "
                      f"{report.recommended} (about {total}), holds it only with INT8 weight quantization, which the "
                      "question did not ask for (evaluate accuracy before choosing it)",
                   zh=f"它按你的要求以 16 位权重部署；按作业总价最便宜的 {report.recommended}（约 {total}）只有用 INT8 "
                      "权重量化才放得下，而问题没有要求量化（选用前请评测精度）")
    elif fp16:
        why = Text(en=f"it runs the job in BF16; the cheapest option by job total, {report.recommended} (about {total}), "
                      "has no BF16 and would run it in FP16 with loss scaling, which the question did not choose",
                   zh=f"它以 BF16 运行此作业；按作业总价最便宜的 {report.recommended}（约 {total}）不支持 BF16，只能用 FP16"
                      "（需 loss scaling），而问题没有选择 FP16")
    elif offloaded:
        why = Text(en=f"it keeps the model states on the GPUs; the cheapest option by job total, {report.recommended} "
                      f"(about {total}), holds the job only with CPU offload, whose CPU optimizer step and PCIe traffic "
                      "that total leaves out",
                   zh=f"它把模型状态留在 GPU 上；按作业总价最便宜的 {report.recommended}（约 {total}）只有 CPU 卸载才放得下，"
                      "而该总价没有计入 CPU 上的优化器步骤与 PCIe 传输")
    elif positioned:
        why = Text(en=f"it holds the job on a family Alibaba positions for training; the cheapest option with a price, "
                      f"{report.recommended} (about {total}), shards the model over GPUs without NVLink of an "
                      "inference-positioned family, where every step crosses PCIe",
                   zh=f"它在阿里云定位于训练的规格族上放得下此作业；有价格的最便宜方案 {report.recommended}（约 {total}）"
                      "要把模型分片到推理定位、无 NVLink 的 GPU 上，每步都经 PCIe 通信")
    else:
        why = Text(en=f"lowest effective hourly cost among the configurations that fit; job totals cannot be "
                      f"compared with {report.recommended} (total: {total}) because one of them has no price or no "
                      "throughput figure",
                   zh=f"在放得下的配置中每小时有效成本最低；与 {report.recommended}（总价：{total}）缺少价格或算力数据，"
                      "无法按总价比较")
    return report.model_copy(update={"recommended": chosen, "why": why, "options": options})


def evaluate_facts(workload: Workload, knowledge: Knowledge | None = None) -> tuple[dict[str, Any], list[Firing]]:
    """The facts and firings for a workload (used by tests to compare engines)."""
    kb = knowledge or get_knowledge()
    job, the_plan, report = _plan_and_cost(kb, workload)
    facts = build_facts(job, the_plan, report, kb.catalog)
    return facts, kb.engine.evaluate(facts)


def _plan_facts(job: Job, the_plan: Plan | None) -> dict[str, Any]:
    c = the_plan.chosen if the_plan else None
    if c is None:
        host = estimate_host(job.workload, 1) if not job.cpu_only else job.host
        return {"has_plan": False, "gpu_id": "none", "gpu_mem_gib": 0.0, "gpu_arch": "none", "gpu_bf16": False,
                "gpu_fp8": False, "gpu_nvlink": False, "gpu_count": 0, "nodes": 0 if job.cpu_only else 1,
                "gpus_per_node": 0, "multi_gpu": False, "multi_node": False, "instance_type": "none",
                "instance_family": "none", "instance_rdma": "none", **_NO_INTERNODE, "instance_vcpu": 0, "instance_ram_gib": 0.0,
                "vgpu": False, "vcpu_short": False, "ram_short": False, "upper_fits": False,
                "gpu_name": "none", "tight": False, "needs_large_card": False, "weights_total_gb": 0.0,
                "weights_load_min": 0.0,
                "planned_upper_gib": round(_upper(job.memory), 2), "fit_step": 0, "planned_mem_gib": job.memory.device_total_gib,
                "headroom_pct": 0.0, "planned_batch": job.batch, "accum_steps": 1, "vcpu_need": host.vcpu,
                "ram_need_gib": float(host.ram_gib), "price_known": False, "price_per_hour": 0.0,
                "planned_quantization": enum_value(job.workload.quantization, "none"),
                "planned_sharding": enum_value(job.workload.distributed, "none"), "zero3_mem_gib": 0.0,
                "chunked_loss_added": False, "sequence_parallel": 1,
                "kv_budget_gib": 0.0, "kv_capacity_tokens": 0, "kv_capacity_seqs": 0, "kv_kib_per_token": 0.0}
    t, gpu = c.instance, c.gpu
    return {"has_plan": True, "gpu_id": gpu.id, "gpu_mem_gib": float(gpu.memory_gb), "gpu_name": gpu.display_name,
            "tight": bool(c.tight), "needs_large_card": _upper(c.estimate) > LARGE_CARD_GB,
            **_weights_facts(c),
            "gpu_arch": gpu.architecture or "unknown", "gpu_bf16": bool(gpu.supports_bf16),
            "gpu_fp8": bool(gpu.supports_fp8), "gpu_nvlink": bool(t.nvlink), "gpu_count": c.total_gpus,
            "nodes": c.nodes, "gpus_per_node": c.gpus_per_node, "multi_gpu": c.total_gpus > 1,
            "multi_node": c.nodes > 1, "instance_type": t.type, "instance_family": t.family,
            "instance_rdma": t.rdma, **_internode_facts(c), "instance_vcpu": int(t.vcpu), "instance_ram_gib": float(t.memory_gib),
            "vgpu": bool(t.vgpu), "fit_step": c.variant.step,
            "vcpu_short": t.vcpu < c.vcpu_need, "ram_short": t.memory_gib < c.ram_need_gib,
            "planned_mem_gib": round(c.estimate.device_total_gib, 2), "headroom_pct": c.headroom_pct,
            "planned_upper_gib": round(_upper(c.estimate), 2), "upper_fits": _upper(c.estimate) <= gpu.memory_gb,
            "planned_batch": c.variant.workload.batch_size_per_gpu or job.batch,
            "accum_steps": c.variant.accum_steps, "vcpu_need": c.vcpu_need,
            "ram_need_gib": round(c.ram_need_gib, 1), "price_known": c.price_per_hour is not None,
            "price_per_hour": float(c.price_per_hour or 0.0), "planned_quantization": enum_value(c.variant.workload.quantization, "none"),
            "planned_sharding": enum_value(c.variant.workload.distributed, "none"),
            "zero3_mem_gib": round(_zero3_gib(c, job), 1),
            "chunked_loss_added": bool(c.variant.workload.chunked_loss) and not job.workload.chunked_loss,
            "sequence_parallel": int(c.variant.sp),
            **_kv_capacity_facts(c, job)}


_NO_INTERNODE = {"rdma_required": False, "internode_known": False, "internode_gb_step": 0.0, "step_compute_ms": "none", "tcp_gbit_s": 0.0,
                 "tcp_slowdown": "none", "tcp_mid_slowdown": 0.0, "rdma_slowdown": "none"}


def _internode_facts(c: Any) -> dict[str, Any]:
    """Multi-node: whether RDMA is required and the figures behind it (costing/internode.py)."""
    from gpu_advisor.costing.internode import band, internode

    if c.nodes <= 1:
        return {**_NO_INTERNODE, "tcp_gbit_s": float(c.instance.network_gbit_s or 0.0)}
    v = internode(c)
    if v is None:
        return {**_NO_INTERNODE, "rdma_required": True, "tcp_gbit_s": float(c.instance.network_gbit_s or 0.0)}
    ms = (v.compute_s[0] * 1e3, v.compute_s[1] * 1e3)
    return {"rdma_required": v.required, "internode_known": True, "internode_gb_step": round(v.gb_per_step, 2),
            "step_compute_ms": f"{ms[0]:.0f}-{ms[1]:.0f}", "tcp_gbit_s": v.tcp_gbit_s,
            "tcp_slowdown": band(v.tcp_slowdown), "tcp_mid_slowdown": round(v.tcp_mid, 2),
            "rdma_slowdown": band(v.rdma_slowdown)}


def _zero3_gib(c: Any, job: Job) -> float:
    """A ZeRO-1 / 2 plan: the device memory per GPU ZeRO-3 would need at its GPU count (the planner's figure, else
    estimated here: a plan scaled out for a deadline has none); 0 for other plans."""
    w = c.variant.workload
    if enum_value(w.distributed, "none") not in ("zero1", "zero2") or c.total_gpus <= 1:
        return 0.0
    if c.zero3_gib:
        return c.zero3_gib
    from gpu_advisor.memory import estimate_memory
    from gpu_advisor.workload import Distributed

    full = w.model_copy(update={"distributed": Distributed.zero3})
    estimate = job.memo.get(full) or estimate_memory(full)
    return estimate.device_total_gib


def _kv_capacity_facts(c: Any, job: Job) -> dict[str, Any]:
    """What a serving engine leaves the KV cache on the chosen card, as vLLM sizes it (memory/serving.py):
    gpu_memory_utilization (0.9) x card - weights - activations - CUDA context, per GPU; in tokens over the replica's
    GPUs at the job's KV bytes per token, and in sequences of seq_len tokens. Zero for a job without a KV cache."""
    per_token = c.estimate.profile.kv_cache_bytes_per_token or 0.0
    if job.workload.task != Task.inference or not c.estimate.profile.is_llm or per_token <= 0:
        return {"kv_budget_gib": 0.0, "kv_capacity_tokens": 0, "kv_capacity_seqs": 0, "kv_kib_per_token": 0.0}
    b = c.estimate.breakdown
    budget = (DEFAULT_UTILIZATION * float(c.gpu.memory_gb) - b.get("weights", 0.0) - b.get("activations", 0.0)
              - b.get("cuda_context", CUDA_CONTEXT_GIB))
    tokens = int(max(0.0, budget) * 2**30 * c.total_gpus // per_token)
    seq = int(c.variant.workload.seq_len or job.workload.seq_len or 0)
    return {"kv_budget_gib": round(max(0.0, budget), 1), "kv_capacity_tokens": tokens,
            "kv_capacity_seqs": tokens // seq if seq else 0, "kv_kib_per_token": round(per_token / 1024, 1)}


def _chosen_hours(chosen: Any, job: Job, report: CostReport | None) -> float | None:
    """job_hours(chosen, job), taken from the cost report's option for the same candidate when it has one.

    An instance type occurs once among a plan's options, and the report costs the best option of each GPU
    (the chosen one among them) with the same estimate_time, so its time is the chosen candidate's.
    """
    option = report.option(chosen.instance.type) if report is not None else None
    if option is None or option.nodes != chosen.nodes or option.total_gpus != chosen.total_gpus:
        return job_hours(chosen, job)
    hours = option.time.wall_hours
    return None if hours is None else hours.mid


LARGE_CARD_GB = 48.0  # the tiers' boundary: cards above it are the large (80-96 GB) class
# ESSD PL1 / AutoPL baseline throughput ceiling: max{min{120 + 0.5 x GiB, 350}, 125} MB/s (catalog storage essd_autopl)
ESSD_BASELINE_MB_S = 350.0


def _weights_facts(c: Any) -> dict[str, float]:
    """One replica's weights (per-GPU weights x its GPUs; tensor parallelism splits them) and the minutes a cold start
    reads them from an ESSD disk at its baseline."""
    gb = c.estimate.breakdown.get("weights", 0.0) * c.total_gpus * 2**30 / 1e9
    return {"weights_total_gb": round(gb, 1), "weights_load_min": round(gb * 1e3 / ESSD_BASELINE_MB_S / 60, 1)}


def _upper(estimate: Any) -> float:
    """Device memory from the planning (upper) estimate: the central device total plus the planning margin."""
    return upper_gib(estimate)


def _cards_facts(kb_catalog: Any, job: Job, the_plan: Plan | None) -> dict[str, Any]:
    """The largest card on offer for this job, and why the user's GPU was ruled out (in the answer's words)."""
    offered = [g.memory_gb for g in kb_catalog.gpus.values() if g.memory_gb] if kb_catalog is not None else []
    largest = float(max(offered)) if offered else 0.0
    names, reason_en, reason_zh = [], "none", "none"
    if the_plan is not None and the_plan.preferred:
        gpus = kb_catalog.gpus if kb_catalog is not None else {}
        names = sorted(gpus[g].display_name if g in gpus else g for g in the_plan.preferred)
        from gpu_advisor.plan.stated import _memory_class

        if len(names) > 1 and _memory_class(job.workload.gpu_preference):
            # "H100 80GB": a GPU the catalog lacks, checked on the catalog's cards of its memory: say the memory
            names = [f"{str(job.workload.gpu_preference).upper().replace('GB', ' GB')} GPU (" + " / ".join(names) + ")"]
        why = [r.reason for r in the_plan.rejected if r.gpu.id in the_plan.preferred]
        if why:
            reason_en, reason_zh = "; ".join(t.en for t in why), "；".join(t.zh for t in why)
        else:   # ruled out without a recorded reason (no instance type of it was planned): never the word "none"
            reason_en = "no instance type with it in the catalog gives a plan for this job in the region"
            reason_zh = "目录中没有用它的实例规格能在该地域给出此作业的方案"
    return {"max_card_gib": largest, "need_exceeds_cards": bool(largest) and job.memory.device_total_gib > largest,
            "preferred_gpu_name": " / ".join(names) if names else "none", "preferred_reason_en": reason_en,
            "preferred_reason_zh": reason_zh}


def build_facts(job: Job, the_plan: Plan | None, report: CostReport | None = None,
                catalog: Any = None) -> dict[str, Any]:
    """The fact record; ``report`` (built from the same plan and job) saves re-estimating the chosen time."""
    facts = Facts({**job.facts(), **_plan_facts(job, the_plan), **_cards_facts(catalog, job, the_plan)},
                  job.deferred_facts())
    preferred = sorted(the_plan.preferred) if the_plan else []
    facts["preferred_gpu"] = " / ".join(preferred) if preferred else "none"
    facts["preference_met"] = bool(the_plan and the_plan.preference_met)
    chosen = the_plan.chosen if the_plan else None
    hours = _chosen_hours(chosen, job, report) if chosen is not None else None
    facts["job_hours"] = float(hours or 0.0)
    return check_facts(facts)
