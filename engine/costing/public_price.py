"""Alibaba Cloud's public ECS price list (no credentials): the file behind the international price calculator.

Address (the version segment changes as Alibaba republishes; cited by SpareCores/sc-crawler vendors/_alicloud.py
and, with older versions, by banzaicloud/cloudinfo and apache/libcloud):
``https://g.alicdn.com/aliyun/ecs-price-info-intl/<version>/price/download/instancePrice.json``.

Shape (JSON)::

    {"currency": "USD", "version": "...", "publicationDate": "...", "type": "...", "site": "...",
     "pricingInfo": {"<region>::<instance type>::<network>::<os>::<io>":
                         {"hours": [{"price": "0.336", "period": "1"}], "months": [...], "years": [...]}}}

``parse_price_list`` keeps the 1-hour pay-as-you-go price of Linux, VPC, I/O-optimized entries for the instance
types it is asked about, and raises :class:`PriceListError` naming what is wrong when the file does not have
this shape (a truncated or partial file included), so that a caller can leave its files untouched.
"""

from __future__ import annotations

import json
import re
import urllib.request
from dataclasses import dataclass, field
from typing import Any

DEFAULT_URL = "https://g.alicdn.com/aliyun/ecs-price-info-intl/2.0.375/price/download/instancePrice.json"
BILLING = "pay-as-you-go, Linux, VPC, I/O optimized (public price list, 1-hour price)"
CONFIDENCE = "medium-high: Alibaba's public list price (not an account-specific DescribePrice quote)"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_BYTES = 256 * 1024 * 1024


class PriceListError(ValueError):
    """The price list is missing, not JSON, or not in the documented shape."""


@dataclass
class PriceList:
    currency: str
    version: str | None
    published: str | None
    prices: list[dict[str, Any]] = field(default_factory=list)
    other_types: int = 0  # entries for instance types that were not asked about (CPU types, other families)


def fetch(url: str, timeout: float = 60.0) -> bytes:
    """GET the price list (http/https/file URLs); errors become PriceListError."""
    if not re.match(r"^(https?|file)://", url):
        raise PriceListError(f"price list URL must start with http://, https:// or file://: {url!r}")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - scheme checked above
            body = resp.read(MAX_BYTES + 1)
    except OSError as exc:
        raise PriceListError(f"could not read {url}: {exc}") from None
    if len(body) > MAX_BYTES:
        raise PriceListError(f"{url}: larger than {MAX_BYTES} bytes")
    return body


def parse_price_list(body: bytes | str, wanted: set[str], source: str, today: str) -> PriceList:
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PriceListError(f"not valid JSON (truncated or partial file?): {exc}") from None
    if not isinstance(data, dict):
        raise PriceListError("top level is not an object")
    currency, info = data.get("currency"), data.get("pricingInfo")
    if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        raise PriceListError(f"'currency' is missing or not a 3-letter code: {currency!r}")
    if not isinstance(info, dict) or not info:
        raise PriceListError("'pricingInfo' is missing, empty or not an object")
    published = data.get("publicationDate")
    pub_date = _DATE.search(str(published)).group(0) if published and _DATE.search(str(published)) else None
    out = PriceList(currency=currency, version=data.get("version"), published=pub_date)
    seen: set[tuple[str, str]] = set()
    for key, entry in info.items():
        parts = key.split("::") if isinstance(key, str) else []
        if len(parts) != 5:
            raise PriceListError(f"pricingInfo key {key!r} is not 'region::type::network::os::io'")
        region, itype, network, os_kind, io = parts
        if itype not in wanted:
            out.other_types += 1
            continue
        if (network, os_kind, io) != ("vpc", "linux", "optimized"):
            continue
        if not re.fullmatch(r"[a-z]{2}-[a-z0-9-]+", region):
            raise PriceListError(f"pricingInfo key {key!r}: region {region!r} is not a region id")
        hours = entry.get("hours") if isinstance(entry, dict) else None
        if not isinstance(hours, list):
            raise PriceListError(f"pricingInfo[{key!r}]: 'hours' is missing or not a list")
        one = [h for h in hours if isinstance(h, dict) and str(h.get("period")) == "1"]
        if len(one) != 1:
            raise PriceListError(f"pricingInfo[{key!r}]: no single 1-hour price in 'hours'")
        try:
            value = float(one[0].get("price"))
        except (TypeError, ValueError):
            raise PriceListError(f"pricingInfo[{key!r}]: price {one[0].get('price')!r} is not a number") from None
        if not value > 0 or value != value or value == float("inf"):
            raise PriceListError(f"pricingInfo[{key!r}]: price {value!r} is not positive")
        if (itype, region) in seen:
            raise PriceListError(f"pricingInfo: two Linux/VPC prices for {itype} in {region}")
        seen.add((itype, region))
        note = f"published {pub_date}" if pub_date else "the file states no publication date"
        out.prices.append({"type": itype, "region": region, "billing": BILLING, "price_per_hour": value,
                           "currency": currency, "confidence": CONFIDENCE,
                           "source": f"{source} (version {out.version or 'not stated'}; {note})",
                           "as_of": pub_date or today,
                           **({} if pub_date else {"as_of_note": f"date fetched ({today}); the file states none"})})
    return out
