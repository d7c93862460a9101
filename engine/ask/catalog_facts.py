"""Catalog facts a question about GPUs and regions asks for when it names no job ("新加坡和杭州的 A10 价格差多少？",
"为什么推荐 gn7e 不推荐 gn8v？"): the list prices of the GPUs named in the regions named. The parser's no-job refusal
(ask/parser._refuse_no_job) says them instead of only the list of GPUs."""

from __future__ import annotations

import re
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


TYPE_NAME = re.compile(r"(?<![\w.])(?:ecs\.)?((?:ebm|sccgn|scc)?[a-z]{0,3}gn\d[a-z0-9]*(?:-[a-z0-9]+)*\.[a-z0-9]+)", re.IGNORECASE)


def _regions(s: Scanner) -> list[str]:
    return [e.value for e in load_lexicon().regions if e.value not in ("mainland", "international")
            and e.pattern.search(s.text)] or ["cn-hangzhou"]


def named_type_facts(s: Scanner, catalog: Any) -> tuple[str, str]:
    """"What does ecs.gn7i-c8g1.2xlarge have", "ecs.gn8is-8x.32xlarge 有几张卡": the catalog's facts of each instance
    type named (GPUs, vCPU, RAM, network, RDMA) and its list price in the regions named (cn-hangzhou when none)."""
    en, zh = [], []
    for m in TYPE_NAME.finditer(s.text):
        t = catalog.instance_types.get(f"ecs.{m.group(1).lower()}")
        if t is None or any(t.type in e for e in en):
            continue
        g = catalog.gpus.get(t.gpu_id)
        gpu = g.display_name if g is not None else t.gpu_id
        count = f"{t.gpu_count:g}" if t.gpu_count else "?"
        mem = f", {t.gpu_memory_gb:g} GB each" if t.gpu_memory_gb and f"{t.gpu_memory_gb:g} GB" not in gpu else ""
        net = f", network {t.network_gbit_s:g} Gbit/s" if t.network_gbit_s else ""
        net_zh = f"，网络 {t.network_gbit_s:g} Gbit/s" if t.network_gbit_s else ""
        rdma = f", RDMA {t.rdma}" if t.rdma != "none" else ", no RDMA"
        rdma_zh = f"，RDMA {t.rdma}" if t.rdma != "none" else "，无 RDMA"
        prices_en, prices_zh = [], []
        for region in dict.fromkeys(_regions(s)):
            p = catalog.price(t.type, catalog.resolve_region(region))
            prices_en.append(f"{region} {p.price_per_hour:,.2f} {p.currency}/h (as of {p.as_of})" if p else f"{region}: no list price")
            prices_zh.append(f"{region} 每小时 {p.price_per_hour:,.2f} {p.currency}（截至 {p.as_of}）" if p else f"{region}：无目录价")
        en.append(f"{t.type}: {count} x {gpu}{mem}, {t.vcpu} vCPU, {t.memory_gib:g} GiB RAM{net}{rdma}; pay-as-you-go "
                  f"{'; '.join(prices_en)}" + (f" (catalog entry as of {t.as_of})" if t.as_of else ""))
        zh.append(f"{t.type}：{count} 张 {gpu}{'（每张 ' + format(t.gpu_memory_gb, 'g') + ' GB）' if mem else ''}，"
                  f"{t.vcpu} vCPU，内存 {t.memory_gib:g} GiB{net_zh}{rdma_zh}；按量付费 {'；'.join(prices_zh)}"
                  + (f"（目录条目截至 {t.as_of}）" if t.as_of else ""))
    return ("; ".join(en) + ". ", "；".join(zh) + "。") if en else ("", "")


def cheapest_types(s: Scanner, n: int = 3) -> tuple[str, str]:
    """"cheapest GPU instance in Beijing": the n cheapest priced types with whole GPUs in each region named."""
    from gpu_advisor.kb.listing import catalog_rows

    en, zh = [], []
    for region in dict.fromkeys(_regions(s)):
        rows = sorted((r for r in catalog_rows(None, None, None, region) if r["gpu_count"] and float(r["gpu_count"]) >= 1
                       and float(r["gpu_count"]).is_integer()), key=lambda r: r["price_per_hour"])[:n]
        if not rows:
            en.append(f"{region}: no GPU type with a list price in the catalog")
            zh.append(f"{region}：目录中没有有价格的 GPU 规格")
            continue
        en.append(f"{region}: " + ", ".join(f"{r['instance_type']} ({r['gpu_count']:g} x {r['gpu_model']}) {r['price_per_hour']:,.2f} "
                                            f"{r['currency']}/h" for r in rows))
        zh.append(f"{region}：" + "、".join(f"{r['instance_type']}（{r['gpu_count']:g} 张 {r['gpu_model']}）每小时 "
                                           f"{r['price_per_hour']:,.2f} {r['currency']}" for r in rows))
    return (f"Cheapest GPU instance types by pay-as-you-go list price (whole GPUs; vGPU slices left out): {'; '.join(en)}. "
            "The cheapest type for a job is the one that holds it: ",
            f"按量付费目录价最低的 GPU 规格（整卡，不含 vGPU 分片）：{'；'.join(zh)}。适合某个作业的最便宜规格取决于它能否放下该作业：")


__all__ = ["named_gpu_prices", "named_type_facts", "cheapest_types"]
