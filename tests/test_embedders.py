"""Text-embedding and reranker models (encoders): counts from their recorded config.json within 0.5 % of the published
size, serving without a KV cache, the contrastive fine-tuning recipe (sequences per sample), and the closest names an
unknown embedder is refused with (encoders, never decoder LLMs spelled alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gpu_advisor.ask.api import answer_question
from gpu_advisor.ask.parser import closest_models, parse_question
from gpu_advisor.errors import UnknownModelError
from gpu_advisor.kb.models import knowledge, resolve_transformer
from gpu_advisor.memory import estimate_memory
from gpu_advisor.memory.hfconfig import count, spec_fields
from gpu_advisor.memory.jobdefaults import EMBEDDER_RECIPE
from gpu_advisor.workload import Workload

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tools" / "llm_configs"
MANIFEST = yaml.safe_load((CONFIGS / "models.yaml").read_text(encoding="utf-8"))["models"]
ENCODERS = sorted(k for k, m in MANIFEST.items() if m.get("role"))
GIB = 2.0**30


def test_the_embedders_are_shipped() -> None:
    assert {"bge-m3", "bge-reranker-v2-m3", "bge-large-zh-v1.5", "bge-base-en-v1.5", "bge-large-en-v1.5"} <= set(ENCODERS)


@pytest.mark.parametrize("key", ENCODERS)
def test_encoder_count_is_within_half_a_percent_of_the_published_size(key: str) -> None:
    m = MANIFEST[key]
    c = count(json.loads((CONFIGS / m["config"]).read_text(encoding="utf-8")))
    if m.get("no_lm_head"):
        c.head_params = 0.0
    assert c.total / 1e9 == pytest.approx(m["stated_params_billion"], rel=0.005), key
    t = knowledge().transformers[key]
    assert t.role == m["role"] and t.role_source
    assert t.family == ("llm" if c.model_type.startswith("qwen3") else "encoder_nlp")


# exact counts mteb's ModelMeta publishes (qwen3_models.py@a905523d): Qwen3-Embedding 8B without an lm_head
@pytest.mark.parametrize("key, exact", [("qwen3-embedding-0.6b", 595_776_512), ("qwen3-embedding-4b", 4_021_774_336),
                                        ("qwen3-embedding-8b", 7_567_295_488)])
def test_decoder_embedder_count_is_exact(key: str, exact: int) -> None:
    t = knowledge().transformers[key]
    assert t.params_billion * 1e9 == pytest.approx(exact, rel=2e-5) and t.tied   # no separate lm_head matrix


def test_serving_a_decoder_embedder_keeps_no_kv_cache() -> None:
    est = estimate_memory(Workload(task="inference", model="Qwen/Qwen3-Embedding-8B", seq_len=8192, batch_size_per_gpu=16))
    assert est.breakdown.get("kv_cache", 0.0) == 0.0 and est.profile.kv_cache_bytes_per_token is None
    t = knowledge().transformers["qwen3-embedding-8b"]
    assert est.breakdown["activations"] == pytest.approx(16 * 8192 * (5 * t.hidden + 3 * t.intermediate) * 2 / GIB, rel=1e-3)


# exact counts published for the same networks: mteb's ModelMeta (manu/bge-m3-custom-fr, a bge-m3 fine-tune:
# 567,754,752; thenlper/gte-large-zh, BERT-large with the 21128-token Chinese vocabulary: 325,522,432) and a
# reranker checkpoint plan (XLMRobertaForSequenceClassification on bge-m3: 567,755,777)
@pytest.mark.parametrize("key, exact", [("bge-m3", 567_754_752), ("bge-large-zh-v1.5", 325_522_432),
                                        ("bge-reranker-v2-m3", 567_755_777)])
def test_encoder_count_is_exact(key: str, exact: int) -> None:
    c = count(json.loads((CONFIGS / MANIFEST[key]["config"]).read_text(encoding="utf-8")))
    assert int(c.total) == exact


def test_an_encoder_has_no_final_norm_and_a_reranker_no_pooler() -> None:
    base = json.loads((CONFIGS / "bge-m3.json").read_text(encoding="utf-8"))
    c = count(base)
    assert c.final_norm == 0.0
    h = base["hidden_size"]
    reranker = count({**base, "architectures": ["XLMRobertaForSequenceClassification"], "id2label": {"0": "LABEL_0"}})
    # the pooler (h x h + h) is replaced by the classification head (h x h + h, then h x 1 + 1)
    assert reranker.total - c.total == h + 1
    assert spec_fields(c)["max_seq"] == 8192      # 8194 positions, RoBERTa's padding offset 2


@pytest.mark.parametrize("name, key", [("BAAI/bge-m3", "bge-m3"), ("bge-m3", "bge-m3"),
                                       ("BAAI/bge-reranker-v2-m3", "bge-reranker-v2-m3"),
                                       ("bge-large-zh-v1.5", "bge-large-zh-v1.5"), ("BAAI/bge-base-en-v1.5", "bge-base-en-v1.5")])
def test_names_resolve(name: str, key: str) -> None:
    assert resolve_transformer(name) == key


@pytest.mark.parametrize("name", ["bge-large-zh", "bge-m3-unsupervised", "bge-reranker-large", "bge-small-en",
                                  "bge-large-en", "jina-embeddings-v3", "gte-Qwen2-7B-instruct", "bge-multilingual-gemma2"])
def test_other_embedders_do_not_resolve(name: str) -> None:
    assert resolve_transformer(name) is None


def test_serving_an_encoder_keeps_no_kv_cache() -> None:
    est = estimate_memory(Workload(task="inference", model="bge-m3", seq_len=8192, batch_size_per_gpu=32))
    b = est.breakdown
    assert b.get("kv_cache", 0.0) == 0.0
    t = knowledge().transformers["bge-m3"]
    tokens = 32 * 8192
    # one layer's input, q / k / v, attention output (5 h) and the MLP intermediate and its GELU (2 I), 16-bit
    assert b["activations"] == pytest.approx(tokens * (5 * t.hidden + 2 * t.intermediate) * 2 / GIB, rel=1e-3)
    assert b["weights"] == pytest.approx(t.params_billion * 1e9 * 2 / GIB, rel=0.01)
    assert not any(a.field == "kv_cache_dtype" for a in est.assumptions)


@pytest.mark.parametrize("key", ["bge-m3", "bge-reranker-v2-m3"])
def test_contrastive_fine_tune_counts_every_sequence_of_a_sample(key: str) -> None:
    role = knowledge().transformers[key].role
    seqs, seq_len, queries = EMBEDDER_RECIPE[role]
    w = dict(task="nlp_finetune", model=key, gradient_checkpointing=False, precision="bf16_amp")
    est = estimate_memory(Workload(**w))
    said = {a.field: a.value for a in est.assumptions}
    assert said["sequences_per_sample"] == seqs and said["batch_size_per_gpu"] == queries and said["seq_len"] == seq_len
    one = estimate_memory(Workload(**w, batch_size_per_gpu=1))
    two = estimate_memory(Workload(**w, batch_size_per_gpu=2))
    # activations grow by one sample's sequences per query; compute per sample is all its sequences
    per_query = two.breakdown["activations"] - one.breakdown["activations"]
    assert per_query > 0
    assert one.train_flops_per_sample == pytest.approx(6 * one.profile.params_billion * 1e9 * seq_len * seqs, rel=1e-6)
    plain = estimate_memory(Workload(task="nlp_finetune", model="bert-large", gradient_checkpointing=False,
                                     precision="bf16_amp", batch_size_per_gpu=1))
    assert plain.train_flops_per_sample == pytest.approx(6 * plain.profile.params_billion * 1e9 * 512, rel=1e-6)


def test_a_plain_encoder_fine_tune_is_unchanged() -> None:
    est = estimate_memory(Workload(task="nlp_finetune", model="bert-base"))
    assert "sequences_per_sample" not in {a.field for a in est.assumptions}


@pytest.mark.parametrize("name", ["bge-micro-v2", "jina-embeddings-v3", "m3e-base", "gte-Qwen2-7B-instruct"])
def test_an_unknown_embedder_is_refused_with_encoders(name: str) -> None:
    with pytest.raises(UnknownModelError) as exc:
        answer_question(f"Fine-tune {name} embedding model on 1M pairs, what GPU?", "en")
    close = exc.value.suggestions
    encoders = {t.display for t in knowledge().transformers.values() if t.family == "encoder_nlp" or t.role}
    embedders = {t.display for t in knowledge().transformers.values() if t.role}
    assert close and set(close) <= encoders, close
    assert close[0] in embedders, close
    assert "text-embedding" in exc.value.message("en") and "Gemma" not in exc.value.message("en")


def test_a_decoder_llm_name_still_gets_llm_suggestions() -> None:
    parsed = parse_question("Serve Qwen9-7B chat on one A10")
    _, kind, close = parsed.unresolved[0]
    assert kind == "llm" and all("Qwen" in c for c in close)
    assert closest_models("Qwen9-7B", "transformers", family="encoder_nlp")[0] in {
        t.display for t in knowledge().transformers.values() if t.role}


def test_an_embedder_named_without_a_training_word_is_served() -> None:
    parsed = parse_question("用 bge-large-zh-v1.5 做向量检索服务，需要什么 GPU？")
    assert parsed.workload_fields["task"] == "inference"
    parsed = parse_question("Fine-tune bge-large-zh-v1.5 on my query-passage pairs")
    assert parsed.workload_fields["task"] == "nlp_finetune"
