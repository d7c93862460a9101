"""Time to train and serving speed on a card the user owns (knowledge/owned_gpus.yaml) for the step of the planner's
chain that fits it (plan/owned.py): the catalog's own models, costing/timing.estimate_time (FLOPs / dense peak x
utilisation x GPUs x scaling) and costing/decode (decode bound by memory bandwidth, prefill by compute), on the card's
datasheet figures. The user's cards are one machine of up to 8 (more: several machines whose network is unknown, so
the TCP scaling band; said to have no RDMA, plain TCP at an assumed 100 Gbit/s, basis.OWNED_NETWORK_GBIT_S, their
own traffic deciding the scaling); they talk over PCIe unless the entry states NVLink. No figure here is guessed: a card without a dense BF16 peak gets no time, one without a memory
bandwidth no serving speed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpu_advisor.costing.basis import OWNED_NETWORK_GBIT_S
from gpu_advisor.costing.decode import Speed, closed_loop, decode_step, replica_of
from gpu_advisor.costing.models import TimeEstimate
from gpu_advisor.costing.timing import estimate_time
from gpu_advisor.kb.catalog import GPU, DenseTflops
from gpu_advisor.plan.owned import MAX_GPUS_PER_MACHINE, OwnedFit
from gpu_advisor.plan.planner import upper_gib
from gpu_advisor.workload import Task


def catalog_view(card: Any) -> GPU:
    """The owned card in the catalog's GPU shape, for the costing models (never added to the catalog): the 16-bit
    Tensor-Core peak is the dense BF16 one (FP16 with FP32 accumulate runs at the same rate on these cards)."""
    if isinstance(card, GPU):   # a GPU the catalog sells, in the user's own machine
        return card
    bf16 = card.dense_bf16_tflops
    return GPU(id=f"OWNED-{card.id}", display_name=card.display_name, named_by_alibaba=False,
               architecture=getattr(card, "architecture", None), memory_gb=card.memory_gb,
               memory_bandwidth_gb_s=card.memory_bandwidth_gb_s,
               dense_tflops=DenseTflops(bf16=bf16, fp16=bf16), supports_bf16=card.supports_bf16, supports_fp8=False,
               nvlink=card.nvlink_gb_s is not None, nvlink_gb_s=card.nvlink_gb_s,
               tflops_basis=card.throughput_source or card.source, source=card.source, as_of=card.as_of)


@dataclass(frozen=True)
class _Machine:
    """The user's machine as the costing models read an instance type: no RDMA, NVLink as the card states."""
    nvlink: bool
    rdma: str = "none"
    rdma_gbit_s: float | None = None
    network_gbit_s: float | None = None


@dataclass(frozen=True)
class OnCard:
    """A planned option on the user's cards, in the shape costing reads (planner.Candidate's fields it uses)."""
    gpu: GPU
    instance: _Machine
    variant: Any
    estimate: Any
    nodes: int
    gpus_per_node: int

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def upper_gib(self) -> float:
        return upper_gib(self.estimate)


def on_card(fit: OwnedFit, card: Any, tcp: bool = False) -> OnCard | None:
    """tcp: the question says the machines have no RDMA, so several of them talk over plain TCP at the assumed
    basis.OWNED_NETWORK_GBIT_S and the scaling is the job's own traffic against its compute (costing/internode.py);
    otherwise the network is unknown and costing/basis.SCALING_TCP's band stands (said as an assumption)."""
    if fit.variant is None or fit.estimate is None:
        return None
    gpu = catalog_view(card)
    nodes = max(1, math.ceil(fit.gpus / MAX_GPUS_PER_MACHINE))
    network = OWNED_NETWORK_GBIT_S if nodes > 1 and tcp else None
    return OnCard(gpu, _Machine(nvlink=gpu.nvlink, network_gbit_s=network), fit.variant, fit.estimate, nodes,
                  fit.gpus // nodes)


def owned_time(fit: OwnedFit, card: Any, tcp: bool = False) -> TimeEstimate | None:
    """The wall-clock range of the fitting step on the user's cards (or what is missing), None for serving; tcp as
    on_card."""
    c = on_card(fit, card, tcp)
    if c is None or fit.job is None or fit.job.workload.task == Task.inference:
        return None
    return estimate_time(c, fit.job)


@dataclass(frozen=True)
class OwnedSpeed:
    sequences: int              # sequences decoded at once (the stated concurrency or batch, else 1)
    context: tuple[int, int]    # (low, high) mean context of the decode steps
    step: tuple[float, float]   # seconds of one decode step (fast, slow)
    speed: Speed | None         # with an output length: the closed loop (TTFT, requests/s)
    kv_sequences: int = 1       # sequences of seq_len tokens the KV cache left on the cards holds at once


def owned_speed(fit: OwnedFit, card: Any) -> OwnedSpeed | None:
    """Serving speed of the fitting layout on the user's cards (tensor parallel over them), None when not serving or
    the card lacks a bandwidth or peak figure."""
    c = on_card(fit, card)
    job = fit.job
    if c is None or job is None or job.workload.task != Task.inference:
        return None
    replica = replica_of(c, job)
    seq = int(c.variant.workload.seq_len or job.workload.seq_len or 0)
    if replica is None or seq <= 1:
        return None
    original = job.original
    n = max(1, int(original.concurrent_users or original.batch_size_per_gpu or job.batch))
    out = job.workload.output_tokens
    from gpu_advisor.plan.serving import _kv_sequences   # vLLM's KV budget, as the cloud's serving plan counts it

    held = _kv_sequences(c, seq)  # type: ignore[arg-type]
    if out and out < seq:
        speed = closed_loop(replica, n, seq - out, out)
        return OwnedSpeed(n, (seq - out, seq - out // 2), speed.step, speed, held)
    return OwnedSpeed(n, (seq // 2, seq), (decode_step(replica, n, seq / 2, 0), decode_step(replica, n, seq, 1)), None,
                      held)


__all__ = ["OnCard", "OwnedSpeed", "catalog_view", "on_card", "owned_speed", "owned_time"]
