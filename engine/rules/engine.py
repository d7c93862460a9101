"""Rule engines behind one small interface: ``evaluate(facts) -> list[Firing]``.

``DurableEngine`` runs the rule base on durable-rules (forward chaining in its C core): one private host per
loaded rule base with its polling threads off, one lock around an evaluation, a fresh session per
evaluation deleted in ``finally``, and its exceptions translated into ``EngineError``.
``PythonEngine`` evaluates the same rules in plain Python: the test oracle and the fallback.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from gpu_advisor.errors import EngineError
from gpu_advisor.facts import check_facts
from gpu_advisor.rules.compile import compile_ruleset, fields_by_domain, job_type
from gpu_advisor.rules.schema import Condition, Rule


@dataclass(frozen=True)
class Firing:
    rule_id: str
    matched: dict[str, Any]
    derived: tuple[str, ...] = ()


class RuleEngine(Protocol):
    def evaluate(self, facts: dict[str, Any]) -> list[Firing]: ...


def _firing(rule: Rule, facts: dict[str, Any]) -> Firing:
    return Firing(rule.id, {name: facts[name] for name in rule.fields()}, tuple(rule.when.derived))


# ---------------------------------------------------------------- plain Python (oracle and fallback)

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b, "is": lambda a, b: a is b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "in": lambda a, b: a in b, "not_in": lambda a, b: a not in b,
}


def holds(cond: Condition, facts: dict[str, Any]) -> bool:
    return _OPS[cond.op](facts[cond.field], cond.value)


class PythonEngine:
    """Naive forward chaining to a fixpoint: fire every rule whose conditions hold, until nothing new fires."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = [r for r in rules if not r.deprecated]

    def evaluate(self, facts: dict[str, Any]) -> list[Firing]:
        check_facts(facts)
        derived: set[str] = set()
        fired: list[Firing] = []
        done: set[str] = set()
        changed = True
        while changed:
            changed = False
            for rule in self.rules:
                if rule.id in done or not set(rule.when.derived) <= derived:
                    continue
                if all(holds(c, facts) for c in rule.when.all):
                    done.add(rule.id)
                    fired.append(_firing(rule, facts))
                    derived.update(rule.then.assert_)
                    changed = True
        return fired


# ---------------------------------------------------------------- durable-rules

@dataclass
class _Run:
    sid: str
    facts: dict[str, Any]
    fired: list[Firing] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    asserted: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)


def _make_host_class() -> type:
    import durable.engine as durable

    class _QuietHost(durable.Host):  # type: ignore[misc]
        """A host whose polling threads never start (they segfault under concurrent callers)."""

        def __init__(self, actions: dict[str, Callable[[Any], None]]) -> None:
            self._actions = actions
            super().__init__()

        def get_action(self, action_name: str) -> Callable[[Any], None]:
            return self._actions[action_name]

        def _run(self) -> None:  # no timers, no dispatch threads
            return None

    return _QuietHost


class DurableEngine:
    _counter = itertools.count()

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = {r.id: r for r in rules if not r.deprecated}
        self._domains = fields_by_domain(list(self.rules.values()))
        self._name = f"gpu_advisor_{next(self._counter)}"
        self._lock = threading.Lock()
        self._run: _Run | None = None
        actions: dict[str, Callable[[Any], None]] = {rid: self._action(rid) for rid in self.rules}
        actions["__sink__"] = lambda c: None
        try:
            self._host = _make_host_class()(actions)
            self._host.register_rulesets({self._name: compile_ruleset(list(self.rules.values()))})
        except Exception as exc:  # the C core reports ruleset errors as plain exceptions
            raise EngineError(f"durable-rules rejected the rule base: {exc}") from None

    def _action(self, rule_id: str) -> Callable[[Any], None]:
        rule = self.rules[rule_id]

        def fire(c: Any) -> None:
            run = self._run
            if run is None or rule_id in run.seen:
                return
            try:
                run.seen.add(rule_id)
                run.fired.append(_firing(rule, run.facts))
                for name in rule.then.assert_:
                    if name not in run.asserted:
                        run.asserted.add(name)
                        c.assert_fact({"t": "d", "k": name})
            except Exception as exc:  # durable swallows action errors: keep them and fail loudly
                run.errors.append(f"{rule_id}: {exc!r}")

        return fire

    def _messages(self, sid: str, facts: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"sid": sid, "t": job_type(domain), **{name: facts[name] for name in names}}
                for domain, names in self._domains.items()]

    def evaluate(self, facts: dict[str, Any]) -> list[Firing]:
        check_facts(facts)
        with self._lock:
            run = _Run(sid=f"s{next(self._counter)}", facts=facts)
            self._run = run
            try:
                self._host.update_state(self._name, {"sid": run.sid})
                try:
                    self._host.assert_facts(self._name, self._messages(run.sid, facts))
                finally:
                    self._host.delete_state(self._name, run.sid)
            except Exception as exc:
                raise EngineError(f"durable-rules failed during evaluation: {type(exc).__name__}: {exc}") from None
            finally:
                self._run = None
        if run.errors:
            raise EngineError("rule action failed: " + "; ".join(run.errors))
        return run.fired
