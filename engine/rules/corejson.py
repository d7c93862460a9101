"""JSON text for durable-rules' C core: every number in the one form its parser reads.

The core's number parser (durable-rules 2.0.28, src/rules/json.c getNumber) accepts
``-?[0-9]+`` (an integer) or ``-?[0-9]+\\.[0-9]*([eE][+-]?[0-9]+)?`` (a double): an exponent is read only after
a fraction. Python's ``repr`` / ``json.dumps`` write a float whose shortest round-trip form has one significant
digit and an exponent without a fraction - ``9e-05``, ``1e-05``, ``2e-06``, ``1e+16``, ``5e-324`` (every such
float below 1e-4 or from 1e16 up) - and write infinity and NaN as ``Infinity`` / ``-Infinity`` / ``NaN``. The
core rejects those (error 204 "parse number", 202 for ``Infinity``) when one fact is asserted; in a batch
(``assert_facts``) it silently stops at the bad fact and returns "ok" with an unwritten state offset, which
``start_action_for_state`` then dereferences (SIGSEGV). So:

* floats are written as ``repr`` with ``.0`` added to a mantissa that has no fraction (``9e-05`` -> ``9.0e-05``):
  the same double after the core's ``atof`` (glibc's strtod rounds correctly), so the core compares exactly the
  value the plain-Python oracle compares;
* infinities are clamped to the largest finite double (every rule constant is far smaller - the loader's lint
  keeps them within ``RULE_CONSTANT_LIMIT`` - so every comparison comes out as it would with infinity);
  NaN never gets here (facts.check_facts refuses it) and is refused here too;
* integers beyond the core's ``long long`` are clamped to it (atoll would saturate the same way, but explicitly).

tests/test_engine_numbers.py checks the form for floats across the whole range and runs the wrapped engine on
them in a subprocess, so a crash is a failed test and not a dead test runner.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

INT_LIMIT = 2**63 - 1
FLOAT_LIMIT = sys.float_info.max
RULE_CONSTANT_LIMIT = 1e15  # |numeric constant| in a rule (loader lint): exact in a double, far below the clamps

# What the core's getNumber reads as one whole number (json.c): an integer, or a double with a fraction.
CORE_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*([eE][+-]?[0-9]+)?)?\Z")


def number(value: int | float) -> str:
    """``value`` as JSON text the core parses to the same number (clamped as the module doc says)."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a number")
    if isinstance(value, int):
        return str(max(-INT_LIMIT, min(INT_LIMIT, value)))
    if value != value:
        raise ValueError("NaN cannot be sent to the rule engine")
    if math.isinf(value):
        value = math.copysign(FLOAT_LIMIT, value)
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


def scalar(value: Any) -> str:
    """One fact value (str, bool, int or float) as core-safe JSON text."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"fact value of type {type(value).__name__} cannot be sent to the rule engine")


def message(fields: dict[str, Any]) -> str:
    """A flat fact ``{name: value}`` as core-safe JSON text (names are fact names: plain identifiers)."""
    return "{" + ", ".join(f"{json.dumps(name)}: {scalar(value)}" for name, value in fields.items()) + "}"


_STR = json.encoder.encode_basestring  # json.dumps(str, ensure_ascii=False) without the call overhead (C)
STR = _STR


def _fast(value: Any) -> str:
    """scalar() with the common cases inline: a float whose repr has no exponent and is finite, an int in range."""
    kind = type(value)
    if kind is str:
        return _STR(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        text = float.__repr__(value)
        return text if "e" not in text and "n" not in text else number(value)  # "inf", "nan": n
    if kind is int and -INT_LIMIT <= value <= INT_LIMIT:
        return int.__repr__(value)
    return scalar(value)


def encoder(head: dict[str, Any], names: list[str] | tuple[str, ...]) -> Any:
    """A function ``(sid, facts) -> text``: the fact ``{"sid": sid, **head, name: facts[name] ...}`` as message()
    writes it, with the keys encoded once (the per-evaluation path of DurableEngine)."""
    fixed = "".join(f", {json.dumps(k)}: {scalar(v)}" for k, v in head.items())
    keys = [f", {json.dumps(name)}: " for name in names]
    pairs = list(zip(keys, names))

    def encode(sid: str, facts: Any) -> str:
        return "".join(['{"sid": ', _STR(sid), fixed, *[k + _fast(facts[n]) for k, n in pairs], "}"])

    return encode


def rule_constant_ok(value: Any) -> bool:
    """A rule's numeric constant the core reads exactly and the clamps cannot reach: finite, within
    RULE_CONSTANT_LIMIT, and (compiled by json.dumps inside durable's host) written in the core's form."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    if isinstance(value, int):
        return abs(value) <= RULE_CONSTANT_LIMIT
    return math.isfinite(value) and abs(value) <= RULE_CONSTANT_LIMIT and bool(CORE_NUMBER.match(json.dumps(value)))
