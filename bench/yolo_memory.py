"""Ultralytics YOLO memory estimate vs public GPU_mem training logs (bench/data/ultralytics_gpu_mem.csv).

Ultralytics' progress bar prints GPU_mem = torch.cuda.memory_reserved() (yolov5 train.py and ultralytics <= 8.3.75
divide it by 1e9: GB; from ultralytics#19254 / #19256, merged 2025-02-14/15, by 2**30: GiB; the CSV's `unit` column
says which). Reserved memory is compared like with like: the estimator's allocated peak + its allocator slack
(breakdown 'allocator_slack'), without the CUDA context, which memory_reserved() does not count. Each row is the
first epoch's figure (later epochs grow with validation and fragmentation, see the rows' notes).

    python bench/yolo_memory.py          # per-row table, then median / max error of the `dev` rows
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "bench" / "data" / "ultralytics_gpu_mem.csv"
GIB = 2.0**30
UNITS = {"GB": 1e9 / GIB, "GiB": 1.0}


def rows() -> list[dict]:
    with DATA.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def measured_gib(row: dict) -> float:
    return float(row["gpu_mem"]) * UNITS[row["unit"]]


def predicted_gib(row: dict) -> float:
    from gpu_advisor import Workload, estimate_memory
    size = int(row["imgsz"])
    est = estimate_memory(Workload(task="object_detection", model=row["model"], batch_size_per_gpu=int(row["batch"]),
                                   input_size=(size, size), num_classes=int(row["num_classes"]),
                                   precision="fp16_amp" if row["amp"] == "True" else "fp32"))
    return est.allocated_peak_gib + est.breakdown.get("allocator_slack", 0.0)


def table() -> list[dict]:
    out = []
    for row in rows():
        meas, pred = measured_gib(row), predicted_gib(row)
        out.append({**row, "measured_gib": meas, "predicted_gib": pred, "error_pct": (pred / meas - 1.0) * 100.0})
    return out


def main() -> int:
    results = table()
    print(f"{'model':<9}{'nc':>4}{'imgsz':>6}{'batch':>6} {'amp':<6}{'trainer':<24}{'measured GiB':>13}{'predicted':>10}"
          f"{'error %':>9}  split")
    for r in results:
        print(f"{r['model']:<9}{r['num_classes']:>4}{r['imgsz']:>6}{r['batch']:>6} {r['amp']:<6}{r['trainer'][:23]:<24}"
              f"{r['measured_gib']:>13.2f}{r['predicted_gib']:>10.2f}{r['error_pct']:>+9.1f}  {r['split']}")
    dev = [abs(r["error_pct"]) for r in results if r["split"] == "dev"]
    under = sum(1 for r in results if r["split"] == "dev" and r["error_pct"] < -15.0)
    print(f"dev rows {len(dev)}: median |error| {statistics.median(dev):.1f} %, max {max(dev):.1f} %, "
          f"under by more than 15 %: {under}")
    print("rows marked 'apart' are not scored (see their notes: crowded scenes beyond the assumed 100 boxes per image)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
