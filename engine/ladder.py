"""The ordered out-of-memory mitigation chain, as workload variants.

AMP -> gradient checkpointing -> smaller micro-batch + gradient accumulation -> ZeRO-3 / FSDP sharding over
the GPUs of one instance -> more instances. Each step keeps the previous ones, so the first step at which a
card fits is the least intrusive change that makes the job fit. The memory of each variant comes from the
memory estimator; nothing here estimates memory itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from gpu_advisor.workload import Distributed, Precision, Quantization, Workload

STEP_AS_GIVEN, STEP_AMP, STEP_CKPT, STEP_MICROBATCH, STEP_SHARD, STEP_MORE_NODES = range(6)
GPUS_PER_NODE_CHOICES = (1, 2, 4, 8)
MAX_TOTAL_GPUS = 512

# Relative training time of each step (1.0 = unchanged). Checkpointing recomputes the forward pass: one
# extra forward on top of forward + backward (backward ~ 2x forward) = 4/3 (Chen et al. 2016,
# arXiv:1604.06174; Korthikanti et al. 2022, arXiv:2205.05198 sec. 5). AMP and smaller micro-batches add no
# arithmetic; sharding adds communication that the time estimate accounts for separately.
TIME_FACTOR = {STEP_AS_GIVEN: 1.0, STEP_AMP: 1.0, STEP_CKPT: 4 / 3, STEP_MICROBATCH: 4 / 3,
               STEP_SHARD: 4 / 3, STEP_MORE_NODES: 4 / 3}


@dataclass(frozen=True)
class Variant:
    step: int
    workload: Workload
    gpus: int
    accum_steps: int = 1


Copies = dict[tuple[int, tuple[tuple[str, object], ...]], tuple[Workload, Workload]]


def _copy(w: Workload, update: dict[str, object], copies: Copies | None) -> Workload:
    """w.model_copy(update=update); with ``copies``, one copy per (w, update), shared by the chains of one plan
    (the workloads are frozen, so sharing an equal copy changes nothing)."""
    if copies is None:
        return w.model_copy(update=update)
    key = (id(w), tuple(update.items()))
    hit = copies.get(key)
    if hit is not None and hit[0] is w:
        return hit[1]
    out = w.model_copy(update=update)
    copies[key] = (w, out)  # keeps w alive, so its id is not reused while the cache lives
    return out


def _amp(w: Workload, bf16: bool, copies: Copies | None = None) -> Workload:
    if w.precision not in (None, Precision.fp32):
        return w
    return _copy(w, {"precision": Precision.bf16_amp if bf16 else Precision.fp16_amp}, copies)


def training_variants(w: Workload, *, bf16: bool, gpus: int, fixed_gpus: bool,
                      max_gpus_per_node: int, copies: Copies | None = None) -> Iterator[Variant]:
    """Yield the mitigation chain for one GPU model, cheapest change first."""
    yield Variant(STEP_AS_GIVEN, w, gpus)
    amp = _amp(w, bf16, copies)
    if amp is not w:
        yield Variant(STEP_AMP, amp, gpus)
    ckpt = amp if amp.gradient_checkpointing else _copy(amp, {"gradient_checkpointing": True}, copies)
    if ckpt is not amp:
        yield Variant(STEP_CKPT, ckpt, gpus)
    batch = ckpt.batch_size_per_gpu or 1
    micro = batch // 2
    while micro >= 1:
        yield Variant(STEP_MICROBATCH, _copy(ckpt, {"batch_size_per_gpu": micro}, copies), gpus,
                      accum_steps=-(-batch // micro))
        micro //= 2
    small = _copy(ckpt, {"batch_size_per_gpu": 1}, copies) if batch > 1 else ckpt
    accum = batch
    for n in _shard_counts(gpus, fixed_gpus, max_gpus_per_node):
        step = STEP_SHARD if n <= max_gpus_per_node else STEP_MORE_NODES
        sharded = _copy(small, {"distributed": Distributed.zero3, "num_gpus": n}, copies)
        yield Variant(step, sharded, n, accum_steps=accum)


def _shard_counts(gpus: int, fixed_gpus: bool, max_per_node: int) -> list[int]:
    if fixed_gpus:
        return [gpus] if gpus > 1 else []
    counts = [n for n in GPUS_PER_NODE_CHOICES if 1 < n <= max_per_node]
    n = max_per_node * 2
    while n <= MAX_TOTAL_GPUS:
        counts.append(n)
        n *= 2
    return counts


def inference_variants(w: Workload, *, gpus: int, fixed_gpus: bool, max_gpus_per_node: int,
                       copies: Copies | None = None) -> Iterator[Variant]:
    """Serving: as given, then 8-bit weights, then tensor parallelism over more GPUs (16-bit, then 8-bit).

    The last variant is the most aggressive one, so a card that cannot hold it can hold none of them.
    """
    yield Variant(STEP_AS_GIVEN, w, gpus)
    quantized = w
    if w.quantization in (None, Quantization.none):
        quantized = _copy(w, {"quantization": Quantization.int8}, copies)
        yield Variant(STEP_AMP, quantized, gpus)
    counts = _shard_counts(gpus, fixed_gpus, max_gpus_per_node)
    for base in dict.fromkeys([w, quantized]):
        for n in counts:
            step = STEP_SHARD if n <= max_gpus_per_node else STEP_MORE_NODES
            yield Variant(step, _copy(base, {"num_gpus": n, "distributed": Distributed.zero3}, copies), n)
