"""Load and lint the rule base (knowledge/rules/*.yaml).

Load-time lint guards the engine's measured limits and traps: every field a rule tests is a declared fact
with a value of the same type (durable-rules coerces "5" == 5), derived facts are produced before they are
consumed, and no fact can have more than MAX_MATCHES_PER_FACT pending matches (durable-rules fails with
error 303 past 64).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from gpu_advisor.util import yamlio
from gpu_advisor.util.derived import DerivedCache
from gpu_advisor.errors import KnowledgeError
from gpu_advisor.rules.facts import FACT_FIELDS, value_matches_type
from gpu_advisor.rules.corejson import RULE_CONSTANT_LIMIT, rule_constant_ok
from gpu_advisor.rules.schema import Rule

MAX_MATCHES_PER_FACT = 48  # durable-rules' C core fails above 64 pending matches for one fact
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True)
class RuleBase(DerivedCache):
    rules: tuple[Rule, ...]
    files: tuple[str, ...]
    _derived: dict[Any, Any] = field(default_factory=dict, init=False, compare=False, repr=False)


    @cached_property
    def _index(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}  # ids are unique (lint)

    def by_id(self, rule_id: str) -> Rule | None:
        return self._index.get(rule_id)

    @cached_property
    def active(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if not r.deprecated)


def default_rules_dir() -> Path:
    return Path(str(resources.files("gpu_advisor.knowledge") / "rules"))


def load_rules(directory: str | Path | None = None) -> RuleBase:
    folder = Path(directory) if directory else default_rules_dir()
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise KnowledgeError(f"{folder}: no rule files (*.yaml) found",
                             f"{folder}：没有找到规则文件（*.yaml）")
    rules: list[Rule] = []
    origin: dict[int, str] = {}
    for path in files:
        for rule in _load_file(path):
            origin[id(rule)] = path.name
            rules.append(rule)
    lint(rules, origin)
    return RuleBase(tuple(rules), tuple(p.name for p in files))


def _load_file(path: Path) -> list[Rule]:
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except yamlio.YAMLError as exc:
        raise KnowledgeError(f"{path.name}: not valid YAML ({exc})", f"{path.name}：YAML 格式错误（{exc}）") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list) or set(data) != {"rules"}:
        raise KnowledgeError(f"{path.name}: expected a mapping with one key 'rules' holding a list",
                             f"{path.name}：文件应只有一个键 'rules'，其值为列表")
    return [_parse_rule(path.name, index, entry) for index, entry in enumerate(data["rules"])]


def _parse_rule(file: str, index: int, entry: Any) -> Rule:
    rule_id = entry.get("id", f"#{index}") if isinstance(entry, dict) else f"#{index}"
    try:
        return Rule.model_validate(entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(entry)"
        raise KnowledgeError(f"{file}: rule {rule_id}: key '{key}': {err['msg']}",
                             f"{file}：规则 {rule_id}：键 '{key}'：{err['msg']}") from None


def _fail(rule: Rule, key: str, en: str, zh: str) -> KnowledgeError:
    return KnowledgeError(f"rule {rule.id}: key '{key}': {en}", f"规则 {rule.id}：键 '{key}'：{zh}")


def _in_file(error: KnowledgeError, file: str | None) -> KnowledgeError:
    if file is None:
        return error
    return KnowledgeError(f"{file}: {error.en}", f"{file}：{error.zh}", field=error.field)


def lint(rules: Iterable[Rule], origin: dict[int, str] | None = None) -> None:
    """Check the rule base as a whole; errors name the file (when known), the rule id and the key."""
    rules, origin = list(rules), origin or {}
    _lint_duplicates(rules, origin)
    produced = {name for r in rules for name in r.then.assert_}
    for rule in rules:
        try:
            _lint_rule(rule, produced)
        except KnowledgeError as error:
            raise _in_file(error, origin.get(id(rule))) from None
    _lint_match_fanout(rules)


def _lint_duplicates(rules: list[Rule], origin: dict[int, str]) -> None:
    dupes = [rid for rid, n in Counter(r.id for r in rules).items() if n > 1]
    if dupes:
        where = "; ".join(f"{rid} in " + ", ".join(sorted({origin.get(id(r), "?") for r in rules if r.id == rid}))
                          for rid in dupes)
        raise KnowledgeError(f"duplicate rule id(s): {where}", f"规则 id 重复：{where}")


def _lint_rule(rule: Rule, produced: set[str]) -> None:
    _lint_conditions(rule)
    for name in rule.when.derived:
        if name not in produced:
            raise _fail(rule, "when.derived", f"'{name}' is asserted by no rule", f"没有任何规则断言 '{name}'")
    if (rule.then.advice is None) != (rule.then.section is None):
        raise _fail(rule, "then", "advice and section go together", "advice 与 section 必须同时给出")
    for lang in ("zh", "en"):
        for text in (rule.why, rule.then.advice):
            if text is not None:
                _lint_placeholders(rule, text.get(lang))


def _lint_conditions(rule: Rule) -> None:
    if not rule.when.all:
        raise _fail(rule, "when.all", "needs at least one condition on the job facts", "至少需要一个作业事实条件")
    for cond in rule.when.all:
        if cond.field not in FACT_FIELDS:
            raise _fail(rule, "when.all.field", f"unknown fact field '{cond.field}'", f"未知的事实字段 '{cond.field}'")
        values = cond.value if isinstance(cond.value, list) else [cond.value]
        for value in values:
            if not value_matches_type(cond.field, value):
                kind = FACT_FIELDS[cond.field][0].__name__
                raise _fail(rule, "when.all.value", f"'{cond.field}' is {kind}; {value!r} would be coerced",
                            f"'{cond.field}' 的类型为 {kind}；{value!r} 会被强制转换")
            if not rule_constant_ok(value):
                raise _fail(rule, "when.all.value",
                            f"{value!r} is not a number the rule engine reads exactly (finite, |value| <= "
                            f"{RULE_CONSTANT_LIMIT:g}, and between 0.0001 and 1e15 when not 0)",
                            f"{value!r} 不是规则引擎能精确读取的数值（须有限、绝对值不超过 {RULE_CONSTANT_LIMIT:g}，"
                            "非零时在 0.0001 到 1e15 之间）")
        if cond.op in ("lt", "le", "gt", "ge") and FACT_FIELDS[cond.field][0] not in (int, float):
            raise _fail(rule, "when.all.op", f"'{cond.op}' needs a numeric field", f"'{cond.op}' 只能用于数值字段")


def _lint_placeholders(rule: Rule, text: str) -> None:
    for name in PLACEHOLDER.findall(text):
        if name not in FACT_FIELDS:
            raise _fail(rule, "why/advice", f"placeholder '{{{name}}}' is not a fact field",
                        f"占位符 '{{{name}}}' 不是事实字段")


def _lint_match_fanout(rules: list[Rule]) -> None:
    per_domain = Counter(r.domain for r in rules if not r.deprecated)
    per_derived = Counter(name for r in rules if not r.deprecated for name in r.when.derived)
    for key, count in [*per_domain.items(), *per_derived.items()]:
        if count > MAX_MATCHES_PER_FACT:
            raise KnowledgeError(
                f"{count} rules match the same fact '{key}' (limit {MAX_MATCHES_PER_FACT}); split the domain",
                f"有 {count} 条规则匹配同一事实 '{key}'（上限 {MAX_MATCHES_PER_FACT}）；请拆分领域")
