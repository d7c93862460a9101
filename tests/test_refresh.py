"""`catalog refresh` against recorded API response bodies (tests/fixtures/aliyun), no network."""

from __future__ import annotations

import argparse
import copy
import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from gpu_advisor.kb.catalog_loader import load_catalog_dir
from gpu_advisor.costing.aliyun import INSTALL_HINT
from gpu_advisor.costing.spot_history import load_spot_history, sidecar_path
from gpu_advisor.cli.commands import add_refresh_parser
from gpu_advisor.kb.refresh import run_refresh, shipped_catalog_dir

FIXTURES = Path(__file__).parent / "fixtures" / "aliyun"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


class RecordedApi:
    """Serves the recorded bodies; `patch` replaces one response by (method, key)."""

    def __init__(self, patch: dict | None = None) -> None:
        self.patch = patch or {}
        self.calls: list[tuple[str, str]] = []

    def _get(self, method: str, key: str, default: str) -> dict:
        self.calls.append((method, key))
        if (method, key) in self.patch:
            value = self.patch[(method, key)]
            if isinstance(value, Exception):
                raise value
            return copy.deepcopy(value)
        return load(default)

    def describe_available_resource(self, region):
        return self._get("available", region, "describe_available_resource.json")

    def describe_instance_types(self, region, next_token):
        page = "page2" if next_token == "page-2" else "page1"
        return self._get("types", page, f"describe_instance_types_{page}.json")

    def describe_price(self, region, instance_type):
        return self._get("price", instance_type, f"describe_price_{instance_type}.json")

    def describe_spot_price_history(self, region, instance_type, start, end, offset):
        return self._get("spot", instance_type, f"describe_spot_price_history_{instance_type}.json")


def args(tmp_path: Path, **kw) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_refresh_parser(parser.add_subparsers())
    ns = parser.parse_args(["refresh", "--output", str(tmp_path / "override.yaml"), *kw.get("extra", [])])
    return ns


def run(tmp_path: Path, api) -> tuple[int, str]:
    out = io.StringIO()
    return run_refresh(args(tmp_path), out, api=api, now=NOW), out.getvalue()


def test_refresh_writes_a_valid_dated_override_with_its_spot_key(tmp_path):
    code, text = run(tmp_path, RecordedApi())
    assert code == 0, text
    path = tmp_path / "override.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert {p["type"] for p in data["prices"]} == {"ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c32g1.8xlarge",
                                                   "ecs.gn7i-c64g1.16xlarge"}
    assert all(p["as_of"] == "2026-11-29" and "DescribePrice" in p["source"] for p in data["prices"])
    catalog = load_catalog_dir(shipped_catalog_dir(), path)
    price = catalog.price("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou")
    assert price.price_per_hour == 8.91 and price.origin == "override"  # compute-only detail line, not the total
    new = catalog.instance("ecs.gn7i-c64g1.16xlarge")
    assert new.gpu_id == "A10" and new.vcpu == 64 and new.origin == "override"
    assert catalog.instance("ecs.gn7i-c8g1.2xlarge").intended_use_tags  # rich catalog fields kept
    assert not sidecar_path(path).exists()  # spot prices have their own key in the override file (issue 19)
    assert {o["type"] for o in data["spot_price_history"]} >= {"ecs.gn7i-c8g1.2xlarge"}
    spot = load_spot_history(path).find("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou")
    assert spot.min_ratio == pytest.approx(1.78 / 8.91, abs=1e-3) and spot.zones == ["cn-hangzhou-h", "cn-hangzhou-i"]
    assert "2026-11-29" in text and "gn99x" in text  # the unknown family is reported as skipped


def test_sold_out_and_cpu_types_are_not_priced(tmp_path):
    api = RecordedApi()
    run(tmp_path, api)
    priced = {key for method, key in api.calls if method == "price"}
    assert "ecs.gn6v-c8g1.2xlarge" not in priced and "ecs.g7.large" not in priced


@pytest.mark.parametrize("patch,needle", [
    ({("price", "ecs.gn7i-c32g1.8xlarge"): load("malformed_describe_price.json")}, "DescribePrice ecs.gn7i-c32g1.8xlarge"),
    ({("types", "page2"): {"RequestId": "x", "NextToken": ""}}, "DescribeInstanceTypes"),
    ({("available", "cn-hangzhou"): {"AvailableZones": {"AvailableZone": [{"ZoneId": "z"}]}}}, "DescribeAvailableResource"),
    ({("spot", "ecs.gn7i-c8g1.2xlarge"): {"SpotPrices": {"SpotPriceType": [{"ZoneId": "z", "SpotPrice": "cheap",
                                                                             "OriginPrice": 8.91}]}}},
     "DescribeSpotPriceHistory ecs.gn7i-c8g1.2xlarge"),
    ({("price", "ecs.gn7i-c8g1.2xlarge"): TimeoutError("read timed out")}, "TimeoutError"),
])
def test_malformed_or_partial_response_leaves_the_existing_override_untouched(tmp_path, patch, needle):
    path = tmp_path / "override.yaml"
    path.write_text("prices: []\n", encoding="utf-8")
    sidecar_path(path).write_text("spot_price_history: []\n", encoding="utf-8")
    before = (path.read_bytes(), sidecar_path(path).read_bytes())
    code, text = run(tmp_path, RecordedApi(patch))
    assert code == 1
    assert "left unchanged" in text and needle in text
    assert (path.read_bytes(), sidecar_path(path).read_bytes()) == before


def test_a_second_region_keeps_the_first_regions_prices(tmp_path):
    path = tmp_path / "override.yaml"
    run(tmp_path, RecordedApi())
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    moved = [{**p, "region": "cn-beijing"} for p in data["prices"]]
    path.write_text(yaml.safe_dump({"instance_types": data["instance_types"], "prices": moved}), encoding="utf-8")
    run(tmp_path, RecordedApi())
    regions = {p["region"] for p in yaml.safe_load(path.read_text(encoding="utf-8"))["prices"]}
    assert regions == {"cn-beijing", "cn-hangzhou"}


def test_without_the_sdk_the_command_says_how_to_install(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_sdk(name, *a, **kw):
        if name.startswith("alibabacloud"):
            raise ImportError(name)
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_sdk)
    out = io.StringIO()
    assert run_refresh(args(tmp_path), out) == 2
    assert INSTALL_HINT in out.getvalue() and "gpu-advisor[aliyun]" in out.getvalue()
    assert not (tmp_path / "override.yaml").exists()


def test_the_apis_eri_quantity_decides_erdma_per_type(tmp_path):
    page1, page2 = load("describe_instance_types_page1.json"), load("describe_instance_types_page2.json")
    for row in page1["InstanceTypes"]["InstanceType"]:
        if row["InstanceTypeId"] == "ecs.gn7i-c8g1.2xlarge":
            row["EriQuantity"] = 2
    for row in page2["InstanceTypes"]["InstanceType"]:
        if row["InstanceTypeId"] == "ecs.gn7i-c64g1.16xlarge":
            row["EriQuantity"] = 0
    code, text = run(tmp_path, RecordedApi({("types", "page1"): page1, ("types", "page2"): page2}))
    assert code == 0, text
    catalog = load_catalog_dir(shipped_catalog_dir(), tmp_path / "override.yaml")
    with_eri = catalog.instance("ecs.gn7i-c8g1.2xlarge")
    assert with_eri.rdma == "erdma" and with_eri.rdma_note == "EriQuantity 2 (DescribeInstanceTypes)"
    assert with_eri.gpu_spec == "NVIDIA A10" and with_eri.in_api_listing
    without = catalog.instance("ecs.gn7i-c64g1.16xlarge")
    assert without.rdma == "none" and "EriQuantity 0" in without.rdma_note
    assert catalog.instance("ecs.gn7i-c32g1.8xlarge").rdma == "none"  # no EriQuantity: the family's statement
