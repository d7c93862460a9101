"""CV activation model: fp32 values saved for backward per input pixel, from layer shapes.

Each backbone stage row [stride, blocks, width, block_type, extra...] contributes
blocks x width x VALUES[block_type] / stride^2 values per input pixel (stride clamped to the output stride
of dilated variants). Rules (PyTorch autograd saved tensors, in-place ReLU) are documented in
knowledge/models/backbones.yaml and docs/memory-model.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_advisor.kb.models import BackboneSpec, MethodSpec

VALUES_PER_WIDTH: dict[str, float] = {
    "basic": 4.0, "regnet": 6.0, "conv": 2.0, "conv_nobn": 1.0, "raw": 1.0, "ir": 4.3, "ir_v3": 6.5,
    "convnext": 12.0, "vit": 16.0, "swin": 18.0, "mit": 20.0, "poolformer": 14.0, "mscan": 34.0,
    "csp": 3.5, "cspnext": 5.0,
}
# once per stage row: the stage's first-block extras. CSP stages (width C, SiLU not in place: conv-BN-SiLU keeps
# 3 tensors): stride-2 down conv 3C + main/short 1x1 convs 2 x 1.5C + concat C + final conv 3C = 10C (+ channel
# attention C in CSPNeXt); per block at C/2: YOLOX DarknetBottleneck 2 convs + add = 3.5C, CSPNeXtBlock 3x3 conv +
# depth-wise 5x5 + point-wise 1x1 + add = 5C.
FIRST_BLOCK_EXTRA = {"bottleneck": 4.0, "basic": 1.0, "regnet": 1.0, "csp": 10.0, "cspnext": 11.0, "mscan": 2.0}
# MSCAN block (mmseg/models/backbones/mscan.py, SegNeXt Guo et al. 2209.08575), with the stage row's MLP ratio r
# (row[4]; configs/segnext: mlp_ratios=[8, 8, 4, 4]): attention half BN in/out, proj_1 out (GELU input), GELU out,
# u = x.clone() (kept by the gating product), conv0 out, 3 strip-branch intermediates, branch sum, conv3 out, product,
# attn + shortcut (kept by the layer-scale product) = 13C; MLP half BN in/out, fc1 out, dwconv out (GELU input),
# GELU out (3rC), fc2 out (layer-scale product) = 3C + 3rC. Stage extras: patch-embed BN input + the contiguous
# copy after the stage LayerNorm = 2C.
MSCAN_BASE, MSCAN_PER_RATIO = 16.0, 3.0
# CSPNeXtPAFPN (mmdet/models/necks/cspnext_pafpn.py): each of its 4 CSPLayers holds num_csp_blocks CSPNeXtBlocks at
# half its output width (3x3 conv + depth-wise 5x5 + point-wise 1x1, conv-BN-SiLU = 3 tensors: 9 x out/2 = 4.5 out);
# outputs 2C @16 (top-down), C @8, 2C @16, 4C @32 (bottom-up) -> 4.5 x (2/256 + 1/64 + 2/256 + 4/1024) = 0.158 values
# per input pixel per head channel per block. num_csp_blocks = max(round(3 x deepen), 1) = the CSPNeXt backbone's
# first-stage depth (configs/rtmdet: tiny/s 1, m 2, l 3, x 4).
CSPNEXT_PAFPN_PER_BLOCK = 4.5 * (2.0 / 256 + 1.0 / 64 + 2.0 / 256 + 4.0 / 1024)
# Detectron2's ResNet (detectron2/modeling/backbone/resnet.py, MODEL.RESNETS.NORM = "FrozenBN", the default of every
# R/X model-zoo config) normalises with FrozenBatchNorm2d (detectron2/layers/batch_norm.py): when its input requires
# grad, forward is `x * scale + bias` with scale / bias computed from buffers. mul saves an operand only for the other
# operand's gradient (autograd codegen tools/autograd/gen_variable_type.py emit_save_inputs / guard_for, present in
# the 2019 PyTorch 1.x codegen): scale needs none, so x is not kept, and add keeps nothing. An nn.BatchNorm2d (MMDet,
# also with norm_eval / requires_grad=False) keeps its input. Per bottleneck the BN inputs (conv1, conv2, conv3
# outputs: m + m + r*m) go, leaving the two ReLU outputs and the block output: (2 + r) m instead of (4 + 2r) m; the
# first block's projection shortcut (conv + FrozenBN, its input is the block input conv1 keeps) adds nothing.
FROZEN_BN_BOTTLENECK_BASE = 2.0
# Frozen stem + first stage (MMDetection frozen_stages=1, Detectron2 FREEZE_AT=2): no tensor inside them is saved (no
# parameter there requires grad and the image does not), but their output C2 (256 x H/4 x W/4 for ResNet-50) is the
# input of stage 2's first conv1 and of its stride-2 projection shortcut (and of the FPN lateral conv on C2), whose
# weights train: ConvolutionBackward saves its input for the weight gradient (torch/csrc/autograd derivatives.yaml
# `convolution`/`cudnn_convolution`: grad_weight needs self). It was left out with the frozen stage's own tensors.


# RF-Next search (mmcv cnn/rfsearch/search.py RFSearchHook.wrap_model): every nn.Conv2d with an odd kernel > 1 outside
# `skip_layer` becomes a Conv2dRFSearchOp. Output widths of such convs per block, in units of the stage row's width:
# basic block conv1 + conv2 (3x3) = 2; ResNet bottleneck conv2 (3x3, mid width) = 1, Res2Net's scales - 1 of its
# `scales` 3x3 splits (mmdet res2net.py Bottle2neck, scales 4) = 3/4; RegNet X block 3x3 group conv = 1; ConvNeXt
# 7x7 depth-wise conv = 1 (downsample 2x2 and stem 4x4 convs have even kernels). Other rows (HRNet fuse `conv` rows:
# mostly 1x1 + upsample, transformer blocks) count 0 - an undercount for HRNet's 3x3 fuse/transition convs.
SEARCH_CONV_WIDTH = {"basic": 2.0, "bottleneck": 1.0, "regnet": 1.0, "convnext": 1.0}
RES2NET_SEARCH_SPLITS = 3.0 / 4.0
# mmdet configs/rfnext set skip_layer=['stem', 'layer1'] for backbones whose modules carry those names (ResNet family,
# Res2Net, HRNet: stage row 0 = layer1); ConvNeXt (stages.N) runs with skip_layer=[]. HRNet's stem is conv1/conv2 (no
# module named 'stem'), so it is searched.
SEARCH_SKIP_FIRST_STAGE = ("resnet", "resnext", "res2net", "resnest", "regnet", "hrnet")


def search_conv_values(bb: BackboneSpec, output_stride: int, frozen_stem: bool) -> float:
    """Output values per input pixel of the backbone convs RF-Next search wraps (k > 1, odd), one branch."""
    values = 0.0 if frozen_stem else 0.5 * sum(v / (s * s) for s, v in bb.stem)   # stem rows are conv-BN-ReLU (2 C)
    for index, row in enumerate(bb.stages):
        if index == 0 and bb.key.startswith(SEARCH_SKIP_FIRST_STAGE):
            continue
        width = SEARCH_CONV_WIDTH.get(str(row[3]), 0.0)
        if row[3] == "bottleneck" and bb.key.startswith("res2net"):
            width *= RES2NET_SEARCH_SPLITS
        stride = min(int(row[0]), output_stride)
        values += float(row[1]) * width * float(row[2]) / (stride * stride)
    return values


@dataclass(frozen=True)
class CvCoefficients:
    """Per input pixel of one image."""

    linear_values: float      # fp32 values saved, linear in pixels
    attn_terms: tuple[tuple[float, float, str], ...]  # (heads x layers / stride^2, stride, keys) quadratic terms
    flops_per_pixel: float    # forward FLOPs per input pixel


def _block_values(row: list, width: float, frozen_bn: bool = False) -> float:
    kind = row[3]
    if kind == "bottleneck":
        ratio = float(row[4]) if len(row) > 4 else 4.0
        if frozen_bn:
            return width * (FROZEN_BN_BOTTLENECK_BASE + ratio)
        return width * (4.0 + 2.0 * ratio)
    if kind == "mscan" and len(row) > 4:
        return width * (MSCAN_BASE + MSCAN_PER_RATIO * float(row[4]))
    return width * VALUES_PER_WIDTH[kind]


def _block_params(row: list, width: float) -> float:
    kind = row[3]
    if kind == "bottleneck":
        ratio = float(row[4]) if len(row) > 4 else 4.0
        return width * width * (9.0 + 2.0 * ratio)
    per = {"basic": 18.0, "regnet": 11.0, "conv": 9.0, "conv_nobn": 9.0, "raw": 0.0, "ir": 0.35, "ir_v3": 0.35,
           "convnext": 8.0, "csp": 5.0, "cspnext": 3.0, "vit": 12.0, "swin": 12.0, "mit": 12.5, "poolformer": 8.0, "mscan": 8.5}[kind]
    return per * width * width


def backbone_coefficients(bb: BackboneSpec, output_stride: int, frozen_stem: bool,
                          frozen_bn: bool = False, stages: int | None = None) -> CvCoefficients:
    """Saved values, attention terms and FLOPs per input pixel for a backbone at an output stride.

    frozen_bn: bottleneck stages normalised by Detectron2's FrozenBatchNorm2d (no BN input kept, see above).
    stages: run only the first `stages` stage rows on the image (C4 detectors: res2-res4)."""
    values, flops, attn = 0.0, 0.0, []
    if not frozen_stem:
        values += sum(v / (s * s) for s, v in bb.stem)
    for index, row in enumerate(bb.stages[:stages]):
        stride = min(int(row[0]), output_stride)
        blocks, width = float(row[1]), float(row[2])
        area = stride * stride
        flops += 2.0 * blocks * _block_params(row, width) / area
        if frozen_stem and index == 0 and bb.kind == "cnn":
            # the frozen stage's output is still kept: the next stage's first conv1 and projection shortcut have
            # trainable weights and save their input (ConvolutionBackward keeps it for the weight gradient), as do
            # FPN lateral convs on C2 (FROZEN_STAGE_OUTPUT_KEPT)
            if len(bb.stages[:stages]) > 1:
                values += _stage_out_channels(row) / area
            continue
        frozen_row = frozen_bn and row[3] == "bottleneck"
        extra = 0.0 if frozen_row else FIRST_BLOCK_EXTRA.get(row[3], 0.0)
        values += (blocks * _block_values(row, width, frozen_row) + extra * width) / area
        if len(row) > 5:
            attn.append((float(row[4]) * blocks / area, float(stride), str(row[5])))
    return CvCoefficients(values, tuple(attn), flops)


# C4 RoI heads (Detectron2 modeling/roi_heads/roi_heads.py Res5ROIHeads; mmdet ResLayer shared head): ROIAlignV2
# pools each sampled RoI from res4 at ROI_BOX_HEAD.POOLER_RESOLUTION = 14 (detectron2/config/defaults.py), and res5
# (_build_res5_block: 3 bottlenecks, first stride 2, in the 1x1 conv with STRIDE_IN_1X1 = True) runs on that 14 x 14
# crop: its block tensors are 7 x 7. Kept per RoI: the pooled crop (res4 width x 14^2, saved by conv1 and the
# projection shortcut) + res5's block tensors at 7^2 (the backbone bottleneck rule, FrozenBN or BN).
C4_POOLED_SIDE = 14
C4_STAGE_SIDE = C4_POOLED_SIDE // 2


def roi_stage(bb: BackboneSpec, frozen_bn: bool) -> tuple[float, float]:
    """(fp32 values saved, forward FLOPs) per RoI when the backbone's last stage runs on 14 x 14 pooled RoI features."""
    row, in_ch = bb.stages[-1], _stage_out_channels(bb.stages[-2])
    blocks, width = float(row[1]), float(row[2])
    frozen_row = frozen_bn and row[3] == "bottleneck"
    extra = 0.0 if frozen_row else FIRST_BLOCK_EXTRA.get(row[3], 0.0)
    area = C4_STAGE_SIDE * C4_STAGE_SIDE
    values = in_ch * C4_POOLED_SIDE**2 + (blocks * _block_values(row, width, frozen_row) + extra * width) * area
    return values, 2.0 * blocks * _block_params(row, width) * area


def last_stage_params(bb: BackboneSpec) -> float:
    """Weights of the backbone's last stage (blocks + the first block's 1x1 projection shortcut), a count."""
    row = bb.stages[-1]
    return float(row[1]) * _block_params(row, float(row[2])) + _stage_out_channels(bb.stages[-2]) * _stage_out_channels(row)


def last_stage_out_channels(bb: BackboneSpec) -> float:
    """Output channels of the backbone's last stage (ResNet-50 / 101, ResNeXt: 2048)."""
    return _stage_out_channels(bb.stages[-1])


def _stage_out_channels(row: list) -> float:
    """Output channels of a stage row: width x expansion for bottlenecks (ResNet 4, ResNeXt rows give 1)."""
    if row[3] == "bottleneck":
        return float(row[2]) * (float(row[4]) if len(row) > 4 else 4.0)
    return float(row[2])


def head_channels(method: MethodSpec, bb: BackboneSpec) -> int:
    """Head width: per-backbone override (MMSeg R-18 / MobileNetV3 configs narrow heads at the backbone output)."""
    if bb.key in method.head_channels_by_backbone:
        return method.head_channels_by_backbone[bb.key]
    at_output = any(term.stride == "out" for term in method.head)
    return (bb.head_channels if at_output else None) or method.head_channels or 512


def head_coefficients(method: MethodSpec, bb: BackboneSpec, output_stride: int) -> CvCoefficients:
    """Decode/detection head saved values per input pixel (plus the MMSeg auxiliary FCN head)."""
    ch, cin = head_channels(method, bb), bb.out_channels
    values, attn = 0.0, []
    for term in method.head:
        stride = output_stride if term.stride == "out" else term.stride
        values += (term.in_mult * cin + term.ch * ch + term.abs) / (stride * stride)
    if method.key == "upernet" and len(bb.stages) == 1:
        # plain ViT/BEiT: MultiLevelNeck / Feature2Pyramid deconvolves the stride-16 tokens to strides 4 and 8
        values += 3.0 * cin / 16.0 + 2.0 * cin / 64.0
    if method.backbone_prefix == "cspnext" and bb.key.startswith("cspnext") and bb.stages:
        values += CSPNEXT_PAFPN_PER_BLOCK * float(bb.stages[0][1]) * ch
    if method.aux:
        aux_stride = method.aux_stride or max(output_stride, 8 if output_stride <= 8 else 16)
        values += 2.0 * min(256, ch) / (aux_stride * aux_stride)
    if method.attention:
        a = method.attention
        stride = output_stride if a.stride == "out" else a.stride
        attn.append((a.heads * a.layers / (stride * stride), float(stride), a.keys))
    return CvCoefficients(values, tuple(attn), 0.0)


def head_params(method: MethodSpec, bb: BackboneSpec) -> float:
    """Head parameters (count), from the head's conv shapes."""
    ch, cin = head_channels(method, bb), bb.out_channels
    p = method.head_params
    params = p.in_ch * cin * (cin if p.in_sq else ch) + p.ch2 * ch * ch + p.abs_m * 1e6
    if method.aux:
        params += 9.0 * (cin / 2.0) * min(256, ch)
    return params


def attention_values(terms: tuple[tuple[float, float, str], ...], pixels: float, override: str | None) -> float:
    """Attention-probability elements per input pixel for an image of ``pixels`` pixels."""
    total = 0.0
    for per_pixel, stride, keys in terms:
        keys = override or keys
        tokens = pixels / (stride * stride)
        if keys == "global":
            n_keys = tokens
        elif keys.startswith("w"):
            n_keys = float(keys[1:]) ** 2
        elif keys.startswith("sr"):
            n_keys = tokens / float(keys[2:]) ** 2
        elif keys.startswith("queries"):
            n_keys = float(keys[7:])
        else:
            n_keys = 0.0
        total += per_pixel * n_keys
    return total
