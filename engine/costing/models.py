"""The cost report: JSON-serialisable results of the time and cost estimate (bilingual texts)."""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpu_advisor.util.i18n import Note, Text

PurchaseModel = Literal["payg", "spot", "savings_plan"]
Mark = Literal["cheapest", "fastest", "recommended"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class Range(_Model):
    """A low-high interval (low <= high); mid is the arithmetic midpoint."""

    low: float
    high: float

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2

    def scale(self, factor: float) -> "Range":
        return Range(low=self.low * factor, high=self.high * factor)


class TimeEstimate(_Model):
    """Compute time of one option; wall_hours None when a needed input is unknown (missing says what)."""

    total_pflop: float | None = Field(None, description="compute of the whole job incl. recompute, PFLOP")
    precision: str | None = None
    peak_tflops: Range | None = Field(None, description="dense peak per GPU used (low/high when TF32 may apply)")
    utilisation: Range | None = None
    scaling: Range | None = None
    recompute_factor: float = 1.0
    gpu_hours: Range | None = None
    wall_hours: Range | None = None
    missing: Text | None = None
    notes: list[Note] = Field(default_factory=list)


class PurchaseLine(_Model):
    """Total cost of the job under one purchase model; total None when it cannot be computed (note says why)."""

    model: PurchaseModel
    total: Range | None = None
    hourly: Range | None = None
    break_even_months: Range | None = None
    available: bool = True
    note: Text


class CostOption(_Model):
    instance_type: str
    family: str
    gpu_id: str
    gpu_display: str
    nodes: int
    gpus_per_node: int
    total_gpus: int
    price_per_hour: float | None = Field(None, description="pay-as-you-go, one instance, compute only")
    hourly_total: float | None = Field(None, description="price_per_hour x nodes x replicas")
    replicas: int = Field(1, description="serving: identical copies the request rate needs")
    currency: str | None = None
    region: str
    price_source: str | None = None
    price_as_of: str | None = None
    price_origin: str | None = None
    time: TimeEstimate
    purchases: list[PurchaseLine] = Field(default_factory=list)
    marks: list[Mark] = Field(default_factory=list)
    violations: list[Text] = Field(default_factory=list)

    def purchase(self, model: PurchaseModel) -> PurchaseLine | None:
        return next((p for p in self.purchases if p.model == model), None)

    @cached_property  # asked about 28 times per answer by the report's sorts and notes; the model is frozen
    def payg_mid(self) -> float | None:
        line = self.purchase("payg")
        return None if line is None or line.total is None else line.total.mid


class StorageLine(_Model):
    item: Text
    size_gib: float | None = None
    price: float | None = None
    note: Text
    source: str | None = None


class CostReport(_Model):
    region: str
    currency: str | None
    basis: Literal["job", "month"] = Field(description="'job': totals for the whole job; 'month': serving, per month")
    options: list[CostOption]
    by_cost: list[str] = Field(default_factory=list, description="instance types, cheapest pay-as-you-go first")
    by_time: list[str] = Field(default_factory=list, description="instance types, fastest first")
    cheapest: str | None = None
    fastest: str | None = None
    recommended: str | None = None
    why: Text | None = None
    relax: list[Text] = Field(default_factory=list)
    storage: list[StorageLine] = Field(default_factory=list)
    assumptions: list[Note] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)

    def option(self, instance_type: str) -> CostOption | None:
        return next((o for o in self.options if o.instance_type == instance_type), None)
