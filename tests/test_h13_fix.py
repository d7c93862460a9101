"""Mechanisms of the h13 fix helper: distilled model names, one suggestion per model, 'N in / M out', a count of
N-GPU machines asked for, and one pass over a continued-pre-training corpus."""

from __future__ import annotations

import pytest

from gpu_advisor.ask.parser import closest_models, parse_question
from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.kb.models import model_key, suggestions
from gpu_advisor.plan.defaults import resolve_job
from gpu_advisor.workload import Workload


@pytest.mark.parametrize("question, model", [
    ("r1 蒸馏 32b 部署", "DeepSeek-R1-Distill-Qwen-32B"),
    ("部署蒸馏版 R1 14B", "DeepSeek-R1-Distill-Qwen-14B"),
    ("serve deepseek r1 distilled 8b", "DeepSeek-R1-Distill-Llama-8B"),
    ("部署 DeepSeek R1 的蒸馏版 70B", "DeepSeek-R1-Distill-Llama-70B"),
])
def test_distilled_names_reach_the_registry_name(question: str, model: str) -> None:
    p = parse_question(question)
    assert p.workload_fields["model"] == model
    assert any(h.kind == "distilled_name" for h in p.hints)


def test_a_distilled_size_not_published_is_not_guessed() -> None:
    p = parse_question("r1 蒸馏 13b 部署")   # no 13B distill: left as written, never another size
    assert "Distill" not in str(p.workload_fields.get("model"))


@pytest.mark.parametrize("name", ["yi-1.5 9b", "Yi-1.5-9B", "qwen2.5-coder 3b"])
def test_each_model_is_suggested_once(name: str) -> None:
    for names in (closest_models(name, "transformers"), suggestions(name, "transformers")):
        keys = [model_key(n) for n in names]
        assert len(keys) == len(set(keys)), names
        assert not any("/" in n for n in names), names


@pytest.mark.parametrize("question, seq, out", [
    ("Serve Llama 3.1 8B Instruct with vLLM for 200 concurrent users, 1k in / 300 out", 1324, 300),
    ("serve Qwen2.5 7B, in 2k / out 500", 2548, 500),
    ("serve Qwen2.5 7B at 2000 tokens in, 200 out", 2200, 200),
])
def test_in_out_shorthand_is_prompt_and_output(question: str, seq: int, out: int) -> None:
    p = parse_question(question)
    assert (p.workload_fields.get("seq_len"), p.workload_fields.get("output_tokens")) == (seq, out)
    assert not p.unused


@pytest.mark.parametrize("question", ["Kimi-K2-Instruct-0905 部署需要几台 8 卡机器？", "微调 Qwen2.5 72B 要多少台八卡服务器",
                                      "How many 8-GPU nodes do I need to serve DeepSeek-V3?"])
def test_how_many_n_gpu_machines_leaves_the_gpu_count_free(question: str) -> None:
    p = parse_question(question)
    assert "num_gpus" not in p.workload_fields   # the machine count is asked: main's per_machine_asked says so


@pytest.mark.parametrize("gb, epochs", [(50, 1.0), (0.2, 3.0)])
def test_a_corpus_of_a_billion_tokens_is_one_pass(gb: float, epochs: float) -> None:
    w = Workload(task="llm_finetune", params_billion=7, finetune_method="full", dataset_size_gb=gb)
    job = resolve_job(w, load_catalog())
    assert job.workload.epochs == epochs
    said = " ".join(n.text.en for n in job.assumptions)
    assert ("12.5B tokens" in said) == (gb == 50)
