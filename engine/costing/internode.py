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

from typing import Any

# the step figures live in costing/timing.py (the scaling band over TCP is derived from them there); re-exported
from gpu_advisor.costing.timing import REQUIRED_SLOWDOWN, Internode, internode

__all__ = ["REQUIRED_SLOWDOWN", "Internode", "internode", "rdma_required", "band"]


def rdma_required(candidate: Any) -> bool:
    """A multi-instance option needs RDMA: its TCP traffic would dominate, or it cannot be computed (the safe side)."""
    if candidate.nodes <= 1:
        return False
    verdict = internode(candidate)
    return True if verdict is None else verdict.required


def band(r: tuple[float, float] | None) -> str:
    return "none" if r is None else f"{r[0]:.2f}-{r[1]:.2f}"
