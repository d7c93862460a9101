"""Whether a training job across instances needs RDMA: its inter-node traffic per micro-step over the instance's plain
TCP network against the compute of that micro-step.

bytes   = costing/comm.stage_bytes over all the job's GPUs (a ring moves (n-1)/n of each tensor through every
          instance's NICs; DDP / ZeRO-1 once per optimizer step, ZeRO-2 / 3 / FSDP per micro-step)
compute = (training FLOPs per sample (x 2/3 for LoRA) + causal attention) x micro-batch x 4/3 under recomputation
          / (dense peak x utilisation), per GPU (costing/timing.py's terms)
TCP     = network_gbit_s / 8 x basis.LINK_TCP (NCCL's socket transport, measured); RDMA = rdma_gbit_s (else the
          network figure: eRDMA shares the VPC bandwidth) / 8 x basis.LINK_NETWORK
The step over a link takes between full overlap (max of compute and traffic) and none (their sum); the slowdown is
that step over the compute alone: (max(1, fastest traffic / slowest compute), 1 + slowest traffic / fastest compute).

RDMA is required when, at the central estimate (the middle of the TCP efficiency band against the middle of the
compute range) and with full overlap, the step over TCP is REQUIRED_SLOWDOWN = 1 / 0.80 = 1.25x its compute or more:
the traffic then outlasts the compute by a quarter, so at least 20 % of every GPU-hour waits on the network, worse
than the slow end of the scaling efficiency measured across instances over RDMA (basis.SCALING_RDMA: 80-90 %,
Horovod / Goyal et al.). Otherwise RDMA is recommended, not required, and the answer states the slowdown band.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_advisor.costing import basis
from gpu_advisor.costing.comm import stage_bytes, ulysses_bytes
from gpu_advisor.workload import enum_value

REQUIRED_SLOWDOWN = 1.0 / basis.SCALING_RDMA.low  # 1.25


@dataclass(frozen=True)
class Internode:
    gb_per_step: float                      # GB through each instance's network per micro-step
    compute_s: tuple[float, float]          # (fastest, slowest) compute seconds per micro-step
    tcp_gbit_s: float
    tcp_slowdown: tuple[float, float]       # step over TCP / compute alone
    rdma_gbit_s: float | None               # the type's RDMA (or, for eRDMA without a figure, network) rate
    rdma_slowdown: tuple[float, float] | None
    tcp_mid: float                          # central TCP step (full overlap) / central compute

    @property
    def required(self) -> bool:
        return self.tcp_mid >= REQUIRED_SLOWDOWN


def _slowdown(seconds_fast: float, seconds_slow: float, compute: tuple[float, float]) -> tuple[float, float]:
    return max(1.0, seconds_fast / compute[1]), 1.0 + seconds_slow / compute[0]


def _compute_seconds(candidate: Any) -> tuple[float, float] | None:
    from gpu_advisor.costing.timing import (attention_flops_per_sample, lora_factor, peak_tflops,
                                             utilisation_for)
    from gpu_advisor.plan.ladder import STEP_CKPT, TIME_FACTOR

    w, est = candidate.variant.workload, candidate.estimate
    family = est.profile.family
    peak, _ = peak_tflops(candidate.gpu, enum_value(w.precision, "fp32"), family)
    if peak is None or not est.train_flops_per_sample:
        return None
    util = utilisation_for(family, w, candidate.gpu)
    lora, _ = lora_factor(est, w)
    per_sample = est.train_flops_per_sample * lora + attention_flops_per_sample(est.profile, w.seq_len or 0)
    flops = per_sample * max(1, w.batch_size_per_gpu or 1) * (TIME_FACTOR[STEP_CKPT] if w.gradient_checkpointing else 1.0)
    flops /= max(1, int(getattr(candidate.variant, "sp", 1) or 1))   # sequence parallelism: sp GPUs share a sequence
    return flops / (peak.high * 1e12 * util.high), flops / (peak.low * 1e12 * util.low)


def internode(candidate: Any) -> Internode | None:
    """The inter-node verdict of a multi-instance training option, or None (one instance, serving, or no figure to
    compute it from: then the caller keeps RDMA as the safe requirement)."""
    t = candidate.instance
    if candidate.nodes <= 1 or not t.network_gbit_s:
        return None
    compute = _compute_seconds(candidate)
    if compute is None or compute[0] <= 0:
        return None
    w = candidate.variant.workload
    moved = stage_bytes(w, candidate.estimate.profile, candidate.total_gpus, getattr(candidate.variant, "accum_steps", 1))
    moved += ulysses_bytes(w, candidate.estimate.profile, int(getattr(candidate.variant, "sp", 1) or 1),
                           w.batch_size_per_gpu or 1)
    tcp = t.network_gbit_s / 8.0 * 1e9
    tcp_slow = _slowdown(moved / (tcp * basis.LINK_TCP.high), moved / (tcp * basis.LINK_TCP.low), compute)
    rdma_gbit = (t.rdma_gbit_s or t.network_gbit_s) if t.rdma != "none" else None
    rdma_slow = None
    if rdma_gbit:
        rate = rdma_gbit / 8.0 * 1e9
        rdma_slow = _slowdown(moved / (rate * basis.LINK_NETWORK.high), moved / (rate * basis.LINK_NETWORK.low), compute)
    mid_eff = (basis.LINK_TCP.low + basis.LINK_TCP.high) / 2.0
    tcp_mid = max(1.0, moved / (tcp * mid_eff) / ((compute[0] + compute[1]) / 2.0))
    return Internode(moved / 1e9, compute, float(t.network_gbit_s), tcp_slow, rdma_gbit, rdma_slow, tcp_mid)


def rdma_required(candidate: Any) -> bool:
    """A multi-instance option needs RDMA: its TCP traffic would dominate, or it cannot be computed (the safe side)."""
    if candidate.nodes <= 1:
        return False
    verdict = internode(candidate)
    return True if verdict is None else verdict.required


def band(r: tuple[float, float] | None) -> str:
    return "none" if r is None else f"{r[0]:.2f}-{r[1]:.2f}"
