"""Load on the streamable HTTP server over loopback: C concurrent clients for S seconds, 0 errors expected,
server memory sampled every second.

    python bench/http_load.py [--clients 64] [--seconds 30] [--max-requests 200000] [--json bench/out/http_load.json]

Starts `gpu-advisor serve --transport http` on 127.0.0.1 (a free port), then plain asyncio clients (keep-alive
HTTP/1.1, no extra packages) post JSON-RPC tools/call requests in a mix of all five tools until the time or the
request cap is reached. An error is anything but HTTP 200 with a JSON-RPC result that is not a tool error.
Loopback only: the host is fixed to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
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


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def start_server(port: int) -> subprocess.Popen[bytes]:
    script = Path(sys.executable).parent / "gpu-advisor"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    proc = subprocess.Popen([*cmd, "serve", "--transport", "http", "--host", HOST, "--port", str(port)],
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


async def client(port: int, stop_at: float, budget: list[int], ids: Any, stats: dict[str, Any]) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        while time.monotonic() < stop_at and budget[0] > 0:
            budget[0] -= 1
            rid = next(ids)
            name, args = MIX[rid % len(MIX)]
            body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                               "params": {"name": name, "arguments": args}}).encode()
            request = (f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
                       f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
            t0 = time.perf_counter()
            try:
                writer.write(request)
                await writer.drain()
                status, payload = await asyncio.wait_for(read_response(reader), timeout=120)
                ok = status == 200 and not json.loads(payload).get("result", {}).get("isError", True)
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


async def load(port: int, pid: int, clients: int, seconds: float, max_requests: int) -> dict[str, Any]:
    stats: dict[str, Any] = {"requests": 0, "errors": 0, "error_kinds": {}, "latency_ms": [], "rss_mb": []}
    stop_at = time.monotonic() + seconds
    budget, ids = [max_requests], itertools.count(1)

    async def sample() -> None:
        while time.monotonic() < stop_at and budget[0] > 0:
            stats["rss_mb"].append(rss_mb(pid))
            await asyncio.sleep(1.0)

    t0 = time.monotonic()
    await asyncio.gather(sample(), *(client(port, stop_at, budget, ids, stats) for _ in range(clients)))
    stats["elapsed_s"] = time.monotonic() - t0
    return stats


def run(clients: int, seconds: float, max_requests: int) -> dict[str, Any]:
    port = free_port()
    proc = start_server(port)
    try:
        idle = rss_mb(proc.pid)
        stats = asyncio.run(load(port, proc.pid, clients, seconds, max_requests))
        after = rss_mb(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    lat = sorted(stats["latency_ms"]) or [0.0]
    rss = [x for x in stats["rss_mb"] if x == x] or [float("nan")]
    return {"clients": clients, "seconds": round(stats["elapsed_s"], 1), "requests": stats["requests"],
            "errors": stats["errors"], "error_kinds": stats["error_kinds"],
            "req_per_s": round(stats["requests"] / stats["elapsed_s"], 1),
            "p50_ms": round(lat[len(lat) // 2], 1), "p99_ms": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
            "mean_ms": round(statistics.fmean(lat), 1), "server_rss_idle_mb": round(idle, 1),
            "server_rss_third_mb": round(rss[len(rss) // 3], 1), "server_rss_max_mb": round(max(rss), 1),
            "server_rss_end_mb": round(after, 1)}


def table(r: dict[str, Any]) -> str:
    return "\n".join([
        f"HTTP load: {r['clients']} clients for {r['seconds']} s on loopback (tool mix of all five tools)",
        f"requests {r['requests']}, errors {r['errors']} {r['error_kinds'] or ''}, {r['req_per_s']} req/s, "
        f"latency p50 {r['p50_ms']} ms / p99 {r['p99_ms']} ms",
        f"server RSS: idle {r['server_rss_idle_mb']} MB, at 1/3 of the run {r['server_rss_third_mb']} MB, "
        f"max {r['server_rss_max_mb']} MB, end {r['server_rss_end_mb']} MB"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "http_load.json")
    args = parser.parse_args(argv)
    if not (1 <= args.clients <= 256 and 0 < args.seconds <= 600):
        parser.error("--clients 1-256, --seconds up to 600")
    result = run(args.clients, args.seconds, args.max_requests)
    print(table(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
