"""Resolve a Workload into a profile plus concrete job settings; every filled default is an assumption Note."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpu_advisor.errors import UnknownModelError, WorkloadError
from gpu_advisor.util.i18n import Note, note
from gpu_advisor.kb.confignames import parse as parse_config, resolve_method
from gpu_advisor.kb.models import (
    BackboneSpec, MethodSpec, TransformerSpec, family_sizes, knowledge, looks_like_llm, norm, resolve_backbone,
    resolve_transformer, shape_borrowed_by, unknown,
)
from gpu_advisor.memory.jobdefaults import fill_settings
from gpu_advisor.workload import Task, Workload

TEXT_TASKS = {Task.llm_finetune, Task.llm_pretrain, Task.nlp_finetune}
CV_TASK_METHOD = {"semantic_segmentation": "upernet", "instance_segmentation": "mask_rcnn",
                  "panoptic_segmentation": "mask2former_det", "object_detection": "faster_rcnn",
                  "image_classification": "classifier", "inference": "classifier"}
# A backbone name given as the model ("HRNet", "MobileNetV3", "PoolFormer": the MMSeg README titles of backbone-only
# config folders) means the decode head MMSeg ships with that backbone (configs/<backbone>/*.py, v1.2.2), not the task
# default. hrnet: FCN only (-> fcn_hr); mobilenet_v3: LR-ASPP only; poolformer: Semantic FPN only. mobilenet_v2 and
# resnest ship FCN / PSPNet / DeepLabV3 / DeepLabV3+ at D8: the heaviest of the four (DeepLabV3+, as the K-Net /
# FastFCN plain names take their heaviest head). swin, convnext, vit (BEiT, MAE, DeiT) ship UPerNet and twins ships
# UPerNet and Semantic FPN: the task default (UPerNet) already matches.
SEG_BACKBONE_METHOD = {"hrnet": "fcn", "mobilenet_v3": "lraspp", "poolformer": "fpn_seg",
                       "mobilenet_v2": "deeplabv3plus", "resnest": "deeplabv3plus"}
DETECTION_TASKS = {Task.object_detection, Task.instance_segmentation, Task.panoptic_segmentation}
MASK_TASKS = {Task.instance_segmentation, Task.panoptic_segmentation, Task.semantic_segmentation}
# Detectron2's own spellings (configs/*/<name>.yaml, MODEL_ZOO.md Name column): no hyphen between R / X and the depth
# ("R50-FPN", "R_50_FPN", "R101-C4", "R50-DC5", "X101-FPN", "X_101_32x8d_FPN"), config names with "_R_50" /
# "_X_101_32x8d" and an optional schedule ("mask_rcnn_R_50_FPN_3x", "panoptic_fpn_R_101_3x"). MMDetection writes
# "R-50", "R-50-FPN", "X-101-32x4d" and lower-case config names ("faster-rcnn_r50_fpn_1x_coco"): no match.
D2_BACKBONE_FORM = re.compile(r"^[RX]_?\d{2,3}(?:_\d+x\d+d)?[-_](?:FPN|C4|DC5)$")
D2_CONFIG_FORM = re.compile(r"(?:^|/)[a-z][a-z0-9_]*_[RX]_\d{2,3}(?:_\d+x\d+d)?(?:_(?:FPN|C4|DC5))?(?:_\d+x)?$")
# RoI-head layout written in a backbone or config name: "R50-C4", "R-50-DC5", "mask_rcnn_R_50_C4_1x",
# "faster-rcnn_r50-caffe-c4_1x_coco" -> MethodSpec.head_variants (Detectron2 Base-RCNN-C4 / -DilatedC5 configs)
HEAD_LAYOUT = re.compile(r"(?:^|[-_ /])(c4|dc5)(?:$|[-_ ])", re.IGNORECASE)


@dataclass
class Resolved:
    """What the estimator works from."""

    kind: str                      # "cv", "transformer" or "none"
    training: bool
    settings: dict[str, Any]
    method: MethodSpec | None = None
    backbone: BackboneSpec | None = None
    output_stride: int | None = None
    transformer: TransformerSpec | None = None
    params_override: float | None = None   # params_billion for an unknown model
    assumptions: list[Note] = field(default_factory=list)
    warnings: list[Note] = field(default_factory=list)

    def assume(self, fld: str, value: Any, en: str, zh: str) -> Any:
        self.assumptions.append(note("default", f"{fld} = {value}: {en}", f"{fld} = {value}：{zh}", fld, value))
        return value


def _task_defaults(task: Task) -> dict[str, Any]:
    return knowledge().task_defaults.get(task.value, knowledge().task_defaults["semantic_segmentation"])


def _synthetic_transformer(params_b: float, family: str, display: str | None = None) -> TransformerSpec:
    """Llama-like shape for an unknown LLM: 12*L*h^2 ~ params with L = h/128 (Kaplan et al. 2001.08361 aspect)."""
    hidden = max(256, int(round((params_b * 1e9 * 128 / 12) ** (1 / 3) / 128)) * 128)
    layers = max(2, round(params_b * 1e9 / (12 * hidden * hidden)))
    heads = max(1, hidden // 128)
    return TransformerSpec(key="unknown", display=display or f"unknown {params_b:g}B transformer", family=family,  # type: ignore[arg-type]
                           params_billion=params_b, layers=layers, hidden=hidden, heads=heads,
                           kv_heads=max(1, heads // 4), head_dim=128, intermediate=int(hidden * 8 / 3 // 128 * 128 + 128),
                           vocab=128256 if family == "llm" else 30522, mlp="gated" if family == "llm" else "plain",
                           tied=False, max_seq=131072, source="synthetic shape from params_billion")


def _resolve_text(w: Workload, r: Resolved) -> None:
    name = w.model
    family = "encoder_nlp" if w.task == Task.nlp_finetune else "llm"
    if name is None and w.params_billion is not None:  # a size without a name: that size, not the task's default
        t = r.transformer = _synthetic_transformer(w.params_billion, family, f"{w.params_billion:g}B transformer")
        r.params_override = w.params_billion
        r.assume("model", t.display, f"no model named: a Llama-like shape for params_billion = {w.params_billion:g} "
                 f"({t.layers} layers, hidden {t.hidden}); name the model for its own shape",
                 f"未指定模型：按 params_billion = {w.params_billion:g} 取 Llama 类结构（{t.layers} 层，hidden {t.hidden}）；"
                 "给出模型名可按其真实结构估算")
        return
    if name is None:
        name = r.assume("model", _task_defaults(w.task)["model"], "typical model for this task",
                        "该任务的典型模型")
    key = resolve_transformer(name)
    if key is not None:
        t = r.transformer = knowledge().transformers[key]
        if (other := shape_borrowed_by(name, key)) is not None:
            r.assume("model", t.display, f"{other} has the config shapes of {t.display} ({t.same_shape_source}), so "
                     "it is estimated with that profile",
                     f"{other} 与 {t.display} 的 config 结构相同（{t.same_shape_source}），按该配置估算")
        return
    from gpu_advisor.memory.modelsource import from_hub, from_path, looks_like_hub_id, looks_like_path
    if looks_like_path(name):
        t = r.transformer = from_path(name)
        r.assume("model", t.display, f"shapes read from {name} ({t.params_billion:g} B parameters counted from them)",
                 f"结构读取自 {name}（据此计得 {t.params_billion:g} B 参数）")
        return
    if looks_like_hub_id(name) and family_sizes(name) is None:
        try:
            t = r.transformer = from_hub(name)
        except WorkloadError as exc:
            if w.params_billion is None:
                base = unknown(name, "model", "transformers")
                raise UnknownModelError(f"{base.en} {exc.en}", f"{base.zh}{exc.zh}", field="model",
                                        suggestions=base.suggestions) from None
        else:
            r.assume("model", t.display, f"shapes read from the Hub's config.json ({t.params_billion:g} B parameters "
                     "counted from them)", f"结构读取自 Hub 上的 config.json（据此计得 {t.params_billion:g} B 参数）")
            return
    if w.params_billion is None:
        raise unknown(name, "model", "transformers")
    if (fam := family_sizes(name)) is not None:
        r.warnings.append(note("unknown_size", f"{name!r} is not a size the knowledge base has (it has "
                               f"{', '.join(fam[1][:8])}): a generic Llama-like shape for params_billion = "
                               f"{w.params_billion:g}, not a sibling's profile",
                               f"知识库中没有 {name!r} 这个规模（已有 {'、'.join(fam[1][:8])}）：按 params_billion = "
                               f"{w.params_billion:g} 取通用 Llama 类结构，不使用其他规模的配置", "model", name))
    t = r.transformer = _synthetic_transformer(w.params_billion, family)
    r.params_override = w.params_billion
    shape_en = f"{t.layers} layers, hidden {t.hidden}, {t.kv_heads} KV heads of {t.head_dim}"
    shape_zh = f"{t.layers} 层，hidden {t.hidden}，{t.kv_heads} 个 KV 头 × {t.head_dim}"
    r.warnings.append(note("unknown_model", f"model {name!r} is not in the knowledge base: sized as a generic "
                           f"{w.params_billion:g}B dense transformer with a Llama-like shape ({shape_en}), not its own "
                           "config; expect ±30 % (its config.json as the model gives its own shape).",
                           f"知识库中没有模型 {name!r}：按通用 {w.params_billion:g}B 稠密 Transformer、Llama 类结构（{shape_zh}）"
                           "估算，不是它自己的配置，误差约 ±30 %（把它的 config.json 作为模型即可按真实结构估算）。",
                           "model", name))


def _method_from_name(w: Workload, r: Resolved) -> tuple[str | None, str | None]:
    """(method key, backbone key implied by the model name); (None, None): weights from params_billion."""
    if w.model is None and w.params_billion is not None and w.backbone is None:
        return None, None  # a size without a name: that size, not the default method's
    if w.model is None:
        default = CV_TASK_METHOD.get(w.task.value) if w.backbone else _task_defaults(w.task).get("method")
        if w.backbone and w.task == Task.semantic_segmentation and (bb := resolve_backbone(w.backbone)):
            # "HRNet-W48 语义分割": the decode head MMSeg ships with that backbone (FCN for HRNet), not UPerNet
            native = next((m for prefix, m in SEG_BACKBONE_METHOD.items() if bb[0].startswith(prefix)), None)
            if native is not None:
                return r.assume("model", native, f"the decode head MMSegmentation ships with {w.backbone} "
                                "(configs/<backbone>/, v1.2.2)", f"MMSegmentation 为 {w.backbone} 提供的解码头"
                                "（configs/<backbone>/，v1.2.2）"), None
        # serving a vision model given only by its backbone or input size: the task's CV method (a classifier)
        default = default or CV_TASK_METHOD.get(w.task.value)
        return r.assume("model", default, "typical method for this task", "该任务的典型方法"), None
    found = resolve_method(w.model)
    if found:
        return found
    bb = resolve_backbone(w.model)
    if bb:
        if w.task == Task.semantic_segmentation:
            for prefix, method in SEG_BACKBONE_METHOD.items():
                if bb[0].startswith(prefix):
                    return method, bb[0]
        return CV_TASK_METHOD.get(w.task.value, "classifier"), bb[0]
    if w.params_billion is None:
        raise unknown(w.model, "model", "methods")
    return None, None


def _resolve_cv(w: Workload, r: Resolved) -> None:
    kb = knowledge()
    method_key, implied_bb = _method_from_name(w, r)
    if method_key is None and w.model is None and w.params_billion is not None:   # no model named, only its size
        method_key = _task_defaults(w.task).get("method", "classifier")
        r.params_override = w.params_billion
        r.assume("model", kb.methods[method_key].display, f"no model named: weights from params_billion = "
                 f"{w.params_billion:g}, activations from this task's typical method",
                 f"未指定模型：权重按 params_billion = {w.params_billion:g}，激活按该任务的典型方法估算")
    elif method_key is None:   # unknown CV model with params_billion
        method_key = _task_defaults(w.task).get("method", "classifier")
        r.params_override = w.params_billion
        r.warnings.append(note("unknown_model", f"model {w.model!r} is not in the knowledge base: weights from "
                               f"params_billion = {w.params_billion:g}, activations from the {kb.methods[method_key].display} "
                               "default profile; expect ±40 %.",
                               f"知识库中没有模型 {w.model!r}：权重按 params_billion = {w.params_billion:g}，激活按 "
                               f"{kb.methods[method_key].display} 默认配置估算，误差约 ±40 %。", "model", w.model))
    method = kb.methods[method_key]
    if method.assumed_size is not None and w.model is not None:
        # a family written without its size ("YOLOv8"): one named size, said as an assumption, never a silent pick
        size = method.assumed_size
        r.assume("model", method.display + size.size, f"{w.model!r} names no size (n/s/m/l/x): sized as "
                 f"{method.display}{size.size}, as {size.why}; name the size for its own profile",
                 f"{w.model!r} 未写规模（n/s/m/l/x）：按 {method.display}{size.size} 估算，因为{size.why_zh}；"
                 "写明规模可按该规模估算")
    if method.assign_batched and w.task != Task.inference:
        # Ultralytics TaskAlignedAssigner: (batch x the batch's most boxes x anchors) tensors, sized for COCO-scale
        # scenes (memory.cv max_gt_per_image); the WIDER FACE GPU_mem rows of bench/data/ultralytics_gpu_mem.csv show
        # about +12 GiB at batch 16, 640 px, independent of the model size
        r.warnings.append(note(
            "crowded_scenes", "the target assigner is sized for up to 100 boxes per image (COCO-scale); it holds batch x "
            "boxes x 8,400 anchors (at 640 px) x ~40 B, so crowded scenes (WIDER FACE, CrowdHuman: hundreds of boxes per "
            "image) need several GiB more per GPU (public logs: +12 GiB at batch 16, 640 px); lower the batch for them",
            "目标分配器按每张图最多 100 个框（COCO 规模）估算；它占用 batch × 框数 × 8,400 个锚点（640 像素）× 约 40 B，"
            "密集场景（WIDER FACE、CrowdHuman：每张图数百个框）每卡还需多出数 GiB（公开日志：batch 16、640 像素时多约 12 GiB）；"
            "这类数据请减小 batch", "model", w.model))
    if w.task in DETECTION_TASKS and method.detection_variant:
        method = kb.methods[method.detection_variant]
    if w.task in (Task.instance_segmentation, Task.panoptic_segmentation) and method.mask_variant:
        method = kb.methods[method.mask_variant]
    elif w.task in MASK_TASKS and method.whole_network and method.family == "detection":
        # a whole-network detect model (Ultralytics YOLO) has a separate -seg model with a mask head, not derived:
        # sizing the detect network for a segmentation job would answer for another model
        raise WorkloadError(
            f"model: {method.display} is the detection model; a {w.task.value} job needs its segmentation version "
            f"({method.display}-seg), which is not derived. Ask for object_detection, or name a model that is derived for "
            "segmentation (e.g. Mask R-CNN, SOLOv2, DeepLabV3+).",
            f"model：{method.display} 是检测模型；{w.task.value} 作业需要它的分割版本（{method.display}-seg），尚未推导。"
            "请改用 object_detection，或指定已推导的分割模型（如 Mask R-CNN、SOLOv2、DeepLabV3+）。", field="model")
    layout = next((m.group(1).lower() for m in (HEAD_LAYOUT.search(n) for n in (w.backbone, w.model) if n) if m), None)
    if layout in method.head_variants:
        method = kb.methods[method.head_variants[layout]]
    framework = _framework(w, r)
    stride = None
    if method.whole_network and w.backbone is not None and resolve_backbone(w.backbone) != (method.backbone, None):
        raise WorkloadError(
            f"backbone: {method.display} is derived as one network with its own backbone (its model YAML); another "
            f"backbone ({w.backbone!r}) under its neck and head is not derived. Leave the backbone out.",
            f"backbone：{method.display} 按其模型 YAML 作为整体网络推导（自带骨干）；换成其他骨干（{w.backbone!r}）"
            "的组合未推导。请不要指定骨干网络。", field="backbone")
    if method.whole_network:
        bb_key = method.backbone   # no backbone choice: said by the model itself, not an assumption
    elif w.backbone is not None:
        found = resolve_backbone(w.backbone)
        if found is None:
            raise unknown(w.backbone, "backbone", "backbones")
        bb_key, stride = found
    elif (cfg := parse_config(w.model)) is not None and cfg.backbone and resolve_backbone(cfg.backbone):
        # an OpenMMLab config name spells its backbone ("deeplabv3plus_r50-d8_...": R-50 at output stride 8)
        bb_key, stride = resolve_backbone(cfg.backbone)  # type: ignore[misc]
        r.assume("backbone", kb.backbones[bb_key].display, f"from the config name {cfg.name!r} ({cfg.backbone})",
                 f"取自配置名 {cfg.name!r}（{cfg.backbone}）")
    else:
        bb_key = implied_bb or r.assume("backbone", method.backbone, f"usual backbone of {method.display}",
                                        f"{method.display} 的常用骨干网络")
    if method.key == "fcn" and bb_key.startswith("hrnet"):
        method = kb.methods["fcn_hr"]
    if (framework == "detectron2" and bb_key == "resnext101_32x4d" and w.backbone
            and "32x4d" not in norm(w.backbone)):
        # Detectron2's only ResNeXt-101 is 32x8d: MODEL_ZOO.md's "X101-FPN" rows link to the X_101_32x8d_FPN configs
        # and it publishes X-101-32x8d.pkl as the ImageNet backbone; MMDetection's bare "X-101" means 32x4d.
        bb_key = "resnext101_32x8d"
    r.method, r.backbone = method, kb.backbones[bb_key]
    r.output_stride = stride or (method.output_stride if bb_key.startswith(("resnet", "resnest", "mobilenet")) else 32)
    if method.output_stride < 8 or method.family == "prototype":
        r.output_stride = 32


def _framework(w: Workload, r: Resolved) -> str | None:
    """The training code: Workload.framework, else "detectron2" when the backbone or model is written in Detectron2's
    own form (an assumption Note); None = MMDetection / MMSegmentation behaviour."""
    if w.framework is not None:
        return getattr(w.framework, "value", w.framework)
    if w.backbone and D2_BACKBONE_FORM.match(w.backbone.strip()):
        why = ("the backbone is written in Detectron2's form", "骨干网络按 Detectron2 的写法给出", w.backbone.strip())
    elif w.model and D2_CONFIG_FORM.search(w.model.strip()):
        why = ("the model is a Detectron2 config name", "模型名是 Detectron2 的配置名", w.model.strip())
    else:
        return None
    r.settings["framework"] = r.assume("framework", "detectron2", f"{why[0]} ({why[2]})", f"{why[1]}（{why[2]}）")
    return "detectron2"


def _config_source(name: str) -> bool:
    """A config.json path, or a Hub id naming no CV method or backbone, given as the model to serve."""
    from gpu_advisor.memory.modelsource import looks_like_hub_id, looks_like_path
    if looks_like_path(name):
        return True
    return looks_like_hub_id(name) and resolve_method(name) is None and resolve_backbone(name) is None


def resolve(w: Workload) -> Resolved:
    """Profile and settings for ``w``; raises UnknownModelError for unknown names without params_billion."""
    if w.task == Task.preprocessing:
        return Resolved(kind="none", training=False, settings={})
    training = w.task != Task.inference
    r = Resolved(kind="cv", training=training, settings={})
    vision_hint = w.backbone is not None or w.input_size is not None  # serving a vision model named by its parts
    text = w.task in TEXT_TASKS or (w.task == Task.inference and (
        (w.model is None and not vision_hint) or (w.model is not None and resolve_transformer(w.model))
        or (w.seq_len is not None and w.input_size is None)
        or (w.model is not None and (_config_source(w.model) or (not vision_hint and looks_like_llm(w.model))))
        # an unknown name served at a billion parameters or more, with no image size: a language model ("Zeta-LM
        # (70B)"); vision models that large are served with their input size
        or (w.model is not None and not vision_hint and (w.params_billion or 0) >= 1 and resolve_method(w.model) is None)))
    if text:
        r.kind = "transformer"
        _resolve_text(w, r)
    else:
        _resolve_cv(w, r)
    fill_settings(w, r)
    return r
