"""Scenario tiers for questions that name no model: the seeds' three tiers, each evaluated for real.

"What GPU do I need for semantic segmentation?" has no single answer; the seed answers listed three tiers with
invented instance names. Here each tier is a concrete workload (knowledge/scenarios.yaml) run through the
same advisor, so every row carries a real instance type, the memory as configured and in the plan, and the
mitigations it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict

from gpu_advisor.util import yamlio
from gpu_advisor.util.i18n import Text
from gpu_advisor.workload import Workload


class ScenarioRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: Text
    workload: dict[str, Any]
    instance_type: str | None
    gpu_display: str | None
    total_gpus: int
    mem_as_configured_gib: float
    mem_planned_gib: float | None
    mitigations: list[Text]
    price_per_hour: float | None
    currency: str | None


@lru_cache(maxsize=1)
def _table() -> dict[str, list[dict[str, Any]]]:
    path = resources.files("gpu_advisor.knowledge") / "scenarios.yaml"
    return yamlio.safe_load(path.read_text(encoding="utf-8"))["scenarios"]


def wants_scenarios(w: Workload) -> bool:
    """A question that names no model, backbone or size gets the scenario table."""
    return (w.model is None and w.backbone is None and w.params_billion is None
            and w.task.value in _table())


def scenario_rows(w: Workload, knowledge: Any, evaluate: Callable[..., Any]) -> list[ScenarioRow]:
    """The rows depend only on the task, region and language: computed once per knowledge base and such key.

    ``evaluate(workload_dict, lang, knowledge=...)`` is the pipeline that owns the tiers (gpu_advisor.advisor's
    recommend): each tier is a full answer of its own."""
    key = (w.task.value, w.region, w.lang.value)
    with knowledge.lock:
        rows = knowledge.scenarios.get(key)
    if rows is None:
        rows = tuple(_scenario_rows(w, knowledge, evaluate))
        with knowledge.lock:
            knowledge.scenarios[key] = rows
    return list(rows)


def _scenario_rows(w: Workload, knowledge: Any, evaluate: Callable[..., Any]) -> list[ScenarioRow]:
    rows = []
    for entry in _table()[w.task.value]:
        data = {**entry["workload"], "lang": w.lang.value}
        if w.region:
            data["region"] = w.region
        rec = evaluate(data, w.lang.value, knowledge=knowledge)
        inst = rec.instance
        rows.append(ScenarioRow(
            label=Text(**entry["label"]), workload=entry["workload"],
            instance_type=inst.instance_type if inst else None, gpu_display=inst.gpu_display if inst else None,
            total_gpus=inst.total_gpus if inst else 0, mem_as_configured_gib=round(rec.memory.device_total_gib, 1),
            mem_planned_gib=round(rec.planned_memory.device_total_gib, 1) if rec.planned_memory else None,
            mitigations=list(inst.mitigations) if inst else [],
            price_per_hour=inst.price_per_hour if inst else None, currency=inst.currency if inst else None))
    return rows
