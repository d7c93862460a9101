"""Parse and validate knowledge/catalog/*.yaml (and an optional override file) into a Catalog.

Every failure raises KnowledgeError whose message names the file, the entry (id / type) and the key.
"""

from __future__ import annotations

import functools
import os
from importlib.resources import files
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gpu_advisor.util import userdata, yamlio
from gpu_advisor.kb.catalog import (
    _FORBIDDEN_GPU_LABELS, CATALOG_CURRENCY, GPU, OVERRIDE_ENV, Catalog, CatalogMeta, CostLeverFact, CpuFamily,
    CpuInstanceType, CpuRatioRules,
    EssdLevel, Family, FamilyNotFound, InstanceType, Platform, Price, StorageEntry, normalise_type_name,
)
from gpu_advisor.errors import KnowledgeError

M = TypeVar("M", bound=BaseModel)
OVERRIDE_KEYS = ("prices", "instance_types", "spot_price_history")


def _fail(path: Path, entry: str, key: str, problem: str) -> KnowledgeError:
    return KnowledgeError(
        f"{path}: entry '{entry}': key '{key}': {problem}. Fix this entry in {path}.",
        f"{path}：条目“{entry}”的键“{key}”：{problem}。请修改 {path} 中的这一条目。",
        field=key)


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise KnowledgeError(f"{path}: catalog file is missing", f"{path}：缺少目录文件", field=str(path))
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except yamlio.YAMLError as exc:
        raise KnowledgeError(f"{path}: not valid YAML: {exc}", f"{path}：YAML 格式错误：{exc}",
                             field=str(path)) from None
    if not isinstance(data, dict):
        raise _fail(path, "(file)", "(top level)", "the file must hold a mapping")
    return data


def _read_override(path: Path) -> dict[str, Any]:
    """The override file: user input, so bounded (userdata.MAX_OVERRIDE_BYTES), UTF-8 and strict YAML (no aliases,
    duplicate keys or YAML 1.1 implicit types); errors name the file and line."""
    try:
        text = userdata.read_text(str(path), "catalog override", userdata.MAX_OVERRIDE_BYTES)
        data = userdata.load(text, str(path), max_bytes=userdata.MAX_OVERRIDE_BYTES,
                             max_nodes=userdata.MAX_OVERRIDE_NODES)
    except userdata.InputError as exc:
        raise KnowledgeError(exc.en, exc.zh, field=exc.field or str(path)) from None
    if not isinstance(data, dict):
        raise _fail(path, "(file)", "(top level)", "the file must hold a mapping")
    return data


def _not_in_future(path: Path, entry: str, key: str, value: Any) -> None:
    """An override's dates are when someone saw the value: never after today (UTC, a day's slack for time zones)."""
    import datetime

    if not isinstance(value, str):
        return
    parts = [int(p) for p in value.split("-")]
    first = datetime.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    if first > datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=1):
        raise _fail(path, entry, key, f"date {value} is in the future")


def _check_override_price(path: Path, entry: str, price: Price) -> None:
    _not_in_future(path, entry, "as_of", price.as_of)
    if price.conversion is not None:
        _not_in_future(path, entry, "conversion.as_of", price.conversion.as_of)
        if price.currency == CATALOG_CURRENCY:
            raise _fail(path, entry, "conversion", f"is set but the price is already in {CATALOG_CURRENCY}")


def _entries(data: dict[str, Any], path: Path, key: str) -> list[dict[str, Any]]:
    if key not in data:
        raise _fail(path, "(file)", key, "missing top-level key")
    items = data[key]
    if not isinstance(items, list):
        raise _fail(path, "(file)", key, "must be a list of entries")
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise _fail(path, f"#{i}", key, "each entry must be a mapping")
    return items


def _check_provenance(raw: dict[str, Any], path: Path, entry: str, prefix: str = "") -> None:
    for key in ("source", "as_of"):
        if key not in raw:
            raise _fail(path, entry, prefix + key, "missing (every catalog entry carries source and as_of; "
                                                   "write null plus a *_note when unknown)")
    if raw["as_of"] is None and not raw.get("as_of_note"):
        raise _fail(path, entry, prefix + "as_of", "is null without an as_of_note saying why")
    if raw["source"] is None and not raw.get("source_note"):
        raise _fail(path, entry, prefix + "source", "is null without a source_note saying why")
    if isinstance(raw["source"], str) and not raw["source"].strip():
        raise _fail(path, entry, prefix + "source", "is empty")


def _build(model: type[M], raw: dict[str, Any], path: Path, entry: str) -> M:
    _check_provenance(raw, path, entry)
    for key, value in raw.items():
        if isinstance(value, dict) and "source" in value and "as_of" in value:
            _check_provenance(value, path, entry, prefix=f"{key}.")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(entry)"
        problem = "missing" if err["type"] == "missing" else err["msg"]
        if err["type"] != "missing" and not isinstance(err.get("input"), (dict, list)):
            problem += f" (got {err.get('input')!r})"
        raise _fail(path, entry, key, problem) from None


def _keyed(model: type[M], path: Path, data: dict[str, Any], list_key: str, id_key: str,
           extra: dict[str, Any] | None = None) -> dict[str, M]:
    out: dict[str, M] = {}
    for i, raw in enumerate(_entries(data, path, list_key), 1):
        entry = str(raw.get(id_key) or f"#{i}")
        item = _build(model, {**raw, **(extra or {})}, path, entry)
        ident = getattr(item, id_key)
        if ident in out:
            raise _fail(path, entry, id_key, f"duplicate {id_key} '{ident}'")
        out[ident] = item
    return out


def _check_type_name(name: str, path: Path, entry: str) -> None:
    if normalise_type_name(name) != name:
        raise _fail(path, entry, "type", "must be the full lower-case name, e.g. 'ecs.gn7i-c8g1.2xlarge'")


def _named_by_api(label: str, api_gpu_spec: str | None) -> bool:
    """A restricted model label may stand in a display name only where the API's GPUSpec names that model."""
    model = re.sub(r"[ -]?80$", "", label).upper()
    return bool(api_gpu_spec) and model in api_gpu_spec.upper()


def _check_gpus(gpus: dict[str, GPU], path: Path) -> None:
    for gpu in gpus.values():
        if any(not _named_by_api(m.group(0), gpu.api_gpu_spec) for m in _FORBIDDEN_GPU_LABELS.finditer(gpu.display_name)):
            raise _fail(path, gpu.id, "display_name", "names a GPU model that no Alibaba page names; say what "
                                                      "Alibaba states and put attributions in third_party_note")
        if not gpu.named_by_alibaba and "not named by Alibaba" not in gpu.display_name:
            raise _fail(path, gpu.id, "display_name", "must say '(model not named by Alibaba)'")


def _check_types(types: dict[str, InstanceType], path: Path, gpus: dict[str, GPU],
                 families: dict[str, Family] | None) -> None:
    for t in types.values():
        _check_type_name(t.type, path, t.type)
        if t.gpu_id not in gpus:
            raise _fail(path, t.type, "gpu_id", f"unknown GPU '{t.gpu_id}' (not in gpus.yaml)")
        if families is not None and t.family not in families:
            raise _fail(path, t.type, "family", f"unknown family '{t.family}' (not in instance_families.yaml)")
        if t.gpu_count is None and not t.vgpu:
            raise _fail(path, t.type, "gpu_count", "may be null only for a vGPU slice (vgpu: true)")


def _prices(path: Path, data: dict[str, Any], origin: str) -> dict[tuple[str, str, str], Price]:
    out: dict[tuple[str, str, str], Price] = {}
    for i, raw in enumerate(_entries(data, path, "prices"), 1):
        entry = f"{raw.get('type', f'#{i}')} @ {raw.get('region', '?')}"
        price = _build(Price, {**raw, "origin": origin}, path, entry)
        _check_type_name(price.type, path, entry)
        if origin == "override":
            _check_override_price(path, entry, price)
        elif price.currency != CATALOG_CURRENCY:
            raise _fail(path, entry, "currency", f"shipped prices are in {CATALOG_CURRENCY}")
        # keyed by currency too: a price in another currency never replaces one in the catalog's (kept apart)
        if (price.type, price.region, price.currency) in out:
            raise _fail(path, entry, "region", "duplicate price for this type, region and currency")
        out[(price.type, price.region, price.currency)] = price
    return out


def _apply_override(path: Path, types: dict[str, InstanceType], prices: dict[tuple[str, str, str], Price],
                    gpus: dict[str, GPU]) -> None:
    data = _read_override(path)
    unknown = sorted(set(data) - set(OVERRIDE_KEYS))
    if unknown or not data:
        raise _fail(path, "(file)", unknown[0] if unknown else "(top level)",
                    "an override file takes only 'prices', 'instance_types' and 'spot_price_history'")
    if "instance_types" in data:
        added = _keyed(InstanceType, path, data, "instance_types", "type", {"origin": "override"})
        _check_types(added, path, gpus, None)
        for t in added.values():
            _not_in_future(path, t.type, "as_of", t.as_of)
        types.update(added)
    if "prices" in data:
        fresh = _prices(path, data, "override")
        _keep_one_currency_per_region(path, fresh, prices)
        prices.update(fresh)
    if "spot_price_history" in data:
        from gpu_advisor.costing.spot_history import SpotObservation

        for i, raw in enumerate(_entries(data, path, "spot_price_history"), 1):
            _build(SpotObservation, raw, path, f"{raw.get('type', f'#{i}')} @ {raw.get('region', '?')} (spot)")
    for (name, region, _), price in prices.items():
        if price.origin == "override" and name not in types and not price.type_not_in_catalog_note:
            raise _fail(path, f"{name} @ {region}", "type", "unknown instance type; add it under "
                        "instance_types or set type_not_in_catalog_note")


def _compared_in(price: Price) -> str:
    """The currency a price is compared in: the catalog's when it states a conversion rate, else its own."""
    return CATALOG_CURRENCY if price.conversion is not None else price.currency


def _keep_one_currency_per_region(path: Path, fresh: dict[tuple[str, str, str], Price],
                                  prices: dict[tuple[str, str, str], Price]) -> None:
    """A comparison never mixes currencies: one currency per region in the override file (a price with a stated,
    dated conversion rate counts in the catalog's), and the shipped prices of a region that the override prices in
    another currency are set aside (those types then have no price there)."""
    by_region: dict[str, set[str]] = {}
    for (name, region, _), price in fresh.items():
        by_region.setdefault(region, set()).add(_compared_in(price))
    for region, currencies in by_region.items():
        if len(currencies) > 1:
            raise _fail(path, region, "currency", f"prices for one region in more than one currency "
                        f"({', '.join(sorted(currencies))}); convert them with a stated, dated rate first")
        (currency,) = currencies
        for key in [k for k, p in prices.items() if k[1] == region and _compared_in(p) != currency]:
            del prices[key]


def load(directory: Path, override: Path | None) -> Catalog:
    gpus_path, fam_path = directory / "gpus.yaml", directory / "instance_families.yaml"
    gpus = _keyed(GPU, gpus_path, _read(gpus_path), "gpus", "id")
    _check_gpus(gpus, gpus_path)
    fam_data = _read(fam_path)
    families = _keyed(Family, fam_path, fam_data, "families", "family")
    for fam in families.values():
        if fam.gpu_id not in gpus:
            raise _fail(fam_path, fam.family, "gpu_id", f"unknown GPU '{fam.gpu_id}' (not in gpus.yaml)")
    not_found = tuple(_build(FamilyNotFound, raw, fam_path, "/".join(raw.get("names") or [f"#{i}"]))
                      for i, raw in enumerate(_entries(fam_data, fam_path, "families_not_found"), 1))
    types_path = directory / "instance_types.yaml"
    types = _keyed(InstanceType, types_path, _read(types_path), "instance_types", "type")
    _check_types(types, types_path, gpus, families)
    cpu_path = directory / "cpu_families.yaml"
    cpu_data = _read(cpu_path)
    cpu_types = _keyed(CpuInstanceType, cpu_path, cpu_data, "instance_types", "type")
    for name in cpu_types:
        _check_type_name(name, cpu_path, name)
        if name in types:
            raise _fail(cpu_path, name, "type", "also listed as a GPU instance type")
    price_path = directory / "prices.yaml"
    price_data = _read(price_path)
    prices = _prices(price_path, price_data, "catalog")
    for (name, region, _), price in prices.items():
        if name not in types and name not in cpu_types and not price.type_not_in_catalog_note:
            raise _fail(price_path, f"{name} @ {region}", "type", "unknown instance type (set "
                        "type_not_in_catalog_note if the catalog deliberately lacks its spec)")
    meta_path = directory / "meta.yaml"
    meta = _build(CatalogMeta, _read(meta_path), meta_path, "meta")
    if override is not None:
        try:
            _apply_override(override, types, prices, gpus)
        except KnowledgeError as exc:
            exc.user_input = True  # the user's file, not the shipped knowledge: an input error (CLI exit 2)
            raise
        meta = meta.model_copy(update={"override_file": str(override)})
    lever_path, storage_path = directory / "cost_levers.yaml", directory / "storage.yaml"
    levers: dict[str, list[CostLeverFact]] = {}
    for fact in _keyed(CostLeverFact, lever_path, _read(lever_path), "cost_levers", "id").values():
        levers.setdefault(fact.lever, []).append(fact)
    storage_data = _read(storage_path)
    platform_path = directory / "platforms.yaml"
    return Catalog(
        gpus=gpus, families=families, families_not_found=not_found, instance_types=types,
        prices=tuple(prices.values()), price_meta=dict(price_data.get("meta") or {}),
        cpu_families=_keyed(CpuFamily, cpu_path, cpu_data, "families", "family"), cpu_instance_types=cpu_types,
        cpu_ratio_rules=_build(CpuRatioRules, cpu_data.get("ratio_rules") or {}, cpu_path, "ratio_rules"),
        storage=_keyed(StorageEntry, storage_path, storage_data, "storage", "id"),
        essd_levels=_keyed(EssdLevel, storage_path, storage_data, "essd_levels", "level"),
        platforms=_keyed(Platform, platform_path, _read(platform_path), "platforms", "id"),
        cost_levers={k: tuple(v) for k, v in levers.items()}, meta=meta,
    )


# -- the shipped catalog, loaded and cached ----------------------------------
def load_catalog_dir(directory: str | Path, override: str | Path | None = None) -> Catalog:
    """Load (uncached) a catalog directory, optionally with an override file on top."""
    return load(Path(directory), None if override is None else Path(override))


@functools.lru_cache(maxsize=8)
def _load_cached(override: str | None) -> Catalog:
    return load_catalog_dir(Path(str(files("gpu_advisor.knowledge") / "catalog")), override)


def load_catalog(override: str | Path | None = None) -> Catalog:
    """The shipped catalog, with ``override`` (or $GPU_ADVISOR_CATALOG_OVERRIDE) merged on top; cached per path."""
    override = override or os.environ.get(OVERRIDE_ENV) or None
    return _load_cached(None if override is None else str(Path(override).expanduser().resolve()))


def clear_catalog_cache() -> None:
    _load_cached.cache_clear()


def check_override(override: str | Path | None = None) -> None:
    """Load the catalog with ``override`` (or $GPU_ADVISOR_CATALOG_OVERRIDE) when one is set: KnowledgeError naming
    the file and key if it is broken. ``serve`` calls this before it starts, so a bad override stops it."""
    if override or os.environ.get(OVERRIDE_ENV):
        load_catalog(override)
