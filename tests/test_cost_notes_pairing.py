"""The cost report's utilisation / scaling notes are those of the options that have a time, each taken from its own
candidate: options are sorted by cost, and pairing them with the planner-ordered candidates attached another option's
notes (and left out an option's own) whenever an option without a time estimate moved."""

from __future__ import annotations

import pytest

from gpu_advisor import recommend

WORKLOADS = [
    {"task": "llm_finetune", "model": "Qwen2.5-14B", "finetune_method": "lora", "seq_len": 4096, "lang": "zh"},
    {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "full", "seq_len": 4096},
    {"task": "llm_pretrain", "params_billion": 7, "training_tokens_billion": 1000, "deadline_hours": 720},
    {"task": "semantic_segmentation", "model": "DeepLabV3+", "backbone": "R-50-D8", "input_size": [1024, 1024],
     "batch_size_per_gpu": 8, "num_samples": 3000, "epochs": 80},
    {"task": "llm_finetune", "model": "Qwen2.5 72B", "finetune_method": "qlora", "num_samples": 20000},
]


def _scaling_code(scaling) -> str:
    return f"time_scaling_{scaling.low:g}_{scaling.high:g}"


@pytest.mark.parametrize("data", WORKLOADS, ids=lambda d: d.get("model", d["task"]))
def test_scaling_notes_are_those_of_the_timed_options(data):
    cost = recommend(data).cost
    if cost is None:
        pytest.skip("no cost report for this workload")
    timed = {_scaling_code(o.time.scaling) for o in cost.options if o.time.wall_hours is not None}
    stated = {n.code for n in cost.assumptions if n.code.startswith("time_scaling_")}
    assert stated == timed
