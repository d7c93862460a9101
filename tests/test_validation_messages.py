"""The Workload's own validators answer in the user's language and name the field."""

from __future__ import annotations

import re

import pytest

from gpu_advisor.errors import WorkloadError
from gpu_advisor.validation import workload_from_dict

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("data, field", [
    ({"task": "semantic_segmentation", "region": "mars"}, "region"),
    ({"task": "llm_finetune", "finetune_method": "full", "lora_rank": 8}, "lora_rank"),
    ({"task": "semantic_segmentation", "pytorch_version": "abc"}, "pytorch_version"),
    ({"task": "semantic_segmentation", "backbone": "a\x01b"}, "backbone"),
    ({"task": "llm_finetune", "params_billion": float("inf")}, "params_billion"),
    ({"task": "llm_finetune", "finetune_method": "lora", "lora_targets": ["q_proj", "wte"]}, "lora_targets"),
    ({"task": "llm_finetune", "finetune_method": "full", "lora_targets": ["q_proj"]}, "lora_targets"),
    ({"task": "llm_finetune", "chunked_loss": "maybe"}, "chunked_loss"),
    ({"task": "llm_finetune", "activation_offloading": "maybe"}, "activation_offloading"),
    ({"task": "llm_finetune", "cpu_offload": "maybe"}, "cpu_offload"),
    ({"task": "llm_finetune", "framework": "deepspeed-chat"}, "framework"),
    ({"task": "object_detection", "framework": "detectron-2"}, "framework"),
    ({"task": "llm_finetune", "finetune_method": "lora", "lora_targets": "q_proj"}, "lora_targets"),
])
def test_validator_errors_are_bilingual_and_name_the_field(data, field):
    with pytest.raises(WorkloadError) as info:
        workload_from_dict(data)
    error = info.value
    assert error.field == field
    assert error.message("zh").startswith(field) and HAN.search(error.message("zh"))
    assert error.message("en").startswith(field) and not HAN.search(error.message("en"))
