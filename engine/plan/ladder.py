"""The ordered out-of-memory mitigation chain, as workload variants.

AMP -> gradient checkpointing -> smaller micro-batch + gradient accumulation -> ZeRO sharding over the GPUs of one
instance -> more instances. Each step keeps the previous ones, so the first step at which a card fits is the least
intrusive change that makes the job fit. The memory of each variant comes from the memory estimator; nothing here
estimates memory itself.

Long-context training (an LLM whose activations, not its model states, are what does not fit): after micro-batch 1 the
chain turns on a chunked cross-entropy (chunked_loss: the fp32 logits' gradients live one chunk at a time; torchtune
CEWithChunkedOutputLoss, Liger FusedLinearCrossEntropy), and at every GPU count, after the plain sharding stages, tries
the stages with the chunked loss and then ZeRO-3 with sequence parallelism over those GPUs (Step.sp: DeepSpeed-Ulysses,
Jacobs et al. 2023, arXiv:2309.14509: each GPU keeps the activations of 1/sp of the sequence; sp must divide the
attention heads) before doubling the GPUs, which shrinks model states but never a GPU's activations. The planner tries
these steps only where activations dominate the memory (planner._long_context_ok), so a short-sequence job's chain
walks as before.

Sharding is offered at every GPU count in three stages (Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054, sec. 5):
ZeRO-1 shards the optimizer states, ZeRO-2 the gradients too, ZeRO-3 (FSDP) the parameters too. Memory falls from
stage to stage; communication rises (costing/comm.py: ZeRO-1 moves what DDP moves, ZeRO-2 reduce-scatters the
gradients at every micro-step, ZeRO-3 adds two parameter all-gathers per micro-step). Which of the stages that fit a
GPU count the plan uses is decided by that traffic (planner._best_stage), not by this order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpu_advisor.workload import Distributed, Precision, Quantization, Workload

STEP_AS_GIVEN, STEP_AMP, STEP_CKPT, STEP_MICROBATCH, STEP_SHARD, STEP_MORE_NODES, STEP_OFFLOAD = range(7)
# the sharding stages, least sharded first (memory falls, traffic rises); fsdp (FULL_SHARD) shards as ZeRO-3 does
ZERO_STAGES = (Distributed.zero1, Distributed.zero2, Distributed.zero3)
STAGE_OF = {Distributed.zero1: 1, Distributed.zero2: 2, Distributed.zero3: 3, Distributed.fsdp: 3}
GPUS_PER_NODE_CHOICES = (1, 2, 4, 8)
MAX_TOTAL_GPUS = 512
MACHINE_COUNTS = (2, 3, 4, 6, 8)   # machines a sharded training job is planned on before doubling

# Relative training time of each step (1.0 = unchanged). Checkpointing recomputes the forward pass: one
# extra forward on top of forward + backward (backward ~ 2x forward) = 4/3 (Chen et al. 2016,
# arXiv:1604.06174; Korthikanti et al. 2022, arXiv:2205.05198 sec. 5). AMP and smaller micro-batches add no
# arithmetic; sharding adds communication that the time estimate accounts for separately.
# CPU offload (last, and only on the GPU count the user fixed) adds the CPU optimizer step and PCIe traffic, which
# the time estimate does not count: the planner ranks it after every plan that keeps the states on the GPUs instead
# of pricing that time with a guessed factor.
TIME_FACTOR = {STEP_AS_GIVEN: 1.0, STEP_AMP: 1.0, STEP_CKPT: 4 / 3, STEP_MICROBATCH: 4 / 3,
               STEP_SHARD: 4 / 3, STEP_MORE_NODES: 4 / 3, STEP_OFFLOAD: 4 / 3}


@dataclass(frozen=True)
class Variant:
    step: int
    workload: Workload
    gpus: int
    accum_steps: int = 1
    sp: int = 1   # sequence-parallel degree (DeepSpeed-Ulysses): the memory estimate's activations are per 1/sp


Copies = dict[tuple[tuple[str, Any], ...], Workload]  # update -> workload, for ONE base workload


@dataclass(frozen=True)
class Step:
    """One link of the chain before its workload is built: the fields it changes on the job as given.

    A planner that stops at the first step that fits builds only the workloads it looks at.
    """

    step: int
    update: tuple[tuple[str, Any], ...]
    gpus: int
    accum_steps: int = 1
    sp: int = 1

    # Read at every step of the planner's chain walks: computed once when the step is built (steps are frozen and
    # shared, the chains come from an lru_cache). Not fields: equality and hashing stay those of the fields above.
    def __post_init__(self) -> None:
        # the fields of ``update`` the walk asks about (None when the step does not set them; the last one wins, as
        # in dict(update)); long_context: the step turns on the chunked loss or sequence parallelism
        # (planner._long_context_ok)
        distributed = chunked = None
        long_context = self.sp > 1
        for key, value in self.update:
            if key == "distributed":
                distributed = value
            elif key == "chunked_loss":
                chunked, long_context = value, True
        self.__dict__.update(distributed=distributed, chunked_loss=chunked, long_context=long_context)

    def without_chunked_loss(self) -> "Step":
        """The same step without the chunked loss (planner._long_context_ok compares with it), built once."""
        plain = self.__dict__.get("_without_chunked_loss")
        if plain is None:
            plain = Step(self.step, tuple((k, v) for k, v in self.update if k != "chunked_loss"), self.gpus,
                         self.accum_steps)
            object.__setattr__(self, "_without_chunked_loss", plain)
        return plain

    def variant(self, w: Workload, copies: Copies | None = None) -> Variant:
        return Variant(self.step, _apply(w, self.update, copies), self.gpus, self.accum_steps, self.sp)


def _apply(w: Workload, update: tuple[tuple[str, Any], ...], copies: Copies | None) -> Workload:
    """w with ``update``; ``copies`` (kept for one base workload) builds each copy once (workloads are frozen)."""
    if not update:
        return w
    if copies is None:
        return w.model_copy(update=dict(update))
    out = copies.get(update)
    if out is None:
        out = copies[update] = w.model_copy(update=dict(update))
    return out


def _amp_precision(precision: Precision | None, bf16: bool) -> Precision | None:
    if precision not in (None, Precision.fp32):
        return None
    return Precision.bf16_amp if bf16 else Precision.fp16_amp


def training_steps(w: Workload, *, bf16: bool, gpus: int, fixed_gpus: bool, max_gpus_per_node: int,
                   keep_strategy: bool = False, heads: int = 0, seq_len: int = 0) -> list[Step]:
    """The mitigation chain for one GPU model, cheapest change first; each step keeps the previous ones.
    ``keep_strategy``: the user stated ``w.distributed``; the chain shards with that strategy only (plan/stated.py).
    ``heads`` and ``seq_len``: the LLM's attention heads and tokens per sequence (0: not a causal LM, no long-context
    steps)."""
    skip = _trainer_skips(w.model)
    stages = kept_stages(w.distributed) if keep_strategy else _stages(w.distributed, _offload_applies(w))
    lm = w.task.value in ("llm_finetune", "llm_pretrain") and heads > 0
    # sequence parallelism runs with ZeRO-3 over the same GPUs (DeepSpeed-Ulysses): not in a chain held to another
    # stated strategy
    sp_heads = heads if lm and "sharding" not in skip and Distributed.zero3 in stages else 0
    return list(_training_steps(w.precision, bool(w.gradient_checkpointing) or "checkpointing" in skip,
                                w.batch_size_per_gpu or 1, bf16, gpus, fixed_gpus, max_gpus_per_node,
                                bool(w.cpu_offload) or not _offload_applies(w) or not stages, "sharding" in skip,
                                stages, lm and not w.chunked_loss, sp_heads, seq_len))


def kept_stages(given: Distributed | None) -> tuple[Distributed, ...]:
    """The sharding stages of a chain that keeps the strategy the user stated: that ZeRO stage only (FSDP FULL_SHARD as
    ZeRO-3, as the chain spells it); none for DDP, which replicates the model states on every GPU (and has no CPU
    offload: DeepSpeed's offload_optimizer needs ZeRO, docs/_pages/config-json.md)."""
    if given in (None, Distributed.none, Distributed.ddp):
        return ()
    return (Distributed.zero3,) if STAGE_OF.get(given) == 3 else (given,)


def _stages(given: Distributed | None, full_states: bool) -> tuple[Distributed, ...]:
    """The sharding stages the chain may use: the one the job asks for and the more sharded ones (a job that asks for
    ZeRO-3 / FSDP is never planned with less sharding than it asked for); all three for none / ddp. ZeRO-1 / 2 only
    where optimizer state and gradients are a large share of memory (a full fine-tune or pretraining of a
    transformer): for LoRA / QLoRA they are the adapters' few MB and the frozen base is what must be split."""
    if not full_states:
        return (Distributed.zero3,)
    at_least = STAGE_OF.get(given, 1) if given is not None else 1
    return tuple(d for d in ZERO_STAGES if STAGE_OF[d] >= at_least)


@lru_cache(maxsize=512)
def _trainer_skips(model: str | None) -> frozenset[str]:
    """Ladder steps the named model's trainer does not offer (MethodSpec.ladder_skip; Ultralytics YOLO: no gradient
    checkpointing, no ZeRO / FSDP). Empty for other models and names the registry does not know."""
    if not model:
        return frozenset()
    from gpu_advisor.kb.confignames import resolve_method
    from gpu_advisor.kb.models import knowledge
    found = resolve_method(model)
    spec = knowledge().methods.get(found[0]) if found else None
    return frozenset(spec.ladder_skip) if spec is not None else frozenset()


def _offload_applies(w: Workload) -> bool:
    """CPU offload moves the optimizer state and fp32 master weights: it matters for a full fine-tune or pretraining
    of a transformer, not for LoRA / QLoRA (a few MB of adapter state) or a CNN."""
    method = getattr(w.finetune_method, "value", w.finetune_method)
    return w.task.value in ("llm_finetune", "llm_pretrain", "nlp_finetune") and method in (None, "full")


# The chain depends on the workload only through precision, checkpointing and batch: built once per such key (the
# steps are frozen), not for every GPU model of every answer.
@lru_cache(maxsize=1024)
def _training_steps(precision: Precision | None, checkpointing: bool, batch: int, bf16: bool, gpus: int,
                    fixed_gpus: bool, max_gpus_per_node: int, offloaded: bool = False,
                    no_sharding: bool = False,
                    stages: tuple[Distributed, ...] = (Distributed.zero3,), chunk_loss: bool = False,
                    sp_heads: int = 0, seq_len: int = 0) -> tuple[Step, ...]:
    out = [Step(STEP_AS_GIVEN, (), gpus)]
    kept: dict[str, Any] = {}
    amp = _amp_precision(precision, bf16)
    if amp is not None:
        kept["precision"] = amp
        out.append(Step(STEP_AMP, tuple(kept.items()), gpus))
    if not checkpointing:
        kept["gradient_checkpointing"] = True
        out.append(Step(STEP_CKPT, tuple(kept.items()), gpus))
    micro = batch // 2
    while micro >= 1:
        out.append(Step(STEP_MICROBATCH, tuple({**kept, "batch_size_per_gpu": micro}.items()), gpus,
                        accum_steps=-(-batch // micro)))
        micro //= 2
    small = {**kept, "batch_size_per_gpu": 1} if batch > 1 else kept
    chunked = {**small, "chunked_loss": True}
    if chunk_loss:
        # the fp32 logits' gradients one chunk at a time: no arithmetic added (TIME_FACTOR of the micro-batch step)
        out.append(Step(STEP_MICROBATCH, tuple(chunked.items()), gpus, accum_steps=batch))
    if no_sharding:   # the trainer has no ZeRO / FSDP / offload: micro-batch 1 is its last step
        return tuple(out)
    if batch <= 1:
        # one micro-step per optimizer step: ZeRO-1 moves what ZeRO-2 moves (costing/comm.stage_bytes) and holds more,
        # so the planner could never take it
        stages = tuple(d for d in stages if d != Distributed.zero1) or stages
    for n in _shard_counts(gpus, fixed_gpus, max_gpus_per_node):
        step = STEP_SHARD if n <= max_gpus_per_node else STEP_MORE_NODES
        for stage in stages:
            out.append(Step(step, tuple({**small, "distributed": stage, "num_gpus": n}.items()), n,
                            accum_steps=batch))
        if chunk_loss:
            for stage in stages:
                out.append(Step(step, tuple({**chunked, "distributed": stage, "num_gpus": n}.items()), n,
                                accum_steps=batch))
        if _sp_ok(n, sp_heads, seq_len):
            # the sequence over the n GPUs (DeepSpeed-Ulysses with ZeRO-3 over the same GPUs, arXiv:2309.14509 sec. 3):
            # all n GPUs work on one sequence at a time (one data-parallel group): accumulating `batch` of them keeps
            # the job's global batch
            out.append(Step(step, tuple({**(chunked if chunk_loss else small), "distributed": Distributed.zero3,
                                         "num_gpus": n}.items()), n, accum_steps=batch, sp=n))
    if fixed_gpus and not offloaded:
        # the GPU count is the user's: model states to CPU memory (ZeRO-3 offload / FSDP CPUOffload) is what is left;
        # a chain held to one stated ZeRO-1 / 2 offloads its optimizer states at that stage (DeepSpeed ZeRO-Offload,
        # Ren et al. 2021, arXiv:2101.06840, is built on ZeRO-2)
        off = stages[0] if len(stages) == 1 else Distributed.zero3
        out.append(Step(STEP_OFFLOAD, tuple({**small, "distributed": off, "num_gpus": gpus,
                                             "cpu_offload": True}.items()), gpus, accum_steps=batch))
    return tuple(out)



def _sp_ok(n: int, heads: int, seq_len: int) -> bool:
    """DeepSpeed-Ulysses splits the attention heads over the sequence-parallel GPUs after its all-to-all: the degree must
    divide the heads (deepspeed/sequence/layer.py DistributedAttention; LLaMA-Factory sequence_parallel_size) and the
    sequence (each GPU its equal share of tokens)."""
    return n > 1 and heads > 0 and heads % n == 0 and seq_len > 0 and seq_len % n == 0


def _shard_counts(gpus: int, fixed_gpus: bool, max_per_node: int) -> list[int]:
    if fixed_gpus:
        return [gpus] if gpus > 1 else []
    counts = [n for n in GPUS_PER_NODE_CHOICES if 1 < n <= max_per_node]
    # whole machines: 2, 3, 4, 6, 8, then doubling. Data parallelism and ZeRO / FSDP shard over any count, so a job
    # that 2 machines cannot hold is not planned on 4 when 3 hold it (70B full fine-tuning: 1.1 TB of model states)
    machines = [k for k in MACHINE_COUNTS]
    k = MACHINE_COUNTS[-1] * 2
    while k * max_per_node <= MAX_TOTAL_GPUS:
        machines.append(k)
        k *= 2
    counts += [m * max_per_node for m in machines if m * max_per_node <= MAX_TOTAL_GPUS]
    return counts


def inference_steps(w: Workload, *, gpus: int, fixed_gpus: bool, max_gpus_per_node: int) -> list[Step]:
    """Serving: as given, then 8-bit weights, then tensor parallelism over more GPUs (16-bit, then 8-bit).

    The last step is the most aggressive one, so a card that cannot hold it can hold none of them.
    """
    return list(_inference_steps(w.quantization in (None, Quantization.none), gpus, fixed_gpus, max_gpus_per_node))


# The serving chain depends on the workload only through whether its weights are unquantized: built once per key (the
# steps are frozen and shared, as the training chain's), not for every GPU model of every answer (18 steps each).
@lru_cache(maxsize=256)
def _inference_steps(unquantized: bool, gpus: int, fixed_gpus: bool, max_gpus_per_node: int) -> tuple[Step, ...]:
    out = [Step(STEP_AS_GIVEN, (), gpus)]
    bases: list[tuple[tuple[str, Any], ...]] = [()]
    if unquantized:
        quantized = (("quantization", Quantization.int8),)
        out.append(Step(STEP_AMP, quantized, gpus))
        bases.append(quantized)
    counts = _shard_counts(gpus, fixed_gpus, max_gpus_per_node)
    for base in bases:
        for n in counts:
            step = STEP_SHARD if n <= max_gpus_per_node else STEP_MORE_NODES
            out.append(Step(step, base + (("num_gpus", n), ("distributed", Distributed.zero3)), n))
    return tuple(out)

