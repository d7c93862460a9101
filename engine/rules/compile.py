"""Compile YAML rules to durable-rules' JSON ruleset form.

Each domain (TIER, FIT, NET, ...) matches its own copy of the job facts (``t: "job:NET"``), holding only the
fields that domain's rules test, so no single fact collects more pending matches than one domain has rules
(durable-rules fails past 64). Derived facts are ``{"t": "d", "k": name}``.
"""

from __future__ import annotations

from typing import Any

from gpu_advisor.rules.schema import Condition, Rule

_CMP = {"lt": "$lt", "le": "$lte", "gt": "$gt", "ge": "$gte", "ne": "$neq"}
NEVER = "__never__"


def job_type(domain: str) -> str:
    return f"job:{domain}"


def compile_condition(cond: Condition) -> dict[str, Any]:
    if cond.op in ("eq", "is"):
        return {cond.field: cond.value}
    if cond.op in _CMP:
        return {_CMP[cond.op]: {cond.field: cond.value}}
    values = cond.value if isinstance(cond.value, list) else [cond.value]
    if cond.op == "in":
        return {"$or": [{cond.field: v} for v in values]}
    return {"$and": [{"$neq": {cond.field: v}} for v in values]}


def compile_rule(rule: Rule) -> dict[str, Any]:
    job = {"$and": [{"t": job_type(rule.domain)}, *(compile_condition(c) for c in rule.when.all)]}
    patterns: list[dict[str, Any]] = [{"j": job}]
    for index, name in enumerate(rule.when.derived):
        patterns.append({f"d{index}": {"$and": [{"t": "d"}, {"k": name}]}})
    return {"all": patterns, "run": rule.id}


def compile_ruleset(rules: list[Rule]) -> dict[str, Any]:
    """The ruleset body: one entry per rule plus never-firing sinks, so an unconsumed fact is not an error."""
    body: dict[str, Any] = {rule.id: compile_rule(rule) for rule in rules}
    for fact_type in sorted({job_type(r.domain) for r in rules} | {"d"}):
        body[f"__sink__{fact_type}"] = {"all": [{"a": {"t": fact_type}}, {"b": {"t": NEVER}}], "run": "__sink__"}
    return body


def fields_by_domain(rules: list[Rule]) -> dict[str, list[str]]:
    out: dict[str, set[str]] = {}
    for rule in rules:
        out.setdefault(rule.domain, set()).update(rule.fields())
    return {domain: sorted(fields) for domain, fields in out.items()}
