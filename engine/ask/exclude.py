"""GPUs the question rules out ("不要用 A100", "除了 H100 之外", "not A100", "avoid A10", "A100 除外"): never read as the
preference. The parser records each as a 'gpu_excluded' hint (numeric._prefer); the answer is planned on the catalog
without the instance types of those GPUs (knowledge_without) and says so first (excluded_line)."""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import Any

from gpu_advisor.ask.lexicon import load_lexicon
from gpu_advisor.ask.parsed import Hint, Scanner
from gpu_advisor.util.i18n import Text

# the catalog GPU ids ruled out while one question is answered (every plan_on of ask/api.recommend_fields)
EXCLUDED: ContextVar[frozenset[str]] = ContextVar("excluded_gpus", default=frozenset())


def excluded_cue(s: Scanner, m: re.Match[str]) -> bool:
    """Whether the GPU named at m is ruled out: a negator (keywords.negated) or an exclusion word of the lexicon right
    before it in its clause, or an exclusion word right after it; not in an A-not-A question ("要不要用 A100")."""
    from gpu_advisor.ask.keywords import CLAUSE_END, negated

    kw = load_lexicon().keywords
    before = CLAUSE_END.split(s.text[max(0, m.start() - 24):m.start()])[-1]
    if kw["either_or"].search(before):
        return False
    after = s.text[m.end():m.end() + 24]
    return (negated(s, m.start()) is not None or kw["gpu_excluded_before"].search(before) is not None
            or kw["gpu_excluded_after"].match(after) is not None)


def exclude(s: Scanner, m: re.Match[str], gpu: str, in_catalog: bool) -> None:
    """Record the ruled-out GPU (claimed: it is read once, never as the preference)."""
    s.claim(m)
    if any(h.kind == "gpu_excluded" and h.matched == gpu for h in s.hints):
        return
    how_en = "no option below uses it" if in_catalog else "Alibaba's catalog does not list it, so no option uses it anyway"
    how_zh = "以下方案均不使用它" if in_catalog else "阿里云目录中本就没有这一型号，方案不会用到它"
    s.hints.append(Hint("gpu_excluded", gpu, Text(en=f"You ruled out {gpu}: {how_en}.", zh=f"您排除了 {gpu}：{how_zh}。")))


def excluded_ids(parsed: Any) -> frozenset[str]:
    """The catalog GPU ids of the GPUs the question rules out (none for a GPU the catalog lacks)."""
    from gpu_advisor.errors import WorkloadError
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.preference import resolve_gpu_preference

    ids: set[str] = set()
    for h in parsed.hints:
        if h.kind != "gpu_excluded":
            continue
        try:
            ids |= resolve_gpu_preference(load_catalog(), h.matched)
        except WorkloadError:
            continue
    return frozenset(ids)


_WITHOUT: dict[tuple[int, frozenset[str]], Any] = {}


def knowledge_without(ids: frozenset[str]) -> Any:
    """The knowledge base whose catalog has no instance type of these GPUs (cached per knowledge base and set)."""
    from gpu_advisor.kb.bundle import Knowledge, get_knowledge
    from gpu_advisor.kb.catalog import Catalog

    kb = get_knowledge()
    key = (id(kb), ids)
    if key not in _WITHOUT:
        cat = kb.catalog
        kept = {k: t for k, t in cat.instance_types.items() if t.gpu_id not in ids}
        catalog = Catalog(**{**{f: getattr(cat, f) for f in Catalog.model_fields}, "instance_types": kept})
        _WITHOUT.clear()
        _WITHOUT[key] = Knowledge(catalog, kb.rules, kb.engine)
    return _WITHOUT[key]


def excluded_line(parsed: Any, rec: Any) -> Text | None:
    """What the answer says first: the GPUs ruled out, and that no option uses them."""
    notes = [h.matched for h in parsed.hints if h.kind == "gpu_excluded"]
    if not notes:
        return None
    names, names_zh = ", ".join(notes), "、".join(notes)
    if getattr(rec, "instance", None) is None:
        return Text(en=f"Without {names} (ruled out as asked), no GPU in the catalog gives a plan for this job.",
                    zh=f"按要求排除 {names_zh} 后，目录中没有能承载此作业的 GPU。")
    tail_en = "" if excluded_ids(parsed) else " (Alibaba's catalog does not list it in any case)"
    tail_zh = "" if excluded_ids(parsed) else "（阿里云目录中本就没有）"
    gpu = rec.instance.gpu_display
    return Text(en=f"{names} ruled out as asked{tail_en}: no option below uses it; the plan uses {gpu}.",
                zh=f"已按要求排除 {names_zh}{tail_zh}：以下方案均不使用它，方案使用 {gpu}。")


__all__ = ["EXCLUDED", "excluded_cue", "exclude", "excluded_ids", "knowledge_without", "excluded_line"]
