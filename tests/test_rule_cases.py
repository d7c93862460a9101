"""Every rule's cases, run through the whole pipeline (workload -> estimates -> plan -> engine)."""

from __future__ import annotations

import pytest

from gpu_advisor.advisor import evaluate_facts
from gpu_advisor.rules.loader import load_rules
from gpu_advisor.validation import workload_from_dict

RULES = load_rules().active
FIRES = [(r.id, i, case) for r in RULES for i, case in enumerate(r.cases.fires)]
SILENT = [(r.id, i, case) for r in RULES for i, case in enumerate(r.cases.silent)]


def _fired(case: dict) -> set[str]:
    _, firings = evaluate_facts(workload_from_dict(case))
    return {f.rule_id for f in firings}


@pytest.mark.parametrize("rule_id, index, case", FIRES, ids=[f"{r}-fires-{i}" for r, i, _ in FIRES])
def test_rule_fires_on_its_cases(rule_id, index, case):
    assert rule_id in _fired(case)


@pytest.mark.parametrize("rule_id, index, case", SILENT, ids=[f"{r}-silent-{i}" for r, i, _ in SILENT])
def test_rule_stays_silent_on_its_cases(rule_id, index, case):
    assert rule_id not in _fired(case)
