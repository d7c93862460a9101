"""server/warmup.py: the tool calls that load the engine before the first request, in the foreground (HTTP) or on
a background thread after the stdio handshake; a tool call that arrives meanwhile stops it after its current call."""

import threading

import pytest

from gpu_advisor.server.warmup import STEPS, WARM_UP_CALLS, Background, warm_after_handshake, warm_up

NAMES = ["first", "second", "third"]
TIMEOUT_S = 60


def recording(calls: list[str]) -> list:
    return [(name, lambda name=name: calls.append(name)) for name in NAMES]


class Gate:
    """Fake steps: the first blocks until released; every step is recorded."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls: list[str] = []
        self.steps = [(name, lambda name=name: self(name)) for name in NAMES]

    def __call__(self, name: str) -> None:
        self.calls.append(name)
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(TIMEOUT_S)


def test_every_warm_up_call_answers_without_a_tool_error() -> None:
    """WARM_UP_CALLS stay valid as the catalog and the rules change (a failing call would warm nothing)."""
    from gpu_advisor.server.warmup import run_tool

    for name, arguments in WARM_UP_CALLS:
        result = run_tool(name, arguments)
        assert not result.is_error, (name, result.content[0].text)
    assert {name for name, _ in WARM_UP_CALLS} == {"recommend_gpu_config", "estimate_memory", "ask",
                                                     "list_instance_types", "explain_rule"}


def test_warm_up_runs_every_step() -> None:
    done: list[str] = []
    warm_up(done=done)
    assert done == [name for name, _ in STEPS] and len(done) == 2 + len(WARM_UP_CALLS)


def test_background_runs_every_call_once() -> None:
    calls: list[str] = []
    background = Background(recording(calls))
    assert background.start() is True
    assert background.start() is False  # once per process
    assert background.join(TIMEOUT_S)
    assert calls == background.done == NAMES
    background.wait()  # ended: returns at once


def test_a_waiting_tool_call_stops_the_warm_up_after_its_current_call() -> None:
    gate = Gate()
    background = Background(gate.steps)
    background.start()
    assert gate.entered.wait(TIMEOUT_S)
    waiter = threading.Thread(target=background.wait)
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # waits for the call in progress
    gate.release.set()
    waiter.join(TIMEOUT_S)
    assert not waiter.is_alive()
    assert gate.calls == background.done == ["first"]  # and no further call was made


def test_stop_ends_the_warm_up_after_its_current_call() -> None:
    gate = Gate()
    background = Background(gate.steps)
    background.start()
    assert gate.entered.wait(TIMEOUT_S)
    background.stop()
    gate.release.set()
    assert background.join(TIMEOUT_S)
    assert gate.calls == ["first"]


def test_wait_without_a_warm_up_returns() -> None:
    Background(Gate().steps).wait()


def test_a_failing_call_ends_the_warm_up_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    def fail() -> None:
        raise RuntimeError("knowledge base broken")

    done: list[str] = []
    warm_up(steps=[("broken", fail), *recording([])], done=done)
    assert done == []
    assert "warm-up failed (RuntimeError)" in capsys.readouterr().err


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_first_message_after_the_handshake_starts_the_warm_up(mode: str) -> None:
    """A legacy client's notifications/initialized starts it; a 2026-era client (``server/discover``, no
    initialized notification) starts it with its first request. The handshake alone does not."""
    from mcp import Client

    from gpu_advisor.server.app import build_server

    calls: list[str] = []
    background = Background(recording(calls))
    server = build_server()
    warm_after_handshake(server, background)
    async with Client(server, mode=mode) as client:
        if mode == "auto":  # a legacy client's notification may be in flight still: no check there
            assert background._thread is None
        listed = await client.list_tools()
        assert len(listed.tools) == 5
        assert background.join(TIMEOUT_S)
    assert calls == NAMES


@pytest.mark.anyio
@pytest.mark.parametrize("setting", [None, "0"])
async def test_gpu_advisor_warm_up_0_turns_it_off(monkeypatch: pytest.MonkeyPatch, setting: str | None) -> None:
    from mcp import Client

    from gpu_advisor.server.app import stdio_server

    if setting is None:
        monkeypatch.delenv("GPU_ADVISOR_WARM_UP", raising=False)
    else:
        monkeypatch.setenv("GPU_ADVISOR_WARM_UP", setting)
    background = Background(recording([]))
    async with Client(stdio_server(background), mode="legacy") as client:
        assert len((await client.list_tools()).tools) == 5
    assert background.join(TIMEOUT_S) is (setting is None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_after_import_engine_no_tool_imports_an_engine_module() -> None:
    """import_engine() takes every first import of the engine under one lock (concurrent first imports can
    deadlock in CPython's import locks): afterwards no tool call, and no resource, imports another gpu_advisor
    module. In a fresh process (this one has imported everything already)."""
    import subprocess
    import sys

    script = """
import sys
from gpu_advisor.server.warmup import WARM_UP_CALLS, engine_modules, import_engine, run_tool
from gpu_advisor.server import resources
import_engine()
before = {m for m in sys.modules if m.startswith("gpu_advisor")}
assert set(engine_modules()) <= before, sorted(set(engine_modules()) - before)
for name, arguments in WARM_UP_CALLS:
    assert not run_tool(name, arguments).is_error, name
for read in (resources.catalog_instances, resources.rules_index, resources.workload_schema):
    read()
resources.rule_detail("TIER-ENTRY")
new = sorted(m for m in sys.modules if m.startswith("gpu_advisor") and m not in before)
print("new:", new)
assert not new, new
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "new: []" in done.stdout



def test_no_warm_up_step_runs_beside_a_call_that_waited() -> None:
    """A tool call's wait() and the timer's start() at the same moment, with the GIL changing hands at every
    bytecode: once wait() has returned, no warm-up step starts or is still running, whichever came first."""
    import sys
    import time

    running: list[int] = []
    late: list[int] = []

    def step() -> None:
        running.append(1)
        time.sleep(0.005)
        running.pop()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for i in range(150):
            background = Background([("step", step), ("again", step)])
            background.start_later(0.001)
            time.sleep(0.0005 * (i % 4))
            background.wait()
            late.extend(running)  # a step in progress after wait() returned
            thread = background._thread
            if thread is not None:
                thread.join(TIMEOUT_S)
            assert len(background.done) <= 1  # the stop set by wait() ends it after at most the step in progress
    finally:
        sys.setswitchinterval(interval)
    assert late == []
