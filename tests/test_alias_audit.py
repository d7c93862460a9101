"""Alias audit: every name the knowledge base resolves names the model of its profile, never another one.

Twice an alias mapped a distinct model onto another's profile (YOLOv8 / YOLOv5 onto YOLOX; RT-DETR, DINO, DAB-DETR,
DDQ onto DETR). Pinned here:
- names of other models (other heads, decoders, backbones, inputs, sizes or versions) that must NOT resolve, so that
  they are refused with the closest known names;
- a generic check: a size / version token in an alias (7b, 8x22b, 64x8d, b5, w48, l, large, v0.2, 3.3 ...) is one its
  profile's key or display also has, unless the pair is in JUDGED with the reason it is the same network;
- same_shape names (other models estimated with this profile's shapes) always carry their source;
- `ask` never takes a known name and drops the size written after it ("InternLM2.5 20B" is not InternLM2.5 7B).
"""

from __future__ import annotations

import re

import pytest

from gpu_advisor.ask.vocab import find_names
from gpu_advisor.kb.confignames import resolve_method
from gpu_advisor.kb.models import knowledge, resolve_backbone, resolve_transformer

# Names of models the knowledge base has no profile of: each would be answered for another model if it resolved.
MUST_NOT_RESOLVE = [
    # detection / segmentation heads other than the profile's
    "SSDLite", "SSD512", "SSDLite-MobileNetV2", "SETR-MLA", "SETR-Naive", "FCN-8s", "CondInst", "BoxInst", "CrowdDet",
    "Mask Scoring R-CNN", "MS R-CNN", "PointRend-instance", "DINO", "Deformable-DETR", "RT-DETR", "DAB-DETR", "DDQ",
    "YOLOv9", "YOLOv10n", "RTMDet-R", "HTC++",
    # backbones of another size or version
    "Swin-H", "SwinV2-T", "Swin-V2-B", "ViT-L/14", "ViT-B/32", "ViT-G/14", "ViT-S/8", "mit-b6", "SegFormer-B6",
    "ResNet-50-D", "resnet50d", "ResNet-152", "ResNet-200", "ConvNeXt-V2", "ConvNeXt-V2-T", "ConvNeXtV2-B",
    "ConvNeXt-XL", "HRNet-W64", "RegNetY-4GF", "PVTv2-B5", "EfficientNet-B7", "MobileNetV4", "DeiT3-B",
    # language models of another size, version, vocabulary or fine-tune shape
    "StableLM-3B", "StableLM-3B-4E1T", "stablelm-zephyr-3b", "Qwen2.5-Coder", "CodeQwen1.5-7B", "CodeLlama-70B",
    "StarCoder2-3B", "StarCoder2-15B", "starcoder", "DeepSeek-Coder-6.7B",
    "Qwen3-Coder-14B-Instruct", "Llama 3.3 8B", "Qwen2-VL-7B",
    "DeepSeek-V2", "Mixtral-8x7B-v0.2", "Mistral-7B-v0.4", "Phi-3-medium",
    "Phi-3.5-MoE", "InternLM2.5-20B", "Baichuan2-13B", "Yi-1.5-9B", "Yi-6B", "bert-large-chinese", "DistilBERT",
    "ALBERT-base", "xlm-roberta-base", "bert-base-multilingual-cased", "chinese-roberta-wwm-ext",
    # embedding / reranker models of another size, version or network than a shipped one
    "bge-large-zh", "bge-small-zh", "bge-reranker-large", "bge-reranker-v2-gemma", "jina-embeddings-v3",
    "gte-Qwen2-7B-instruct", "Qwen3-Reranker-8B", "multilingual-e5-large", "GLM-4.6",
]

# Questions whose model name carries a size after a space: `ask` must not take the known name without it.
SIZED_AFTER = [
    ("Serve InternLM2.5 20B on one A10", "InternLM2.5"), ("Serve Baichuan2 13B", "Baichuan2"),
    ("Serve Qwen3-Coder 14B on 2 A100", "Qwen3-Coder"), ("Train ConvNeXt XL on ImageNet", "ConvNeXt"),
    ("Train ResNeXt-101 64x8d Faster R-CNN", "ResNeXt-101"), ("Train HRNet W64 for segmentation", "HRNet"),
    ("Train SegFormer B6 on ADE20K", "SegFormer"), ("Serve Mistral 7B v0.4", "Mistral 7B"),
]

# Aliases whose size / version token their profile's key and display do not spell, judged the same network.
JUDGED = {
    # MMSeg "b" = ResNetV1b (torchvision stem: one 7x7 conv); the profile's V1c stem keeps more values (conservative);
    # the stages, widths and parameters (within 0.1 M) are the same
    **{("backbones", k, a): "ResNetV1b: same stages" for k, a in [
        ("resnet18", "r-18b"), ("resnet18", "resnet18b"), ("resnet50", "r-50b"), ("resnet50", "resnet50b"),
        ("resnet101", "r-101b"), ("resnet101", "resnet101b")]},
    ("backbones", "resnet50", "r-50-c4"): "the backbone of a C4 detector (the head is the method's C4 variant)",
    # abbreviations MMSeg / MMDet / timm write
    **{("backbones", k, a): "abbreviation" for k, a in [
        ("resnest101", "s-101"), ("resnext101_32x4d", "x-101-32x4d"), ("resnext101_32x4d", "x-101"),
        ("resnext101_32x4d", "x101"), ("resnext101_32x4d", "x-101-32x4d-fpn"), ("resnext101_32x8d", "x-101-32x8d"),
        ("resnext101_64x4d", "x-101-64x4d"), ("resnext50_32x4d", "x-50-32x4d"), ("resnext50_32x4d", "x-50"),
        ("res2net101", "r2-101"), ("mobilenet_v2", "m-v2"), ("mobilenet_v3_large", "m-v3"),
        ("mobilenet_v3_large", "m-v3-large"), ("mobilenet_v3_small", "m-v3s"), ("mobilenet_unet", "m-v2-unet"),
        ("hrnet_w18_small", "hr18s"), ("hrnet_w18_small", "hrnet18s"), ("ddrnet_23_slim", "ddrnet23s"),
        ("hrnet_w18_small", "hrnetv2-w18-small"), ("hrnet_w18", "hrnetv2-w18"), ("hrnet_w32", "hrnetv2-w32"),
        ("hrnet_w40", "hrnetv2-w40"), ("hrnet_w48", "hrnetv2-w48"), ("cspnext_l", "cspnext-p5"),
        ("regnetx_400mf", "regnetx-0.4gf"), ("regnetx_3.2gf", "regnetx-3gf"), ("regnetx_4.0gf", "regnetx-4gf"),
        ("regnetx_8.0gf", "regnetx-8gf")]},
    ("backbones", "cspdarknet_s", "yolov5s-backbone"): "YOLOX's CSPDarknet is YOLOv5's at the same depth / width (0.33 / 0.5)",
    # timm / Hub checkpoint names: patch 4, window 7 / 12, pretraining resolution (the window-12 models are their own)
    **{("backbones", k, a): "checkpoint name" for k, a in [
        ("swin_t", "swin_tiny_patch4_window7_224"), ("swin_b_w12", "swin-b-p4-w12"), ("swin_b_w12", "swin-b-p4-w12-384"),
        ("swin_b_w12", "swin-base-patch4-window12"), ("swin_b_w12", "swin_base_patch4_window12_384"),
        ("swin_l_w12", "swin-l-p4-w12"), ("swin_l_w12", "swin-l-p4-w12-384"), ("swin_l_w12", "swin-large-patch4-window12"),
        ("swin_l_w12", "swin_large_patch4_window12_384"), ("vit_b16", "vit-base-patch16-224"),
        ("vit_b16", "google/vit-base-patch16-224")]},
    ("backbones", "stdc1", "stdc-seg50"): "STDC1-Seg50: the STDC1 network (50 = the input scale)",
    ("backbones", "stdc2", "stdc-seg75"): "STDC2-Seg75: the STDC2 network (75 = the input scale)",
    # method names written with their default backbone or settings
    **{("methods", k, a): "the method with its default backbone / settings" for k, a in [
        ("faster_rcnn", "faster_rcnn_r50_fpn"), ("mask_rcnn", "mask_rcnn_r50_fpn"), ("scnet", "scnet-r50"),
        ("faster_rcnn_c4", "faster-rcnn-r50-c4"), ("mask_rcnn_c4", "mask-rcnn-r50-c4"), ("dyhead", "atss-r50-fpn-dyhead"),
        ("faster_rcnn_dc5", "faster-rcnn-r50-dc5"), ("mask_rcnn_dc5", "mask-rcnn-r50-dc5"),
        ("cornernet", "cornernet-hourglass104"), ("centripetalnet", "centripetalnet-hourglass104"),
        ("faster_rcnn_attention", "faster-rcnn-attn1111"), ("mask_rcnn_syncbn_all", "mask-rcnn-syncbn-all-rpn-2conv"),
        ("mask_rcnn_syncbn_all", "mask-rcnn-4conv1fc-syncbn-all"), ("sparse_rcnn", "sparse-rcnn-100-proposals"),
        ("queryinst", "queryinst-100-proposals"), ("ssd", "ssd300"), ("sam", "sam-vit-h"), ("sam", "sam-h"),
        ("sam", "facebook/sam-vit-huge"), ("knet", "knet-s3"), ("knet", "knet-s3-upernet"), ("knet_fcn", "knet-s3-fcn"),
        ("knet_pspnet", "knet-s3-pspnet"), ("knet_deeplabv3", "knet-s3-deeplabv3"), ("deeplabv3plus", "deeplabv3p"),
        ("mobilenet_unet", "mobilenet-v2-unet"), ("segnext", "light-ham"), ("mask2former", "m2f"),
        ("mask2former_vis", "mask2formervideo"), ("yolox", "yolo-x")]},
    # the same checkpoint family: version tags of the same config, re-releases with the same shapes, hub spellings
    **{("transformers", k, a): "same config.json shapes (version tag / re-release / spelling)" for k, a in [
        ("mistral-7b", "mistralai/mistral-7b-v0.1"), ("mistral-7b", "mistral-7b-v0.1"),
        ("mistral-7b", "mistral-7b-instruct-v0.1"), ("mistral-7b", "mistralai/mistral-7b-instruct-v0.1"),
        ("yi-34b", "01-ai/yi-34b"),
        # (Qwen3-4B / 30B-A3B -2507 builds are same_shape names now: their configs state a 262,144-token context)
        ("qwen3-235b-a22b", "qwen/qwen3-235b-a22b-instruct-2507"), ("deepseek-v3", "deepseek-v3-0324"),
        ("deepseek-v3", "deepseek-ai/deepseek-v3-0324"), ("deepseek-r1", "deepseek-r1-0528"),
        ("deepseek-r1", "deepseek-ai/deepseek-r1-0528"), ("deepseek-r1", "deepseek-r1:671b"),
        ("llama-3.1-8b", "llama31-8b"), ("tinyllama-1.1b", "tiny-llama"), ("tinyllama-1.1b", "tiny-llama-1.1b"),
        ("glm-4.7", "glm-4.7-355b"), ("qwen2.5-vl-7b", "qwen2.5vl-7b"), ("qwen2.5-vl-7b", "qwen2_5-vl-7b"),
        ("qwen2.5-vl-3b", "qwen2.5vl-3b"), ("qwen2.5-vl-3b", "qwen2_5-vl-3b")]},
}

_TOKEN = re.compile(r"[a-z]+|\d+(?:\.\d+)*(?:x\d+(?:\.\d+)?)?[a-z]*")
_SYNONYM = {"tiny": "t", "ti": "t", "small": "s", "base": "b", "large": "l", "huge": "h", "medium": "m"}
_SIZE_WORDS = {"t", "s", "m", "l", "x", "h", "b", "n", "xl", "xxl", "nano", "mini", "lite", "light", "slim", "giant", "g"}
_LLM_BUILD = {"base", "instruct", "chat", "it", "pt", "hf"}   # builds of one checkpoint, not sizes


def _tokens(text: str, llm: bool) -> set[str]:
    return {_SYNONYM.get(t, t) for t in _TOKEN.findall(text.lower()) if not (llm and t in _LLM_BUILD)}


def _size_tokens(text: str, llm: bool) -> set[str]:
    return {t for t in _tokens(text, llm) if re.search(r"\d", t) or t in _SIZE_WORDS}


def _pools():
    kb = knowledge()
    return (("backbones", kb.backbones), ("methods", kb.methods), ("transformers", kb.transformers))


def audit() -> list[tuple[str, str, str, list[str]]]:
    """(pool, key, alias, tokens) for each alias with a size / version token its profile's key and display lack."""
    out = []
    for pool, specs in _pools():
        llm = pool == "transformers"
        for key, spec in specs.items():
            own = _tokens(key, llm) | _tokens(spec.display, llm) | _tokens(getattr(spec, "hub_id", None) or "", llm)
            for alias in spec.aliases:
                extra = sorted(_size_tokens(alias, llm) - own)
                if extra:
                    out.append((pool, key, alias, extra))
    return out


@pytest.mark.parametrize("name", MUST_NOT_RESOLVE)
def test_other_models_do_not_resolve(name: str) -> None:
    assert resolve_transformer(name) is None, name
    assert resolve_method(name) is None, name
    assert resolve_backbone(name) is None, name
    assert find_names(f"Train {name} on 8 GPUs") == [], name


def test_alias_size_tokens_match_their_profile() -> None:
    unjudged = [row for row in audit() if row[:3] not in JUDGED]
    assert not unjudged, ("aliases with a size / version token their profile does not have; judge each (same network: "
                          "add to JUDGED with the reason; another model: remove it, or record it as same_shape with "
                          f"its source): {unjudged}")


def test_judged_table_is_current() -> None:
    flagged = {row[:3] for row in audit()}
    assert not set(JUDGED) - flagged, f"JUDGED rows no longer flagged (remove them): {sorted(set(JUDGED) - flagged)}"


def test_same_shape_names_carry_their_source() -> None:
    for _, specs in _pools():
        for key, spec in specs.items():
            if getattr(spec, "same_shape", None):
                assert spec.same_shape_source and len(spec.same_shape_source) > 20, key
                assert not {n.lower() for n in spec.same_shape} & {a.lower() for a in spec.aliases}, key


@pytest.mark.parametrize("question,known", SIZED_AFTER)
def test_ask_keeps_the_size_written_after_a_name(question: str, known: str) -> None:
    sized: list = []
    names = find_names(question, sized)
    assert all(n.text != known for n in names), names
    assert [u.text for u in sized] and known in sized[0].text, sized


def test_counts_and_gpus_after_a_name_are_not_sizes() -> None:
    for q, key in [("Fine-tune Qwen2.5-7B 1M tokens", "qwen2.5-7b"), ("Llama 3.1 8B V100", "llama-3.1-8b"),
                   ("用Qwen2.5-7B 8卡训练", "qwen2.5-7b"), ("Swin-T 224x224 on ImageNet", "swin_t")]:
        assert [n.key for n in find_names(q)][:1] == [key], q
