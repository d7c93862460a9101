"""OpenMMLab config names as model names: method, backbone and the job settings the name spells out.

MMSegmentation / MMDetection name every config after what it trains (mmseg docs "Config Name Style",
mmdet docs "Config Name Style"):

  1.x / 3.x  {method}_{backbone}_[misc]_{gpus}xb{batch_per_gpu}-[amp]-{schedule}_{dataset}-{HxW}
             "deeplabv3plus_r50-d8_4xb2-80k_cityscapes-512x1024", "mask-rcnn_r50_fpn_1x_coco"
  0.x / 2.x  {method}_{backbone}_[misc]_[{gpus}x{batch_per_gpu}]_{HxW}_{schedule}_{dataset}
             "deeplabv3plus_r50-d8_512x1024_80k_cityscapes", "faster_rcnn_r50_fpn_1x_coco"

optionally with the "configs/<dir>/" prefix and ".py" suffix. ``parse`` reads such a name; ``config_model`` is the
detection-side reading (method tokens before the backbone plus norm / neck variants) that bench/memory_accuracy.py
uses for its dev rows. Detectron2 config names ("mask_rcnn_R_50_FPN_3x") are left to gpu_advisor.kb.models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_advisor.kb.models import resolve_backbone, resolve_plain_method
from gpu_advisor.workload import Task

# start of the backbone token in a detection config name ("r50", "x101-64x4d", "hrnetv2p-w32", "swin-t", ...)
BACKBONE_TOKEN = re.compile(r"(?:^|-)(?:r2$|r\d{2,3}|x\d{2,3}|regnetx|hrnetv2p|swin|pvt|convnext|res2net|resnest|mobilenet|vgg|darknet|cspnext)")
# backbone spellings of detection config names that carry the architecture size (bench/memory_accuracy._det_backbone)
DET_BACKBONE_FORM = re.compile(r"(hrnetv2p[-_]w\d+|swin-[tsbl]|regnetx[-_][\d.]+[gm]f|pvt(?:v2)?-[a-z0-9]+|convnext-[tsbl])")
SWIN_WINDOW = re.compile(r"swin-[tsbl]-p4-w(\d+)")
DENSE_SIZE = re.compile(r"(?:yolox|rtmdet(?:-ins)?)_(nano|tiny|s|m|l|x)_")
_D2_FORM = re.compile(r"_[RX]_\d{2,3}")   # Detectron2's upper-case "_R_50" / "_X_101": not an OpenMMLab name


def config_model(cfg: str) -> str | None:
    """Method name written in an MMDetection config name: the tokens before the backbone, plus norm / conv / neck
    variants ("detectors_htc-r50_1x_coco" -> "detectors-htc", "mask-rcnn_r50_fpn_gn-ws-all_2x_coco" -> "mask-rcnn-gn-ws",
    "retinanet_r50_fpg_crop640_50e_coco" -> "retinanet-fpg")."""
    # RF-Next (mmdet 2.x configs/rfnext): "rfnext_<mode>_<detector config>". search and fixed_multi_branch run every
    # searched conv as 2 dilation branches ("<detector>-rfnext"); fixed_single_branch only sets the searched dilations
    # and trains the plain detector.
    rfnext = re.match(r"rfnext_(search|fixed_single_branch|fixed_multi_branch)_(.+)$", cfg.lower())
    if rfnext:
        detector = config_model(rfnext.group(2))
        return detector if not detector or rfnext.group(1) == "fixed_single_branch" else detector + "-rfnext"
    parts = []
    for token in cfg.lower().split("_"):
        found = BACKBONE_TOKEN.search(token)
        if found:
            if found.start():
                parts.append(token[:found.start()])
            break
        parts.append(token)
    else:
        return None
    if not parts:
        return None
    name = "-".join(parts)
    if re.search(r"gn[-_]ws", cfg):
        name += "-gn-ws"
    elif re.search(r"gn-all", cfg):
        name += "-gn"
    if re.search(r"-sac[_-]", cfg):
        name += "-sac"
    # neck / module / recipe variants written after the backbone, as a user names them ("RetinaNet FPG",
    # "Faster R-CNN empirical attention", "Mask R-CNN SyncBN-all", "Mask2Former VIS")
    if re.search(r"[_-]fpg", cfg):
        name += "-fpg-chn128" if "chn128" in cfg else "-fpg"
    if re.search(r"[_-](?:attention|attn)[_-]?1111", cfg):
        name += "-attention"
    if "syncbn-all" in cfg:
        name += "-syncbn-all"
    if "youtubevis" in cfg:
        name += "-vis"
    return name


def det_backbone_name(cfg: str) -> str | None:
    """Backbone written in a detection config name for backbones whose size only the name gives: "hrnetv2p-w32",
    "swin-b" (+ "-w12" for a 12 x 12 attention window: "swin-b-p4-w12-384"), "regnetx-3.2gf", "pvtv2-b2",
    "convnext-t"; None when the name has none of these."""
    cfg = cfg.lower()
    found = DET_BACKBONE_FORM.search(cfg)
    if not found:
        return None
    window = SWIN_WINDOW.search(cfg)
    return found.group(1) + (f"-w{window.group(1)}" if window and window.group(1) != "7" else "")


def dense_size(cfg: str) -> str | None:
    """YOLOX / RTMDet size written in the config name ("yolox_s_8xb8-300e_coco" -> "s")."""
    size = DENSE_SIZE.search(cfg.lower())
    return size.group(1) if size else None


# Classes per dataset token. MMSegmentation 1.2.2 mmseg/datasets/*.py METAINFO['classes']: cityscapes 19, ade.py 150,
# voc.py 21 (background + 20; "voc12aug" = VOC 2012 + SBD aug), pascal_context.py 60 (PascalContextDataset,
# background + 59) / 59 (PascalContextDataset59), coco_stuff.py 171, loveda.py 7, potsdam.py 6, isprs.py (Vaihingen) 6,
# isaid.py 16 (background + 15), synapse.py 9. MMDetection 3.3.0 mmdet/datasets/*.py METAINFO['classes']: coco.py 80,
# coco_panoptic.py 133 (80 things + 53 stuff), lvis.py LVISV1Dataset 1203 / LVISV05Dataset 1230, objects365.py 365,
# openimages.py 601 (V6), cityscapes.py 8 (instance classes), crowdhuman.py 1, voc.py 20, youtube_vis_dataset.py 40.
# Longest token first: "pascal-context-59" before "pascal-context", "voc12aug" before "voc".
SEG_CLASSES = (("pascal-context-59", 59), ("pascal-context", 60), ("coco-stuff164k", 171), ("coco-stuff10k", 171),
               ("cityscapes", 19), ("ade20k", 150), ("voc12aug", 21), ("voc12", 21), ("voc", 21), ("loveda", 7),
               ("potsdam", 6), ("vaihingen", 6), ("isaid", 16), ("synapse", 9))
DET_CLASSES = (("coco-panoptic", 133), ("lvis-v0.5", 1230), ("lvis-v1", 1203), ("lvis", 1203), ("objects365v1", 365),
               ("objects365v2", 365), ("objects365", 365), ("obj365", 365), ("openimages", 601), ("cityscapes", 8),
               ("crowdhuman", 1), ("voc0712", 20), ("voc", 20), ("youtubevis-2019", 40), ("youtubevis-2021", 40),
               ("youtubevis", 40), ("coco", 80))
_DATASETS = sorted({d for d, _ in SEG_CLASSES + DET_CLASSES}, key=len, reverse=True)
_DATASET = re.compile(r"(?:^|[_-])(" + "|".join(re.escape(d) for d in _DATASETS) + r")(?=$|[_.-]|\d)")

# a token that starts the training part of the name (batch, schedule, crop, dataset, augmentation recipe)
_TRAIN_TOKEN = re.compile(r"^(?:(?:\d+xb\d+|\d+x\d+|\d+x|\d+e|\d+k|mstrain|mstest|lsj|crop\d+|amp|fp16)(?=$|-)|ms-|"
                          + "|".join(re.escape(d) for d in _DATASETS) + r")")
_BATCH_1X = re.compile(r"(?:^|[_-])\d+xb(\d+)(?=$|[_-])")
_BATCH_0X = re.compile(r"(?:^|_)\d{1,2}x(\d{1,2})(?=$|_)")            # mmdet 2.x "[gpu x batch_per_gpu]": "4x4"
_SIZE = re.compile(r"(?:^|[_-])(\d{3,4})x(\d{3,4})(?=$|[_-])")
_CROP = re.compile(r"(?:^|[_-])crop(\d{3,4})(?=$|[_-])")
_AMP = re.compile(r"(?:^|[_-])(amp|fp16)(?=$|[_-])")
_SWIN = re.compile(r"^swin-(t|s|b|l)[a-z]*(?:-patch4)?(?:-window(\d+))?")


@dataclass(frozen=True)
class ConfigName:
    """What an OpenMMLab config name says; None where it says nothing."""

    name: str                               # the name without directory and ".py"
    method: str | None                      # method key (gpu_advisor.kb.models)
    backbone: str | None                    # backbone token, in a form resolve_backbone reads ("r50-d8", "swin-t")
    batch_per_gpu: int | None
    input_size: tuple[int, int] | None
    dataset: str | None
    amp: bool

    def num_classes(self, task: Task | str | None) -> int | None:
        """Classes of the dataset token for the task (detection lists for detection / instance / panoptic)."""
        if self.dataset is None:
            return None
        task = getattr(task, "value", task)
        det = task in ("object_detection", "instance_segmentation", "panoptic_segmentation")
        if det and task == "panoptic_segmentation" and self.dataset == "coco":
            return 133
        for d, n in (DET_CLASSES if det else SEG_CLASSES) + (SEG_CLASSES if det else DET_CLASSES):
            if d == self.dataset:
                return n
        return None


def clean(name: str) -> str:
    """The bare config name: no directory, no ".py"."""
    return re.sub(r"\.py$", "", name.strip().replace("\\", "/").rsplit("/", 1)[-1])


def _backbone_form(token: str) -> str:
    swin = _SWIN.match(token)
    if swin:
        window = swin.group(2)
        return f"swin-{swin.group(1)}" + (f"-w{window}" if window and window != "7" else "")
    token = re.sub(r"^(deit-[tsb])\d+", r"\1", token)
    token = re.sub(r"^mobilenet-v3-d(\d+)(?:-scratch)?-s$", r"mobilenet-v3-small-d\1", token)
    return token


def _as_backbone(token: str) -> str | None:
    """The token (or its leading '-' parts) in a form resolve_backbone reads, else None."""
    parts = _backbone_form(token).split("-")
    for n in range(len(parts), 0, -1):
        candidate = "-".join(parts[:n])
        if re.search(r"[a-z]", candidate) and resolve_backbone(candidate):
            return candidate
    return None


def _key(form: str | None) -> str | None:
    found = resolve_backbone(form) if form else None
    return found[0] if found else None


def _pick_backbone(tokens: list[str]) -> tuple[str | None, set[int]]:
    """(backbone form, indices of the tokens it used): a token (or two adjacent ones, "poolformer_s24") that reads
    as a backbone; sized spellings (with a digit: "deit-s16", "s101-d8") before bare family names ("vit", "resnest")."""
    found = []
    for i, tok in enumerate(tokens):
        for span in ((i, i + 1), (i,)):
            if span[-1] >= len(tokens):
                continue
            text = "-".join(tokens[j] for j in span)
            form = _as_backbone(text)
            if form and len(span) == 2 and (_key(form) == _key(_as_backbone(tok))
                                            or form.count("-") <= _backbone_form(tok).count("-")):
                continue   # the second token adds nothing ("r50_fpn"): the single token stands
            if form:
                found.append((not re.search(r"\d", text), i, -len(span), form, set(span)))
    if not found:
        return None, set()
    best = min(found, key=lambda f: f[:3])
    return best[3], best[4]


def _method(tokens: list[str]) -> str | None:
    """Method key from contiguous model tokens, longest run first ("knet-s3-fcn", "fastfcn-jpu-aspp", "nas-fcos")."""
    for size in range(len(tokens), 0, -1):
        for start in range(0, len(tokens) - size + 1):
            found = resolve_plain_method("-".join(tokens[start:start + size]))
            if found:
                return found[0]
    return None


def parse(name: str) -> ConfigName | None:
    """Read an OpenMMLab config name; None when ``name`` is not one (no '_', no training token, Detectron2 form)."""
    if not isinstance(name, str) or _D2_FORM.search(name):
        return None
    cfg = clean(name).lower()
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.\-]*", cfg) or "_" not in cfg:
        return None
    tokens = cfg.split("_")
    start = next((i for i, t in enumerate(tokens) if i and _TRAIN_TOKEN.match(t)), None)
    if start is None:
        return None   # a config name names its schedule, batch or dataset
    model = tokens[:start]
    backbone, used = _pick_backbone(model)
    method = None
    named = config_model(cfg)
    base = resolve_plain_method(named) if named else None
    if base:
        method = base[0]
        # head / neck written after the backbone: "knet-s3_r50-d8_fcn" -> K-Net (FCN), "fastfcn_r50-d32_jpu_aspp" ->
        # FastFCN (DeepLabV3), "faster_rcnn_r50_pafpn" -> PAFPN, "mask_rcnn_r50_fpn_r16_gcb_c3-c5" -> GCNet
        after = [t for i, t in enumerate(model) if i > max(used, default=-1)]
        for extra in (["-".join(after)] if after else []) + after:
            found = resolve_plain_method(f"{named}-{extra}")
            if found and found[0] != method:
                method = found[0]
                break
    if method is None:
        rest = [t for i, t in enumerate(model) if i not in used]
        method = _method(rest) or _method(model)
    size = _SIZE.search(cfg)
    crop = _CROP.search(cfg)
    batch = _BATCH_1X.search(cfg) or _BATCH_0X.search(cfg)
    dataset = _DATASET.search("_".join(tokens[start:]))
    return ConfigName(
        name=clean(name), method=method, backbone=backbone,
        batch_per_gpu=int(batch.group(1)) if batch else None,
        input_size=((int(size.group(1)), int(size.group(2))) if size
                    else (int(crop.group(1)), int(crop.group(1))) if crop else None),
        dataset=dataset.group(1) if dataset else None, amp=bool(_AMP.search(cfg)))


def resolve_method(name: str) -> tuple[str, str | None] | None:
    """Method key, plus a backbone key when the name carries one ('SegFormer-B5', 'Mask R-CNN R-50-FPN', or an
    OpenMMLab config name: 'deeplabv3plus_r50-d8_4xb2-80k_cityscapes-512x1024', gpu_advisor.kb.confignames)."""
    found = resolve_plain_method(name)
    if found is not None:
        return found
    cfg = parse(name)
    if cfg is None or cfg.method is None:
        return None
    bb = resolve_backbone(cfg.backbone) if cfg.backbone else None
    return cfg.method, bb[0] if bb else None
