"""Compile YAML rules to durable-rules' JSON ruleset form.

Rules are grouped by domain (TIER, FIT, NET, ...) into partitions of at most MAX_MATCHES_PER_FACT rules;
each partition matches its own copy of the job facts (``t: "job:P0"``), holding only the fields that
partition's rules test, so no single fact collects more pending matches than the load-time lint allows
(durable-rules fails past 64), and an evaluation asserts a couple of job facts instead of one per domain.
Derived facts are ``{"t": "d", "k": name}``.
"""

from __future__ import annotations

from typing import Any

from gpu_advisor.rules.loader import MAX_MATCHES_PER_FACT
from gpu_advisor.rules.schema import Condition, Rule

_CMP = {"lt": "$lt", "le": "$lte", "gt": "$gt", "ge": "$gte", "ne": "$neq"}
NEVER = "__never__"


def job_type(partition: str) -> str:
    return f"job:{partition}"


def partitions(rules: list[Rule], limit: int = MAX_MATCHES_PER_FACT) -> dict[str, str]:
    """Domain -> partition name: whole domains packed, in order of first appearance, up to ``limit`` rules.

    A domain larger than ``limit`` (which the loader's lint refuses) gets a partition of its own.
    """
    sizes: dict[str, int] = {}
    for rule in rules:
        sizes[rule.domain] = sizes.get(rule.domain, 0) + 1
    out: dict[str, str] = {}
    index, used = 0, 0
    for domain, size in sizes.items():
        if used and used + size > limit:
            index, used = index + 1, 0
        out[domain] = f"P{index}"
        used += size
    return out


def compile_condition(cond: Condition) -> dict[str, Any]:
    if cond.op in ("eq", "is"):
        return {cond.field: cond.value}
    if cond.op in _CMP:
        return {_CMP[cond.op]: {cond.field: cond.value}}
    values = cond.value if isinstance(cond.value, list) else [cond.value]
    if cond.op == "in":
        return {"$or": [{cond.field: v} for v in values]}
    return {"$and": [{"$neq": {cond.field: v}} for v in values]}


def compile_rule(rule: Rule, partition: str) -> dict[str, Any]:
    job = {"$and": [{"t": job_type(partition)}, *(compile_condition(c) for c in rule.when.all)]}
    patterns: list[dict[str, Any]] = [{"j": job}]
    for index, name in enumerate(rule.when.derived):
        patterns.append({f"d{index}": {"$and": [{"t": "d"}, {"k": name}]}})
    return {"all": patterns, "run": rule.id}


def compile_ruleset(rules: list[Rule]) -> dict[str, Any]:
    """The ruleset body: one entry per rule plus never-firing sinks, so an unconsumed fact is not an error."""
    parts = partitions(rules)
    body: dict[str, Any] = {rule.id: compile_rule(rule, parts[rule.domain]) for rule in rules}
    for fact_type in sorted({job_type(p) for p in parts.values()} | {"d"}):
        body[f"__sink__{fact_type}"] = {"all": [{"a": {"t": fact_type}}, {"b": {"t": NEVER}}], "run": "__sink__"}
    return body


def fields_by_partition(rules: list[Rule]) -> dict[str, list[str]]:
    """Partition -> the job fields its rules test (the partition's job fact carries these)."""
    parts = partitions(rules)
    out: dict[str, set[str]] = {}
    for rule in rules:
        out.setdefault(parts[rule.domain], set()).update(rule.fields())
    return {partition: sorted(fields) for partition, fields in out.items()}

