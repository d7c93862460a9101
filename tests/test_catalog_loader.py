"""The catalog loader rejects malformed files (naming file, entry and key), merges overrides, and the committed
files are what tools/import_catalog.py makes from the shared research file."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
import yaml

from gpu_advisor.kb import catalog as catalog_module
from gpu_advisor.kb.catalog_loader import clear_catalog_cache, load_catalog, load_catalog_dir
from gpu_advisor.errors import KnowledgeError

REPO = Path(__file__).resolve().parents[1]
CATALOG_DIR = REPO / "knowledge" / "catalog"
SHARED = REPO.parent / "shared" / "research" / "aliyun_catalog.yaml"
FAST_LOAD = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FAST_DUMP = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _load(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOAD)  # noqa: S506 (safe loader)


def _dump(path: Path, data: dict) -> Path:
    path.write_text(yaml.dump(data, Dumper=FAST_DUMP, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    target = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, target)
    return target


def _edit(path: Path, list_key: str, match: tuple[str, str], change) -> None:
    data = _load(path)
    entry = next(e for e in data[list_key] if e.get(match[0]) == match[1])
    change(entry)
    _dump(path, data)


def _expect(directory: Path, *fragments: str, override: Path | None = None) -> KnowledgeError:
    with pytest.raises(KnowledgeError) as info:
        load_catalog_dir(directory, override)
    for fragment in fragments:
        assert fragment in info.value.en, info.value.en
    assert info.value.zh and info.value.code == "invalid_knowledge"
    return info.value


def test_copy_loads(cat_dir: Path) -> None:
    assert len(load_catalog_dir(cat_dir).instance_types) == 174


def test_missing_as_of_key(cat_dir: Path) -> None:
    _edit(cat_dir / "instance_types.yaml", "instance_types", ("type", "ecs.gn7i-c8g1.2xlarge"),
          lambda e: e.pop("as_of"))
    _expect(cat_dir, "instance_types.yaml", "ecs.gn7i-c8g1.2xlarge", "'as_of'", "missing")


def test_null_as_of_needs_note(cat_dir: Path) -> None:
    _edit(cat_dir / "gpus.yaml", "gpus", ("id", "L20"), lambda e: e.pop("as_of_note"))
    err = _expect(cat_dir, "gpus.yaml", "'L20'", "'as_of'", "as_of_note")
    assert err.field == "as_of"


def test_missing_source_key(cat_dir: Path) -> None:
    _edit(cat_dir / "prices.yaml", "prices", ("type", "ecs.gn5-c4g1.xlarge"), lambda e: e.pop("source"))
    _expect(cat_dir, "prices.yaml", "ecs.gn5-c4g1.xlarge @ cn-hangzhou", "'source'")


def test_unknown_gpu_reference(cat_dir: Path) -> None:
    _edit(cat_dir / "instance_types.yaml", "instance_types", ("type", "ecs.gn6i-c4g1.xlarge"),
          lambda e: e.update(gpu_id="H800"))
    _expect(cat_dir, "instance_types.yaml", "ecs.gn6i-c4g1.xlarge", "'gpu_id'", "H800")


def test_duplicate_type(cat_dir: Path) -> None:
    path = cat_dir / "instance_types.yaml"
    data = _load(path)
    data["instance_types"].append(dict(data["instance_types"][0]))
    _dump(path, data)
    _expect(cat_dir, "instance_types.yaml", data["instance_types"][0]["type"], "'type'", "duplicate")


@pytest.mark.parametrize(("key", "value"), [("vcpu", 0), ("memory_gib", -1), ("gpu_count", 0)])
def test_numbers_must_be_positive(cat_dir: Path, key: str, value: float) -> None:
    _edit(cat_dir / "instance_types.yaml", "instance_types", ("type", "ecs.gn7i-c8g1.2xlarge"),
          lambda e: e.update({key: value}))
    _expect(cat_dir, "instance_types.yaml", "ecs.gn7i-c8g1.2xlarge", f"'{key}'")


def test_negative_price(cat_dir: Path) -> None:
    _edit(cat_dir / "prices.yaml", "prices", ("type", "ecs.gn5-c4g1.xlarge"), lambda e: e.update(price_per_hour=-3))
    _expect(cat_dir, "prices.yaml", "ecs.gn5-c4g1.xlarge", "'price_per_hour'")


def test_bad_enum_and_unknown_key(cat_dir: Path) -> None:
    _edit(cat_dir / "instance_types.yaml", "instance_types", ("type", "ecs.gn7i-c8g1.2xlarge"),
          lambda e: e.update(rdma="infiniband"))
    _expect(cat_dir, "ecs.gn7i-c8g1.2xlarge", "'rdma'")


def test_typo_key_is_rejected(cat_dir: Path) -> None:
    _edit(cat_dir / "gpus.yaml", "gpus", ("id", "T4"), lambda e: e.update(memmory_gb=16))
    _expect(cat_dir, "gpus.yaml", "'T4'", "'memmory_gb'")


def test_gpu_named_without_alibaba(cat_dir: Path) -> None:
    _edit(cat_dir / "gpus.yaml", "gpus", ("id", "GN8V-96GB-HBM3"), lambda e: e.update(display_name="NVIDIA H800"))
    _expect(cat_dir, "gpus.yaml", "GN8V-96GB-HBM3", "'display_name'")


def test_bad_as_of_format(cat_dir: Path) -> None:
    _edit(cat_dir / "instance_families.yaml", "families", ("family", "gn7i"), lambda e: e.update(as_of="last year"))
    _expect(cat_dir, "instance_families.yaml", "'gn7i'", "'as_of'")


def test_bad_yaml(cat_dir: Path) -> None:
    (cat_dir / "storage.yaml").write_text("storage: [unclosed\n", encoding="utf-8")
    _expect(cat_dir, "storage.yaml", "YAML")


_write = _dump


PRICE = {"type": "ecs.gn7i-c8g1.2xlarge", "region": "cn-hangzhou", "billing": "pay-as-you-go",
         "price_per_hour": 8.88, "currency": "CNY", "source": "Alibaba console quote", "as_of": "2026-11-01"}


def test_override_replaces_and_adds_prices(tmp_path: Path) -> None:
    new_region = {**PRICE, "region": "eu-west-1", "price_per_hour": 9.1}  # London: no GPU price shipped
    override = _write(tmp_path / "o.yaml", {"prices": [PRICE, new_region]})
    shipped = load_catalog_dir(CATALOG_DIR)
    assert shipped.price("ecs.gn7i-c8g1.2xlarge", "eu-west-1") is None
    cat = load_catalog_dir(CATALOG_DIR, override)
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou").price_per_hour == 8.88
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou").origin == "override"
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "eu-west-1").price_per_hour == 9.1
    assert cat.price("ecs.gn6i-c4g1.xlarge", "cn-hangzhou").origin == "catalog"
    assert len(cat.prices) == len(shipped.prices) + 1 and cat.meta.override_file == str(override)


def test_override_adds_instance_type(tmp_path: Path) -> None:
    base = _load(CATALOG_DIR / "instance_types.yaml")["instance_types"][0]
    added = {**base, "type": "ecs.gn8v-custom.4xlarge", "source": "my sales quote", "as_of": "2026-11-02",
             "as_of_note": None}
    override = _write(tmp_path / "o.yaml", {"instance_types": [added],
                                            "prices": [{**PRICE, "type": added["type"]}]})
    cat = load_catalog_dir(CATALOG_DIR, override)
    assert cat.instance("ecs.gn8v-custom.4xlarge").origin == "override"
    assert cat.price("ecs.gn8v-custom.4xlarge", "mainland").price_per_hour == 8.88


@pytest.mark.parametrize(("data", "key"), [
    ({"prices": [{k: v for k, v in PRICE.items() if k != "as_of"}]}, "'as_of'"),
    ({"prices": [{**PRICE, "type": "ecs.gn8i-vf8.2xlarge"}]}, "'type'"),
    ({"gpus": []}, "'gpus'"),
])
def test_override_is_validated(tmp_path: Path, data: dict, key: str) -> None:
    override = _write(tmp_path / "bad.yaml", data)
    _expect(CATALOG_DIR, "bad.yaml", key, override=override)


def test_env_var_override_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    override = _write(tmp_path / "env.yaml", {"prices": [PRICE]})
    monkeypatch.setenv(catalog_module.OVERRIDE_ENV, str(override))
    try:
        cat = load_catalog()
        assert cat.price("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou").price_per_hour == 8.88
        assert load_catalog() is cat
        monkeypatch.delenv(catalog_module.OVERRIDE_ENV)
        assert load_catalog().price("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou").origin == "catalog"
    finally:
        clear_catalog_cache()


@pytest.mark.skipif(not SHARED.is_file(), reason="shared/research/aliyun_catalog.yaml is not present")
def test_importer_output_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("import_catalog", REPO / "tools" / "import_catalog.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    outputs = module.build_outputs(_load(SHARED))
    assert "gpus.yaml" not in outputs  # hand-maintained
    for name, text in outputs.items():
        assert (CATALOG_DIR / name).read_text(encoding="utf-8") == text, (
            f"knowledge/catalog/{name} is stale: run python tools/import_catalog.py")
