"""Malformed rule files are rejected when the knowledge base loads, with the file, the rule id and the key in
the message (both languages). Extends tests/test_rules_collection.py, which checks a first set of mutations for
*a* fragment of the message; here every message must carry all three.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from gpu_advisor.errors import KnowledgeError
from gpu_advisor.rules.loader import default_rules_dir, load_rules

FILE = "r.yaml"


def _base_rule() -> dict[str, Any]:
    data = yaml.safe_load((default_rules_dir() / "10_task_tier.yaml").read_text(encoding="utf-8"))
    return data["rules"][0]


def _write(folder: Path, rules: list[Any], name: str = FILE) -> Path:
    (folder / name).write_text(yaml.safe_dump({"rules": rules}, allow_unicode=True), encoding="utf-8")
    return folder


def _load_error(folder: Path) -> KnowledgeError:
    with pytest.raises(KnowledgeError) as info:
        load_rules(folder)
    return info.value


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(rule: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = rule
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[last] = value
    return mutate


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(rule: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = rule
        for part in parents:
            node = node[part]
        del node[last]
    return mutate


# (mutation, key the message must name). Caught by the schema, when each entry is parsed.
SCHEMA_CASES = {
    "unknown-top-key": (_set("colour", "red"), "colour"),
    "unknown-key-in-when": (_set("when.any", []), "when.any"),
    "unknown-key-in-then": (_set("then.asert", ["x"]), "then.asert"),
    "unknown-key-in-condition": (_set("when.all.0.negate", True), "negate"),
    "sources-a-string": (_set("sources", "https://example.com"), "sources"),
    "sources-empty": (_set("sources", []), "sources"),
    "title-a-list": (_set("title", ["zh", "en"]), "title"),
    "since-a-number": (_set("since", 1.0), "since"),
    "when-all-a-mapping": (_set("when.all", {"field": "task"}), "when.all"),
    "op-unknown": (_set("when.all.0.op", "matches"), "op"),
    "is-needs-bool": (_set("when.all.0.value", "yes"), "value"),
    "in-needs-list": (_set("when.all.0.op", "in"), "value"),
    "section-unknown": (_set("then.section", "marketing"), "section"),
    "priority-a-word": (_set("then.priority", "high"), "priority"),
    "cases-fires-empty": (_set("cases.fires", []), "cases.fires"),
    "missing-why": (_drop("why"), "why"),
    "missing-why-en": (_drop("why.en"), "why.en"),
    "missing-title-zh": (_drop("title.zh"), "title.zh"),
    "derived-not-snake-case": (_set("when.derived", ["Needs RDMA!"]), "when.derived"),
}


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_schema_errors_name_file_rule_and_key(tmp_path: Path, case: str) -> None:
    mutate, key = SCHEMA_CASES[case]
    rule = _base_rule()
    mutate(rule)
    err = _load_error(_write(tmp_path, [rule]))
    for lang in ("en", "zh"):
        message = err.message(lang)
        assert FILE in message and rule["id"] in message and key in message, (lang, message)


def test_entry_that_is_not_a_mapping_names_file_and_position(tmp_path: Path) -> None:
    err = _load_error(_write(tmp_path, [_base_rule(), "just a string"]))
    assert FILE in err.en and "#1" in err.en


@pytest.mark.parametrize("text", ["", "rules:\n", "rules: {}\n", "- a\n- b\n", "rules: []\nextra: 1\n", "\t: ::\n"])
def test_file_level_errors_name_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    err = _load_error(tmp_path)
    assert "bad.yaml" in err.en and "bad.yaml" in err.zh


# Caught by the lint pass over the whole rule base (after parsing): the messages name the rule and the key.
LINT_CASES = {
    "unknown-fact-field": (_set("when.all.0.field", "no_such_fact"), "when.all.field"),
    "value-of-wrong-type": (lambda r: r["when"]["all"][0].update(field="gpu_count", op="eq", value="1"), "when.all.value"),
    "order-op-on-a-string": (lambda r: r["when"]["all"][0].update(field="task", op="lt", value="x"), "when.all.op"),
    "derived-never-asserted": (_set("when.derived", ["never_asserted"]), "when.derived"),
    "placeholder-unknown": (_set("why.en", "needs {no_such_fact} GiB"), "why/advice"),
}


@pytest.mark.parametrize("case", list(LINT_CASES))
def test_lint_errors_name_rule_and_key(tmp_path: Path, case: str) -> None:
    mutate, key = LINT_CASES[case]
    rule = _base_rule()
    mutate(rule)
    err = _load_error(_write(tmp_path, [rule]))
    for lang in ("en", "zh"):
        assert rule["id"] in err.message(lang) and key in err.message(lang), err.message(lang)


@pytest.mark.parametrize("case", list(LINT_CASES))
def test_lint_errors_name_the_file(tmp_path: Path, case: str) -> None:
    mutate, _ = LINT_CASES[case]
    rule = _base_rule()
    mutate(rule)
    assert FILE in _load_error(_write(tmp_path, [rule])).en


def test_duplicate_id_across_files_names_the_id(tmp_path: Path) -> None:
    _write(tmp_path, [_base_rule()], "a.yaml")
    _write(tmp_path, [_base_rule()], "b.yaml")
    err = _load_error(tmp_path)
    assert "duplicate" in err.en and _base_rule()["id"] in err.en and _base_rule()["id"] in err.zh


def test_duplicate_id_across_files_names_both_files(tmp_path: Path) -> None:
    _write(tmp_path, [_base_rule()], "a.yaml")
    _write(tmp_path, [_base_rule()], "b.yaml")
    err = _load_error(tmp_path)
    assert "a.yaml" in err.en and "b.yaml" in err.en


def test_hostile_text_in_a_rule_file_is_not_executed(tmp_path: Path) -> None:
    """YAML tags that construct Python objects are refused (safe_load), and the message says which file."""
    (tmp_path / "evil.yaml").write_text("rules: !!python/object/apply:os.system ['echo pwned']\n", encoding="utf-8")
    err = _load_error(tmp_path)
    assert "evil.yaml" in err.en
