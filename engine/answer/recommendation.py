"""The Recommendation: one JSON-serialisable answer, rendered to Markdown in zh or en."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpu_advisor.costing import CostReport
from gpu_advisor.util.i18n import Note, Text
from gpu_advisor.answer.scenarios import ScenarioRow
from gpu_advisor.memory import MemoryEstimate


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class Option(_Model):
    """One instance configuration: the chosen one or an alternative."""

    instance_type: str
    family: str
    gpu_id: str
    gpu_display: str
    gpu_memory_gib: float = Field(description="memory per GPU (or vGPU slice), as the catalog states it")
    gpus_per_node: int
    nodes: int
    total_gpus: int
    replicas: int = Field(1, description="serving: identical copies of this configuration the request rate needs")
    vcpu: int
    memory_gib: float
    rdma: str
    fit_step: int
    mitigations: list[Text] = Field(default_factory=list)
    planned_mem_gib: float
    headroom_pct: float
    price_per_hour: float | None = Field(None, description="pay-as-you-go, one instance, compute only")
    currency: str | None = None
    price_region: str | None = None
    price_source: str | None = None
    price_as_of: str | None = None
    reason: Text
    source: str
    as_of: str | None = None

    @property
    def gpu_count(self) -> int:
        return self.total_gpus


class Item(_Model):
    """One line of advice, with the rule that produced it."""

    section: str
    rule_id: str
    text: Text


class TraceEntry(_Model):
    rule_id: str
    title: Text
    why: Text
    matched: dict[str, Any]
    derived: list[str]
    asserted: list[str]
    sources: list[str]


class HostNeeds(_Model):
    vcpu: int
    ram_gib: float
    formula: Text


class Recommendation(_Model):
    lang: str
    workload: dict[str, Any] = Field(description="the job as evaluated: the user's values plus stated defaults")
    tier: str | None
    lead: list[Text] = Field(default_factory=list, description="what the answer must say first: a plan that is tight at "
                             "the planning estimate, and a default that decides the answer")
    memory: MemoryEstimate = Field(description="memory per GPU as the user configured the job")
    planned_memory: MemoryEstimate | None = Field(None, description="memory per GPU in the recommended plan")
    instance: Option | None
    alternatives: list[Option]
    rejected: list[Text] = Field(default_factory=list)
    host: HostNeeds | None
    cpu_instance: dict[str, Any] | None = None
    choices: dict[str, Any] = Field(default_factory=dict, description="structured choices the rules made")
    cost: CostReport | None = Field(None, description="time and total cost per option (when the job size is known)")
    scenarios: list[ScenarioRow] = Field(default_factory=list,
                                         description="how the answer changes by scenario, when the question names no model")
    sections: list[Item]
    assumptions: list[Note]
    warnings: list[Note]
    trace: list[TraceEntry]
    knowledge: dict[str, Any]

    @property
    def gpu_memory_gib(self) -> float | None:
        return self.instance.gpu_memory_gib if self.instance else None

    def items(self, section: str) -> list[Item]:
        return [item for item in self.sections if item.section == section]

    def instance_types(self) -> list[str]:
        """Every instance type this answer names (for validation against the catalog)."""
        names = [o.instance_type for o in [self.instance, *self.alternatives] if o is not None]
        if self.cpu_instance:
            names.append(self.cpu_instance["instance_type"])
        return names

    def render(self, lang: str | None = None) -> str:
        from gpu_advisor.answer.render import render_markdown

        return render_markdown(self, lang or self.lang)
