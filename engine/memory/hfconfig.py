"""Transformer shapes and parameter counts from a Hugging Face ``config.json`` (no torch, no weights).

Reads the fields the transformers model classes read (LlamaConfig, Qwen2/Qwen3(-MoE)Config, MistralConfig,
MixtralConfig, Gemma2/3Config, Phi3Config, DeepseekV2/V3Config, GptOssConfig, Llama4TextConfig, ...):
hidden size, layers, heads, KV heads / head_dim, intermediate size, vocabulary, tied embeddings, sliding-window /
layer types, MLA ranks, MoE fields, the vision tower of a VLM and the checkpoint's quantization_config, and counts
the parameters from those shapes, module by module as the modelling code builds them:
- attention: q / k / v / o projections (+ biases: Qwen2 q/k/v, `attention_bias` all four), per-head q/k RMSNorm
  (Qwen3, Gemma 3), gpt-oss attention sinks; MLA (DeepSeek-V2/V3, Kimi K2): q_a (h x q_lora) + norm + q_b
  (q_lora x heads x (nope + rope)), kv_a (h x (kv_lora + rope)) + norm + kv_b (kv_lora x heads x (nope + v)), o.
- MLP: gated (gate, up, down: 3 h I) or plain (fc1, fc2: 2 h I, with biases);
  MoE layers: routed experts x 3 h I_e (+ gpt-oss expert biases), shared experts, the router h x E (+ bias).
  Which layers are MoE: DeepSeek `first_k_dense_replace` / `moe_layer_freq`; Qwen `decoder_sparse_step` /
  `mlp_only_layers`; Llama 4 `interleave_moe_layer_step` (dense layers use `intermediate_size_mlp`).
- norms (2 per layer, 4 in Gemma 2/3), the final norm, the embedding and (untied) lm_head.
- Llama 3.2 Vision (Mllama): the `cross_attention_layers` of the text model (counted in num_hidden_layers) add
  q/k norms and two gates each and keep no KV per text token; the vision model has num_global_layers more layers.
- DeepSeek's multi-token-prediction module (`num_nextn_predict_layers`) is counted apart: it is in the checkpoint
  but not in the main model (DeepSeek-V3 README: 671 B main + 14 B MTP = 685 B).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_advisor.errors import WorkloadError

# model types whose MLP is fc1 -> GELU -> fc2 (not gated) and whose norms are LayerNorm with a bias
PLAIN_MLP = {"phi", "gpt2", "gpt_neox", "falcon", "gpt_bigcode", "starcoder2", "bert", "roberta", "xlm-roberta",
             "gptj", "opt", "stablelm_alpha"}
# tie_word_embeddings default of the config class when the file does not say (PretrainedConfig default is True;
# these classes default to False)
UNTIED_DEFAULT = {"llama", "llama4_text", "llama4", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "mistral", "mixtral",
                  "phi3", "deepseek_v2", "deepseek_v3", "kimi_k2", "gpt_oss", "internlm2", "glm4", "glm4_moe",
                  "qwen2_5_vl", "qwen2_vl", "qwen3_vl_text", "qwen3_vl", "mimo", "minicpm", "yi", "baichuan"}
# encoder models (embedding / reranker / BERT-class): learned absolute positions, token types, embedding LayerNorm,
# the pooler (BertModel / XLMRobertaModel add_pooling_layer=True); estimated as the encoder_nlp family
ENCODERS = {"bert", "roberta", "xlm-roberta", "camembert", "electra", "ernie"}
QKV_BIAS = {"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"}
QK_NORM = {"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "qwen3_vl_text", "qwen3_vl", "qwen3_vl_moe_text", "qwen3_vl_moe"}
FOUR_NORMS = {"gemma2", "gemma3", "gemma3_text"}          # pre/post attention and pre/post feed-forward norms
ALTERNATE_SLIDING = {"gemma2"}                            # every other layer local (transformers Gemma2: even layers)


# What a config.json leaves out takes its config class's default (transformers `*Config.__init__`); Hub configs of
# some families name only what differs (google/gemma-3-*-it's text_config lists hidden / intermediate / layers).
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "sliding_window": 4096, "sliding_window_pattern": 6, "max_position_embeddings": 131_072,
                    "tie_word_embeddings": True},
    "gemma2": {"vocab_size": 256_000, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
               "sliding_window": 4096, "max_position_embeddings": 8192, "tie_word_embeddings": True},
    # transformers LlamaConfig (github.com/huggingface/transformers/blob/008e574391258935f3ecc3035c882e73bbcac419/
    # src/transformers/models/llama/configuration_llama.py): llava-hf/llava-1.5-7b-hf's text_config names only vocab
    # and positions; num_key_value_heads None = num_attention_heads, head_dim None = hidden / heads
    "llama": {"vocab_size": 32_000, "hidden_size": 4096, "intermediate_size": 11_008, "num_hidden_layers": 32,
              "num_attention_heads": 32, "max_position_embeddings": 2048, "tie_word_embeddings": False},
    "siglip_vision_model": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                            "num_attention_heads": 12, "image_size": 224, "patch_size": 16, "num_channels": 3},
}
CLASS_DEFAULTS["gemma3"] = CLASS_DEFAULTS["gemma3_text"]


def _with_defaults(d: dict, model_type: str | None) -> dict:
    base = CLASS_DEFAULTS.get(str(model_type or d.get("model_type") or ""), {})
    return {**base, **{k: v for k, v in d.items() if v is not None}} if base else d


def _first(d: dict, *names: str, default: Any = None) -> Any:
    for n in names:
        if d.get(n) is not None:
            return d[n]
    return default


@dataclass
class Counted:
    """What a config says, counted."""
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    gated: bool
    max_seq: int
    # MoE
    experts: int = 0
    experts_per_tok: int = 0
    moe_intermediate: int = 0
    shared_intermediate: int = 0          # all shared experts of one MoE layer together (I_shared)
    moe_layers: int = 0
    # MLA
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    # sliding window / local attention
    sliding_window: int | None = None
    sliding_layers: int = 0
    cross_attention_layers: int = 0       # Mllama: layers whose attention reads the image's keys / values
    # counts
    embed_params: float = 0.0
    head_params: float = 0.0              # untied lm_head
    layer_params: float = 0.0             # all decoder layers
    routed_expert_params: float = 0.0     # all routed experts of all layers
    final_norm: float = 0.0
    mtp_params: float = 0.0
    vision_params: float = 0.0
    image_tokens_fixed: int | None = None
    image_token_px: int | None = None
    # checkpoint storage (quantization_config)
    weight_format: str = "bf16"
    quantized_params: float = 0.0
    scale_bytes_per_param: float = 0.0
    kept_16bit: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        """Main-model parameters (text model + vision tower; MTP module apart)."""
        return self.embed_params + self.head_params + self.layer_params + self.final_norm + self.vision_params

    @property
    def active(self) -> float:
        """Parameters one token runs through: all but the routed experts it is not sent to."""
        if not self.experts:
            return self.total
        unused = self.routed_expert_params * (1 - self.experts_per_tok / self.experts)
        return self.total - unused - self.vision_params


def text_part(cfg: dict) -> dict:
    """The language model's config: `text_config` / `llm_config` of a VLM, else the file itself."""
    for k in ("text_config", "llm_config", "language_config"):
        if isinstance(cfg.get(k), dict) and (cfg[k].get("hidden_size")
                                             or CLASS_DEFAULTS.get(str(cfg[k].get("model_type")), {}).get("hidden_size")):
            merged = {**{kk: v for kk, v in cfg.items() if kk not in (k, "vision_config")}, **cfg[k]}
            return _with_defaults(merged, cfg[k].get("model_type"))
    return _with_defaults(cfg, cfg.get("model_type"))


def _moe_layer_flags(t: dict, layers: int, experts: int) -> list[bool]:
    if not experts:
        return [False] * layers
    if isinstance(t.get("moe_layers"), list):
        moe = set(t["moe_layers"])
        return [i in moe for i in range(layers)]
    if t.get("interleave_moe_layer_step"):
        step = int(t["interleave_moe_layer_step"])
        return [(i + 1) % step == 0 for i in range(layers)]
    if "first_k_dense_replace" in t or "moe_layer_freq" in t:
        k, freq = int(t.get("first_k_dense_replace") or 0), int(t.get("moe_layer_freq") or 1)
        return [i >= k and i % freq == 0 for i in range(layers)]
    only = set(t.get("mlp_only_layers") or [])
    step = int(t.get("decoder_sparse_step") or 1)
    return [i not in only and (i + 1) % step == 0 for i in range(layers)]


def _sliding(t: dict, mt: str, layers: int) -> tuple[int | None, int]:
    """(window, layers that use it)."""
    window = t.get("sliding_window")
    types = t.get("layer_types")
    if isinstance(types, list) and types:
        n = sum(1 for x in types if x in ("sliding_attention", "local_attention", "chunked_attention"))
        return (int(window) if window and n else None), n
    if not window:
        return None, 0
    if mt in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_5_vl", "qwen2_vl"):
        if not t.get("use_sliding_window"):
            return None, 0          # Qwen2/3 configs carry sliding_window but use_sliding_window is false
        return int(window), max(0, layers - int(t.get("max_window_layers") or 0))
    if mt in ALTERNATE_SLIDING:
        return int(window), (layers + 1) // 2
    pattern = t.get("sliding_window_pattern")
    if pattern:                     # Gemma 3: every `pattern`-th layer global
        return int(window), layers - layers // int(pattern)
    if int(window) >= int(_first(t, "max_position_embeddings", default=0) or 0):
        return None, 0              # a window as long as the context bounds nothing (Phi-3 262144)
    return int(window), layers      # Mistral v0.1: every layer


def _vision_params(v: dict, text_hidden: int) -> tuple[float, str | None]:
    """ViT tower + projector from `vision_config` (patch embedding, blocks, merger); approximate to the biases."""
    if not isinstance(v, dict):
        return 0.0, None
    v = _with_defaults(v, v.get("model_type"))
    hv = int(_first(v, "hidden_size", "embed_dim", "width", default=0) or 0)
    # Mllama's vision model: num_hidden_layers local layers + num_global_layers gated global layers
    depth = int(_first(v, "depth", "num_hidden_layers", "layers", default=0) or 0) + int(v.get("num_global_layers") or 0)
    if not hv or not depth:
        return 0.0, None
    inter = int(_first(v, "intermediate_size", default=4 * hv))
    gated = v.get("hidden_act", "") in ("silu", "swiglu") or v.get("model_type") == "qwen2_5_vl"
    patch = int(_first(v, "patch_size", default=14))
    temporal = int(_first(v, "temporal_patch_size", default=1))
    in_ch = int(_first(v, "in_channels", "num_channels", "in_chans", default=3))
    per_layer = 4 * hv * hv + 4 * hv + (3 if gated else 2) * hv * inter + (0 if gated else inter + hv) + 4 * hv
    merge = int(_first(v, "spatial_merge_size", default=1))
    out = int(_first(v, "out_hidden_size", "projection_dim", default=text_hidden))
    merged = hv * merge * merge
    if v.get("vision_output_dim"):   # Mllama: the projector maps the concatenated layer outputs (vision_output_dim)
        return float(depth * per_layer + in_ch * patch * patch * hv + int(v["vision_output_dim"]) * text_hidden
                     + text_hidden), None
    projector = merged * merged + merged + merged * out + out + 2 * hv
    total = depth * per_layer + in_ch * temporal * patch * patch * hv + projector
    return float(total), None


def image_tokens(cfg: dict) -> tuple[int | None, int | None]:
    """(fixed image tokens per image, pixels per side of one image token for dynamic resolution) of a VLM config:
    Gemma 3 `mm_tokens_per_image`; Qwen2-VL / Qwen2.5-VL / Qwen3-VL / Mistral 3 one token per
    (patch x spatial_merge)^2 pixels of the resized image; LLaVA-style (image_size / patch)^2; (None, None) when the config says neither."""
    v = cfg.get("vision_config")
    if not isinstance(v, dict):
        return None, None
    if cfg.get("mm_tokens_per_image"):
        return int(cfg["mm_tokens_per_image"]), None
    patch = int(_first(v, "patch_size", default=14))
    # Qwen2-VL / Qwen2.5-VL put spatial_merge_size in vision_config; Mistral 3 (Mistral3Config, Pixtral tower) at the
    # top level: its patch merger joins merge x merge patches into one image token
    merge = int(_first(v, "spatial_merge_size", default=0) or cfg.get("spatial_merge_size") or 0)
    if merge:
        return None, patch * merge
    image = v.get("image_size")
    if isinstance(image, int) and image and str(cfg.get("model_type", "")).startswith("llava"):
        return (image // patch) ** 2, None
    return None, None


def _quant(cfg: dict, c: Counted, linear_params: float, expert_linear: float) -> None:
    q = cfg.get("quantization_config") or cfg.get("compression_config")
    if not isinstance(q, dict):
        dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
        c.weight_format = {"float16": "fp16", "float32": "fp32"}.get(dtype, "bf16")
        return
    method = str(q.get("quant_method", "")).lower()
    keep = ", ".join(q.get("modules_to_not_convert") or q.get("ignored_layers") or [])
    if method == "fp8":
        block = q.get("weight_block_size") or [128, 128]
        c.weight_format, c.quantized_params = "fp8", linear_params
        c.scale_bytes_per_param = 4.0 / (block[0] * block[1])        # one fp32 scale_inv per block
        c.kept_16bit = ["embed_tokens", "lm_head", "norms", "MoE router (gate)"]
    elif method == "mxfp4":
        c.weight_format, c.quantized_params = "fp4", expert_linear
        c.scale_bytes_per_param = 1.0 / 32                            # one e8m0 scale per 32 values (OCP MX)
        c.kept_16bit = [keep or "attention, router, embed_tokens, lm_head"]
    elif method in ("awq", "gptq", "marlin"):
        bits, group = int(q.get("bits", q.get("w_bit", 4))), int(q.get("group_size", q.get("q_group_size", 128)) or 128)
        c.weight_format = "int4" if bits == 4 else "int8"
        c.quantized_params = linear_params
        c.scale_bytes_per_param = (2.0 + bits / 8) / group                # fp16 scale + packed zero per group
        c.kept_16bit = ["embed_tokens", "lm_head", "norms"]
    elif method == "bitsandbytes":
        c.weight_format = "nf4" if q.get("load_in_4bit") else "int8"
        c.quantized_params = linear_params
        c.kept_16bit = ["embed_tokens", "lm_head", "norms"]
    else:
        c.notes.append(f"quantization_config quant_method {method!r} not read: weights counted at 16 bit")


# Fields some configs write once per layer (Hunyuan-A13B's moe_topk / num_shared_expert / moe_intermediate_size,
# ERNIE-4.5's moe_num_experts): read as one value when every layer has the same; a list that varies is not derived.
PER_LAYER_LISTS = ("moe_intermediate_size", "moe_topk", "num_shared_expert", "moe_num_experts", "moe_k")


def _per_layer(t: dict) -> dict:
    out = dict(t)
    for name in PER_LAYER_LISTS:
        v = t.get(name)
        if isinstance(v, list):
            if v and all(isinstance(x, int) and not isinstance(x, bool) for x in v) and len(set(v)) == 1:
                out[name] = v[0]
            else:
                raise WorkloadError(
                    f"model: {name} differs between layers ({str(v)[:40]}); a per-layer MoE layout is not derived",
                    f"model：{name} 各层不同（{str(v)[:40]}）；暂不支持逐层不同的 MoE 结构", field="model")
    return out


# Attention the count does not derive: a layer that keeps a fixed-size recurrent state instead of a KV cache
# (Qwen3-Next Gated DeltaNet: 3 of 4 layers, `full_attention_interval` / `linear_*` fields; MiniMax-M1 / Text-01
# lightning attention; Mamba / Jamba / Falcon-H1 / Nemotron-H state-space layers) or keys / values shared across
# layers (Hunyuan `use_cla`), or a different block on each layer (Llama-Nemotron NAS `block_configs`). Counted as plain attention such a config would get wrong weights and a KV cache
# several times too large, so it is refused with the reason.
HYBRID_MODEL_TYPES = {"qwen3_next": "Gated DeltaNet linear attention on 3 of 4 layers",
                      "minimax": "lightning (linear) attention on 7 of 8 layers",
                      "minimax_m1": "lightning (linear) attention on 7 of 8 layers",
                      "minimax_text_01": "lightning (linear) attention on 7 of 8 layers",
                      "jamba": "Mamba state-space layers", "mamba": "Mamba state-space layers",
                      "mamba2": "Mamba-2 state-space layers", "falcon_h1": "Mamba-2 state-space heads",
                      "nemotron_h": "Mamba-2 state-space layers", "bamba": "Mamba-2 state-space layers",
                      "zamba": "Mamba state-space layers", "zamba2": "Mamba-2 state-space layers",
                      "rwkv": "RWKV recurrent layers", "rwkv5": "RWKV recurrent layers"}


def not_derived(cfg: dict) -> str | None:
    """Why the count cannot derive this config's memory (see HYBRID_MODEL_TYPES), or None."""
    t = text_part(cfg)
    mt = str(t.get("model_type") or cfg.get("model_type") or "")
    if mt in HYBRID_MODEL_TYPES:
        return f"{mt}: {HYBRID_MODEL_TYPES[mt]}"
    types = t.get("layer_types")
    if isinstance(types, list) and any(x in ("linear_attention", "mamba", "mamba2", "ssm") for x in types):
        return f"{mt or 'this model'}: linear-attention / state-space layers (layer_types)"
    if t.get("full_attention_interval") or t.get("linear_num_value_heads") or t.get("attn_type_list"):
        return f"{mt or 'this model'}: hybrid linear attention (full_attention_interval / linear_* fields)"
    if isinstance(t.get("block_configs"), list):
        return (f"{mt or 'this model'}: a different block on each layer (NAS block_configs: attention removed or "
                "linear, FFN widths per layer)")
    if t.get("use_cla"):
        return f"{mt or 'this model'}: keys and values shared across layers (cross-layer attention, use_cla)"
    return None


def _refuse_not_derived(cfg: dict) -> None:
    why = not_derived(cfg)
    if why:
        raise WorkloadError(
            f"model: {why}. The memory model counts the same attention block with its KV cache on every layer; "
            "this architecture departs from that (a fixed recurrent state, KV shared across layers or a different "
            "block per layer), which it does not derive, so it is refused rather than estimated as a plain "
            "transformer. Give params_billion for a generic estimate.",
            f"model：{why}。显存模型按每层相同的注意力块及其 KV 缓存计算；该结构与此不同（固定大小的循环状态、跨层共享 KV 或逐层不同的块），"
            "目前无法推导，因此拒绝估算，而不是当作普通 Transformer 估算。可提供 params_billion 作通用估算。",
            field="model")


def count(cfg: dict) -> Counted:
    """Shapes and parameter counts of one config.json (see the module docstring)."""
    _refuse_not_derived(cfg)
    t = _per_layer(text_part(cfg))
    mt = str(t.get("model_type") or cfg.get("model_type") or "")
    hidden = int(_first(t, "hidden_size", "n_embd", "d_model"))
    layers = int(_first(t, "num_hidden_layers", "num_layers", "n_layer"))
    heads = int(_first(t, "num_attention_heads", "n_head", "num_heads"))
    kv = int(_first(t, "num_key_value_heads", "multi_query_group_num", "num_kv_heads", default=heads) or heads)
    hd = int(_first(t, "head_dim", "attention_head_dim", "kv_channels", default=hidden // heads))
    inter = int(_first(t, "intermediate_size_mlp", "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * hidden))
    vocab = int(_first(t, "vocab_size", "padded_vocab_size"))
    tied = bool(_first(t, "tie_word_embeddings", default=mt not in UNTIED_DEFAULT))
    gated = mt not in PLAIN_MLP
    max_seq = int(_first(t, "max_position_embeddings", "seq_length", "n_positions", default=4096))
    c = Counted(mt, hidden, layers, heads, kv, hd, inter, vocab, tied, gated, max_seq)
    experts = int(_first(t, "n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts", default=0) or 0)
    topk = int(_first(t, "num_experts_per_tok", "experts_per_token", "moe_top_k", "num_experts_per_token", "moe_topk",
                      "moe_k", default=0) or 0)
    flags = _moe_layer_flags(t, layers, experts)
    c.experts, c.experts_per_tok, c.moe_layers = experts, topk if experts else 0, sum(flags)
    # in Mixtral / gpt-oss / Llama 4 the expert width is intermediate_size; in DeepSeek / Qwen MoE moe_intermediate_size
    c.moe_intermediate = int(_first(t, "moe_intermediate_size", "intermediate_size", default=inter)) if experts else 0
    if mt.startswith("llama4"):
        c.intermediate = int(_first(t, "intermediate_size_mlp", default=inter))
        c.moe_intermediate = int(t.get("intermediate_size", inter))
    elif experts and not any(not f for f in flags):
        c.intermediate = c.moe_intermediate        # no dense layer: the dense width is the expert's (Mixtral, gpt-oss)
    shared_n = int(_first(t, "n_shared_experts", "num_shared_experts", "num_shared_expert", "moe_num_shared_experts",
                          default=0) or 0)
    if t.get("shared_expert_intermediate_size"):
        c.shared_intermediate = int(t["shared_expert_intermediate_size"])
    elif shared_n:
        c.shared_intermediate = shared_n * c.moe_intermediate
    elif mt.startswith("llama4") and experts:
        c.shared_intermediate = c.moe_intermediate          # Llama4TextMoe.shared_expert (intermediate_size)
    # attention
    c.kv_lora_rank = t.get("kv_lora_rank")
    if c.kv_lora_rank:
        c.q_lora_rank = t.get("q_lora_rank")
        c.qk_rope_head_dim = int(t.get("qk_rope_head_dim") or 64)
        c.qk_nope_head_dim = int(t.get("qk_nope_head_dim") or 128)
        c.v_head_dim = int(t.get("v_head_dim") or 128)
        qk = c.qk_nope_head_dim + c.qk_rope_head_dim
        q_part = (hidden * c.q_lora_rank + c.q_lora_rank + c.q_lora_rank * heads * qk) if c.q_lora_rank else hidden * heads * qk
        attn = (q_part + hidden * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank
                + c.kv_lora_rank * heads * (c.qk_nope_head_dim + c.v_head_dim) + heads * c.v_head_dim * hidden)
        c.head_dim = c.v_head_dim
    else:
        q, kvd = heads * hd, kv * hd
        attn = hidden * q + 2 * hidden * kvd + q * hidden
        if t.get("attention_bias") or not gated:
            attn += q + 2 * kvd + hidden
        elif mt in QKV_BIAS or t.get("qkv_bias") or t.get("add_qkv_bias"):
            attn += q + 2 * kvd
        if mt == "olmo2":
            attn += q + kvd                                 # OLMo 2 q_norm / k_norm over the whole projection
        elif mt in QK_NORM or t.get("use_qk_norm"):
            attn += 2 * hd                                  # per-head q / k RMSNorm (Hunyuan use_qk_norm)
        if mt == "gpt_oss":
            attn += heads                                   # attention sinks, one per head
    norm_w = 2 * hidden if not gated else hidden          # LayerNorm weight + bias, RMSNorm weight
    norms = (4 if mt in FOUR_NORMS else 2) * norm_w
    dense_mlp = (3 * hidden * c.intermediate) if gated else (2 * hidden * c.intermediate + c.intermediate + hidden)
    expert = 3 * hidden * c.moe_intermediate + (3 * c.moe_intermediate + hidden if mt == "gpt_oss" else 0)
    router = hidden * experts + (experts if mt in ("gpt_oss", "deepseek_v3", "kimi_k2", "glm4_moe") else 0)
    shared = 3 * hidden * c.shared_intermediate + (hidden if t.get("shared_expert_intermediate_size") else 0)
    moe_mlp = experts * expert + router + shared
    c.layer_params = float(layers * (attn + norms) + sum(moe_mlp if f else dense_mlp for f in flags))
    if isinstance(t.get("cross_attention_layers"), list):
        # Llama 3.2 Vision (MllamaCrossAttentionDecoderLayer): num_hidden_layers counts them; each has the q/k/v/o
        # projections (k, v over the projected image states), q_norm / k_norm (head_dim) and two scalar tanh gates
        c.cross_attention_layers = len({i for i in t["cross_attention_layers"] if isinstance(i, int) and 0 <= i < layers})
        c.layer_params += float(c.cross_attention_layers * (2 * hd + 2))
    c.routed_expert_params = float(c.moe_layers * experts * expert)
    c.embed_params = float(vocab * hidden)
    if mt in ENCODERS:
        positions = int(t.get("max_position_embeddings") or 512)
        c.embed_params += positions * hidden + int(t.get("type_vocab_size") or 0) * hidden + 2 * hidden
        archs = [str(a) for a in (cfg.get("architectures") or []) if isinstance(a, str)]
        if any(a.endswith("ForSequenceClassification") for a in archs):
            # cross-encoder / reranker (XLMRobertaForSequenceClassification): no pooler (add_pooling_layer=False);
            # the classification head is dense h x h + out_proj h x num_labels, with biases
            labels = len(cfg["id2label"]) if isinstance(cfg.get("id2label"), dict) and cfg["id2label"] else 2
            c.layer_params += hidden * hidden + hidden + hidden * labels + labels
        else:
            c.layer_params += hidden * hidden + hidden             # pooler dense
        c.max_seq = positions - (2 if mt in ("roberta", "xlm-roberta", "camembert") else 0)   # RoBERTa pads offset 2
    c.head_params = 0.0 if tied else float(vocab * hidden)
    c.final_norm = 0.0 if mt in ENCODERS else float(norm_w)   # BERT / XLM-R: LayerNorm inside each layer, none after
    mtp = int(t.get("num_nextn_predict_layers") or 0)
    if mtp:   # DeepSeek-V3 MTP module: a MoE layer, enorm / hnorm, eh_proj (2h -> h), shared_head norm + head, embedding
        c.mtp_params = float(mtp * (attn + norms + moe_mlp + 2 * hidden * hidden + 3 * hidden + 2 * vocab * hidden))
    c.sliding_window, c.sliding_layers = _sliding(t, mt, layers)
    if mt.startswith("llama4") and t.get("attention_chunk_size"):
        c.notes.append(f"Llama 4 chunked attention ({t['attention_chunk_size']} tokens on 3 of 4 layers) is not "
                       "counted as a KV bound: the KV cache is counted for every layer at the full context")
    c.vision_params, _ = _vision_params(cfg.get("vision_config"), hidden)
    c.image_tokens_fixed, c.image_token_px = image_tokens(cfg)
    linear = c.layer_params - layers * norms - c.moe_layers * router
    _quant(cfg, c, linear, c.routed_expert_params)
    return c


MAX_CONFIG_BYTES = 4 * 1024 * 1024     # a config.json is a few KiB; a VLM's with layer lists well under 1 MiB


def load_config(path: str | Path) -> dict:
    """The config.json at ``path`` (a file or a folder holding one); WorkloadError naming the field otherwise."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "config.json"
    try:
        if not p.is_file():          # no devices, pipes or sockets (/dev/zero would never end)
            raise FileNotFoundError(str(p))
        if p.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError(f"larger than {MAX_CONFIG_BYTES // 1024} KiB")
        with p.open("rb") as fh:
            data = json.loads(fh.read(MAX_CONFIG_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError) as exc:
        why = exc.__class__.__name__ if isinstance(exc, OSError) else f"{exc.__class__.__name__}: {str(exc)[:80]}"
        raise WorkloadError(f"model: cannot read the config file {str(p)!r} ({why}); give a "
                            "config.json path, a folder holding one, a Hugging Face model id or a known model name",
                            f"model：无法读取配置文件 {str(p)!r}（{why}）；请提供 config.json 路径、"
                            "包含它的文件夹、Hugging Face 模型 ID 或已知模型名", field="model") from exc
    check_config(data, str(p))
    return data


# the numeric fields the count reads, with the range a real model stays in (a file outside it is refused, not counted)
_RANGES: dict[str, tuple[int, int]] = {
    "hidden_size": (1, 1 << 20), "n_embd": (1, 1 << 20), "d_model": (1, 1 << 20),
    "num_hidden_layers": (1, 10_000), "num_layers": (1, 10_000), "n_layer": (1, 10_000),
    "num_attention_heads": (1, 1 << 16), "n_head": (1, 1 << 16), "num_heads": (1, 1 << 16),
    "num_key_value_heads": (1, 1 << 16), "multi_query_group_num": (1, 1 << 16), "head_dim": (1, 1 << 16),
    "intermediate_size": (1, 1 << 22), "intermediate_size_mlp": (1, 1 << 22), "ffn_hidden_size": (1, 1 << 22),
    "moe_intermediate_size": (1, 1 << 22), "shared_expert_intermediate_size": (0, 1 << 22),
    "vocab_size": (1, 1 << 27), "padded_vocab_size": (1, 1 << 27), "max_position_embeddings": (1, 1 << 30),
    "n_routed_experts": (0, 1 << 16), "num_local_experts": (0, 1 << 16), "num_experts": (0, 1 << 16),
    "num_experts_per_tok": (0, 1 << 16), "experts_per_token": (0, 1 << 16), "n_shared_experts": (0, 1 << 10),
    "first_k_dense_replace": (0, 10_000), "moe_layer_freq": (1, 10_000), "decoder_sparse_step": (1, 10_000),
    "interleave_moe_layer_step": (1, 10_000), "kv_lora_rank": (1, 1 << 20), "q_lora_rank": (1, 1 << 20),
    "qk_rope_head_dim": (0, 1 << 16), "qk_nope_head_dim": (0, 1 << 16), "v_head_dim": (1, 1 << 16),
    "sliding_window": (1, 1 << 30), "sliding_window_pattern": (1, 10_000), "num_nextn_predict_layers": (0, 100),
    "type_vocab_size": (0, 1 << 16), "depth": (1, 10_000), "spatial_merge_size": (1, 64),
    "temporal_patch_size": (1, 64), "out_hidden_size": (1, 1 << 20), "mm_tokens_per_image": (1, 1 << 20),
    "num_global_layers": (0, 10_000), "vision_output_dim": (1, 1 << 22),
}


def _bad_fields(t: dict, prefix: str = "") -> list[str]:
    bad = []
    for name, (lo, hi) in _RANGES.items():
        v = t.get(name)
        if v is None:
            continue
        if name in PER_LAYER_LISTS and isinstance(v, list) and 0 < len(v) <= 10_000:
            v = v[0] if all(x == v[0] for x in v) else v    # one value per layer: count reads it (or refuses a mix)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            bad.append(f"{prefix}{name} = {str(v)[:20]!s} (an integer {lo}..{hi})")
    for name in ("layer_types", "mlp_only_layers", "moe_layers", "cross_attention_layers"):
        v = t.get(name)
        if v is not None and (not isinstance(v, list) or len(v) > 10_000):
            bad.append(f"{prefix}{name} (a list of at most 10000 entries)")
    return bad


def check_config(data: Any, where: str) -> None:
    t = text_part(data) if isinstance(data, dict) and all(
        isinstance(data.get(k), (dict, type(None))) for k in ("text_config", "vision_config")) else None
    missing = [] if t is None else [n for n, alts in (("hidden_size", ("hidden_size", "n_embd", "d_model")),
                                                     ("num_hidden_layers", ("num_hidden_layers", "num_layers", "n_layer")),
                                                     ("num_attention_heads", ("num_attention_heads", "n_head", "num_heads")),
                                                     ("vocab_size", ("vocab_size", "padded_vocab_size")))
                                    if not isinstance(_first(t, *alts), int) or _first(t, *alts) <= 0]
    if t is not None and not missing:
        missing = _bad_fields(t) + (_bad_fields(data["vision_config"], "vision_config.")
                                    if isinstance(data.get("vision_config"), dict) else [])
    if t is None or missing:
        fields = ", ".join(missing[:4]) if missing else "a JSON object"
        raise WorkloadError(f"model: {where} is not a transformer config.json (missing or invalid: {fields})",
                            f"model：{where} 不是 Transformer 的 config.json（缺少或无效：{fields}）", field="model")


def spec_fields(c: Counted) -> dict[str, Any]:
    """TransformerSpec fields (engine/models.py) of a counted config."""
    encoder = c.model_type in ENCODERS
    out: dict[str, Any] = {
        "family": "encoder_nlp" if encoder else "llm", "dropout": encoder, "params_billion": round(c.total / 1e9, 4 if c.total >= 1e9 else 6), "layers": c.layers, "hidden": c.hidden,
        "heads": c.heads, "kv_heads": c.kv_heads, "head_dim": c.head_dim, "intermediate": c.intermediate,
        "vocab": c.vocab, "mlp": "gated" if c.gated else "plain", "tied": c.tied, "max_seq": c.max_seq,
        "model_type": c.model_type,
    }
    if c.kv_lora_rank:
        out.update(kv_lora_rank=c.kv_lora_rank, qk_rope_head_dim=c.qk_rope_head_dim, q_lora_rank=c.q_lora_rank,
                   qk_nope_head_dim=c.qk_nope_head_dim, v_head_dim=c.v_head_dim)
    if c.experts:
        out.update(experts=c.experts, experts_per_tok=c.experts_per_tok, moe_intermediate=c.moe_intermediate,
                   shared_intermediate=c.shared_intermediate, moe_layers=c.moe_layers,
                   active_params_billion=round(c.active / 1e9, 4),
                   routed_expert_params_billion=round(c.routed_expert_params / 1e9, 4))
    if c.sliding_window and c.sliding_layers:
        out.update(sliding_window=c.sliding_window, sliding_layers=c.sliding_layers)
    if c.cross_attention_layers:
        out["cross_attention_layers"] = c.cross_attention_layers
    if c.mtp_params:
        out["mtp_params_billion"] = round(c.mtp_params / 1e9, 4)
    if c.vision_params:
        out["vision_params_billion"] = round(c.vision_params / 1e9, 4)
        if c.image_tokens_fixed:
            out["image_tokens_per_image"] = c.image_tokens_fixed
        if c.image_token_px:
            out["image_token_px"] = c.image_token_px
    if c.weight_format not in ("bf16", "fp16", "fp32"):
        out.update(weight_format=c.weight_format, quantized_params_billion=round(c.quantized_params / 1e9, 4),
                   scale_bytes_per_param=round(c.scale_bytes_per_param, 8), kept_16bit=c.kept_16bit)
    if c.notes:
        out["notes"] = list(c.notes)
    return out


def within(counted_b: float, stated_b: float) -> float:
    """Relative difference of a counted and a stated parameter count."""
    return abs(counted_b - stated_b) / stated_b if stated_b > 0 and math.isfinite(counted_b) else math.inf
