"""Where the HTTP server's CPU per request goes, by layer: a one-process server under bench/http_load.py's call mix
(one protocol era at a time), sampled by py-spy (only samples of the thread holding the GIL, so CPU, not waiting).

    python bench/http_layers.py [--era handshake|2026-07-28|both] [--seconds 15] [--clients 32] [--py-spy PATH]

py-spy is not a dependency (`pip install py-spy` into any environment; it attaches to the server by pid, which
needs ptrace permission, root or kernel.yama.ptrace_scope=0). Each sample is given to the innermost frame on its
stack that belongs to a layer: the tool as in process (any stack through ToolSpec.run: what bench/http_load.py's
in-process figure measures), our server code (the HTTP guard, the tool wrapper with its worker-thread hop and time
limit, the request checks), the SDK (its streamable HTTP transport, the runner and JSON-RPC dispatch, MCPServer's
tool layer, the types' validation and serialisation, OpenTelemetry), Starlette, uvicorn and h11; library frames
(pydantic, json, anyio, asyncio) count for the layer that called them, and what has no layer on its stack (the bare
event loop, thread start-up) is shown apart. The shares times the server's CPU per request (from /proc) give ms per
request; the in-process CPU of the same mix is measured before and after, as in bench/http_load.py.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import http_load  # noqa: E402

# (path fragment, layer): the first that matches a frame's file names its layer.
LAYERS = [
    ("server/http.py", "ours: HTTP guard (server/http.py)"),
    ("server/fastpath.py", "ours: tools/call fast path (server/fastpath.py)"),
    ("server/registry.py", "ours: tool wrapper (thread hop, time limit)"),
    ("server/protocol.py", "ours: request checks (server/protocol.py)"),
    ("server/app.py", "ours: tool lookup"), ("server/warmup.py", "ours: tool lookup"),
    ("server/resources.py", "ours: prompts/resources"),
    ("mcp/server/streamable_http", "SDK: streamable HTTP transport"),
    ("mcp/server/_streamable_http_modern", "SDK: streamable HTTP transport"),
    ("mcp/server/transport_security", "SDK: streamable HTTP transport"),
    ("mcp/shared/_context_streams", "SDK: streamable HTTP transport"),
    ("mcp/shared/inbound", "SDK: streamable HTTP transport"),
    ("mcp/server/runner", "SDK: runner, JSON-RPC dispatch"), ("mcp/shared/jsonrpc_dispatcher", "SDK: runner, JSON-RPC dispatch"),
    ("mcp/server/connection", "SDK: runner, JSON-RPC dispatch"), ("mcp/shared/_compat", "SDK: runner, JSON-RPC dispatch"),
    ("mcp/server/lowlevel", "SDK: runner, JSON-RPC dispatch"),
    ("mcp/server/mcpserver", "SDK: MCPServer tools (context, result conversion, output check)"),
    ("mcp/server/request_state", "SDK: MCPServer tools (context, result conversion, output check)"),
    ("mcp_types/", "SDK: protocol types (request validation, result serialisation)"),
    ("_otel", "SDK: OpenTelemetry spans"), ("opentelemetry/", "SDK: OpenTelemetry spans"),
    ("mcp/", "SDK: other"),
    ("starlette/", "Starlette"), ("uvicorn/", "uvicorn + h11"), ("h11/", "uvicorn + h11"),
]
ROOT_FUNCTIONS = {"asyncio_run", "Server.run", "Server.serve", "Server.main_loop", "run_http", "serve", "main",
                  "cmd_serve", "<module>", "_run_module_as_main", "_run_code", "run"}
TOOL = "tool as in process (ToolSpec.run)"
FRAME = re.compile(r"^(.*) \((.*?):\d+\)$")


def layer_of(frame: str) -> str | None:
    match = FRAME.match(frame)
    if match is None:
        return None
    function, path = match.groups()
    if function in ROOT_FUNCTIONS or path.endswith("threading.py"):
        return None
    return next((name for fragment, name in LAYERS if fragment in path), None)


def attribute(raw: str) -> collections.Counter[str]:
    """Samples per layer from py-spy's raw (collapsed) output: one ``frame;frame;... count`` line per stack."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if any(f.startswith("ToolSpec.run ") for f in frames):
            counts[TOOL] += int(count)
            continue
        name = next((n for n in map(layer_of, reversed(frames)) if n), "event loop, threads (no layer on the stack)")
        counts[name] += int(count)
    return counts


def profile_era(era: str, seconds: float, clients: int, py_spy: str) -> dict[str, object]:
    port = http_load.free_port()
    proc = http_load.start_server(port, 1)
    try:
        time.sleep(0.3)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "raw.txt"
            spy = subprocess.Popen([py_spy, "record", "-p", str(proc.pid), "-f", "raw", "-o", str(out), "-r", "250",
                                    "-d", str(int(seconds) + 2), "--nonblocking", "--gil"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1.0)
            before = http_load.in_process_cpu_ms(6)
            stats = {"requests": 0, "errors": 0, "error_kinds": {}, "latency_ms": []}
            server_s, _client_s, n = asyncio.run(http_load.load_slice(
                port, [proc.pid], clients, seconds, [10 ** 9], itertools.count(1), stats,
                http_load.encode_requests(port, era)))
            after = http_load.in_process_cpu_ms(6)
            _, err = spy.communicate(timeout=seconds + 60)
            if spy.returncode != 0 or not out.exists():
                raise RuntimeError(f"py-spy failed: {err.decode(errors='replace')[-500:]}")
            counts = attribute(out.read_text(encoding="utf-8", errors="replace"))
    finally:
        proc.terminate()
        proc.wait(10)
    per_request = 1e3 * server_s / max(1, n)
    total = sum(counts.values()) or 1
    return {"era": era, "requests": n, "errors": stats["errors"], "server_cpu_ms_per_request": round(per_request, 2),
            "in_process_cpu_ms": round((before + after) / 2, 2), "samples": total,
            "layers_ms": {name: round(per_request * c / total, 3) for name, c in counts.most_common()}}


def table(r: dict[str, object]) -> str:
    layers = r["layers_ms"]
    assert isinstance(layers, dict)
    lines = [f"{r['era']} client: {r['requests']} requests ({r['errors']} errors), server CPU {r['server_cpu_ms_per_request']} "
             f"ms per request, in-process {r['in_process_cpu_ms']} ms per call; {r['samples']} GIL samples"]
    lines += [f"  {ms:6.3f} ms  {100 * ms / r['server_cpu_ms_per_request']:5.1f} %  {name}" for name, ms in layers.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--era", choices=[*http_load.ERAS, "both"], default="both")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="the py-spy executable (default: on PATH)")
    args = parser.parse_args(argv)
    if not args.py_spy:
        parser.error("py-spy not found: pip install py-spy, or pass --py-spy PATH")
    http_load.warm_in_process()
    for era in http_load.ERAS if args.era == "both" else [args.era]:
        print(table(profile_era(era, args.seconds, args.clients, args.py_spy)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
