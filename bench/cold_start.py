"""Cold start: `gpu-advisor --version`, `import gpu_advisor`, and time until `gpu-advisor serve` (stdio) answers
`initialize` - each a fresh process, median of --n runs (target <= 1 s). Also the SDK's own import, the floor
under `initialize` (mcp 2.3 builds ~500 pydantic models of three protocol versions at import; timed, like
`initialize`, to the process's first line of output, so not its exit), run in alternation
with the server so that both see the same machine speed: "initialize - SDK import" is the median of the pairs'
differences (what gpu-advisor adds). And the time to the first answer: the same server process, after answering
`initialize`, is sent `notifications/initialized` and one `recommend_gpu_config` call; the time from spawning it
to that answer includes what the first call imports and loads (the engine, the knowledge base). And as a client that
a person or a model drives: the handshake, `tools/list` (timed from its request), then a pause of --pause seconds
(the client waiting for its user or its model) before the same call, timed from its request. And one answer at
the terminal, start to exit: `gpu-advisor recommend --workload examples/cityscapes_deeplabv3plus.yaml` and
`gpu-advisor ask --no-input` with the seed question.

Issue 23's ratio, `initialize` / `import mcp`, from --pairs alternated pairs of fresh processes on the same
interpreter (the order flips every pair, ABBA, so a drift of the machine's speed within a pair cancels): each pair's
wall-time ratio and CPU-time ratio (the child's user + system CPU read from /proc when its line arrives), reported as
the median with the quartiles and the extremes, and the CPU share each child got (its CPU / its wall time: below 1 the
machine was busy with something else, or the process waited).

    python bench/cold_start.py [--n 7] [--pairs 15] [--pause 3] [--json bench/out/cold_start.json]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
ROOT = Path(__file__).resolve().parents[1]
CLI_RECOMMEND = ["recommend", "--workload", str(ROOT / "examples" / "cityscapes_deeplabv3plus.yaml"), "--lang", "en"]
CLI_ASK = ["ask", "--no-input", "用 DeepLabV3+ 在 Cityscapes 上训练语义分割，1024x1024，需要什么 GPU？"]
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
FIRST_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "recommend_gpu_config",
                         "arguments": {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024],
                                       "batch_size_per_gpu": 8, "lang": "en"}}}


def command() -> list[str]:
    script = Path(sys.executable).parent / "gpu-advisor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]


def time_run(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    return time.perf_counter() - t0


def time_to_line(argv: list[str], timeout: float = 60.0) -> float:
    """Seconds until the process writes its first line (its exit, which frees what it loaded, is not counted)."""
    return timed_line(argv, timeout)[0]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process, from /proc (NaN where /proc is not there)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def timed_line(argv: list[str], timeout: float = 60.0, send: bytes | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of a fresh process until it writes its first line, after ``send`` on its stdin if given; the
    CPU is read while the process is still alive (its exit is not counted)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if send is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        if send is not None and proc.stdin:
            proc.stdin.write(send)
            proc.stdin.flush()
        assert proc.stdout
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"no output from {argv}")
        line = proc.stdout.readline()
        wall, cpu = time.perf_counter() - t0, cpu_s(proc.pid)
        if send is not None:
            assert json.loads(line)["result"]["serverInfo"]["name"] == "gpu-advisor", line[:300]
        return wall, cpu
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


SDK_IMPORT = "import mcp.server.mcpserver; print('imported', flush=True)"


def compile_package() -> None:
    """Byte-compile gpu_advisor's sources (into __pycache__, ignored by git), as installing a wheel does: where
    PYTHONDONTWRITEBYTECODE=1 is set (some shells and CI images), an editable install never writes bytecode, so every
    start would compile the server's modules from source (about 30 ms of `initialize` here) while the SDK, installed,
    loads its bytecode."""
    import compileall
    import importlib

    for name in ("gpu_advisor", "gpu_advisor.server", "gpu_advisor.cli", "gpu_advisor.knowledge", "gpu_advisor.prompts"):
        for path in importlib.import_module(name).__path__:
            compileall.compile_dir(path, quiet=1)


def initialize_ratio(pairs: int) -> dict[str, Any]:
    """`gpu-advisor serve` (stdio) answering `initialize` (its warm-up starts only after the handshake, so not here),
    against `import mcp.server.mcpserver` on the same interpreter, in ``pairs`` alternated pairs."""
    init_line = (json.dumps(INIT) + "\n").encode()
    sdk_runs: list[tuple[float, float]] = []
    init_runs: list[tuple[float, float]] = []
    for i in range(pairs):
        first, second = ("sdk", "init") if i % 2 == 0 else ("init", "sdk")
        for which in (first, second):
            if which == "sdk":
                sdk_runs.append(timed_line([sys.executable, "-c", SDK_IMPORT]))
            else:
                init_runs.append(timed_line([*command(), "serve"], send=init_line))

    def spread(values: list[float]) -> dict[str, float]:
        q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
        return {"median": round(statistics.median(values), 3), "q1": round(q[0], 3), "q3": round(q[2], 3),
                "min": round(min(values), 3), "max": round(max(values), 3)}

    wall = [i[0] / s[0] for s, i in zip(sdk_runs, init_runs)]
    cpu = [i[1] / s[1] for s, i in zip(sdk_runs, init_runs) if s[1] > 0]
    return {"pairs": pairs, "ratio_wall": spread(wall), "ratio_cpu": spread(cpu) if cpu else None,
            "sdk_import_s": spread([s[0] for s in sdk_runs]), "initialize_s": spread([i[0] for i in init_runs]),
            "sdk_import_cpu_s": spread([s[1] for s in sdk_runs]), "initialize_cpu_s": spread([i[1] for i in init_runs]),
            "cpu_share": {"sdk_import": round(statistics.median(s[1] / s[0] for s in sdk_runs), 3),
                          "initialize": round(statistics.median(i[1] / i[0] for i in init_runs), 3)}}


def _reply(proc: subprocess.Popen, t0: float, timeout: float) -> tuple[float, dict[str, Any]]:
    assert proc.stdout
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise TimeoutError("no answer from the server")
    line = proc.stdout.readline()
    return time.perf_counter() - t0, json.loads(line)


@contextmanager
def _server() -> Iterator[subprocess.Popen]:
    """A fresh `gpu-advisor serve` (stdio), closed and reaped at the end."""
    proc = subprocess.Popen([*command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.stdin.close() if proc.stdin else None
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _send(proc: subprocess.Popen, *messages: dict[str, Any]) -> float:
    """Write the messages as lines; returns the time they were sent."""
    assert proc.stdin
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    proc.stdin.flush()
    return time.perf_counter()


def _answered(reply: dict[str, Any]) -> None:
    assert reply["id"] == 2 and not reply["result"].get("isError"), str(reply)[:300]


def time_server(timeout: float = 60.0) -> tuple[float, float]:
    """Spawn `gpu-advisor serve`: seconds until it answers initialize, and until it answers the first tool call."""
    t0 = time.perf_counter()
    with _server() as proc:
        _send(proc, INIT)
        initialized, reply = _reply(proc, t0, timeout)
        assert reply["result"]["serverInfo"]["name"] == "gpu-advisor", reply
        _send(proc, INITIALIZED, FIRST_CALL)
        answered, reply = _reply(proc, t0, timeout)
        _answered(reply)
        return initialized, answered


def time_paused_client(pause: float, timeout: float = 60.0) -> tuple[float, float]:
    """Spawn `gpu-advisor serve`, shake hands, list the tools, wait ``pause`` seconds, call recommend_gpu_config:
    seconds from the tools/list request to its answer, and from the call to its answer."""
    with _server() as proc:
        _reply(proc, _send(proc, INIT), timeout)
        listed, reply = _reply(proc, _send(proc, INITIALIZED, TOOLS_LIST), timeout)
        assert reply["id"] == 3 and len(reply["result"]["tools"]) == 5, str(reply)[:300]
        time.sleep(pause)
        answered, reply = _reply(proc, _send(proc, FIRST_CALL), timeout)
        _answered(reply)
        return listed, answered


def summary(runs: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(runs), 3), "min_s": round(min(runs), 3), "max_s": round(max(runs), 3)}


def median(fn: Any, n: int) -> dict[str, float]:
    return summary([fn() for _ in range(n)])


def run(n: int, pause: float = 3.0, pairs: int = 15) -> dict[str, Any]:
    compile_package()
    env_note = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    result: dict[str, Any] = {
        **env_note,
        "python_startup": median(lambda: time_run([sys.executable, "-c", "pass"]), n),
        "import_gpu_advisor": median(lambda: time_run([sys.executable, "-c", "import gpu_advisor"]), n),
        "version": median(lambda: time_run([*command(), "--version"]), n),
        "import_recommend": median(lambda: time_run([sys.executable, "-c", "from gpu_advisor import recommend"]), n),
        "cli_recommend": median(lambda: time_run([*command(), *CLI_RECOMMEND]), n),
        "cli_ask": median(lambda: time_run([*command(), *CLI_ASK]), n)}
    sdk, init, first, listed, paused = [], [], [], [], []
    for _ in range(n):  # alternated: the SDK's import and the server see the same machine speed
        sdk.append(time_to_line([sys.executable, "-c", "import mcp.server.mcpserver; print('imported', flush=True)"]))
        initialized, answered = time_server()
        init.append(initialized)
        first.append(answered)
        tools_list, call = time_paused_client(pause)
        listed.append(tools_list)
        paused.append(call)
    result["initialize_ratio"] = initialize_ratio(pairs)
    result.update(import_mcp_server=summary(sdk), stdio_initialize=summary(init),
                  initialize_minus_sdk=summary([i - s for i, s in zip(init, sdk)]), first_answer=summary(first),
                  tools_list_after_handshake=summary(listed), first_call_after_pause=summary(paused), pause_s=pause)
    return result


def table(r: dict[str, Any]) -> str:
    lines = [f"cold start (fresh process, median of runs; Python {r['python']}, {r['cpus']} CPUs)",
             f"{'what':<44} {'median s':>9} {'min s':>7} {'max s':>7}"]
    for key, label in [("python_startup", "python -c pass (interpreter alone)"),
                       ("import_gpu_advisor", "import gpu_advisor"), ("version", "gpu-advisor --version"),
                       ("import_recommend", "from gpu_advisor import recommend"),
                       ("cli_recommend", "gpu-advisor recommend (one answer, Markdown)"),
                       ("cli_ask", "gpu-advisor ask --no-input (one question)"),
                       ("import_mcp_server", "import mcp.server.mcpserver (the SDK alone)"),
                       ("stdio_initialize", "gpu-advisor serve: answer to initialize"),
                       ("initialize_minus_sdk", "  initialize - SDK import (paired runs)"),
                       ("first_answer", "  first recommend_gpu_config answered"),
                       ("tools_list_after_handshake", "  tools/list right after the handshake"),
                       ("first_call_after_pause", f"  first call {r['pause_s']:g} s after tools/list")]:
        s = r[key]
        lines.append(f"{label:<44} {s['median_s']:>9.3f} {s['min_s']:>7.3f} {s['max_s']:>7.3f}")
    q = r["initialize_ratio"]
    w, c = q["ratio_wall"], q["ratio_cpu"] or {}
    lines.append(f"initialize / import mcp, {q['pairs']} alternated pairs: {w['median']}x wall (quartiles {w['q1']}-{w['q3']}, "
                 f"range {w['min']}-{w['max']}), {c.get('median')}x CPU (quartiles {c.get('q1')}-{c.get('q3')}); CPU share "
                 f"{q['cpu_share']['initialize']} / {q['cpu_share']['sdk_import']} of one CPU (target <= 1.1x)")
    lines.append("targets: --version and initialize <= 1 s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=7)
    parser.add_argument("--pairs", type=int, default=15, help="alternated pairs for initialize / import mcp")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between tools/list and the first call")
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "cold_start.json")
    args = parser.parse_args(argv)
    result = run(args.n, args.pause, max(1, args.pairs))
    print(table(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
