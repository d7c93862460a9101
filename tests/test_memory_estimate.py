"""Physics of the estimator: sums, linearity, and the documented effect of each memory-saving switch."""

from __future__ import annotations

import pytest

from gpu_advisor.memory import estimate_memory
from gpu_advisor.memory.transformer import NF4_BYTES
from gpu_advisor.workload import Workload

GIB = 2.0**30
ALLOCATED = ("weights", "gradients", "optimizer", "master_weights", "activations", "transient", "framework_extras", "kv_cache")


def seg(**kw) -> Workload:
    base = dict(task="semantic_segmentation", model="DeepLabV3+", backbone="R-50-D8", input_size=(512, 1024),
                batch_size_per_gpu=2, num_gpus=4, num_classes=19, pytorch_version="2.4")
    return Workload(**{**base, **kw})


def llm(**kw) -> Workload:
    base = dict(task="llm_finetune", model="Llama 3.1 8B", seq_len=2048, batch_size_per_gpu=1,
                gradient_checkpointing=True, finetune_method="full", precision="bf16")
    return Workload(**{**base, **kw})


@pytest.mark.parametrize("w", [seg(), seg(pytorch_version="1.8"), llm(), llm(finetune_method="qlora"),
                               Workload(task="object_detection", model="Mask R-CNN", backbone="R-50-FPN"),
                               Workload(task="inference", model="Qwen2.5-7B", seq_len=8192, batch_size_per_gpu=4),
                               Workload(task="image_classification", model="ResNet-50")])
def test_breakdown_sums_to_totals(w: Workload) -> None:
    est = estimate_memory(w)
    allocated = sum(v for k, v in est.breakdown.items() if k in ALLOCATED)
    assert est.allocated_peak_gib == pytest.approx(allocated, abs=0.01)
    total = allocated + est.breakdown["cuda_context"] + est.breakdown["allocator_slack"]
    assert est.device_total_gib == pytest.approx(total, abs=0.01)
    assert est.device_total_gib > est.allocated_peak_gib > 0
    assert set(est.breakdown) <= set(ALLOCATED) | {"cuda_context", "allocator_slack"}


def test_cnn_memory_is_linear_in_batch() -> None:
    one, two, four = (estimate_memory(seg(batch_size_per_gpu=b)) for b in (1, 2, 4))
    assert two.breakdown["activations"] == pytest.approx(2 * one.breakdown["activations"], rel=1e-3)
    step_a = two.allocated_peak_gib - one.allocated_peak_gib
    step_b = four.allocated_peak_gib - two.allocated_peak_gib
    assert step_b == pytest.approx(2 * step_a, rel=0.01)
    assert one.breakdown["weights"] == four.breakdown["weights"]


def test_cnn_activations_linear_in_pixels() -> None:
    small = estimate_memory(seg(input_size=(512, 512)))
    big = estimate_memory(seg(input_size=(1024, 1024)))
    assert big.breakdown["activations"] == pytest.approx(4 * small.breakdown["activations"], rel=1e-3)


def test_attention_models_grow_faster_than_pixels() -> None:
    small = estimate_memory(seg(model="SegFormer", backbone="MiT-B5", input_size=(512, 512)))
    big = estimate_memory(seg(model="SegFormer", backbone="MiT-B5", input_size=(1024, 1024)))
    assert big.breakdown["activations"] > 4.5 * small.breakdown["activations"]


def test_old_pytorch_keeps_gradients_and_softmax_input() -> None:
    new, old = estimate_memory(seg()), estimate_memory(seg(pytorch_version="1.8"))
    assert "gradients" not in new.breakdown          # set_to_none frees them between steps
    assert old.breakdown["gradients"] == pytest.approx(old.breakdown["weights"], rel=1e-3)
    # PyTorch <= 1.10: loss keeps 8 instead of 4 bytes per pixel per class per loss head (2 heads)
    extra = 2 * 2 * 512 * 1024 * 19 * 4 / GIB
    assert old.breakdown["activations"] - new.breakdown["activations"] == pytest.approx(extra, rel=0.01)


def test_ddp_adds_one_gradient_copy() -> None:
    single = estimate_memory(seg(num_gpus=1, distributed="none"))
    ddp = estimate_memory(seg(num_gpus=4, distributed="ddp"))
    assert ddp.breakdown["framework_extras"] == pytest.approx(ddp.breakdown["weights"], rel=1e-3)
    assert "framework_extras" not in single.breakdown


def test_checkpointing_lowers_llm_activations_to_layer_inputs() -> None:
    on = estimate_memory(llm(gradient_checkpointing=True, finetune_method="lora"))
    off = estimate_memory(llm(gradient_checkpointing=False, finetune_method="lora"))
    # documented: full recomputation keeps h values per token per layer (+1 layer, + logits)
    tokens, layers, hidden, inter, vocab = 2048, 32, 4096, 14336, 128256
    logits = tokens * vocab * (2 + 4) / GIB            # bf16 logits + fp32 log-probs
    # LoRA on every linear: fp32 norm inputs 4h, q/k/v (GQA expanded)/attention output 4h, gated MLP 3I,
    # inputs of the adapted linears h + h + h + I, lora_B inputs r per adapted matrix
    per_layer_full = (11 * hidden + 4 * inter + 16 * 7) * 2 * tokens / GIB
    assert on.breakdown["activations"] == pytest.approx(layers * tokens * hidden * 2 / GIB + per_layer_full + logits, rel=0.01)
    assert off.breakdown["activations"] == pytest.approx(layers * per_layer_full + logits, rel=0.01)
    assert on.allocated_peak_gib < off.allocated_peak_gib


def test_frozen_linears_keep_no_inputs() -> None:
    """LoRA on q, v keeps fewer tensors than on every linear; full fine-tuning keeps the most; bitsandbytes
    4-bit layers (QLoRA) keep their inputs whether adapted or not."""
    def act(**kw: object) -> float:
        return estimate_memory(llm(gradient_checkpointing=False, **kw)).breakdown["activations"]
    qv = act(finetune_method="lora", lora_targets=["q_proj", "v_proj"])
    every = act(finetune_method="lora")
    full = act(finetune_method="full")
    assert qv < every < full
    tokens, layers, hidden, inter = 2048, 32, 4096, 14336
    # q,v only: no o_proj input (h), no norm-2 output (h), no MLP product (I); 2 adapters instead of 7
    assert every - qv == pytest.approx(layers * tokens * (2 * hidden + inter + 16 * 5) * 2 / GIB, rel=0.01)
    assert act(finetune_method="qlora", lora_targets=["q", "v"]) == pytest.approx(every, rel=0.01)
    small = estimate_memory(llm(finetune_method="lora", lora_targets=["q", "v"]))
    assert small.profile.trainable_params_billion < estimate_memory(llm(finetune_method="lora")).profile.trainable_params_billion


def test_chunked_loss_keeps_only_log_probs() -> None:
    plain = estimate_memory(llm(finetune_method="lora"))
    chunked = estimate_memory(llm(finetune_method="lora", chunked_loss=True))
    elements = 2048 * 128256
    assert plain.breakdown["activations"] - chunked.breakdown["activations"] == pytest.approx(elements * 2 / GIB, rel=0.01)
    assert chunked.breakdown["transient"] == pytest.approx(elements * 8 / 8 / GIB, rel=0.01)


def test_activation_offloading_keeps_one_layer_on_gpu() -> None:
    """Offloading moves the checkpointed layer inputs (h per token per layer) to CPU; the loss stays on the GPU."""
    ckpt = estimate_memory(llm(finetune_method="lora"))
    off = estimate_memory(llm(finetune_method="lora", activation_offloading=True))
    assert ckpt.breakdown["activations"] - off.breakdown["activations"] == pytest.approx(32 * 2048 * 4096 * 2 / GIB, rel=0.01)
    assert off.breakdown["transient"] == ckpt.breakdown["transient"]
    plain = estimate_memory(llm(finetune_method="lora", gradient_checkpointing=False, activation_offloading=True))
    assert plain.breakdown["activations"] == pytest.approx(off.breakdown["activations"], rel=0.01)


def test_cpu_offload_moves_sharded_states_to_cpu() -> None:
    """FSDP CPU offload: weight, gradient and optimizer shards on the CPU; the gathered layers stay on the GPU."""
    kw = dict(model="Llama 3.1 70B", num_gpus=8, distributed="fsdp")
    on_gpu = estimate_memory(llm(**kw))
    off = estimate_memory(llm(cpu_offload=True, **kw))
    for part in ("weights", "optimizer", "gradients"):
        assert part not in off.breakdown
    assert off.breakdown["framework_extras"] == on_gpu.breakdown["framework_extras"]
    ddp = estimate_memory(llm(model="Llama 3.2 1B", num_gpus=2, distributed="ddp", cpu_offload=True))
    assert "optimizer" not in ddp.breakdown and ddp.breakdown["weights"] > 0


def test_framework_changes_what_qlora_keeps() -> None:
    """torchtune's NF4 layers keep no input; litgpt carries the previous step's 4-bit inputs and a 4-bit lm_head."""
    kw = dict(model="llama-2-7b", finetune_method="qlora", lora_targets=["q", "v"], gradient_checkpointing=False,
              seq_len=512, batch_size_per_gpu=2)
    hf = estimate_memory(llm(**kw))
    tune = estimate_memory(llm(framework="torchtune", **kw))
    lit = estimate_memory(llm(framework="litgpt", **kw))
    assert tune.breakdown["activations"] < hf.breakdown["activations"]
    h, q, inter, layers, tokens = 4096, 4096, 11008, 32, 1024
    carry = ((layers * (2 * h + q + inter) + h) * tokens * 2 + 32000 * 4096 * 4) / GIB
    assert lit.breakdown["transient"] == pytest.approx(carry, rel=0.01)
    assert lit.breakdown["weights"] < hf.breakdown["weights"]        # lm_head in nf4, not bf16


def test_litgpt_unties_tied_embeddings() -> None:
    kw = dict(model="gemma-2b", finetune_method="lora", seq_len=512, batch_size_per_gpu=1)
    extra = 256000 * 2048 * 2 / GIB
    diff = estimate_memory(llm(framework="litgpt", **kw)).breakdown["weights"] - estimate_memory(llm(**kw)).breakdown["weights"]
    assert diff == pytest.approx(extra, rel=0.02)


def test_cv_checkpointing_lowers_backbone_activations() -> None:
    """Documented: checkpointing keeps CKPT_BACKBONE_FACTOR of the backbone's saved values (head unchanged)."""
    from gpu_advisor.memory.arch import backbone_coefficients
    from gpu_advisor.memory.cv import CKPT_BACKBONE_FACTOR
    from gpu_advisor.kb.models import knowledge
    on, off = estimate_memory(seg(gradient_checkpointing=True)), estimate_memory(seg())
    values = backbone_coefficients(knowledge().backbones["resnet50"], 8, False).linear_values
    saved = (1 - CKPT_BACKBONE_FACTOR) * values * 4 * knowledge().calibration["cnn"] * 2 * 512 * 1024 / GIB
    assert off.breakdown["activations"] - on.breakdown["activations"] == pytest.approx(saved, rel=0.01)
    assert on.breakdown["activations"] < 0.7 * off.breakdown["activations"]


def test_amp_adds_master_weights_and_halves_cv_activations() -> None:
    fp32, amp = estimate_memory(seg()), estimate_memory(seg(precision="fp16_amp"))
    assert amp.breakdown["master_weights"] == pytest.approx(2 * amp.breakdown["weights"], rel=1e-3)
    assert amp.allocated_peak_gib < fp32.allocated_peak_gib
    assert amp.breakdown["activations"] < 0.75 * fp32.breakdown["activations"]


def test_zero3_shards_states_over_gpus() -> None:
    base = dict(precision="bf16_amp", optimizer="adamw", num_gpus=8)
    ddp, z3 = estimate_memory(llm(distributed="ddp", **base)), estimate_memory(llm(distributed="zero3", **base))
    assert z3.breakdown["optimizer"] == pytest.approx(ddp.breakdown["optimizer"] / 8, rel=1e-3)
    assert z3.breakdown["weights"] == pytest.approx(ddp.breakdown["weights"] / 8, rel=1e-3)
    assert z3.breakdown["master_weights"] == pytest.approx(ddp.breakdown["master_weights"] / 8, rel=1e-3)
    assert z3.allocated_peak_gib < ddp.allocated_peak_gib / 3


def test_qlora_stores_base_in_4_bit() -> None:
    lora, qlora = estimate_memory(llm(finetune_method="lora")), estimate_memory(llm(finetune_method="qlora"))
    embed = 2 * 128256 * 4096
    blocks = 8.03e9 - embed
    adapters = qlora.profile.trainable_params_billion * 1e9
    assert lora.breakdown["weights"] == pytest.approx((8.03e9 * 2 + adapters * 4) / GIB, rel=1e-3)
    assert qlora.breakdown["weights"] == pytest.approx((embed * 2 + blocks * NF4_BYTES + adapters * 4) / GIB, rel=1e-3)
    assert qlora.allocated_peak_gib < lora.allocated_peak_gib - 8
    assert qlora.profile.job.quantization == "nf4"


def test_kv_cache_uses_gqa_heads() -> None:
    est = estimate_memory(Workload(task="inference", model="Llama 3.1 8B", seq_len=8192, batch_size_per_gpu=2))
    expected = 32 * 2 * 8192 * 2 * 8 * 128 * 2 / GIB     # layers x tokens x (K,V) x kv_heads x head_dim x 2 B
    assert est.breakdown["kv_cache"] == pytest.approx(expected, rel=1e-3)


def test_assumptions_name_every_default() -> None:
    est = estimate_memory(Workload(task="semantic_segmentation"))
    fields = {n.field for n in est.assumptions}
    assert {"model", "backbone", "input_size", "batch_size_per_gpu", "num_classes", "optimizer", "precision",
            "gradient_checkpointing", "distributed", "pytorch_version"} <= fields
    assert all(n.text.zh and n.text.en and n.value is not None for n in est.assumptions)
    assert "GiB" in est.formula.en and "GiB" in est.formula.zh


def test_profile_and_flops() -> None:
    est = estimate_memory(seg())
    assert est.profile.family == "cnn_segmentation" and not est.profile.is_llm
    assert est.profile.job.input_size == (512, 1024)
    assert est.train_flops_per_sample == pytest.approx(3 * est.infer_flops_per_sample)
    text = estimate_memory(llm())
    assert text.train_flops_per_sample == pytest.approx(6 * 8.03e9 * 2048, rel=1e-3)  # 8.030 B counted from the config
    assert text.profile.is_llm and text.profile.family == "llm"


def test_preprocessing_needs_no_gpu() -> None:
    est = estimate_memory(Workload(task="preprocessing"))
    assert est.allocated_peak_gib == 0 and est.device_total_gib == 0
    assert est.warnings[0].code == "no_gpu"


def _det(**kw) -> Workload:
    base = dict(task="object_detection", model="RetinaNet", backbone="R-50", input_size=(800, 1333),
                batch_size_per_gpu=2, num_gpus=8, num_classes=80, pytorch_version="1.8")
    return Workload(**{**base, **kw})


def test_dense_head_scores_and_assignment_grow_with_classes() -> None:
    coco, o365 = estimate_memory(_det()), estimate_memory(_det(num_classes=365))
    # per-class score maps scale with batch; the assignment transient (max boxes per image) does not
    assert o365.breakdown["activations"] > coco.breakdown["activations"] * 1.3
    assert o365.breakdown["transient"] > 3 * coco.breakdown["transient"]
    faster = estimate_memory(_det(model="Faster R-CNN"))
    assert faster.breakdown["transient"] == pytest.approx(0.25 * 800 * 1344 * 100 * 40 / GIB, rel=0.02)


def test_yolox_and_rtmdet_sizes_resolve_and_order() -> None:
    sizes = [estimate_memory(Workload(task="object_detection", model=f"RTMDet-{s}", batch_size_per_gpu=32))
             for s in ("tiny", "s", "m", "l", "x")]
    assert [e.profile.backbone for e in sizes] == ["cspnext_tiny", "cspnext_s", "cspnext_m", "cspnext_l", "cspnext_x"]
    peaks = [e.allocated_peak_gib for e in sizes]
    assert peaks == sorted(peaks)
    assert estimate_memory(Workload(task="object_detection", model="YOLOX-s")).profile.backbone == "cspdarknet_s"


def test_planning_estimate_is_explicit_margin_over_central() -> None:
    for w in (seg(), _det(), llm()):
        est = estimate_memory(w)
        assert est.allocated_upper_gib > est.allocated_peak_gib
        assert est.to_dict()["memory"]["allocated_upper_gib"] == est.allocated_upper_gib


def _det_gib(model: str, **kw) -> float:
    base = dict(task="object_detection", model=model, backbone="R-50", input_size=(800, 1333), batch_size_per_gpu=2,
                num_gpus=8, num_classes=80)
    return estimate_memory(Workload(**{**base, **kw})).allocated_peak_gib


def test_group_norm_composite_before_torch_1_6() -> None:
    """GN ran as batch_norm + addcmul before PyTorch 1.6: one more saved tensor per norm; native GN ~ frozen BN."""
    old, new = _det_gib("Faster R-CNN GN+WS", pytorch_version="1.5"), _det_gib("Faster R-CNN GN+WS", pytorch_version="1.8")
    plain = _det_gib("Faster R-CNN", pytorch_version="1.8")
    assert old > new > plain
    assert _det_gib("Weight Standardization", pytorch_version="1.8") == pytest.approx(new)
    assert _det_gib("Faster R-CNN", pytorch_version="1.5") == pytest.approx(plain)   # BN models unaffected


def test_detectors_and_guided_anchoring_cost_more() -> None:
    htc = _det_gib("HTC", pytorch_version="1.8")
    assert _det_gib("HTC-SAC", pytorch_version="1.8") > htc
    assert _det_gib("DetectoRS-HTC", pytorch_version="1.8") > _det_gib("HTC-SAC", pytorch_version="1.8")
    assert _det_gib("GA-RPN", pytorch_version="1.8") > _det_gib("RPN", pytorch_version="1.8")   # 9 approximate anchors/location


def test_detectron2_frozen_bn_keeps_no_bn_input() -> None:
    """framework=detectron2: FrozenBatchNorm2d (x * scale + bias) keeps no BN input, so an R-50 Faster R-CNN saves
    fewer backbone activations; the config name and Detectron2's "X101" resolve; MMDetection's spelling ("R-50-FPN")
    without the hint changes nothing."""
    from gpu_advisor.kb.confignames import resolve_method
    from gpu_advisor.workload import Workload
    kw = dict(task="object_detection", backbone="R50-FPN", input_size=(800, 1333), batch_size_per_gpu=2,
              num_gpus=8, precision="fp32", num_classes=80, pytorch_version="1.5")
    mm = estimate_memory(Workload(model="Faster R-CNN", **dict(kw, backbone="R-50-FPN")))
    d2 = estimate_memory(Workload(model="faster_rcnn_R_50_FPN_3x", framework="detectron2", **kw))
    assert d2.breakdown["activations"] < 0.85 * mm.breakdown["activations"]
    assert d2.breakdown["weights"] == pytest.approx(mm.breakdown["weights"])
    assert resolve_method("mask_rcnn_X_101_32x8d_FPN_3x") == ("mask_rcnn", "resnext101_32x8d")
    x_d2 = estimate_memory(Workload(model="Mask R-CNN", framework="detectron2", **dict(kw, backbone="X101-FPN")))
    x_mm = estimate_memory(Workload(model="Mask R-CNN", **dict(kw, backbone="X-101-FPN")))
    assert x_d2.breakdown["weights"] > 1.5 * x_mm.breakdown["weights"]   # 32x8d (Detectron2) vs 32x4d (MMDet)


_D2_KW = dict(task="object_detection", input_size=(800, 1333), batch_size_per_gpu=2, num_gpus=8, precision="fp32",
              num_classes=80, pytorch_version="1.5")


def test_detectron2_implied_by_its_own_name_forms() -> None:
    """Without `framework`, a backbone or model written in Detectron2's form ("R50-FPN", "X_101_32x8d_FPN",
    "mask_rcnn_R_50_FPN_3x") means framework = detectron2, recorded as an assumption; MMDetection's forms do not."""
    from gpu_advisor.memory.settings import D2_BACKBONE_FORM, D2_CONFIG_FORM, resolve
    from gpu_advisor.workload import Workload
    for name in ("R50-FPN", "R_50_FPN", "R101-C4", "R50-DC5", "X101-FPN", "X_101_32x8d_FPN"):
        assert D2_BACKBONE_FORM.match(name), name
    for name in ("R-50", "R-50-FPN", "X-101-32x4d", "R-50-D8", "R50", "ResNet-50", "r50_fpn"):
        assert not D2_BACKBONE_FORM.match(name), name
    for name in ("mask_rcnn_R_50_FPN_3x", "COCO-Detection/faster_rcnn_X_101_32x8d_FPN_3x", "panoptic_fpn_R_101_3x",
                 "retinanet_R_50_FPN_1x", "rpn_R_50_C4_1x"):
        assert D2_CONFIG_FORM.search(name), name
    for name in ("faster-rcnn_r50_fpn_1x_coco", "mask_rcnn_r50_fpn_1x_coco", "Mask R-CNN", "R-50"):
        assert not D2_CONFIG_FORM.search(name), name
    implied = resolve(Workload(model="Faster R-CNN", backbone="R50-FPN", **_D2_KW))
    notes = [n for n in implied.assumptions if n.field == "framework"]
    assert implied.settings["framework"] == "detectron2" and len(notes) == 1
    assert "R50-FPN" in notes[0].text.en and "Detectron2" in notes[0].text.en and notes[0].text.zh
    by_config = resolve(Workload(model="mask_rcnn_R_50_FPN_3x", **dict(_D2_KW, task="instance_segmentation")))
    assert by_config.settings["framework"] == "detectron2"
    given = resolve(Workload(model="Faster R-CNN", backbone="R50-FPN", framework="detectron2", **_D2_KW))
    assert not [n for n in given.assumptions if n.field == "framework"]
    same = estimate_memory(Workload(model="Faster R-CNN", backbone="R50-FPN", **_D2_KW))
    hinted = estimate_memory(Workload(model="Faster R-CNN", backbone="R50-FPN", framework="detectron2", **_D2_KW))
    assert same.allocated_peak_gib == pytest.approx(hinted.allocated_peak_gib)
    mm = resolve(Workload(model="Faster R-CNN", backbone="R-50-FPN", **_D2_KW))
    assert "framework" not in mm.settings and not [n for n in mm.assumptions if n.field == "framework"]
    x101 = resolve(Workload(model="Mask R-CNN", backbone="X101-FPN", **_D2_KW))   # implied -> 32x8d, as with the hint
    assert x101.backbone.key == "resnext101_32x8d"


def test_c4_and_dc5_heads_from_the_names() -> None:
    """"C4" / "DC5" in the backbone or config name select the Res5ROIHeads / dilated-C5 profiles (Detectron2 or
    MMDetection spelling); other methods and FPN names keep their profile."""
    from gpu_advisor.memory.arch import roi_stage
    from gpu_advisor.memory.settings import resolve
    from gpu_advisor.kb.models import knowledge
    from gpu_advisor.workload import Workload

    def key(**kw) -> str:
        return resolve(Workload(**{**_D2_KW, **kw})).method.key

    assert key(model="Faster R-CNN", backbone="R50-C4") == "faster_rcnn_c4"
    assert key(model="faster_rcnn_R_101_DC5_3x", backbone="R101-DC5") == "faster_rcnn_dc5"
    assert key(model="Faster R-CNN", backbone="R-50-DC5") == "faster_rcnn_dc5"       # MMDetection's spelling
    assert key(model="mask_rcnn_R_50_C4_1x") == "mask_rcnn_c4"
    assert key(model="Faster R-CNN", backbone="R50-C4", task="instance_segmentation") == "mask_rcnn_c4"
    assert key(model="Mask R-CNN", backbone="R50-DC5", task="instance_segmentation") == "mask_rcnn_dc5"
    assert key(model="rpn_R_50_C4_1x") == "rpn_c4"
    assert key(model="Faster R-CNN", backbone="R50-FPN") == "faster_rcnn"
    assert key(model="RetinaNet", backbone="R50-C4") == "retinanet"                  # no C4 RetinaNet profile
    # res5 per RoI (R-50, FrozenBN): pooled 1024 x 14^2 + 3 bottlenecks x (2 + 4) x 512 at 7^2
    values, _ = roi_stage(knowledge().backbones["resnet50"], True)
    assert values == pytest.approx(1024 * 196 + 3 * 6 * 512 * 49)
    fpn = estimate_memory(Workload(model="Faster R-CNN", backbone="R50-FPN", **_D2_KW))
    c4 = estimate_memory(Workload(model="Faster R-CNN", backbone="R50-C4", **_D2_KW))
    dc5 = estimate_memory(Workload(model="Faster R-CNN", backbone="R50-DC5", **_D2_KW))
    rpn_c4 = estimate_memory(Workload(model="rpn_R_50_C4_1x", backbone="R50-C4", **_D2_KW))
    assert c4.breakdown["activations"] > 1.5 * fpn.breakdown["activations"]        # res5 on 512 RoIs per image
    assert dc5.breakdown["weights"] > 3 * fpn.breakdown["weights"]                 # fc6 2048 x 7 x 7 -> 1024
    assert rpn_c4.breakdown["weights"] < 0.6 * fpn.breakdown["weights"]            # res5 is not built
