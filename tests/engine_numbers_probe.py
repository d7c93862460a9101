"""Run by tests/test_engine_numbers.py in a subprocess (a crash of durable-rules' C core kills this process, not
the test runner): the wrapped durable engine against the plain-Python oracle on fact records whose numbers
span the whole float range - subnormal, tiny, huge, +-inf, many digits, neighbours of every rule constant -
and the whole int64 range and beyond.

Before each evaluation the record's numbers are written to stdout (one line, flushed), so the parent names the
values of a record that crashed the process. Exit 0: no disagreement; exit 1: a disagreement (printed).

    python tests/engine_numbers_probe.py [EXAMPLES] [SEED]
"""

from __future__ import annotations

import math
import random
import sys
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from gpu_advisor.rules.facts import FACT_FIELDS
from gpu_advisor.rules.engine import DurableEngine, PythonEngine
from gpu_advisor.rules.loader import load_rules

RULES = list(load_rules().active)
DURABLE = DurableEngine(RULES)
ORACLE = PythonEngine(RULES)

_VALUES = [v for r in RULES for c in r.when.all for v in (c.value if isinstance(c.value, list) else [c.value])]
STRINGS = sorted({v for v in _VALUES if isinstance(v, str)}) or ["x"]
CONSTANTS = sorted({float(v) for v in _VALUES if isinstance(v, (int, float)) and not isinstance(v, bool)})
NEIGHBOURS = sorted({n for c in CONSTANTS for n in (c, math.nextafter(c, -math.inf), math.nextafter(c, math.inf))})
FLOAT_NAMES = [n for n, (k, _) in FACT_FIELDS.items() if k is float]
INT_NAMES = [n for n, (k, _) in FACT_FIELDS.items() if k is int]
STR_NAMES = [n for n, (k, _) in FACT_FIELDS.items() if k is str]
# strings the JSON text must carry intact: quotes, backslashes, escapes, controls, non-BMP, long (never empty: facts)
TEXTS = st.one_of(st.text(min_size=1, max_size=40), st.sampled_from(['"', "\\", '\\"', "\\u0000", "\x00", "'", "中文",
                                                                      "\U0001F600", "a" * 20_000, "}{", "],["]))

# The float forms Python writes that a parser may not expect: one-digit mantissas with an exponent, the
# extremes, signed zero, many digits.
SPECIAL = [9e-05, 1e-05, 2e-06, 1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, 1e16, 1e+300, 1.7976931348623157e308,
           -1.7976931348623157e308, math.inf, -math.inf, 0.0, -0.0, 1.5e-05, 0.1 + 0.2, 1 / 3, 123456789.12345679,
           9.999999999999999e15, 1e15, 0.0001, 9.99999999999999e-05]

FLOATS = st.one_of(
    st.floats(allow_nan=False),                                   # the whole range, infinities and subnormals
    st.floats(min_value=-1e-3, max_value=1e-3, allow_nan=False),  # tiny (exponent forms)
    st.floats(min_value=1e15, max_value=1e17),                    # where repr switches to an exponent
    st.floats(min_value=0, max_value=5000).map(lambda x: round(x, 2)),
    st.sampled_from(SPECIAL), st.sampled_from(NEIGHBOURS),
)
INTS = st.one_of(st.integers(-2**70, 2**70), st.integers(-2**63 - 2, -2**63 + 2), st.integers(2**63 - 2, 2**63 + 2),
                 st.integers(0, 600), st.sampled_from([int(c) for c in CONSTANTS if c == int(c)] or [0]))


def _base(rng: random.Random) -> dict[str, Any]:
    return {n: rng.choice([True, False]) if k is bool else rng.choice([0, 1, 2, 8, 16]) if k is int
            else rng.choice(CONSTANTS + [0.0]) if k is float else rng.choice(STRINGS) for n, (k, _) in FACT_FIELDS.items()}


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    facts = _base(random.Random(draw(st.integers(0, 2**32))))
    for name in draw(st.lists(st.sampled_from(FLOAT_NAMES), min_size=1, max_size=len(FLOAT_NAMES), unique=True)):
        facts[name] = draw(FLOATS)
    for name in draw(st.lists(st.sampled_from(INT_NAMES), max_size=4, unique=True)):
        facts[name] = draw(INTS)
    for name in draw(st.lists(st.sampled_from(STR_NAMES), max_size=3, unique=True)):
        facts[name] = draw(TEXTS)
    return facts


def check(facts: dict[str, Any]) -> None:
    numbers = {n: v if type(v) is not str or len(v) < 60 else f"<{len(v)} chars>" for n, v in facts.items()
               if type(v) in (int, float) or (type(v) is str and v not in STRINGS)}
    sys.stdout.write(repr(numbers) + "\n")
    sys.stdout.flush()
    got = [f.rule_id for f in DURABLE.evaluate(facts)]
    want = [f.rule_id for f in ORACLE.evaluate(facts)]
    assert set(got) == set(want), f"durable {sorted(set(got) ^ set(want))} differ from the oracle for {numbers}"


def main(examples: int, seed_value: int) -> int:
    rng = random.Random(seed_value)
    try:
        for i, value in enumerate(SPECIAL + NEIGHBOURS):  # every special value: in every float field, and in one
            check({**_base(rng), **{name: value for name in FLOAT_NAMES}})
            check({**_base(rng), FLOAT_NAMES[i % len(FLOAT_NAMES)]: value})
    except AssertionError as exc:
        print(f"DISAGREEMENT: {exc}", flush=True)
        return 1

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(records())
    def run(facts: dict[str, Any]) -> None:
        check(facts)

    try:
        run()
    except AssertionError as exc:
        print(f"DISAGREEMENT: {exc}", flush=True)
        return 1
    print("OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, int(sys.argv[2]) if len(sys.argv) > 2 else 0))
