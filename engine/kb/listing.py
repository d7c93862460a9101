"""Plain listings of what the knowledge base holds, for the adapters (the CLI and the MCP server alike)."""

from __future__ import annotations

import math
from typing import Any

from gpu_advisor.errors import WorkloadError

from gpu_advisor.kb.catalog_loader import load_catalog


def catalog_rows(gpu: str | None = None, min_gpu_memory: float | None = None, rdma: bool | None = None,
                 region: str | None = None) -> list[dict[str, Any]]:
    """GPU instance types as plain rows (the CLI's `catalog` and the MCP server's catalog tool and resource)."""
    if min_gpu_memory is not None and (isinstance(min_gpu_memory, bool) or not math.isfinite(min_gpu_memory)
                                       or not 0 <= min_gpu_memory <= 10_000):
        raise WorkloadError(f"min_gpu_memory: must be between 0 and 10000 GB (got {min_gpu_memory!r})",
                            f"min_gpu_memory：取值范围为 0 到 10000 GB（收到 {min_gpu_memory!r}）", field="min_gpu_memory")
    cat = load_catalog()
    rows = []
    for t in cat.instance_types.values():
        g = cat.gpus.get(t.gpu_id)
        if gpu and gpu.lower() not in (t.gpu_id.lower(), (g.display_name.lower() if g else "")):
            continue
        if min_gpu_memory is not None and (t.gpu_memory_gb or 0) < min_gpu_memory:
            continue
        if rdma is not None and (t.rdma != "none") != rdma:
            continue
        price = cat.price(t.type, cat.resolve_region(region)) if region else None
        if region and price is None:
            continue
        rows.append({"instance_type": t.type, "family": t.family, "vcpu": t.vcpu, "memory_gib": t.memory_gib,
                     "gpu_count": t.gpu_count, "gpu_model": g.display_name if g else t.gpu_id, "gpu_id": t.gpu_id,
                     "gpu_memory_gib": t.gpu_memory_gb, "gpu_spec": t.gpu_spec, "in_api_listing": t.in_api_listing,
                     "rdma": t.rdma, "rdma_gbit_s": t.rdma_gbit_s, "rdma_note": t.rdma_note, "status": t.status,
                     "price_per_hour": price.price_per_hour if price else None,
                     "currency": price.currency if price else None, "source": t.source, "as_of": t.as_of})
    return rows


def rule_summary(rule: Any, lang: str) -> dict[str, Any]:
    """One rule as a plain record: conditions, what it asserts and sets, its text and sources."""
    return {"id": rule.id, "title": rule.title.get(lang),
            "when": [c.model_dump() for c in rule.when.all], "derived": rule.when.derived,
            "asserts": rule.then.assert_, "sets": rule.then.set,
            "advice": rule.then.advice.get(lang) if rule.then.advice else None,
            "why": rule.why.get(lang), "sources": rule.sources, "since": rule.since}
