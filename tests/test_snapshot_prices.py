"""Every region's prices come from the recorded public snapshot (tools/data/alicloud_prices_cloudpilot.json), each
traced back to it; the recorder and the importer's checks work on small recorded inputs (no network)."""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gpu_advisor.kb.catalog import is_mainland
from gpu_advisor.kb.catalog_loader import load_catalog

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "tools" / "data" / "alicloud_prices_cloudpilot.json"
SHARED = REPO.parent / "shared" / "research" / "aliyun_catalog.yaml"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_recorded_snapshot_names_its_origin(snapshot: dict) -> None:
    prov = snapshot["provenance"]
    assert prov["repo"] == "https://github.com/cloudpilot-ai/karpenter-provider-alibabacloud"
    assert prov["path"] == "pkg/providers/pricing/initial-on-demand-prices.json"
    assert len(prov["commit"]) == 40 and prov["date"] == "2024-12-30"
    assert "ecs-price-info/" in prov["price_server"]["reads"] and "CNY" in prov["currency"]
    assert all(v > 0 for prices in snapshot["prices"].values() for v in prices.values())


def test_every_price_of_the_recording_is_imported_and_traced(snapshot: dict) -> None:
    cat = load_catalog()
    known = set(cat.instance_types) | set(cat.cpu_instance_types)
    expected = {(t, r): v for r, prices in snapshot["prices"].items() for t, v in prices.items() if t in known}
    assert len(expected) == 982  # 65 of the research file's entries + 917 imported from the recording
    assert sum(1 for _, r in expected if is_mainland(r)) == 584  # 37 + 547 in 14 mainland regions
    for (itype, region), value in expected.items():
        price = cat.price(itype, region)
        assert price is not None and price.price_per_hour == value and price.currency == "CNY", (itype, region)
        assert snapshot["provenance"]["commit"] in price.source and price.as_of == "2024-12-30"
    # the rest are the research file's own entries: a family the recording leaves out (c5) or a type the catalog
    # has no specification for (r8i.large); no price is copied between regions
    extra = {(p.type, p.region) for p in cat.prices} - set(expected)
    assert {t for t, _ in extra} == {"ecs.c5.large", "ecs.r8i.large"} and len(extra) == 6


def test_mainland_regions_are_priced_and_regional_differences_kept() -> None:
    cat = load_catalog()
    for region in ("cn-shanghai", "cn-shenzhen", "cn-wulanchabu", "cn-chengdu"):
        assert cat.price("ecs.gn7i-c8g1.2xlarge", region) is not None, region
    # the 4 x A100 80 GB type that serves a 72B model with tensor parallel 4, in the default mainland region
    assert cat.price("ecs.gn7e-c16g1.16xlarge", "mainland").price_per_hour == pytest.approx(138.967)
    # Ulanqab lists gn7e below Hangzhou: each region keeps its own figure
    assert cat.price("ecs.gn7e-c16g1.4xlarge", "cn-wulanchabu").price_per_hour < \
        cat.price("ecs.gn7e-c16g1.4xlarge", "cn-hangzhou").price_per_hour


def test_zero_prices_are_not_prices(snapshot: dict) -> None:
    cat = load_catalog()
    zeros = [(t, r) for r, types in snapshot["zero_prices"].items() for t in types]
    assert ("ecs.ebmgn7ix.32xlarge", "us-east-1") in zeros
    assert all(cat.price(t, r) is None for t, r in zeros)


def test_frankfurt_and_tokyo_price_the_gpus_that_hold_a_32b_model() -> None:
    cat = load_catalog()
    for region in ("eu-central-1", "ap-northeast-1", "cn-hongkong", "ap-southeast-5"):
        big = [t for t in cat.gpu_instance_types(region=region)
               if t.gpu_memory_gb and t.gpu_count and t.gpu_count * t.gpu_memory_gb >= 80]
        assert big, region


@pytest.mark.skipif(not SHARED.is_file(), reason="shared/research/aliyun_catalog.yaml is not present")
def test_importer_stops_when_the_research_file_disagrees_with_the_recording(snapshot: dict) -> None:
    importer = _module("import_catalog")
    research = yaml.safe_load(SHARED.read_text(encoding="utf-8"))["prices"]
    known = {e["type"] for e in research["entries"]}
    out = importer._prices(research, known, snapshot)
    assert out["meta"]["snapshot_import"]["commit"] == snapshot["provenance"]["commit"]
    changed = copy.deepcopy(research)
    entry = next(e for e in changed["entries"] if e["type"] == "ecs.gn7i-c8g1.2xlarge" and e["region"] == "ap-southeast-1")
    entry["price_per_hour"] = 1.0
    with pytest.raises(SystemExit, match="research file says 1.0"):
        importer._prices(changed, known, snapshot)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_recorder_keeps_gpu_and_pipeline_cpu_types_and_sets_zeros_apart(tmp_path: Path) -> None:
    recorder = _module("record_prices")
    src = tmp_path / "src"
    (src / "pkg/providers/pricing").mkdir(parents=True)
    (src / recorder.PATH).write_text(json.dumps({
        "eu-central-1": {"ecs.gn7i-c8g1.2xlarge": 18.5, "ecs.c7.large": 0.54, "ecs.d1.14xlarge": 9.0,
                         "ecs.ebmgn7e.32xlarge": 0}}), encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_AUTHOR_DATE": "2024-12-30T09:00:00+00:00", "GIT_COMMITTER_DATE": "2024-12-31T02:00:00+00:00",
           "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "snapshot"]):
        subprocess.run(["git", *cmd], cwd=src, check=True, env=env)
    out = tmp_path / "out.json"
    assert recorder.main(["--git-dir", str(src / ".git"), "--commit", "HEAD", "--out", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["prices"] == {"eu-central-1": {"ecs.c7.large": 0.54, "ecs.gn7i-c8g1.2xlarge": 18.5}}
    assert doc["zero_prices"] == {"eu-central-1": ["ecs.ebmgn7e.32xlarge"]}
    assert doc["provenance"]["date"] == "2024-12-30" and doc["provenance"]["committed"] == "2024-12-31"
