"""Loading, before the first tool call, what the first tool call would load: the engine's modules, the knowledge
base (catalog, rules, durable-rules host), the Markdown templates and the question parser's lexicon.

- ``warm_up()`` imports the tools' code, loads the knowledge base and calls each tool once (``STEPS``, answers
  discarded). The HTTP server runs it before it opens its port.
- ``warm_after_handshake(server)`` (stdio) runs the same steps on a background thread, ``delay_s()`` (1 s) after the
  client's first message after the handshake (``initialize`` or ``server/discover``), whose answer is written by
  then: the SDK's import stays the whole of ``initialize``, and a client that lists the tools and leaves within the
  delay pays nothing for it. A first tool call that comes when the client's user or model asks
  finds everything loaded: 0.6 s -> 18 ms (bench/cold_start.py, "first call after a pause"). A tool call that
  arrives during the warm-up stops it after the step in progress and waits for that one (``Background.wait``)
  instead of importing the same modules alongside it; what was not warmed is loaded by the calls that need it, as
  without a warm-up. The thread is not a daemon: when the client disconnects, the server stops it
  (``Background.stop``) and the process exits after the warm-up's current step, never with the interpreter torn
  down under an import or under durable-rules' C code.
"""

import importlib
import os
import pkgutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

# One call of each tool (both languages for the Markdown templates): loads what the first requests would load.
WARM_UP_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("recommend_gpu_config", {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024], "lang": "en"}),
    ("recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "lang": "zh"}),
    ("estimate_memory", {"task": "llm_finetune", "model": "Qwen2.5 7B", "lang": "en"}),
    ("ask", {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16"}),
    ("list_instance_types", {"gpu": "L20", "region": "cn-hangzhou"}),
    ("explain_rule", {"rule_id": "TIER-ENTRY", "lang": "en"}),
]

Step = tuple[str, Callable[[], Any]]  # (what it loads, the call)


def run_tool(name: str, arguments: dict[str, Any]) -> Any:
    """One tool call as the server makes it (validation, handler, result), without the SDK around it."""
    from gpu_advisor.server.tools import SPECS

    return SPECS[name].run(dict(arguments))


DATA_PACKAGES = ("gpu_advisor.knowledge", "gpu_advisor.prompts")  # read through importlib.resources, which imports them


def engine_modules() -> list[str]:
    """Every module of the engine: the gpu_advisor package less the server (gpu_advisor.server) and __main__ modules,
    and its data packages. (pkgutil imports the subpackages to list them.)"""
    import gpu_advisor

    found = [m.name for m in pkgutil.walk_packages(gpu_advisor.__path__, "gpu_advisor.")
             if not m.name.endswith(".__main__") and not m.name.startswith("gpu_advisor.server")]
    return list(dict.fromkeys([*found, *DATA_PACKAGES]))


_import_lock = threading.Lock()
_imported = False


def import_engine() -> None:
    """Import the tools and every engine module once per process, one thread at a time.

    The tools import the engine lazily (server start-up imports none of it), the engine imports some modules inside
    functions, and the SDK runs each stdio tool call on a worker thread. Concurrent first imports are where CPython
    3.11 / 3.12 can raise ``_DeadlockError`` (gh-83065: a package whose ``__init__`` imports its submodules, raced by
    a thread importing one of them; the engine's packages export lazily for that reason, tests/test_import_races.py,
    but third-party packages do not). After this, a tool's code and the resources import no further engine module
    (tests/test_warmup.py), so concurrent calls find their modules loaded. No module calls this while it is being
    imported, so the lock cannot be taken in the opposite order to a module lock."""
    global _imported
    if _imported:
        return
    with _import_lock:
        if not _imported:
            import gpu_advisor.server.tools  # noqa: F401

            for name in engine_modules():
                importlib.import_module(name)
            _imported = True


def _load_knowledge() -> None:
    from gpu_advisor.advisor import get_knowledge

    get_knowledge()


# Short steps (0.1-0.3 s each here), so that a tool call or the server's exit waits for one of them at most.
STEPS: list[Step] = [("the engine's modules", import_engine), ("the knowledge base", _load_knowledge),
                     *((f"{name} {arguments}", partial(run_tool, name, arguments)) for name, arguments in WARM_UP_CALLS)]


def warm_up(stop: threading.Event | None = None, steps: Sequence[Step] = STEPS, done: list[str] | None = None) -> float:
    """Run ``steps`` in this process until ``stop`` is set (``done`` gets the name of each one run); returns the
    seconds it took. Never raises: a failure here shows up again, as a tool error, on the request that meets it."""
    t0 = time.perf_counter()
    try:
        for name, step in steps:
            if stop is not None and stop.is_set():
                break
            step()
            if done is not None:
                done.append(name)
    except Exception as exc:  # a broken knowledge base fails every call anyway: say so once, then stop
        sys.stderr.write(f"gpu-advisor serve: warm-up failed ({type(exc).__name__}); continuing\n")
    return time.perf_counter() - t0


def delay_s() -> float:
    """How long the stdio server waits, after the handshake, before it warms up (GPU_ADVISOR_WARM_UP_DELAY_S,
    default 1 s). A client that only lists the tools and leaves (a probe, an inspector, a host checking its servers)
    is gone by then and never pays for the warm-up (about 0.6 s of CPU); a first tool call that comes sooner loads
    what it needs itself and the warm-up is not run at all."""
    text = os.environ.get("GPU_ADVISOR_WARM_UP_DELAY_S", "").strip()
    try:
        value = float(text) if text else DEFAULT_DELAY_S
    except ValueError:
        value = DEFAULT_DELAY_S
    return value if 0 <= value <= 600 else DEFAULT_DELAY_S


DEFAULT_DELAY_S = 1.0


class Background:
    """``warm_up()`` on a thread of its own, started at most once."""

    def __init__(self, steps: Sequence[Step] = STEPS) -> None:
        self.steps = steps
        self.done: list[str] = []  # the steps run so far
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set by a tool call that waits for the warm-up, or at exit

    def start_later(self, delay: float) -> bool:
        """Start the warm-up in ``delay`` seconds unless a tool call (``wait``) or the exit (``stop``) comes first."""
        if delay <= 0:
            return self.start()
        with self._lock:
            if self._thread is not None or self._timer is not None or self._stop.is_set():
                return False
            self._timer = threading.Timer(delay, self.start)
            self._timer.daemon = True  # a pending start never holds up the exit
            self._timer.start()
            return True

    def start(self) -> bool:
        """Start the warm-up; False when it was started before, or a tool call or the exit came first."""
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return False
            self._thread = threading.Thread(target=warm_up, args=(self._stop, self.steps, self.done),
                                            name="gpu-advisor-warm-up", daemon=False)
            self._thread.start()
            return True

    def wait(self) -> None:
        """Return once the warm-up (if started) has ended, asking it to stop after its current step; a warm-up not
        started yet never starts (this call loads what it needs). The state is read under the lock ``start`` takes:
        a timer firing at this moment either starts the thread before (and this call joins it) or finds the stop
        set (and starts nothing), never a thread this call did not see running beside it."""
        with self._lock:
            if self._timer is not None and self._thread is None:
                self._stop.set()
                self._timer.cancel()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread() and thread.is_alive():
            self._stop.set()
            thread.join()

    def join(self, timeout: float | None = None) -> bool:
        """Wait (up to ``timeout`` seconds) for the warm-up to end on its own; True when it has ended."""
        timer = self._timer
        if timer is not None and timer is not threading.current_thread():
            timer.join(timeout)
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return thread is not None and not thread.is_alive()

    def stop(self) -> None:
        """Ask the warm-up to end after its current step (the server is exiting: the interpreter's exit then waits
        for that step only)."""
        self._stop.set()
        if self._timer is not None:
            self._timer.cancel()


BACKGROUND = Background()  # the process's: started by warm_after_handshake, waited for by every tool call


HANDSHAKE = frozenset({"initialize", "server/discover"})  # the first request of a legacy / a 2026-era client


def warm_after_handshake(server: Any, background: Background = BACKGROUND) -> None:
    """Start ``background`` on the first message ``server`` (an MCPServer) receives after the handshake: a legacy
    client's ``notifications/initialized``, a 2026-era client's first request after ``server/discover``. The
    handshake's answer is then written already, without a thread competing with it for the GIL."""

    async def start_after_handshake(ctx: Any, call_next: Any) -> Any:
        if ctx.method not in HANDSHAKE:
            background.start_later(delay_s())
        return await call_next(ctx)

    server.middleware.append(start_after_handshake)
