"""What an answer must say before anything else: the default it rests on when that default decides it.

A full LLM fine-tune without a stated precision is sized as bf16 mixed precision (fp32 master weights, AdamW:
the HF Trainer / LLaMA-Factory convention, engine/memory/jobdefaults.py). Pure bf16 needs half the model-state
memory, so the two readings can give different answers; when they do, the answer says so in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from gpu_advisor.util.i18n import Note, Text, note
from gpu_advisor.memory.jobdefaults import FULL_FT_PRECISION
from gpu_advisor.workload import Precision, Task, enum_value

if TYPE_CHECKING:
    from gpu_advisor.plan.defaults import Job
    from gpu_advisor.plan.planner import Candidate, Plan

# settings the plan may change on the job as resolved (ladder steps), with how the answer names them
PLAN_FIELDS = ("precision", "gradient_checkpointing", "batch_size_per_gpu", "distributed", "num_gpus", "cpu_offload",
               "quantization")


def precision_defaulted(job: Job) -> bool:
    w = job.original
    return (w.task == Task.llm_finetune and w.precision is None
            and enum_value(job.workload.finetune_method, "full") == "full"
            and enum_value(job.workload.precision, "") == FULL_FT_PRECISION)


def _summary(plan: Plan | None, preferred: frozenset[str]) -> tuple[Any, ...]:
    """What the yes/no of an answer rests on: the GPU and count that lead (or whether the user's GPU holds the job),
    and whether the model states must leave the GPUs."""
    c = plan.chosen if plan else None
    if c is None:
        return (None,)
    return (c.gpu.id in preferred if preferred else c.gpu.id, c.total_gpus, c.nodes, bool(c.variant.workload.cpu_offload))


def _describe(plan: Plan | None) -> Text:
    c = plan.chosen if plan else None
    if c is None:
        return Text(en="no configuration in the catalog holds it", zh="目录中没有放得下的配置")
    extra_en, extra_zh = "", ""
    w = c.variant.workload
    if w.cpu_offload:
        extra_en, extra_zh = " with CPU offload", "，且需 CPU 卸载"
    elif enum_value(w.distributed, "none") in ("zero3", "fsdp") and c.total_gpus > 1:
        extra_en, extra_zh = " with ZeRO-3 sharding", "，用 ZeRO-3 分片"
    elif enum_value(w.distributed, "none") in ("zero1", "zero2") and c.total_gpus > 1:
        stage = enum_value(w.distributed, "none")[-1]
        extra_en, extra_zh = f" with ZeRO-{stage} (DeepSpeed stage {stage})", f"，用 ZeRO-{stage}（DeepSpeed stage {stage}）"
    nodes_en = f" on {c.nodes} machines" if c.nodes > 1 else ""
    nodes_zh = f"（{c.nodes} 台）" if c.nodes > 1 else ""
    return Text(en=f"{c.total_gpus} × {c.gpu.display_name}{nodes_en}{extra_en} (about {c.estimate.device_total_gib:.1f} GiB per GPU)",
                zh=f"{c.total_gpus} 张 {c.gpu.display_name}{nodes_zh}{extra_zh}（每卡约 {c.estimate.device_total_gib:.1f} GiB）")


def precision_lead(job: Job, the_plan: Plan | None, replan: Callable[[Precision], Plan | None]) -> list[Text]:
    """The default precision in one line and what pure bf16 would change, when it changes the GPUs or their count
    (replan: the plan of the same job in another precision); nothing when it does not (the assumptions say it)."""
    if not precision_defaulted(job):
        return []
    lines = [Text(en="Precision not given: sized as bf16 mixed precision with fp32 master weights and fp32 AdamW "
                     "states (16 bytes per parameter), the default of HF Trainer (bf16=True), LLaMA-Factory and "
                     "DeepSpeed's bf16 mode.",
                  zh="未指定精度：按 bf16 混合精度 + fp32 主权重与 fp32 AdamW 状态（每参数 16 字节）估算，即 HF Trainer"
                     "（bf16=True）、LLaMA-Factory 与 DeepSpeed bf16 模式的默认做法。")]
    other = replan(Precision.bf16)
    preferred = the_plan.preferred if the_plan else frozenset()
    if _summary(other, preferred) == _summary(the_plan, preferred):
        # pure bf16 gives the same GPUs and count: the default decides nothing, and the assumptions say it (a lead
        # of "Precision not given" above a plan it does not change reads as the answer to "which instance")
        return []
    mine, theirs = _describe(the_plan), _describe(other)
    lines.append(Text(en=f"The answer depends on it: in pure bf16 (weights, gradients and AdamW states all in bf16, "
                         f"8 bytes per parameter; less stable) the plan is {theirs.en} instead of {mine.en}; set "
                         "precision to choose.",
                      zh=f"答案取决于这一默认：若用纯 bf16（权重、梯度与 AdamW 状态都为 bf16，每参数 8 字节，数值稳定性较差），"
                         f"方案为 {theirs.zh}，而不是 {mine.zh}；可通过 precision 指定。"))
    return lines


def reconcile_assumptions(notes: list[Note], chosen: Candidate | None, base: Any) -> list[Note]:
    """A default the plan changes (distributed = ddp while the plan shards with ZeRO-3, ...) is restated with the
    value the plan uses, so the assumptions never contradict the plan."""
    if chosen is None:
        return notes
    planned = chosen.variant.workload
    out = []
    for n in notes:
        field = n.field
        if n.code == "default" and field in PLAN_FIELDS:
            old, new = getattr(base, field, None), getattr(planned, field, None)
            if field == "num_gpus":
                new = chosen.total_gpus
                old = old or 1
            if new is not None and enum_value(old, "") != enum_value(new, "") and _serving_split(field, planned, chosen):
                n = _split_note(field, chosen.total_gpus, enum_value(old, "-"))
            elif new is not None and enum_value(old, "") != enum_value(new, ""):
                shown_old, shown_new = enum_value(old, "-"), enum_value(new, "-")
                n = note("default_replanned",
                         f"{field}: not given; the plan uses {shown_new} instead of the default {shown_old} (see the "
                         "mitigations and the GPU count of the plan).",
                         f"{field}：未给出；方案采用 {shown_new}，而不是默认的 {shown_old}（见省显存措施与方案的卡数）。",
                         field, shown_new)
        out.append(n)
    return out


def _serving_split(field: str, planned: Any, chosen: Candidate) -> bool:
    """Serving over several GPUs: the plan's GPU count and sharding are tensor parallelism (vLLM / SGLang), whatever
    the ladder's workload calls the sharding (zero3 stands for "weights and KV cache split over num_gpus")."""
    return field in ("num_gpus", "distributed") and planned.task == Task.inference and chosen.total_gpus > 1


def _split_note(field: str, gpus: int, old: str) -> Note:
    if field == "num_gpus":
        return note("default_replanned",
                    f"num_gpus: not given; one GPU cannot hold the job, so the plan serves it over {gpus} GPUs "
                    f"(instead of the default {old}).",
                    f"num_gpus：未给出；一张卡放不下，方案部署到 {gpus} 张卡上（而不是默认的 {old} 张）。", field, gpus)
    return note("default_replanned",
                f"distributed: not given; the plan splits the model over the {gpus} GPUs with tensor parallelism "
                f"(vLLM / SGLang --tensor-parallel-size {gpus}), not DDP / ZeRO.",
                f"distributed：未给出；方案用张量并行把模型切到 {gpus} 张卡上（vLLM / SGLang --tensor-parallel-size {gpus}），"
                "不是 DDP / ZeRO。", field, "tensor_parallel")


def unknown_model_lead(job: Job) -> list[Text]:
    """A model the knowledge base does not know, sized from its stated size with a generic shape: said first, with
    its name, so that the answer never reads as one about a known model (or about no model)."""
    return [Text(en=n.text.en[:1].upper() + n.text.en[1:], zh=n.text.zh) for n in job.memory.warnings
            if n.code == "unknown_model"]


def fewer_gpus_lead(the_plan: Plan | None) -> list[Text]:
    """Serving on more GPUs than the job needs because the fewest-GPU type has no price in the region: how many GPUs
    hold it, and what the extra GPUs of the priced type buy (replicas of the smaller layout)."""
    c = the_plan.chosen if the_plan else None
    if c is None or c.fewer is None:
        return []
    n, gib, unpriced = c.fewer
    region = c.price.region if c.price else ""
    extra_en = extra_zh = ""
    if c.total_gpus % n == 0 and c.total_gpus // n > 1:
        k = c.total_gpus // n
        extra_en = f", or {k} replicas of tensor parallel {n} for {k}× the concurrent sequences"
        extra_zh = f"，或 {k} 个张量并行 {n} 的副本，承载 {k} 倍的并发序列"
    return [Text(
        en=f"{n} × {c.gpu.display_name} hold it (about {gib:.1f} GiB per GPU, tensor parallel {n}), but the catalog has "
           f"no price for {unpriced} in {region}; the priced option shown is {c.instance.type} with {c.total_gpus} GPUs "
           f"(tensor parallel {c.total_gpus}{extra_en}). Check the console's price of {unpriced}.",
        zh=f"{n} 张 {c.gpu.display_name} 即可放下（每卡约 {gib:.1f} GiB，张量并行 {n}），但目录中没有 {unpriced} 在 {region} "
           f"的价格；所列有价格的方案是 {c.total_gpus} 卡的 {c.instance.type}（张量并行 {c.total_gpus}{extra_zh}）。"
           f"{unpriced} 的价格请在控制台查询。")]


# Only image classification: NVIDIA's published rates (bench/data/dle_vision_train_throughput.csv) show AMP 2.3-2.6x
# TF32 on A100 and 2.9-3.4x FP32 on V100 for ResNet-50 / ResNeXt-101, but 1.04x for Mask R-CNN (proposal, RoI and NMS
# work gains nothing from Tensor Cores), which the detection band does not resolve: no such line for detectors.
CV_TRAIN_TASKS = (Task.image_classification,)
# the mixed-precision reading is said when it shortens the job by at least this factor at the mid estimate
AMP_SPEEDUP_SAID = 1.3


def _hours(h: float) -> str:
    return f"{h:,.0f}" if h >= 100 else f"{h:.3g}"


def cv_precision_time_lead(job: Job, report: Any, rereport: Callable[[Precision], Any]) -> list[Text]:
    """An image-classification training job without a stated precision is timed in FP32 (TF32 where the GPU has it:
    the default of the torchvision reference scripts and MMPretrain configs, which enable AMP only when asked); when
    mixed precision would shorten it by AMP_SPEEDUP_SAID or more on the same instance, the answer says the default and
    the other figure (rereport: the cost report of the same job in another precision)."""
    w = job.original
    if w.task not in CV_TRAIN_TASKS or w.precision is not None or report is None or report.basis != "job":
        return []
    if enum_value(job.workload.precision, "fp32") != "fp32" or not report.recommended:
        return []
    mine = report.option(report.recommended)
    other = rereport(Precision.fp16_amp)
    theirs = other.option(report.recommended) if other is not None else None
    if (mine is None or theirs is None or mine.time.wall_hours is None or theirs.time.wall_hours is None
            or theirs.time.wall_hours.mid <= 0):
        return []
    a, b = mine.time.wall_hours.mid, theirs.time.wall_hours.mid
    if a / b < AMP_SPEEDUP_SAID:
        return []
    return [Text(en=f"Precision not given: timed in FP32 (TF32 where the GPU has it), the default of the torchvision "
                    f"reference scripts and MMPretrain configs (AMP only when asked); with mixed precision (AMP) the same {report.recommended} "
                    f"takes about {_hours(b)} h at the mid estimate instead of {_hours(a)} h; set precision to choose.",
                 zh=f"未指定精度：按 FP32（GPU 支持时为 TF32）计时，即 torchvision 参考脚本与 MMPretrain 配置的默认（需显式开启 AMP）；"
                    f"用混合精度（AMP）时同一 {report.recommended} 中间估计约 {_hours(b)} h，而不是 {_hours(a)} h；可通过 precision 指定。")]
