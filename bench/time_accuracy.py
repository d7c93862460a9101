"""Time-estimate accuracy: predicted vs published training tokens/s (torchtune / litgpt rows of the dev CSV).

Predicted tokens/s = peak x MFU x GPUs x scaling / (train FLOPs per token x recompute), with the FLOPs from the
memory estimator (gpu_advisor.memory.estimate_memory) and MFU / scaling / recompute from gpu_advisor.costing --
the same numbers the advisor uses; QLoRA adds the dequantization's memory traffic (timing.dequant_seconds). The
utilisation band comes from llm-foundry's published A100 table (bench/data/llmfoundry_a100_mfu.csv), not from these
rows, which stay held out. The HFU column is what each published rate implies at the named GPUs' peak. Only rows with a tokens/s figure on a GPU in bench/gpu_specs.py are scored;
litgpt rows publish a runtime over Alpaca2k without token counts, so they are listed as skipped.

Run: .venv/bin/python bench/time_accuracy.py [path/to/llm_finetune_dev.csv]
"""

from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_specs import BENCH_GPUS, UNMAPPED  # noqa: E402
from ratios import print_summary  # noqa: E402

from gpu_advisor.costing.timing import (attention_flops_per_sample, dequant_seconds, lora_factor,  # noqa: E402
                                        scaling_for, utilisation_for)
from gpu_advisor.plan.ladder import STEP_CKPT, TIME_FACTOR  # noqa: E402
from gpu_advisor.memory import estimate_memory  # noqa: E402
from gpu_advisor.workload import Workload  # noqa: E402

DEFAULT_CSV = Path("/work/shared/benchmarks/memory/llm_finetune_dev.csv")
TOKENS = re.compile(r"([\d,.]+)\s*tokens/s")


def _workload(row: dict[str, str]) -> Workload:
    method = row["method"] if row["method"] in ("full", "lora", "qlora") else "full"
    return Workload(task="llm_finetune", model=row["model"], finetune_method=method, seq_len=int(row["seq_len"]),
                    batch_size_per_gpu=int(row["batch_per_gpu"]), precision="bf16", num_gpus=int(row["gpus"] or 1),
                    gradient_checkpointing=row["activation_checkpointing"].lower().startswith("yes"))


def _per_token(w: Workload, est) -> float:
    """Training FLOPs per token as the advisor counts them: 6 x parameters (x 2/3 for LoRA / QLoRA) + causal
    self-attention over the packed sequence (timing.attention_flops_per_sample)."""
    seq = int(w.seq_len)
    return (est.train_flops_per_sample * lora_factor(est, w)[0] + attention_flops_per_sample(est.profile, seq)) / seq


def predict(row: dict[str, str]) -> tuple[float, float, float]:
    """(low, mid, high) predicted tokens/s for one benchmark row."""
    w = _workload(row)
    est = estimate_memory(w)
    per_token = _per_token(w, est)
    recompute = TIME_FACTOR[STEP_CKPT] if w.gradient_checkpointing else 1.0
    util = utilisation_for(est.profile.family, w)
    gpus = w.num_gpus or 1
    scale = scaling_for(SimpleNamespace(rdma="none", nvlink=gpus > 1), 1, gpus)
    spec = BENCH_GPUS[row["gpu_type"]]
    peak = float(spec["bf16"]) * 1e12
    # QLoRA's dequantization: seconds per micro-step of one GPU, over the tokens of its micro-step (timing.py)
    dequant = dequant_seconds(w, est.profile, spec.get("bandwidth_gb_s")) / (w.batch_size_per_gpu * w.seq_len) / gpus
    low = 1 / (per_token * recompute / (peak * util.low * gpus * scale.low) + dequant)
    high = 1 / (per_token * recompute / (peak * util.high * gpus * scale.high) + dequant)
    return low, math.sqrt(low * high), high


def implied_hfu(row: dict[str, str], published: float) -> float:
    """The share of the named GPUs' dense peak the published rate implies at this estimate's FLOPs (recomputation
    included): above 1 the rate cannot have been measured on those GPUs as configured (torchtune's "Memory and
    training speed" table names the GPUs a config is "Runnable On")."""
    w = _workload(row)
    est = estimate_memory(w)
    per_token = _per_token(w, est)
    recompute = TIME_FACTOR[STEP_CKPT] if w.gradient_checkpointing else 1.0
    return published * per_token * recompute / (float(BENCH_GPUS[row["gpu_type"]]["bf16"]) * 1e12 * (w.num_gpus or 1))


def rows(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    scored, skipped = [], []
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["framework"] not in ("torchtune", "litgpt"):
                continue
            label = f"{row['framework']} {row['model']} {row['method']} {row['gpu_type']}"
            if not TOKENS.search(row["throughput"]):
                skipped.append(f"{label}: no tokens/s ({row['throughput'] or 'empty'})")
            elif row["gpu_type"] not in BENCH_GPUS:
                skipped.append(f"{label}: {UNMAPPED.get(row['gpu_type'], 'GPU not in bench/gpu_specs.py')}")
            else:
                scored.append(row)
    return scored, skipped


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CSV
    scored, skipped = rows(path)
    print(f"{'model':<16}{'method':<7}{'gpu':<7}{'n':>3}{'seq':>6}{'ckpt':>5}{'published':>11}{'pred low':>10}"
          f"{'pred mid':>10}{'pred high':>10}{'mid/pub':>9}{'HFU':>6}  in range  settings")
    ratios, inside = [], 0
    for row in scored:
        published = float(TOKENS.search(row["throughput"]).group(1).replace(",", ""))
        low, mid, high = predict(row)
        ratio = mid / published
        ratios.append(ratio)
        hit = low <= published <= high
        inside += hit
        ckpt = "yes" if row["activation_checkpointing"].lower().startswith("yes") else "no"
        print(f"{row['model'][:15]:<16}{row['method']:<7}{row['gpu_type']:<7}{row['gpus']:>3}{row['seq_len']:>6}"
              f"{ckpt:>5}{published:>11.0f}{low:>10.0f}{mid:>10.0f}{high:>10.0f}{ratio:>9.2f}{implied_hfu(row, published):>6.2f}"
              f"  {'yes' if hit else 'no ':<9} "
              f"{row['other_settings'][:60]}")
    return print_summary(ratios, inside, sorted(set(skipped)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
