"""Regression guard: the estimator's accuracy on the third-party dev set stays within target."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(os.environ.get("GPU_ADVISOR_BENCH_DIR", ROOT.parent / "shared" / "benchmarks" / "memory"))

pytestmark = pytest.mark.skipif(not (BENCH_DIR / "mmseg_dev.csv").exists(), reason="shared benchmark CSVs absent")


@pytest.fixture(scope="module")
def results() -> list[dict]:
    spec = importlib.util.spec_from_file_location("memory_accuracy", ROOT / "bench" / "memory_accuracy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_accuracy"] = module   # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    rows = module.collect(BENCH_DIR)
    return [dict(r, _stats=module.stats) for r in rows]


def _stats(results: list[dict], sources: tuple[str, ...]) -> dict:
    subset = [r for r in results if r["source"] in sources]
    return results[0]["_stats"](subset, "predicted")


def test_cv_median_error_under_target(results: list[dict]) -> None:
    s = _stats(results, ("mmseg", "mmdet"))
    assert s["coverage"] >= 90.0
    assert s["median"] <= 10.0


def test_mmseg_accuracy(results: list[dict]) -> None:
    s = _stats(results, ("mmseg",))
    assert s["median"] <= 8.0 and s["p90"] <= 25.0 and s["under15"] <= 10.0


def test_llm_measured_median_under_target(results: list[dict]) -> None:
    """Issue #3: LLM median <= 15 % (13.9 % since LoRA keeps only adapted inputs and the logits are recounted)."""
    s = _stats(results, ("llm",))
    assert s["coverage"] >= 90.0 and s["median"] <= 15.0 and s["p90"] <= 65.0


def test_estimator_beats_rules_of_thumb(results: list[dict]) -> None:
    cv = [r for r in results if r["source"] != "llm"]
    stats = results[0]["_stats"]
    assert stats(cv, "predicted")["median"] * 3 < stats(cv, "rule16")["median"]


def test_cv_p90_and_detection_under_estimates(results: list[dict]) -> None:
    """CV p90 and the share under-estimated by more than 15 % within the issue #3 targets (all rows: 3.7 %)."""
    s = _stats(results, ("mmseg", "mmdet"))
    assert s["p90"] <= 25.0 and s["under15"] <= 4.0
    scored = _stats([r for r in results if not r["suspect"]], ("mmseg", "mmdet"))
    assert scored["p90"] <= 25.0 and scored["under15"] <= 3.0


def test_suspect_rows_are_few_named_and_explained(results: list[dict]) -> None:
    """Rows left out of the score exist in the CSVs, each with its evidence, and are a handful, not a filter."""
    module = sys.modules["memory_accuracy"]   # loaded by the results fixture
    suspects = [r for r in results if r["suspect"]]
    assert len(suspects) == len(module.SUSPECT) <= 5
    assert all(len(r["suspect"]) > 80 and "GB" in r["suspect"] for r in suspects)


def test_config_model_names() -> None:
    from gpu_advisor.kb.confignames import config_model as name

    module = sys.modules.get("memory_accuracy")
    if module is None:
        pytest.skip("bench module not loaded")
    assert name("detectors_htc-r50_1x_coco") == "detectors-htc"
    assert name("htc_r50-sac_1x_coco") == "htc-sac"
    assert name("mask-rcnn_x50-32x4d_fpn_gn-ws-all_2x_coco") == "mask-rcnn-gn-ws"
    assert name("ga-rpn_r50-caffe_fpn_1x_coco") == "ga-rpn"
    assert name("yolox_s_8xb8-300e_coco") is None
    # RF-Next: the detector follows the config; search / fixed_multi_branch keep 2 branches, fixed_single_branch is plain
    assert name("rfnext_search_cascade_mask_rcnn_hrnetv2p_w18_20e_coco") == "cascade-mask-rcnn-rfnext"
    assert name("rfnext_fixed_multi_branch_mask_rcnn_pvtv2-b0_fpn_1x_coco") == "mask-rcnn-rfnext"
    assert name("rfnext_fixed_single_branch_panoptic_fpn_r2_50_fpn_fp16_1x_coco") == "panoptic-fpn"
    assert module._torch("mmcv-1.x runner", "20200130") == "1.5" and module._torch("mmcv-1.x runner", "20210524") == "1.8"
