"""bench/zoo_check/run.py: its row -> workload conversion on 3 rows of rows.csv, answered by the real CLI
(`gpu-advisor estimate --jsonl`). No accuracy threshold: the rows stand in for the held-out set."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "bench" / "zoo_check" / "run.py"


def _load():
    spec = importlib.util.spec_from_file_location("zoo_check_run", RUN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_zoo_rows_convert_and_the_cli_answers_them():
    zoo = _load()
    rows = {r["config"]: r for r in zoo.read_rows()}
    picked = [rows[c] for c in ("grid_rcnn_r50_fpn_gn-head_2x_coco",               # detection, 2.x name
                                "isanet_r50-d8_4xb2-40k_cityscapes-512x1024",       # segmentation, 1.x name
                                "mae-base_upernet_8xb2-amp-160k_ade20k-512x512")]   # AMP, ViT backbone
    workloads = [zoo.to_workload(r) for r in picked]
    assert workloads[0]["input_size"] == [800, 1333] and workloads[0]["model"] == "Grid R-CNN"
    assert workloads[1]["backbone"] == "R-50-D8" and workloads[1]["num_classes"] == 19
    assert workloads[2]["precision"] == "fp16_amp" and workloads[2]["pytorch_version"] == "1.8"
    answers = zoo.estimate(workloads)   # python -m gpu_advisor.cli: the installed entry point, this checkout's code
    assert len(answers) == 3
    for row, ans in zip(picked, answers):
        assert "memory" in ans, (row["config"], ans)
        assert ans["memory"]["allocated_peak_gib"] > 0


def test_detectron2_rows_sent_without_the_framework_column():
    """The held-out harness sends only the issue's keys: to_workload(framework=False) drops the hint and keeps the
    names as MODEL_ZOO.md writes them."""
    zoo = _load()
    row = next(r for r in zoo.read_rows() if r["config"] == "COCO-Detection/faster_rcnn_R_50_C4_1x")
    hinted, bare = zoo.to_workload(row), zoo.to_workload(row, framework=False)
    assert hinted["framework"] == "detectron2" and "framework" not in bare
    assert bare["model"] == "faster_rcnn_R_50_C4_1x" and bare["backbone"] == "R50-C4"
