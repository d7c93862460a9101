"""Numbers and durable-rules' C core (issue 21): the float class its parser rejects, the encoding that keeps every
fact out of it, and the wrapped engine against the oracle over the whole float range, run in a subprocess so a
crash of the core is a failed test instead of a dead test runner."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_advisor.errors import KnowledgeError
from gpu_advisor.rules import corejson
from gpu_advisor.rules.loader import default_rules_dir, load_rules

HERE = Path(__file__).parent
# Every float form Python writes that the core's parser rejects: a one-digit mantissa with an exponent and no
# fraction (floats below 1e-4 or from 1e16 up whose shortest repr has one significant digit), and the non-finite.
REJECTED = ["9e-05", "1e-05", "2e-06", "1e-300", "5e-324", "-9e-05", "1e+16", "1e+300", "-1e+16", "Infinity",
            "-Infinity"]
ACCEPTED = ["1.5e-05", "2.5e-06", "1.5e+16", "0.0001", "9.0e-05", "1.0e+16", "5.0e-324", "1.7976931348623157e+308"]


def _run(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=HERE)


@settings(max_examples=800, deadline=None)
@given(st.one_of(st.floats(allow_nan=False), st.floats(-1e-3, 1e-3), st.floats(1e15, 1e17), st.integers(-2**70, 2**70)))
def test_every_number_is_written_in_the_form_the_core_reads_and_means_the_same_value(x):
    text = corejson.number(x)
    assert corejson.CORE_NUMBER.match(text), text
    if isinstance(x, int):
        assert int(text) == max(-corejson.INT_LIMIT, min(corejson.INT_LIMIT, x))
    elif math.isinf(x):
        assert float(text) == math.copysign(corejson.FLOAT_LIMIT, x)
    else:
        assert float(text) == x and math.copysign(1, float(text)) == math.copysign(1, x)
    assert json.loads(text) == float(text) or isinstance(x, int)


def test_a_fact_message_is_json_with_the_same_values():
    fields = {"sid": "s1", "t": "job:P0", "a": 9e-05, "b": 1e16, "c": math.inf, "d": True, "e": 'x"\\\n', "f": 3}
    text = corejson.message(fields)
    assert json.loads(text) == {**fields, "c": corejson.FLOAT_LIMIT}
    assert "e-05" in text and "9.0e-05" in text and "Infinity" not in text
    with pytest.raises(ValueError):
        corejson.number(math.nan)
    with pytest.raises(TypeError):
        corejson.number(True)


def test_the_core_rejects_exactly_the_exponent_forms_without_a_fraction():
    """The raw core (not our wrapper), one fact at a time: the class REJECTED raises, the forms we write pass. If a
    durable-rules release changes this, the test says so (and corejson's note can be revised)."""
    done = _run("""
        import json, sys
        import durable_rules_engine as core
        from gpu_advisor.rules.engine import _make_host_class, _not_dispatched
        host = _make_host_class()({"r": _not_dispatched})
        host.register_rulesets({"rs": {"r": {"all": [{"j": {"$and": [{"t": "job"}, {"$lt": {"x": 1.0}}]}}], "run": "r"}}})
        handle = host.get_ruleset("rs")._handle
        core.update_state(handle, json.dumps({"sid": "s", "$s": 1}))
        out = {}
        for text in json.loads(sys.argv[1]):
            try:
                core.assert_fact(handle, '{"sid": "s", "t": "job", "x": %s}' % text)
                out[text] = "ok"
            except Exception as exc:
                out[text] = str(exc)
        core.delete_state(handle, "s")
        print(json.dumps(out))
    """, json.dumps(REJECTED + ACCEPTED))
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert {t for t in REJECTED if "error code" not in out[t]} == set(), out
    assert {t for t in ACCEPTED if out[t] != "ok"} == set(), out
    # Python writes exactly these forms for such floats; corejson never does
    assert [repr(float(t)) if t[0] != "I" and t[1:2] != "I" else t for t in REJECTED[:-2]] == REJECTED[:-2]
    assert all(corejson.CORE_NUMBER.match(corejson.number(float(t))) for t in REJECTED)


def test_a_fact_the_core_rejects_is_an_engine_error_not_a_crash():
    """The dispatch path: a message the core's parser rejects (forced here past the encoder) raises EngineError,
    the session is cleaned up, and the engine keeps answering."""
    done = _run("""
        from gpu_advisor.errors import EngineError
        from gpu_advisor.rules.facts import FACT_FIELDS
        from gpu_advisor.rules.engine import DurableEngine
        from gpu_advisor.rules.loader import load_rules
        engine = DurableEngine(list(load_rules().active))
        facts = {n: (False if k is bool else 1 if k is int else 1.0 if k is float else "x") for n, (k, _) in FACT_FIELDS.items()}
        facts.update(is_training=True, has_plan=True, gpu_count=1, gpu_mem_gib=24.0)
        want = [f.rule_id for f in engine.evaluate(facts)]
        encode = engine._messages
        engine._messages = lambda sid, f: [m.replace('"sid"', '"zz": 9e-05, "sid"', 1) for m in encode(sid, f)]
        for _ in range(20):
            try:
                engine.evaluate(facts)
                raise SystemExit("no error")
            except EngineError as exc:
                assert "error code" in str(exc), exc
        engine._messages = encode
        assert [f.rule_id for f in engine.evaluate(facts)] == want and want
        print("OK")
    """)
    assert done.returncode == 0 and done.stdout.strip() == "OK", (done.returncode, done.stdout[-500:], done.stderr[-2000:])


def test_wrapped_engine_agrees_with_the_oracle_over_the_whole_float_range_in_a_subprocess():
    done = subprocess.run([sys.executable, str(HERE / "engine_numbers_probe.py"), "250", "21"], capture_output=True,
                          text=True, timeout=300)
    lines = done.stdout.strip().splitlines()
    if done.returncode < 0:
        pytest.fail(f"the engine process died with signal {-done.returncode} on the record {lines[-1] if lines else '?'}")
    assert done.returncode == 0 and lines[-1] == "OK", (lines[-1:], done.stderr[-2000:])
    assert len(lines) > 300  # the specials (2 records per value) and the hypothesis examples


def test_rule_constants_outside_what_the_core_reads_are_refused_at_load(tmp_path):
    train, rule = yaml.safe_load((default_rules_dir() / "10_task_tier.yaml").read_text(encoding="utf-8"))["rules"][:2]
    for bad in (5e-05, 1e16, 1e300):
        cond = next(c for c in rule["when"]["all"] if c["field"] == "gpu_mem_gib")
        cond["value"] = bad
        (tmp_path / "r.yaml").write_text(yaml.safe_dump({"rules": [train, rule]}, allow_unicode=True), encoding="utf-8")
        with pytest.raises(KnowledgeError, match="rule engine reads exactly"):
            load_rules(tmp_path)
