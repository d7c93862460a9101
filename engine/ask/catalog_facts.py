"""Catalog facts a question about GPUs and regions asks for when it names no job ("新加坡和杭州的 A10 价格差多少？",
"为什么推荐 gn7e 不推荐 gn8v？"): the list prices of the GPUs named in the regions named. The parser's no-job refusal
(ask/parser._refuse_no_job) says them instead of only the list of GPUs."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.lexicon import load_lexicon
from gpu_advisor.ask.parsed import Scanner
from gpu_advisor.errors import WorkloadError


def named_gpu_prices(s: Scanner, catalog: Any, first: str) -> tuple[str, str]:
    """"新加坡和杭州的 A10 价格差多少？", "为什么推荐 gn7e 不推荐 gn8v？": a question about GPUs and regions, no job. Its
    facts are in the catalog: for each GPU named (the preference and the others the question compares) and each region
    named (cn-hangzhou when none), the cheapest priced type with the fewest of those GPUs, or that it has no price
    there (an unpriced type ranks after the priced ones in every answer)."""
    from gpu_advisor.ask.families import mentioned_gpu
    from gpu_advisor.kb.listing import catalog_rows
    from gpu_advisor.plan.preference import resolve_gpu_preference

    gpus = [first] + [mentioned_gpu(u.matched) or u.matched.strip() for u in s.unused
                      if u.why.en.startswith("gpu_preference was already read")]
    regions = [e.value for e in load_lexicon().regions if e.value not in ("mainland", "international")
               and e.pattern.search(s.text)] or ["cn-hangzhou"]
    en, zh, dates = [], [], []
    for gpu in dict.fromkeys(gpus):
        try:
            ids = resolve_gpu_preference(catalog, gpu)
        except WorkloadError:
            continue
        for region in dict.fromkeys(regions):
            rows = [r for r in catalog_rows(None, None, None, region) if r["gpu_id"] in ids and r["gpu_count"]
                    and float(r["gpu_count"]) >= 1 and float(r["gpu_count"]).is_integer()]   # whole GPUs, no vGPU slice
            if not rows:
                en.append(f"{gpu} in {region}: no list price in the catalog")
                zh.append(f"{gpu} 在 {region}：目录中无价格")
                continue
            r = min(rows, key=lambda r: (r["gpu_count"], r["price_per_hour"]))
            price = catalog.price(r["instance_type"], catalog.resolve_region(region))
            dates.append(str(getattr(price, "as_of", "") or ""))
            en.append(f"{gpu} in {region}: {r['instance_type']} ({r['gpu_count']:g} GPU) {r['price_per_hour']:,.2f} "
                      f"{r['currency']}/h")
            zh.append(f"{gpu} 在 {region}：{r['instance_type']}（{r['gpu_count']:g} 卡）每小时 {r['price_per_hour']:,.2f} "
                      f"{r['currency']}")
    if not en:
        return "", ""
    on = "/".join(sorted({d for d in dates if d})) or catalog.meta.compiled_on
    return (f" List prices (pay-as-you-go, as of {on}): {'; '.join(en)}; a type with no price in a region ranks "
            "after the priced ones in every answer.",
            f"目录价（按量付费，截至 {on}）：{'；'.join(zh)}；在某地域没有价格的规格，在答案中排在有价格的规格之后。")


__all__ = ["named_gpu_prices"]
