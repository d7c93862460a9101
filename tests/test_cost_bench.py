"""bench/time_accuracy.py runs over the dev CSV and prints per-row predictions and the median error."""

from __future__ import annotations

import io
import runpy
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

CSV = Path("/work/shared/benchmarks/memory/llm_finetune_dev.csv")
BENCH = Path(__file__).resolve().parent.parent / "bench" / "time_accuracy.py"


@pytest.mark.skipif(not CSV.is_file(), reason="dev benchmark CSV not available")
def test_time_benchmark_prints_rows_and_median_error():
    out = io.StringIO()
    module = runpy.run_path(str(BENCH))
    with redirect_stdout(out):
        assert module["main"](["time_accuracy.py", str(CSV)]) == 0
    text = out.getvalue()
    assert "median ratio predicted(mid)/published" in text and "rows scored: " in text
    scored = int(text.split("rows scored: ")[1].split(";")[0])
    assert scored >= 10
    sys.modules.pop("gpu_specs", None)
