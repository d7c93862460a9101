"""The durable-rules engine against the plain-Python oracle, isolation, limits and threads."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_advisor.errors import EngineError
from gpu_advisor.rules.facts import FACT_FIELDS
from gpu_advisor.rules.engine import DurableEngine, PythonEngine
from gpu_advisor.rules.loader import load_rules

RULES = list(load_rules().active)
DURABLE = DurableEngine(RULES)
ORACLE = PythonEngine(RULES)

# Values that rules compare against, so random facts hit rule boundaries often.
_STRINGS = sorted({str(v) for r in RULES for c in r.when.all
                   for v in (c.value if isinstance(c.value, list) else [c.value]) if isinstance(v, str)})
_NUMBERS = sorted({float(v) for r in RULES for c in r.when.all
                   for v in (c.value if isinstance(c.value, list) else [c.value])
                   if isinstance(v, (int, float)) and not isinstance(v, bool)})


def _value(kind: type) -> st.SearchStrategy[Any]:
    if kind is bool:
        return st.booleans()
    if kind is int:
        return st.one_of(st.sampled_from([int(n) for n in _NUMBERS] + [0, 1, 2, 8]), st.integers(0, 600))
    if kind is float:
        return st.one_of(st.sampled_from(_NUMBERS + [0.0]), st.floats(0, 5000, allow_nan=False).map(lambda x: round(x, 2)))
    return st.one_of(st.sampled_from(_STRINGS), st.sampled_from(["x", "none", "unknown"]))


FACTS = st.fixed_dictionaries({name: _value(kind) for name, (kind, _) in FACT_FIELDS.items()})


def _ids(firings) -> set[str]:
    return {f.rule_id for f in firings}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FACTS)
def test_durable_fires_exactly_what_the_oracle_fires(facts):
    assert _ids(DURABLE.evaluate(facts)) == _ids(ORACLE.evaluate(facts))


class _HostSequence(DurableEngine):
    """DurableEngine making durable's host's full call sequence: the session state written back after every
    action (update_state), which DurableEngine leaves out."""

    def _dispatch(self, run, state_handle):
        import json

        result = self._core.start_action_for_state(self._handle, state_handle)
        if not result:
            return
        state, message = json.dumps(json.loads(result[0])), result[1]
        while message:
            self._fire(run, next(iter(json.loads(message))))
            self._core.update_state(self._handle, state)
            message = self._core.complete_and_start_action(self._handle, state_handle)


HOST_SEQUENCE = _HostSequence(RULES)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FACTS)
def test_leaving_out_the_state_write_back_fires_the_same_rules_in_the_same_order(facts):
    assert DURABLE.evaluate(facts) == HOST_SEQUENCE.evaluate(facts)


def _maximal() -> dict[str, Any]:
    """A fact record that satisfies as many rules as possible at once (greedy over the conditions)."""
    best: dict[str, Any] = {}
    for _ in range(400):
        rng = random.Random(len(best) + _)
        facts = {n: rng.choice([True, False]) if k is bool else
                 (rng.choice([1, 2, 8, 16, 0]) if k is int else rng.choice(_NUMBERS + [0.0]) if k is float
                  else rng.choice(_STRINGS)) for n, (k, _) in FACT_FIELDS.items()}
        if len(ORACLE.evaluate(facts)) > len(ORACLE.evaluate(best)) if best else True:
            best = facts
    return best


def test_maximal_fact_record_stays_under_engine_limits():
    facts = _maximal()
    fired = DURABLE.evaluate(facts)
    assert _ids(fired) == _ids(ORACLE.evaluate(facts))
    assert len(fired) >= 20  # a busy record: many rules fire in one session without error 303


def test_forward_chaining_is_at_least_three_levels_deep():
    facts = _maximal()
    facts.update(is_training=True, has_plan=True, multi_node=True, gpu_count=16, nodes=2, gpu_mem_gib=80.0,
                 instance_rdma="erdma", is_serving=False, is_cpu_only=False, rdma_required=True, internode_known=True)
    order = [f.rule_id for f in DURABLE.evaluate(facts)]
    # TASK-TRAIN -> NET-MULTINODE (needs `training`) -> PLAT-LINGJUN (needs `needs_rdma`)
    assert order.index("TASK-TRAIN") < order.index("NET-MULTINODE") < order.index("PLAT-LINGJUN")
    assert "NET-RDMA-OK" in order
    assert "PLAT-LINGJUN" in order and "STOR-CPFS-SHARED" in order


def test_no_match_is_a_normal_outcome():
    facts = {n: (False if k is bool else 0 if k is int else 0.0 if k is float else "nothing")
             for n, (k, _) in FACT_FIELDS.items()}
    facts.update(interruptible=True, months_of_use=0.5, is_cpu_only=True)
    assert DURABLE.evaluate(facts) == ORACLE.evaluate(facts)


def test_badly_typed_facts_are_refused_before_the_engine():
    facts = _maximal()
    facts["gpu_count"] = "8"  # durable-rules would coerce "8" == 8
    with pytest.raises(EngineError, match="gpu_count"):
        DURABLE.evaluate(facts)
    facts = _maximal()
    del facts["nodes"]
    with pytest.raises(EngineError, match="nodes"):
        DURABLE.evaluate(facts)


def test_sessions_do_not_leak_state_over_1000_alternating_evaluations():
    a, b = _maximal(), _maximal()
    b.update(is_training=False, is_serving=True, has_plan=False)
    expected = {0: _ids(ORACLE.evaluate(a)), 1: _ids(ORACLE.evaluate(b))}
    for i in range(1000):
        facts = a if i % 2 == 0 else b
        assert _ids(DURABLE.evaluate(facts)) == expected[i % 2]


def test_threads_share_one_engine_safely():
    records = [_maximal() for _ in range(4)]
    records[1].update(is_serving=True, is_training=False)
    records[2].update(multi_node=True, nodes=2, gpu_count=16)
    expected = [_ids(ORACLE.evaluate(r)) for r in records]
    errors: list[str] = []

    def worker(seed: int) -> None:
        for i in range(150):
            k = (seed + i) % len(records)
            if _ids(DURABLE.evaluate(records[k])) != expected[k]:
                errors.append(f"thread {seed} iteration {i}")

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_each_knowledge_base_gets_its_own_host():
    other = DurableEngine(RULES)
    facts = _maximal()
    assert _ids(other.evaluate(facts)) == _ids(DURABLE.evaluate(facts))
