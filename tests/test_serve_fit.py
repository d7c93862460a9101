"""Serving mechanisms of h13-serve: MoE weights a decode step reads, what fits a budget or the stated card, two
models on one card, and the parser's output lengths and implied weight formats."""

import pytest

from gpu_advisor import Workload, recommend
from gpu_advisor.ask.parser import parse_question
from gpu_advisor.costing.decode import Replica, _weights_touched


def _replica(**kw) -> Replica:
    base = dict(bw_gb_s=1935, peak_tflops=312, tp=1, weights_bytes=60e9, active_share=0.11, kv_bytes_token=98304,
                active_params=3.3e9, layers=48, hidden=2048)
    return Replica(**{**base, **kw})


def test_moe_step_reads_shared_weights_plus_the_routed_experts_touched() -> None:
    # Qwen3-30B-A3B: 95 % of the weights in 128 routed experts, top-8; batch 8 touches 1 - (120/128)^8 = 40 % of them
    r = _replica(routed_share=0.95, routed_pick=8 / 128)
    assert _weights_touched(r, 1) == pytest.approx(0.05 + 0.95 * 8 / 128)
    assert _weights_touched(r, 8) == pytest.approx(0.05 + 0.95 * (1 - (120 / 128) ** 8))
    assert _weights_touched(r, 10_000) == pytest.approx(1.0)
    dense = _replica(active_share=1.0)
    assert _weights_touched(dense, 4) == 1.0


@pytest.mark.parametrize("question, field, value", [
    ("Llama 3.1 8B 每秒 40 个请求，输入 1000 输出 300", "output_tokens", 300),
    ("部署 Qwen3-32B，上下文 32k，每个回答 1000 token", "output_tokens", 1000),
    ("Serve Llama 3.1 8B, 2k context, responses of about 500 tokens, 10 rps", "output_tokens", 500),
    ("llama.cpp Q4_K_M 跑 Llama 3.1 70B", "quantization", "int4"),
    ("ollama qwen2.5 14b q8_0", "quantization", "int8"),
    ("Speculative decoding for Llama 3.1 70B", "task", "inference"),
])
def test_serving_words_are_read(question: str, field: str, value) -> None:
    assert parse_question(question).workload_fields.get(field) == value


def test_ollama_implies_4bit_only_without_a_stated_format() -> None:
    implied = parse_question("Ollama 本地跑 Qwen2.5-14B")
    assert implied.workload_fields["quantization"] == "int4"
    assert any(h.kind == "implied_quantization" for h in implied.hints)
    stated = parse_question("ollama fp16 Qwen2.5-14B")
    assert "quantization" not in stated.workload_fields


def _lead(rec, lang="en") -> str:
    return "\n".join(t.get(lang) for t in rec.lead)


def test_a_budget_nothing_meets_names_a_change_that_fits() -> None:
    rec = recommend(Workload(task="inference", model="Qwen2.5-72B", budget_per_hour=27.78), lang="en")
    text = _lead(rec)
    assert "Within 27.78 CNY/h this fits" in text and "Qwen2.5 32B" in text


def test_a_met_budget_adds_nothing() -> None:
    rec = recommend(Workload(task="inference", model="Qwen2.5-7B", budget_per_hour=50), lang="en")
    assert "this fits" not in _lead(rec) and "No change tried" not in _lead(rec)


def test_the_stated_card_says_how_many_sequences_it_holds() -> None:
    rec = recommend(Workload(task="inference", model="Qwen2.5-72B", quantization="int4", num_gpus=1,
                             concurrent_users=32, batch_size_per_gpu=32, seq_len=8192, gpu_preference="A100"), lang="en")
    assert "concurrent 8192-token sequences" in _lead(rec)


def test_two_models_on_one_card_need_a_colocation_word() -> None:
    from gpu_advisor.ask import answer_question

    _, together = answer_question("一台机器上同时跑 Qwen2.5-7B 和 bge-m3 可以吗")
    assert together.lead[0].zh.startswith("可以。两个模型可放在同一张卡上")
    _, apart = answer_question("Qwen2.5-7B or Qwen2.5-14B, which GPU for serving?", lang="en")
    assert not any("one GPU" in t.en and "Both" in t.en for t in apart.lead)


def test_a_draft_model_adds_to_each_gpu_of_the_replica() -> None:
    from gpu_advisor.ask import answer_question

    _, rec = answer_question("Qwen2.5-7B 用 Qwen2.5-0.5B 做投机解码，单卡 A10 够吗")
    assert rec.lead[0].zh.startswith("可以（含草稿模型）。投机解码：草稿模型 Qwen2.5 0.5B")


def test_a_budget_without_a_model_names_the_largest_size_it_buys() -> None:
    rec = recommend(Workload(task="inference", budget_per_hour=27.78), lang="en")
    assert "Largest model within 27.78 CNY/h" in _lead(rec) and "Qwen2.5 32B" in _lead(rec)


def test_how_many_concurrent_leads_with_the_kv_room() -> None:
    from gpu_advisor.ask import answer_question

    _, rec = answer_question("一张 L20 跑 Qwen2.5-14B，8k 上下文最大并发多少")
    assert rec.lead[0].zh.startswith("约 9 路 8192 token 的并发")
