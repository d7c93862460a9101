"""The parameter traffic that ZeRO-3 / FSDP adds to every micro-step, from first principles.

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


def sharding_traffic(candidate: Any) -> Traffic | None:
    """The per-micro-step traffic of a ZeRO-3 / FSDP plan over several GPUs, or None (not sharded, or no link figure)."""
    w = candidate.variant.workload
    n = candidate.total_gpus
    if n <= 1 or enum_value(w.distributed, "none") not in SHARDED:
        return None
    link = _link(candidate)
    if link is None:
        return None
    rate, name, eff = link
    profile = candidate.estimate.profile
    params = profile.params_billion * 1e9
    trainable = profile.trainable_params_billion * 1e9
    grad_bytes = 4.0 if enum_value(w.precision, "fp32") == "fp32" else 2.0
    if enum_value(getattr(w, "finetune_method", None), "full") in ("lora", "qlora"):
        grad_bytes = 4.0  # fp32 adapters (PEFT)
    moved = (2.0 * params * _gathered_bytes_per_param(w) + trainable * grad_bytes) * (n - 1) / n
    return Traffic(moved, rate * eff.low, rate * eff.high, name, eff, rate)
