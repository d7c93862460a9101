"""`gpu-advisor catalog refresh`: current instance types, prices and spot history from Alibaba Cloud.

Two sources. The default is the ECS API with credentials (DescribeInstanceTypes, DescribePrice,
DescribeSpotPriceHistory) for one region, mainland regions and spot included. ``--public`` reads Alibaba's public
international price list instead (no credentials; gpu_advisor.costing.public_price), which prices the catalog's GPU
types in every region it lists, in the file's currency (USD).

Writes an override file (`prices:`, `instance_types:` and `spot_price_history:`, each entry with source and as_of)
that the advisor reads on top of the shipped catalog. All-or-nothing: any malformed or partial response leaves the
existing file untouched and the command reports what failed. A region's prices in the override are replaced as a
whole, so one region never holds two currencies.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib.resources import files
from pathlib import Path
from typing import Any, TextIO

import yaml

from gpu_advisor.util import yamlio
from gpu_advisor.kb.catalog import Catalog
from gpu_advisor.kb.catalog_loader import load_catalog_dir
from gpu_advisor.costing import public_price
from gpu_advisor.costing.aliyun import EcsApi, SdkEcsApi, SdkMissing
from gpu_advisor.costing.spot_history import sidecar_path
from gpu_advisor.errors import KnowledgeError

DEFAULT_OUTPUT = Path("~/.config/gpu-advisor/catalog-override.yaml")
SOURCE = "Alibaba Cloud ECS API 2014-05-26 {action} (alibabacloud-ecs20140526), region {region}"
MAX_PAGES = 50


class Malformed(ValueError):
    """A response that does not have the documented shape."""


@dataclass
class RefreshResult:
    instance_types: list[dict[str, Any]] = field(default_factory=list)
    prices: list[dict[str, Any]] = field(default_factory=list)
    spot: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _get(body: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(body, dict) or key not in body:
            raise Malformed(f"missing {'.'.join(path)}")
        body = body[key]
    return body


def _list(body: Any, *path: str) -> list[Any]:
    value = _get(body, *path)
    if not isinstance(value, list):
        raise Malformed(f"{'.'.join(path)} is not a list")
    return value


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise Malformed(f"{name} is not a non-negative number: {value!r}")
    return float(value)


def available_types(body: dict[str, Any]) -> dict[str, list[str]]:
    """{instance type: [zones where it is Available]} from DescribeAvailableResource."""
    out: dict[str, list[str]] = {}
    for zone in _list(body, "AvailableZones", "AvailableZone"):
        zone_id = _get(zone, "ZoneId")
        for res in _list(zone, "AvailableResources", "AvailableResource"):
            if _get(res, "Type") != "InstanceType":
                continue
            for sup in _list(res, "SupportedResources", "SupportedResource"):
                if _get(sup, "Status") == "Available":
                    out.setdefault(_get(sup, "Value"), []).append(zone_id)
    return out


def gpu_type_rows(api: EcsApi, region: str) -> list[dict[str, Any]]:
    """All GPU instance types (GPUAmount > 0) from DescribeInstanceTypes, following NextToken."""
    rows, token = [], None
    for _ in range(MAX_PAGES):
        body = api.describe_instance_types(region, token)
        rows.extend(r for r in _list(body, "InstanceTypes", "InstanceType") if (r.get("GPUAmount") or 0) > 0)
        token = body.get("NextToken") or None
        if token is None:
            return rows
    raise Malformed("DescribeInstanceTypes: NextToken did not end")


def instance_entry(row: dict[str, Any], catalog: Catalog, source: str, today: str) -> dict[str, Any] | None:
    """An override entry: the catalog entry with API vCPU/RAM/GPU count, or a new one built from its family."""
    name = _get(row, "InstanceTypeId")
    update = {"vcpu": int(_number(_get(row, "CpuCoreCount"), "CpuCoreCount")),
              "memory_gib": _number(_get(row, "MemorySize"), "MemorySize"),
              "gpu_count": _number(_get(row, "GPUAmount"), "GPUAmount"), "source": source, "as_of": today,
              "as_of_note": None, "source_note": None, "gpu_spec": row.get("GPUSpec") or None,
              "gpu_spec_source": source, "in_api_listing": True, "api_listing_note": None}
    known = catalog.instance(name)
    if known is not None:
        data = known.model_dump(mode="json", exclude={"origin"})
        return _eri({**data, **update}, row)
    fam = catalog.families.get(_get(row, "InstanceTypeFamily").removeprefix("ecs."))
    if fam is None:
        return None
    entry = {"type": name, "family": fam.family, "gpu_id": fam.gpu_id, "gpu_model_stated": row.get("GPUSpec"),
             "gpu_memory_gb": row.get("GPUMemorySize") or fam.gpu_memory_per_gpu_gb, "rdma": fam.rdma,
             "nvlink": fam.nvlink, "vgpu": fam.vgpu, "bare_metal": fam.bare_metal, "status": fam.status,
             "intended_use_tags": list(fam.intended_use_tags), "network_gbit_s": None,
             "region_note": f"rdma/nvlink/status/tags taken from family {fam.family} in the shipped catalog", **update}
    return _eri(entry, row)


def _eri(entry: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The API's per-type EriQuantity decides eRDMA (a RoCE family keeps its RoCE: ERI is Alibaba's eRDMA)."""
    eri = row.get("EriQuantity")
    if eri is None or entry.get("rdma") == "roce":
        return entry
    count = int(_number(eri, "EriQuantity"))
    if count > 0:
        return {**entry, "rdma": "erdma", "rdma_note": f"EriQuantity {count} (DescribeInstanceTypes)"}
    return {**entry, "rdma": "none", "rdma_gbit_s": None, "rdma_note": "EriQuantity 0 (DescribeInstanceTypes)"}


def price_entry(body: dict[str, Any], name: str, region: str, source: str, today: str) -> dict[str, Any]:
    price = _get(body, "PriceInfo", "Price")
    details = price.get("DetailInfos", {}).get("DetailInfo", []) if isinstance(price.get("DetailInfos"), dict) else []
    compute = next((d for d in details if isinstance(d, dict) and d.get("Resource") in ("instanceType", "instance")), None)
    value = _number(_get(compute or price, "TradePrice"), "TradePrice")
    if value <= 0:
        raise Malformed("TradePrice is zero")
    billing = ("pay-as-you-go, compute only (DescribePrice detail 'instanceType')" if compute else
               "pay-as-you-go, DescribePrice total (may include the default system disk)")
    return {"type": name, "region": region, "billing": billing, "price_per_hour": value,
            "currency": _get(price, "Currency"), "confidence": "high: Alibaba Cloud price API",
            "source": source, "as_of": today}


def spot_entry(api: EcsApi, name: str, region: str, days: int, now: datetime) -> dict[str, Any] | None:
    start = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    end = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    ratios, zones, currency, offset = [], set(), None, 0
    for _ in range(MAX_PAGES):
        body = api.describe_spot_price_history(region, name, start, end, offset)
        points = _list(body, "SpotPrices", "SpotPriceType")
        currency = body.get("Currency") or currency
        for p in points:
            origin = _number(_get(p, "OriginPrice"), "OriginPrice")
            if origin > 0:
                ratios.append(_number(_get(p, "SpotPrice"), "SpotPrice") / origin)
                zones.add(_get(p, "ZoneId"))
        offset = int(body.get("NextOffset") or 0)
        if not offset or not points:
            break
    if not ratios:
        return None
    return {"type": name, "region": region, "min_ratio": round(min(ratios), 4), "max_ratio": round(max(ratios), 4),
            "samples": len(ratios), "zones": sorted(zones), "period": f"{start[:10]}/{end[:10]}",
            "currency": currency, "source": SOURCE.format(action="DescribeSpotPriceHistory", region=region),
            "as_of": end[:10]}


def _step(result: RefreshResult, what: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except (Malformed, KeyError, TypeError, ValueError) as exc:
        result.failures.append(f"{what}: malformed response ({exc})")
    except Exception as exc:  # noqa: BLE001 - SDK/network errors are reported, never half-written
        result.failures.append(f"{what}: {type(exc).__name__}: {exc}")
    return None


def refresh(api: EcsApi, catalog: Catalog, region: str, *, spot_days: int = 7,
            now: datetime | None = None) -> RefreshResult:
    now = now or datetime.now(timezone.utc)
    today, result = now.date().isoformat(), RefreshResult()
    avail = _step(result, "DescribeAvailableResource", lambda: available_types(api.describe_available_resource(region)))
    rows = _step(result, "DescribeInstanceTypes", gpu_type_rows, api, region)
    if avail is None or rows is None:
        return result
    src = SOURCE.format(action="DescribeInstanceTypes", region=region)
    for row in rows:
        before = len(result.failures)
        entry = _step(result, f"DescribeInstanceTypes {row.get('InstanceTypeId')}", instance_entry, row, catalog, src, today)
        if entry is None and len(result.failures) == before:
            result.skipped.append(f"{row.get('InstanceTypeId')}: family not in the shipped catalog")
        elif entry is not None and entry["type"] in avail:
            result.instance_types.append(entry)
    for entry in result.instance_types:
        name = entry["type"]
        src = SOURCE.format(action="DescribePrice", region=region)
        price = _step(result, f"DescribePrice {name}", lambda n=name: price_entry(api.describe_price(region, n), n, region, src, today))
        if price is not None:
            result.prices.append(price)
        spot = _step(result, f"DescribeSpotPriceHistory {name}", spot_entry, api, name, region, spot_days, now)
        if spot is not None:
            result.spot.append(spot)
    return result


# -- writing: merge with the existing override, validate against the shipped catalog, replace atomically ----------
def _existing(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise KnowledgeError(f"{path}: existing override is not a mapping", f"{path}：现有覆盖文件不是映射")
    return data


def merged_override(existing: dict[str, Any], result: RefreshResult, regions: str | set[str],
                    old_spot: list[dict[str, Any]] | None = None, replace_spot: bool = True) -> dict[str, Any]:
    """Keep other regions' prices and types not refreshed now; replace the refreshed regions' prices and spot
    observations as a whole, and the refreshed types."""
    regions = {regions} if isinstance(regions, str) else set(regions)
    fresh = {e["type"] for e in result.instance_types}
    types = [t for t in existing.get("instance_types") or [] if t.get("type") not in fresh] + result.instance_types
    prices = [p for p in existing.get("prices") or [] if p.get("region") not in regions] + result.prices
    spot_regions = {o["region"] for o in result.spot} | (regions if replace_spot else set())
    spot_before = existing.get("spot_price_history") or old_spot or []
    spot = [o for o in spot_before if o.get("region") not in spot_regions] + result.spot
    out: dict[str, Any] = {"instance_types": types, "prices": prices}
    if spot:
        out["spot_price_history"] = spot
    return out


def _write_atomic(path: Path, data: dict[str, Any], header: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110))
    os.replace(tmp, path)


def write_override(path: Path, result: RefreshResult, region: str | set[str], today: str,
                   command: str | None = None) -> None:
    """Validate the merged override against the shipped catalog first; only then replace the file. The public
    price list has no spot prices, so a --public refresh (command given) keeps the spot observations."""
    old_spot = (_existing(sidecar_path(path)).get("spot_price_history") or []) if sidecar_path(path).is_file() else []
    override = merged_override(_existing(path), result, region, old_spot, replace_spot=command is None)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "override.yaml"
        probe.write_text(yaml.safe_dump(override, allow_unicode=True, sort_keys=False), encoding="utf-8")
        load_catalog_dir(shipped_catalog_dir(), probe)  # raises KnowledgeError naming the bad entry
    command = command or f"gpu-advisor catalog refresh --region {region}"
    header = f"# Written by `{command}` on {today}. Re-run to update.\n"
    _write_atomic(path, override, header)


def shipped_catalog_dir() -> Path:
    return Path(str(files("gpu_advisor.knowledge") / "catalog"))


# -- command line ------------------------------------------------------------------------------------------------
def default_output() -> Path:
    return Path(os.environ.get("GPU_ADVISOR_CATALOG_OVERRIDE") or DEFAULT_OUTPUT).expanduser()


def public_refresh(body: bytes | str, catalog: Catalog, url: str, now: datetime) -> tuple[RefreshResult, int]:
    """Prices of the catalog's GPU types from the public price list; (result, entries for other types)."""
    today, result = now.date().isoformat(), RefreshResult()
    wanted = set(catalog.instance_types)
    source = f"Alibaba Cloud public ECS price list {url}, fetched {today}"
    try:
        parsed = public_price.parse_price_list(body, wanted, source, today)
    except public_price.PriceListError as exc:
        result.failures.append(f"public price list: {exc}")
        return result, 0
    result.prices = parsed.prices
    if not parsed.prices:
        result.failures.append("public price list: no price for any GPU instance type of the catalog")
    return result, parsed.other_types


def run_public_refresh(args: argparse.Namespace, stdout: TextIO, now: datetime | None = None) -> int:
    out = (args.output or default_output()).expanduser()
    url = getattr(args, "price_url", None) or public_price.DEFAULT_URL
    now = now or datetime.now(timezone.utc)
    try:
        body = public_price.fetch(url)
    except public_price.PriceListError as exc:
        stdout.write(f"catalog refresh --public failed; {out} was left unchanged:\n  - {exc}\n")
        return 1
    result, _ = public_refresh(body, load_catalog_dir(shipped_catalog_dir()), url, now)
    if result.failures:
        stdout.write(f"catalog refresh --public failed; {out} was left unchanged:\n")
        stdout.writelines(f"  - {f}\n" for f in result.failures)
        return 1
    regions = {p["region"] for p in result.prices}
    currencies = sorted({p["currency"] for p in result.prices})
    try:
        write_override(out, result, regions, now.date().isoformat(), "gpu-advisor catalog refresh --public")
    except (KnowledgeError, OSError, yaml.YAMLError) as exc:
        stdout.write(f"catalog refresh --public failed; {out} was left unchanged: {exc}\n")
        return 1
    dates = sorted({p["as_of"] for p in result.prices})
    stdout.write(f"wrote {out}: {len(result.prices)} prices of {len({p['type'] for p in result.prices})} GPU instance "
                 f"types in {len(regions)} regions, currency {', '.join(currencies)}, as of {', '.join(dates)}\n")
    stdout.write(f"use it: export GPU_ADVISOR_CATALOG_OVERRIDE={out}\n")
    return 0


def run_refresh(args: argparse.Namespace, stdout: TextIO, api: EcsApi | None = None,
                now: datetime | None = None) -> int:
    if getattr(args, "public", False):
        return run_public_refresh(args, stdout, now)
    region, out = args.region, (args.output or default_output()).expanduser()
    try:
        api = api or SdkEcsApi(region)
    except SdkMissing as exc:
        stdout.write(f"{exc}\n")
        return 2
    now = now or datetime.now(timezone.utc)
    result = refresh(api, load_catalog_dir(shipped_catalog_dir()), region, spot_days=args.spot_days, now=now)
    if not result.failures and not result.prices:
        result.failures.append(f"no GPU instance type with a price came back for {region}")
    if result.failures:
        stdout.write(f"catalog refresh failed; {out} was left unchanged:\n")
        stdout.writelines(f"  - {f}\n" for f in result.failures)
        return 1
    try:
        write_override(out, result, region, now.date().isoformat())
    except (KnowledgeError, OSError, yaml.YAMLError) as exc:
        stdout.write(f"catalog refresh failed; {out} was left unchanged: {exc}\n")
        return 1
    stdout.write(f"wrote {out}: {len(result.instance_types)} GPU instance types, {len(result.prices)} prices "
                 f"({region}, {now.date().isoformat()}); spot history for {len(result.spot)} types "
                 "(key spot_price_history)\n")
    stdout.writelines(f"  skipped {s}\n" for s in result.skipped)
    stdout.write(f"use it: export GPU_ADVISOR_CATALOG_OVERRIDE={out}\n")
    return 0


__all__ = ["run_refresh", "run_public_refresh", "public_refresh", "refresh", "RefreshResult", "write_override"]
