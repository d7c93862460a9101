"""Accuracy of gpu_advisor.memory against third-party measured training memory.

Runs every row of ../shared/benchmarks/memory/*.csv (override: GPU_ADVISOR_BENCH_DIR) through estimate_memory,
prints per source and overall: coverage, median / p90 absolute % error of allocated_peak_gib vs measured, and
the share of rows under-estimated by more than 15 %; for the planning estimate allocated_upper_gib its share of
rows under-estimated by more than 15 % and its median error; the same for two rules of thumb. Writes
bench/out/memory_rows.csv and bench/out/memory_scatter.png (skipped with a message without matplotlib).
"""

from __future__ import annotations

import csv
import os
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from gpu_advisor.errors import AdvisorError
from gpu_advisor.memory import estimate_memory
from gpu_advisor.kb.confignames import config_model, dense_size, det_backbone_name, resolve_method
from gpu_advisor.memory.states import per_param
from gpu_advisor.workload import Workload, lora_target_names

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
DOUBTFUL = ("exceeds the", "carried over", "copy of")   # flags that say the measured value is not trustworthy
CV_SOURCES = ("mmseg", "mmdet")


def bench_dir() -> Path:
    return Path(os.environ.get("GPU_ADVISOR_BENCH_DIR", ROOT.parent / "shared" / "benchmarks" / "memory"))


@dataclass
class Row:
    source: str
    label: str
    measured: float
    candidates: list[dict]
    statistic: str = "allocated"   # "reserved": the row reports torch.cuda.max_memory_reserved()
    suspect: str = ""              # why the measured figure contradicts other rows of the same source (SUSPECT)


def _read(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _opt(name: str) -> str:
    n = name.lower()
    if "8bit" in n:
        return "adamw_8bit"
    return {"sgd": "sgd_momentum", "adamw": "adamw", "adam": "adam"}.get(n.split(" ")[0], "adamw")


def _torch(measured_with: str, run_date: str = "") -> str:
    """PyTorch of a run: mmengine era -> 1.13; mmcv-1.x era -> 1.8, or 1.5 for runs dated before PyTorch 1.6's release
    (2020-07-28), the first with a native GroupNorm kernel (pytorch#28203): earlier GN ran as batch_norm + addcmul."""
    if "mmcv-1.x" in measured_with or "PyTorch 1.4" in measured_with:
        return "1.5" if run_date.isdigit() and run_date < "20200728" else "1.8"
    return "1.13"


def mmseg_rows(path: Path) -> list[Row]:
    rows = []
    for x in _read(path):
        if not x["training_memory_gb"] or any(d in x["flags"] for d in DOUBTFUL):
            continue
        d = dict(task="semantic_segmentation", model=x["method"], backbone=x["backbone"] or None,
                 input_size=(int(x["input_h"]), int(x["input_w"])), batch_size_per_gpu=int(x["batch_per_gpu"]),
                 num_gpus=int(x["gpus"] or 4), distributed="ddp", precision=x["precision"], optimizer=_opt(x["optimizer"]),
                 num_classes=int(x["num_classes"]), pytorch_version=_torch(x["measured_with"], x["run_date"]),
                 gradient_checkpointing=x["with_cp"] == "True")
        rows.append(Row("mmseg", f"{x['method']} {x['backbone']} {x['config_name']}", float(x["training_memory_gb"]), [d],
                        suspect=_suspect(x)))
    return rows


def _det_backbone(x: dict) -> str | None:
    kind, depth, cfg = x["backbone_type"], x["backbone_depth_or_arch"], (x["config_name"] or x["config_name_2x"]).lower()
    if kind.startswith(("ResNet", "DetectoRS")) and depth:
        return f"R-{depth}"
    if kind == "ResNeXt":
        found = re.search(r"(\d+x\d+d)", cfg)
        return f"X-{depth}-{found.group(1) if found else '32x4d'}"
    named = det_backbone_name(cfg)   # Swin's attention window is part of the backbone ("swin-b-p4-w12-384": "swin-b-w12")
    if named:
        return named
    size = dense_size(cfg)
    if kind in ("CSPNeXt", "CSPDarknet") and size:   # YOLOX / RTMDet size from the config name (deepen/widen factors)
        return f"{'cspnext' if kind == 'CSPNeXt' else 'cspdarknet'}-{size}"
    simple = {"RegNet": depth, "mmcls.ConvNeXt": f"convnext-{depth[:1]}", "Res2Net": f"res2net-{depth}",
              "Darknet": "darknet-53", "MobileNetV2": "m-v2", "SSDVGG": "vgg16", "CSPNeXt": "cspnext", "CSPDarknet": None,
              "PyramidVisionTransformer": "pvt-s", "PyramidVisionTransformerV2": "pvtv2-b2", "HRNet": "hrnet-w32"}
    return simple.get(kind)


# Rows whose CSV field contradicts the config that produced the run, corrected from that config (cited).
CONFIG_FIXES = {
    # CSV: num_classes 80, model_type FasterRCNN, taken from the 2.x config retinanet_r50_fpn_syncbn_1350k_obj365v1.py,
    # which by a copy slip inherits _base_/models/faster_rcnn_r50_fpn.py yet sets a top-level bbox_head=dict(num_classes=365)
    # (not buildable as a FasterRCNN). The run's checkpoint is a RetinaNet and the fixed 3.x config
    # configs/objects365/retinanet_r50-syncbn_fpn_1350k_objects365v1.py builds _base_/models/retinanet_r50_fpn.py with
    # bbox_head=dict(num_classes=365): Objects365 v1's 365 classes.
    "retinanet_r50-syncbn_fpn_1350k_objects365v1": {"num_classes": 365},
}


# Rows whose measured figure contradicts other measurements of the same model zoo (the dev set's README: flagged rows
# may be dropped "as you see fit, and say which"). They are still estimated and written to memory_rows.csv; the
# table scores the rest and prints a line with them included. Evidence only: none is dropped for being far off.
SUSPECT = {
    "deeplabv3plus_r101-d16-mg124_4xb2-80k_cityscapes-512x1024":
        "the same metafile lists the identical config at 40k iterations (only max_iters differs) at 5.8 GB, and both "
        "runs' checkpoints carry the same timestamp 20200908_005644: one run, two figures (9.9 here)",
    "htc_x101-64x4d_fpn_16xb1-20e_coco":
        "1 image per GPU, yet 14.5 GB is more than Cascade Mask R-CNN X-101-64x4d at 2 images (12.2 GB, same zoo); "
        "HTC adds ~1.1 GB per image over Cascade Mask R-CNN (R-50 pair: 8.2 vs 6.0 GB at 2 images), so 12.2 + 2 x 1.1 "
        "= 14.4 GB is what a 2-image run would read",
    "solov2-light_r50_fpn_ms-3x_coco":
        "SOLOv2-light R-50 at 768 x 512 with the narrower light head reads 9.9 GB, more than SOLOv2 R-50 / R-101 with "
        "the full head at 1333 x 800 (5.1 / 6.9 GB, same code, configs/solov2/metafile.yml)",
    "solov2_light_r34_fpn_3x_coco":
        "SOLOv2-light R-34 at 768 x 512 reads 9.3 GB, more than SOLOv2 R-50 / R-101 with the full head at 1333 x 800 "
        "(5.1 / 6.9 GB, same code, configs/solov2/metafile.yml)",
}


def _suspect(x: dict) -> str:
    return SUSPECT.get(x.get("config_name") or "") or SUSPECT.get(x.get("config_name_2x") or "") or ""


def mmdet_rows(path: Path) -> list[Row]:
    rows = []
    for x in _read(path):
        if not x["training_memory_gb"] or any(d in x["flags"] for d in DOUBTFUL):
            continue
        task = ("panoptic_segmentation" if "Panoptic" in x["task"] else
                "instance_segmentation" if "Instance Segmentation" in x["task"] else "object_detection")
        base = dict(task=task, backbone=_det_backbone(x), input_size=(int(x["input_max_short"]), int(x["input_max_long"])),
                    batch_size_per_gpu=int(x["batch_per_gpu"]), num_gpus=int(x["gpus"] or 8), distributed="ddp",
                    precision=x["precision"], optimizer=_opt(x["optimizer"]), num_classes=int(x["num_classes"] or 80),
                    pytorch_version=_torch(x["measured_with"], x["run_date"]))
        base.update(CONFIG_FIXES.get(x["config_name"], {}))
        cfg = x["config_name"] or x["config_name_2x"]   # 2.x name when the 3.x metafile has none
        named = config_model(cfg) if cfg else None
        if x["measured_with"].startswith("detectron2"):
            # the CSV's measured_with column names the training code ("detectron2 (commit 185c27e, run by OpenMMLab)"):
            # its ResNet uses FrozenBatchNorm2d (Workload.framework, gpu_advisor.memory.arch)
            base["framework"] = "detectron2"
        names = [m for m in (named if named and resolve_method(named) else None, x["method"], x["model_type"]) if m]
        cands = [dict(base, model=m) for m in names]
        rows.append(Row("mmdet", f"{x['method']} {x['backbone_type']} {x['config_name'] or x['config_name_2x']}",
                        float(x["training_memory_gb"]), cands, suspect=_suspect(x)))
    return rows


def _llm_method(m: str) -> tuple[str, bool]:
    m = m.split(" ")[0].lower()
    return (m, True) if m in ("full", "lora", "qlora") else ("lora", False)


def _lora_targets(column: str) -> tuple[str, ...] | None:
    """The row's adapted linear layers (CSV column lora_targets), or None (the estimator's default, every linear
    layer) when the column is empty or names modules that are not linear layers (layer norms, embeddings)."""
    names = [n for n in column.replace(" ", "").split(",") if n and not n.startswith("...")]
    try:
        return lora_target_names(names) if names else None
    except ValueError:
        return None


# litgpt table rows on a 4xA10G machine whose config says `devices: 1` (config_hub/finetune/tiny-llama/full.yaml):
# config_hub/finetune/README.md says "All runs are single-GPU experiments, use --devices 4 to utilize more than one
# GPU", and the 1x and 4x rows report the same memory (14.10 GB) and runtime (2.58 / 2.57 min), which a 4-GPU FSDP
# run (4x fewer micro-batches per GPU, sharded states) would not. So the run was one GPU without FSDP.
LITGPT_ONE_DEVICE = {("litgpt", "tiny-llama", "full")}


def llm_rows(path: Path) -> list[Row]:
    rows = []
    for x in _read(path):
        if x["quality_tier"] == "E" or not x["peak_memory_gib"]:
            continue
        method, _ = _llm_method(x["method"])
        opt = _opt(x["optimizer"] if "see" not in x["optimizer"] else ("8bit" if "8bit" in x["other_settings"] else "adamw"))
        d = dict(task="llm_finetune", model=x["model"], seq_len=int(x["seq_len"]), batch_size_per_gpu=int(x["batch_per_gpu"]),
                 num_gpus=int(x["gpus"]), precision="bf16", optimizer=opt, finetune_method=method,
                 distributed={"FSDP": "fsdp", "DDP": "ddp"}.get(x["parallelism"].split(" ")[0], "none"),
                 gradient_checkpointing=x["activation_checkpointing"].startswith("yes"))
        if x["params_b"]:
            d["params_billion"] = float(x["params_b"])
        if method in ("lora", "qlora"):
            d["lora_rank"] = int(x["lora_r"]) if x["lora_r"] else 16
            d["lora_targets"] = _lora_targets(x["lora_targets"])
        if x["framework"] in ("litgpt", "torchtune"):
            d["framework"] = x["framework"]   # what QLoRA keeps depends on the training code (Workload.framework)
        if (x["framework"], x["model"], method) in LITGPT_ONE_DEVICE and d["num_gpus"] > 1:
            d.update(num_gpus=1, distributed="none")
        if "chunked cross entropy" in x["other_settings"].lower() or "all previous techniques" in x["other_settings"]:
            d["chunked_loss"] = True   # torchtune's cumulative table: "+ Chunked Cross Entropy" and every row after it
        if "activation offloading" in x["other_settings"].lower() or "all previous techniques" in x["other_settings"]:
            # torchtune's cumulative table: "+ Activation Offloading" and the rows after it; its LoRA / QLoRA rows use
            # "all previous techniques except optimizer_in_bwd and AdamW8bit" (README "Optimization flags")
            d["activation_offloading"] = True
        if "fsdp_cpu_offload=true" in x["other_settings"].lower():
            d["cpu_offload"] = True   # torchtune llama3_1/70B_full: fsdp_cpu_offload (README: "CPU offload with fused optimizer")
        stat = "reserved" if "max_memory_reserved" in x["memory_metric"] else "allocated"
        rows.append(Row("llm", f"{x['source_id']} {x['model']} {x['method']} {x['other_settings'][:40]}",
                        float(x["peak_memory_gib"]), [d], stat))
    return rows


def _rules(est, d: dict) -> tuple[float, float]:
    """Rule 1: 16 B/param, no activations. Rule 2: weights + grads + optimizer (+master) by precision."""
    params = est.profile.params_billion * 1e9
    trainable = est.profile.trainable_params_billion * 1e9
    job = est.profile.job
    w, g, o, m = per_param(job.precision, job.optimizer, est.profile.is_llm)
    rule2 = params * w + trainable * (g + o + m) if job.finetune_method in (None, "full") else params * 2 + trainable * 16
    return 16.0 * params / 2**30, rule2 / 2**30


def run_row(row: Row) -> dict:
    out = {"source": row.source, "label": row.label, "measured": row.measured, "predicted": None, "upper": None,
           "rule16": None, "rule_states": None, "statistic": row.statistic, "error": "", "suspect": row.suspect}
    for d in row.candidates:
        try:
            est = estimate_memory(Workload(**{k: v for k, v in d.items() if v is not None}))
        except (AdvisorError, ValueError) as exc:
            out["error"] = str(exc)[:120]
            continue
        # rows that report max_memory_reserved (PEFT) are compared against allocated + the estimator's allocator slack
        slack = est.breakdown.get("allocator_slack", 0.0) if row.statistic == "reserved" else 0.0
        out["predicted"] = est.allocated_peak_gib + slack
        out["upper"] = est.allocated_upper_gib + slack
        out["rule16"], out["rule_states"] = _rules(est, d)
        out["error"] = ""
        break
    return out


def stats(results: list[dict], key: str) -> dict:
    answered = [r for r in results if r[key] is not None]
    errs = sorted(abs(r[key] - r["measured"]) / r["measured"] * 100 for r in answered)
    under = [r for r in answered if r[key] < 0.85 * r["measured"]]
    pct = (lambda q: errs[min(len(errs) - 1, int(q * len(errs)))] if errs else float("nan"))
    return {"rows": len(results), "answered": len(answered), "coverage": len(answered) / max(1, len(results)) * 100,
            "median": statistics.median(errs) if errs else float("nan"), "p90": pct(0.9),
            "under15": len(under) / max(1, len(answered)) * 100}


def collect(directory: Path | None = None) -> list[dict]:
    d = directory or bench_dir()
    rows = mmseg_rows(d / "mmseg_dev.csv") + mmdet_rows(d / "mmdet_dev.csv") + llm_rows(d / "llm_finetune_dev.csv")
    return [run_row(r) for r in rows]


def _print_table(results: list[dict]) -> None:
    groups = {"mmseg": ["mmseg"], "mmdet": ["mmdet"], "CV (mmseg+mmdet)": list(CV_SOURCES), "llm (measured)": ["llm"],
              "overall": ["mmseg", "mmdet", "llm"]}
    print(f"{'set':<18}{'method':<14}{'rows':>5}{'cover%':>8}{'median%':>9}{'p90%':>8}{'under>15%':>10}"
          f"{'plan under>15%':>16}{'plan median%':>13}")
    scored = [r for r in results if not r["suspect"]]
    for name, sources in groups.items():
        subset = [r for r in scored if r["source"] in sources]
        for label, key in (("estimator", "predicted"), ("16B/param", "rule16"), ("states-only", "rule_states")):
            s = stats(subset, key)
            plan = ""
            if key == "predicted":   # the planning (upper) estimate: its under-estimate share and its median error
                u = stats(subset, "upper")
                plan = f"{u['under15']:>16.1f}{u['median']:>13.1f}"
            print(f"{name:<18}{label:<14}{s['rows']:>5}{s['coverage']:>8.1f}{s['median']:>9.1f}{s['p90']:>8.1f}{s['under15']:>10.1f}{plan}")
    suspects = [r for r in results if r["suspect"]]
    if suspects:
        s = stats([r for r in results if r["source"] in CV_SOURCES], "predicted")
        print(f"{'CV incl. suspect':<18}{'estimator':<14}{s['rows']:>5}{s['coverage']:>8.1f}{s['median']:>9.1f}"
              f"{s['p90']:>8.1f}{s['under15']:>10.1f}")
        print(f"{len(suspects)} rows not scored above (SUSPECT in bench/memory_accuracy.py), predicted/measured:")
        for r in suspects:
            ratio = f"{r['predicted'] / r['measured']:.2f}" if r["predicted"] is not None else "n/a"
            print(f"  {ratio}  {r['label']}: {r['suspect']}")


def _write(results: list[dict]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "memory_rows.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(results[0]))
        writer.writeheader()
        writer.writerows(results)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: scatter plot skipped (pip install matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(6, 6))
    for source, colour in (("mmseg", "tab:blue"), ("mmdet", "tab:orange"), ("llm", "tab:green")):
        pts = [(r["measured"], r["predicted"]) for r in results if r["source"] == source and r["predicted"] is not None]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, label=source, color=colour)
    top = max(max(r["measured"], r["predicted"] or 0) for r in results)
    ax.plot([0, top], [0, top], "k--", lw=0.8)
    ax.set(xlabel="measured peak (GiB)", ylabel="predicted allocated_peak_gib", xscale="log", yscale="log",
           title="gpu-advisor memory estimate vs measured")
    ax.legend()
    fig.savefig(OUT / "memory_scatter.png", dpi=120)
    print(f"wrote {OUT / 'memory_scatter.png'}")


def main() -> int:
    directory = bench_dir()
    if not (directory / "mmseg_dev.csv").exists():
        print(f"benchmark CSVs not found in {directory} (set GPU_ADVISOR_BENCH_DIR)")
        return 2
    results = collect(directory)
    _print_table(results)
    reserved = sum(1 for r in results if r["statistic"] == "reserved")
    print(f"note: {reserved} LLM rows report torch.cuda.max_memory_reserved() (PEFT): compared against "
          "allocated_peak_gib + the estimator's allocator slack (breakdown 'allocator_slack'), not allocated alone")
    _write(results)
    print(f"wrote {OUT / 'memory_rows.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
