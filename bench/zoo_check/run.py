"""Generalisation check: model-zoo rows that are NOT in the dev set, through the real CLI.

rows.csv holds training-memory figures copied from MMDetection / MMSegmentation metafiles and Detectron2's
MODEL_ZOO.md "train mem (GB)" column (source repo, path and commit per row) whose config names do not appear in ../shared/benchmarks/memory/{mmdet,mmseg}_dev.csv. Each row is
turned into a workload the way a user (or the held-out harness) would write it: the method name as the metafile
prints it (its collection name, e.g. "Libra R-CNN", "ISANet"), the backbone as the README prints it ("R-50",
"X-101-64x4d", "R-50-D8"), the crop or 800x1333 for detection, batch per GPU from the config name, AMP from the
name. The workloads go through `gpu-advisor estimate --jsonl` in one call.

Two passes: "as printed" (model = the metafile's method name only) and "with arch fallback" (a row that errors is
retried with the underlying architecture, e.g. "RetinaNet" for GHM, as memory_accuracy.py retries model_type).
Rows with a `framework` value are sent a third time without it ("without framework column"): the held-out harness
sends only the issue's keys, so Detectron2 must be recognised from the names alone. --no-framework drops the
column from every pass.
A fourth pass sends every MMDetection / MMSegmentation row with model = its config name and no backbone
("config name as model"): the method, backbone and variants must come from the name alone.
Prints coverage, median / p90 absolute % error of allocated_peak_gib vs measured, the share under-estimated by more
than 15 %, every error (code + message), and every row with predicted/measured < 0.85 or > 1.5.

Offline: reads rows.csv only. Usage: python bench/zoo_check/run.py [--cli PATH] [--rows FILE]
No constant of the estimator is tuned to these rows; they stand in for the held-out set.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ROWS = HERE / "rows.csv"


def read_rows(path: Path = ROWS) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def pytorch_version(run_date: str) -> str:
    """PyTorch of the run, as memory_accuracy._torch infers it: mmengine-era runs (from late 2022) -> 1.13;
    mmcv-1.x runs -> 1.8, or 1.5 before 2020-07-28."""
    if run_date >= "20220901":
        return "1.13"
    return "1.5" if run_date < "20200728" else "1.8"


def to_workload(row: dict, model: str | None = None, framework: bool = True) -> dict:
    """One rows.csv row -> the workload JSON a user would send (model defaults to the metafile's method name).

    Rows with a `framework` value (Detectron2 MODEL_ZOO.md rows: "detectron2") pass it as Workload.framework unless
    framework=False (what the held-out harness sends: the issue's keys only); their model is the config name
    ("mask_rcnn_R_50_FPN_3x", as MODEL_ZOO.md links it) and their backbone the zoo table's Name column ("R50-FPN")."""
    extra = {"framework": row["framework"]} if row.get("framework") and framework else {}
    return {**extra,
        "task": row["task"],
        "model": model or row["method"],
        "backbone": row["backbone"],
        "input_size": [int(row["input_h"]), int(row["input_w"])],
        "batch_size_per_gpu": int(row["batch_per_gpu"]),
        "num_gpus": int(row["gpus"]),
        "precision": row["precision"],
        "optimizer": row["optimizer"],   # SGD in these zoos is momentum 0.9 (mmdet/mmseg schedules, Detectron2 SOLVER.MOMENTUM): sgd_momentum
        "num_classes": int(row["num_classes"]),
        "distributed": "ddp",
        "pytorch_version": pytorch_version(row["run_date"]),
    }


def default_cli() -> list[str]:
    """The `gpu-advisor` entry point (gpu_advisor.cli:main) of the package this interpreter imports. Not the
    .venv/bin/gpu-advisor script: a venv copied from another checkout keeps that checkout's interpreter in the
    script's shebang and would run the other checkout's code."""
    return [sys.executable, "-m", "gpu_advisor.cli"]


def estimate(workloads: list[dict], cli: str | list[str] | None = None) -> list[dict]:
    """Pipe workloads through `gpu-advisor estimate --jsonl -`; one parsed answer per workload, in order."""
    stdin = "".join(json.dumps(w) + "\n" for w in workloads)
    cmd = [cli] if isinstance(cli, str) else (cli or default_cli())
    proc = subprocess.run([*cmd, "estimate", "--jsonl", "-", "--lang", "en"], input=stdin,
                          capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if len(lines) != len(workloads):
        raise RuntimeError(f"CLI answered {len(lines)} lines for {len(workloads)} workloads (rc {proc.returncode}): "
                           f"{proc.stderr[-500:]}")
    return [json.loads(ln) for ln in lines]


def score(rows: list[dict], answers: list[dict]) -> list[dict]:
    out = []
    for row, ans in zip(rows, answers):
        r = {"config": row["config"], "method": row["method"], "backbone": row["backbone"],
             "measured": float(row["measured_gb"]), "predicted": None, "error": None}
        if "memory" in ans:
            r["predicted"] = ans["memory"]["allocated_peak_gib"]
        else:
            err = ans.get("error", {})
            r["error"] = f"{err.get('code')}: {err.get('message') or err.get('text') or err}"
        out.append(r)
    return out


def summary(results: list[dict]) -> dict:
    ok = [r for r in results if r["predicted"] is not None]
    errs = sorted(abs(r["predicted"] - r["measured"]) / r["measured"] * 100 for r in ok)
    p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else float("nan")
    under = sum(1 for r in ok if r["predicted"] < 0.85 * r["measured"])
    return {"rows": len(results), "answered": len(ok), "coverage": 100 * len(ok) / max(1, len(results)),
            "median": statistics.median(errs) if errs else float("nan"), "p90": p90,
            "under15": 100 * under / max(1, len(ok))}


def run(rows: list[dict], cli: str | list[str] | None = None,
        framework: bool = True) -> tuple[list[dict], list[dict]]:
    """(as printed, with arch fallback) results."""
    first = score(rows, estimate([to_workload(r, framework=framework) for r in rows], cli))
    retry = [i for i, r in enumerate(first) if r["error"] and rows[i]["arch"] and rows[i]["arch"] != rows[i]["method"]]
    second = [dict(r) for r in first]
    if retry:
        again = score([rows[i] for i in retry],
                      estimate([to_workload(rows[i], rows[i]["arch"], framework) for i in retry], cli))
        for i, r in zip(retry, again):
            if r["predicted"] is not None:
                second[i] = dict(r, method=f"{rows[i]['method']} -> {rows[i]['arch']}")
    return first, second


def config_name_pass(rows: list[dict], cli: str | list[str] | None = None, framework: bool = True) -> list[dict]:
    """Each row sent with model = its config name and no backbone (every other field as in to_workload)."""
    work = []
    for r in rows:
        w = to_workload(r, r["config"], framework)
        del w["backbone"]
        work.append(w)
    return [dict(x, method=row["config"], backbone="-") for x, row in zip(score(rows, estimate(work, cli)), rows)]


def _print(label: str, results: list[dict]) -> None:
    s = summary(results)
    print(f"{label:<24} rows {s['rows']:>3}  answered {s['answered']:>3}  coverage {s['coverage']:5.1f} %  "
          f"median {s['median']:5.1f} %  p90 {s['p90']:5.1f} %  under>15 % {s['under15']:5.1f} %")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=None, help="gpu-advisor executable (default: python -m gpu_advisor.cli with this interpreter)")
    ap.add_argument("--rows", type=Path, default=ROWS)
    ap.add_argument("--no-framework", action="store_true",
                    help="never send the framework column (what the held-out harness sends)")
    args = ap.parse_args(argv)
    rows = read_rows(args.rows)
    first, second = run(rows, args.cli, framework=not args.no_framework)
    families = sorted({(r["source_repo"].split("/")[1], r["path"].split("/")[1] if "/" in r["path"] else r["path"])
                       for r in rows})
    print(f"{len(rows)} rows from {len(families)} metafile directories: "
          + ", ".join(f"{repo.replace('mmsegmentation', 'seg').replace('mmdetection', 'det')}/{d}" for repo, d in families))
    _print("as printed", first)
    _print("with arch fallback", second)
    for repo in sorted({r["source_repo"] for r in rows}):
        picked = [i for i, r in enumerate(rows) if r["source_repo"] == repo]
        _print(f"  {repo.split('/')[1]}", [second[i] for i in picked])
    hinted = [r for r in rows if r.get("framework")]
    bare = None
    if hinted and not args.no_framework:
        bare = run(hinted, args.cli, framework=False)[1]
        _print("  without framework column", bare)
    # model = the config name (no backbone): what a user who copy-pastes the OpenMMLab config sends
    mm = [i for i, r in enumerate(rows) if r["source_repo"].startswith("open-mmlab/")]
    named = config_name_pass([rows[i] for i in mm], args.cli, framework=not args.no_framework)
    _print("config name as model", named)
    for repo in sorted({rows[i]["source_repo"] for i in mm}):
        _print(f"  {repo.split('/')[1]}", [r for i, r in zip(mm, named) if rows[i]["source_repo"] == repo])
    print("\nerrors (as printed):")
    for r in first:
        if r["error"]:
            print(f"  {r['config']:<62} model={r['method']!r} backbone={r['backbone']!r}\n      {r['error'][:200]}")
    print("\nerrors (config name as model):")
    for r in named:
        if r["error"]:
            print(f"  {r['config']:<62}\n      {r['error'][:200]}")
    print("\nratio predicted/measured < 0.85 or > 1.5 (with arch fallback):")
    for r in second:
        if r["predicted"] is not None:
            ratio = r["predicted"] / r["measured"]
            if ratio < 0.85 or ratio > 1.5:
                print(f"  {ratio:5.2f}  {r['config']:<62} {r['method']} / {r['backbone']}  "
                      f"pred {r['predicted']:.2f} meas {r['measured']:.2f}")
    if bare:
        print("\nrows with a framework value, sent without it (with arch fallback): predicted/measured")
        for r, b in zip([second[i] for i, row in enumerate(rows) if row.get("framework")], bare):
            with_fw = f"{r['predicted'] / r['measured']:5.2f}" if r["predicted"] is not None else "  err"
            without = f"{b['predicted'] / b['measured']:5.2f}" if b["predicted"] is not None else f"  err {b['error']}"
            print(f"  {with_fw} -> {without}  {b['config']:<62} {b['method']} / {b['backbone']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
