"""Cold start: `gpu-advisor --version`, `import gpu_advisor`, and time until `gpu-advisor serve` (stdio) answers
`initialize` - each a fresh process, median of --n runs (target <= 1 s). Also the SDK's own import, the floor
under `initialize` (mcp 2.3 builds ~500 pydantic models of three protocol versions at import).

    python bench/cold_start.py [--n 7] [--json bench/out/cold_start.json]
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
from pathlib import Path
from typing import Any

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}


def command() -> list[str]:
    script = Path(sys.executable).parent / "gpu-advisor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]


def time_run(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    return time.perf_counter() - t0


def time_initialize(timeout: float = 60.0) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen([*command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdin and proc.stdout
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError("no answer to initialize")
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - t0
        assert json.loads(line)["result"]["serverInfo"]["name"] == "gpu-advisor", line[:200]
        return elapsed
    finally:
        proc.stdin.close() if proc.stdin else None
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def median(fn: Any, n: int) -> dict[str, float]:
    runs = [fn() for _ in range(n)]
    return {"median_s": round(statistics.median(runs), 3), "min_s": round(min(runs), 3), "max_s": round(max(runs), 3)}


def run(n: int) -> dict[str, Any]:
    env_note = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    return {**env_note,
            "python_startup": median(lambda: time_run([sys.executable, "-c", "pass"]), n),
            "import_gpu_advisor": median(lambda: time_run([sys.executable, "-c", "import gpu_advisor"]), n),
            "version": median(lambda: time_run([*command(), "--version"]), n),
            "import_recommend": median(lambda: time_run([sys.executable, "-c", "from gpu_advisor import recommend"]), n),
            "import_mcp_server": median(lambda: time_run([sys.executable, "-c", "import mcp.server.mcpserver"]), n),
            "stdio_initialize": median(time_initialize, n)}


def table(r: dict[str, Any]) -> str:
    lines = [f"cold start (fresh process, median of runs; Python {r['python']}, {r['cpus']} CPUs)",
             f"{'what':<44} {'median s':>9} {'min s':>7} {'max s':>7}"]
    for key, label in [("python_startup", "python -c pass (interpreter alone)"),
                       ("import_gpu_advisor", "import gpu_advisor"), ("version", "gpu-advisor --version"),
                       ("import_recommend", "from gpu_advisor import recommend"),
                       ("import_mcp_server", "import mcp.server.mcpserver (the SDK alone)"),
                       ("stdio_initialize", "gpu-advisor serve: answer to initialize")]:
        s = r[key]
        lines.append(f"{label:<44} {s['median_s']:>9.3f} {s['min_s']:>7.3f} {s['max_s']:>7.3f}")
    lines.append("targets: --version and initialize <= 1 s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=7)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "cold_start.json")
    args = parser.parse_args(argv)
    result = run(args.n)
    print(table(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
