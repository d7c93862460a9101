"""Fill what the user did not say, and say so: every default becomes an assumption Note.

Model-dependent defaults (batch, input size, precision, optimizer, ...) come from the memory estimator's
profile; this module fills the job-level ones (stage, region, purchase, data pipeline) and builds the
resolved workload that the planner varies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from gpu_advisor.util import yamlio
from gpu_advisor.kb.catalog import Catalog
from gpu_advisor.kb.models import context_of, knowledge
from gpu_advisor.plan.ladder import _trainer_skips
from gpu_advisor.util.i18n import Note, note
from gpu_advisor.memory import HostEstimate, MemoryEstimate, estimate_host, estimate_memory
from gpu_advisor.memory.host import loader_workers
from gpu_advisor.memory.settings import TEXT_TASKS
from gpu_advisor.workload import Augmentation, Precision, Stage, Task, Workload, enum_value

DEFAULT_REGION = "cn-hangzhou"
REGION_ALIASES = {"mainland": "cn-hangzhou", "international": "ap-southeast-1"}
TRAINING_TASKS = {Task.semantic_segmentation, Task.instance_segmentation, Task.panoptic_segmentation,
                  Task.object_detection, Task.image_classification, Task.llm_finetune, Task.llm_pretrain,
                  Task.nlp_finetune}
STAGE_BY_TASK = {Task.llm_pretrain: Stage.pretrain, Task.inference: Stage.serve}
RESOLVED_FIELDS = ("batch_size_per_gpu", "input_size", "seq_len", "precision", "optimizer",
                   "gradient_checkpointing", "finetune_method", "quantization", "distributed", "num_classes",
                   "pytorch_version", "lora_rank")


@dataclass
class Job:
    original: Workload
    workload: Workload
    region: str
    memory: MemoryEstimate
    host: HostEstimate
    assumptions: list[Note] = field(default_factory=list)
    # memory estimates by workload, shared by the planner's chain walk and the fact savings (filled in place)
    memo: dict[Workload, MemoryEstimate] = field(default_factory=dict, repr=False)
    # mean tokens per sample when known to be fewer than seq_len (the default dataset): the time counts these
    sample_tokens: float | None = None

    @property
    def cpu_only(self) -> bool:
        return self.workload.task == Task.preprocessing

    @property
    def batch(self) -> int:
        return self.workload.batch_size_per_gpu or 1

    @property
    def model_max_seq(self) -> int:
        """The named language model's context window (config max_position_embeddings), 0 when not a registry
        transformer (kb.models.context_of: a same_shape name keeps its own window)."""
        key = self.memory.profile.key
        if not key or key not in knowledge().transformers:
            return 0
        return context_of(self.workload.model, key)

    @property
    def workers(self) -> int:
        return loader_workers(self.workload, self.memory)

    def facts(self) -> dict[str, Any]:
        w, prof = self.workload, self.memory.profile
        size = w.input_size or (0, 0)
        return {
            "task": w.task.value, "stage": (w.stage or Stage.finetune).value,
            "model_family": prof.family or "unknown", "model_key": prof.key or "unknown",
            "params_b": float(prof.params_billion or 0.0), "is_llm": bool(prof.is_llm),
            "is_training": w.task in TRAINING_TASKS, "is_serving": w.task == Task.inference,
            "is_cpu_only": self.cpu_only,
            "precision": enum_value(w.precision, "fp32"), "optimizer": enum_value(w.optimizer, "none"),
            "gradient_checkpointing": bool(w.gradient_checkpointing),
            "ckpt_supported": "checkpointing" not in _trainer_skips(w.model),
            "finetune_method": enum_value(w.finetune_method, "full"), "quantization": enum_value(w.quantization, "none"),
            "distributed": enum_value(w.distributed, "none"), "batch": self.batch,
            "input_px": int(size[0] * size[1]), "seq_len": int(w.seq_len or 0),
            "model_max_seq": self.model_max_seq,
            "seq_beyond_model": bool(self.model_max_seq and (w.seq_len or 0) > self.model_max_seq),
            "num_classes": int(w.num_classes or 0), "user_gpus": int(self.original.num_gpus or 0),
            "dataset_gb": float(w.dataset_size_gb or 0.0), "dataset_known": w.dataset_size_gb is not None,
            "epochs": float(w.epochs or 0.0), "workers_per_gpu": self.workers,
            "heavy_aug": w.augmentation == Augmentation.heavy, "region": self.region,
            "mainland": self.region.startswith("cn-") and self.region != "cn-hongkong",
            "interruptible": bool(w.interruptible), "months_of_use": float(w.expected_months_of_use or 0.0),
            "has_budget": bool(w.budget_per_hour or w.budget_total), "has_deadline": bool(w.deadline_hours),
            "mem_need_gib": round(self.memory.device_total_gib, 2),
            "mem_alloc_gib": round(self.memory.allocated_peak_gib, 2),
            "act_gib": round(self.memory.breakdown.get("activations", 0.0), 2),
        }

    def deferred_facts(self) -> dict[str, Callable[[], float]]:
        """The facts that cost a memory estimate each: computed only when read (gpu_advisor.rules.facts.Facts)."""
        w, memory, memo = self.workload, self.memory, self.memo
        return {"amp_saving_gib": lambda: _saving(w, memory, {"precision": Precision.bf16_amp}, memo),
                "ckpt_saving_gib": lambda: _saving(w, memory, {"gradient_checkpointing": True}, memo)}


def _saving(w: Workload, base: MemoryEstimate, update: dict[str, Any], memo: dict[Workload, MemoryEstimate]) -> float:
    """GiB per GPU that one change (AMP or checkpointing) would save on the job as configured."""
    if w.task in (Task.preprocessing, Task.inference):
        return 0.0
    if "precision" in update and enum_value(w.precision, "fp32") != "fp32":
        return 0.0
    if update.get("gradient_checkpointing") and (w.gradient_checkpointing or "checkpointing" in _trainer_skips(w.model)):
        return 0.0   # already on, or the model's trainer has none (Ultralytics YOLO)
    changed = w.model_copy(update=update)
    other = memo.get(changed)
    if other is None:
        other = memo[changed] = estimate_memory(changed)
    return round(max(0.0, base.device_total_gib - other.device_total_gib), 2)


def _resolved(w: Workload, memory: MemoryEstimate) -> Workload:
    settings = memory.profile.job
    data = w.model_dump(exclude_none=True)
    for name in RESOLVED_FIELDS:
        value = getattr(settings, name, None)
        if name not in data and value is not None:
            data[name] = value
    return Workload.model_validate(data)


def _region(w: Workload) -> tuple[str, list[Note]]:
    if w.region is None:
        return DEFAULT_REGION, [note("default_region", f"Region not given: prices are for {DEFAULT_REGION}.",
                                     f"未指定地域：价格按 {DEFAULT_REGION}（杭州）计算。", "region", DEFAULT_REGION)]
    if w.region in REGION_ALIASES:
        region = REGION_ALIASES[w.region]
        return region, [note("region_alias", f"'{w.region}' priced as {region}.",
                             f"“{w.region}”按 {region} 的价格计算。", "region", region)]
    return w.region, []


@lru_cache(maxsize=1)
def _dataset_file() -> dict[str, Any]:
    path = resources.files("gpu_advisor.knowledge") / "datasets.yaml"
    return yamlio.safe_load(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _datasets() -> dict[str, dict[str, Any]]:
    return {d["task"]: d for d in _dataset_file()["datasets"]}


def _bytes_per_sample(w: Workload) -> tuple[float, str, str] | None:
    """Bytes on disk per training sample, and the basis in both languages: seq_len tokens of text for language
    models, the reference dataset's bytes per image for vision tasks; None when neither applies."""
    if w.task in TEXT_TASKS and w.seq_len:
        text = _dataset_file()["text"]
        return (text["bytes_per_token"] * w.seq_len, f"{w.seq_len} tokens per sample, {text['basis_en']}",
                f"每个样本 {w.seq_len} 个 token，{text['basis_zh']}")
    archive = _datasets().get(w.task.value, {}).get("archive")
    if archive is None:
        return None
    per_image = archive["gb"] * 1e9 / archive["images"]
    return (per_image, f"{per_image / 1e3:,.0f} KB per image, as in {archive['file']} ({archive['gb']:g} GB for "
            f"{archive['images']:,} images)", f"每张图 {per_image / 1e3:,.0f} KB，按 {archive['file']}（{archive['gb']:g} GB，"
            f"{archive['images']:,} 张图）计")


def _samples_from_size(w: Workload) -> tuple[dict[str, Any], list[Note]]:
    """num_samples from dataset_size_gb when the user gave the size but no count (else nothing)."""
    per_sample = _bytes_per_sample(w) if w.dataset_size_gb is not None else None
    if per_sample is None:
        return {}, []
    size, (per, basis_en, basis_zh) = float(w.dataset_size_gb), per_sample  # type: ignore[arg-type]
    samples = max(1, round(size * 1e9 / per))
    tokens_en = tokens_zh = ""
    if w.task in TEXT_TASKS and w.seq_len:   # the token count said back: it decides the time and the epochs
        billions = size / _dataset_file()["text"]["bytes_per_token"]
        tokens_en, tokens_zh = f"about {_billions(billions)} tokens, ", f"约 {_billions(billions)} token，"
    return {"num_samples": samples}, [note(
        "samples_from_size", f"num_samples not given: {tokens_en}about {samples:,} samples from dataset_size_gb = "
        f"{size:g} at {basis_en}; give num_samples for an exact time and cost.",
        f"未给出样本数：按数据集 {size:g} GB、{basis_zh}，{tokens_zh}约 {samples:,} 个样本；给出 num_samples 可得准确的时间与费用。",
        "num_samples", samples)]


def _billions(b: float) -> str:
    return f"{b:.3g}B" if b >= 1 else f"{b * 1e3:.3g}M"


def _samples_from_tokens(w: Workload) -> tuple[dict[str, Any], list[Note]] | None:
    """num_samples (and one pass) from training_tokens_billion for a language model; a note either way."""
    if w.training_tokens_billion is None:
        return None
    tokens = float(w.training_tokens_billion)
    if w.task not in TEXT_TASKS or not w.seq_len:
        return {}, [note("tokens_not_used", f"training_tokens_billion = {tokens:g} not used: it sizes language-model "
                         "jobs only; give num_samples and epochs.",
                         f"training_tokens_billion = {tokens:g} 未使用：它只用于语言模型作业；请给出 num_samples 与 epochs。",
                         "training_tokens_billion", tokens)]
    if w.num_samples is not None:
        return {}, [note("tokens_not_used", f"training_tokens_billion = {tokens:g} not used: num_samples = "
                         f"{w.num_samples:,} was given and sets the job size.",
                         f"training_tokens_billion = {tokens:g} 未使用：已给出 num_samples = {w.num_samples:,}，按它计算作业量。",
                         "training_tokens_billion", tokens)]
    samples = max(1, round(tokens * 1e9 / w.seq_len))
    update: dict[str, Any] = {"num_samples": samples}
    epochs_en = epochs_zh = ""
    if w.epochs is None:
        update["epochs"] = 1.0
        epochs_en, epochs_zh = ", one pass", "，遍历一次"
    return update, [note("samples_from_tokens", f"{tokens:g}B training tokens = {samples:,} sequences of {w.seq_len} "
                         f"tokens{epochs_en}.", f"{tokens:g}B 训练 token = {samples:,} 条 {w.seq_len} token 的序列{epochs_zh}。",
                         "num_samples", samples)]


def _job_size(w: Workload, trainer_epochs: tuple[int, str, str] | None = None) -> tuple[dict[str, Any], list[Note]]:
    """The sample count time and cost need, when the user gave none: from the training tokens, else from the
    dataset's size when given, else a typical dataset for the task. trainer_epochs: the model's own trainer default
    (epochs, why; Ultralytics default.yaml), used instead of the task dataset's schedule."""
    from_tokens = _samples_from_tokens(w)
    if from_tokens is not None and (from_tokens[0] or w.num_samples is not None):
        return from_tokens
    if w.num_samples is not None:
        return _default_epochs(w, trainer_epochs)
    if from_tokens is not None:  # tokens given for a task they do not size: say so, then size as usual
        update, notes = _job_size(w.model_copy(update={"training_tokens_billion": None}), trainer_epochs)
        return update, from_tokens[1] + notes
    from_size = _samples_from_size(w)
    if from_size[0]:   # samples from the dataset's size: the epochs as for a stated sample count
        epochs, epoch_notes = _default_epochs(w.model_copy(update=from_size[0]), trainer_epochs)
        return {**from_size[0], **epochs}, from_size[1] + epoch_notes
    if w.task.value not in _datasets():
        return from_size
    d = _datasets()[w.task.value]
    update: dict[str, Any] = {"num_samples": d["num_samples"]}
    text_en = f"Job size not given: time and cost assume {d['name']} ({d['num_samples']:,} samples"
    text_zh = f"未给出数据量：时间与费用按 {d['name']}（{d['num_samples']:,} 个样本"
    if w.epochs is None and trainer_epochs is not None:
        update["epochs"] = float(trainer_epochs[0])
        text_en += f" x {trainer_epochs[0]} epochs, the trainer's default ({trainer_epochs[1]})"
        text_zh += f" × {trainer_epochs[0]} 轮，训练代码的默认值（{trainer_epochs[2]}）"
    elif w.epochs is None and (ft := _finetune_schedule(w, d)) is not None:
        update["epochs"] = float(ft[0])
        text_en += f" x {ft[0]:g} epochs, {ft[1]}"
        text_zh += f" × {ft[0]:g} 轮，{ft[2]}"
    elif w.epochs is None:
        update["epochs"] = float(d["epochs"])
        text_en += f" x {d['epochs']} epochs, {d['epochs_note']}"
        text_zh += f" × {d['epochs']} 轮，{d['epochs_note']}"
    return update, [note("default_dataset", text_en + f"; source: {d['source']}).", text_zh + f"；来源：{d['source']}）估算。",
                         "num_samples", d["num_samples"])]


def _named_schedule(w: Workload) -> dict[str, Any] | None:
    """The named dataset (datasets.yaml `named`) whose published training split has exactly w.num_samples images and
    whose task is the job's, when it states its own schedule (ADE20K's 160k iterations, ImageNet-21k's 90 epochs)."""
    for row in _dataset_file().get("named", []):
        if row.get("epochs") and row["task"] == w.task.value and int(row["num_samples"]) == w.num_samples:
            return row
    return None


# LLM fine-tuning epochs when none are stated: transformers TrainingArguments.num_train_epochs = 3.0
# (src/transformers/training_args.py) and LLaMA-Factory examples/train_lora/llama3_lora_sft.yaml, train_full/*.yaml
# (num_train_epochs: 3.0).
LLM_FINETUNE_EPOCHS = 3


def _finetune_schedule(w: Workload, d: dict[str, Any]) -> tuple[float, str, str] | None:
    """(epochs, why en, why zh) of the task's fine-tuning schedule (datasets.yaml finetune_epochs) when the user said
    the job fine-tunes pretrained weights (stage finetune as stated, not the stage default); else None."""
    if w.stage != Stage.finetune or not d.get("finetune_epochs"):
        return None
    return (float(d["finetune_epochs"]), f"{d['finetune_epochs_note']}; {d['finetune_epochs_source']}",
            f"{d['finetune_epochs_note_zh']}；{d['finetune_epochs_source']}")


def _continued_pretraining_tokens(w: Workload, samples: int) -> float | None:
    """The job's training tokens (billions) when they reach datasets.yaml text.corpus_tokens_billion (a
    continued-pre-training corpus, trained for one pass), else None."""
    threshold = _dataset_file()["text"].get("corpus_tokens_billion")
    billions = samples * (w.seq_len or 0) / 1e9
    return billions if threshold is not None and billions >= float(threshold) else None


def _default_epochs(w: Workload, trainer_epochs: tuple[int, str, str] | None) -> tuple[dict[str, Any], list[Note]]:
    """Epochs for a vision training job whose sample count is known (stated, or from a named dataset) but whose epochs
    are not: the model's own trainer default, else the named dataset's published schedule, else the task's typical
    schedule (datasets.yaml), said as an assumption. A single pass would put the time and cost of a detector or a
    segmenter 12-200x under what a run takes. Language-model jobs keep one pass (costing/timing.py says so)."""
    if w.epochs is not None or w.task == Task.inference or w.task.value not in _datasets() \
            or w.stage == Stage.prototype:   # a quick trial is not a full schedule (timing.py: one pass, said so)
        return {}, []
    samples = int(w.num_samples or 0)
    if samples <= 0:
        return {}, []
    if w.task == Task.llm_pretrain:   # one pass over the corpus, said as an assumption (it decides time and cost)
        return {"epochs": 1.0}, [note(
            "default_epochs", f"Epochs not given: time and cost are for one pass over the {samples:,} samples; "
            "multiply by the epochs you train.",
            f"未给出训练轮数：时间与费用按遍历 {samples:,} 个样本一次计；请乘以实际轮数。", "epochs", 1.0)]
    corpus = _continued_pretraining_tokens(w, samples)
    if w.task == Task.llm_finetune and corpus is not None:   # a corpus that size is continued pre-training: one pass
        text = _dataset_file()["text"]
        return {"epochs": 1.0}, [note(
            "default_epochs", f"Epochs not given: {_billions(corpus)} tokens is a continued-pre-training corpus, not a "
            f"fine-tuning set ({text['corpus_note_en']}), so time and cost are for one pass over the {samples:,} samples "
            f"(not the fine-tuning default of {LLM_FINETUNE_EPOCHS} epochs); multiply by the epochs you train.",
            f"未给出训练轮数：{_billions(corpus)} token 是继续预训练规模的语料，不是微调数据集（{text['corpus_note_zh']}），"
            f"因此时间与费用按遍历 {samples:,} 个样本一次计（不按微调默认的 {LLM_FINETUNE_EPOCHS} 轮）；请乘以实际轮数。",
            "epochs", 1.0)]
    if w.task == Task.llm_finetune:   # the fine-tuning frameworks' own default, said as an assumption
        return {"epochs": float(LLM_FINETUNE_EPOCHS)}, [note(
            "default_epochs", f"Epochs not given: time and cost assume {LLM_FINETUNE_EPOCHS} epochs over the {samples:,} "
            "samples, the default of the HF Trainer (TrainingArguments num_train_epochs=3.0) and of LLaMA-Factory's "
            "examples (num_train_epochs: 3.0); for one pass divide by 3.",
            f"未给出训练轮数：时间与费用按 {samples:,} 个样本训练 {LLM_FINETUNE_EPOCHS} 轮估算（HF Trainer 的 "
            "TrainingArguments num_train_epochs=3.0 与 LLaMA-Factory 示例配置 num_train_epochs: 3.0 的默认值）；只训一轮请除以 3。",
            "epochs", float(LLM_FINETUNE_EPOCHS))]
    named = _named_schedule(w)
    if trainer_epochs is not None:
        epochs, why_en, why_zh = float(trainer_epochs[0]), f"the trainer's default ({trainer_epochs[1]})", \
            f"训练代码的默认值（{trainer_epochs[2]}）"
    elif named is not None:
        epochs, why_en, why_zh = float(named["epochs"]), f"{named['epochs_note']}; {named['epochs_source']}", \
            f"{named.get('epochs_note_zh', named['epochs_note'])}；{named['epochs_source']}"
    elif (ft := _finetune_schedule(w, _datasets()[w.task.value])) is not None:
        epochs, why_en, why_zh = ft
    else:
        d = _datasets()[w.task.value]
        if d.get("schedule_samples"):  # an iteration schedule: the same images seen, whatever the dataset's size
            epochs = max(1.0, round(float(d["schedule_samples"]) / samples, 1))
            why_en = (f"{d['schedule_note']} = {int(d['schedule_samples']):,} images seen, over {samples:,} samples; "
                      f"{d['schedule_source']}")
            why_zh = (f"{d['schedule_note_zh']}，共 {int(d['schedule_samples']):,} 张次，按 {samples:,} 个样本计；"
                      f"{d['schedule_source']}")
        else:
            epochs = float(d["epochs"])
            why_en = why_zh = f"{d['epochs_note']}; {d['source']}"
    return {"epochs": epochs}, [note(
        "default_epochs", f"Epochs not given: time and cost assume {epochs:g} epochs ({why_en}); say the epochs "
        "(or iterations x batch) for your run.",
        f"未给出训练轮数：时间与费用按 {epochs:g} 轮估算（{why_zh}）；请给出实际轮数（或迭代数 × batch）。",
        "epochs", epochs)]


def resolve_job(w: Workload, catalog: Catalog) -> Job:
    notes: list[Note] = []
    memory = estimate_memory(w)
    resolved = _resolved(w, memory)
    if w.stage is None and w.task != Task.preprocessing:
        stage = STAGE_BY_TASK.get(w.task, Stage.finetune)
        resolved = resolved.model_copy(update={"stage": stage})
        notes.append(note("default_stage", f"Stage not given: assumed '{stage.value}'.",
                          f"未说明阶段：按“{stage.value}”处理。", "stage", stage.value))
    region, region_notes = _region(w)
    notes.extend(region_notes)
    method = knowledge().methods.get(memory.profile.method or "") if memory.profile.method else None
    own = method.train_defaults if method is not None else None
    # the stage as the user stated it (None when defaulted): a stated fine-tune takes the fine-tuning schedule
    size, size_notes = _job_size(resolved.model_copy(update={"stage": w.stage}), (own.epochs, own.why, own.why_zh) if own else None)  # resolved: the estimate's seq_len
    if size:
        resolved = resolved.model_copy(update=size)
    notes.extend(size_notes)
    if w.interruptible is None and w.task == Task.inference:
        notes.append(note("default_interruptible", "Not said whether the service can lose an instance at short notice: "
                          "assumed no, so spot instances (released 5 minutes after notice) are not recommended.",
                          "未说明服务能否承受实例被临时回收：按不能处理，因此不推荐抢占式实例（通知后 5 分钟释放）。",
                          "interruptible", False))
    elif w.interruptible is None and w.task != Task.preprocessing:
        notes.append(note("default_interruptible", "Not said whether the job can resume from checkpoints: "
                          "assumed no, so spot instances are not recommended.",
                          "未说明作业能否从检查点恢复：按不能处理，因此不推荐抢占式实例。", "interruptible", False))
    # the resolved workload states the settings the estimate filled in, so its estimate has the same figures
    tokens, token_notes = _sample_tokens(resolved, size_notes)
    notes.extend(token_notes)
    host = estimate_host(resolved, max(1, resolved.num_gpus or 1), memory)
    return Job(w, resolved, region, memory, host, notes, memo={w: memory, resolved: memory}, sample_tokens=tokens)


def _sample_tokens(w: Workload, size_notes: list[Note]) -> tuple[float | None, list[Note]]:
    """Tokens per sample the time counts for a fine-tuned language model, said as an assumption: the default
    dataset's mean (unpacked, padded to the longest in the micro-batch: HF Trainer, LLaMA-Factory SFT and the Alpaca
    recipe), or, for the user's samples, seq_len each (an upper bound: packed or padded to seq_len)."""
    if w.task != Task.llm_finetune or not w.seq_len:
        return None, []
    d = _datasets().get(w.task.value, {})
    if any(n.code == "default_dataset" for n in size_notes) and d.get("mean_tokens"):  # source: datasets.yaml mean_tokens_source
        mean = min(float(d["mean_tokens"]), float(w.seq_len))
        return mean, [note(
            "sample_tokens", f"Time counts about {mean:.0f} tokens per {d['name']} example ({d['mean_tokens_basis_en']}), "
            f"not seq_len = {w.seq_len}: samples are not packed (the HF Trainer / LLaMA-Factory SFT default); packing "
            f"them into {w.seq_len}-token sequences would take about {w.seq_len / mean:.0f}x fewer steps.",
            f"时间按每条 {d['name']} 样本约 {mean:.0f} 个 token 计（{d['mean_tokens_basis_zh']}），而不是 seq_len = {w.seq_len}："
            f"样本不打包（HF Trainer / LLaMA-Factory SFT 的默认）；打包成 {w.seq_len} token 的序列可少约 {w.seq_len / mean:.0f} 倍步数。", "num_samples", round(mean))]
    if any(n.code in ("samples_from_size", "samples_from_tokens") for n in size_notes):
        return None, []
    return None, [note(
        "sample_tokens", f"Time counts each sample as seq_len = {w.seq_len} tokens (packed, or padded to seq_len): an "
        f"upper bound; samples that average fewer tokens, unpacked, take proportionally less compute.",
        f"时间按每条样本 seq_len = {w.seq_len} 个 token 计（打包或填充到 seq_len）：这是上限；平均更短且不打包的样本，"
        f"计算量按比例减少。", "seq_len", w.seq_len)]
