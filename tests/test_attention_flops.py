"""Causal self-attention FLOPs in the time estimate (costing/timing.attention_flops_per_sample).

Per layer and head: Q.K^T and P.V, 2 FLOPs per multiply-add each, over the s^2 / 2 query-key pairs a causal kernel
computes, x 3 for forward and backward: 6 x layers x heads x head_dim x s^2 per sample for a plain decoder, half of
Narayanan et al. 2021 (arXiv:2104.04473) sec. 5.1's 12 l h s^2 (all pairs). A sliding window caps the pairs.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpu_advisor import recommend
from gpu_advisor.costing.timing import attention_flops_per_sample
from gpu_advisor.kb.models import knowledge


def _p(key: str) -> SimpleNamespace:
    return SimpleNamespace(key=key)


def test_plain_decoder_follows_the_closed_form() -> None:
    t = knowledge().transformers["llama-3-8b"]
    s = 2048
    assert attention_flops_per_sample(_p("llama-3-8b"), s) == pytest.approx(6 * t.layers * t.heads * t.head_dim * s * s)
    assert attention_flops_per_sample(_p("llama-3-8b"), 2 * s) == pytest.approx(
        4 * attention_flops_per_sample(_p("llama-3-8b"), s))


def test_sliding_window_layers_grow_linearly_beyond_the_window() -> None:
    t = knowledge().transformers["gemma-2-9b"]
    assert t.sliding_window and t.sliding_layers
    long, longer = (attention_flops_per_sample(_p("gemma-2-9b"), n) for n in (65536, 131072))
    full = 6 * t.layers * t.heads * t.head_dim
    assert full * 131072 ** 2 > longer > 3 * long   # global layers quadratic, local ones linear


def test_unknown_shape_adds_nothing() -> None:
    assert attention_flops_per_sample(_p("no-such-model"), 4096) == 0.0
    assert attention_flops_per_sample(SimpleNamespace(), 4096) == 0.0


def _hours(seq: int) -> float:
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "seq_len": seq,
                     "num_samples": 1000, "batch_size_per_gpu": 1, "gradient_checkpointing": True, "gpu_preference": "A100 80 GB", "num_gpus": 1,
                     "lang": "en"})
    return rec.cost.option(rec.instance.instance_type).time.wall_hours.mid


def test_long_context_costs_more_than_linear_in_tokens() -> None:
    short, long = _hours(2048), _hours(16384)
    assert long / short > 8 * 1.2   # 8x the tokens, and attention's share grows with the sequence
