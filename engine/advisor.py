"""recommend(): workload -> estimates -> plan on the catalog -> rules -> explained Recommendation."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpu_advisor.catalog import Catalog, load_catalog
from gpu_advisor.costing import job_hours
from gpu_advisor.defaults import Job, resolve_job
from gpu_advisor.errors import EngineError
from gpu_advisor.facts import check_facts
from gpu_advisor.memory import estimate_host, estimate_memory
from gpu_advisor.planner import Plan, plan
from gpu_advisor.recommendation import Recommendation
from gpu_advisor.rules.engine import DurableEngine, Firing, PythonEngine, RuleEngine
from gpu_advisor.rules.loader import RuleBase, load_rules
from gpu_advisor.workload import Workload


@dataclass(frozen=True)
class Knowledge:
    catalog: Catalog
    rules: RuleBase
    engine: RuleEngine


_lock = threading.Lock()


@lru_cache(maxsize=4)
def _knowledge(rules_dir: str | None, override: str | None, engine: str) -> Knowledge:
    catalog = load_catalog(override)
    rules = load_rules(rules_dir)
    active = list(rules.active)
    runner: RuleEngine = PythonEngine(active) if engine == "python" else DurableEngine(active)
    return Knowledge(catalog, rules, runner)


def get_knowledge(*, rules_dir: str | None = None, override: str | None = None,
                  engine: str | None = None) -> Knowledge:
    """The loaded knowledge base (cached per rules folder, price override file and engine)."""
    override = override or os.environ.get("GPU_ADVISOR_CATALOG_OVERRIDE") or None
    engine = engine or os.environ.get("GPU_ADVISOR_ENGINE", "durable")
    with _lock:
        return _knowledge(rules_dir, override, engine)


def recommend(workload: Workload | dict[str, Any], lang: str | None = None, *,
              knowledge: Knowledge | None = None) -> Recommendation:
    """Size a job on Alibaba Cloud. Raises WorkloadError / UnknownModelError for bad input."""
    from gpu_advisor.validation import workload_from_dict

    w = workload if isinstance(workload, Workload) else workload_from_dict(workload)
    lang = lang or w.lang.value
    kb = knowledge or get_knowledge()
    job = resolve_job(w, kb.catalog)
    the_plan = None if job.cpu_only else plan(kb.catalog, job.workload, job.region)
    facts = build_facts(job, the_plan)
    firings = kb.engine.evaluate(facts)
    from gpu_advisor.assemble import assemble

    return assemble(kb, job, the_plan, facts, firings, lang)


def evaluate_facts(workload: Workload, knowledge: Knowledge | None = None) -> tuple[dict[str, Any], list[Firing]]:
    """The facts and firings for a workload (used by tests to compare engines)."""
    kb = knowledge or get_knowledge()
    job = resolve_job(workload, kb.catalog)
    the_plan = None if job.cpu_only else plan(kb.catalog, job.workload, job.region)
    facts = build_facts(job, the_plan)
    return facts, kb.engine.evaluate(facts)


def _plan_facts(job: Job, the_plan: Plan | None) -> dict[str, Any]:
    c = the_plan.chosen if the_plan else None
    if c is None:
        host = estimate_host(job.workload, 1) if not job.cpu_only else job.host
        return {"has_plan": False, "gpu_id": "none", "gpu_mem_gib": 0.0, "gpu_arch": "none", "gpu_bf16": False,
                "gpu_fp8": False, "gpu_nvlink": False, "gpu_count": 0, "nodes": 0 if job.cpu_only else 1,
                "gpus_per_node": 0, "multi_gpu": False, "multi_node": False, "instance_type": "none",
                "instance_family": "none", "instance_rdma": "none", "instance_vcpu": 0, "instance_ram_gib": 0.0,
                "vgpu": False, "vcpu_short": False, "ram_short": False, "fit_step": 0, "planned_mem_gib": job.memory.device_total_gib,
                "headroom_pct": 0.0, "planned_batch": job.batch, "accum_steps": 1, "vcpu_need": host.vcpu,
                "ram_need_gib": float(host.ram_gib), "price_known": False, "price_per_hour": 0.0}
    t, gpu = c.instance, c.gpu
    return {"has_plan": True, "gpu_id": gpu.id, "gpu_mem_gib": float(gpu.memory_gb),
            "gpu_arch": gpu.architecture or "unknown", "gpu_bf16": bool(gpu.supports_bf16),
            "gpu_fp8": bool(gpu.supports_fp8), "gpu_nvlink": bool(t.nvlink), "gpu_count": c.total_gpus,
            "nodes": c.nodes, "gpus_per_node": c.gpus_per_node, "multi_gpu": c.total_gpus > 1,
            "multi_node": c.nodes > 1, "instance_type": t.type, "instance_family": t.family,
            "instance_rdma": t.rdma, "instance_vcpu": int(t.vcpu), "instance_ram_gib": float(t.memory_gib),
            "vgpu": bool(t.vgpu), "fit_step": c.variant.step,
            "vcpu_short": t.vcpu < c.vcpu_need, "ram_short": t.memory_gib < c.ram_need_gib,
            "planned_mem_gib": round(c.estimate.device_total_gib, 2), "headroom_pct": c.headroom_pct,
            "planned_batch": c.variant.workload.batch_size_per_gpu or job.batch,
            "accum_steps": c.variant.accum_steps, "vcpu_need": c.vcpu_need,
            "ram_need_gib": round(c.ram_need_gib, 1), "price_known": c.price_per_hour is not None,
            "price_per_hour": float(c.price_per_hour or 0.0)}


def build_facts(job: Job, the_plan: Plan | None) -> dict[str, Any]:
    facts = {**job.facts(), **_plan_facts(job, the_plan)}
    chosen = the_plan.chosen if the_plan else None
    hours = job_hours(chosen, job) if chosen is not None else None
    facts["job_hours"] = float(hours or 0.0)
    facts["read_mb_s"] = job.read_mb_s(facts["gpu_count"])
    try:
        return check_facts(facts)
    except EngineError:
        raise
