"""The job facts that rules may test: one flat, strictly typed record per evaluation.

The rule engine (durable-rules) coerces on comparison ("5" == 5, 0 == False) and cannot match a null
property, so every fact has one declared type, is always present, and is checked before it is asserted.
Rules may only name fields declared here (checked when the knowledge base loads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpu_advisor.errors import EngineError

# name -> (type, description). bool is checked before int (bool is a subclass of int in Python).
FACT_FIELDS: dict[str, tuple[type, str]] = {
    # the job, as resolved (user values + stated defaults)
    "task": (str, "workload task"),
    "stage": (str, "prototype / finetune / pretrain / serve"),
    "model_family": (str, "architecture family of the resolved model profile"),
    "model_key": (str, "resolved model profile key"),
    "params_b": (float, "model parameters, billions"),
    "is_llm": (bool, "decoder-only language model"),
    "is_training": (bool, "the job trains (any training task)"),
    "is_serving": (bool, "task is inference"),
    "is_cpu_only": (bool, "task is preprocessing: no GPU"),
    "precision": (str, "fp32 / fp16_amp / bf16_amp / bf16 / fp8"),
    "optimizer": (str, "optimizer"),
    "gradient_checkpointing": (bool, "activation checkpointing on"),
    "ckpt_supported": (bool, "the model's trainer offers activation checkpointing (Ultralytics YOLO: no)"),
    "finetune_method": (str, "full / lora / qlora"),
    "quantization": (str, "none / int8 / int4 / nf4 / fp8 / fp4"),
    "distributed": (str, "none / ddp / fsdp / zero1 / zero2 / zero3"),
    "batch": (int, "micro-batch per GPU"),
    "input_px": (int, "input pixels per image (0 for text models)"),
    "seq_len": (int, "tokens per sequence (0 for vision models)"),
    "model_max_seq": (int, "the named language model's context window in tokens (0 when not known)"),
    "seq_beyond_model": (bool, "seq_len is longer than the named model's context window"),
    "num_classes": (int, "classes (0 when not applicable)"),
    "user_gpus": (int, "GPUs the user asked for (0 = not given)"),
    "dataset_gb": (float, "dataset size, GB (0 = unknown)"),
    "dataset_known": (bool, "dataset size known or derived"),
    "epochs": (float, "passes over the data"),
    "workers_per_gpu": (int, "DataLoader workers per GPU"),
    "heavy_aug": (bool, "heavy augmentation"),
    "region": (str, "region id used for prices"),
    "mainland": (bool, "region is in the Chinese mainland"),
    "interruptible": (bool, "job can checkpoint and resume"),
    "months_of_use": (float, "expected months of use"),
    "has_budget": (bool, "a budget cap was given"),
    "has_deadline": (bool, "a deadline was given"),
    # the memory estimate (per GPU, as the user configured the job)
    "mem_need_gib": (float, "device memory needed per GPU as configured, GiB"),
    "mem_alloc_gib": (float, "allocated peak per GPU as configured, GiB"),
    "act_gib": (float, "activations per GPU as configured, GiB"),
    "amp_saving_gib": (float, "GiB per GPU that mixed precision would save"),
    "ckpt_saving_gib": (float, "GiB per GPU that gradient checkpointing would save"),
    # the plan (selection on the catalog)
    "has_plan": (bool, "a GPU configuration that fits was found"),
    "gpu_id": (str, "chosen GPU (catalog id)"),
    "gpu_name": (str, "chosen GPU as the answer names it (display name, never an internal id)"),
    "preferred_gpu_name": (str, "GPU(s) the user asked for, display names ('none' when not given)"),
    "preferred_reason_en": (str, "why the GPU the user asked for was ruled out, in English ('none' when it was not)"),
    "preferred_reason_zh": (str, "why the GPU the user asked for was ruled out, in Chinese ('none' when it was not)"),
    "tight": (bool, "the chosen plan holds the job at the central estimate only (upper estimate over the card)"),
    "needs_large_card": (bool, "the plan's planning (upper) estimate per GPU exceeds 48 GB (large-card class)"),
    "need_exceeds_cards": (bool, "the job as configured needs more per GPU than the largest card on offer"),
    "max_card_gib": (float, "memory of the largest GPU the catalog offers for this job, GB"),
    "weights_total_gb": (float, "model weights in the plan summed over its GPUs of one replica, GB (0 without a plan)"),
    "weights_load_min": (float, "minutes to read weights_total_gb at an ESSD PL1 / AutoPL disk's 350 MB/s baseline"),
    "preferred_gpu": (str, "GPU(s) the user asked for, catalog ids ('none' when not given)"),
    "preference_met": (bool, "the GPU the user asked for holds the job and was chosen"),
    "gpu_mem_gib": (float, "memory per chosen GPU, GiB"),
    "gpu_arch": (str, "chosen GPU architecture"),
    "gpu_bf16": (bool, "chosen GPU supports BF16"),
    "gpu_fp8": (bool, "chosen GPU supports FP8"),
    "gpu_nvlink": (bool, "chosen instance has NVLink between GPUs"),
    "gpu_count": (int, "GPUs in total"),
    "nodes": (int, "instances (nodes)"),
    "gpus_per_node": (int, "GPUs per instance"),
    "multi_gpu": (bool, "more than one GPU"),
    "multi_node": (bool, "more than one instance"),
    "instance_type": (str, "chosen instance type"),
    "instance_family": (str, "chosen instance family"),
    "instance_rdma": (str, "none / erdma / roce"),
    "rdma_required": (bool, "multi-node: over TCP the step would be >= 1.25x its compute at the central estimate (costing/internode.py), or it cannot be computed"),
    "internode_known": (bool, "multi-node: the traffic and compute per step could be computed (a TFLOPS and network figure)"),
    "internode_gb_step": (float, "multi-node: GB through each instance's network per micro-step (0 on one instance)"),
    "step_compute_ms": (str, "multi-node: compute per micro-step, ms range ('none' on one instance)"),
    "tcp_gbit_s": (float, "network bandwidth of the chosen type, Gbit/s"),
    "tcp_slowdown": (str, "multi-node: step over TCP / compute alone, range ('none' when not computed)"),
    "tcp_mid_slowdown": (float, "multi-node: step over TCP / compute at the central estimate with full overlap (>= 1.25: RDMA required; 0 when not computed)"),
    "rdma_slowdown": (str, "multi-node: step over the type's RDMA / compute alone, range ('none' without RDMA)"),
    "instance_vcpu": (int, "vCPU of the chosen type"),
    "instance_ram_gib": (float, "memory of the chosen type, GiB"),
    "vgpu": (bool, "chosen type is a vGPU slice"),
    "fit_step": (int, "mitigation steps needed: 0 none, 1 AMP, 2 +checkpointing, 3 +micro-batch, 4 +sharding, 5 +GPUs, 6 +CPU offload"),
    "planned_mem_gib": (float, "device memory per GPU after the mitigations, GiB"),
    "planned_upper_gib": (float, "planning (upper) estimate of device memory per GPU in the plan, GiB"),
    "upper_fits": (bool, "the planning (upper) estimate also fits the chosen card"),
    "headroom_pct": (float, "free share of the chosen card after the plan, %"),
    "planned_batch": (int, "micro-batch per GPU in the plan"),
    "accum_steps": (int, "gradient-accumulation steps that keep the global batch"),
    "vcpu_need": (int, "vCPU the data pipeline needs per instance"),
    "vcpu_short": (bool, "the chosen type has fewer vCPU than the pipeline needs"),
    "ram_short": (bool, "the chosen type has less RAM than the job needs"),
    "ram_need_gib": (float, "host RAM needed per instance, GiB"),
    "price_known": (bool, "the catalog has a price for the chosen type in the region"),
    "price_per_hour": (float, "pay-as-you-go price per instance-hour (0 when unknown)"),
    "chunked_loss_added": (bool, "the plan computes the LLM's cross-entropy in chunks (chunked / fused loss) the job did not state"),
    "sequence_parallel": (int, "sequence-parallel degree of the plan (DeepSpeed-Ulysses: GPUs sharing each sequence; 1 none)"),
    "planned_sharding": (str, "data-parallel sharding of the chosen plan: none / ddp / zero1 / zero2 / zero3 / fsdp"),
    "zero3_mem_gib": (float, "device memory per GPU ZeRO-3 would need at the plan's GPU count when the plan uses ZeRO-1 / 2 (0 otherwise)"),
    "planned_quantization": (str, "weight format in the chosen plan: none / int8 / int4 / nf4 / fp8 / fp4 (the job's when no plan)"),
    "job_hours": (float, "estimated wall-clock hours (0 when unknown)"),
    "kv_budget_gib": (float, "serving: GiB per GPU a vLLM engine (gpu_memory_utilization 0.9) leaves the KV cache on the chosen card"),
    "kv_capacity_tokens": (int, "serving: KV-cache tokens one replica of the plan holds at that budget"),
    "kv_capacity_seqs": (int, "serving: concurrent sequences of seq_len tokens one replica holds at that budget"),
    "kv_kib_per_token": (float, "serving: KV-cache KiB per token of one sequence, all layers"),
}

NUMERIC = (int, float)


class Facts(dict):
    """A fact record in which some facts are computed when first read (``deferred``: name -> function).

    Two facts cost a memory estimate each (what AMP and checkpointing would save) and only fill advice texts:
    no rule tests them today, and on the latency mix 42 % / 11 % of the answers show the AMP / checkpointing text. Whoever reads one (the rule engine for a
    condition, the trace, a text's placeholder) gets it computed then, checked against its declared type like
    every other fact. ``in`` sees deferred facts; equality compares the complete records."""

    def __init__(self, data: dict[str, Any], deferred: dict[str, Callable[[], Any]]) -> None:
        super().__init__(data)
        self._deferred = {k: f for k, f in deferred.items() if not dict.__contains__(self, k)}

    def __missing__(self, name: str) -> Any:
        make = self._deferred.pop(name, None)
        if make is None:
            raise KeyError(name)
        value = self[name] = check_fact(name, make())
        return value

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self._deferred

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self else default

    @property
    def pending(self) -> frozenset[str]:
        """The deferred facts not computed yet."""
        return frozenset(self._deferred)

    def complete(self) -> "Facts":
        """Compute every deferred fact; returns self."""
        for name in list(self._deferred):
            self[name]  # noqa: B018 - computes and stores it
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Facts):
            other.complete()
        return dict.__eq__(self.complete(), other)


def _type_ok(kind: type, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is float:
        return isinstance(value, NUMERIC) and not isinstance(value, bool) and value == value
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str) and value != ""


def check_fact(name: str, value: Any) -> Any:
    """``value`` when it has the declared type of fact ``name``; EngineError otherwise."""
    kind = FACT_FIELDS[name][0]
    if not _type_ok(kind, value):
        raise EngineError(f"fact {name!r} must be {kind.__name__}, got {value!r}")
    return value


_KINDS = tuple((name, kind) for name, (kind, _) in FACT_FIELDS.items())
_NAMES = frozenset(FACT_FIELDS)


def check_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """Check every declared field is present with its declared type; return the dict unchanged. Deferred facts
    (Facts) are checked when they are computed."""
    pending = facts.pending if isinstance(facts, Facts) else frozenset()
    present = facts.keys() | pending  # dict.keys(): the stored facts, none computed here
    if present != _NAMES:
        raise EngineError(f"fact record mismatch: missing {sorted(_NAMES - present)}, undeclared {sorted(present - _NAMES)}")
    get = dict.get
    for name, kind in _KINDS:
        if name in pending:
            continue
        value = get(facts, name)
        # the common cases inline (one isinstance each); anything else through _type_ok's full check
        if not ((kind is str and type(value) is str and value) or (kind is bool and type(value) is bool)
                or (kind is int and type(value) is int) or (kind is float and type(value) is float and value == value)
                or _type_ok(kind, value)):
            raise EngineError(f"fact {name!r} must be {kind.__name__}, got {value!r}")
    return facts


def value_matches_type(name: str, value: Any) -> bool:
    """Whether a rule's comparison value has the declared type of the fact it tests."""
    kind = FACT_FIELDS[name][0]
    if kind is bool:
        return isinstance(value, bool)
    if kind in NUMERIC:
        return isinstance(value, NUMERIC) and not isinstance(value, bool)
    return isinstance(value, str)
