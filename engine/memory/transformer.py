"""Transformer (LLM / BERT-class) memory: model states, activations (Korthikanti et al. 2205.05198), KV cache.

Activations saved per layer per token, in 16-bit values (Korthikanti's 34*s*b*h bytes recounted for
pre-norm, RoPE, GQA and SwiGLU blocks without dropout):
  norm-1 input kept in fp32 (2h) + norm-1 output h + q h + k, v 2*kv*head_dim + attention output h
  + norm-2 input fp32 (2h) + norm-2 output h + MLP (gated: gate, SiLU, up, product = 4I; plain: fc1, GELU = 2I)
  = 8h + 2*kv*hd + 4I (gated). Dropout (BERT) adds 1-byte masks (~h values).
Attention scores: fused SDPA / FlashAttention (PyTorch >= 2.0) keep none; eager attention keeps
5*a*s bytes per token per layer (Korthikanti). Full recomputation keeps the layer input (h per token per
layer) plus one layer's activations during recompute. Logits: tokens x vocab x 10 B (bf16 logits, fp32
upcast, fp32 log-softmax); the start of backward adds the logits gradient (6 B per element).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_advisor.memory.settings import Resolved
from gpu_advisor.memory.states import StateBytes, model_states, torch_at_most
from gpu_advisor.models import TransformerSpec, knowledge

NF4_BYTES = 0.5 + 0.0156   # 4-bit values + double-quantized absmax (Dettmers et al. 2305.14314 §3: 0.127 bit/param)
INT8_BYTES = 1.0 + 0.0078
PREFILL_CHUNK = 8192       # tokens of prefill live at once (vLLM chunked prefill default budget)


@dataclass(frozen=True)
class TextParts:
    states: StateBytes
    activations: float
    transient: float
    kv_cache: float
    params: float
    trainable: float
    tokens: int
    per_token_layer_bytes: float


def split_params(t: TransformerSpec) -> tuple[float, float]:
    """(embedding + lm_head params, transformer-block params) from the published total."""
    embed = t.vocab * t.hidden * (1 if t.tied else 2)
    total = t.params_billion * 1e9
    return float(embed), max(total - embed, total * 0.3)


def _layer_matrices(t: TransformerSpec) -> list[tuple[int, int]]:
    q, kv = t.heads * t.head_dim, t.kv_heads * t.head_dim
    mats = [(t.hidden, q), (t.hidden, kv), (t.hidden, kv), (q, t.hidden)]
    mlp = [(t.hidden, t.intermediate), (t.hidden, t.intermediate), (t.intermediate, t.hidden)]
    return mats + (mlp if t.mlp == "gated" else mlp[1:])


def lora_params(t: TransformerSpec, rank: int) -> float:
    """Adapters on every linear layer: r x (d_in + d_out) per matrix per layer (Hu et al. 2106.09685)."""
    return float(t.layers * sum(rank * (a + b) for a, b in _layer_matrices(t)))


def _per_token_layer_values(t: TransformerSpec) -> float:
    kv = t.kv_heads * t.head_dim
    mlp = 4 * t.intermediate if t.mlp == "gated" else 2 * t.intermediate
    return 8 * t.hidden + 2 * kv + mlp + (t.hidden if t.dropout else 0)


def _activations(t: TransformerSpec, s: dict, tokens: int) -> tuple[float, float, float]:
    """(activations, start-of-backward transient, bytes per token per layer)."""
    act_b = 4.0 if s["precision"] == "fp32" else 2.0
    per_tok = _per_token_layer_values(t) * act_b
    if torch_at_most(s["pytorch_version"], 1, 13):
        per_tok += 5.0 * t.heads * s["seq_len"] * (act_b / 2.0)
    if s.get("gradient_checkpointing"):
        layers = t.layers * tokens * t.hidden * act_b + tokens * per_tok
    else:
        layers = t.layers * tokens * per_tok
    lm = t.family == "llm"
    logits = tokens * t.vocab * (10.0 if act_b == 2.0 else 8.0) if lm else 0.0
    transient = tokens * t.vocab * 6.0 if lm else tokens * t.hidden * 4.0
    return layers * knowledge().calibration.get("llm", 1.0) + logits, transient, per_tok


def kv_cache_bytes(t: TransformerSpec, tokens: int, bytes_per: float = 2.0) -> float:
    """K and V for every layer and token; MLA stores the compressed latent + RoPE key (DeepSeek-V2 2405.04434)."""
    if t.kv_lora_rank:
        return float(t.layers * tokens * (t.kv_lora_rank + (t.qk_rope_head_dim or 0)) * bytes_per)
    return float(t.layers * tokens * 2 * t.kv_heads * t.head_dim * bytes_per)


def _frozen_bytes(t: TransformerSpec, s: dict) -> float | None:
    method, quant = s.get("finetune_method"), s.get("quantization", "none")
    if method not in ("lora", "qlora"):
        return None
    embed, blocks = split_params(t)
    base = {"nf4": NF4_BYTES, "int4": NF4_BYTES, "int8": INT8_BYTES}.get(quant, 4.0 if s["precision"] == "fp32" else 2.0)
    return (embed * 2.0 + blocks * base) / (embed + blocks)


def text_training(r: Resolved) -> TextParts:
    t, s = r.transformer, r.settings
    assert t is not None
    params = t.params_billion * 1e9
    tokens = s["batch_size_per_gpu"] * s["seq_len"]
    frozen = _frozen_bytes(t, s)
    trainable = lora_params(t, s.get("lora_rank") or 16) if frozen is not None else params
    states = model_states(params, trainable, frozen, s, True, split_params(t)[1] / t.layers)
    act, transient, per_tok = _activations(t, s, tokens)
    if s.get("quantization") in ("nf4", "int4", "int8"):
        transient += 2.0 * t.hidden * t.intermediate * 2.0   # dequantized working copy of the largest matrix
    return TextParts(states, act, transient, 0.0, params, trainable, tokens, per_tok)


def text_inference(r: Resolved) -> TextParts:
    t, s = r.transformer, r.settings
    assert t is not None
    params = t.params_billion * 1e9
    embed, blocks = split_params(t)
    quant = s.get("quantization", "none")
    w = {"nf4": NF4_BYTES, "int4": NF4_BYTES, "int8": INT8_BYTES}.get(quant)
    weights = embed * 2.0 + blocks * w if w else params * (4.0 if s["precision"] == "fp32" else 2.0 if s["precision"] != "fp8" else 1.0)
    n, dist = max(1, s.get("num_gpus", 1)), s.get("distributed", "none")
    weights = weights / n if n > 1 and dist != "ddp" else weights
    tokens = s["batch_size_per_gpu"] * s["seq_len"]
    kv = kv_cache_bytes(t, tokens) / (n if n > 1 and dist != "ddp" else 1)
    live = min(tokens, PREFILL_CHUNK)
    act = live * (4 * t.hidden + 3 * t.intermediate) * 2.0 + s["batch_size_per_gpu"] * t.vocab * 4.0
    states = StateBytes(weights, 0.0, 0.0, 0.0, 0.0, 0.0)
    return TextParts(states, act, 0.0, kv, params, 0.0, tokens, 0.0)
