"""A yes/no question gets its verdict first, read from the plan against what the question stated (issue 22, starting
cases 3 and 13: "单卡够吗？" was never answered yes or no; "4张A10能全量微调7B模型吗？" said a plain yes)."""

from __future__ import annotations

import pytest

from gpu_advisor.answer.brief import brief, brief_text
from gpu_advisor.ask import answer_question, parse_question


@pytest.mark.parametrize(("question", "yes_no"), [
    ("我要在阿里云上用QLoRA微调Llama 3.1 70B，单卡够吗？", True),
    ("4张A10能全量微调7B模型吗？", True),
    ("显存够不够 A10？训练 UNet，4096x4096，batch 2", True),
    ("Can I fine-tune Llama 3.1 8B with LoRA on one T4?", True),
    ("Is one A100 80GB enough to serve Qwen2.5-32B?", True),
    ("What GPU do I need to fine-tune Llama 3.1 8B with LoRA?", False),
    ("部署Qwen2.5-72B-Instruct做在线推理，32并发，上下文8K，需要几张什么卡？", False),
])
def test_yes_no_questions_are_recognised(question: str, yes_no: bool) -> None:
    assert parse_question(question).yes_no is yes_no


def test_a_yes_that_needs_offload_is_not_a_plain_yes() -> None:
    """7e9 x 16 B (bf16 AMP + fp32 AdamW) / 4 = 26 GiB per 24 GB A10 before activations: only with CPU offload."""
    _, rec = answer_question("4张A10能全量微调7B模型吗？")
    first = rec.lead[0].zh
    assert first.startswith("可以，但必须采取") and "卸载" in first and "4 张 NVIDIA A10" in first


def test_a_stated_gpu_that_does_not_hold_the_job_is_a_no_with_what_does() -> None:
    """Llama 3.1 8B LoRA in bf16: 16 GB of weights alone fill a 16 GB T4 (which has no bf16 either)."""
    _, rec = answer_question("Can I fine-tune Llama 3.1 8B with LoRA on one T4?")
    first = rec.lead[0].en
    assert first.startswith("No: 1 × T4 does not hold") and rec.instance.gpu_id != "T4"
    assert first in brief_text(rec) and brief(rec)["lead"][0] == first  # the compact MCP answer says it first


def test_a_plain_yes_names_the_card_and_the_memory() -> None:
    """QLoRA 70B: 70.6e9 x ~0.55 B NF4 = 36-38 GiB + LoRA + activations: one 80 GB card holds it."""
    _, rec = answer_question("我要在阿里云上用QLoRA微调Llama 3.1 70B，单卡够吗？")
    first = rec.lead[0].zh
    assert first.startswith("可以：1 张") and "GiB" in first


def test_a_question_that_is_not_yes_no_gets_no_verdict() -> None:
    _, rec = answer_question("What GPU do I need to fine-tune Llama 3.1 8B with LoRA?")
    assert not any(line.en.startswith(("Yes", "No:")) for line in rec.lead)


def test_a_yes_no_question_about_something_else_gets_no_fit_verdict() -> None:
    """'用抢占式实例可以吗？' asks about spot, not about the job fitting: no 'Yes: ... holds it' line first."""
    _, rec = answer_question("我在新加坡，想微调 Qwen2.5-14B（LoRA），用抢占式实例可以吗？")
    assert not any(line.zh.startswith(("可以：", "可以，但", "不行：")) for line in rec.lead)
