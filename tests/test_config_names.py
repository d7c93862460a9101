"""OpenMMLab config names as the model: method, backbone and job settings read from the name (issue #3)."""

from __future__ import annotations

import pytest

from gpu_advisor.errors import UnknownModelError
from gpu_advisor.memory import estimate_memory
from gpu_advisor.kb.confignames import parse, resolve_method
from gpu_advisor.workload import Workload

SEG, DET, INS = "semantic_segmentation", "object_detection", "instance_segmentation"

# (task, config name, the explicit workload a user would write for the same job)
CASES = [
    (SEG, "deeplabv3plus_r50-d8_4xb2-80k_cityscapes-512x1024",
     dict(model="DeepLabV3+", backbone="R-50-D8", input_size=(512, 1024), batch_size_per_gpu=2, num_classes=19)),
    (SEG, "configs/deeplabv3plus/deeplabv3plus_r101-d16-mg124_4xb2-80k_cityscapes-512x1024.py",
     dict(model="DeepLabV3+", backbone="R-101-D16-MG124", input_size=(512, 1024), batch_size_per_gpu=2, num_classes=19)),
    (SEG, "segformer_mit-b5_8xb2-160k_ade20k-640x640",
     dict(model="SegFormer", backbone="MIT-B5", input_size=(640, 640), batch_size_per_gpu=2, num_classes=150)),
    (SEG, "fastfcn_r50-d32_jpu_aspp_4xb2-80k_cityscapes-512x1024",
     dict(model="FastFCN ASPP", backbone="R-50-D32", input_size=(512, 1024), batch_size_per_gpu=2, num_classes=19)),
    (SEG, "fastfcn_r50-d32_jpu_psp_4xb4-80k_ade20k-512x512",
     dict(model="FastFCN PSP", backbone="R-50-D32", input_size=(512, 512), batch_size_per_gpu=4, num_classes=150)),
    (SEG, "knet-s3_r50-d8_fcn_8xb2-adamw-80k_ade20k-512x512",
     dict(model="K-Net FCN", backbone="R-50-D8", input_size=(512, 512), batch_size_per_gpu=2, num_classes=150)),
    (SEG, "knet-s3_r50-d8_deeplabv3_8xb2-adamw-80k_ade20k-512x512",
     dict(model="K-Net DeepLabV3", backbone="R-50-D8", input_size=(512, 512), batch_size_per_gpu=2, num_classes=150)),
    (SEG, "upernet_swin-tiny-patch4-window7-in1k-pre_8xb2-160k_ade20k-512x512",
     dict(model="UPerNet", backbone="Swin-T", input_size=(512, 512), batch_size_per_gpu=2, num_classes=150)),
    (SEG, "convnext-tiny_upernet_8xb2-amp-160k_ade20k-512x512",
     dict(model="UPerNet", backbone="ConvNeXt-T", input_size=(512, 512), batch_size_per_gpu=2, num_classes=150,
          precision="fp16_amp")),
    (SEG, "deeplabv3plus_r50-d8_512x1024_80k_cityscapes",   # 0.x: no batch token -> task default (2)
     dict(model="DeepLabV3+", backbone="R-50-D8", input_size=(512, 1024), num_classes=19)),
    (SEG, "pspnet_r50-d8_4xb4-80k_pascal-context-59-480x480",
     dict(model="PSPNet", backbone="R-50-D8", input_size=(480, 480), batch_size_per_gpu=4, num_classes=59)),
    (INS, "mask-rcnn_r50_fpn_1x_coco", dict(model="Mask R-CNN", backbone="R-50", num_classes=80)),
    (INS, "cascade-mask-rcnn_x101-64x4d_fpn_1x_coco", dict(model="Cascade Mask R-CNN", backbone="X-101-64x4d", num_classes=80)),
    (DET, "faster_rcnn_r50_fpn_1x_coco", dict(model="Faster R-CNN", backbone="R-50", num_classes=80)),
    (DET, "faster-rcnn_r50-caffe-c4_1x_coco", dict(model="Faster R-CNN", backbone="R-50-C4", num_classes=80)),
    (DET, "faster_rcnn_r50_pafpn_1x_coco", dict(model="PAFPN", backbone="R-50", num_classes=80)),
    (INS, "mask_rcnn_r50_fpn_gn-ws-all_2x_coco", dict(model="Mask R-CNN GN+WS", backbone="R-50", num_classes=80)),
    (INS, "mask_rcnn_r50_fpn_r16_gcb_c3-c5_1x_coco", dict(model="GCNet Mask R-CNN", backbone="R-50", num_classes=80)),
    (DET, "retinanet_r50_fpn_fp16_1x_coco",
     dict(model="RetinaNet", backbone="R-50", num_classes=80, precision="fp16_amp")),
    (DET, "retinanet_r50_fpg_crop640_50e_coco",
     dict(model="RetinaNet FPG", backbone="R-50", num_classes=80, input_size=(640, 640))),
    (DET, "retinanet_ghm_x101_64x4d_fpn_1x_coco", dict(model="GHM", backbone="X-101-64x4d", num_classes=80)),
    (DET, "faster-rcnn_r50_fpn_1x_cityscapes", dict(model="Faster R-CNN", backbone="R-50", num_classes=8)),
    (DET, "cornernet_hourglass104_8xb6-210e-mstest_coco",
     dict(model="CornerNet", backbone="HourglassNet-104", num_classes=80, batch_size_per_gpu=6)),
    (INS, "mask-rcnn_r50_fpn_sample1e-3_ms-2x_lvis-v1",
     dict(model="Mask R-CNN", backbone="R-50", num_classes=1203)),
]


def _estimate(task: str, **fields):
    return estimate_memory(Workload.model_validate({"task": task, **fields}))


@pytest.mark.parametrize("task,config,explicit", CASES, ids=[c[1] for c in CASES])
def test_config_name_estimates_as_the_explicit_workload(task: str, config: str, explicit: dict) -> None:
    assert resolve_method(config) is not None
    by_name, by_fields = _estimate(task, model=config), _estimate(task, **explicit)
    assert by_name.profile.key == by_fields.profile.key
    assert by_name.allocated_peak_gib == pytest.approx(by_fields.allocated_peak_gib, rel=1e-9)
    assert by_name.allocated_upper_gib == pytest.approx(by_fields.allocated_upper_gib, rel=1e-9)


def test_user_fields_win_over_the_config_name() -> None:
    config = "deeplabv3plus_r50-d8_4xb2-80k_cityscapes-512x1024"
    given = dict(backbone="R-101-D8", input_size=(769, 769), batch_size_per_gpu=4, num_classes=5, precision="bf16_amp")
    by_name = _estimate(SEG, model=config, **given)
    assert by_name.allocated_peak_gib == pytest.approx(_estimate(SEG, model="DeepLabV3+", **given).allocated_peak_gib)
    job = by_name.profile.job
    assert (job.input_size, job.batch_size_per_gpu, job.num_classes, job.precision) == ((769, 769), 4, 5, "bf16_amp")
    assert not [n for n in by_name.assumptions if "config name" in n.text.en]


@pytest.mark.parametrize("field,value", [("backbone", "ResNet"), ("input_size", (512, 1024)), ("batch_size_per_gpu", 2),
                                         ("num_classes", 19), ("precision", "fp16_amp")])
def test_each_implied_field_is_an_assumption_in_both_languages(field: str, value: object) -> None:
    est = _estimate(SEG, model="deeplabv3plus_r50-d8_4xb2-amp-80k_cityscapes-512x1024")
    notes = [n for n in est.assumptions if n.field == field]
    assert len(notes) == 1
    n = notes[0]
    assert "config name" in n.text.en and "配置名" in n.text.zh
    assert str(value) in str(n.value) or n.value == value


def test_recommendation_sees_the_config_settings() -> None:
    from gpu_advisor.advisor import recommend

    rec = recommend({"task": SEG, "model": "segformer_mit-b5_8xb2-160k_ade20k-640x640"}, "en")
    explicit = recommend({"task": SEG, "model": "SegFormer", "backbone": "MIT-B5", "input_size": [640, 640],
                          "batch_size_per_gpu": 2, "num_classes": 150}, "en")
    assert rec.memory.device_total_gib == pytest.approx(explicit.memory.device_total_gib)
    assert (rec.instance and rec.instance.instance_type) == (explicit.instance and explicit.instance.instance_type)
    texts = " ".join(n.text.en for n in rec.assumptions)
    assert "num_classes = 150" in texts and "input_size = (640, 640)" in texts


def test_parse_reads_settings() -> None:
    cfg = parse("configs/knet/knet-s3_r50-d8_fcn_8xb2-adamw-80k_ade20k-512x512.py")
    assert cfg is not None
    assert (cfg.method, cfg.backbone, cfg.batch_per_gpu, cfg.input_size, cfg.dataset) == (
        "knet_fcn", "r50-d8", 2, (512, 512), "ade20k")
    assert parse("deeplabv3plus_r50-d8_512x1024_80k_cityscapes").batch_per_gpu is None   # 0.x: no batch token
    assert parse("nas_fcos_nashead_r50_caffe_fpn_gn_4x4_1x_coco").batch_per_gpu == 4     # 2.x "gpus x batch"
    classes = {d: parse(f"fcn_r50-d8_4xb4-80k_{d}-512x512").num_classes(SEG)
               for d in ("voc12aug", "pascal-context", "pascal-context-59", "coco-stuff164k", "coco-stuff10k",
                         "loveda", "potsdam", "vaihingen", "isaid", "synapse")}
    assert classes == {"voc12aug": 21, "pascal-context": 60, "pascal-context-59": 59, "coco-stuff164k": 171,
                       "coco-stuff10k": 171, "loveda": 7, "potsdam": 6, "vaihingen": 6, "isaid": 16, "synapse": 9}
    det = {d: parse(f"faster-rcnn_r50_fpn_1x_{d}").num_classes(DET)
           for d in ("coco", "lvis-v1", "lvis-v0.5", "objects365v2", "openimages", "crowdhuman", "voc0712", "cityscapes")}
    assert det == {"coco": 80, "lvis-v1": 1203, "lvis-v0.5": 1230, "objects365v2": 365, "openimages": 601,
                   "crowdhuman": 1, "voc0712": 20, "cityscapes": 8}
    # Detectron2 config names stay with gpu_advisor.kb.models (D2_CONFIG_FORM)
    assert parse("mask_rcnn_R_50_FPN_3x") is None


@pytest.mark.parametrize("junk", ["foo_bar_1x_coco", "hello_world", "xyzzy_r50-d8_4xb2-80k_cityscapes-512x1024",
                                  "not_a_model_8xb2-160k_ade20k-512x512"])
def test_junk_stays_unknown(junk: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        _estimate(SEG, model=junk)
    assert err.value.field == "model"


@pytest.mark.parametrize("typo,hint", [("deeplabv9_r50-d8_4xb2-80k_cityscapes-512x1024", "DeepLabV3"),
                                       ("segformerr_mit-b5_8xb2-160k_ade20k-640x640", "SegFormer")])
def test_misspelt_config_name_gets_suggestions(typo: str, hint: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        _estimate(SEG, model=typo)
    assert any(hint.lower() in s.lower() for s in err.value.suggestions)
