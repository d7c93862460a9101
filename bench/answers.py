"""`make bench-answers`: the end-to-end evaluation set (tests/answers/cases.yaml) by category — how many questions
are understood (fields, the model sized, every number accounted for, refusals where due), sized (memory and the
leading option within the cited ranges) and priced sensibly (a list price, within the stated hourly budget).
xfail-marked checks (the planning half of issue 22) count as failures here: the figures say where answers stand.

Also prints the question parser's time per 1,000 characters (issue 21: linear, under 1 s at 4,000).

    python bench/answers.py [--json]
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "answers"))
from evaluate import PRICED, SIZED, UNDERSTOOD, evaluate, load_cases  # noqa: E402


def evaluation() -> dict[str, dict[str, list[int]]]:
    """{category: {group: [passed, cases with that group]}} plus an 'all' row."""
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for case in load_cases():
        res = evaluate(case)
        for cat in (case["cat"], "all"):
            row = table[cat]
            row["cases"][1] += 1
            if res.error is None and all(ok for ok, _ in res.checks.values()):
                row["cases"][0] += 1
            for group, names in (("understood", UNDERSTOOD), ("sized", SIZED), ("priced", PRICED)):
                ok = None if res.error else res.group_ok(names)
                declared = res.error is not None and any(k in case for k in names) or ok is not None
                if declared:
                    row[group][1] += 1
                    row[group][0] += int(bool(ok))
            row["tracebacks"][1] += 1
            row["tracebacks"][0] += int(res.error is not None)
    return table


def parse_speed() -> list[tuple[str, int, float]]:
    from gpu_advisor.ask.parser import parse_question
    from gpu_advisor.errors import WorkloadError

    samples = {"一": "一", "digits": "7", "zh text": "用 DeepLabV3+ R-50 训练 Cityscapes，batch 8，8卡，杭州。",
               "en text": "Fine-tune Llama 3.1 8B with LoRA on 4 GPUs, seq 4096, budget 5000 CNY. "}
    out = []
    for name, unit in samples.items():
        for n in (1000, 4000):
            text = (unit * (n // len(unit) + 1))[:n]
            start = time.perf_counter()
            try:
                parse_question(text)
            except WorkloadError:
                pass
            out.append((name, n, (time.perf_counter() - start) * 1000))
    return out


def main() -> int:
    table = evaluation()
    speed = parse_speed()
    if "--json" in sys.argv:
        print(json.dumps({"evaluation": table, "parse_ms": speed}, indent=2, default=dict))
        return 0
    cols = ("cases", "understood", "sized", "priced", "tracebacks")
    print(f"{'category':<16}" + "".join(f"{c:>14}" for c in cols))
    for cat in sorted(table, key=lambda c: (c == "all", c)):
        row = table[cat]
        print(f"{cat:<16}" + "".join(f"{row[c][0]:>7}/{row[c][1]:<6}" if row[c][1] else f"{'-':>14}" for c in cols))
    print("\nquestion parser, ms per 1,000 characters:")
    for name, n, ms in speed:
        print(f"  {name:<8} {n:>5} chars: {ms:8.1f} ms total, {ms * 1000 / n:7.1f} ms per 1,000")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
