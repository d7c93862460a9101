"""The dated Alibaba Cloud hardware/price catalog (knowledge/catalog/*.yaml) as frozen, validated models.

``gpu_advisor.kb.catalog_loader.load_catalog()`` reads the package data once per override path (lru_cache). Every entry carries ``source`` and
``as_of`` (as_of null only with an ``as_of_note``; source null only with a ``source_note``); any malformed entry
raises :class:`gpu_advisor.errors.KnowledgeError` naming the file, the entry and the key.

Lookups never guess: ``instance()`` returns None for an unknown type (``require_instance()`` raises
KnowledgeError with close names as suggestions), and ``price()`` looks up the exact region only
('mainland' / 'international' resolve to the default regions stated in meta.yaml).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from gpu_advisor.util.derived import DerivedCache
from gpu_advisor.errors import KnowledgeError

OVERRIDE_ENV = "GPU_ADVISOR_CATALOG_OVERRIDE"
Rdma = Literal["none", "erdma", "roce"]
Status = Literal["current", "not_recommended", "preview", "sales_only", "unverified"]
_AS_OF = re.compile(r"\d{4}(-\d{2}(-\d{2})?)?")
_FORBIDDEN_GPU_LABELS = re.compile(r"\b(A800|H800|H100|H200|H20|B100|B200|GB200|A100[ -]?80)", re.I)


def _pos() -> Any:
    """A required positive number (the key must be present; null allowed where the type says so)."""
    return Field(gt=0)


def _opt() -> Any:
    """An optional positive number (defaults to null)."""
    return Field(default=None, gt=0)


class Sourced(BaseModel):
    """Provenance carried by every catalog entry."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    source: str | None
    source_note: str | None = None
    as_of: str | None
    as_of_note: str | None = None

    @field_validator("as_of")
    @classmethod
    def _as_of_format(cls, value: str | None) -> str | None:
        if value is not None and (not _AS_OF.fullmatch(value) or not real_date(value)):
            raise ValueError("as_of must be a real date YYYY, YYYY-MM or YYYY-MM-DD (quoted) or null")
        return value


class SourcedNote(Sourced):
    note: str | None = None


class DenseTflops(BaseModel):
    """Dense (non-sparse) peak throughput; int8 is in TOPS. None = not supported or not stated."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    fp32: float | None = _opt()
    tf32: float | None = _opt()
    fp16: float | None = _opt()
    bf16: float | None = _opt()
    fp8: float | None = _opt()
    int8: float | None = _opt()
    fp4: float | None = _opt()


class GPU(Sourced):
    id: str
    display_name: str
    named_by_alibaba: bool
    named_by_alibaba_note: str | None = None
    architecture: str | None
    architecture_note: str | None = None
    memory_gb: float | None = _pos()
    memory_note: str | None = None
    memory_type: str | None = None
    memory_bandwidth_gb_s: float | None = _opt()
    dense_tflops: DenseTflops
    supports_bf16: bool
    supports_bf16_note: str | None = None
    supports_fp8: bool
    supports_fp8_note: str | None = None
    nvlink: bool
    nvlink_gb_s: float | None = _opt()
    nvlink_note: str | None = None
    tflops_basis: str
    third_party_note: str | None = None
    api_gpu_spec: str | None = None  # GPUSpec of DescribeInstanceTypes for the types that carry this GPU

    def tflops(self, precision: str) -> float | None:
        """Dense TFLOPS for 'fp32', 'tf32', 'fp16', 'bf16', 'fp8', 'int8', 'fp4' (or 'fp16_amp'/'bf16_amp')."""
        key = precision.lower().removesuffix("_amp")
        return getattr(self.dense_tflops, key) if key in DenseTflops.model_fields else None


class Family(Sourced):
    family: str
    category: str | None = None
    gpu_id: str
    gpu_model_stated: str | None
    gpu_model_note: str | None = None
    gpu_mapping_note: str | None = None
    gpu_model_source: SourcedNote | None = None
    gpu_memory_per_gpu_gb: float | None = _opt()
    gpu_specs: str | None = None
    interconnect: str | None = None
    cpu: str | None = None
    cpu_mem_ratio: str | None = None
    features: str | None = None
    note: str | None = None
    storage_note: str | None = None
    rdma: Rdma
    rdma_gbit_s: float | None = _opt()
    rdma_note: str | None = None
    nvlink: bool
    vgpu: bool
    bare_metal: bool
    status: Status
    status_note: str | None = None
    region_note: str | None = None
    intended_use: str | None = None
    intended_use_note: str | None = None
    intended_use_tags: tuple[str, ...]
    gpu_spec: str | None = None
    in_api_listing: bool | None = None
    api_listing_note: str | None = None


class FamilyNotFound(Sourced):
    names: tuple[str, ...]
    note: str


class InstanceType(Sourced):
    """One GPU instance type. gpu_memory_gb is per GPU (per slice for vGPU), in GB as Alibaba states it."""

    type: str
    family: str
    vcpu: int = _pos()
    memory_gib: float = _pos()
    gpu_id: str
    gpu_model_stated: str | None = None
    gpu_count: float | None = _pos()
    gpu_count_note: str | None = None
    gpu_fraction: str | None = None
    gpu_memory_gb: float | None = _pos()
    gpu_memory_note: str | None = None
    network_gbit_s: float | None = _pos()
    network_burst_gbit_s: float | None = _opt()
    network_note: str | None = None
    local_storage_gib: float | None = _opt()
    disk_iops_baseline: int | None = _opt()
    disk_bw_gbyte_s: float | None = _opt()
    rdma: Rdma
    rdma_gbit_s: float | None = _opt()
    rdma_note: str | None = None
    nvlink: bool
    nvlink_note: str | None = None
    vgpu: bool = False
    bare_metal: bool = False
    status: Status
    status_note: str | None = None
    intended_use: str | None = None
    intended_use_note: str | None = None
    intended_use_tags: tuple[str, ...] = ()
    region_note: str | None = None
    gpu_spec: str | None = None  # the API's GPUSpec (as recorded; see gpu_spec_source)
    gpu_spec_source: str | None = None
    in_api_listing: bool | None = None  # listed by DescribeInstanceTypes in the recorded crawl
    api_listing_note: str | None = None
    origin: Literal["catalog", "override"] = "catalog"

    @property
    def gpu_memory_total_gb(self) -> float | None:
        if self.gpu_count is None or self.gpu_memory_gb is None:
            return None
        return self.gpu_memory_gb if self.vgpu else self.gpu_memory_gb * self.gpu_count

    @property
    def has_rdma(self) -> bool:
        return self.rdma != "none"


CATALOG_CURRENCY = "CNY"  # every shipped price; budgets are in it too
MAX_PRICE_PER_HOUR = 100_000.0  # per instance-hour, any currency: far above any GPU instance, far below overflow


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true/false")
    return value


class Conversion(BaseModel):
    """A stated, dated exchange rate that lets a price in another currency be compared with the catalog's."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    rate: float = Field(gt=0, le=1_000_000, allow_inf_nan=False,
                        description=f"{CATALOG_CURRENCY} per one unit of the price's currency")
    as_of: str
    source: str = Field(min_length=1)

    _rate_number = field_validator("rate", mode="before")(_not_bool)

    @field_validator("as_of")
    @classmethod
    def _as_of_format(cls, value: str) -> str:
        if not _AS_OF.fullmatch(value) or not real_date(value):
            raise ValueError("as_of must be a real date YYYY-MM-DD (quoted)")
        return value


class Price(Sourced):
    type: str
    region: str = Field(pattern=r"^[a-z]{2}-[a-z0-9-]+$")
    billing: str
    price_per_hour: float = Field(gt=0, le=MAX_PRICE_PER_HOUR, allow_inf_nan=False)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    currency_basis: str | None = None
    conversion: Conversion | None = None
    confidence: str | None = None
    type_not_in_catalog_note: str | None = None
    origin: Literal["catalog", "override"] = "catalog"

    _price_number = field_validator("price_per_hour", mode="before")(_not_bool)

    def in_catalog_currency(self) -> "Price | None":
        """This price in CATALOG_CURRENCY: itself, converted at its stated rate, or None (kept apart: a price in
        another currency without a rate is never compared with the catalog's)."""
        if self.currency == CATALOG_CURRENCY:
            return self
        if self.conversion is None:
            return None
        c = self.conversion
        basis = (f"converted from {self.price_per_hour:g} {self.currency}/h at {c.rate:g} {CATALOG_CURRENCY}/"
                 f"{self.currency} (rate as of {c.as_of}, {c.source})")
        return self.model_copy(update={"price_per_hour": round(self.price_per_hour * c.rate, 6),
                                       "currency": CATALOG_CURRENCY, "currency_basis": basis})


def real_date(value: str) -> bool:
    """Whether YYYY / YYYY-MM / YYYY-MM-DD names a real calendar date (no month 13, no 31 June)."""
    import datetime

    parts = [int(p) for p in value.split("-")]
    try:
        datetime.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError:
        return False
    return parts[0] >= 1990


class CostLeverFact(Sourced):
    id: str
    lever: str
    fact: str


class StorageEntry(Sourced):
    id: str
    details: dict[str, Any]


class EssdLevel(Sourced):
    level: str
    capacity_min_gib: int = _pos()
    capacity_max_gib: int = _pos()
    max_iops: int = _pos()
    max_throughput_mb_s: float = _pos()
    iops_formula: str
    throughput_formula: str
    iops_base: float
    iops_per_gib: float
    throughput_base_mb_s: float
    throughput_per_gib_mb_s: float

    def performance(self, size_gib: float) -> tuple[float, float]:
        """(IOPS, MB/s) of one disk of this level per Alibaba's formulas; ValueError outside the capacity range."""
        if not self.capacity_min_gib <= size_gib <= self.capacity_max_gib:
            raise ValueError(f"ESSD {self.level} takes {self.capacity_min_gib}-{self.capacity_max_gib} GiB")
        return (min(self.iops_base + self.iops_per_gib * size_gib, self.max_iops),
                min(self.throughput_base_mb_s + self.throughput_per_gib_mb_s * size_gib, self.max_throughput_mb_s))


class Platform(Sourced):
    id: str
    product: str
    kind: Literal["pai", "serverless"]
    purpose: str | None = None
    details: dict[str, Any]


class CpuFamily(Sourced):
    family: str
    ratio: str
    cpu: str | None = None
    note: str | None = None


class CpuInstanceType(Sourced):
    type: str
    family: str
    vcpu: int = _pos()
    memory_gib: float = _pos()


class CpuRatioRules(Sourced):
    ratios: dict[str, str]


class CatalogMeta(Sourced):
    knowledge_version: str
    compiled_on: str
    imported_from: str
    rules: str
    caveats: tuple[str, ...]
    region_defaults: dict[str, str]
    region_defaults_note: str
    mainland_rule: str
    statuses: dict[str, str]
    intended_use_tags: tuple[str, ...]
    intended_use_tags_note: str
    naming: dict[str, Any]
    api_listing: dict[str, str] | None = None
    override_file: str | None = None


def normalise_type_name(name: str) -> str:
    """'GN7I-c8g1.2xlarge ' -> 'ecs.gn7i-c8g1.2xlarge' (case and the 'ecs.' prefix only; nothing else)."""
    name = name.strip().lower()
    return name if name.startswith("ecs.") else f"ecs.{name}"


def is_mainland(region: str) -> bool:
    """True for Chinese-mainland regions: 'cn-*' except cn-hongkong (and the alias 'mainland')."""
    region = region.strip().lower()
    return region == "mainland" or (region.startswith("cn-") and region != "cn-hongkong")


class Catalog(DerivedCache, BaseModel):
    model_config = ConfigDict(frozen=True)
    gpus: dict[str, GPU]
    families: dict[str, Family]
    families_not_found: tuple[FamilyNotFound, ...]
    instance_types: dict[str, InstanceType]
    prices: tuple[Price, ...]
    price_meta: dict[str, Any]
    cpu_families: dict[str, CpuFamily]
    cpu_instance_types: dict[str, CpuInstanceType]
    cpu_ratio_rules: CpuRatioRules
    storage: dict[str, StorageEntry]
    essd_levels: dict[str, EssdLevel]
    platforms: dict[str, Platform]
    cost_levers: dict[str, tuple[CostLeverFact, ...]]
    meta: CatalogMeta
    _price_index: dict[tuple[str, str], Price] = PrivateAttr(default_factory=dict)
    _derived: dict[Any, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        # only prices in the catalog's currency (or converted at a stated rate) are looked up and compared; others
        # stay in ``prices``, kept apart (prices_for lists them with their currency)
        # (an override beats the shipped snapshot; of two from the same origin, one in the catalog's currency wins)
        rank: dict[tuple[str, str], tuple[bool, bool]] = {}
        for p in self.prices:
            # an override price in another currency without a rate is compared only within its region, where the
            # loader keeps one currency (catalog_loader._keep_one_currency_per_region); budgets are checked in CNY only
            comparable = p.in_catalog_currency() or (p if p.origin == "override" else None)
            key, priority = (p.type, p.region), (p.origin == "override", p.currency == CATALOG_CURRENCY)
            if comparable is not None and (key not in rank or priority >= rank[key]):
                self._price_index[key], rank[key] = comparable, priority


    # -- instance types ------------------------------------------------------------------------------------
    def instance(self, type_name: str) -> InstanceType | None:
        """The GPU instance type, or None when the catalog has no such type (never a guess)."""
        return self.instance_types.get(normalise_type_name(type_name))

    def require_instance(self, type_name: str) -> InstanceType:
        """Like instance() but raises KnowledgeError (with the closest real names as suggestions)."""
        found = self.instance(type_name)
        if found is None:
            close = difflib.get_close_matches(normalise_type_name(type_name), list(self.instance_types), n=3)
            raise KnowledgeError(f"catalog: instance type '{type_name}' does not exist in the catalog",
                                 f"目录中不存在实例规格“{type_name}”", field="type", suggestions=close)
        return found

    def cpu_instance(self, type_name: str) -> CpuInstanceType | None:
        return self.cpu_instance_types.get(normalise_type_name(type_name))

    def is_known_type(self, type_name: str) -> bool:
        name = normalise_type_name(type_name)
        return name in self.instance_types or name in self.cpu_instance_types

    def not_found(self, family: str) -> FamilyNotFound | None:
        """The 'looked for, not found' record of a family name such as 'gn5e', if any."""
        family = family.strip().lower()
        return next((f for f in self.families_not_found if family in f.names), None)

    def gpu_of(self, instance: InstanceType | str) -> GPU:
        item = instance if isinstance(instance, InstanceType) else self.require_instance(instance)
        return self.gpus[item.gpu_id]

    def family_of(self, instance: InstanceType | str) -> Family | None:
        item = instance if isinstance(instance, InstanceType) else self.require_instance(instance)
        return self.families.get(item.family)

    def types_in_family(self, family: str) -> list[InstanceType]:
        return [t for t in self.instance_types.values() if t.family == family]

    def gpu_instance_types(self, *, gpu_id: str | None = None, min_gpu_memory_gb: float | None = None,
                           gpu_count: float | None = None, min_gpu_count: float | None = None,
                           rdma: bool | Rdma | None = None, nvlink: bool | None = None,
                           statuses: str | Iterable[str] | None = None, region: str | None = None,
                           include_vgpu: bool = True, tags: str | Iterable[str] | None = None,
                           ) -> list[InstanceType]:
        """Filter GPU types. rdma: True = any RDMA, False = none, or 'erdma'/'roce'. region: only types with a
        price in that exact region (aliases resolved). tags: all given intended_use_tags must be present.
        Sorted by GPU, GPU count, vCPU, name."""
        wanted_status = {statuses} if isinstance(statuses, str) else None if statuses is None else set(statuses)
        wanted_tags = {tags} if isinstance(tags, str) else set(tags or ())
        resolved = self.resolve_region(region) if region else None
        out = []
        for t in self.instance_types.values():
            if (gpu_id is not None and t.gpu_id != gpu_id) or (not include_vgpu and t.vgpu):
                continue
            if min_gpu_memory_gb is not None and (t.gpu_memory_gb or 0) < min_gpu_memory_gb:
                continue
            if gpu_count is not None and t.gpu_count != gpu_count:
                continue
            if min_gpu_count is not None and (t.gpu_count or 0) < min_gpu_count:
                continue
            if isinstance(rdma, bool) and t.has_rdma != rdma or isinstance(rdma, str) and t.rdma != rdma:
                continue
            if nvlink is not None and t.nvlink != nvlink:
                continue
            if wanted_status is not None and t.status not in wanted_status:
                continue
            if not wanted_tags <= set(t.intended_use_tags):
                continue
            if resolved is not None and (t.type, resolved) not in self._price_index:
                continue
            out.append(t)
        return sorted(out, key=lambda t: (t.gpu_id, t.gpu_count or 0, t.vcpu, t.type))

    # -- prices and regions --------------------------------------------------------------------------------
    def resolve_region(self, region: str) -> str:
        """'mainland'/'international' -> the default pricing region from meta.yaml; anything else unchanged."""
        region = region.strip().lower()
        return self.meta.region_defaults.get(region, region)

    def price(self, type_name: str, region: str) -> Price | None:
        """The price in exactly this region (after alias resolution), or None. Never copied across regions."""
        return self._price_index.get((normalise_type_name(type_name), self.resolve_region(region)))

    def prices_for(self, type_name: str) -> list[Price]:
        name = normalise_type_name(type_name)
        return sorted((p for p in self.prices if p.type == name), key=lambda p: p.region)

    def regions(self) -> list[str]:
        """Regions that have at least one price entry."""
        return sorted({p.region for p in self.prices})

    @staticmethod
    def is_mainland(region: str) -> bool:
        return is_mainland(region)


__all__ = ["GPU", "DenseTflops", "Family", "FamilyNotFound", "InstanceType", "Price", "CostLeverFact",
           "StorageEntry", "EssdLevel", "Platform", "CpuFamily", "CpuInstanceType", "CpuRatioRules", "CatalogMeta", "Catalog",
           "Sourced", "SourcedNote", "is_mainland",
           "normalise_type_name", "OVERRIDE_ENV", "CATALOG_CURRENCY", "Conversion", "real_date"]
