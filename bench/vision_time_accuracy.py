"""Vision time-estimate accuracy: predicted vs published training images/s (bench/data/dle_vision_train_throughput.csv).

The rows are NVIDIA/DeepLearningExamples' "Training performance results" (img/s per GPU count on DGX A100 80GB and
DGX-1 V100, TF32 / FP32 / mixed precision): PyTorch ConvNets (batch sizes from ConvNets/configs.yml) and Mask R-CNN
(R-50-FPN, 12 images per GPU, shorter side 800 / longer at most 1333, scored at 800x1333), each with repo + path +
commit. Predicted img/s = peak x utilisation x GPUs x scaling / train FLOPs per image, with

  * train FLOPs per image from the memory estimator (gpu_advisor.memory.estimate_memory) at the row's resolution,
  * the peak from gpu_advisor.costing.timing.peak_tflops on the catalog GPU (fp32 convolutions: TF32 where the GPU
    has it), the utilisation band from timing.utilisation_for and the scaling band from timing.scaling_for
    (DGX-1 and DGX A100 are one machine with NVLink) -- the same code path as estimate_time.

"implied util" is what the row implies: measured img/s x FLOPs per image / (the peak the row's precision ran on x
GPUs); multi-GPU rows include the scaling loss. Models the estimator does not know are listed as skipped (refused,
not estimated with a sibling's numbers).

Run: .venv/bin/python bench/vision_time_accuracy.py [path/to/csv]
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ratios import print_summary  # noqa: E402

from gpu_advisor.costing.timing import peak_tflops, scaling_for, utilisation_for
from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.memory import estimate_memory
from gpu_advisor.errors import AdvisorError
from gpu_advisor.workload import Workload

DEFAULT_CSV = Path(__file__).resolve().parent / "data" / "dle_vision_train_throughput.csv"
# The published precision labels -> the advisor's precision, and the peak the row actually ran on.
PRECISION = {"AMP": ("fp16_amp", "fp16"), "TF32": ("fp32", "tf32"), "FP32": ("fp32", "fp32")}


def load(path: Path = DEFAULT_CSV) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _workload(row: dict[str, str]) -> Workload:
    h, _, w = row["image_size"].partition("x")  # "224" (square) or "800x1333"
    return Workload(task=row["task"], model=row["model"], backbone=row["backbone"] or None,
                    input_size=(int(h), int(w or h)), batch_size_per_gpu=int(row["batch_per_gpu"]),
                    precision=PRECISION[row["precision"]][0], num_gpus=int(row["gpus"]))


def predict(row: dict[str, str]) -> dict[str, float]:
    """Predicted low / mid / high img/s and the utilisation the measurement implies, for one row."""
    w = _workload(row)
    est = estimate_memory(w)
    gpu = load_catalog().gpus[row["gpu"]]
    family = est.profile.family
    peak, _ = peak_tflops(gpu, PRECISION[row["precision"]][0], family)
    util = utilisation_for(family, w, gpu)
    gpus = int(row["gpus"])
    scale = scaling_for(SimpleNamespace(rdma="none", nvlink=True), 1, gpus)
    flops = est.train_flops_per_sample
    low = peak.low * 1e12 * util.low * gpus * scale.low / flops
    high = peak.high * 1e12 * util.high * gpus * scale.high / flops
    ran_on = gpu.tflops(PRECISION[row["precision"]][1]) * 1e12
    measured = float(row["img_per_s"])
    return {"low": low, "mid": math.sqrt(low * high), "high": high, "gflop": flops / 1e9,
            "implied": measured * flops / (ran_on * gpus), "util_low": util.low, "util_high": util.high,
            "measured": measured}


def score(path: Path = DEFAULT_CSV) -> tuple[list[tuple[dict[str, str], dict[str, float]]], list[str]]:
    scored, skipped = [], []
    for row in load(path):
        try:
            scored.append((row, predict(row)))
        except AdvisorError as exc:  # a model the estimator does not know: refused, listed
            skipped.append(f"{row['model']} {row['gpu']} x{row['gpus']} {row['precision']}: {exc}")
    return scored, skipped


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CSV
    scored, skipped = score(path)
    print(f"{'model':<18}{'gpu':<16}{'n':>3} {'prec':<5}{'bs':>4}{'GFLOP':>7}{'img/s':>8}{'pred low':>9}{'pred mid':>9}"
          f"{'pred high':>10}{'mid/pub':>8}  in range  implied util (band)")
    ratios, inside = [], 0
    for row, p in scored:
        ratio = p["mid"] / p["measured"]
        ratios.append(ratio)
        hit = p["low"] <= p["measured"] <= p["high"]
        inside += hit
        print(f"{row['model'][:17]:<18}{row['gpu']:<16}{row['gpus']:>3} {row['precision']:<5}{row['batch_per_gpu']:>4}"
              f"{p['gflop']:>7.1f}{p['measured']:>8.0f}{p['low']:>9.0f}{p['mid']:>9.0f}{p['high']:>10.0f}{ratio:>8.2f}  "
              f"{'yes' if hit else 'no ':<9} {p['implied']:.1%} ({p['util_low']:.0%}-{p['util_high']:.0%})")
    return print_summary(ratios, inside, [line[:160] for line in skipped], extremes=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
