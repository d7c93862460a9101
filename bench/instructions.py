"""Instructions per answer, counted by valgrind: the latency figures without the machine's speed in them.

    python bench/instructions.py [--n 200] [--cache-sim] [--json bench/out/instructions.json]

The 2-CPU VMs this project is measured on change speed by up to 1.8x within minutes, so two latency runs of the
same code can differ more than the change being measured. Instructions executed do not drift: with the hash seed
fixed (PYTHONHASHSEED=0 in every counted process) two runs of the same phase differed by 1,597 of 9.6 G instructions;
with random seeds they differed by 0.06 % of the process (about 0.3 % of a per-answer figure at n = 200). It is a proxy
for time, not time: it does not see cache misses or memory stalls. And valgrind counts every iteration of a
rep-prefixed string instruction as one instruction, where the CPU retires one: glibc's memset of durable-rules'
session state (4 KB index arrays, cleared with `rep stosb`) counts about 1 M per evaluation, one per byte, so the
durable-rules and recommend() figures include about 1 M that the hardware executes as a few hundred instructions.

Each phase runs in its own process under `valgrind --tool=callgrind` (no cache simulation); every process first
loads the knowledge, warms up on the latency bench's 150 other workloads and builds the facts of the n measured
workloads (bench/latency.py's mix), so the difference between a phase's count and the bare process's count, per
call, is the phase's cost:
- recommend(): the whole answer (no rendering); render(): the Markdown of the same answers (the render phase makes
  the recommend phase's calls and renders each answer in zh and en), per language;
- rules on durable-rules: the engine's evaluate() on those facts; floor: the same rules in plain Python.
`--cache-sim` then runs the bare, recommend() and floor processes again with valgrind's cache simulation and prints
first-level cache misses per 1,000 instructions for an answer and for the floor's loop (why an answer executes fewer
instructions per second than the floor). Needs valgrind on PATH (skips with a message otherwise); about 13 minutes on
2 cores at n = 200 (phases in parallel), and the cache simulation about as long again at n = 100.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PHASES = ("bare", "recommend", "render", "durable", "floor")
REPEAT = {"durable": 10, "floor": 10}  # the rules alone are short: evaluate each record 10 times


def child(phase: str, n: int) -> None:
    """The process valgrind counts: the common set-up, then ``phase``."""
    sys.path.insert(0, str(HERE))
    from latency import mixed_workloads  # the latency bench's mix

    from gpu_advisor import recommend
    from gpu_advisor.advisor import evaluate_facts, get_knowledge
    from gpu_advisor.rules.engine import PythonEngine
    from gpu_advisor.validation import workload_from_dict

    kb = get_knowledge()
    oracle = PythonEngine(list(kb.rules.active))
    for w in mixed_workloads(150, 1000):
        recommend(w).render()
    workloads = mixed_workloads(n, 7)
    facts = [evaluate_facts(workload_from_dict(w))[0].complete() for w in workloads]
    if phase == "recommend":
        for w in workloads:
            recommend(w)
    elif phase == "render":  # the recommend phase's calls, each answer then rendered in both languages
        for w in workloads:
            rec = recommend(w)
            rec.render("zh")
            rec.render("en")
    elif phase in ("durable", "floor"):
        engine = kb.engine if phase == "durable" else oracle
        for _ in range(REPEAT[phase]):
            for f in facts:
                engine.evaluate(f)


def events(phase: str, n: int, cache_sim: bool = False) -> dict[str, int]:
    """valgrind's "Collected" totals of the child process by event: Ir (instructions) alone, or with ``cache_sim``
    also the data reads and writes and the first- and last-level cache misses (Dr, Dw, I1mr, D1mr, D1mw, ...)."""
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--cache-sim={'yes' if cache_sim else 'no'}",
                           "--callgrind-out-file=/dev/null",
                           sys.executable, str(Path(__file__).resolve()), "--child", phase, "--n", str(n)],
                          capture_output=True, text=True, timeout=7200, env={**os.environ, "PYTHONHASHSEED": "0"})
    names = re.search(r"Events\s*: ([\w ]+)", done.stderr)
    found = re.search(r"Collected : ([\d ]+)", done.stderr)
    if done.returncode != 0 or not names or not found:
        raise RuntimeError(f"valgrind run of {phase!r} failed: {done.stderr[-800:]}")
    return dict(zip(names.group(1).split(), map(int, found.group(1).split())))


def count(phase: str, n: int) -> int:
    """Instructions the child process executed."""
    return events(phase, n)["Ir"]


def miss_rates(n: int) -> dict[str, dict[str, float]]:
    """First-level cache misses per 1,000 instructions of an answer and of the floor's loop (simulated caches:
    valgrind models the first level and the last level only, so a 512 KB L2 between them is not seen)."""
    phases = ("bare", "recommend", "floor")
    with ThreadPoolExecutor(max(1, min(len(phases), os.cpu_count() or 1))) as pool:
        totals = dict(zip(phases, pool.map(lambda p: events(p, n, cache_sim=True), phases)))
    out = {}
    for phase in ("recommend", "floor"):
        diff = {k: totals[phase][k] - totals["bare"][k] for k in totals["bare"]}
        out[phase] = {f"{k}_per_1000_instructions": round(1000 * diff[k] / diff["Ir"], 1) + 0.0  # no "-0.0"
                      for k in ("D1mr", "D1mw", "I1mr", "DLmr", "DLmw")}
    return out


def run(n: int) -> dict[str, Any]:
    workers = max(1, min(len(PHASES), os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        totals = dict(zip(PHASES, pool.map(lambda p: count(p, n), PHASES)))
    per_call = {"recommend": (totals["recommend"] - totals["bare"]) / n,
                "render": (totals["render"] - totals["recommend"]) / (2 * n),
                "durable_rules": (totals["durable"] - totals["bare"]) / (REPEAT["durable"] * n),
                "python_rules_floor": (totals["floor"] - totals["bare"]) / (REPEAT["floor"] * n)}
    result: dict[str, Any] = {"workloads": n, "python": sys.version.split()[0],
                              "instructions_per_call": {k: round(v) for k, v in per_call.items()},
                              "process_totals": totals}
    result["ratio_recommend_to_floor"] = round(per_call["recommend"] / per_call["python_rules_floor"], 1)
    result["ratio_durable_to_floor"] = round(per_call["durable_rules"] / per_call["python_rules_floor"], 2)
    return result


def table(r: dict[str, Any]) -> str:
    per = r["instructions_per_call"]
    lines = [f"instructions per call (valgrind callgrind, {r['workloads']} mixed workloads, Python {r['python']})"]
    for key, label in [("recommend", "recommend()"), ("render", "render() (Markdown, per language)"),
                       ("durable_rules", "rules on durable-rules"), ("python_rules_floor", "rules in plain Python (floor)")]:
        lines.append(f"  {label:<36} {per[key] / 1e6:>8.3f} M")
    lines.append(f"recommend() / floor: {r['ratio_recommend_to_floor']}x; durable-rules / floor: "
                 f"{r['ratio_durable_to_floor']}x (instructions; target for time: <= 5x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--json", type=Path, default=HERE / "out" / "instructions.json")
    parser.add_argument("--cache-sim", action="store_true",
                        help="also simulate the caches for the recommend() and floor phases (about 2x longer)")
    parser.add_argument("--child", choices=PHASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not 1 <= args.n <= 5000:
        parser.error("--n: 1-5000")
    if args.child:
        child(args.child, args.n)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: instruction counts skipped (apt install valgrind)")
        return 0
    result = run(args.n)
    print(table(result))
    if args.cache_sim:
        result["cache_misses"] = miss_rates(args.n)
        for phase, rates in result["cache_misses"].items():
            print(f"  {phase:<10} misses per 1,000 instructions: " + ", ".join(
                f"{k.split('_')[0]} {v}" for k, v in rates.items()))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
