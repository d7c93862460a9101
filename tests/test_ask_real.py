"""`ask` against the real advisor (gpu_advisor.recommend): the seed questions, verbatim, with --no-input."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path

import pytest

from gpu_advisor.ask import answer_question
from gpu_advisor.cli.ask import main

SEEDS = [p.read_text(encoding="utf-8").splitlines()[0] for p in sorted(Path("/work/shared/seeds").glob("*.txt"))]


def _advisor_importable() -> bool:
    try:
        importlib.import_module("gpu_advisor.advisor")
        return True
    except ImportError:
        return False


pytestmark = pytest.mark.skipif(not _advisor_importable(), reason="gpu_advisor.advisor is not importable yet")


@pytest.mark.parametrize("question", SEEDS)
def test_seed_answered_by_the_real_advisor(question: str, capsys: pytest.CaptureFixture[str]) -> None:
    parsed, rec = answer_question(question)
    assert parsed.lang == "zh" and rec.instance is not None
    assert main([question, "--no-input"]) == 0
    out = capsys.readouterr().out
    assert rec.instance.instance_type in out and "推荐配置" in out


@pytest.mark.parametrize("question", [
    "用DeepLabV3+ R-50训练Cityscapes，1024×1024，batch 8，8卡，bf16，杭州",
    "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16, budget 5000 CNY, within 48 hours, spot ok, Singapore",
    "部署Qwen2-7B做推理服务，上下文8k，并发16，北京",
    "数据预处理，10万张图片，500GB，上海",
])
def test_parsed_questions_run_through_the_advisor(question: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([question, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["recommendation"]["workload"]


def test_how_shows_a_fired_rule() -> None:
    from gpu_advisor.cli.terminal import render_how

    _, rec = answer_question(SEEDS[0])
    assert rec.sections and rec.trace
    text = render_how(rec, "en", 1)
    assert rec.sections[0].rule_id in text or "left no trace entry" in text
    assert io.StringIO(render_how(rec, "zh", None)).getvalue()


def test_every_section_of_the_rule_base_has_a_heading_in_both_languages() -> None:
    """The terminal answer and the Markdown answer take section headings from the same table (messages.yaml)."""
    from gpu_advisor.advisor import get_knowledge
    from gpu_advisor.util.i18n import messages

    sections = {r.then.section for r in get_knowledge().rules.rules if r.then.section}
    headings = messages()["sections"]
    assert sections <= set(headings)
    assert all(headings[s]["zh"] and headings[s]["en"] for s in sections)


@pytest.mark.parametrize("lang, label", [("en", "Memory mitigations"), ("zh", "省显存措施")])
def test_terminal_lines_show_section_headings_not_keys(lang: str, label: str) -> None:
    from gpu_advisor import recommend
    from gpu_advisor.cli.terminal import numbered_lines

    rec = recommend({"task": "llm_finetune", "model": "Qwen2.5 72B", "finetune_method": "lora", "lang": lang})
    lines = numbered_lines(rec, lang, lambda text, *_: text)
    assert any(f"] {label}: " in line for line in lines)
    assert not [line for line in lines if "] mitigation: " in line or "] warning: " in line]


def _terminal(fields: dict, lang: str = "en") -> str:
    from gpu_advisor import recommend
    from gpu_advisor.cli.terminal import cost_block

    return "\n".join(cost_block(recommend({**fields, "lang": lang}), lang, lambda text, *_: text))


def test_terminal_answer_states_time_cost_and_the_constraints() -> None:
    semseg = {"task": "semantic_segmentation", "model": "DeepLabV3+", "backbone": "R-50-D8", "region": "cn-hangzhou"}
    text = _terminal(semseg)
    assert "wall-clock about " in text and "pay-as-you-go for the job " in text and "CNY" in text
    assert "lowest total pay-as-you-go cost" in text
    assert "耗时约 " in _terminal(semseg, "zh")
    # a deadline scales the plan out (issue 22): 0.01 h cannot be met on any layout in the catalog
    tight = _terminal({**semseg, "deadline_hours": 0.01, "budget_total": 1})
    assert "misses: " in tight and "No option meets the budget and deadline" in tight
    assert "\n  - The 0.01 h deadline cannot be met" in tight
    serving = _terminal({"task": "inference", "model": "Llama 3.1 8B", "region": "cn-hangzhou"})
    assert "pay-as-you-go per month " in serving and "wall-clock" not in serving


def test_terminal_rows_are_per_instance_with_the_instance_count() -> None:
    """A multi-node answer's row shows one instance's GPUs, vCPU and RAM, and how many instances."""
    from gpu_advisor import recommend
    from gpu_advisor.cli.terminal import instance_block

    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 70B", "finetune_method": "full", "num_gpus": 32})
    inst = rec.instance
    assert inst.nodes > 1 and inst.gpus_per_node * inst.nodes == 32
    text = "\n".join(instance_block(rec, "en", lambda t, *_: t))
    assert f"{inst.instance_type} × {inst.nodes}" in text
    assert f"× {inst.gpus_per_node}" in text and "× 32" not in text


def test_terminal_shows_the_cpu_instance_of_a_preprocessing_job() -> None:
    from gpu_advisor import recommend
    from gpu_advisor.cli.terminal import instance_block

    rec = recommend({"task": "preprocessing", "dataset_size_gb": 10000})
    assert rec.instance is None and rec.cpu_instance
    for lang in ("en", "zh"):
        text = "\n".join(instance_block(rec, lang, lambda t, *_: t))
        assert rec.cpu_instance["instance_type"] in text and "No GPU instance fits" not in text
