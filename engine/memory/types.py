"""Result types of the memory estimator."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from gpu_advisor.util.i18n import Note, Text


class JobSettings(BaseModel):
    """The job settings the estimate used, after defaults were filled."""

    model_config = ConfigDict(frozen=True)

    batch_size_per_gpu: int
    input_size: tuple[int, int] | None = None
    seq_len: int | None = None
    precision: str
    optimizer: str | None = None
    gradient_checkpointing: bool = False
    finetune_method: str | None = None
    lora_rank: int | None = None
    quantization: str = "none"
    distributed: str = "none"
    num_gpus: int = 1
    num_classes: int | None = None
    pytorch_version: str
    training: bool = True


class ProfileInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    display: str
    family: str
    params_billion: float
    trainable_params_billion: float
    is_llm: bool
    method: str | None = None
    backbone: str | None = None
    output_stride: int | None = None
    # LLMs: parameters per token (MoE: active, for compute and time) and KV-cache bytes per token of one sequence
    # (all layers, at the job's KV dtype; sliding-window layers stop growing past their window)
    active_params_billion: float | None = None
    kv_cache_bytes_per_token: float | None = None
    job: JobSettings


class MemoryEstimate(BaseModel):
    """Per-GPU memory of one workload, with how it was computed."""

    model_config = ConfigDict(frozen=True)

    allocated_peak_gib: float
    device_total_gib: float
    breakdown: dict[str, float]
    assumptions: list[Note]
    warnings: list[Note]
    formula: Text
    sources: list[str]
    profile: ProfileInfo
    train_flops_per_sample: float
    infer_flops_per_sample: float
    # planning (upper) estimate of the allocated peak: central x family margin + 0.25 GiB (docs/memory-model.md)
    allocated_upper_gib: float = 0.0

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """The public JSON form: {"memory": {...}} with texts in one language."""
        return {"memory": {
            "allocated_peak_gib": self.allocated_peak_gib,
            "allocated_upper_gib": self.allocated_upper_gib,
            "device_total_gib": self.device_total_gib,
            "breakdown": dict(self.breakdown),
            "assumptions": [{"code": n.code, "field": n.field, "value": n.value, "text": n.get(lang)} for n in self.assumptions],
            "warnings": [{"code": n.code, "field": n.field, "value": n.value, "text": n.get(lang)} for n in self.warnings],
            "formula": self.formula.get(lang),
            "sources": list(self.sources),
            "profile": self.profile.model_dump(mode="json"),
            "train_flops_per_sample": self.train_flops_per_sample,
            "infer_flops_per_sample": self.infer_flops_per_sample,
        }}


class HostEstimate(BaseModel):
    """Host RAM and vCPUs one node needs to feed its GPUs."""

    model_config = ConfigDict(frozen=True)

    ram_gib: float
    vcpu: int
    breakdown: dict[str, float]
    formula: Text
    assumptions: list[Note]
    sources: list[str]
