"""Load on the streamable HTTP server over loopback: C concurrent clients for S seconds, 0 errors expected,
server memory sampled every second; targets: >= 300 requests/s on 2 cores, 0 errors, bounded memory, and server CPU
per request <= 1.3x the in-process CPU of the same call mix.

    python bench/http_load.py [--clients 64] [--seconds 30] [--workers 2] [--slices 6] [--max-requests 200000]
                              [--json bench/out/http_load.json]

Starts `gpu-advisor serve --transport http --workers W` on 127.0.0.1 (a free port), then plain asyncio clients
(keep-alive HTTP/1.1, no extra packages) post JSON-RPC tools/call requests in a mix of all five tools until the
time or the request cap is reached. An error is anything but HTTP 200 with a JSON-RPC result that is not a tool
error. Loopback only: the host is fixed to 127.0.0.1.

The run is cut into slices, interleaved so that every figure sees the same machine speed (this VM's drifts by up to
1.8x within minutes): a slice of load as a handshake-era client sends it (no protocol header: the SDK's stateless
transport, one per request), a slice of the same calls as a 2026-07-28 client sends them (the `MCP-Protocol-Version`,
`Mcp-Method` and `Mcp-Name` headers and the `_meta` envelope, what the SDK's own client sends in its default
mode="auto": the SDK's single-exchange path), and between them the same call mix in this process (the tool as the
server runs it and the JSON encode of its result, no HTTP, no SDK), what the server's CPU per request is compared
with. The client connections are opened anew for each slice (64 connects per slice of a few hundred requests).

The load generator runs on the same cores as the server, so it is kept cheap (requests pre-encoded, a byte
check of each answer and a full JSON parse of every 50th) and its CPU is reported: the client's share of all CPU
time used during the load, and the server's CPU per request (all worker processes; the client's CPU is not in it).
Server memory: RSS of the main process and the PSS (proportional set size, shared pages counted once) of all its
processes.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
MIX: list[tuple[str, dict[str, Any]]] = [
    ("recommend_gpu_config", {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024], "lang": "en"}),
    ("recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "lang": "zh"}),
    ("recommend_gpu_config", {"task": "object_detection", "model": "Mask R-CNN", "batch_size_per_gpu": 4}),
    ("estimate_memory", {"task": "llm_finetune", "model": "Qwen2.5 7B", "lang": "en"}),
    ("list_instance_types", {"gpu": "L20", "region": "cn-hangzhou"}),
    ("explain_rule", {"rule_id": "NET-MULTINODE", "lang": "en"}),
    ("ask", {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16"}),
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def tree(pid: int) -> list[int]:
    """The server process and its worker processes (children)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as children:
            return [pid, *(int(x) for x in children.read().split())]
    except OSError:
        return [pid]


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of these processes."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def pss_mb(pids: list[int]) -> float:
    """Proportional set size of these processes together (pages shared by forked workers counted once)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
                total += next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
        except (OSError, StopIteration, ValueError):
            return float("nan")
    return total / 1024


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def start_server(port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    """Start the server and wait until its port accepts connections (it opens only after the warm-up)."""
    script = Path(sys.executable).parent / "gpu-advisor"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    proc = subprocess.Popen([*cmd, "serve", "--transport", "http", "--host", HOST, "--port", str(port),
                             "--workers", str(workers)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    body = b""
    while True:  # chunked
        size = int((await reader.readline()).strip() or b"0", 16)
        if size == 0:
            await reader.readline()
            return status, body
        body += await reader.readexactly(size)
        await reader.readline()


ERAS = ("handshake", "2026-07-28")  # the protocol eras a slice of load speaks (module docstring)
MODERN_VERSION = "2026-07-28"


def encode_requests(port: int, era: str = "handshake") -> list[tuple[bytes, bytes, bytes]]:
    """Per mix entry: the extra header lines, and the body bytes before and after the JSON-RPC id (the id is the only
    varying part). A 2026-07-28 request carries what the SDK client stamps on a tools/call in that era."""
    out = []
    for name, args in MIX:
        params: dict[str, Any] = {"name": name, "arguments": args}
        headers = b""
        if era == MODERN_VERSION:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                               "io.modelcontextprotocol/clientInfo": {"name": "http_load", "version": "1"},
                               "io.modelcontextprotocol/clientCapabilities": {}}
            headers = (f"MCP-Protocol-Version: {MODERN_VERSION}\r\nMcp-Method: tools/call\r\n"
                       f"Mcp-Name: {name}\r\n").encode()
        head, tail = json.dumps({"jsonrpc": "2.0", "id": 999_999_999, "method": "tools/call",
                                 "params": params}).split("999999999")
        out.append((headers, head.encode(), tail.encode()))
    return out


def succeeded(status: int, payload: bytes, full: bool) -> bool:
    """HTTP 200 and a result that is not a tool error; ``full`` parses the JSON, else a byte check (inside JSON
    strings quotes are escaped, so an unescaped `"isError":false` is the result's own key)."""
    if status != 200:
        return False
    if full:
        return json.loads(payload).get("result", {}).get("isError", True) is False
    return b'"isError":false' in payload and payload.startswith(b'{"jsonrpc":"2.0","id":')


async def client(port: int, stop_at: float, budget: list[int], ids: Any, stats: dict[str, Any],
                 templates: list[tuple[bytes, bytes, bytes]]) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    prefix = f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n" \
             "Accept: application/json, text/event-stream\r\n".encode()
    try:
        while time.monotonic() < stop_at and budget[0] > 0:
            budget[0] -= 1
            rid = next(ids)
            headers, head, tail = templates[rid % len(templates)]
            body = b"%s%d%s" % (head, rid, tail)
            request = b"%s%sContent-Length: %d\r\n\r\n%s" % (prefix, headers, len(body), body)
            t0 = time.perf_counter()
            try:
                writer.write(request)
                await writer.drain()
                status, payload = await asyncio.wait_for(read_response(reader), timeout=120)
                ok = succeeded(status, payload, full=rid % 50 == 0)
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
                ok, status = False, f"{type(exc).__name__}"
                writer.close()
                reader, writer = await asyncio.open_connection(HOST, port)
            stats["latency_ms"].append((time.perf_counter() - t0) * 1e3)
            stats["requests"] += 1
            if not ok:
                stats["errors"] += 1
                stats["error_kinds"][str(status)] = stats["error_kinds"].get(str(status), 0) + 1
    finally:
        writer.close()


async def load_slice(port: int, pids: list[int], clients: int, seconds: float, budget: list[int], ids: Any,
                     stats: dict[str, Any], templates: list[tuple[bytes, bytes, bytes]]) -> tuple[float, float, int]:
    """One slice of load: (server CPU s, load generator CPU s, requests)."""
    stop_at = time.monotonic() + seconds
    requests0 = stats["requests"]
    server_cpu0, client_cpu0 = cpu_s(pids), own_cpu_s()
    await asyncio.gather(*(client(port, stop_at, budget, ids, stats, templates) for _ in range(clients)))
    return cpu_s(pids) - server_cpu0, own_cpu_s() - client_cpu0, stats["requests"] - requests0


async def load(port: int, pid: int, clients: int, seconds: float, max_requests: int, slices: int = 6,
               in_process: Any = None) -> dict[str, Any]:
    """``slices`` rounds, each: a slice of load per era (ERAS) and the in-process call mix between them."""
    stats: dict[str, Any] = {"requests": 0, "errors": 0, "error_kinds": {}, "latency_ms": [], "rss_mb": [],
                             "pss_mb": []}
    budget, ids = [max_requests], itertools.count(1)
    pids = tree(pid)
    per_slice = seconds / (slices * len(ERAS))
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            stats["rss_mb"].append(rss_mb(pid))
            stats["pss_mb"].append(pss_mb(pids))
            try:
                await asyncio.wait_for(done.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    eras: dict[str, dict[str, Any]] = {era: {"server_cpu_s": 0.0, "client_cpu_s": 0.0, "requests": 0,
                                             "elapsed_s": 0.0, "slices": [], "templates": encode_requests(port, era)}
                                       for era in ERAS}
    inproc: list[float] = []
    sampler = asyncio.create_task(sample())
    t0 = time.monotonic()
    for _ in range(slices):
        for era, e in eras.items():
            if budget[0] <= 0:
                break
            inproc.append(in_process() if in_process else float("nan"))
            started = time.monotonic()
            server_s, client_s, n = await load_slice(port, pids, clients, per_slice, budget, ids, stats, e["templates"])
            e["elapsed_s"] += time.monotonic() - started
            e["server_cpu_s"] += server_s
            e["client_cpu_s"] += client_s
            e["requests"] += n
            if n:
                e["slices"].append((len(inproc) - 1, server_s, n))
    inproc.append(in_process() if in_process else float("nan"))
    for e in eras.values():  # each slice against the in-process figures just before and just after it
        e["slice_ratios"] = [1e3 * server_s / n / ((inproc[i] + inproc[i + 1]) / 2) for i, server_s, n in e.pop("slices")]
    done.set()
    await sampler
    stats["elapsed_s"] = time.monotonic() - t0
    stats["load_s"] = sum(e["elapsed_s"] for e in eras.values())
    stats["server_cpu_s"] = sum(e["server_cpu_s"] for e in eras.values())
    stats["client_cpu_s"] = sum(e["client_cpu_s"] for e in eras.values())
    stats["server_processes"] = len(pids)
    stats["eras"] = eras
    stats["in_process_ms"] = inproc
    return stats


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def in_process_cpu_ms(rounds: int) -> float:
    """CPU ms per call of the same mix in this process: the tool as the server runs it (server/warmup.run_tool) and
    the JSON encode of its result, no HTTP, no SDK; what the server's CPU per request is compared with."""
    import pydantic_core

    from gpu_advisor.server.warmup import run_tool

    t0 = time.process_time()
    for _ in range(rounds):
        for name, args in MIX:
            pydantic_core.to_json(run_tool(name, args).model_dump(by_alias=True, mode="json", exclude_none=True))
    return 1e3 * (time.process_time() - t0) / (rounds * len(MIX))


def warm_in_process() -> None:
    """Load once before timing what the server's warm-up loads (server/warmup.py)."""
    from gpu_advisor.server.warmup import run_tool

    for name, args in MIX:
        run_tool(name, args)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run(clients: int, seconds: float, max_requests: int, workers: int = 1, slices: int = 6) -> dict[str, Any]:
    warm_in_process()
    rounds = 6  # about 0.15 s of in-process work between two slices of load
    port = free_port()
    proc = start_server(port, workers)
    try:
        time.sleep(0.2)  # forked workers: let each one enter accept()
        idle, idle_pss = rss_mb(proc.pid), pss_mb(tree(proc.pid))
        stats = asyncio.run(load(port, proc.pid, clients, seconds, max_requests, slices,
                                 in_process=lambda: in_process_cpu_ms(rounds)))
        after, after_pss = rss_mb(proc.pid), pss_mb(tree(proc.pid))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    inproc_ms = statistics.fmean(stats["in_process_ms"])
    lat = sorted(stats["latency_ms"]) or [0.0]
    rss = [x for x in stats["rss_mb"] if x == x] or [float("nan")]
    pss = [x for x in stats["pss_mb"] if x == x] or [float("nan")]
    used = stats["server_cpu_s"] + stats["client_cpu_s"]
    eras = {}
    for era, e in stats["eras"].items():
        per_request = 1e3 * e["server_cpu_s"] / max(1, e["requests"])
        eras[era] = {"requests": e["requests"], "server_cpu_s": round(e["server_cpu_s"], 2),
                     "server_cpu_ms_per_request": round(per_request, 2),
                     "ratio_server_to_in_process_cpu": round(per_request / inproc_ms, 2),
                     "slice_ratio_range": [round(min(e["slice_ratios"], default=float("nan")), 2),
                                           round(max(e["slice_ratios"], default=float("nan")), 2)],
                     "req_per_s": round(e["requests"] / max(e["elapsed_s"], 1e-9), 1),
                     "client_cpu_share": round(e["client_cpu_s"] / (e["server_cpu_s"] + e["client_cpu_s"]), 3)
                     if e["server_cpu_s"] + e["client_cpu_s"] else None,
                     "cpu_busy": round((e["server_cpu_s"] + e["client_cpu_s"]) /
                                       (max(e["elapsed_s"], 1e-9) * (os.cpu_count() or 1)), 3)}
    legacy = eras["handshake"]
    return {"clients": clients, "workers": workers, "cpus": os.cpu_count(), "slices": slices,
            "seconds": round(stats["load_s"], 1), "requests": stats["requests"],
            "errors": stats["errors"], "error_kinds": stats["error_kinds"],
            "req_per_s": round(stats["requests"] / stats["load_s"], 1),
            "p50_ms": round(lat[len(lat) // 2], 1), "p99_ms": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
            "mean_ms": round(statistics.fmean(lat), 1), "server_rss_idle_mb": round(idle, 1),
            "server_rss_third_mb": round(rss[len(rss) // 3], 1), "server_rss_max_mb": round(max(rss), 1),
            "server_rss_end_mb": round(after, 1), "server_processes": stats["server_processes"],
            "server_pss_idle_mb": round(idle_pss, 1), "server_pss_third_mb": round(pss[len(pss) // 3], 1),
            "server_pss_max_mb": round(max(pss), 1), "server_pss_end_mb": round(after_pss, 1),
            "server_cpu_s": round(stats["server_cpu_s"], 2), "client_cpu_s": round(stats["client_cpu_s"], 2),
            "server_cpu_ms_per_request": legacy["server_cpu_ms_per_request"],
            "in_process_cpu_ms_per_call": round(inproc_ms, 2),
            "in_process_cpu_ms_range": [round(min(stats["in_process_ms"]), 2), round(max(stats["in_process_ms"]), 2)],
            "ratio_server_to_in_process_cpu": legacy["ratio_server_to_in_process_cpu"],
            "eras": eras,
            "client_cpu_share": round(stats["client_cpu_s"] / used, 3) if used else None,
            "cpu_busy": round(used / (stats["load_s"] * (os.cpu_count() or 1)), 3)}


def table(r: dict[str, Any]) -> str:
    lines = [
        f"HTTP load: {r['clients']} clients for {r['seconds']} s on loopback (tool mix of all five tools), "
        f"{r['workers']} server worker process(es), {r['cpus']} CPUs shared with the load generator; "
        f"{r['slices']} rounds of interleaved slices",
        f"requests {r['requests']}, errors {r['errors']} {r['error_kinds'] or ''}, {r['req_per_s']} req/s "
        f"(target >= 300), latency p50 {r['p50_ms']} ms / p99 {r['p99_ms']} ms",
        f"CPU: server {r['server_cpu_s']} s, load generator {r['client_cpu_s']} s = "
        f"{100 * (r['client_cpu_share'] or 0):.1f}% of the CPU used; all CPUs {100 * r['cpu_busy']:.0f}% busy with these two",
        f"in-process CPU for the same call mix (tool + JSON encode), between the slices: {r['in_process_cpu_ms_per_call']} ms "
        f"per call (range {r['in_process_cpu_ms_range'][0]}-{r['in_process_cpu_ms_range'][1]})"]
    for era, e in r["eras"].items():
        lo, hi = e["slice_ratio_range"]
        lines.append(f"server CPU per request / in-process CPU, {era + ' client':<18}: {e['ratio_server_to_in_process_cpu']}x "
                     f"({e['server_cpu_ms_per_request']} ms per request, slices {lo}-{hi}x; {e['req_per_s']} req/s; "
                     f"CPU share: server {100 * (1 - (e['client_cpu_share'] or 0)):.0f}% of what the two used, "
                     f"all CPUs {100 * e['cpu_busy']:.0f}% busy) (target <= 1.3x)")
    lines += [
        f"server RSS (main process): idle {r['server_rss_idle_mb']} MB, at 1/3 of the run {r['server_rss_third_mb']} MB, "
        f"max {r['server_rss_max_mb']} MB, end {r['server_rss_end_mb']} MB",
        f"server PSS ({r['server_processes']} processes): idle {r['server_pss_idle_mb']} MB, at 1/3 "
        f"{r['server_pss_third_mb']} MB, max {r['server_pss_max_mb']} MB, end {r['server_pss_end_mb']} MB"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=2, help="server worker processes (default 2: one per core "
                        "of the 2-core target machine)")
    parser.add_argument("--slices", type=int, default=6, help="rounds of interleaved slices (each: one slice of load "
                        "per protocol era, the in-process call mix between them)")
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "http_load.json")
    args = parser.parse_args(argv)
    if not (1 <= args.clients <= 256 and 0 < args.seconds <= 600 and 1 <= args.workers <= 16 and 1 <= args.slices <= 100):
        parser.error("--clients 1-256, --seconds up to 600, --workers 1-16, --slices 1-100")
    result = run(args.clients, args.seconds, args.max_requests, args.workers, args.slices)
    print(table(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
