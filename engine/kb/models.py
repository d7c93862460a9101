"""Model profiles: load knowledge/models/*.yaml once, resolve user-written names to profiles.

Names arrive in the forms MMSegmentation, MMDetection, Detectron2, timm and Hugging Face use
("DeepLabV3+" + "R-50-D8", "Mask R-CNN" + "R-50-FPN", "meta-llama/Llama-3.1-8B", "SegFormer-B5").
``norm`` folds case and punctuation; an alias index maps folded names to profile keys.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from gpu_advisor.util import yamlio
from gpu_advisor.util.derived import DerivedCache
from gpu_advisor.errors import KnowledgeError, UnknownModelError

_STRICT = ConfigDict(extra="forbid", frozen=True)


class HeadTerm(BaseModel):
    model_config = _STRICT
    stride: int | Literal["out"] = "out"
    # "in" is a Python keyword; YAML uses `in`
    in_mult: float = Field(0.0, alias="in")
    ch: float = 0.0
    abs: float = 0.0


class Attention(BaseModel):
    model_config = _STRICT
    stride: int | Literal["out"] = "out"
    heads: int
    keys: str
    layers: int = 1


class HeadParams(BaseModel):
    model_config = _STRICT
    in_ch: float = 0.0
    ch2: float = 0.0
    abs_m: float = 0.0
    in_sq: bool = False
    per_class_m: float = 0.0      # per-class score convs (millions of params per class, x C or C + 1 with softmax)


class AnchorLoss(BaseModel):
    """Bytes alive at a dense head's loss per prediction point and per point x class, by precision (Ultralytics
    v8DetectionLoss / YOLOv5 ComputeLoss, counted in tools/derive_yolo.py loss_terms)."""
    model_config = _STRICT
    amp_anchor: float
    amp_class: float
    fp32_anchor: float
    fp32_class: float


class TrainDefaults(BaseModel):
    """A method's own training defaults (its codebase's config), used instead of the task's when the user gives none."""
    model_config = _STRICT
    batch: int
    precision: str
    optimizer: str
    epochs: int
    workers: int = 0              # DataLoader workers per GPU the trainer starts (0: not stated)
    why: str
    why_zh: str


class AssumedSize(BaseModel):
    """A family name written without its size ("YOLOv8"): the size sized, and why (an assumption in the answer)."""
    model_config = _STRICT
    size: str
    why: str
    why_zh: str


class BackboneSpec(BaseModel):
    model_config = _STRICT
    key: str
    display: str
    kind: Literal["cnn", "transformer"]
    params_m: float = Field(gt=0)
    out_channels: int
    head_channels: int | None = None
    stem: list[list[float]] = []
    stages: list[list[Any]]
    gflops_224: float = Field(gt=0)  # as published: multiply-accumulates at 224x224 (memory/cv.py _flops doubles it)
    source: str
    aliases: list[str] = []
    # the precision the backbone's published ImageNet classification recipe trains in, when it is not FP32 (the
    # torchvision reference recipes pass --amp for ViT-B and Swin, not for ResNet, ConvNeXt or ViT-L/16): an image
    # classification job with no stated precision is sized and timed in it; train_precision_source cites the recipe
    train_precision: Literal["fp16_amp"] | None = None
    train_precision_source: str | None = None


class MethodSpec(BaseModel):
    model_config = _STRICT
    key: str
    display: str
    family: str
    backbone: str
    output_stride: int
    head: list[HeadTerm]
    head_params: HeadParams
    attention: Attention | None = None
    aux: bool = False
    aux_stride: int | None = None
    loss_heads: int | None = None
    per_class_bytes: bool = True
    seg_loss: Literal["ce", "bce"] = "ce"  # MMSeg CrossEntropyLoss use_sigmoid=True: one-hot BCE per class (Fast-SCNN)
    # input channels of the widest 3x3 decoder conv (in x backbone out + ch x head channels at `stride`): its backward
    # can out-peak the loss, see engine/memory/cv.py head_backward_values
    head_bwd_conv: HeadTerm | None = None
    # fp32 values per pixel at `stride` alive at once while the EncHead Encoding layer runs backward (2 x codes x C:
    # the full-size gradients of the residual tensors, see engine/memory/cv.py encoding_backward_values)
    encoding_bwd: HeadTerm | None = None
    per_image_mb: float = 0.0
    # dense detection heads (RetinaNet/FCOS/SSD/YOLOX/RTMDet) and target assignment, see docs/memory-model.md
    dense_anchors: float = 0.0            # anchors / points per location of the per-class score map
    dense_levels: list[int] = [8, 16, 32, 64, 128]
    dense_softmax: bool = False           # softmax over C + 1 (background) instead of C sigmoids
    cls_score_copies: float | None = None # values kept per anchor x class (None: cv.CLS_SCORE_COPIES; FreeAnchor 6)
    mask_logit_rois: float = 0.0          # positive RoIs per image whose C x side x side mask logits are kept
    mask_logit_side: int = 28             # mask logit resolution (FCNMaskHead / FPN heads 28; C4 heads 14)
    # mask heads trained per step (mmdet CascadeRoIHead: one per stage) and one head's MiB per image within
    # per_image_mb; Detectron2's CascadeROIHeads trains a single mask head (engine/memory/cv.py D2_CASCADE_MASK_HEADS)
    mask_stages: int = 1
    mask_head_mb: float = 0.0
    assign_px: float = 0.0                # anchor (or prior) x GT pairs per input pixel per GT box
    assign_cls: float = 0.0               # extra fp32 values per pair per class (classification cost of OTA-style assigners)
    pair_loss_bytes: float = 0.0          # loss tensors over all (point x GT) pairs kept for backward (AutoAssign), B per pair
    per_gt_mb: float = 0.0                # RoI-head tensors per matched query of the busiest image (QueryInst mask stages), MiB per GT
    grid_mask_bytes: float = 0.0          # SOLO-family dice loss: bytes per positive grid cell's stride-4 mask pixel
    frozen_stem: bool = False
    # normalisation and backbone variants, see docs/memory-model.md "Detection necks, norms and backbone variants"
    norm: Literal["bn", "gn", "gn_ws"] = "bn"   # backbone norm: GroupNorm (+ weight standardisation) instead of frozen BN
    gn_px: float = 0.0                    # GroupNorm output values per input pixel in neck + heads
    gn_in_head: bool = False              # those GN outputs are already counted in `head` (GN towers)
    gn_roi_mb: float = 0.0                # GroupNorm outputs in the RoI heads, MiB per image
    backbone_passes: float = 1.0          # recursive feature pyramid (DetectoRS RFP): backbone + neck run this many times
    sac: bool = False                     # switchable atrous convolution replaces the bottleneck 3x3 convs (DetectoRS)
    context_block: bool = False           # GCNet context block after conv3 of every bottleneck in stages 2-4 (c3-c5)
    # RF-Next (Gao et al. 2206.06637; mmcv RFSearchHook / Conv2dRFSearchOp), docs/memory-model.md "RF-Next":
    rf_search_branches: int = 0           # search mode: dilation branches each k>1 odd Conv2d runs (mmdet configs: 2)
    conv3_px: float = 0.0                 # k>1 odd conv output values per input pixel in neck + dense heads (FPN, RPN)
    conv3_roi_mb: float = 0.0             # k>1 odd conv outputs of the RoI heads, fp32 MiB per image (mask head convs)
    backbone_input_scale: float = 1.0     # the backbone sees the image scaled by this per side (ICNet: 0.5)
    # C4 detectors (Detectron2 Res5ROIHeads, mmdet ResLayer shared head), docs/memory-model.md "C4 and DC5":
    backbone_stages: int | None = None    # stages the backbone runs on the image (C4: 3, res2-res4; None = all)
    roi_stage_rois: float = 0.0           # sampled RoIs per image that run the remaining last stage on pooled features
    backbone_output_stride: int | None = None   # dilated output stride of that backbone pass (ICNet: 16 at half size)
    # DC5 box head (Detectron2 FastRCNNConvFCHead NUM_FC 2 on 7 x 7 crops of the backbone output): sampled RoIs per
    # image and FC_DIM; sizes the fc6 backward transient (engine/memory/cv.py roi_backward_bytes)
    fc_head_rois: float = 0.0
    fc_head_dim: int = 1024
    # semantic (stuff) branch of Panoptic FPN: classes of its per-pixel softmax cross-entropy and the stride the loss
    # runs at (MMDetection PanopticFPNHead seg_rescale_factor 1/4: 4; Detectron2 SemSegFPNHead: full resolution)
    sem_loss_classes: int = 0
    sem_loss_stride: int = 4
    # query-based mask heads and training recipes (docs/memory-model.md "Query mask losses, crop recipes")
    query_mask_layers: int = 0            # decoder layers whose matched masks are upsampled to full resolution for the loss
    crop_recipe: bool = False             # DETR-style random-crop augmentation: batches padded to a square canvas
    # stride of the positions the head's parameters run on, for its FLOPs (None: output_stride / 2, a conv head on
    # the finer pyramid levels); DETR: 32 (the encoder on the C5 tokens, the decoder on 100 queries)
    head_flops_stride: int | None = None
    images_per_sample: float = 1.0        # images through backbone + neck per sample (QDTrack key + reference frame)
    mask_variant: str | None = None
    detection_variant: str | None = None
    # head layout named in the backbone or config name ("R50-C4", "R-50-DC5", "mask_rcnn_R_50_C4_1x") -> method key
    head_variants: dict[Literal["c4", "dc5"], str] = {}
    head_channels: int | None = None
    head_channels_by_backbone: dict[str, int] = {}
    backbone_prefix: str | None = None
    attention_keys_override: str | None = None
    default_input: tuple[int, int] | None = None
    # Ultralytics YOLO (knowledge/models/ultralytics.yaml, generated by tools/derive_yolo.py): loss-phase bytes per
    # prediction point, a batch-wide target assigner (TaskAlignedAssigner pads every image to the batch's most GT
    # boxes), the ModelEMA fp32 copy, the trainer's defaults, the size a bare family name is sized with, and the
    # counted vs published parameters / GFLOPs the tool checked
    anchor_loss: AnchorLoss | None = None
    whole_network: bool = False           # the backbone entry is the whole network (no backbone choice to make)
    calibration: str | None = None        # key of knowledge/models/defaults.yaml calibration (None: cnn / transformer)
    assign_batched: bool = False
    ema_copy: bool = False
    train_defaults: TrainDefaults | None = None
    # mitigation-ladder steps the method's trainer does not offer (engine/plan/ladder.py): Ultralytics' trainer has
    # no gradient-checkpointing or ZeRO / FSDP option (ultralytics/cfg/default.yaml); it accumulates gradients to a
    # nominal batch of 64 (nbs) by itself
    ladder_skip: list[Literal["checkpointing", "sharding"]] = []
    assumed_size: AssumedSize | None = None
    stated_params: float | None = None
    counted_params: float | None = None
    published_gflops: float | None = None
    counted_gflops: float | None = None
    gflops: dict[str, Any] | None = None
    paper: str
    source: str | None = None             # where the counted shapes come from (config / code URL)
    as_of: str | None = None              # date the source was read
    aliases: list[str] = []


class TransformerSpec(BaseModel):
    model_config = _STRICT
    key: str
    display: str
    family: Literal["llm", "encoder_nlp"]
    params_billion: float = Field(gt=0)
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    mlp: Literal["gated", "plain"]
    tied: bool
    max_seq: int
    dropout: bool = False
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    # from the config.json (engine/memory/hfconfig.py, knowledge/models/llm_profiles.yaml); defaults = a dense model
    model_type: str | None = None
    q_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    experts: int = 0                      # routed experts per MoE layer
    experts_per_tok: int = 0              # routed experts per token (top-k)
    moe_intermediate: int = 0             # one routed expert's MLP width
    shared_intermediate: int = 0          # the shared expert(s) of a MoE layer, together
    moe_layers: int = 0                   # layers whose MLP is a MoE block (the others: dense, `intermediate`)
    active_params_billion: float | None = None            # per token: all but the experts a token is not routed to
    routed_expert_params_billion: float = 0.0              # all routed experts of all layers
    sliding_window: int | None = None     # local-attention window (tokens) ...
    sliding_layers: int = 0               # ... on this many layers
    # Llama 3.2 Vision (Mllama) cross_attention_layers: these layers attend to the image's keys / values only, so they
    # keep no KV per text token (their KV is over the image tokens, one set per image)
    cross_attention_layers: int = 0
    mtp_params_billion: float = 0.0       # DeepSeek multi-token-prediction module: in the checkpoint, not the main model
    vision_params_billion: float = 0.0    # vision tower + projector of a vision-language model (in params_billion)
    image_tokens_per_image: int | None = None   # VLM: fixed tokens per image (Gemma 3 mm_tokens_per_image) ...
    image_token_px: int | None = None            # ... or one token per this many pixels squared (Qwen-VL dynamic)
    weight_format: Literal["bf16", "fp16", "fp32", "fp8", "fp4", "int8", "int4", "nf4"] = "bf16"   # published checkpoint
    quantized_params_billion: float = 0.0  # parameters stored in weight_format (the rest 16-bit)
    scale_bytes_per_param: float = 0.0     # quantization scales per quantized parameter
    kept_16bit: list[str] = []             # what the quantized checkpoint keeps in 16 bit
    stated_params_billion: float | None = None   # the published size the count is checked against
    stated_source: str | None = None
    hub_id: str | None = None
    notes: list[str] = []
    source: str
    as_of: str | None = None              # date the shapes were read, when not the file's as_of
    aliases: list[str] = []               # other names of this model (instruct / chat variants, hub ids)
    # other models whose config.json has these shapes (fine-tunes and distillations of this base): they are estimated
    # with this profile and the answer says so; same_shape_source says where their base model is stated
    same_shape: list[str] = []
    same_shape_source: str | None = None
    # a same_shape name whose config.json states another context window (Meta-Llama-3-70B: 8192 on Llama 3.1 70B's
    # layer shapes): that window is the named model's (context_of), the shapes are this profile's
    same_shape_max_seq: dict[str, int] = {}
    # what the encoder is trained and served as: a text-embedding (bi-encoder) or a reranker (cross-encoder) model;
    # their fine-tuning runs several sequences per sample (engine/memory/jobdefaults.py EMBEDDER_RECIPE)
    role: Literal["embedding", "reranker"] | None = None
    role_source: str | None = None


class Knowledge(DerivedCache, BaseModel):
    model_config = ConfigDict(frozen=True)
    backbones: dict[str, BackboneSpec]
    methods: dict[str, MethodSpec]
    transformers: dict[str, TransformerSpec]
    task_defaults: dict[str, dict[str, Any]]
    calibration: dict[str, float]
    planning_margin: dict[str, float]
    as_of: str
    method_index: dict[str, str]
    backbone_index: dict[str, str]
    transformer_index: dict[str, str]
    _derived: dict[Any, Any] = PrivateAttr(default_factory=dict)



_NOT_NAME = re.compile(r"[^a-z0-9.]")


def norm(name: str) -> str:
    """Fold a model name: lower case, '+' -> 'plus', drop everything but letters, digits and dots.

    Names up to 120 characters (the Workload's limit) are folded once per process: each memory estimate looks the
    same names up again, and an answer makes about four."""
    return _norm_cached(name) if len(name) <= 120 else _fold(name)


def _fold(name: str) -> str:
    return _NOT_NAME.sub("", name.strip().lower().replace("+", "plus"))


_norm_cached = lru_cache(maxsize=4096)(_fold)


def _read_yaml(name: str) -> dict[str, Any]:
    path = resources.files("gpu_advisor.knowledge") / "models" / name
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yamlio.YAMLError) as exc:
        raise KnowledgeError(f"knowledge/models/{name}: cannot be read ({exc})",
                             f"knowledge/models/{name}：无法读取（{exc}）") from exc
    if not isinstance(data, dict):
        raise KnowledgeError(f"knowledge/models/{name}: top level must be a mapping",
                             f"knowledge/models/{name}：顶层必须是映射")
    return data


def _build(cls: type[BaseModel], file: str, entries: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, body in entries.items():
        try:
            out[key] = cls.model_validate({"key": key, **body})
        except (ValidationError, TypeError) as exc:
            first = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": str(exc)}
            loc = ".".join(str(p) for p in first["loc"])
            raise KnowledgeError(f"knowledge/models/{file}: entry {key!r}, key {loc!r}: {first['msg']}",
                                 f"knowledge/models/{file}：条目 {key!r} 的键 {loc!r} 无效：{first['msg']}") from exc
    return out


def _index(specs: dict[str, Any], file: str) -> dict[str, str]:
    index: dict[str, str] = {}
    for key, spec in specs.items():
        for name in (key, spec.display, *spec.aliases, *getattr(spec, "same_shape", ())):
            folded = norm(name)
            if index.get(folded, key) != key:
                raise KnowledgeError(f"knowledge/models/{file}: alias {name!r} names both {index[folded]!r} and {key!r}",
                                     f"knowledge/models/{file}：别名 {name!r} 同时指向 {index[folded]!r} 和 {key!r}")
            index[folded] = key
    return index


def _inherit(entries: dict[str, Any]) -> dict[str, Any]:
    """Method entries with `base: <key>` take that entry's fields (except its aliases) under their own: a modifier
    such as RF-Next search reuses the detector profile it is applied to."""
    out: dict[str, Any] = {}
    for key, body in entries.items():
        base = body.get("base") if isinstance(body, dict) else None
        if base is None:
            out[key] = body
            continue
        if base not in entries or "base" in entries[base]:
            raise KnowledgeError(f"knowledge/models/methods.yaml: entry {key!r}, key 'base': unknown {base!r}",
                                 f"knowledge/models/methods.yaml：条目 {key!r} 的 base 未定义：{base!r}")
        inherited = {k: v for k, v in entries[base].items() if k not in ("aliases", "head_variants")}
        out[key] = {**inherited, **{k: v for k, v in body.items() if k != "base"}}
    return out


@lru_cache(maxsize=1)
def knowledge() -> Knowledge:
    """All model profiles, loaded and validated once per process."""
    bb, me, tr, de = (_read_yaml(f) for f in ("backbones.yaml", "methods.yaml", "transformers.yaml", "defaults.yaml"))
    backbones = _build(BackboneSpec, "backbones.yaml", bb["backbones"])
    methods = _build(MethodSpec, "methods.yaml", _inherit(me["methods"]))
    # generated CV profiles (tools/derive_yolo.py): their own file, keys never shared with the hand-written ones
    ul = _read_yaml("ultralytics.yaml")
    for file_key, target, cls in (("backbones", backbones, BackboneSpec), ("methods", methods, MethodSpec)):
        extra = _build(cls, "ultralytics.yaml", ul.get(file_key, {}))
        for key in extra:
            if key in target:
                raise KnowledgeError(f"knowledge/models/ultralytics.yaml: entry {key!r} is also in {file_key}.yaml",
                                     f"knowledge/models/ultralytics.yaml：条目 {key!r} 与 {file_key}.yaml 重复")
        target.update(extra)
    me = {"methods": {**me["methods"], **ul.get("methods", {})}}
    transformers = _build(TransformerSpec, "transformers.yaml", tr["models"])
    generated = _build(TransformerSpec, "llm_profiles.yaml", _read_yaml("llm_profiles.yaml")["models"])
    for key in generated:
        if key in transformers:
            raise KnowledgeError(f"knowledge/models/llm_profiles.yaml: entry {key!r} is also in transformers.yaml",
                                 f"knowledge/models/llm_profiles.yaml：条目 {key!r} 与 transformers.yaml 重复")
    transformers.update(generated)
    for key, spec in methods.items():
        for layout, target in spec.head_variants.items():
            if target not in me["methods"]:
                raise KnowledgeError(f"knowledge/models/methods.yaml: entry {key!r}, key 'head_variants.{layout}': unknown {target!r}",
                                     f"knowledge/models/methods.yaml：条目 {key!r} 的 head_variants.{layout} 未定义：{target!r}")
        if spec.backbone not in backbones:
            raise KnowledgeError(f"knowledge/models/methods.yaml: entry {key!r}, key 'backbone': unknown {spec.backbone!r}",
                                 f"knowledge/models/methods.yaml：条目 {key!r} 的 backbone 未定义：{spec.backbone!r}")
    return Knowledge(backbones=backbones, methods=methods, transformers=transformers,
                     task_defaults=de["task_defaults"], calibration=de["calibration"],
                     planning_margin=de.get("planning_margin", {}), as_of=str(de["as_of"]),
                     method_index=_index(methods, "methods.yaml"), backbone_index=_index(backbones, "backbones.yaml"),
                     transformer_index=_index(transformers, "transformers.yaml"))


_STRIDE_SUFFIX = re.compile(r"^(.*?)(?:d(8|16|32))?$")
_NOISE = ("mg124", "fpn", "caffe", "pytorch", "c4", "dc5")
_SCHEDULE_SUFFIX = re.compile(r"[_-]\d+x$", re.IGNORECASE)


def resolve_backbone(name: str) -> tuple[str, int | None] | None:
    """Backbone key and output stride ('R-50-D8' -> ('resnet50', 8)); None if unknown."""
    kb = knowledge()
    folded = norm(name)
    if folded in kb.backbone_index:
        return kb.backbone_index[folded], None
    for noise in _NOISE:
        folded = folded.replace(noise, "")
    match = _STRIDE_SUFFIX.match(folded)
    base, stride = (match.group(1), match.group(2)) if match else (folded, None)
    for candidate in (folded, base, base.rstrip("b")):
        if candidate in kb.backbone_index:
            return kb.backbone_index[candidate], int(stride) if stride and candidate == base or stride and candidate == base.rstrip("b") else None
    return None


def resolve_plain_method(name: str) -> tuple[str, str | None] | None:
    """A method key (plus a backbone key when the name carries one) from the registry's own names; config names are
    read by gpu_advisor.kb.confignames.resolve_method, which builds on this."""
    kb = knowledge()
    folded = norm(name)
    if folded in kb.method_index:
        return kb.method_index[folded], None
    # Detectron2 config names end in the schedule: "faster_rcnn_R_50_FPN_3x", "mask_rcnn_X_101_32x8d_FPN_1x"
    # (configs/COCO-Detection/*.yaml, MODEL_ZOO.md); the schedule changes nothing per iteration
    folded = norm(_SCHEDULE_SUFFIX.sub("", name.strip()))
    if folded in kb.method_index:
        return kb.method_index[folded], None
    for alias in sorted(kb.method_index, key=len, reverse=True):
        if folded.startswith(alias) and len(folded) > len(alias):
            rest = folded[len(alias):]
            method = kb.methods[kb.method_index[alias]]
            for candidate in (rest, (method.backbone_prefix or kb.backbones[method.backbone].key.split("_")[0]) + rest):
                found = resolve_backbone(candidate)
                if found:
                    return method.key, found[0]
    return None


def resolve_transformer(name: str) -> str | None:
    kb = knowledge()
    for candidate in (name, name.split("/")[-1]):
        folded = norm(candidate)
        if folded in kb.transformer_index:
            return kb.transformer_index[folded]
    return None


# A name that is clearly a language model: a size suffix ("32B", "8x7B", "1.5T"), a chat / instruct / distilled build,
# or an LLM family word. Such a name is never sized with a vision profile (issue 22: "DeepSeek-V3 671B" as an image
# classifier).
LLM_NAME = re.compile(
    r"(?<![a-z])\d+(?:\.\d+)?\s*[bt](?![a-z])|\d+\s*x\s*\d+(?:\.\d+)?\s*b(?![a-z])|\b(?:instruct|chat|distill|sft|dpo|rlhf)\b"
    r"|\b(?:llama|qwen|qwq|mistral|mixtral|deepseek|gemma|baichuan|chatglm|glm|internlm|falcon|phi|gpt|bloom|olmo|"
    r"minicpm|yi|kimi|vicuna|starcoder|codellama|hunyuan|ernie|granite|nemotron|dbrx|grok)(?![a-z])",
    re.IGNORECASE)


def looks_like_llm(name: str) -> bool:
    """True for a model name that is clearly a language model (see LLM_NAME); names up to 120 characters."""
    return bool(LLM_NAME.search(name[:120]))


def shape_borrowed_by(name: str, key: str) -> str | None:
    """The same_shape entry of transformer ``key`` that ``name`` names (as the knowledge base writes it), or None
    when ``name`` is the model itself or one of its aliases."""
    spec = knowledge().transformers[key]
    folded = {norm(candidate) for candidate in (name, name.split("/")[-1])}
    return next((other for other in spec.same_shape if norm(other) in folded), None)


def context_of(name: str | None, key: str) -> int:
    """The context window (tokens) of the model ``name`` names, estimated with transformer ``key``: its own
    max_position_embeddings, or the one recorded for a same_shape name whose config states another."""
    spec = knowledge().transformers[key]
    other = shape_borrowed_by(name, key) if name else None
    return int(spec.same_shape_max_seq.get(other, spec.max_seq) if other else spec.max_seq)


@lru_cache(maxsize=1)
def _build_suffixes() -> tuple[str, ...]:
    raw = yamlio.safe_load((resources.files("gpu_advisor.knowledge") / "ask" / "lexicon.yaml").read_text(encoding="utf-8"))
    return tuple(norm(x) for x in raw.get("build_suffixes", ()))


def model_key(name: str) -> str:
    """One model's spellings folded together: the organisation prefix and a build suffix of the lexicon's
    `build_suffixes` ("-Chat", "-Instruct") dropped ("01-ai/Yi-1.5-34B", "Yi-1.5-34B-Chat" -> "yi1.534b")."""
    base = norm(name.split("/")[-1])
    for suffix in _build_suffixes():
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base


def spelling_labels(spec: Any) -> dict[str, str]:
    """Every folded spelling of a profile -> the name a suggestion shows: its display for the display and aliases;
    for a same_shape model (another model with this network) the first of its spellings, without the organisation
    prefix, so that one model is suggested once."""
    labels = {norm(alias): spec.display for alias in (spec.display, *spec.aliases)}
    shown: dict[str, str] = {}
    for other in getattr(spec, "same_shape", ()):
        labels.setdefault(norm(other), shown.setdefault(model_key(other), other.split("/")[-1]))
    return labels


def suggestions(name: str, pool: str) -> list[str]:
    """Up to 5 known models close to ``name`` (difflib), each once by its name, from 'methods', 'backbones' or
    'transformers'."""
    kb = knowledge()
    specs: dict[str, Any] = {"methods": kb.methods, "backbones": kb.backbones, "transformers": kb.transformers}[pool]
    by_fold: dict[str, str] = {}
    for spec in specs.values():
        for fold, label in spelling_labels(spec).items():
            by_fold.setdefault(fold, label)
    close = difflib.get_close_matches(norm(name), list(by_fold), n=8, cutoff=0.5)
    if not close and pool == "methods" and "_" in name:
        # a config-like name ("deeplabv9_r50-d8_4xb2-80k_cityscapes-512x1024"): its method is the first token
        close = difflib.get_close_matches(norm(name.replace("\\", "/").rsplit("/", 1)[-1].split("_")[0]),
                                          list(by_fold), n=8, cutoff=0.5)
    out: list[str] = []
    for folded in close:
        if by_fold[folded] not in out:
            out.append(by_fold[folded])
    return out[:5]


_LLM_SIZE = re.compile(r"(?i)(?<![a-z0-9.])(\d+x\d+(?:\.\d+)?b|\d+(?:\.\d+)?[bm])(?![a-z0-9])")
_CV_SIZE = re.compile(r"(?i)^(.*?)[-_ ]?([a-z]{0,3}\d*|[a-z]\d+(?:gf|mf)?|w\d+)$")


def _llm_family_size(name: str) -> tuple[str, str] | None:
    base = name.strip().split("/")[-1]
    m = _LLM_SIZE.search(base)
    if not m or not norm(base[:m.start()]):
        return None
    return norm(base[:m.start()]), m.group(1).lower()


def _cv_family_size(name: str) -> tuple[str, str] | None:
    base = name.strip()
    cut = max(base.rfind("-"), base.rfind(" "))   # "ConvNeXt-XL", "ConvNeXt XL"
    if cut < 0:
        return None
    family, size = base[:cut], base[cut + 1:]
    return (norm(family), size.lower()) if norm(family) and size else None


def family_sizes(name: str) -> tuple[str, list[str]] | None:
    """(family, the sizes the knowledge base has) when ``name`` is a size of a known family that it does not have
    ("Qwen3-72B", "ConvNeXt-XL", "ResNet-200"); None otherwise. Such a name is refused: no sibling stands in."""
    kb = knowledge()
    groups: list[tuple[Any, Any]] = [(_llm_family_size, kb.transformers.values()), (_cv_family_size, kb.backbones.values())]
    for parse_name, specs in groups:
        asked = parse_name(name)
        if asked is None:
            continue
        sizes: dict[str, list[str]] = {}
        for spec in specs:
            for written in (spec.display, *spec.aliases):
                got = parse_name(written)
                if got and got[0] == asked[0]:
                    sizes.setdefault(got[1], [])
                    if spec.display not in sizes[got[1]]:
                        sizes[got[1]].append(spec.display)
        if sizes and asked[1] not in sizes:
            displays = sorted({d for ds in sizes.values() for d in ds})
            return asked[0], displays
    return None


@lru_cache(maxsize=1)
def _not_derived_index() -> dict[str, tuple[str, str]]:
    """folded name -> (display, reason) of the models llm_profiles.yaml lists as not derived (tools/gen_llm_profiles.py)."""
    out: dict[str, tuple[str, str]] = {}
    for entry in (_read_yaml("llm_profiles.yaml").get("not_derived") or {}).values():
        for written in (entry["display"], *entry["names"]):
            out[norm(written)] = (str(entry["display"]), str(entry["reason"]))
    return out


def not_derived(name: str) -> tuple[str, str] | None:
    """(display, reason) when ``name`` is a model the knowledge base knows but does not size (its architecture is
    not derived: hybrid linear attention, ...); None otherwise."""
    index = _not_derived_index()
    return next((index[norm(c)] for c in (name, name.split("/")[-1]) if norm(c) in index), None)


def not_derived_error(name: str, field: str = "model") -> UnknownModelError | None:
    """The refusal, with the reason, for a model whose architecture is not derived; None for any other name."""
    found = not_derived(name)
    if found is None:
        return None
    display, why = found
    return UnknownModelError(
        f"{field}: {name!r} is {display} ({why}). The memory model counts the same attention block with its KV cache "
        "on every layer, which this architecture does not have, so gpu-advisor refuses it rather than estimate it as "
        "a plain transformer or with another model. Give params_billion for a generic estimate.",
        f"{field}：{name!r} 是 {display}（{why}）。显存模型按每层相同的注意力块及其 KV 缓存计算，该结构不是这样，"
        "因此拒绝估算，不会当作普通 Transformer 或用别的模型代替。可提供 params_billion 作通用估算。",
        field=field, suggestions=[])


def unknown(name: str, field: str, pool: str) -> UnknownModelError:
    if pool == "transformers" and (refusal := not_derived_error(name, field)) is not None:
        return refusal
    fam = family_sizes(name)
    if fam is not None:
        listed = ", ".join(fam[1][:16])
        return UnknownModelError(
            f"{field}: {name!r} is a size the knowledge base does not have; the sizes it has of this family: {listed}. "
            "No other size stands in for it: pick one of these, give the model's config.json (--model path/to/config.json), "
            "or give params_billion for a generic estimate.",
            f"{field}：知识库中没有 {name!r} 这个规模；该系列已有：{listed}。不会用其他规模代替：请选择其中之一、"
            "提供该模型的 config.json（--model path/to/config.json），或提供 params_billion 以作通用估算。",
            field=field, suggestions=fam[1][:5])
    hints = suggestions(name, pool)
    hint_en = f"; did you mean: {', '.join(hints)}?" if hints else ""
    hint_zh = f"；您是否指：{'、'.join(hints)}？" if hints else ""
    return UnknownModelError(
        f"{field}: unknown {field} {name!r}{hint_en or '.'} Or give params_billion to estimate an unknown model.",
        f"{field}：未知的{'模型' if field == 'model' else '骨干网络'} {name!r}{hint_zh or '。'}或提供 params_billion 以估算未知模型。",
        field=field, suggestions=hints)
