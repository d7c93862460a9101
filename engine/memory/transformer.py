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
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_advisor.memory.settings import Resolved
from gpu_advisor.memory.states import StateBytes, model_states, torch_at_most
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


def _layer_matrices(t: TransformerSpec) -> dict[str, tuple[int, int]]:
    q, kv = t.heads * t.head_dim, t.kv_heads * t.head_dim
    mats = {"q": (t.hidden, q), "k": (t.hidden, kv), "v": (t.hidden, kv), "o": (q, t.hidden),
            "up": (t.hidden, t.intermediate), "down": (t.intermediate, t.hidden)}
    if t.mlp == "gated":
        mats["gate"] = (t.hidden, t.intermediate)
    return mats


def _targets(s: dict) -> tuple[str, ...]:
    return tuple(s.get("lora_targets") or ALL_TARGETS)


def lora_params(t: TransformerSpec, rank: int, targets: tuple[str, ...] = ALL_TARGETS) -> float:
    """Adapters r x (d_in + d_out) per adapted matrix per layer (Hu et al. 2106.09685); lm_head once."""
    mats = _layer_matrices(t)
    per_layer = sum(rank * (a + b) for name, (a, b) in mats.items() if name in targets)
    head = rank * (t.hidden + t.vocab) if "lm_head" in targets else 0
    return float(t.layers * per_layer + head)


def _per_token_layer_values(t: TransformerSpec, s: dict | None = None) -> float:
    """16-bit values saved for backward per token per layer (see the module docstring)."""
    s = s or {}
    h, q, inter = t.hidden, t.heads * t.head_dim, t.intermediate
    gated = t.mlp == "gated"
    full = s.get("finetune_method") not in ("lora", "qlora")
    # torchtune's NF4 base layers (torchao linear_nf4 -> LinearNF4.forward) keep only the weight, not the input
    every_input = full or (s.get("quantization") in ("nf4", "int4") and s.get("framework") != "torchtune")
    targets = set(_targets(s))
    keeps = (lambda m: True) if every_input else (lambda m: m in targets)
    norm_in = 2 * h if gated else h                  # RMSNorm keeps an fp32 copy; LayerNorm its 16-bit input
    values = 2 * norm_in + 4 * q + (3 * inter if gated else inter)
    if any(keeps(m) for m in ("q", "k", "v")):
        values += h                                  # norm-1 output, input of q/k/v
    if keeps("o"):
        values += q                                  # attention output reshaped for o_proj
    if any(keeps(m) for m in ("gate", "up")):
        values += h                                  # norm-2 output, input of gate/up (fc1)
    if keeps("down"):
        values += inter                              # MLP product (or GELU output), input of down (fc2)
    if full:
        values += 2 * h                              # normalised tensors for the two norm weights' gradients
    else:
        values += (s.get("lora_rank") or 16) * sum(1 for m in _layer_matrices(t) if m in targets)
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
    lm = t.family == "llm"
    chunked = bool(s.get("chunked_loss"))
    logit_b = (0.0 if chunked else act_b) + 4.0 + (4.0 if torch_at_most(s["pytorch_version"], 1, 10) else 0.0)
    logits = tokens * t.vocab * logit_b if lm else 0.0
    transient = tokens * t.vocab * 8.0 / (LOSS_CHUNKS if chunked else 1) if lm else tokens * t.hidden * 4.0
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


def text_training(r: Resolved) -> TextParts:
    t, s = r.transformer, r.settings
    assert t is not None
    untie = _untied(t, s)
    params = t.params_billion * 1e9 + (t.vocab * t.hidden if untie else 0)
    tokens = s["batch_size_per_gpu"] * s["seq_len"]
    frozen = _frozen_bytes(t, s)
    trainable = lora_params(t, s.get("lora_rank") or 16, _targets(s)) if frozen is not None else params
    states = model_states(params, trainable, frozen, s, True, split_params(t, untie)[1] / t.layers)
    act, transient, per_tok = _activations(t, s, tokens)
    if s.get("quantization") in ("nf4", "int4", "int8"):
        # one dequantized 16-bit copy of the largest matrix (bitsandbytes dequantize_4bit, forward and backward);
        # it is alive inside a layer's matmul, not together with the loss's gradients
        transient = max(transient, t.hidden * t.intermediate * 2.0)
        if s.get("framework") == "litgpt" and s.get("quantization") in ("nf4", "int4"):
            transient = max(transient, litgpt_4bit_carry(t, s, tokens))
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
