"""MCP over stdio: the tool-call round trip of gpu-advisor's tools against a no-op tool on the same server.

    python bench/mcp_roundtrip.py [--n 200] [--json bench/out/mcp_roundtrip.json]

The server is gpu-advisor's own (build_server()) with one extra tool, `noop`, added in this benchmark only
(`--serve` runs it over stdio; the product never registers it). A client from the MCP SDK spawns it and times
n sequential calls of each tool, after a warm-up. Reported per call, in ms: p50 / p99 round trip; for
recommend_gpu_config also the library call alone (recommend() + render() in this process) so that
"MCP overhead" = round trip - library time can be compared with the no-op round trip.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

CALLS: dict[str, dict[str, Any]] = {
    "noop": {},
    "explain_rule": {"rule_id": "TIER-ENTRY", "lang": "en"},
    "estimate_memory": {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "lang": "en"},
    "recommend_gpu_config": {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024],
                             "batch_size_per_gpu": 8, "lang": "en"},
}


def serve() -> None:
    from gpu_advisor.server.app import build_server

    server = build_server()

    def noop() -> str:
        """Does nothing (benchmark baseline)."""
        return "ok"

    server.add_tool(noop, name="noop", description="does nothing (benchmark baseline)")
    server.run("stdio")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


async def measure(n: int, validate: bool = True) -> dict[str, Any]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    original = ClientSession.validate_tool_result
    if not validate:  # the SDK client re-validates structured results with jsonschema; time the wire alone
        async def skip(self: Any, name: str, result: Any) -> None:
            return None

        ClientSession.validate_tool_result = skip  # type: ignore[method-assign]

    params = StdioServerParameters(command=sys.executable, args=[str(Path(__file__).resolve()), "--serve"])
    out: dict[str, Any] = {}
    try:
        return await _calls(n, params, out)
    finally:
        ClientSession.validate_tool_result = original  # type: ignore[method-assign]


async def _calls(n: int, params: Any, out: dict[str, Any]) -> dict[str, Any]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import stdio_client

    with open(Path("/dev/null"), "w") as errlog, anyio.fail_after(600):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for name, args in CALLS.items():
                for _ in range(10):
                    await client.call_tool(name, args)
            for name, args in CALLS.items():
                ms, errors = [], 0
                for _ in range(n):
                    t0 = time.perf_counter()
                    result = await client.call_tool(name, args)
                    ms.append((time.perf_counter() - t0) * 1e3)
                    errors += bool(result.is_error)
                out[name] = {"n": n, "errors": errors, "p50_ms": round(pct(ms, 50), 3), "p99_ms": round(pct(ms, 99), 3),
                             "mean_ms": round(statistics.fmean(ms), 3)}
    return out


def library_ms(n: int) -> float:
    from gpu_advisor import recommend
    from gpu_advisor.server.registry import structured

    args = CALLS["recommend_gpu_config"]
    for _ in range(10):
        recommend(args).render()
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        rec = recommend(args)
        rec.render()
        structured(rec, rec.lang)  # what the tool publishes as structured content
        ms.append((time.perf_counter() - t0) * 1e3)
    return round(pct(ms, 50), 3)


def run(n: int) -> dict[str, Any]:
    import anyio

    lib = library_ms(n)
    out: dict[str, Any] = {"recommend_library_p50_ms": lib}
    for label, validate in (("client_validates", True), ("wire_only", False)):
        calls = anyio.run(measure, n, validate)
        noop = calls["noop"]["p50_ms"]
        rec = calls["recommend_gpu_config"]["p50_ms"]
        out[label] = {"calls": calls, "ratio_recommend_to_noop_p50": round(rec / noop, 2),
                      "ratio_recommend_to_library_plus_noop_p50": round(rec / (lib + noop), 2),
                      "mcp_overhead_p50_ms": round(rec - lib, 3)}
    return out


def table(r: dict[str, Any]) -> str:
    lines = ["MCP over stdio, sequential tool calls",
             f"{'tool':<24} {'p50 ms':>8} {'p99 ms':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}",
             f"{'':<24} {'(SDK client validates)':>17} {'(wire only)':>18}"]
    a, b = r["client_validates"]["calls"], r["wire_only"]["calls"]
    for name in a:
        lines.append(f"{name:<24} {a[name]['p50_ms']:>8.3f} {a[name]['p99_ms']:>8.3f} {b[name]['p50_ms']:>8.3f} "
                     f"{b[name]['p99_ms']:>8.3f} {a[name]['errors'] + b[name]['errors']:>7}")
    lines.append(f"recommend() + render() + structured content in-process: p50 {r['recommend_library_p50_ms']:.3f} ms")
    for label in ("client_validates", "wire_only"):
        x = r[label]
        lines.append(f"{label}: recommend_gpu_config / noop {x['ratio_recommend_to_noop_p50']}x; "
                     f"/ (library + noop) {x['ratio_recommend_to_library_plus_noop_p50']}x (target <= 1.5x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "mcp_roundtrip.json")
    args = parser.parse_args(argv)
    if args.serve:
        serve()
        return 0
    result = run(args.n)
    print(table(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
