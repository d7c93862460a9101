"""`make bench`: every speed and stability benchmark, then one table of the figures.

    python bench/run_all.py [--quick]

Runs bench/latency.py, bench/mcp_roundtrip.py, bench/cold_start.py, bench/http_load.py, the 50,000-evaluation
memory-stability test (tests/test_stability.py with GPU_ADVISOR_STABILITY_EVALS=50000) and the fuzz test with
GPU_ADVISOR_FUZZ_EXAMPLES=2000; each writes or prints its own details. `--quick` shrinks every run (smoke test).
`make bench` runs bench/memory_accuracy.py (estimator accuracy) before this.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"


def step(title: str, argv: list[str], env: dict[str, str] | None = None, timeout: int = 900) -> tuple[int, str, float]:
    print(f"\n=== {title}: {' '.join(argv)}", flush=True)
    t0 = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)
    print(done.stdout[-6000:] + done.stderr[-2000:], flush=True)
    return done.returncode, done.stdout, time.monotonic() - t0


def interpreter() -> str:
    """The Python the figures were measured on: version, the executable behind the venv, and whether it loads a
    shared libpython (pyenv's default build does; a statically linked interpreter calls its API without the PLT)."""
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:  # Linux
            linkage = "shared" if any("libpython" in line for line in maps) else "static"
    except OSError:
        linkage = "unknown"
    return f"CPython {sys.version.split()[0]}, {base}, {linkage} libpython"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    q = args.quick
    py = sys.executable
    OUT.mkdir(parents=True, exist_ok=True)
    codes: dict[str, int] = {}
    codes["latency"], _, _ = step("latency", [py, "bench/latency.py", "--n", "300" if q else "5000",
                                              "--profile", "100" if q else "500"])
    codes["mcp"], _, _ = step("MCP round trip", [py, "bench/mcp_roundtrip.py", "--n", "30" if q else "300"])
    codes["cold"], _, _ = step("cold start", [py, "bench/cold_start.py", "--n", "3" if q else "7",
                                                   "--pairs", "9" if q else "21"])
    codes["http"], _, _ = step("HTTP load", [py, "bench/http_load.py", "--seconds", "5" if q else "30"])
    evals = "5000" if q else "50000"
    codes["stability"], out, secs = step("memory stability", [py, "-m", "pytest", "-q", "-s", "-p", "no:randomly",
                                                               "tests/test_stability.py::test_rss_stable_over_engine_evaluations"],
                                         {"GPU_ADVISOR_STABILITY_EVALS": evals})
    growth = re.search(r"RSS growth over (\d+) engine evaluations: ([-\d.]+) MB", out)
    stability = {"evaluations": int(evals), "rss_growth_mb": float(growth.group(2)) if growth else None,
                 "seconds": round(secs, 1), "passed": codes["stability"] == 0}
    (OUT / "stability.json").write_text(json.dumps(stability, indent=2), encoding="utf-8")
    examples = "200" if q else "2000"
    codes["fuzz"], _, secs = step("fuzz", [py, "-m", "pytest", "-q", "tests/test_fuzz_workloads.py"],
                                  {"GPU_ADVISOR_FUZZ_EXAMPLES": examples, "GPU_ADVISOR_FUZZ_SEED": str(int(time.time()))})
    fuzz = {"examples": int(examples), "passed": codes["fuzz"] == 0, "seconds": round(secs, 1)}

    lat = json.loads((OUT / "latency.json").read_text())
    mcp = json.loads((OUT / "mcp_roundtrip.json").read_text())
    cold = json.loads((OUT / "cold_start.json").read_text())
    http = json.loads((OUT / "http_load.json").read_text())
    rows = [
        ("interpreter", interpreter(), ""),
        ("recommend() p50 / p99", f"{lat['recommend']['p50_ms']} / {lat['recommend']['p99_ms']} ms "
         f"(CPU got: {lat['cpu_share']['main_pass']} of one)", "p50 <= 2 ms"),
        ("rules in plain Python (floor) p50 / p99",
         f"{lat['python_rules_floor']['p50_ms']} / {lat['python_rules_floor']['p99_ms']} ms", ""),
        ("recommend() / floor (p50)", f"{lat['ratio_p50_to_floor']}x", "<= 5x"),
        ("rules on durable-rules p50", f"{lat['durable_rules']['p50_ms']} ms", ""),
        ("recommend() paired: durable-rules / plain-Python rules p50",
         f"{lat['recommend_paired_durable']['p50_ms']} / {lat['recommend_python_engine']['p50_ms']} ms "
         f"(CPU got: {lat['cpu_share']['main_pass']} of one)", ""),
        ("render() (Markdown) p50", f"{lat['render']['p50_ms']} ms", ""),
        ("recommend() p50 / estimate_memory() p50, same workloads, interleaved",
         f"{lat['ratio_recommend_to_estimate_p50']}x wall, {lat['ratio_recommend_to_estimate_p50_cpu']}x CPU time "
         f"(CPU got: {lat['cpu_share']['main_pass']} of one)", "<= 10x"),
        ("MCP stdio: recommend RTT / (tool work + JSON + no-op RTT), interleaved",
         f"{mcp['ratio_wire']}x wire, {mcp['ratio_validates']}x SDK client validating "
         f"(CPU got: {mcp['cpu']['share_of_one_cpu']} of {mcp['cpu']['cpus']})", "<= 1.3x / <= 1.5x"),
        (f"stdio initialize / import mcp ({cold['initialize_ratio']['pairs']} alternated pairs, median [quartiles])",
         f"{cold['initialize_ratio']['ratio_wall']['median']}x wall [{cold['initialize_ratio']['ratio_wall']['q1']}-"
         f"{cold['initialize_ratio']['ratio_wall']['q3']}], {(cold['initialize_ratio']['ratio_cpu'] or {}).get('median')}x CPU "
         f"(CPU got: {cold['initialize_ratio']['cpu_share']['initialize']} / "
         f"{cold['initialize_ratio']['cpu_share']['sdk_import']} of one)", "<= 1.1x"),
        ("gpu-advisor --version (median)", f"{cold['version']['median_s']} s", "<= 1 s"),
        ("gpu-advisor recommend / ask, one answer from a cold start (median)",
         f"{cold['cli_recommend']['median_s']} / {cold['cli_ask']['median_s']} s", ""),
        ("stdio server answers initialize (median)", f"{cold['stdio_initialize']['median_s']} s", "<= 1 s"),
        ("  initialize - SDK import (paired); first tool call answered",
         f"{cold['initialize_minus_sdk']['median_s']} s; {cold['first_answer']['median_s']} s", ""),
        (f"  tools/list after the handshake; first call {cold['pause_s']:g} s later (warmed up)",
         f"{cold['tools_list_after_handshake']['median_s']} s; {cold['first_call_after_pause']['median_s']} s", ""),
        (f"HTTP {http['clients']} clients x {http['seconds']} s, {http.get('workers', 1)} workers, {http.get('cpus')} CPUs",
         f"{http['req_per_s']} req/s, {http['errors']} errors, p50 / p99 {http['p50_ms']} / {http['p99_ms']} ms",
         ">= 300 req/s, 0 errors"),
        ("HTTP server CPU per request; load generator's CPU share",
         f"{http.get('server_cpu_ms_per_request')} ms; {100 * (http.get('client_cpu_share') or 0):.1f}%", ""),
        *((f"HTTP server CPU per request / in-process CPU, same call mix, interleaved ({era} client)",
           f"{e['ratio_server_to_in_process_cpu']}x ({e['server_cpu_ms_per_request']} / "
           f"{http.get('in_process_cpu_ms_per_call')} ms; CPU got: all CPUs {100 * (e.get('cpu_busy') or 0):.0f}% busy)",
           "<= 1.3x") for era, e in http.get("eras", {}).items()),
        ("HTTP server PSS, all processes: 1/3 -> end (max)",
         f"{http.get('server_pss_third_mb')} -> {http.get('server_pss_end_mb')} MB ({http.get('server_pss_max_mb')})",
         "bounded"),
        (f"RSS growth over {stability['evaluations']} engine evaluations", f"{stability['rss_growth_mb']} MB", "< 10 MB"),
        (f"fuzz: {fuzz['examples']} random valid workloads", "passed" if fuzz["passed"] else "FAILED", "0 failures"),
    ]
    width = max(len(r[0]) for r in rows)
    print("\n" + "=" * 100 + "\n" + f"{'figure':<{width}}  {'measured':<48}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<48}  {target}")
    (OUT / "summary.json").write_text(json.dumps({"rows": rows, "exit_codes": codes, "fuzz": fuzz,
                                                  "stability": stability}, indent=2), encoding="utf-8")
    return 0 if all(c == 0 for c in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
