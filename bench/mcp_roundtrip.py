"""MCP over stdio: the tool-call round trip of gpu-advisor's tools against a no-op tool on the same server.

    python bench/mcp_roundtrip.py [--n 200] [--json bench/out/mcp_roundtrip.json]

The server is gpu-advisor's own (build_server()) with one extra tool, `noop`, added in this benchmark only
(`--serve` runs it over stdio; the product never registers it). A client from the MCP SDK spawns it and times
n iterations; in each, every tool is timed three ways in rotating order: the round trip with the SDK client
validating the structured result, the round trip without that validation (wire only), and the tool's own work in
this process (the tool, plus the JSON encode and decode of its result). Reported per tool, p50 ms, and the ratio
round trip / (work + no-op round trip) - what the protocol adds beyond a call that does nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_load import cpu_s  # noqa: E402 - the sibling benchmark's /proc CPU reader

CALLS: dict[str, dict[str, Any]] = {
    "noop": {},
    "explain_rule": {"rule_id": "TIER-ENTRY", "lang": "en"},
    "estimate_memory": {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "lang": "en"},
    "recommend_gpu_config": {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024],
                             "batch_size_per_gpu": 8, "lang": "en"},
    "ask": {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16"},
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


def tool_work(name: str, args: dict[str, Any]) -> Any:
    """What the server does for one call besides the protocol: the tool (validation, answer, structured content),
    and the JSON encode of the result plus the client's decode of it."""
    import pydantic_core

    from gpu_advisor.server.warmup import run_tool

    if name == "noop":
        result: Any = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    else:
        result = run_tool(name, args).model_dump(by_alias=True, mode="json", exclude_none=True)
    return json.loads(pydantic_core.to_json(result))


def _server_pids() -> list[int]:
    import os

    try:
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children", encoding="ascii") as children:
            return [int(x) for x in children.read().split()]
    except OSError:
        return []


async def measure(n: int) -> dict[str, Any]:
    """Per iteration, in rotating order: each tool's round trip with the SDK client validating the structured
    result, the same without that validation (wire only), and the tool's work in this process. Interleaving keeps
    every figure on the same machine speed (separate blocks moved a ratio from 4.3x to 9.2x between runs)."""
    import os

    import anyio
    from mcp import Client
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    original = ClientSession.validate_tool_result

    async def skip(self: Any, name: str, result: Any) -> None:
        return None

    from mcp import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(Path(__file__).resolve()), "--serve"])
    ms: dict[str, dict[str, list[float]]] = {name: {"validates": [], "wire": [], "work": []} for name in CALLS}
    errors = 0
    try:
        with open(os.devnull, "w") as errlog, anyio.fail_after(900):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for name, args in CALLS.items():  # warm both sides
                    for _ in range(10):
                        await client.call_tool(name, args)
                        tool_work(name, args)
                pids = _server_pids()
                cpu0, own0, wall0 = cpu_s(pids), time.process_time(), time.perf_counter()
                for i in range(n):
                    for name, args in CALLS.items():
                        steps = ["validates", "wire", "work"]
                        for step in steps[i % 3:] + steps[:i % 3]:
                            t0 = time.perf_counter()
                            if step == "work":
                                tool_work(name, args)
                            else:
                                ClientSession.validate_tool_result = original if step == "validates" else skip  # type: ignore[method-assign]
                                result = await client.call_tool(name, args)
                                errors += bool(result.is_error)
                            ms[name][step].append((time.perf_counter() - t0) * 1e3)
                wall = time.perf_counter() - wall0
                cpu = {"server_s": round(cpu_s(pids) - cpu0, 2), "client_s": round(time.process_time() - own0, 2),
                       "wall_s": round(wall, 2), "cpus": os.cpu_count()}
    finally:
        ClientSession.validate_tool_result = original  # type: ignore[method-assign]
    cpu["share_of_one_cpu"] = round((cpu["server_s"] + cpu["client_s"]) / max(cpu["wall_s"], 1e-9), 2)
    calls = {name: {step: {"p50_ms": round(pct(v, 50), 3), "p99_ms": round(pct(v, 99), 3)} for step, v in d.items()}
             for name, d in ms.items()}
    return {"n": n, "errors": errors, "calls": calls, "cpu": cpu}


def run(n: int) -> dict[str, Any]:
    import anyio

    out = anyio.run(measure, n)
    noop = out["calls"]["noop"]
    for name, c in out["calls"].items():
        floor = c["work"]["p50_ms"] + noop["wire"]["p50_ms"]
        c["ratio_wire"] = round(c["wire"]["p50_ms"] / floor, 2)
        c["ratio_validates"] = round(c["validates"]["p50_ms"] / floor, 2)
    rec = out["calls"]["recommend_gpu_config"]
    out["ratio_wire"], out["ratio_validates"] = rec["ratio_wire"], rec["ratio_validates"]
    return out


def table(r: dict[str, Any]) -> str:
    lines = [f"MCP over stdio, {r['n']} iterations, each tool's three measurements interleaved per iteration "
             f"({r['errors']} tool errors)",
             f"{'tool':<22} {'SDK client p50':>14} {'wire p50':>9} {'work p50':>9} {'wire/(work+noop)':>17} "
             f"{'client/(work+noop)':>19}"]
    for name, c in r["calls"].items():
        lines.append(f"{name:<22} {c['validates']['p50_ms']:>11.3f} ms {c['wire']['p50_ms']:>6.3f} ms "
                     f"{c['work']['p50_ms']:>6.3f} ms {c['ratio_wire']:>16}x {c['ratio_validates']:>18}x")
    cpu = r["cpu"]
    lines.append(f"recommend_gpu_config: round trip / (tool work + JSON encode/decode + no-op round trip) = "
                 f"{r['ratio_wire']}x wire only (target <= 1.3x), {r['ratio_validates']}x with the SDK client "
                 f"validating (target <= 1.5x)")
    lines.append(f"CPU the benchmark got: server {cpu['server_s']} s + client {cpu['client_s']} s over {cpu['wall_s']} s "
                 f"wall = {cpu['share_of_one_cpu']} CPUs of {cpu['cpus']}")
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
