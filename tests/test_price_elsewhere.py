"""A region without a list price for any option held as asked: the answer says so first and names another region of
the same area with its figure, labelled, never used as this region's price (no ranking, total or budget from it)."""

from __future__ import annotations

import pytest

from gpu_advisor import recommend
from gpu_advisor.costing.elsewhere import area, nearby_regions
from gpu_advisor.kb.catalog_loader import load_catalog

SERVE_32B = {"task": "inference", "model": "Qwen2.5-32B"}


def _said(rec, lang: str = "en") -> list[str]:
    return [t.get(lang) for t in rec.lead]


def test_areas_and_nearest_regions() -> None:
    cat = load_catalog()
    assert area("cn-hongkong") == "ap" and area("cn-shanghai") == "mainland" and area("eu-west-1") == "eu"
    assert nearby_regions(cat, "eu-west-1") == ["eu-central-1"]
    assert nearby_regions(cat, "ap-southeast-6")[0].startswith("ap-southeast-")  # same sub-area first
    assert nearby_regions(cat, "ap-southeast-6")[0] == "ap-southeast-1"  # then the one with most prices
    mainland = nearby_regions(cat, "cn-shanghai")  # mainland stays mainland, most prices first
    assert mainland[:2] == ["cn-beijing", "cn-hangzhou"] and "cn-shanghai" not in mainland
    assert len(mainland) == 13 and all(r.startswith("cn-") and r != "cn-hongkong" for r in mainland)
    assert nearby_regions(cat, "me-east-1") == []


def test_unpriced_region_names_a_labelled_figure_of_a_nearby_region() -> None:
    rec = recommend({**SERVE_32B, "region": "eu-west-1", "budget_per_hour": 200}, lang="en")
    assert rec.instance.price_per_hour is None  # nothing is copied into eu-west-1
    line = next(s for s in _said(rec) if "For reference only" in s)
    assert "eu-west-1" in line and "eu-central-1" in line and "not used for ranking or budgets" in line
    cat = load_catalog()
    figure = cat.price("ecs.gn7i-c32g1.32xlarge", "eu-central-1").price_per_hour
    assert f"{figure:.2f} CNY/h" in line  # the cheapest option of the plan listed in eu-central-1
    assert all(o.price_per_hour is None for o in rec.cost.options)
    assert any("cannot check the hourly budget" in v.en for v in rec.cost.option(rec.instance.instance_type).violations)
    zh = recommend({**SERVE_32B, "region": "eu-west-1"}, lang="zh")
    assert any("仅供参考" in s and "eu-central-1" in s for s in _said(zh, "zh"))


def test_no_priced_region_in_the_area_is_said_as_such() -> None:
    rec = recommend({**SERVE_32B, "region": "me-east-1"}, lang="en")
    assert any("no other me-* region in the catalog prices an option of this plan" in s for s in _said(rec))


@pytest.mark.parametrize("region", ["eu-central-1", "ap-southeast-1", "ap-northeast-1", "cn-hongkong"])
def test_priced_region_gets_no_reference_line(region: str) -> None:
    rec = recommend({**SERVE_32B, "region": region}, lang="en")
    assert rec.instance.price_per_hour is not None and rec.instance.price_region == region
    assert not any("For reference only" in s or "No list price is recorded" in s for s in _said(rec))
