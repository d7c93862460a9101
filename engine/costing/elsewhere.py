"""A line said first when no option that holds the job as asked has a list price in the region: which region of the
same area prices one, labelled as another region's figure. It never enters the ranking, a total or a budget check
(a price is never copied from one region to another; knowledge/catalog/meta.yaml region_defaults_note).

The area of a region is the Chinese mainland for a mainland region (meta.yaml mainland_rule), else the first part of
its id ('eu', 'us', 'ap', 'me', 'na'; cn-hongkong counts as 'ap'). Within the area a region sharing the first two
parts of the id ('ap-southeast') comes first, then the one with most price entries, then by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_advisor.kb.catalog import is_mainland
from gpu_advisor.util.i18n import Text

if TYPE_CHECKING:
    from gpu_advisor.kb.catalog import Catalog, Price
    from gpu_advisor.plan.defaults import Job
    from gpu_advisor.plan.planner import Candidate, Plan


def area(region: str) -> str:
    if is_mainland(region):
        return "mainland"
    return "ap" if region == "cn-hongkong" else region.split("-", 1)[0]


def _area_text(region: str) -> Text:
    a = area(region)
    if a == "mainland":
        return Text(en="Chinese-mainland region", zh="中国内地地域")
    return Text(en=f"{a}-* region", zh=f"{a}-* 地域")  # zh: used after a space


def nearby_regions(catalog: Catalog, region: str) -> list[str]:
    """The other priced regions of the region's area, nearest first (see the module text); once per catalog and
    region (counting the catalog's ~1,900 prices took 3 ms of an answer that needs it)."""
    counts: dict[str, int] = catalog.derived("price_entries_by_region", lambda: _count_regions(catalog))
    two = "-".join(region.split("-")[:2])

    def build() -> tuple[str, ...]:
        same = [r for r in counts if r != region and area(r) == area(region)]
        return tuple(sorted(same, key=lambda r: ("-".join(r.split("-")[:2]) != two, -counts[r], r)))

    return list(catalog.derived(("nearby_regions", region), build))


def _count_regions(catalog: Catalog) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in catalog.prices:
        counts[p.region] = counts.get(p.region, 0) + 1
    return counts


def _as_asked(c: Candidate, chosen: Candidate) -> bool:
    return not c.hard_shortfall and (chosen.quantized or not c.quantized)


def price_elsewhere_note(the_plan: Plan | None, job: Job, catalog: Catalog) -> Text | None:
    c = the_plan.chosen if the_plan else None
    if c is None or c.price is not None:
        return None
    options = [o for o in the_plan.options if _as_asked(o, c)]
    if any(o.price is not None for o in options):
        return None  # an option as asked is priced here: the ranking and unpriced_lead_note speak for it
    region = catalog.resolve_region(job.region)
    found: tuple[str, Candidate, Price] | None = None
    for other in nearby_regions(catalog, region):
        if (p := catalog.price(c.instance.type, other)) is not None:
            found = (other, c, p)
            break
        priced = [(o, p) for o in options if (p := catalog.price(o.instance.type, other)) is not None]
        if priced:  # the cheapest option of this plan listed there (per hour, all its instances)
            o, p = min(priced, key=lambda op: op[1].price_per_hour * op[0].nodes)
            found = (other, o, p)
            break
    where = _area_text(region)
    if found is None:
        return Text(en=f"No list price is recorded for {c.instance.type} in {region}, and no other {where.en} in the "
                       "catalog prices an option of this plan: check the console or DescribePrice.",
                    zh=f"目录中没有 {c.instance.type} 在 {region} 的价格，目录中其他 {where.zh}也没有本方案任何选项的价格："
                       "请在控制台或用 DescribePrice 查询。")
    other, o, p = found
    each = p.price_per_hour
    per_en = (f"{each:.2f} {p.currency}/h per instance ({o.nodes} instances: {each * o.nodes:.2f} {p.currency}/h)"
              if o.nodes > 1 else f"{each:.2f} {p.currency}/h")
    per_zh = (f"每台每小时 {each:.2f} {p.currency}（{o.nodes} 台共 {each * o.nodes:.2f} {p.currency}）"
              if o.nodes > 1 else f"每小时 {each:.2f} {p.currency}")
    gpus = f"{o.gpus_per_node} × {o.gpu.display_name}"
    gpus_zh = f"{o.gpus_per_node} 张 {o.gpu.display_name}"
    return Text(
        en=f"No list price is recorded for {c.instance.type} in {region}. For reference only (another region's list "
           f"price, not a {region} price and not used for ranking or budgets): {o.instance.type} ({gpus}) is listed "
           f"at {per_en} in {other}, another {where.en} (as of {p.as_of}).",
        zh=f"目录中没有 {c.instance.type} 在 {region} 的价格。仅供参考（这是其他地域的目录价，不是 {region} 的价格，不参与排序和"
           f"预算核对）：同区域的 {other} 中 {o.instance.type}（{gpus_zh}）{per_zh}（截至 {p.as_of}）。")
