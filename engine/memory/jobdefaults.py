"""Fill the job settings the user left out; each filled value becomes one assumption Note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_advisor.kb.confignames import parse as parse_config
from gpu_advisor.util.i18n import note
from gpu_advisor.kb.models import knowledge
from gpu_advisor.workload import Task, Workload

if TYPE_CHECKING:
    from gpu_advisor.memory.settings import Resolved

DEFAULT_TORCH = "2.4"
# A full LLM fine-tune's precision when none is given: the convention of the most common stacks
FULL_FT_PRECISION = "bf16_amp"
FULL_FT_PRECISION_WHY = (
    "bf16 mixed precision with fp32 master weights and fp32 AdamW states (16 bytes per parameter), the convention "
    "of HF Trainer (bf16=True), LLaMA-Factory and DeepSpeed's bf16 mode; pure bf16 (8 bytes per parameter) needs "
    "less memory but is not their default",
    "bf16 混合精度 + fp32 主权重与 fp32 AdamW 状态（每参数 16 字节），即 HF Trainer（bf16=True）、LLaMA-Factory 与 "
    "DeepSpeed bf16 模式的默认做法；纯 bf16（每参数 8 字节）更省显存，但不是这些框架的默认")


# A vision model served with no precision given: FP16, the precision GPU inference services run CNNs and ViTs at
# (TensorRT / ONNX Runtime FP16 engines, torch.autocast); fp32 serving halves to quarters the rate per GPU.
SERVE_FP16_WHY = ("FP16 serving (a TensorRT / ONNX Runtime FP16 engine or torch.autocast), how GPU inference services "
                  "usually run vision models; say fp32 to size fp32 serving",
                  "FP16 推理（TensorRT / ONNX Runtime FP16 引擎或 torch.autocast），GPU 推理服务运行视觉模型的常用精度；"
                  "按 fp32 部署请说明 fp32")


def _pick(r: Resolved, fld: str, given: object, default: object, en: str, zh: str) -> object:
    return given if given is not None else r.assume(fld, default, en, zh)


def _enum(value: object) -> object:
    return getattr(value, "value", value)


def _config_implied(w: Workload) -> dict[str, tuple[object, str, str]]:
    """Settings an OpenMMLab config name given as the model spells out (gpu_advisor.kb.confignames), each with
    its assumption text (en, zh): batch per GPU from "NxbM", crop from "HxW" / "cropN", classes from the dataset
    token, AMP from "amp" / "fp16"."""
    cfg = parse_config(w.model) if w.model else None
    if cfg is None:
        return {}
    src_en, src_zh = f"from the config name {cfg.name!r}", f"取自配置名 {cfg.name!r}"
    out: dict[str, tuple[object, str, str]] = {}
    if cfg.batch_per_gpu:
        out["batch_size_per_gpu"] = (cfg.batch_per_gpu, f"{src_en} (images per GPU)", f"{src_zh}（每卡图像数）")
    if cfg.input_size:
        out["input_size"] = (cfg.input_size, f"{src_en} (crop)", f"{src_zh}（裁剪尺寸）")
    classes = cfg.num_classes(w.task)
    if classes:
        out["num_classes"] = (classes, f"{src_en} (classes of {cfg.dataset})", f"{src_zh}（{cfg.dataset} 的类别数）")
    if cfg.amp:
        out["precision"] = ("fp16_amp", f"{src_en} (amp / fp16: mixed precision)", f"{src_zh}（amp / fp16：混合精度）")
    return out


def _cv_pick(r: Resolved, implied: dict, fld: str, given: object, default: object, en: str, zh: str) -> object:
    if given is None and fld in implied:
        value, en, zh = implied[fld]
        return r.assume(fld, value, en, zh)
    return _pick(r, fld, given, default, en, zh)


def _letterboxed(r: Resolved, frame: tuple, size: tuple) -> None:
    """A served Ultralytics model runs at its own input size, not the camera's: predict and export letterbox every frame
    to imgsz (640 by default, ultralytics/cfg/default.yaml; ultralytics/data/augment.py LetterBox), so a 1080p stream
    costs the FLOPs of a 640 x 640 input. Said as a warning with how to run at the frame's size instead."""
    r.settings["input_size"] = size
    h, w = frame
    ratio = (h * w) / (size[0] * size[1])
    r.warnings.append(note(
        "letterboxed_input",
        f"input_size {h}x{w} is the frame size; Ultralytics predict / export letterbox each frame to imgsz = {size[1]} "
        f"(ultralytics/cfg/default.yaml), so the model runs on {size[0]}x{size[1]}; exporting with imgsz={max(frame)} to "
        f"run at the frame's size costs about {ratio:.1f}x the compute per frame.",
        f"input_size {h}x{w} 是画面尺寸；Ultralytics 推理 / 导出时把每帧 letterbox 缩放到 imgsz = {size[1]}"
        f"（ultralytics/cfg/default.yaml），模型按 {size[0]}x{size[1]} 计算；若以 imgsz={max(frame)} 导出、按原尺寸推理，"
        f"每帧算力约为 {ratio:.1f} 倍。", "input_size", f"{size[0]}x{size[1]}"))


def _cv_fields(w: Workload, r: Resolved, defaults: dict) -> None:
    s, method, bb = r.settings, r.method, r.backbone
    assert method is not None and bb is not None
    if method.train_defaults is not None:
        # the method's own trainer defaults (Ultralytics: ultralytics/cfg/default.yaml), not another codebase's
        own = method.train_defaults
        defaults = {**defaults, "batch": own.batch, "why": own.why}
    why = defaults.get("why", "")
    why_zh = method.train_defaults.why_zh if method.train_defaults is not None else why
    implied = _config_implied(w)
    size = list(method.default_input) if method.default_input else defaults.get("input_size", [512, 512])
    s["input_size"] = tuple(_cv_pick(r, implied, "input_size", w.input_size, tuple(size), f"usual crop ({why})",  # type: ignore[arg-type]
                                     f"常用裁剪尺寸（{why_zh}）"))
    if (not r.training and method.train_defaults is not None and w.input_size is not None and method.default_input
            and max(w.input_size) > max(method.default_input)):
        _letterboxed(r, tuple(w.input_size), tuple(method.default_input))
    s["batch_size_per_gpu"] = _cv_pick(r, implied, "batch_size_per_gpu", w.batch_size_per_gpu, defaults.get("batch", 2),
                                       "usual images per GPU for this task", "该任务每卡常用图像数")
    if method.family != "classification" or w.task == Task.image_classification:
        s["num_classes"] = _cv_pick(r, implied, "num_classes", w.num_classes, defaults.get("num_classes", 19),
                                    "the dataset's usual class count", "数据集常用类别数")
    opt = "adamw" if bb.kind == "transformer" or method.family == "transformer_segmentation" else "sgd_momentum"
    own = method.train_defaults
    if r.training:
        s["optimizer"] = _enum(_pick(r, "optimizer", w.optimizer, own.optimizer if own else opt,
                                     *((f"the trainer's default ({own.why})", f"训练代码的默认值（{own.why_zh}）") if own else
                                       ("usual optimizer for this architecture", "该架构的常用优化器"))))
    serve_why = (SERVE_FP16_WHY if not r.training and not own else None)
    recipe = (bb.train_precision if r.training and not own and method.family == "classification" else None)
    recipe_why = ((f"mixed precision (AMP), the published ImageNet recipe for {bb.display} ({bb.train_precision_source})",
                   f"混合精度（AMP），{bb.display} 公开的 ImageNet 训练配方（{bb.train_precision_source}）")
                  if recipe else None)
    s["precision"] = _enum(_cv_pick(r, implied, "precision", w.precision,
                                    own.precision if own else (recipe or ("fp16_amp" if serve_why else "fp32")),
                                    *((f"mixed precision, the trainer's default ({own.why})",
                                       f"混合精度，训练代码的默认值（{own.why_zh}）") if own else recipe_why or serve_why or
                                      ("fp32 training (MMSeg/MMDet default)", "fp32 训练（MMSeg/MMDet 默认）"))))
    s["gradient_checkpointing"] = _pick(r, "gradient_checkpointing", w.gradient_checkpointing, False,
                                        "off for CV", "CV 任务默认关闭")
    if w.framework is not None:   # "detectron2": FrozenBatchNorm2d backbones (memory.cv, memory.arch)
        s["framework"] = _enum(w.framework)


# Contrastive fine-tuning of a text-embedding / reranker model (FlagEmbedding's recipe, the profile's role_source:
# examples/finetune/embedder and reranker README.md): each training sample is a query with train_group_size passages
# (1 positive + 7 hard negatives); per GPU 2 queries, 512-token queries and passages. A bi-encoder (embedding) runs the
# query and its 8 passages as 9 sequences; a cross-encoder (reranker) runs 8 query+passage sequences of up to
# 512 + 512 tokens. (role: (sequences per sample, sequence length, queries per GPU))
EMBEDDER_RECIPE = {"embedding": (1 + 8, 512, 2), "reranker": (8, 1024, 2)}


def _embedder_fields(w: Workload, r: Resolved) -> None:
    """A contrastive fine-tune of an embedder / reranker: the sequences each sample runs, said as an assumption."""
    s, spec = r.settings, r.transformer
    assert spec is not None and spec.role is not None
    seqs, seq_len, queries = EMBEDDER_RECIPE[spec.role]
    s["seq_len"] = _pick(r, "seq_len", w.seq_len, min(seq_len, spec.max_seq),
                         *(("query and passage length of the contrastive recipe (FlagEmbedding: at most 512 each; "
                            "shorter texts, padded to the batch's longest, take proportionally less)",
                            "对比学习配方的查询与段落长度（FlagEmbedding：各不超过 512；文本更短时按批内最长填充，"
                            "时间与显存按比例减少）") if spec.role == "embedding" else
                           ("query + passage length of one reranker pair (FlagEmbedding: at most 512 + 512)",
                            "重排序模型一对查询+段落的长度（FlagEmbedding：不超过 512 + 512）")))
    s["batch_size_per_gpu"] = _pick(r, "batch_size_per_gpu", w.batch_size_per_gpu, queries,
                                    "queries per GPU of the contrastive recipe (FlagEmbedding per_device_train_batch_size)",
                                    "对比学习配方的每卡查询数（FlagEmbedding per_device_train_batch_size）")
    what_en = (f"{seqs} sequences (the query, 1 positive and {seqs - 2} hard-negative passages)" if spec.role == "embedding"
               else f"{seqs} query+passage sequences (1 positive and {seqs - 1} negatives)")
    what_zh = (f"{seqs} 个序列（查询、1 个正例与 {seqs - 2} 个难负例段落）" if spec.role == "embedding"
               else f"{seqs} 个查询+段落序列（1 个正例、{seqs - 1} 个负例）")
    s["sequences_per_sample"] = r.assume(
        "sequences_per_sample", seqs,
        f"each query (batch_size_per_gpu counts queries) runs {what_en} through the model, as in contrastive "
        f"fine-tuning with FlagEmbedding's recipe (train_group_size 8); activations and compute count every sequence, "
        "the in-batch similarity matrix is negligible",
        f"每个查询（batch_size_per_gpu 按查询计）经过模型 {what_zh}，即 FlagEmbedding 对比学习微调配方"
        f"（train_group_size 8）；激活与计算量按全部序列计，批内相似度矩阵可忽略")


def _text_fields(w: Workload, r: Resolved, defaults: dict) -> None:
    s, spec = r.settings, r.transformer
    assert spec is not None
    enc = spec.family == "encoder_nlp"
    seq_default = 512 if enc else defaults.get("seq_len", 2048)
    if r.training and spec.role is not None:
        _embedder_fields(w, r)
    else:
        from gpu_advisor.kb.models import context_of

        # a same_shape name keeps its own window (LLaMA-7B: 2048 on Llama 2 7B's shapes)
        window = context_of(w.model, spec.key) if w.model and spec.key in knowledge().transformers else spec.max_seq
        s["seq_len"] = _pick(r, "seq_len", w.seq_len, min(seq_default, window or spec.max_seq), "usual sequence length",
                             "常用序列长度")
    if w.input_size is not None and (spec.image_tokens_per_image or spec.image_token_px):
        h, wd = w.input_size
        px = spec.image_token_px
        tokens = spec.image_tokens_per_image or -(-h // px) * -(-wd // px)   # type: ignore[operator]
        how = (f"{tokens} tokens per image (mm_tokens_per_image)" if spec.image_tokens_per_image else
               f"one token per {px}x{px} pixels: {-(-h // px)} x {-(-wd // px)} = {tokens}")   # type: ignore[operator]
        s["seq_len"] = s["seq_len"] + tokens
        r.assume("image_tokens", tokens, f"one {h}x{wd} image per sequence adds {how} to the sequence "
                 f"({s['seq_len']} tokens in all); the vision tower's own activations are not counted",
                 f"每个序列一张 {h}x{wd} 图像，增加 {tokens} 个 token（共 {s['seq_len']} 个）；视觉塔自身的激活未计入")
    if "batch_size_per_gpu" not in s:
        s["batch_size_per_gpu"] = _pick(r, "batch_size_per_gpu", w.batch_size_per_gpu, defaults.get("batch", 1),
                                        *(("usual micro-batch", "常用微批大小") if r.training else
                                          ("sequences served at once (concurrent requests)", "同时处理的序列数（并发请求）")))
    full_ft = w.task == Task.llm_finetune and _enum(w.finetune_method) in (None, "full")
    if full_ft and w.precision is None:
        # HF Trainer (bf16=True) / LLaMA-Factory / DeepSpeed's bf16 section: bf16 autocast over fp32 master weights
        # and fp32 AdamW states (16 B/param); pure bf16 (8 B/param) is the exception, not the convention.
        s["precision"] = r.assume("precision", FULL_FT_PRECISION, FULL_FT_PRECISION_WHY[0], FULL_FT_PRECISION_WHY[1])
    else:
        s["precision"] = _enum(_pick(r, "precision", w.precision, defaults.get("precision", "bf16"),
                                     "usual precision for transformers", "Transformer 常用精度"))
    if not r.training:
        quant = _enum(w.quantization) if w.quantization is not None else None
        published = spec.weight_format if spec.quantized_params_billion else None
        if quant is None and published:
            kept = "; ".join(spec.kept_16bit) or "embeddings, norms"
            s["quantization"] = r.assume(
                "quantization", published,
                f"the published checkpoint's format (config.json quantization_config): "
                f"{spec.quantized_params_billion:g} B parameters at {published}, 16-bit kept for: {kept}",
                f"发布的权重格式（config.json 的 quantization_config）：{spec.quantized_params_billion:g} B 参数为 "
                f"{published}，保持 16 位：{kept}")
        elif quant is None and s["precision"] == "fp8":
            # "fp8 部署": the weights are served at FP8 (1 byte a parameter, SERVE_BYTES), not "unquantized"
            s["quantization"] = _pick(r, "quantization", quant, "none", "no separate weight quantization: the "
                                      "weights are served at the stated FP8 precision (1 byte per parameter)",
                                      "无额外权重量化：权重按所述 FP8 精度部署（每参数 1 字节）")
        else:
            s["quantization"] = _pick(r, "quantization", quant, "none", "unquantized weights", "权重不量化")
        kv = _enum(w.kv_cache_dtype) if w.kv_cache_dtype is not None else None
        if (enc or spec.role is not None) and kv is None:
            s["kv_cache_dtype"] = "auto"    # an encoder keeps no KV cache (one forward pass per batch): nothing to say
        else:
            s["kv_cache_dtype"] = _pick(r, "kv_cache_dtype", kv, "auto", "KV cache in the model's 16-bit dtype",
                                        "KV 缓存使用模型的 16 位精度")
        if spec.mtp_params_billion:
            r.assume("mtp", "not loaded", f"the checkpoint's multi-token-prediction module ({spec.mtp_params_billion:g} B "
                     "parameters) is loaded only for speculative decoding (vLLM --speculative-config); not counted",
                     f"检查点中的多 token 预测模块（{spec.mtp_params_billion:g} B 参数）仅在投机解码时加载，未计入")
        if spec.cross_attention_layers:
            n, of = spec.cross_attention_layers, spec.layers
            r.assume("cross_attention_kv", "not counted",
                     f"{n} of {of} layers cross-attend to the image: they keep no KV per text token (counted on the "
                     f"other {of - n}); their keys and values over an image's tokens (one set per image and sequence) "
                     "are not counted", f"{of} 层中有 {n} 层对图像做交叉注意力：不为文本 token 保存 KV（KV 按其余 "
                     f"{of - n} 层计）；其对图像 token 的键值（每个序列每张图像一份）未计入")
        return
    method = _enum(_pick(r, "finetune_method", w.finetune_method, "full", "full fine-tuning", "全参数微调"))
    s["finetune_method"] = method
    if method in ("lora", "qlora"):
        s["lora_rank"] = _pick(r, "lora_rank", w.lora_rank, 16, "LoRA rank on all linear layers", "LoRA 秩（全部线性层）")
        s["lora_targets"] = _pick(r, "lora_targets", w.lora_targets, ("q", "k", "v", "o", "gate", "up", "down"),
                                  "adapters on every linear layer of the blocks", "适配器作用于各层全部线性层")
    quant_default = "nf4" if method == "qlora" else "none"
    s["quantization"] = _enum(_pick(r, "quantization", w.quantization, quant_default, "base-weight format",
                                    "基座权重格式"))
    s["optimizer"] = _enum(_pick(r, "optimizer", w.optimizer, defaults.get("optimizer", "adamw"), "AdamW",
                                 "AdamW 优化器"))
    if w.chunked_loss:
        s["chunked_loss"] = True
    if w.activation_offloading:
        s["activation_offloading"] = True
    if w.cpu_offload:
        s["cpu_offload"] = True
    if w.framework is not None:
        s["framework"] = _enum(w.framework)
    ckpt_default = bool(defaults.get("checkpointing", not enc))
    s["gradient_checkpointing"] = _pick(r, "gradient_checkpointing", w.gradient_checkpointing, ckpt_default,
                                        "activation checkpointing default for this task", "该任务的激活检查点默认设置")


def fill_settings(w: Workload, r: Resolved) -> None:
    """Fill r.settings from w and the task defaults (knowledge/models/defaults.yaml)."""
    defaults = knowledge().task_defaults.get(w.task.value, {})
    if r.kind == "cv" and w.task in (Task.inference, Task.llm_finetune, Task.llm_pretrain, Task.nlp_finetune):
        # a vision model served (or named under a text task) takes its own task's defaults: a classifier's
        # 224 x 224 ImageNet input, not a segmentation crop
        defaults = knowledge().task_defaults.get("semantic_segmentation", {})
        if r.method is not None and r.method.family == "detection":   # a detector served: COCO's 1333x800, 80 classes
            det = knowledge().task_defaults["object_detection"]
            defaults = {**defaults, **{k: det[k] for k in ("input_size", "num_classes", "why") if k in det}}
        if r.method is not None and r.method.family == "classification":
            defaults = {**defaults, "input_size": knowledge().task_defaults["image_classification"]["input_size"],
                        "why": knowledge().task_defaults["image_classification"]["why"]}
    if r.kind == "cv":
        _cv_fields(w, r, defaults)
    else:
        _text_fields(w, r, defaults)
    s = r.settings
    s["num_gpus"] = _pick(r, "num_gpus", w.num_gpus, 1, "per-GPU estimate for one GPU", "按单卡估算")
    dist_default = "ddp" if s["num_gpus"] > 1 and r.training else "none"
    why = (("DDP when more than one GPU trains", "多卡训练默认 DDP") if r.training else
           ("serving splits a model over GPUs with tensor parallelism, not DDP / ZeRO", "推理用张量并行把模型切到多卡，不用 DDP / ZeRO"))
    s["distributed"] = _enum(_pick(r, "distributed", w.distributed, dist_default, *why))
    s["pytorch_version"] = _pick(r, "pytorch_version", w.pytorch_version, DEFAULT_TORCH, "current PyTorch",
                                 "当前 PyTorch 版本")
    if w.expert_parallel and w.expert_parallel > 1:
        spec = r.transformer
        if spec is not None and spec.experts:
            s["expert_parallel"] = min(w.expert_parallel, spec.experts)
        else:
            r.warnings.append(note("expert_parallel_ignored", f"expert_parallel = {w.expert_parallel} is ignored: "
                                   "the model has no routed experts", f"expert_parallel = {w.expert_parallel} 未使用："
                                   "该模型没有路由专家", "expert_parallel", w.expert_parallel))
    s.setdefault("quantization", "none")
    s["training"] = r.training
