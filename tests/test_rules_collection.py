"""The rule collection as a whole (ansible-lint style): ids, languages, sources, cases, count, docs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpu_advisor.errors import KnowledgeError
from gpu_advisor.rules.loader import default_rules_dir, load_rules
from gpu_advisor.rules.schema import RULE_ID

ROOT = Path(__file__).resolve().parents[1]
RULES = load_rules()
RULE_COUNT = 79  # pinned: adding or removing a rule is a deliberate change of this number
HAN = re.compile(r"[\u4e00-\u9fff]")


def test_rule_count_is_pinned():
    assert len(RULES.rules) == RULE_COUNT


def test_ids_unique_and_well_formed():
    ids = [r.id for r in RULES.rules]
    assert len(ids) == len(set(ids))
    assert all(RULE_ID.match(i) for i in ids)


@pytest.mark.parametrize("rule", RULES.rules, ids=lambda r: r.id)
def test_rule_has_both_languages_sources_and_cases(rule):
    for text in (rule.title, rule.why, *( [rule.then.advice] if rule.then.advice else [])):
        assert HAN.search(text.zh), f"{rule.id}: zh text has no Chinese"
        assert not HAN.search(text.en), f"{rule.id}: en text contains Chinese"
        assert text.en.strip() and text.zh.strip()
    assert rule.sources and all(s.strip() for s in rule.sources)
    assert rule.cases.fires and rule.cases.silent
    assert re.match(r"^\d+\.\d+\.\d+$", rule.since)


def test_every_derived_fact_is_consumed_or_used_for_output():
    produced = {n for r in RULES.rules for n in r.then.assert_}
    consumed = {n for r in RULES.rules for n in r.when.derived}
    assert consumed <= produced
    # chains exist: at least one rule needs a fact that itself needs a derived fact
    needs = {r.id: set(r.when.derived) for r in RULES.rules}
    producers = {n: [r for r in RULES.rules if n in r.then.assert_] for n in produced}
    depth2 = [r.id for r in RULES.rules for n in r.when.derived for p in producers[n] if p.when.derived]
    assert depth2, needs


def test_rule_reference_docs_are_current():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rule_docs.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _write(tmp_path: Path, rules: list[dict]) -> Path:
    (tmp_path / "r.yaml").write_text(yaml.safe_dump({"rules": rules}, allow_unicode=True), encoding="utf-8")
    return tmp_path


def _base_rule() -> dict:
    data = yaml.safe_load((default_rules_dir() / "10_task_tier.yaml").read_text(encoding="utf-8"))
    return data["rules"][0]


@pytest.mark.parametrize("mutate, fragment", [
    (lambda r: r.update(colour="red"), "colour"),
    (lambda r: r["when"]["all"][0].update(field="no_such_fact"), "no_such_fact"),
    (lambda r: r["when"]["all"][0].update(field="gpu_count", op="eq", value="1"), "coerced"),
    (lambda r: r["title"].pop("zh"), "title.zh"),
    (lambda r: r.update(id="BAD ID"), "'id'"),
    (lambda r: r["when"]["all"][0].update(op="matches"), "op"),
    (lambda r: r["when"].update(derived=["never_asserted"]), "never_asserted"),
])
def test_malformed_rules_are_rejected_with_file_id_and_key(tmp_path, mutate, fragment):
    rule = _base_rule()
    mutate(rule)
    with pytest.raises(KnowledgeError) as info:
        load_rules(_write(tmp_path, [rule]))
    message = info.value.message("en")
    assert fragment in message
    assert "r.yaml" in message or "rule" in message


def test_duplicate_ids_are_rejected(tmp_path):
    with pytest.raises(KnowledgeError, match="duplicate"):
        load_rules(_write(tmp_path, [_base_rule(), _base_rule()]))


def test_bad_yaml_names_the_file(tmp_path):
    (tmp_path / "broken.yaml").write_text("rules: [\n", encoding="utf-8")
    with pytest.raises(KnowledgeError, match="broken.yaml"):
        load_rules(tmp_path)
