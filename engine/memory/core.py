"""estimate_memory: assemble the per-GPU peak from model states, activations and framework extras."""

from __future__ import annotations

from typing import Any

from gpu_advisor.util.i18n import Note, Text, note
from gpu_advisor.memory.cv import cv_parts
from gpu_advisor.memory.settings import Resolved, resolve
from gpu_advisor.memory.states import StateBytes, torch_at_most
from gpu_advisor.memory.transformer import (kv_bytes_per_token_layer, kv_dtype_bytes, kv_layers, text_inference,
                                            text_training)
from gpu_advisor.memory.types import JobSettings, MemoryEstimate, ProfileInfo
from gpu_advisor.kb.models import knowledge
from gpu_advisor.workload import Workload

GIB = 2.0**30
CUDA_CONTEXT_GIB = 0.5      # CUDA context + kernels: 0.3-1 GB (design notes; PyTorch 2.x on Hopper ~0.5 GiB)
ALLOCATOR_SLACK = 0.10      # caching-allocator reserve over allocated: 5-30 % (design notes), 10 % typical
UPPER_FIXED_GIB = 0.25      # planning estimate: + 0.25 GiB fixed (small-model GPU-side gap, design notes)
SOURCES_COMMON = ["ZeRO (Rajbhandari et al.) arXiv:1910.02054 — bytes per parameter of model states",
                  "PyTorch CUDA caching allocator: https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
                  "pytorch/pytorch#64000 — softmax kept its input for backward until PyTorch 1.11"]
SOURCES_CV = ["MMSegmentation v1.2.2 configs/_base_/models (head shapes)", "MMDetection v3.3.0 configs/_base_/models",
              "PyTorch autograd saved tensors: https://pytorch.org/docs/stable/autograd.html#saved-tensors"]
SOURCES_TEXT = ["Korthikanti et al. 2022, Reducing Activation Recomputation, arXiv:2205.05198",
                "Dettmers et al. 2023, QLoRA, arXiv:2305.14314", "Hu et al. 2021, LoRA, arXiv:2106.09685",
                "bitsandbytes autograd MatMul4Bit.forward (ctx.tensors = (A, B): 4-bit layers keep their input)",
                "transformers LlamaRMSNorm / repeat_kv / ForCausalLMLoss (fp32 norm input, GQA k/v expanded, fp32 logits)",
                "torchtune CEWithChunkedOutputLoss (8 chunks) and MultiHeadAttention (k/v expanded before SDPA)"]


def _gib(x: float) -> float:
    return round(x / GIB, 3)


def _peak(states: StateBytes, grads: float, act: float, transient: float, old: bool) -> tuple[dict[str, float], list[Note]]:
    """Components alive at the peak. PyTorch >= 2.0 frees grads between steps (zero_grad set_to_none)."""
    notes: list[Note] = []
    parts = {"weights": states.weights, "master_weights": states.master_weights, "optimizer": states.optimizer,
             "framework_extras": states.ddp_buckets + states.gathered}
    if old or grads > act + transient:
        parts.update(gradients=grads, activations=act, transient=transient)
        if not old:
            parts.update(activations=0.0, transient=0.0)
            notes.append(note("peak_at_step", "peak is at the optimizer step (gradients exceed activations)",
                              "峰值出现在优化器更新时（梯度大于激活）"))
    else:
        parts.update(gradients=0.0, activations=act, transient=transient)
        notes.append(note("set_to_none", "gradients are freed between steps (zero_grad(set_to_none=True), PyTorch >= 2.0); "
                          "the peak is at the start of backward", "梯度在步间释放（PyTorch >= 2.0 的 set_to_none），峰值在反向开始时"))
    return parts, notes


def planning_margin(family: str) -> float:
    """Multiplier of the planning (upper) estimate for a profile family (knowledge/models/defaults.yaml)."""
    margins = knowledge().planning_margin
    return margins.get(family, margins.get("default", 1.25))


def _finish(parts: dict[str, float], r: Resolved, formula: Text, sources: list[str], info: ProfileInfo,
            flops: tuple[float, float], extra: list[Note]) -> MemoryEstimate:
    breakdown = {k: _gib(v) for k, v in parts.items() if v > 0}
    allocated = round(sum(breakdown.values()), 3)
    gpu = allocated > 0
    breakdown["cuda_context"] = CUDA_CONTEXT_GIB if gpu else 0.0
    breakdown["allocator_slack"] = round(ALLOCATOR_SLACK * allocated, 3)
    breakdown = {k: v for k, v in breakdown.items() if v > 0}
    total = round(allocated + breakdown.get("cuda_context", 0.0) + breakdown.get("allocator_slack", 0.0), 3)
    # serving: the KV cache is the engine's own arithmetic (vLLM allocates blocks of exactly 2 x layers x kv heads x
    # head dim x dtype bytes per token, vllm/v1/kv_cache_interface.py) and the weights are the checkpoint's bytes
    # (the engine loads each tensor once, in its stored dtype: gpt-oss-120b's MXFP4 checkpoint is 65.2 GB = 60.7 GiB
    # and "fits into a single 80GB GPU", OpenAI gpt-oss model card, arXiv:2508.10925), so the family's margin (the
    # spread of measured TRAINING peaks: activations, gradients, transients) is not applied to them; the serving
    # activations and transients keep it
    exact = 0.0 if r.training else breakdown.get("kv_cache", 0.0) + breakdown.get("weights", 0.0)
    upper = round((allocated - exact) * planning_margin(info.family) + exact + UPPER_FIXED_GIB, 3) if gpu else 0.0
    return MemoryEstimate(allocated_peak_gib=allocated, device_total_gib=total, breakdown=breakdown,
                          allocated_upper_gib=upper,
                          assumptions=r.assumptions, warnings=r.warnings + extra, formula=formula,
                          sources=sources, profile=info, train_flops_per_sample=flops[0],
                          infer_flops_per_sample=flops[1])


def _job(r: Resolved) -> JobSettings:
    s = r.settings
    return JobSettings(**{k: s.get(k) for k in ("batch_size_per_gpu", "input_size", "seq_len", "precision", "optimizer",
                                                "finetune_method", "lora_rank", "num_classes", "pytorch_version")},
                       gradient_checkpointing=bool(s.get("gradient_checkpointing")), quantization=s.get("quantization", "none"),
                       distributed=s.get("distributed", "none"), num_gpus=s.get("num_gpus", 1), training=r.training)


def _estimate_cv(r: Resolved) -> MemoryEstimate:
    from gpu_advisor.memory.formula import cv_formula
    p = cv_parts(r)
    old = torch_at_most(r.settings["pytorch_version"], 1, 13)
    parts, notes = _peak(p.states, p.states.gradients, p.activations, p.transient, old or not r.training)
    assert r.method and r.backbone
    info = ProfileInfo(key=f"{r.method.key}+{r.backbone.key}", display=f"{r.method.display} {r.backbone.display}",
                       family=r.method.family, params_billion=round(p.params / 1e9, 5),
                       trainable_params_billion=round(p.params / 1e9, 5) if r.training else 0.0, is_llm=False,
                       method=r.method.key, backbone=r.backbone.key, output_stride=r.output_stride, job=_job(r))
    flops = (3.0 * p.flops_forward, p.flops_forward)
    return _finish(parts, r, cv_formula(r, p, parts), SOURCES_COMMON + SOURCES_CV + [r.method.paper, r.backbone.source],
                   info, flops, notes)


def _matmul_params(t: Any, active: float, training: bool) -> float:
    """Parameters a served token multiplies by: the input embedding table is a lookup (a gather, no FLOPs; Kaplan et
    al. 2020, arXiv:2001.08361 sec. 2.1 count forward compute as 2N with N excluding embeddings). It is left out when
    nothing else uses it: an encoder's (an embedder or reranker has no vocabulary head) and an untied decoder's (its
    LM head is a matrix of its own, counted). A tied decoder's table is also its LM head, so it stays. Training jobs
    keep the 2N of all parameters (lora_factor compares the two)."""
    if training:
        return active
    gather_only = t.family == "encoder_nlp" or t.role is not None or not t.tied
    return max(active * 0.05, active - t.vocab * t.hidden) if gather_only else active


def _estimate_text(r: Resolved) -> MemoryEstimate:
    from gpu_advisor.memory.formula import text_formula
    t = r.transformer
    assert t is not None
    p = text_training(r) if r.training else text_inference(r)
    old = torch_at_most(r.settings["pytorch_version"], 1, 13)
    parts, notes = _peak(p.states, p.states.gradients, p.activations, p.transient, old or not r.training)
    parts["kv_cache"] = p.kv_cache
    active = t.active_params_billion * 1e9 if t.active_params_billion else p.params
    kv_tok = kv_bytes_per_token_layer(t, kv_dtype_bytes(r.settings)) * kv_layers(t) if t.family == "llm" and t.role is None else None
    info = ProfileInfo(key=t.key, display=t.display, family=t.family, params_billion=t.params_billion,
                       trainable_params_billion=round(p.trainable / 1e9, 6), is_llm=t.family == "llm", job=_job(r),
                       active_params_billion=round(active / 1e9, 4), kv_cache_bytes_per_token=kv_tok)
    seq = r.settings["seq_len"]
    # MoE: each token runs its routed experts only, so compute follows the active parameters (weights count all)
    # a contrastive embedder sample (a query with its passages) is sequences_per_sample sequences
    per_sample = seq * int(r.settings.get("sequences_per_sample") or 1) if r.training else seq
    flops = (6.0 * active * per_sample, 2.0 * _matmul_params(t, active, r.training) * seq)
    recipe = [t.role_source] if r.training and t.role_source else []
    return _finish(parts, r, text_formula(r, p, parts), SOURCES_COMMON + SOURCES_TEXT + [t.source, *recipe], info, flops,
                   notes)


def _estimate_none(r: Resolved, w: Workload) -> MemoryEstimate:
    info = ProfileInfo(key="preprocessing", display="CPU preprocessing", family="preprocessing", params_billion=0.0,
                       trainable_params_billion=0.0, is_llm=False,
                       job=JobSettings(batch_size_per_gpu=w.batch_size_per_gpu or 1, precision="fp32",
                                       pytorch_version=w.pytorch_version or "2.4", training=False))
    text = Text(en="preprocessing runs on CPUs: no GPU memory is needed", zh="预处理在 CPU 上运行：不需要 GPU 显存")
    warn = note("no_gpu", text.en, text.zh, "task", "preprocessing")
    return _finish({}, r, text, [], info, (0.0, 0.0), [warn])


def estimate_memory(workload: Workload, sequence_parallel: int = 1) -> MemoryEstimate:
    """Per-GPU memory estimate of ``workload`` (see docs/memory-model.md). ``sequence_parallel``: the planner's
    sequence-parallel degree (ladder.Step.sp; DeepSpeed-Ulysses): each GPU keeps the activations, logits and loss buffers
    of 1/sp of every sequence (an LLM in training; ignored elsewhere)."""
    r = resolve(workload)
    if sequence_parallel > 1 and r.kind == "transformer" and r.training:
        r.settings["sequence_parallel"] = int(sequence_parallel)
    if r.kind == "none":
        return _estimate_none(r, workload)
    return _estimate_cv(r) if r.kind == "cv" else _estimate_text(r)
