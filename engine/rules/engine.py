"""Rule engines behind one small interface: ``evaluate(facts) -> list[Firing]``.

``DurableEngine`` runs the rule base on durable-rules (forward chaining in its C core): one private host per
loaded rule base with its polling threads off, one lock around an evaluation, a fresh session per
evaluation deleted in ``finally``, and its exceptions translated into ``EngineError``.
``PythonEngine`` evaluates the same rules in plain Python: the test oracle and the fallback.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from gpu_advisor.errors import EngineError
from gpu_advisor.rules.facts import check_facts
from gpu_advisor.rules import corejson
from gpu_advisor.rules.compile import compile_ruleset, fields_by_partition, job_type
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
        return self.evaluate_checked(facts)

    def evaluate_checked(self, facts: dict[str, Any]) -> list[Firing]:
        """evaluate() for facts that already passed check_facts."""
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


def _not_dispatched(c: Any) -> None:
    """Registered with the host; never called: DurableEngine dispatches actions itself (see _dispatch)."""


class DurableEngine:
    """durable-rules' C core does the matching; the actions are dispatched here, not by durable's Python host.

    durable's host wraps every action in a Closure / Content / Promise and re-serialises the session state per
    action (most of an evaluation's time). ``_dispatch`` makes the host's C calls in the host's order
    (start_action_for_state, the action, complete_and_start_action) without those wrappers. It leaves out one:
    the host writes the session state back after every action (update_state), because a durable action may
    change it; these actions never do, and no rule matches the state fact, so writing it back only deleted and
    re-stored the same fact (13 C calls per evaluation; tests/test_engine.py compares the firings with the
    plain-Python engine's, and with the host's full call sequence).
    """

    _counter = itertools.count()

    def __init__(self, rules: list[Rule]) -> None:
        import durable_rules_engine

        self._core = durable_rules_engine
        self.rules = {r.id: r for r in rules if not r.deprecated}
        self._domains = fields_by_partition(list(self.rules.values()))
        self._encoders = [corejson.encoder({"t": job_type(domain)}, names) for domain, names in self._domains.items()]
        self._name = f"gpu_advisor_{next(self._counter)}"
        self._lock = threading.Lock()
        self._asserts = {rid: tuple(dict.fromkeys(r.then.assert_)) for rid, r in self.rules.items()}
        # per rule, once: the facts a firing reports and the derived facts it required
        self._shapes = {rid: (tuple(r.fields()), tuple(r.when.derived)) for rid, r in self.rules.items()}
        actions: dict[str, Callable[[Any], None]] = {rid: _not_dispatched for rid in self.rules}
        actions["__sink__"] = _not_dispatched
        try:
            self._host = _make_host_class()(actions)
            self._host.register_rulesets({self._name: compile_ruleset(list(self.rules.values()))})
            self._handle = self._host.get_ruleset(self._name)._handle
        except Exception as exc:  # the C core reports ruleset errors as plain exceptions
            raise EngineError(f"durable-rules rejected the rule base: {exc}") from None

    def _fire(self, run: _Run, rule_id: str) -> None:
        rule = self.rules.get(rule_id)
        if rule is None or rule_id in run.seen:  # a sink (never fires) or a repeat
            return
        try:
            run.seen.add(rule_id)
            names, derived = self._shapes[rule_id]
            run.fired.append(Firing(rule_id, {name: run.facts[name] for name in names}, derived))
            for name in self._asserts[rule_id]:
                if name not in run.asserted:
                    run.asserted.add(name)
                    # json.dumps({"t": "d", "k": name, "sid": sid}, ensure_ascii=False), written out
                    fact = '{"t": "d", "k": ' + corejson.STR(name) + ', "sid": ' + corejson.STR(run.sid) + '}'
                    _accepted(self._core.assert_fact(self._handle, fact), fact)
        except Exception as exc:  # keep action errors and fail loudly after the session
            run.errors.append(f"{rule_id}: {exc!r}")

    def _dispatch(self, run: _Run, state_handle: Any) -> None:
        """Run the actions the core has queued for this session, as durable's Ruleset.do_actions would."""
        core, handle = self._core, self._handle
        result = core.start_action_for_state(handle, state_handle)
        if not result:
            return
        message = result[1]  # result[0] is the session state, which the actions never change (no update_state)
        while message:
            self._fire(run, _action_name(message))
            message = core.complete_and_start_action(handle, state_handle)

    def _messages(self, sid: str, facts: dict[str, Any]) -> list[str]:
        """The job facts as JSON text in the form the core's parser reads (corejson: no ``9e-05``, no ``Infinity``)."""
        return [encode(sid, facts) for encode in self._encoders]

    def evaluate(self, facts: dict[str, Any]) -> list[Firing]:
        check_facts(facts)
        return self.evaluate_checked(facts)

    def evaluate_checked(self, facts: dict[str, Any]) -> list[Firing]:
        """evaluate() for facts that already passed check_facts (recommend() checks them when it builds them)."""
        core, handle = self._core, self._handle
        with self._lock:
            run = _Run(sid=f"s{next(self._counter)}", facts=facts)
            try:
                try:
                    state = core.update_state(handle, json.dumps({"sid": run.sid, "$s": 1}))
                    self._dispatch(run, state)
                    # One assert_fact per job fact, then one dispatch: what assert_facts does (handleMessages runs
                    # handleMessageCore per fact), except that a fact the core's parser rejects raises here. The batch
                    # call stops silently at such a fact and returns "ok" with its state-offset out-parameter never
                    # written; dispatching that offset was the segfault of issue 21.
                    for message in self._messages(run.sid, facts):
                        result = _accepted(core.assert_fact(handle, message), message)
                        if result != state:
                            raise EngineError(f"the core answered state {result!r} for session state {state!r}")
                    self._dispatch(run, state)
                finally:
                    core.delete_state(handle, run.sid)
            except Exception as exc:
                raise EngineError(f"durable-rules failed during evaluation: {type(exc).__name__}: {exc}") from None
        if run.errors:
            raise EngineError("rule action failed: " + "; ".join(run.errors))
        return run.fired


def _action_name(message: str) -> str:
    """The action the core queued: the first key of its JSON message ``{"<rule id>": {<matched facts>}}``.

    Rule ids match schema.RULE_ID (no quotes or escapes) and the sinks are ``__sink__<type>``, so the key ends at
    the first closing quote; parsing the whole message (every matched fact) is not needed for the name.
    """
    if not message.startswith('{"'):
        return next(iter(json.loads(message)))
    return message[2:message.index('"', 2)]


def _accepted(result: Any, message: str) -> Any:
    """durable's Ruleset._handle_result: the state handle, or an error when no rule consumes the message."""
    if result[0] == 1:
        raise EngineError(f"message not handled: {message}")
    if result[0] == 2:
        raise EngineError(f"message observed: {message}")
    return 0 if result[0] == 3 else result[1]
