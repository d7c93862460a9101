"""Override prices (issue 21): currency is the catalog's or converted at a stated, dated rate - otherwise kept
apart, never compared with CNY; prices finite, positive, numbers; dates real and not in the future; the file is
read as strict, bounded YAML; a bad override stops `serve` before it starts, naming the file and key."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_advisor.kb.catalog import CATALOG_CURRENCY
from gpu_advisor.kb.catalog_loader import check_override, load_catalog_dir
from gpu_advisor.errors import KnowledgeError
from gpu_advisor.util.userdata import MAX_OVERRIDE_BYTES

CATALOG_DIR = Path(__file__).resolve().parents[1] / "knowledge" / "catalog"
TYPE, REGION = "ecs.gn7i-c8g1.2xlarge", "cn-hangzhou"


def _override(tmp_path: Path, price: str = "5", currency: str = "CNY", as_of: str = "2026-11-01", extra: str = "",
              name: str = "o.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"prices:\n  - {{type: {TYPE}, region: {REGION}, billing: pay-as-you-go, price_per_hour: {price}, "
                    f"currency: {currency}, source: console quote, as_of: '{as_of}'{extra}}}\n", encoding="utf-8")
    return path


def _refused(path: Path, *fragments: str) -> KnowledgeError:
    with pytest.raises(KnowledgeError) as info:
        load_catalog_dir(CATALOG_DIR, path)
    for fragment in (path.name, *fragments):
        assert fragment in info.value.en, info.value.en
    assert info.value.zh != info.value.en
    return info.value


def test_a_usd_price_without_a_rate_prices_its_region_in_usd_alone(tmp_path):
    """An override in USD without a rate (what `catalog refresh --public` writes) prices its region in USD; the shipped
    CNY prices of that region are set aside, so no comparison there mixes the two; other regions keep CNY."""
    cat = load_catalog_dir(CATALOG_DIR, _override(tmp_path, "0.5", "USD"))
    price = cat.price(TYPE, REGION)
    assert price.currency == "USD" and price.price_per_hour == 0.5 and price.origin == "override"
    assert {p.currency for p in cat.prices if p.region == REGION} == {"USD"}
    others = {p.currency for p in cat.prices if p.region != REGION}
    assert others == {CATALOG_CURRENCY}


def test_a_usd_price_with_a_stated_dated_rate_is_converted_and_says_so(tmp_path):
    rate = ", conversion: {rate: 7.2, as_of: '2026-11-20', source: 'PBOC central parity'}"
    cat = load_catalog_dir(CATALOG_DIR, _override(tmp_path, "2", "USD", extra=rate))
    price = cat.price(TYPE, REGION)
    assert price.currency == "CNY" and price.price_per_hour == pytest.approx(14.4) and price.origin == "override"
    assert "7.2" in price.currency_basis and "2026-11-20" in price.currency_basis and "USD" in price.currency_basis


@pytest.mark.parametrize(("price", "currency", "as_of", "extra", "key"), [
    (".inf", "CNY", "2026-11-01", "", "price_per_hour"),
    (".nan", "CNY", "2026-11-01", "", "price_per_hour"),
    ("1e308", "CNY", "2026-11-01", "", "price_per_hour"),
    ("0", "CNY", "2026-11-01", "", "price_per_hour"),
    ("-3", "CNY", "2026-11-01", "", "price_per_hour"),
    ("true", "CNY", "2026-11-01", "", "price_per_hour"),
    ("5", "CNY", "9999-99-99", "", "as_of"),
    ("5", "CNY", "2026-02-30", "", "as_of"),
    ("5", "CNY", "2026-13", "", "as_of"),
    ("5", "CNY", "2999-01-01", "", "as_of"),
    ("5", "usd", "2026-11-01", "", "currency"),
    ("5", "CNY", "2026-11-01", ", conversion: {rate: 7.2, as_of: '2026-11-20', source: x}", "conversion"),
    ("5", "USD", "2026-11-01", ", conversion: {rate: .inf, as_of: '2026-11-20', source: x}", "conversion.rate"),
    ("5", "USD", "2026-11-01", ", conversion: {rate: true, as_of: '2026-11-20', source: x}", "conversion.rate"),
    ("5", "USD", "2026-11-01", ", conversion: {rate: 7, as_of: '2999-01-01', source: x}", "conversion.as_of"),
    ("5", "USD", "2026-11-01", ", conversion: {rate: 7, source: x}", "conversion.as_of"),
    ("0x10", "CNY", "2026-11-01", "", "price_per_hour"),
])
def test_bad_override_prices_are_refused_naming_file_and_key(tmp_path, price, currency, as_of, extra, key):
    _refused(_override(tmp_path, price, currency, as_of, extra), key)


def test_future_is_judged_against_today(tmp_path):
    tomorrow3 = (datetime.date.today() + datetime.timedelta(days=3)).isoformat()
    _refused(_override(tmp_path, as_of=tomorrow3), "as_of", "future")
    load_catalog_dir(CATALOG_DIR, _override(tmp_path, as_of=datetime.date.today().isoformat()))


@pytest.mark.parametrize(("text", "fragment"), [
    ("prices:\n  - &p {type: a}\n  - *p\n", "anchor"),
    ("prices: []\nprices: []\n", "duplicate key"),
    (b"prices:\n  - {type: \xff}\n", "UTF-8"),
])
def test_the_override_file_is_strict_yaml(tmp_path, text, fragment):
    path = tmp_path / "bad.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    error = _refused(path, fragment)
    assert "line" in error.en


def test_a_huge_override_is_refused_by_size_at_once(tmp_path):
    path = tmp_path / "big.yaml"
    with open(path, "wb") as handle:
        handle.write(b"prices:\n" + b"#" * (MAX_OVERRIDE_BYTES + 10) + b"\n")
    _refused(path, "larger than")


def test_check_override_and_serve_refuse_to_start_on_a_bad_override(tmp_path, monkeypatch):
    bad = _override(tmp_path, ".inf")
    with pytest.raises(KnowledgeError, match="price_per_hour"):
        check_override(bad)
    script = Path(sys.executable).parent / "gpu-advisor"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    env = {**os.environ, "GPU_ADVISOR_CATALOG_OVERRIDE": str(bad)}
    done = subprocess.run([*command, "serve"], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr[-1000:])
    assert "o.yaml" in done.stderr and "price_per_hour" in done.stderr and "Traceback" not in done.stderr
