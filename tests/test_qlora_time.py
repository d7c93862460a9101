"""QLoRA time: the 16-bit utilisation band plus the dequantization's memory traffic (costing/timing.dequant_seconds).

Per micro-step every base parameter is read at 4 bits and written at 16 in the forward, the backward and, with
checkpointing, the recomputed forward (basis.SRC_DEQUANT); the matmuls' FLOPs grow with the tokens, the dequantization
does not, so its share falls as the micro-batch grows.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpu_advisor import recommend
from gpu_advisor.costing import basis
from gpu_advisor.costing.timing import dequant_seconds, utilisation_for
from gpu_advisor.workload import Workload


def _w(method: str, ckpt: bool = True, batch: int = 2) -> Workload:
    return Workload(task="llm_finetune", model="Llama 3.1 8B", finetune_method=method, gradient_checkpointing=ckpt,
                    batch_size_per_gpu=batch, seq_len=2048, num_samples=10000)


def test_dequant_seconds_from_bytes_and_bandwidth() -> None:
    profile = SimpleNamespace(params_billion=8.0)
    # 3 passes x 8e9 x 2.516 B / 2,039 GB/s (A100 80 GB SXM)
    assert dequant_seconds(_w("qlora"), profile, 2039.0) == pytest.approx(3 * 8e9 * basis.DEQUANT_BYTES_PER_PARAM / 2039e9)
    assert dequant_seconds(_w("qlora", ckpt=False), profile, 2039.0) == pytest.approx(
        2 / 3 * dequant_seconds(_w("qlora"), profile, 2039.0))
    assert dequant_seconds(_w("lora"), profile, 2039.0) == 0.0
    assert dequant_seconds(_w("qlora"), profile, None) == 0.0


def test_qlora_matmuls_keep_the_16_bit_band() -> None:
    assert utilisation_for("llm", _w("qlora")) == basis.UTILISATION["llm_qlora"]
    assert (basis.UTILISATION["llm_qlora"].low, basis.UTILISATION["llm_qlora"].high) == (
        basis.UTILISATION["llm"].low, basis.UTILISATION["llm"].high)


def _hours(method: str, batch: int) -> float:
    rec = recommend({**_w(method, batch=batch).model_dump(exclude_none=True), "gpu_preference": "A100", "lang": "en",
                     "num_gpus": 1})
    return rec.cost.option(rec.instance.instance_type).time.wall_hours.mid


def test_qlora_is_slower_than_lora_by_a_share_that_falls_with_the_micro_batch() -> None:
    small = _hours("qlora", 1) / _hours("lora", 1)
    large = _hours("qlora", 8) / _hours("lora", 8)
    assert 1.0 < large < small
