"""`catalog refresh --public`: Alibaba's public price list, read from recorded files and a loopback server only."""

from __future__ import annotations

import argparse
import http.server
import io
import json
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from gpu_advisor.kb.catalog_loader import load_catalog_dir
from gpu_advisor.costing.public_price import PriceListError, parse_price_list
from gpu_advisor.costing.spot_history import load_spot_history
from gpu_advisor.errors import KnowledgeError
from gpu_advisor.cli.commands import add_refresh_parser
from gpu_advisor.kb.refresh import run_refresh, shipped_catalog_dir

FIXTURES = Path(__file__).parent / "fixtures" / "public_price"
RECORDED = FIXTURES / "instancePrice.json"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def recorded_linux_prices() -> dict[tuple[str, str], float]:
    """(type, region) -> 1-hour price of the Linux/VPC/optimized entries, read straight from the recorded file."""
    out = {}
    for key, entry in json.loads(RECORDED.read_text(encoding="utf-8"))["pricingInfo"].items():
        region, itype, network, os_kind, io_opt = key.split("::")
        if (network, os_kind, io_opt) == ("vpc", "linux", "optimized"):
            out[(itype, region)] = float(next(h["price"] for h in entry["hours"] if h["period"] == "1"))
    return out


def refresh(tmp_path: Path, url: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_refresh_parser(parser.add_subparsers())
    ns = parser.parse_args(["refresh", "--public", "--price-url", url, "--output", str(tmp_path / "override.yaml")])
    out = io.StringIO()
    return run_refresh(ns, out, now=NOW), out.getvalue()


def test_recorded_price_list_prices_the_8th_generation_types_in_usd(tmp_path):
    code, text = refresh(tmp_path, RECORDED.as_uri())
    assert code == 0, text
    override = tmp_path / "override.yaml"
    data = yaml.safe_load(override.read_text(encoding="utf-8"))
    assert {p["currency"] for p in data["prices"]} == {"USD"}
    assert {p["as_of"] for p in data["prices"]} == {"2026-11-20"}  # the file's publicationDate
    assert all("public ECS price list" in p["source"] and "2.0.test" in p["source"] for p in data["prices"])
    cat = load_catalog_dir(shipped_catalog_dir(), override)
    shipped = load_catalog_dir(shipped_catalog_dir())
    expected = {k: v for k, v in recorded_linux_prices().items() if k[0] in shipped.instance_types}
    assert len(expected) >= 20
    for (itype, region), value in expected.items():
        price = cat.price(itype, region)
        assert price is not None and price.price_per_hour == value and price.currency == "USD", (itype, region)
        assert price.origin == "override"
    eighth = {t for t, _ in expected if ".gn8" in t or ".ebmgn8" in t}
    assert {"ecs.gn8v.4xlarge", "ecs.gn8is.2xlarge", "ecs.gn8e-8x.48xlarge", "ecs.ebmgn8v.48xlarge"} <= eighth
    for itype in eighth:
        assert shipped.price(itype, "ap-southeast-1") is None  # the shipped snapshot has no price for them
        assert cat.price(itype, "ap-southeast-1") is not None
    assert "ecs.g7.large" not in {p["type"] for p in data["prices"]}  # only the catalog's GPU types
    assert "currency USD" in text and "2026-11-20" in text


def test_windows_and_classic_entries_are_not_taken(tmp_path):
    parsed = parse_price_list(RECORDED.read_bytes(), {"ecs.gn8is.2xlarge"}, "test", "2026-12-01")
    got = {(p["type"], p["region"]): p["price_per_hour"] for p in parsed.prices}
    rec = recorded_linux_prices()
    assert got == {k: rec[k] for k in rec if k[0] == "ecs.gn8is.2xlarge"}


class _Handler(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_refresh_over_http_from_a_loopback_server(tmp_path):
    _Handler.body = RECORDED.read_bytes()
    server = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        code, text = refresh(tmp_path, f"http://127.0.0.1:{server.server_port}/instancePrice.json")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, text
    cat = load_catalog_dir(shipped_catalog_dir(), tmp_path / "override.yaml")
    assert cat.price("ecs.gn8v.4xlarge", "us-east-1").price_per_hour == recorded_linux_prices()[
        ("ecs.gn8v.4xlarge", "us-east-1")]


@pytest.mark.parametrize("name,needle", [
    ("truncated.json", "not valid JSON"),
    ("bad_price.json", "'call sales' is not a number"),
    ("no_currency.json", "'currency' is missing"),
])
def test_a_malformed_or_partial_file_changes_nothing(tmp_path, name, needle):
    override = tmp_path / "override.yaml"
    code, _ = refresh(tmp_path, RECORDED.as_uri())
    assert code == 0
    before = override.read_bytes()
    code, text = refresh(tmp_path, (FIXTURES / name).as_uri())
    assert code == 1
    assert "left unchanged" in text and needle in text
    assert override.read_bytes() == before


def test_unreachable_url_changes_nothing(tmp_path):
    override = tmp_path / "override.yaml"
    override.write_text("prices: []\n", encoding="utf-8")
    code, text = refresh(tmp_path, (tmp_path / "missing.json").as_uri())
    assert code == 1 and "could not read" in text and override.read_text(encoding="utf-8") == "prices: []\n"


def test_a_region_never_mixes_currencies(tmp_path):
    refresh(tmp_path, RECORDED.as_uri())
    cat = load_catalog_dir(shipped_catalog_dir(), tmp_path / "override.yaml")
    shipped = load_catalog_dir(shipped_catalog_dir())
    assert {p.currency for p in shipped.prices if p.region == "ap-southeast-1"} == {"CNY"}  # the 2024 snapshot
    assert {p.currency for p in cat.prices if p.region == "ap-southeast-1"} == {"USD"}  # set aside, not mixed
    mixed = tmp_path / "mixed.yaml"
    entry = {"type": "ecs.gn8is.2xlarge", "region": "us-east-1", "billing": "x", "price_per_hour": 1.0,
             "source": "test", "as_of": "2026-12-01"}
    mixed.write_text(yaml.safe_dump({"prices": [{**entry, "currency": "USD"},
                                                {**entry, "type": "ecs.gn8v.4xlarge", "currency": "CNY"}]}))
    with pytest.raises(KnowledgeError, match="more than one currency"):
        load_catalog_dir(shipped_catalog_dir(), mixed)


def test_public_refresh_keeps_spot_observations_in_their_own_key(tmp_path):
    override = tmp_path / "override.yaml"
    spot = {"type": "ecs.gn8is.2xlarge", "region": "ap-southeast-1", "min_ratio": 0.2, "max_ratio": 0.4,
            "samples": 3, "zones": ["ap-southeast-1a"], "period": "2026-11-22/2026-11-29", "currency": "USD",
            "source": "DescribeSpotPriceHistory", "as_of": "2026-11-29"}
    override.write_text(yaml.safe_dump({"prices": [], "spot_price_history": [spot]}), encoding="utf-8")
    code, text = refresh(tmp_path, RECORDED.as_uri())
    assert code == 0, text
    data = yaml.safe_load(override.read_text(encoding="utf-8"))
    assert data["spot_price_history"] == [spot]
    assert load_spot_history(override).find("ecs.gn8is.2xlarge", "ap-southeast-1").min_ratio == 0.2


def test_parser_names_a_bad_key():
    body = json.dumps({"currency": "USD", "pricingInfo": {"ap-southeast-1::ecs.gn8is.2xlarge": {"hours": []}}})
    with pytest.raises(PriceListError, match="region::type::network::os::io"):
        parse_price_list(body, {"ecs.gn8is.2xlarge"}, "t", "2026-12-01")
