"""Serving-speed accuracy: predicted range vs published LLM serving measurements (bench/data/llm_serving_measured.csv).

Every row is run through gpu_advisor.costing.decode, the same physics and bands the advisor states in a serving answer:
decode step = bytes read / (HBM bandwidth x DECODE_HBM) + tensor-parallel all-reduces, prefill = 2 x params x prompt /
(peak x PREFILL_UTIL). Rows marked `derive` are the ones the two bands were read from (LMDeploy batch-1 tensor-parallel-1
rows, vLLM's 8B latency test); only `check` rows count in the summary, so the bands are not scored on the rows they came
from. Rows marked `skip` are listed with the reason. A row whose batch's KV cache does not fit the card (the engine then
runs fewer sequences at once than the row states) is skipped too.

Sources (the `source` column):
  lmdeploy-a100     InternLM/lmdeploy docs/en/benchmark/a100_fp16.md @3e391df4673326f79363eebe030876861a9b7090
  vllm-ci-9515      https://buildkite.com/vllm/performance-benchmark/builds/9515 (latency tests, H200)
  nim-bench-1.0.0   https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance (Llama-3.3-70b-instruct, NIM 1.8.0)
  vllm-issue-20469  https://github.com/vllm-project/vllm/issues/20469 (A100 80GB, Qwen3-14B-AWQ, concurrency 1)

Run: .venv/bin/python bench/serve_throughput_accuracy.py [path/to/llm_serving_measured.csv]
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_specs import SERVING_GPUS  # noqa: E402
from ratios import print_summary  # noqa: E402

from gpu_advisor.costing import basis  # noqa: E402
from gpu_advisor.costing.decode import Replica, closed_loop, static_batch  # noqa: E402

DEFAULT_CSV = Path(__file__).resolve().parent / "data" / "llm_serving_measured.csv"
USABLE = 0.9   # share of the card an engine gives weights + KV cache (vLLM gpu_memory_utilization default)


def _replica(row: dict[str, str], kv_bytes: float) -> Replica:
    gpu = SERVING_GPUS[row["gpu"]]
    tp = int(row["tp"])
    params = float(row["params_b"]) * 1e9
    link = None
    if tp > 1:
        rate = float(gpu["nvlink"]) / 2   # type: ignore[arg-type]
        link = (rate * basis.LINK_NVLINK.low, rate * basis.LINK_NVLINK.high)
    peak = float(gpu[row["peak_precision"]])   # type: ignore[arg-type]
    return Replica(bw_gb_s=float(gpu["bw"]), peak_tflops=peak, tp=tp,   # type: ignore[arg-type]
                   weights_bytes=params * float(row["weight_bytes"]) / tp, active_share=1.0,
                   kv_bytes_token=float(row["kv_bytes_token"]) * kv_bytes / 2, active_params=params,
                   layers=int(row["layers"]), hidden=int(row["hidden"]), link_gb_s=link,
                   chunk=8192 if row["gpu"].startswith("H") else 2048)


def _kv_range(row: dict[str, str]) -> tuple[float, float]:
    """(fast, slow) KV bytes per element: "1-2" when the source does not state the KV dtype."""
    parts = [float(x) for x in row["kv_dtype_bytes"].split("-")]
    return parts[0], parts[-1]


def _fits(row: dict[str, str]) -> bool:
    gpu_bytes = 80e9 if "80GB" in row["gpu"] else 141e9
    tp, batch = int(row["tp"]), int(row["batch"])
    weights = float(row["params_b"]) * 1e9 * float(row["weight_bytes"]) / tp
    kv = batch * (int(row["prompt"]) + int(row["output"])) * float(row["kv_bytes_token"]) / 2 * _kv_range(row)[0] / tp
    return weights + kv <= USABLE * gpu_bytes


def predict(row: dict[str, str]) -> tuple[float, float]:
    """(low, high) of the row's metric."""
    batch, prompt, output = int(row["batch"]), int(row["prompt"]), int(row["output"])
    fast_kv, slow_kv = _kv_range(row)
    run = static_batch if row["mode"] == "static" else closed_loop
    fast = run(_replica(row, fast_kv), batch, prompt, output)
    slow = run(_replica(row, slow_kv), batch, prompt, output)
    metric = row["metric"]
    if metric == "tpot_ms":
        return fast.tpot[0] * 1e3, slow.tpot[1] * 1e3
    if metric == "ttft_ms":
        return fast.ttft[0] * 1e3, slow.ttft[1] * 1e3
    if metric == "e2e_ms":
        return (fast.prefill[0] + output * fast.step[0]) * 1e3, (slow.prefill[1] + output * slow.step[1]) * 1e3
    if metric == "out_tok_s":
        return slow.out_tok_s[0], fast.out_tok_s[1]
    raise ValueError(f"unknown metric {metric!r}")


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CSV
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    print(f"{'set':<7}{'source':<17}{'model':<15}{'gpu':<15}{'tp':>3}{'N':>4}{'in':>6}{'out':>6}  {'metric':<10}"
          f"{'published':>10}{'pred low':>10}{'pred high':>10}{'mid/pub':>8}  in range")
    ratios, inside, skipped = [], 0, []
    by_set: dict[str, list[int]] = {}
    for row in rows:
        label = f"{row['source']} {row['model']} N={row['batch']} {row['prompt']}/{row['output']} {row['metric']}"
        if row["set"] == "skip":
            skipped.append(f"{label}: {row['note']}")
            continue
        if not _fits(row):
            skipped.append(f"{label}: the batch's KV cache does not fit the card, so the engine runs fewer at once")
            continue
        published = float(row["published"])
        low, high = predict(row)
        mid = math.sqrt(low * high)
        hit = low <= published <= high
        tally = by_set.setdefault(row["set"], [0, 0])
        tally[0] += hit
        tally[1] += 1
        if row["set"] == "check":
            ratios.append(mid / published)
            inside += hit
        print(f"{row['set']:<7}{row['source'][:16]:<17}{row['model'][:14]:<15}{row['gpu'][:14]:<15}{row['tp']:>3}"
              f"{row['batch']:>4}{row['prompt']:>6}{row['output']:>6}  {row['metric']:<10}{published:>10.1f}{low:>10.1f}"
              f"{high:>10.1f}{mid / published:>8.2f}  {'yes' if hit else 'no'}")
    for name, (hit, n) in sorted(by_set.items()):
        print(f"{name} rows inside the predicted range: {hit}/{n}")
    print("summary over the check rows only (the derive rows set the bands):")
    return print_summary(ratios, inside, skipped, extremes=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
