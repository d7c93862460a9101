"""The parameter traffic that ZeRO-2 / ZeRO-3 / FSDP add to every micro-step, from first principles.

Per optimizer step, DDP and ZeRO-1 all-reduce the gradients once (a reduce-scatter and an all-gather, 2 Psi; ZeRO-1
all-gathers the updated 16-bit parameters instead of the reduced gradients: the same volume), which the scaling band
(basis.SCALING_*) stands for. ZeRO-2 reduce-scatters the gradients at every micro-step, accumulation steps included,
and all-gathers the updated parameters once per step (DeepSpeed engine.allreduce_gradients: "ZeRO stage >= 2
communicates during non gradient accumulation boundaries as well", basis.SRC_DS_STAGE2): with one micro-step per step
that is DDP's volume, with k it is (k - 1) more gradient reduce-scatters. ZeRO-3 / FSDP:

Per micro-step each GPU all-gathers the 16-bit (or 4-bit) parameters twice (forward, backward) and reduce-scatters the
gradients of the trainable parameters once; a ring moves (n-1)/n of each tensor through every GPU's link
(basis.SRC_ZERO_COMM). A LoRA / QLoRA job has a frozen base: only its adapters' gradients are reduce-scattered.
Link bandwidth: RDMA (else the network) of the instance across instances, NVLink (half the datasheet's total) inside
an NVLink instance, else the PCIe x16 rate of the GPU's generation; times an efficiency range (basis.LINK_*).
The time estimate then puts the job between full overlap with compute (max of the two) and none (their sum).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_advisor.costing import basis
from gpu_advisor.workload import enum_value

SHARDED = {"zero3", "fsdp"}
NF4_BYTES = 0.5 + 0.127 / 8  # QLoRA NF4 weights + double-quantised constants (Dettmers et al. 2023, arXiv:2305.14314)


@dataclass(frozen=True)
class Traffic:
    bytes_per_step: float        # bytes through one GPU's link per micro-step
    link_low: float              # GB/s, the slow end
    link_high: float             # GB/s, the fast end
    link: str                    # "PCIe Gen4 x16", "NVLink", "RDMA", ...
    efficiency: basis.LinkEfficiency
    raw_gb_s: float              # the link's per-direction rate before the efficiency

    def seconds(self) -> tuple[float, float]:
        """(fastest, slowest) seconds of one micro-step's traffic (an unbounded fast end: none exposed)."""
        fast = 0.0 if self.link_high == float("inf") else self.bytes_per_step / (self.link_high * 1e9)
        return fast, self.bytes_per_step / (self.link_low * 1e9)


def _gathered_bytes_per_param(w: Any) -> float:
    if enum_value(getattr(w, "finetune_method", None), "full") == "qlora":
        return NF4_BYTES
    return 4.0 if enum_value(w.precision, "fp32") == "fp32" else 2.0


def _pcie_generation(rate: float) -> str:
    return {15.75: "PCIe Gen3 x16", 31.5: "PCIe Gen4 x16", 63.0: "PCIe Gen5 x16"}.get(rate, "PCIe x16")


def _link(candidate: Any) -> tuple[float, str, basis.LinkEfficiency] | None:
    """(per-direction GB/s, name, efficiency) of the slowest link a ring over this option's GPUs crosses."""
    t, gpu = candidate.instance, candidate.gpu
    if candidate.nodes > 1:
        gbit = t.rdma_gbit_s if t.rdma != "none" and t.rdma_gbit_s else t.network_gbit_s
        if not gbit:
            return None
        name = "RDMA" if t.rdma != "none" and t.rdma_gbit_s else "network"
        return gbit / 8.0, f"{name} {gbit:g} Gbit/s per instance", basis.LINK_NETWORK
    if t.nvlink and gpu.nvlink_gb_s:
        return gpu.nvlink_gb_s / 2.0, f"NVLink {gpu.nvlink_gb_s:g} GB/s", basis.LINK_NVLINK
    rate = basis.PCIE_GB_S_BY_ARCH.get(gpu.architecture or "")
    if rate is None:
        return None
    if t.nvlink:  # NVLink without a stated figure: the architecture's lowest stated one (slow end), at best no traffic
        low = basis.NVLINK_GB_S_LOW_BY_ARCH.get(gpu.architecture or "")
        if low is None:
            return rate, f"NVLink of unstated bandwidth, at least {_pcie_generation(rate)}", basis.LINK_NVLINK_UNSTATED
        return low / 2.0, f"NVLink of unstated bandwidth, at least {low:g} GB/s", basis.LINK_NVLINK_UNSTATED
    return rate, _pcie_generation(rate), basis.LINK_PCIE


def _grad_bytes(w: Any) -> float:
    if enum_value(getattr(w, "finetune_method", None), "full") in ("lora", "qlora"):
        return 4.0  # fp32 adapters (PEFT)
    return 4.0 if enum_value(w.precision, "fp32") == "fp32" else 2.0


def stage_bytes(w: Any, profile: Any, n: int, accum: int) -> float:
    """Bytes through one GPU's link per micro-step under the workload's data-parallel stage over ``n`` GPUs, with
    ``accum`` micro-steps per optimizer step, DDP's own all-reduce included (ring: (n-1)/n of each tensor):
    ddp / zero1  2 Psi_g / k           (one all-reduce per optimizer step)
    zero2        Psi_g + Psi_p / k     (reduce-scatter every micro-step, all-gather of the updated parameters per step)
    zero3 / fsdp 2 Psi_p + Psi_g       (two parameter all-gathers and a gradient reduce-scatter every micro-step)
    The planner compares the stages that fit a GPU count by it (planner._best_stage)."""
    if n <= 1:
        return 0.0
    params = profile.params_billion * 1e9
    grads = profile.trainable_params_billion * 1e9 * _grad_bytes(w)
    k = max(1, int(accum))
    dist = enum_value(w.distributed, "none")
    if dist in SHARDED:
        moved = 2.0 * params * _gathered_bytes_per_param(w) + grads
    elif dist == "zero2":
        moved = grads + profile.trainable_params_billion * 1e9 * _gathered_bytes_per_param(w) / k
    else:
        moved = 2.0 * grads / k
    return moved * (n - 1) / n


def ulysses_bytes(w: Any, profile: Any, sp: int, micro: int = 1) -> float:
    """Bytes through one GPU's link per micro-step that DeepSpeed-Ulysses sequence parallelism over ``sp`` GPUs adds
    (Jacobs et al. 2023, arXiv:2309.14509 sec. 3.2: per layer an all-to-all of q, k, v before attention and one of its
    output after, each GPU holding N/sp tokens, so 4Nh/sp per link for multi-head attention; with GQA k and v are
    kv_heads x head_dim wide). The backward pass moves the gradients the same way, and checkpointing's recomputed
    forward moves the forward's again; an all-to-all sends (sp-1)/sp of each GPU's tensor. 0 for sp <= 1 or a model
    without a recorded shape."""
    if sp <= 1:
        return 0.0
    from gpu_advisor.kb.models import knowledge

    t = knowledge().transformers.get(getattr(profile, "key", ""))
    if t is None or not t.heads or not w.seq_len:
        return 0.0
    width = 2 * t.heads * t.head_dim + 2 * (t.kv_heads or t.heads) * t.head_dim   # q, output; k, v
    passes = 3 if w.gradient_checkpointing else 2
    act_b = 4.0 if enum_value(w.precision, "fp32") == "fp32" else 2.0
    tokens = max(1, int(micro)) * w.seq_len / sp
    return float(t.layers * passes * tokens * width * act_b * (sp - 1) / sp)


def sharding_traffic(candidate: Any, accum: int | None = None, micro: int | None = None) -> Traffic | None:
    """The per-micro-step traffic a ZeRO-2 / ZeRO-3 / FSDP plan over several GPUs moves beyond what the scaling band
    stands for, or None (nothing beyond it, or no link figure). ZeRO-3 / FSDP: all of it (as before ZeRO-2 was
    planned); ZeRO-2: the gradient reduce-scatters of the micro-steps that DDP would not communicate in, (k - 1) / k of
    one per micro-step; none with one micro-step per optimizer step. ``accum``: micro-steps per optimizer step (the
    plan's by default)."""
    w = candidate.variant.workload
    n = candidate.total_gpus
    dist = enum_value(w.distributed, "none")
    if n <= 1 or dist not in SHARDED | {"zero2"}:
        return None
    k = max(1, int(getattr(candidate.variant, "accum_steps", 1) if accum is None else accum))
    if dist == "zero2" and k <= 1:
        return None
    link = _link(candidate)
    if link is None:
        return None
    rate, name, eff = link
    profile = candidate.estimate.profile
    if dist == "zero2":
        moved = profile.trainable_params_billion * 1e9 * _grad_bytes(w) * (1 - 1 / k) * (n - 1) / n
    else:
        moved = stage_bytes(w, profile, n, k)
    # sequence parallelism: the all-to-alls of ``micro`` sequences per micro-step (the plan's micro-batch by default)
    moved += ulysses_bytes(w, profile, int(getattr(candidate.variant, "sp", 1) or 1), micro or w.batch_size_per_gpu or 1)
    return Traffic(moved, rate * eff.low, rate * eff.high, name, eff, rate)
