"""Transformer (LLM / BERT-class) memory: model states, activations (Korthikanti et al. 2205.05198), KV cache.

Activations: the tensors autograd keeps per layer per token, in 16-bit values, counted op by op for a
pre-norm block (HF transformers LlamaDecoderLayer / torchtune TransformerSelfAttentionLayer / litgpt Block):
- always (once the residual stream requires grad): each norm's input (RMSNorm upcasts to fp32 and saves that
  copy = 2h per norm; LayerNorm saves its 16-bit input = h); attention (SDPA flash / memory-efficient, FA2)
  keeps q, k, v and its output, with GQA k and v expanded to all query heads (HF `repeat_kv`, torchtune
  `MultiHeadAttention` expand) = 4 x heads x head_dim; the MLP's nonlinearity keeps its input, and in a gated
  MLP the product keeps both factors (gate, SiLU(gate), up = 3I; plain GELU MLP = I).
- a linear layer keeps its input only when its weight needs a gradient (autograd saves an operand only for an
  input that requires grad): full fine-tuning keeps every linear input (norm outputs h + h, attention output
  reshaped for o_proj, MLP product I) and each norm's normalised tensor for the norm weight's gradient (h each);
  LoRA keeps the inputs of the adapted linears only (lora_A saves x; lora_B saves r values); bitsandbytes 4-bit
  layers (QLoRA) keep every input, adapted or not (bitsandbytes MatMul4Bit.forward: ctx.tensors = (A, B)).
Full fine-tuning of a Llama block is thus 11h + 2q + 4I values per token (Korthikanti's 34 s b h bytes is
17h values for a GPT block with 4h MLP and dropout). Eager attention (PyTorch < 2.0) adds 5*a*s bytes
per token per layer (Korthikanti). Full recomputation keeps the layer input (h per token per layer) plus one
layer's activations during recompute.
Logits (HF ForCausalLMLoss, torchtune): 16-bit logits returned with the outputs (2 B per element) + the fp32
log-softmax output cross_entropy saves (4 B); PyTorch <= 1.10 also kept log_softmax's fp32 input (+4 B,
pytorch#64000). Start of backward: the log-probs' gradient and the logits' fp32 gradient (8 B per element).
Chunked cross-entropy (Workload.chunked_loss; torchtune CEWithChunkedOutputLoss with 8 chunks): the recipe drops
the 16-bit logits before backward (`del logits`) and each chunk's fp32 upcast is freed after its log-softmax, so
only the fp32 log-probs stay (4 B per element) and the backward gradients live one chunk at a time (8 B / 8).
Activation offloading (Workload.activation_offloading; torchtune enable_activation_offloading, Unsloth
use_gradient_checkpointing="unsloth"): the layers' saved tensors (with checkpointing: the layer inputs) live in CPU
memory; the GPU keeps one layer's activations and the loss's tensors.
Sequence parallelism (settings["sequence_parallel"] = sp, set by the planner's ladder step; DeepSpeed-Ulysses, Jacobs et
al. 2023, arXiv:2309.14509 sec. 3): each GPU holds 1/sp of every sequence's tokens outside attention and all tokens of
heads/sp heads inside it, the same number of values per GPU, so activations, logits and the loss's buffers count
tokens / sp; the model states are unchanged (ZeRO-3 over the same GPUs shards them).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_advisor.memory.settings import Resolved
from gpu_advisor.memory.states import SHARD_GRAD, SHARD_OPT, SHARD_WEIGHTS, StateBytes, model_states, torch_at_most
from gpu_advisor.kb.models import TransformerSpec, knowledge

NF4_BYTES = 0.5 + 0.0156   # 4-bit values + double-quantized absmax (Dettmers et al. 2305.14314 §3: 0.127 bit/param)
INT8_BYTES = 1.0 + 0.0078
LOSS_CHUNKS = 8             # torchtune CEWithChunkedOutputLoss(num_output_chunks=8)
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


def split_params(t: TransformerSpec, untie: bool = False) -> tuple[float, float]:
    """(embedding + lm_head params, transformer-block params) from the published total. untie: the framework
    keeps lm_head as its own copy of a tied embedding (litgpt, see _untied)."""
    embed = t.vocab * t.hidden * (1 if t.tied else 2)
    total = t.params_billion * 1e9
    blocks = max(total - embed, total * 0.3)
    return float(embed + (t.vocab * t.hidden if untie and t.tied else 0)), blocks


def _untied(t: TransformerSpec, s: dict) -> bool:
    """litgpt's GPT has its own lm_head and wte; convert_hf_checkpoint fills a missing lm_head.weight with
    transformer.wte.weight (litgpt/scripts/convert_hf_checkpoint.py, copy_weights_hf_llama / copy_weights_gemma_2),
    so a tied model (Gemma, Llama 3.2) trains with two vocab x hidden matrices."""
    return s.get("framework") == "litgpt" and t.tied


ALL_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")   # "all linear layers" of a block (PEFT "all-linear")


def _attn_matrices(t: TransformerSpec) -> dict[str, list[tuple[int, int]]]:
    """Attention projections per layer by LoRA target. MLA (DeepSeek-V2/V3): q = q_a + q_b (or q_proj without
    q_lora_rank), k = kv_a_proj_with_mqa, v = kv_b_proj (PEFT target names of DeepseekV3Attention)."""
    if t.kv_lora_rank:
        rope, nope, vd = t.qk_rope_head_dim or 64, t.qk_nope_head_dim or 128, t.v_head_dim or t.head_dim
        qk = t.heads * (nope + rope)
        q = [(t.hidden, t.q_lora_rank), (t.q_lora_rank, qk)] if t.q_lora_rank else [(t.hidden, qk)]
        return {"q": q, "k": [(t.hidden, t.kv_lora_rank + rope)], "v": [(t.kv_lora_rank, t.heads * (nope + vd))],
                "o": [(t.heads * vd, t.hidden)]}
    q, kv = t.heads * t.head_dim, t.kv_heads * t.head_dim
    return {"q": [(t.hidden, q)], "k": [(t.hidden, kv)], "v": [(t.hidden, kv)], "o": [(q, t.hidden)]}


def _mlp_matrices(t: TransformerSpec, width: int, copies: int = 1) -> dict[str, list[tuple[int, int]]]:
    mats = {"up": [(t.hidden, width)] * copies, "down": [(width, t.hidden)] * copies}
    if t.mlp == "gated":
        mats["gate"] = [(t.hidden, width)] * copies
    return mats


def _layer_matrices(t: TransformerSpec) -> dict[str, tuple[int, int]]:
    """One (dense) layer's linear layers by LoRA target name (the first matrix of each)."""
    mats = {k: v[0] for k, v in _attn_matrices(t).items()}
    mats.update({k: v[0] for k, v in _mlp_matrices(t, t.intermediate).items()})
    return mats


def _targets(s: dict) -> tuple[str, ...]:
    return tuple(s.get("lora_targets") or ALL_TARGETS)


def _moe_layer_mats(t: TransformerSpec) -> dict[str, list[tuple[int, int]]]:
    """A MoE layer's MLP linears: every routed expert (HF Qwen3MoE / Mixtral / DeepseekV3 experts are nn.Linear
    modules, so PEFT's gate_proj / up_proj / down_proj / all-linear targets adapt each of them) + the shared experts."""
    mats = _mlp_matrices(t, t.moe_intermediate, t.experts)
    if t.shared_intermediate:
        for k, v in _mlp_matrices(t, t.shared_intermediate).items():
            mats[k] = mats[k] + v
    return mats


def lora_params(t: TransformerSpec, rank: int, targets: tuple[str, ...] = ALL_TARGETS) -> float:
    """Adapters r x (d_in + d_out) per adapted matrix per layer (Hu et al. 2106.09685); lm_head once. MoE layers:
    an adapter on every expert's adapted matrices."""
    def per(mats: dict[str, list[tuple[int, int]]]) -> float:
        return sum(rank * (a + b) for name, ms in mats.items() if name in targets for a, b in ms)
    attn = per(_attn_matrices(t))
    dense = per(_mlp_matrices(t, t.intermediate))
    moe_layers = t.moe_layers if t.experts else 0
    moe = per(_moe_layer_mats(t)) if moe_layers else 0.0
    head = rank * (t.hidden + t.vocab) if "lm_head" in targets else 0
    return float(t.layers * attn + (t.layers - moe_layers) * dense + moe_layers * moe + head)


def _attn_values(t: TransformerSpec) -> tuple[float, float]:
    """(values attention keeps per token whatever trains, the attention output o_proj reads). GQA: q, k, v and the
    output at heads x head_dim (k / v expanded). MLA (DeepseekV3Attention): q and k at heads x (nope + rope), v and the
    output at heads x v_head_dim, plus the compressed latents (q_a output, kv_a output incl. the rope key) with their
    RMSNorm's fp32 input copy (2 values) and normalised output (1)."""
    if t.kv_lora_rank:
        rope, nope, vd = t.qk_rope_head_dim or 64, t.qk_nope_head_dim or 128, t.v_head_dim or t.head_dim
        out = t.heads * vd
        latent = 3.0 * (t.kv_lora_rank + rope + (t.q_lora_rank or 0))
        return 2.0 * t.heads * (nope + rope) + 2.0 * out + latent, float(out)
    q = t.heads * t.head_dim
    return 4.0 * q, float(q)


def _mlp_values(t: TransformerSpec, keeps, gated: bool) -> tuple[float, float]:
    """(dense layer, MoE layer) MLP values per token. A MoE layer (HF Qwen3MoeSparseMoeBlock / MixtralSparseMoeBlock /
    DeepseekV3MoE): the router's logits and the fp32 softmax (2 values per expert), then per routed expert (top-k) the
    token's gathered copy (`hidden_states[top_x]`, kept when the expert's gate/up keep their input), gate, act(gate), up
    (3 I_e), the product (down's input) and the expert output kept by the routing-weight product (h); the shared
    experts as a dense MLP of width I_shared."""
    h, inter = t.hidden, t.intermediate

    def dense(width: int) -> float:
        v = (3 * width if gated else width)
        if keeps("down"):
            v += width
        return v
    base = dense(inter)
    if not t.experts or not t.moe_layers:
        return base, base
    k, w = t.experts_per_tok, t.moe_intermediate
    per_expert = dense(w) + h + (h if any(keeps(m) for m in ("gate", "up")) else 0)
    moe = 2.0 * t.experts + k * per_expert + (dense(t.shared_intermediate) if t.shared_intermediate else 0)
    return base, moe


def _per_token_layer_values(t: TransformerSpec, s: dict | None = None) -> float:
    """16-bit values saved for backward per token per layer (see the module docstring); MoE: the mean over dense and
    MoE layers."""
    s = s or {}
    h = t.hidden
    gated = t.mlp == "gated"
    full = s.get("finetune_method") not in ("lora", "qlora")
    # torchtune's NF4 base layers (torchao linear_nf4 -> LinearNF4.forward) keep only the weight, not the input
    every_input = full or (s.get("quantization") in ("nf4", "int4") and s.get("framework") != "torchtune")
    targets = set(_targets(s))
    keeps = (lambda m: True) if every_input else (lambda m: m in targets)
    norm_in = 2 * h if gated else h                  # RMSNorm keeps an fp32 copy; LayerNorm its 16-bit input
    attn, attn_out = _attn_values(t)
    dense_mlp, moe_mlp = _mlp_values(t, keeps, gated)
    moe_share = (t.moe_layers / t.layers) if t.experts else 0.0
    values = 2 * norm_in + attn + (1 - moe_share) * dense_mlp + moe_share * moe_mlp
    if any(keeps(m) for m in ("q", "k", "v")):
        values += h                                  # norm-1 output, input of q/k/v
    if keeps("o"):
        values += attn_out                           # attention output reshaped for o_proj
    if any(keeps(m) for m in ("gate", "up")):
        values += h                                  # norm-2 output, input of gate/up (fc1) and of the router
    if full:
        values += 2 * h                              # normalised tensors for the two norm weights' gradients
    else:
        adapted = sum(1 for m in _layer_matrices(t) if m in targets)
        if moe_share:                                # lora_A outputs: each routed token passes k experts' adapters
            mlp_adapted = sum(1 for m in ("gate", "up", "down") if m in targets)
            adapted += moe_share * mlp_adapted * (t.experts_per_tok + (1 if t.shared_intermediate else 0) - 1)
        values += (s.get("lora_rank") or 16) * adapted
    return values + (h if t.dropout else 0)


def _activations(t: TransformerSpec, s: dict, tokens: int) -> tuple[float, float, float]:
    """(activations, start-of-backward transient, bytes per token per layer)."""
    act_b = 4.0 if s["precision"] == "fp32" else 2.0
    per_tok = _per_token_layer_values(t, s) * act_b
    if torch_at_most(s["pytorch_version"], 1, 13):
        per_tok += 5.0 * t.heads * s["seq_len"] * (act_b / 2.0)
    if s.get("activation_offloading"):
        # torchtune OffloadActivations (training/_activation_offloading.py: a saved_tensors_hooks context around the
        # model's forward) moves every saved tensor over 1 KiB to CPU and brings it back for its layer's backward;
        # Unsloth's "unsloth" checkpointing moves each checkpointed layer input to CPU. What stays on the GPU is the
        # layer being recomputed / back-propagated (the loss runs outside the model's forward and is not offloaded)
        layers = tokens * per_tok
    elif s.get("gradient_checkpointing"):
        layers = t.layers * tokens * t.hidden * act_b + tokens * per_tok
    else:
        layers = t.layers * tokens * per_tok
    lm = t.family == "llm" and t.role is None       # an embedding / reranker model pools, it computes no vocab logits
    chunked = bool(s.get("chunked_loss"))
    logit_b = (0.0 if chunked else act_b) + 4.0 + (4.0 if torch_at_most(s["pytorch_version"], 1, 10) else 0.0)
    logits = tokens * t.vocab * logit_b if lm else 0.0
    transient = tokens * t.vocab * 8.0 / (LOSS_CHUNKS if chunked else 1) if lm else tokens * t.hidden * 4.0
    return layers * knowledge().calibration.get("llm", 1.0) + logits, transient, per_tok


def kv_bytes_per_token_layer(t: TransformerSpec, bytes_per: float = 2.0) -> float:
    """KV-cache bytes one token keeps in one layer: K and V at kv_heads x head_dim (GQA / MQA); MLA the compressed
    latent + the RoPE key, kv_lora_rank + qk_rope_head_dim (DeepSeek-V2 2405.04434 §2.1, vLLM MLA backend)."""
    if t.kv_lora_rank:
        return float((t.kv_lora_rank + (t.qk_rope_head_dim or 0)) * bytes_per)
    return float(2 * t.kv_heads * t.head_dim * bytes_per)


def kv_layers(t: TransformerSpec) -> int:
    """Layers that keep K and V for every text token: all but Mllama's cross-attention layers (their keys and values
    are the image's, transformers MllamaTextCrossAttention: k_proj / v_proj over cross_attention_states)."""
    return t.layers - t.cross_attention_layers


def kv_cache_bytes(t: TransformerSpec, tokens: int, bytes_per: float = 2.0, seq_len: int | None = None) -> float:
    """K and V for every self-attention layer and token. Sliding-window layers keep at most `sliding_window` tokens of
    each sequence (seq_len: tokens per sequence; tokens / seq_len sequences)."""
    per = kv_bytes_per_token_layer(t, bytes_per)
    if t.sliding_window and t.sliding_layers and seq_len:
        seqs = tokens / seq_len
        local = min(seq_len, t.sliding_window)
        return float(per * seqs * ((kv_layers(t) - t.sliding_layers) * seq_len + t.sliding_layers * local))
    return float(kv_layers(t) * tokens * per)


# serving weight bytes per parameter by format: int4 / nf4 as QLoRA's NF4 (4 bit + double-quantised absmax), int8
# with a per-row scale, fp8 one byte (per-tensor / per-channel scales), fp4 as MXFP4 (4 bit + one e8m0 scale per 32
# values, OCP Microscaling spec v1.0)
SERVE_BYTES = {"nf4": NF4_BYTES, "int4": NF4_BYTES, "int8": INT8_BYTES, "fp8": 1.0, "fp4": 0.5 + 1.0 / 32}
# the value bytes of a published quantized checkpoint (its scales come from the profile's scale_bytes_per_param)
CHECKPOINT_BYTES = {"fp8": 1.0, "int8": 1.0, "fp4": 0.5, "int4": 0.5, "nf4": 0.5}
KV_BYTES = {"fp8": 1.0, "bf16": 2.0, "fp16": 2.0}


def serving_weight_bytes(t: TransformerSpec, quant: str, precision: str) -> float:
    """Weights as served: the published quantized checkpoint (its quantized parameters at their format + scales, the
    rest 16-bit) when `quant` is its format; else block linears at `quant` and embeddings / lm_head 16-bit; else all
    at the precision."""
    params = t.params_billion * 1e9
    if quant != "none" and quant == t.weight_format and t.quantized_params_billion:
        q = t.quantized_params_billion * 1e9
        return q * (CHECKPOINT_BYTES[quant] + t.scale_bytes_per_param) + (params - q) * 2.0
    if quant in SERVE_BYTES:
        embed, blocks = split_params(t)
        return embed * 2.0 + blocks * SERVE_BYTES[quant]
    return params * (4.0 if precision == "fp32" else 2.0 if precision != "fp8" else 1.0)


def kv_dtype_bytes(s: dict) -> float:
    return KV_BYTES.get(s.get("kv_cache_dtype") or "auto", 4.0 if s.get("precision") == "fp32" else 2.0)


def _frozen_bytes(t: TransformerSpec, s: dict) -> float | None:
    method, quant = s.get("finetune_method"), s.get("quantization", "none")
    if method not in ("lora", "qlora"):
        return None
    embed, blocks = split_params(t, _untied(t, s))
    base = {"nf4": NF4_BYTES, "int4": NF4_BYTES, "int8": INT8_BYTES}.get(quant, 4.0 if s["precision"] == "fp32" else 2.0)
    if s.get("framework") == "litgpt" and quant != "none":
        # Lightning BitsandbytesPrecision.convert_module replaces every torch.nn.Linear, lm_head included (litgpt
        # finetune/lora.py passes no ignore_modules): only the wte embedding stays 16-bit
        head = t.vocab * t.hidden
        return ((embed - head) * 2.0 + (blocks + head) * base) / (embed + blocks)
    return (embed * 2.0 + blocks * base) / (embed + blocks)


def litgpt_4bit_carry(t: TransformerSpec, s: dict, tokens: int) -> float:
    """litgpt QLoRA: bytes alive at the end of a forward besides that step's own tensors.
    - The previous step's 4-bit layer inputs. bitsandbytes MatMul4Bit.forward stores `ctx.tensors = (A, B)` on the
      ctx (not save_for_backward), which backward does not free; litgpt finetune/lora.py fit() keeps `logits`
      (and through it the whole graph) bound until the next `logits = model(...)` returns. Per token per layer:
      the qkv input (h), attention output for proj (q), MLP input (h), MLP product for proj (I); once: lm_head's
      input (h). The worst case is a previous micro-batch as long as this one.
    - lm_head is 4-bit too (see _frozen_bytes) and is dequantized at the end of the forward: Lightning's
      _Linear4bit.quantize stores fp16 (`weight.to(torch.half)`), MatMul4Bit casts the dequantized copy to the
      input dtype, so vocab x hidden x (2 + 2) bytes."""
    h, q, inter = t.hidden, t.heads * t.head_dim, t.intermediate
    carried = (t.layers * (2 * h + q + inter) + h) * tokens * 2.0
    return carried + t.vocab * t.hidden * 4.0


def expert_share(t: TransformerSpec, s: dict, params: float) -> float:
    """Fraction of the parameters one GPU holds under expert parallelism: the routed experts split over
    `expert_parallel` GPUs, everything else (attention, dense and shared MLPs, router, embeddings) on each."""
    ep = int(s.get("expert_parallel") or 1)
    if ep <= 1 or not t.experts or not t.routed_expert_params_billion or params <= 0:
        return 1.0
    routed = t.routed_expert_params_billion * 1e9
    return (params - routed * (1 - 1 / min(ep, t.experts))) / params


def _expert_split(t: TransformerSpec, s: dict, st: StateBytes, params: float) -> StateBytes:
    """Model states per GPU under expert parallelism. A state ZeRO / FSDP already shards over all n GPUs stays 1/n:
    the routed experts are split over `expert_parallel` GPUs and sharded over the n / expert_parallel replicas of each
    (DeepSpeed-MoE expert-data-parallel groups), 1/n again. A replicated state keeps every non-expert parameter and
    1/expert_parallel of the routed experts (LoRA adapters the same way). The layers gathered in flight under ZeRO-3 /
    FSDP hold this GPU's experts only (an expert-parallel group all-gathers its own experts' shards), so they shrink by
    the same share."""
    f = expert_share(t, s, params)
    if f == 1.0:
        return st
    n, dist = max(1, int(s.get("num_gpus", 1))), s.get("distributed", "none")
    sharded = lambda group: n > 1 and dist in group   # noqa: E731
    return StateBytes(st.weights if sharded(SHARD_WEIGHTS) else st.weights * f,
                      st.gradients if sharded(SHARD_GRAD) else st.gradients * f,
                      st.optimizer if sharded(SHARD_OPT) else st.optimizer * f,
                      st.master_weights if sharded(SHARD_OPT) else st.master_weights * f,
                      st.ddp_buckets * f, st.gathered * f)


def text_training(r: Resolved) -> TextParts:
    t, s = r.transformer, r.settings
    assert t is not None
    untie = _untied(t, s)
    params = t.params_billion * 1e9 + (t.vocab * t.hidden if untie else 0)
    # a contrastive embedder / reranker sample is a query with its passages: sequences_per_sample sequences through
    # the encoder (engine/memory/jobdefaults.py EMBEDDER_RECIPE); 1 for every other model
    tokens = s["batch_size_per_gpu"] * s["seq_len"] * int(s.get("sequences_per_sample") or 1)
    frozen = _frozen_bytes(t, s)
    trainable = lora_params(t, s.get("lora_rank") or 16, _targets(s)) if frozen is not None else params
    states = _expert_split(t, s, model_states(params, trainable, frozen, s, True, split_params(t, untie)[1] / t.layers),
                           params)
    sp = int(s.get("sequence_parallel") or 1)
    act_tokens = -(-tokens // sp) if sp > 1 else tokens   # the tokens whose activations this GPU keeps
    act, transient, per_tok = _activations(t, s, act_tokens)
    if s.get("quantization") in ("nf4", "int4", "int8"):
        # one dequantized 16-bit copy of the largest matrix (bitsandbytes dequantize_4bit, forward and backward);
        # it is alive inside a layer's matmul, not together with the loss's gradients
        transient = max(transient, t.hidden * t.intermediate * 2.0)
        if s.get("framework") == "litgpt" and s.get("quantization") in ("nf4", "int4"):
            transient = max(transient, litgpt_4bit_carry(t, s, tokens))
    return TextParts(states, act, transient, 0.0, params, trainable, act_tokens, per_tok)


def text_inference(r: Resolved) -> TextParts:
    t, s = r.transformer, r.settings
    assert t is not None
    params = t.params_billion * 1e9
    weights = serving_weight_bytes(t, s.get("quantization", "none"), s["precision"])
    n, dist = max(1, s.get("num_gpus", 1)), s.get("distributed", "none")
    ep = int(s.get("expert_parallel") or 1)
    if ep > 1 and t.experts:
        # vLLM --enable-expert-parallel: the routed experts split over `ep` GPUs, the rest tensor-parallel over all n
        x = t.routed_expert_params_billion / t.params_billion          # routed-expert share of the parameters
        weights = weights * ((1 - x) / n + x / ep)
    else:
        weights = weights / n if n > 1 and dist != "ddp" else weights
    tokens = s["batch_size_per_gpu"] * s["seq_len"]
    if t.family == "encoder_nlp" or t.role is not None:
        # an encoder (or a decoder used as an embedding model) (embedding, reranker, classifier) runs one forward pass over the whole batch: no KV cache and no
        # decode steps, no chunked prefill (sentence-transformers / TEI encode a batch at once); one layer's input,
        # q / k / v, attention output and MLP intermediate (fc1 and GELU outputs; gated: gate, up, SiLU) are alive, with
        # SDPA / flash attention keeping no seq x seq score matrix (PyTorch scaled_dot_product_attention); the pooled
        # output replaces the vocabulary logits
        act_b = 4.0 if s["precision"] == "fp32" else 2.0
        act = tokens * (5 * t.hidden + (3 if t.mlp == "gated" else 2) * t.intermediate) * act_b   # gated: gate, up, act
        return TextParts(StateBytes(weights, 0.0, 0.0, 0.0, 0.0, 0.0), act, 0.0, 0.0, params, 0.0, tokens, 0.0)
    kv = kv_cache_bytes(t, tokens, kv_dtype_bytes(s), s["seq_len"]) / (n if n > 1 and dist != "ddp" else 1)
    live = min(tokens, PREFILL_CHUNK)
    # MoE: a prefill token runs top-k experts (+ shared ones): that width stands for the dense layer's
    width = max(t.intermediate, t.experts_per_tok * t.moe_intermediate + t.shared_intermediate) if t.experts else t.intermediate
    act = live * (4 * t.hidden + 3 * width) * 2.0 + s["batch_size_per_gpu"] * t.vocab * 4.0
    states = StateBytes(weights, 0.0, 0.0, 0.0, 0.0, 0.0)
    return TextParts(states, act, 0.0, kv, params, 0.0, tokens, 0.0)
