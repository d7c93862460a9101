"""CV training / inference memory: model states + activations from the layer-shape activation model."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from gpu_advisor.memory.arch import (CvCoefficients, attention_values, backbone_coefficients, head_channels,
                                     head_coefficients, head_params, last_stage_out_channels, last_stage_params, roi_stage, search_conv_values)
from gpu_advisor.memory.settings import Resolved
from gpu_advisor.memory.states import StateBytes, model_states, torch_at_most
from gpu_advisor.kb.models import knowledge

SEG_FAMILIES = {"cnn_segmentation", "transformer_segmentation", "prototype"}
AMP_ACT_FACTOR = 0.6     # autocast: conv/matmul outputs 16-bit, LN/GN/softmax/loss inputs kept fp32
# Batch-norm networks under torch.cuda.amp autocast (PyTorch >= 1.6) keep every saved activation in 16 bit:
# batch_norm is on neither autocast list (it runs in its input's dtype; cuDNN BN takes the fp16 conv output with fp32
# weights and returns fp16), unlike layer_norm / group_norm (fp32 list: torch.cuda.amp docs "CUDA Ops that can
# autocast to float32"). conv-BN-ReLU saves its BN input and ReLU output at 2 B each: half of fp32. Losses are counted
# apart (fp32). Before autocast the factor depends on the codebase: mmcv's fp16 mode (mmcv/runner/fp16_utils.py
# patch_norm_fp32) casts BN inputs to fp32 only on PyTorch < 1.3 (0.5 otherwise), MMDetection 1.x's copy
# (mmdet/core/fp16/hooks.py) always did (fp32 BN input + fp16 ReLU output = 0.75): pre-autocast detection runs keep
# AMP_ACT_FACTOR; pre-autocast MMSeg runs (mmcv's path) take AMP_ACT_FACTOR_BN (cv_parts mmcv_fp16).
AMP_ACT_FACTOR_BN = 0.5
EMA_BYTES_PER_PARAM = 4.0   # Ultralytics ModelEMA: an fp32 copy of the model on the GPU
LN_BLOCKS = ("convnext", "vit", "swin", "mit", "poolformer", "mscan")   # blocks with LayerNorm / GroupNorm inside
CKPT_BACKBONE_FACTOR = 0.3   # checkpointing keeps block inputs (~1 of 4-20 saved tensors per block) + one block
FROZEN_STAGE_BACKBONES = ("resnet", "resnext", "res2net", "resnest", "regnet")
CLS_SCORE_COPIES = 3.0   # per anchor x class: score-conv output, permuted/reshaped copy the loss saves, per-element loss
# Detectron2 RetinaNet (detectron2/modeling/meta_arch/retinanet.py losses -> fvcore sigmoid_focal_loss_jit, written
# in element-wise torch ops, not mmcv's fused CUDA kernel). Kept per anchor x class until backward: the per-level
# permuted/reshaped scores (permute_to_N_HWA_K), cat(...)[valid_mask] (saved by BCE-with-logits), the float one-hot
# targets (saved by BCE and p * targets), p = sigmoid (saved), 1 - targets (saved by (1 - p) * (1 - targets)),
# 1 - p_t (saved by ** gamma), ce_loss and (1 - p_t) ** gamma (saved by their product), alpha_t (saved by the last
# product): 9 values. ASSUMED: the TorchScript executor does not fuse these away (not measured, no device here).
CLS_SCORE_COPIES_D2_FOCAL = 9.0
ASSIGN_BYTES_PER_PAIR = 40.0   # bbox_overlaps(gt, anchors) fp32: lt, rb, wh (2 each) + overlap, union, eps-max, ious
MASK_LOGIT_COPIES = 2.0  # FCNMaskHead: C x 28 x 28 (C4: 14 x 14) logits per positive RoI, kept + their gradient at backward
# GroupNorm before PyTorch 1.6 ran as batch_norm on a (1, N*G, -1) view + addcmul(bias, out, weight) (native kernel:
# pytorch#28203, June 2020): it keeps one more tensor of its output size than BN or native GN. In a ResNet bottleneck
# the norm outputs (m + m + r*m) are half of the (4 + 2r) m saved values, in a basic block 2C of 4C: x 1.5.
GN_COMPOSITE_BACKBONE = 0.5
# SAC (DetectoRS, Qiao et al. 2006.02334; mmdet SAConv2d): pre-context sum, reflect-padded copy and its 5x5 average
# (3 x Cin), two conv branches (dilation 1 and 3) and their switch-weighted blend (3 x Cout) on top of a plain 3x3
# conv: ~6 of the 12 mid-widths a ResNet bottleneck saves, minus the conv output it replaces -> 5/12.
SAC_BOTTLENECK = 5.0 / 12.0
# GCNet context block (Cao et al. 1904.11492; mmcv ContextBlock, mmdet configs/gcnet plugins position after_conv3,
# stages (False, True, True, True)): it takes the conv3-BN output x (r*m channels), which a plain bottleneck does not
# keep (the residual add follows), and keeps it for conv_mask and the attention-pooling matmul; the pooled context
# and channel-add branch are 1 x 1 spatially. +r*m of the (4 + 2r) m = 12 m a ResNet bottleneck saves: 4/12.
CONTEXT_BLOCK_BOTTLENECK = 4.0 / 12.0
# RF-Next search (Gao et al. 2206.06637; mmcv cnn/rfsearch/operator.py Conv2dRFSearchOp.forward): each wrapped conv
# runs F.conv2d once per dilation branch (padding passed to the conv: no padded copy; the shared input is saved once)
# and multiplies each output by its normalised branch weight |w_i| / sum|w|. That product saves the branch output
# (its other operand needs a gradient), so every branch output is kept; the weighted outputs are summed in place
# into the first one, which replaces the plain conv's output (the BN input the plain model already keeps).
# Extra per wrapped conv: branches x its output, in the conv's dtype (fp16 under autocast: conv is on the fp16 list,
# the fp32 0-dim weight does not promote). fixed_single_branch only sets each conv's searched dilation: no change.
WS_WEIGHT_COPIES = 2.0   # weight standardisation keeps (w - mean) and the standardised weight per conv, fp32
# MaskFormer (Cheng et al. 2107.06278; mmdet MaskFormerHead._loss_by_feat_single): every decoder layer (deep
# supervision) upsamples its matched mask logits to the padded input size (F.interpolate, bilinear) and applies
# dice + sigmoid focal loss there. Kept per matched mask per pixel per layer: the upsampled logits (saved by the
# focal loss), their sigmoid (dice), the float target (dice) and 1 - target (focal target): 4 fp32 values = 16 B.
QUERY_MASK_BYTES = 16.0
# Semantic segmentation: one matched mask per class present in the crop. ADE20K averages 10.5 object classes per
# image (Zhou et al. 1608.05442); the run's peak is at the busiest images, taken as twice the mean.
SEM_CLASSES_PER_IMAGE_PEAK = 21
# MMSeg CrossEntropyLoss(use_sigmoid=True) (mmseg/models/losses/cross_entropy_loss.py binary_cross_entropy):
# labels are expanded to one-hot int64 (_expand_onehot_labels) and BCE-with-logits runs per class. Kept per class per
# pixel per loss head: the resized logits and label.float() (saved by binary_cross_entropy_with_logits) and the
# expanded float valid mask (saved by the weighted reduction) = 12 B, on any PyTorch. Transient while the last head
# reduces its loss: the int64 one-hot labels (8 B, still referenced) + element-wise loss + weighted loss (4 + 4 B).
BCE_SAVED_BYTES = 12.0
BCE_TRANSIENT_BYTES = 16.0
# torch.cuda.amp autocast op lists: softmax is cast to fp32, matmul to fp16, so attention keeps a 2-byte copy of the
# probabilities for the value matmul on top of the fp32 softmax output
AUTOCAST_PROB_COPY_BYTES = 2.0
# Backward of the widest 3x3 decoder conv (UPerNet fpn_bottleneck 4C -> C at stride 4, PPM-style bottlenecks at the
# output stride): the gradients of its input and output are alive at once, and with cudnn_benchmark=True (MMSeg
# default_runtime.py) cuDNN's Winograd non-fused kernels - ASSUMED to be the algorithm benchmark mode picks for these
# convs, not verified on a GPU (no device in this task) - hold transformed copies of both in their workspace,
# (4 + 3 - 1)^2 / 4^2 = 36/16 of each for F(4x4, 3x3) tiles (Lavin & Gray 1509.09308). By then the loss tensors and
# the tail after the conv are freed: its BN input and ReLU output (2C) and the dropout output + 1-byte mask (1.25C).
WINOGRAD_F4X3_EXPANSION = 36.0 / 16.0
HEAD_TAIL_FREED = 3.25
# MMDetection's ConvNeXt detectors (configs/convnext/*: all "ms-crop") train with the DETR-style AutoAugment
# crop branch (resize 400-600, RandomCrop 384-600, resize 480-800 x 1333), as do the DETR-family recipes.
CROP_RECIPE_BACKBONES = ("convnext",)
# SOLO / decoupled SOLO (Wang et al. 1912.04488; mmdet SOLOHead._get_targets_single): a GT is positive in the grid
# cells of its centre region (pos_scale 0.2 x its box, clamped to the centre cell +- 1: 1 to 9 cells) on each level
# whose scale range holds it (the ranges overlap 2x: 1 or 2 levels). At the peak image (max_gt_per_image boxes, in a
# crowded image nearly all small: sqrt(area) < 96 at 1333 x 800, levels 0-1 with grid cells of 33-37 px and centre
# regions of a few px) that is 1-2 cells on 1-2 levels: 2 positive cells per GT. Both small-object levels predict
# masks at stride 4 (mask_stride = stride / 2 after the x2 upsampling of the stride-8 features).
SOLO_POSITIVES_PER_GT = 2.0
SOLO_MASK_STRIDE = 4
# Backward of the per-RoI heads (docs/memory-model.md "C4 and DC5 heads"), alive on top of the saved activations:
# C4 (Detectron2 Res5ROIHeads): res5's output for all sampled RoIs, 2048 x 7 x 7 each, is pooled by x.mean([2, 3]);
# at backward the mean's gradient (expand + divide: a new tensor of that size) and the in-place ReLU's
# threshold_backward output (another) are alive while the ReLU still holds its saved output: 2 tensors of res5's
# output size per RoI. The later steps allocate smaller gradients while freeing res5's saved tensors.
C4_HEAD_GRAD_COPIES = 2.0
C4_OUT_SIDE = 7
# DC5 (Detectron2 FastRCNNConvFCHead, fc6 = Linear(2048 x 7 x 7, 1024)): AddmmBackward returns the gradient of fc6's
# input (RoIs x 100352) and of its weight (1024 x 100352) at once. With a .grad buffer already there (zero_grad()
# zeroes it in place up to PyTorch 1.13, set_to_none only from 2.0) AccumulateGrad adds the new weight gradient into
# it (`variable_grad += new_grad`, torch/csrc/autograd/functions/accumulate_grad.h), so both are temporaries on top
# of the saved activations and the persistent gradients; on >= 2.0 the first accumulation steals the tensor.
FC_HEAD_POOL_SIDE = 7
# Panoptic FPN semantic branch: F.cross_entropy = log_softmax + nll_loss over the stuff classes; log_softmax keeps
# its output, and up to PyTorch 1.10 also its input (_log_softmax_backward_data(grad, result, dim, self),
# pytorch#64000): 4 / 8 B per pixel per class at the loss's stride. Detectron2's SemSegFPNHead.losses upsamples the
# stride-4 logits by COMMON_STRIDE (F.interpolate scale_factor 4) and takes the loss at full resolution
# (detectron2/modeling/meta_arch/semantic_seg.py); MMDetection's PanopticFPNHead rescales the target to 1/4.
D2_SEM_LOSS_STRIDE = 1


# Detectron2 CascadeROIHeads.forward (detectron2/modeling/roi_heads/cascade_rcnn.py): training runs the 3 box stages,
# then `self._forward_mask(features, proposals)` once, on the stage-0 sampled proposals: one mask head and one set of
# mask logits, where MMDetection's CascadeRoIHead trains a mask head per stage (method.mask_stages).
D2_CASCADE_MASK_HEADS = 1


def max_gt_per_image(classes: int) -> int:
    """Largest number of annotated boxes in one training image (the peak is the max over a run).

    COCO-scale vocabularies (<= 100 classes: COCO, VOC, Cityscapes): 100 (DETR sizes its 100 queries to exceed the
    objects of any COCO image). Large vocabularies (>= 300 classes: Objects365, Open Images, LVIS): 450, set from
    the Objects365 / Open Images Faster R-CNN rows of the dev set (see docs/memory-model.md); linear in between.
    """
    if classes <= 100:
        return 100
    if classes >= 300:
        return 450
    return int(100 + (classes - 100) * 350 / 200)


@dataclass(frozen=True)
class CvParts:
    states: StateBytes
    activations: float
    transient: float
    params: float
    values_per_pixel: float
    attn_per_pixel: float
    loss_bytes_per_pixel: float
    pixels: int
    calib: float
    flops_forward: float


def _pixels(size: tuple[int, int]) -> int:
    """Network input pixels, padded to a multiple of 32 (MMDet Pad size_divisor=32)."""
    h, w = (-(-side // 32) * 32 for side in size)
    return h * w


def crop_recipe(method, backbone) -> bool:
    """Random-crop detection recipe: the crop decides the aspect, so landscape and portrait images share batches."""
    return method.crop_recipe or (method.family == "detection" and backbone.key.startswith(CROP_RECIPE_BACKBONES))


def canvas_pixels(r: Resolved) -> int:
    """Pixels of the padded batch canvas.

    MMDetection's GroupSampler batches images of the same aspect group (w > h or not), so a batch is padded to the
    input size. A random crop before the final keep-ratio resize (DETR-style AutoAugment) makes a landscape
    image's crop portrait (and vice versa) while the group flag stays the original image's: a batch of two then
    holds an 800 x 1333 and a 1333 x 800 image and is padded to 1333 x 1333 (long side squared).
    """
    assert r.method and r.backbone
    size = r.settings["input_size"]
    if r.training and r.settings["batch_size_per_gpu"] > 1 and crop_recipe(r.method, r.backbone):
        side = max(size)
        return _pixels((side, side))
    return _pixels(size)


def query_mask_bytes(method, classes: int, pixels: int) -> float:
    """Full-resolution matched-mask losses of MaskFormer-style heads, bytes per image."""
    if not method.query_mask_layers:
        return 0.0
    masks = min(classes or 19, SEM_CLASSES_PER_IMAGE_PEAK) if method.family in SEG_FAMILIES else max_gt_per_image(classes or 80)
    return masks * method.query_mask_layers * QUERY_MASK_BYTES * pixels


def grid_mask_bytes(method, classes: int, pixels: int) -> float:
    """SOLO-family dice loss on the stride-4 masks of the positive grid cells of the busiest image, bytes per image."""
    if not method.grid_mask_bytes:
        return 0.0
    positives = SOLO_POSITIVES_PER_GT * max_gt_per_image(classes or 80)
    return positives * pixels / SOLO_MASK_STRIDE**2 * method.grid_mask_bytes


def dense_head_values(method, classes: int, framework: str | None = None) -> float:
    """fp32 values per input pixel of a dense head's per-class scores: anchors x classes x sum over levels 1/stride^2."""
    if not method.dense_anchors or not classes:
        return 0.0
    per_loc = sum(1.0 / (s * s) for s in method.dense_levels)
    copies = (CLS_SCORE_COPIES_D2_FOCAL if framework == "detectron2" and method.key == "retinanet"
              else method.cls_score_copies or CLS_SCORE_COPIES)
    return method.dense_anchors * (classes + (1 if method.dense_softmax else 0)) * per_loc * copies


def anchor_loss_bytes(method, classes: int, amp: bool) -> float:
    """Bytes per input pixel alive at a dense head's loss (Ultralytics YOLO, MethodSpec.anchor_loss): per prediction
    point and per point x class at strides dense_levels, in the precision's own bytes (the loss runs in fp32 under
    autocast: not scaled by the AMP activation factor). 0 for other methods."""
    loss = method.anchor_loss
    if loss is None:
        return 0.0
    per_anchor, per_class = (loss.amp_anchor, loss.amp_class) if amp else (loss.fp32_anchor, loss.fp32_class)
    points = method.dense_anchors * sum(1.0 / (s * s) for s in method.dense_levels)
    return points * (per_anchor + per_class * (classes or 80))


def assignment_bytes(method, classes: int, pixels: int, batch: int = 1) -> float:
    """Target-assignment transient of the image with the most GT boxes (images are assigned one at a time).

    IoU assigners (MaxIoU, ATSS) build gt x anchors overlap tensors (40 B per pair in bbox_overlaps);
    OTA-style assigners (SimOTA, dynamic soft label) add a pair x class classification cost. A batch-wide assigner
    (Ultralytics TaskAlignedAssigner: (batch, max GT boxes, anchors) tensors, every image padded to the batch's
    most boxes) holds the pairs of the whole batch at once.
    """
    if not method.assign_px:
        return 0.0
    pairs = method.assign_px * pixels * max_gt_per_image(classes or 80) * (batch if method.assign_batched else 1)
    return pairs * (ASSIGN_BYTES_PER_PAIR + 4.0 * method.assign_cls * (classes or 80))


def head_backward_values(method, backbone, output_stride: int) -> float:
    """fp32 values per input pixel alive over the saved activations while the widest decoder conv runs backward
    (gradients + Winograd workspace of its input and output, less the tail freed before it); 0 if not modelled."""
    term = method.head_bwd_conv
    if term is None:
        return 0.0
    ch = head_channels(method, backbone)
    stride = output_stride if term.stride == "out" else term.stride
    c_in = term.in_mult * backbone.out_channels + term.ch * ch + term.abs
    return ((1.0 + WINOGRAD_F4X3_EXPANSION) * (c_in + ch) - HEAD_TAIL_FREED * ch) / (stride * stride)


def encoding_backward_values(method, backbone, output_stride: int) -> float:
    """fp32 values per input pixel alive over the saved activations while the EncHead Encoding layer runs backward.

    mmseg/models/utils/encoding.py: aggregate() multiplies the assignment weights (B, N, K, 1) with the residuals
    x - codewords (B, N, K, C) and sums over N. At backward MulBackward0 returns the gradient of both factors at full
    (B, N, K, C) size - the weights' one is reduced to (B, N, K, 1) only after the node returns (autograd engine
    validate_outputs / sum_to) - and the residuals' gradient then meets SubBackward0's negated copy for the codewords
    (reduced the same way): 2 x K x C values per pixel at the head's stride on top of the saved activations. The loss
    tensors are freed by then. 0 if the method has no Encoding layer."""
    term = method.encoding_bwd
    if term is None:
        return 0.0
    ch = head_channels(method, backbone)
    stride = output_stride if term.stride == "out" else term.stride
    return (term.in_mult * backbone.out_channels + term.ch * ch + term.abs) / (stride * stride)


def roi_backward_bytes(method, backbone, batch: int, amp: bool, old_grads: bool) -> float:
    """Gradients alive on top of the saved activations while a C4 / DC5 per-RoI head runs backward, bytes per step
    (see C4_HEAD_GRAD_COPIES, FC_HEAD_POOL_SIDE). 0 for other heads."""
    act_bytes = 2.0 if amp else 4.0
    out_ch = last_stage_out_channels(backbone)
    if method.roi_stage_rois:
        return batch * method.roi_stage_rois * C4_HEAD_GRAD_COPIES * out_ch * C4_OUT_SIDE**2 * act_bytes
    if method.fc_head_rois:
        fc_in = out_ch * FC_HEAD_POOL_SIDE**2
        weight_grad = fc_in * method.fc_head_dim * 4.0 if old_grads else 0.0
        return batch * method.fc_head_rois * fc_in * act_bytes + weight_grad
    return 0.0


def sem_loss_bytes(method, pixels: int, old_torch: bool, framework: str | None) -> float:
    """Panoptic FPN stuff-branch cross-entropy tensors kept for backward, bytes per image (see D2_SEM_LOSS_STRIDE)."""
    if not method.sem_loss_classes:
        return 0.0
    stride = D2_SEM_LOSS_STRIDE if framework == "detectron2" else method.sem_loss_stride
    return method.sem_loss_classes * pixels / stride**2 * (8.0 if old_torch else 4.0)


def cv_params(r: Resolved) -> float:
    assert r.method and r.backbone
    if r.params_override is not None:
        return r.params_override * 1e9
    classes = r.settings.get("num_classes") or 0
    # per-class score convs (SSD: 3x3 convs to anchors x (C + 1) on every level) grow with the vocabulary
    per_class = r.method.head_params.per_class_m * 1e6 * (classes + (1 if r.method.dense_softmax else 0)) if classes else 0.0
    # RPN-only C4 (Detectron2 build_resnet_backbone builds stages up to its last OUT_FEATURES, res4): no res5 weights
    unbuilt = (last_stage_params(r.backbone) if r.method.backbone_stages is not None
               and r.method.backbone_stages < len(r.backbone.stages) and not r.method.roi_stage_rois else 0.0)
    return r.backbone.params_m * 1e6 - unbuilt + head_params(r.method, r.backbone) + per_class


def _calibration(r: Resolved) -> float:
    cal = knowledge().calibration
    assert r.method and r.backbone
    if r.method.calibration is not None:
        return cal.get(r.method.calibration, 1.0)
    # detection uses the same constants: its former residual (1.30) is now counted (target assignment, per-class
    # scores, mask logits, unfrozen non-ResNet backbones), see docs/memory-model.md
    return cal.get("transformer" if r.backbone.kind == "transformer" else "cnn", 1.0)


def _coefficients(r: Resolved, key: tuple[Any, ...], build: Callable[[], CvCoefficients]) -> CvCoefficients:
    """Coefficients of the knowledge base's own method and backbone specs, computed once per knowledge object and
    key (the planner's variants of a job, and later jobs, use the same backbone at the same stride)."""
    kb = knowledge()
    assert r.method and r.backbone
    if kb.backbones.get(r.backbone.key) is not r.backbone or kb.methods.get(r.method.key) is not r.method:
        return build()  # a spec from elsewhere (tests): not keyed by name
    return kb.derived(key, build)


def _flops(r: Resolved, bb_flops_px: float, pixels: int, bb_scale: float = 1.0) -> float:
    """Forward FLOPs of one image: published backbone GFLOPs at 224^2 scaled by pixels and dilation.

    Vision papers and model cards count a multiply-accumulate as one "FLOP" (He et al. 2015: ResNet-50 "3.8 x 10^9
    FLOPs (multiply-adds)"; torchvision's 4.09 "GFLOPS" are fvcore MACs; timm's column is GMACs), while peak TFLOPS
    count two: the published figure is doubled, as the head's 2 x params x positions already is."""
    assert r.method and r.backbone
    plain = _coefficients(r, ("backbone_coefficients", r.backbone.key, 32, False, False, None),
                          lambda: backbone_coefficients(r.backbone, 32, False)).flops_per_pixel
    dilation = bb_flops_px / plain if plain > 0 else 1.0
    backbone = 2.0 * r.backbone.gflops_224 * 1e9 * pixels * bb_scale / (224 * 224) * dilation
    positions = (pixels / r.method.head_flops_stride ** 2 if r.method.head_flops_stride
                 else pixels / max(r.output_stride or 32, 4) ** 2 * 4)
    head = 2.0 * head_params(r.method, r.backbone) * positions
    return backbone + head


def cv_parts(r: Resolved) -> CvParts:
    """All CV memory parts in bytes for the resolved job."""
    assert r.method and r.backbone and r.output_stride
    s, method = r.settings, r.method
    batch, pixels = s["batch_size_per_gpu"], canvas_pixels(r)
    old_torch = torch_at_most(s["pytorch_version"], 1, 10)
    # MMDetection freezes the stem + stage 1 (frozen_stages=1) of ResNet-family and RegNet backbones only;
    # HRNet, ConvNeXt, Swin, PVT and the CSP backbones train every stage.
    frozen = method.frozen_stem and r.training and r.backbone.key.startswith(FROZEN_STAGE_BACKBONES)
    # ICNet-style cascades run the backbone on a downscaled copy of the image: values per input pixel x scale^2
    bb_scale = method.backbone_input_scale ** 2
    resnet_like = r.backbone.key.startswith(FROZEN_STAGE_BACKBONES) and r.backbone.kind == "cnn"
    # Detectron2 (Workload.framework = "detectron2"): its R/X backbones use FrozenBatchNorm2d (MODEL.RESNETS.NORM
    # "FrozenBN" in detectron2/config/defaults.py, FREEZE_AT 2 = our frozen stem + stage 1), which keeps no BN input
    # (arch.FROZEN_BN_BOTTLENECK_BASE). Only BN-normalised methods with frozen early stages: the GN / SyncBN-all
    # recipes train real norms. Without the hint nothing changes.
    frozen_bn = (s.get("framework") == "detectron2" and r.training and resnet_like and method.norm == "bn"
                 and method.frozen_stem)
    stride = method.backbone_output_stride or r.output_stride
    bb = _coefficients(r, ("backbone_coefficients", r.backbone.key, stride, frozen, frozen_bn, method.backbone_stages),
                       lambda: backbone_coefficients(r.backbone, stride, frozen, frozen_bn, method.backbone_stages))
    head = _coefficients(r, ("head_coefficients", method.key, r.backbone.key, r.output_stride),
                         lambda: head_coefficients(method, r.backbone, r.output_stride))
    bb_values = bb_scale * bb.linear_values * (CKPT_BACKBONE_FACTOR if s["gradient_checkpointing"] else 1.0)
    old_gn = 1.0 if torch_at_most(s["pytorch_version"], 1, 5) else 0.0   # extra tensor per composite GroupNorm
    if method.norm != "bn" and resnet_like:
        bb_values *= 1.0 + GN_COMPOSITE_BACKBONE * old_gn
    if method.sac and resnet_like:
        bb_values *= 1.0 + SAC_BOTTLENECK
    if method.context_block and resnet_like:
        bb_values *= 1.0 + CONTEXT_BLOCK_BOTTLENECK
    bb_values *= method.backbone_passes
    values = bb_values + head.linear_values
    values += method.gn_px * ((0.0 if method.gn_in_head else 1.0) + old_gn)
    amp = s["precision"] != "fp32"
    attn = attention_values(bb.attn_terms + head.attn_terms, pixels, method.attention_keys_override)
    # softmax keeps its fp32 output (+ its input on PyTorch <= 1.10); under autocast softmax runs in fp32 and the
    # following probabilities @ v matmul (fp16 list) saves its own fp16 copy of the probabilities
    attn_bytes = (8.0 if old_torch else 4.0) + (AUTOCAST_PROB_COPY_BYTES if amp else 0.0)
    loss_heads = method.loss_heads if method.loss_heads is not None else (2 if method.aux else 1)
    classes = s.get("num_classes") or 0
    seg = method.family in SEG_FAMILIES and method.per_class_bytes
    bce = method.seg_loss == "bce"
    loss_px = loss_heads * classes * (BCE_SAVED_BYTES if bce else 8.0 if old_torch else 4.0) if seg else 0.0
    calib = _calibration(r)
    dense = 0.0 if method.anchor_loss else dense_head_values(method, classes, s.get("framework"))
    values += dense
    # AMP before autocast (PyTorch <= 1.5): MMSegmentation, built on mmcv from its first release, trains fp16 through
    # mmcv's wrap_fp16_model (model.half() + patch_norm_fp32: BN weights fp32, inputs left fp16 on PyTorch >= 1.3), so
    # its BN networks keep 16-bit activations as under autocast; MMDetection 1.x's own copy cast BN inputs to fp32.
    mmcv_fp16 = method.family in SEG_FAMILIES and not torch_at_most(s["pytorch_version"], 1, 2)
    bn_only = ((mmcv_fp16 or not torch_at_most(s["pytorch_version"], 1, 5)) and r.backbone.kind == "cnn"
               and method.norm == "bn" and not method.gn_px and not method.attention
               and not any(str(row[3]) in LN_BLOCKS for row in r.backbone.stages))
    per_px = values * 4.0 * ((AMP_ACT_FACTOR_BN if bn_only else AMP_ACT_FACTOR) if amp else 1.0) + attn * attn_bytes
    if r.training:
        loss_px += anchor_loss_bytes(method, classes, amp)
    mask_rois = method.mask_logit_rois
    roi_mb = method.per_image_mb
    if s.get("framework") == "detectron2" and method.mask_stages > D2_CASCADE_MASK_HEADS:
        roi_mb -= (method.mask_stages - D2_CASCADE_MASK_HEADS) * method.mask_head_mb
        mask_rois *= D2_CASCADE_MASK_HEADS / method.mask_stages
    per_image = (roi_mb + method.gn_roi_mb * (1.0 + old_gn)) * 2**20
    if method.rf_search_branches and r.training:
        branch_bytes = 2.0 if amp else 4.0
        searched = bb_scale * search_conv_values(r.backbone, method.backbone_output_stride or r.output_stride, frozen)
        per_px += method.rf_search_branches * (searched + method.conv3_px) * branch_bytes
        per_image += method.rf_search_branches * method.conv3_roi_mb * 2**20 * branch_bytes / 4.0
    per_image += mask_rois * classes * method.mask_logit_side**2 * MASK_LOGIT_COPIES * 4.0
    roi_flops = 0.0
    if method.roi_stage_rois:
        # C4: the backbone's last stage runs per sampled RoI on 14 x 14 pooled res4 features (arch.roi_stage), saved
        # like backbone activations (same norm rule, AMP factor and constant)
        roi_values, roi_stage_flops = roi_stage(r.backbone, frozen_bn)
        amp_factor = (AMP_ACT_FACTOR_BN if bn_only else AMP_ACT_FACTOR) if amp else 1.0
        per_image += method.roi_stage_rois * roi_values * 4.0 * amp_factor * calib
        roi_flops = method.roi_stage_rois * roi_stage_flops
    per_image += sem_loss_bytes(method, pixels, old_torch, s.get("framework")) if r.training else 0.0
    per_image += query_mask_bytes(method, classes, pixels) if r.training else 0.0
    per_image += grid_mask_bytes(method, classes, pixels) if r.training else 0.0
    if method.pair_loss_bytes and r.training:   # every dense point x every GT of the busiest image, kept for backward
        points = method.dense_anchors * sum(1.0 / (s * s) for s in method.dense_levels) * pixels
        per_image += method.pair_loss_bytes * points * max_gt_per_image(classes or 80)
    if method.per_gt_mb and r.training:   # query-based heads: one matched query per GT box of the busiest image
        per_image += method.per_gt_mb * 2**20 * max_gt_per_image(classes or 80)
    # tracking / video methods run the backbone and neck on more than one frame per sample (QDTrack: key + reference)
    frames = method.images_per_sample if r.training else 1.0
    act = batch * pixels * (per_px * calib * frames + loss_px) + batch * per_image
    if method.norm == "gn_ws" and r.training:
        act += WS_WEIGHT_COPIES * 4.0 * cv_params(r)
    if seg:
        loss_transient = classes * (BCE_TRANSIENT_BYTES if bce else 8.0)
        head_bwd = head_backward_values(method, r.backbone, r.output_stride) * (2.0 if amp else 4.0)
        enc_bwd = encoding_backward_values(method, r.backbone, r.output_stride) * (2.0 if amp else 4.0)
        transient = batch * pixels * max(loss_transient, head_bwd - loss_px, enc_bwd - loss_px)
    else:
        old_grads = torch_at_most(s["pytorch_version"], 1, 13)   # .grad buffers kept between steps (zero_grad)
        transient = max(0.05 * act, assignment_bytes(method, classes, pixels, batch) if r.training else 0.0,
                        roi_backward_bytes(method, r.backbone, batch, amp, old_grads) if r.training else 0.0)
    params = cv_params(r)
    # Peak memory is set by the worst batch (the square canvas of a crop recipe's mixed-orientation batch), time by
    # the typical one: the FLOPs are counted on the stated input size, not on the worst-case canvas.
    flops = _flops(r, bb.flops_per_pixel, _pixels(s["input_size"]), bb_scale) + roi_flops
    if not r.training:
        return _inference_parts(r, params, act, values, attn, pixels, calib, flops)
    states = model_states(params, params, None, s, False, params / 20.0)
    if method.ema_copy:
        # ModelEMA (ultralytics/utils/torch_utils.py; yolov5 utils/torch_utils.py): a deepcopy of the model kept in
        # fp32 on the GPU, updated after every optimizer step: 4 B per parameter on top of the model states
        states = replace(states, ddp_buckets=states.ddp_buckets + EMA_BYTES_PER_PARAM * params)
    return CvParts(states, act, transient, params, values, attn, loss_px, pixels, calib, flops)


def _inference_parts(r: Resolved, params: float, act: float, values: float, attn: float, pixels: int,
                     calib: float, flops: float) -> CvParts:
    """Forward only: weights + ~15 % of the training activations live at once (no tensors kept for backward)."""
    s = r.settings
    w = {"fp32": 4.0}.get(s["precision"], 2.0)
    if s.get("quantization") == "int8":
        w = 1.0
    states = StateBytes(params * w, 0.0, 0.0, 0.0, 0.0, 0.0)
    return CvParts(states, 0.15 * act, 0.0, params, values, attn, 0.0, pixels, calib, flops)
