"""Does a job fit a card the user owns or names that the catalog does not sell (kb/owned_gpus.py: "4 × RTX 4090",
"one H20")? The planner's own walk (planner._first_fit over the ladder's chain for the user's GPU count, with its fit
test at the planning estimate) on that card's memory and BF16 support; nothing here estimates memory or orders the
mitigations itself. When no step of the chain fits, the lighter methods the user did not ask for are tried the same
way: 4-bit weights for serving (AWQ / GPTQ), LoRA then QLoRA for a fine-tune."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_advisor.memory import MemoryEstimate
from gpu_advisor.plan.ladder import STEP_AS_GIVEN, STEP_SHARD, Variant
from gpu_advisor.plan.planner import Chains, Memo, _estimate, _first_fit, _fits, upper_gib
from gpu_advisor.workload import Distributed, FinetuneMethod, Quantization, Task, Workload

MAX_GPUS_PER_MACHINE = 8   # an owned machine: the planner's largest per-node layout (ladder.GPUS_PER_NODE_CHOICES)
# shorter training sequences tried when seq_len was not stated (common SFT cut-offs: LLaMA-Factory's examples use
# cutoff_len 2048 and 1024; 512 is the BERT-era length many instruction sets fit in)
SHORTER_SEQ = (1024, 512)
# longer ones tried when a job fits at the assumed seq_len: chat / instruction sets often run past 2,048 tokens
# (LLaMA-Factory's examples also use cutoff_len 4096; Qwen2.5's own SFT data reaches 8,192 and more)
LONGER_SEQ = (4096, 8192)
MAX_MICRO_BATCH = 256      # the largest micro-batch per GPU searched for ("what batch size can I use on my 3090?")


@dataclass(frozen=True)
class OwnedFit:
    gpus: int
    workload: Workload                # the job as asked, resolved as the planner resolves it, on the user's count
    as_asked: MemoryEstimate          # the job as asked, laid out as the chain's first step for that count
    variant: Variant | None           # the first step that fits (None: no step does)
    estimate: MemoryEstimate | None
    tight: bool                       # fits at the central estimate only, not at the planning estimate
    alternative: str | None = None    # "int4" | "lora" | "qlora": the lighter method that fits when no step does
    tight_variant: Variant | None = None  # with an alternative: the step that fits only at the central estimate
    lighter: tuple[str, Variant, MemoryEstimate] | None = None  # a fit needing sharding / offload: a lighter method
    job: Any = None                   # the resolved job (plan/defaults.Job) of ``variant``: its time and speed
    # seq_len not stated: (tokens, step, estimate) at the longest of SHORTER_SEQ that fits the method as asked when the
    # assumed length does not (or needs sharding / offload), so that the verdict says what the default decided
    shorter: tuple[int, Variant, MemoryEstimate, bool] | None = None
    # seq_len not stated and the job fits at the assumed one: the shortest of LONGER_SEQ at which no step of the chain
    # fits these cards at the planning estimate (the default then decides the yes, and the verdict says so)
    longer: int | None = None

    @property
    def fits_as_asked(self) -> bool:
        return self.variant is not None and self.variant.step == STEP_AS_GIVEN and self.alternative is None


def planning_gib(e: MemoryEstimate) -> float:
    return upper_gib(e)


def _walk(w: Workload, card: Any, memo: Memo) -> tuple[Variant, MemoryEstimate, bool] | None:
    per_machine = min(max(1, w.num_gpus or 1), MAX_GPUS_PER_MACHINE)
    return _first_fit(w, card, per_machine, memo, Chains())


def _job(w: Workload) -> Any:
    """The job as the planner sizes it (plan/defaults.resolve_job: the method's precision, quantization, defaults)."""
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.defaults import resolve_job

    return resolve_job(w, load_catalog())


FOUR_BIT = (Quantization.int4, Quantization.nf4, Quantization.fp4)


def _alternatives(asked: Workload, resolved: Workload | None = None) -> list[tuple[str, Any]]:
    """The lighter methods the user did not ask for, each resolved as if asked: 4-bit weights for serving, LoRA then
    QLoRA for a fine-tune (the method decides precision and quantization: resolve_job). A model whose published
    checkpoint is already 4-bit (gpt-oss: MXFP4, the job as resolved) has no lighter 4-bit version to offer."""
    if asked.task == Task.inference:
        if asked.quantization in FOUR_BIT or (resolved is not None and resolved.quantization in FOUR_BIT):
            return []
        return [("int4", _job(asked.model_copy(update={"quantization": Quantization.int4})))]
    if asked.task != Task.llm_finetune:
        return []
    out = []
    for name, method in (("lora", FinetuneMethod.lora), ("qlora", FinetuneMethod.qlora)):
        if asked.finetune_method in (FinetuneMethod.qlora, method):
            continue
        if name == "lora" and asked.finetune_method == FinetuneMethod.lora:
            continue
        out.append((name, _job(asked.model_copy(update={
            "finetune_method": method, "quantization": None, "precision": None, "distributed": None,
            "cpu_offload": None}))))
    return out


def _shorter(asked: Workload, w: Workload, card: Any, memo: Memo,
             below: int | None = None) -> tuple[int, Variant, MemoryEstimate, bool] | None:
    """A training job whose seq_len was not stated: the longest of SHORTER_SEQ under the assumed one at which the
    method as asked fits at the planning estimate (``below``: at a step of the chain under that one), else (nothing
    fits at the assumed one) the longest at which it fits at the central estimate only (tight: the last item)."""
    if asked.seq_len is not None or w.task not in (Task.llm_finetune, Task.llm_pretrain) or not w.seq_len:
        return None
    tight = None
    for seq in SHORTER_SEQ:
        if seq >= w.seq_len:
            continue
        got = _walk(w.model_copy(update={"seq_len": seq}), card, memo)
        if got is not None and (below is None or got[0].step < below):
            if not got[2]:
                return seq, got[0], got[1], False
            tight = tight or (seq, got[0], got[1], True)
    return tight if below is None else None


def _longer(asked: Workload, w: Workload, card: Any, memo: Memo) -> int | None:
    """A training job whose seq_len was not stated and that fits at the assumed one: the shortest of LONGER_SEQ at
    which it no longer fits (no step of the chain at the planning estimate), else None."""
    if asked.seq_len is not None or w.task not in (Task.llm_finetune, Task.llm_pretrain) or not w.seq_len:
        return None
    for seq in LONGER_SEQ:
        if seq <= w.seq_len:
            continue
        got = _walk(w.model_copy(update={"seq_len": seq}), card, memo)
        if got is None or got[2]:
            return seq
    return None


def fit_owned(asked: Workload, card: Any, memo: Memo | None = None) -> OwnedFit:
    """The job as asked (resolved as the planner resolves it) on its stated GPU count (else 1) of ``card`` (anything
    with memory_gb and supports_bf16): the count is the user's, fixed, as a stated num_gpus is."""
    memo = {} if memo is None else memo
    n = max(1, int(asked.num_gpus or 1))
    asked = asked.model_copy(update={"num_gpus": n, "num_nodes": None, "gpu_preference": None})
    job = _job(asked)
    w = job.workload
    steps = Chains()
    per_machine = min(n, MAX_GPUS_PER_MACHINE)
    found = _first_fit(w, card, per_machine, memo, steps)
    as_asked = steps.estimates.get(()) or _estimate(memo, w)
    if w.task == Task.inference and n > 1 and w.distributed in (None, Distributed.none):
        # serving on the user's n cards is tensor parallel over them (the ladder's layout for that count)
        as_asked = _estimate(memo, w.model_copy(update={"distributed": Distributed.zero3}))
    if found is not None and not found[2]:
        lighter = None
        if found[0].step >= STEP_SHARD and w.task != Task.inference:
            # a fit that needs ZeRO sharding or CPU offload: the lighter method that fits without them, if any
            for name, alt in _alternatives(asked, w):
                got = _walk(alt.workload, card, memo)
                if got is not None and not got[2] and got[0].step < STEP_SHARD:
                    lighter = (name, got[0], got[1])
                    break
        shorter = _shorter(asked, w, card, memo, below=found[0].step) if found[0].step >= STEP_SHARD else None
        return OwnedFit(n, w, as_asked, found[0], found[1], False, lighter=lighter, job=job, shorter=shorter,
                        longer=_longer(asked, w, card, memo))
    # no step fits at the planning estimate. The job as asked fits at the central estimate: that is the catalog's
    # verdict for the same card too (a tight option is offered, said to be tight), so it is the answer here, with the
    # lighter method that fits with room as the other way; else a lighter method that does fit is the answer; else
    # the tight fit of a mitigated step, if any
    shorter = _shorter(asked, w, card, memo)
    if found is not None and found[0].step == STEP_AS_GIVEN and w.task == Task.inference:
        lighter = None
        for name, alt in _alternatives(asked, w):
            got = _walk(alt.workload, card, memo)
            if got is not None and not got[2] and got[0].step < STEP_SHARD:
                lighter = (name, got[0], got[1])
                break
        return OwnedFit(n, w, as_asked, found[0], found[1], True, lighter=lighter, job=job, shorter=shorter)
    for name, alt in _alternatives(asked, w):
        got = _walk(alt.workload, card, memo)
        if got is not None and not got[2]:
            return OwnedFit(n, w, as_asked, got[0], got[1], False, alternative=name,
                            tight_variant=found[0] if found is not None else None, job=alt, shorter=shorter)
    if found is not None:
        return OwnedFit(n, w, as_asked, found[0], found[1], True, job=job, shorter=shorter)
    return OwnedFit(n, w, as_asked, None, None, False, job=job, shorter=shorter)


def largest_batch(fit: OwnedFit, card: Any, memo: Memo | None = None) -> tuple[int, MemoryEstimate] | None:
    """The largest micro-batch per GPU (up to MAX_MICRO_BATCH) at which the training step that fits the card still
    passes the planner's fit test at the planning estimate (planner._fits, strict), with its estimate; None for
    serving, a stated batch, or no clean fit."""
    job = fit.job
    if fit.variant is None or fit.tight or job is None or job.workload.task == Task.inference \
            or job.original.batch_size_per_gpu is not None:
        return None
    memo = {} if memo is None else memo
    w = fit.variant.workload

    def at(b: int) -> MemoryEstimate | None:
        e = _estimate(memo, w.model_copy(update={"batch_size_per_gpu": b}))
        return e if _fits(e, card, strict=True) else None

    best = (max(1, w.batch_size_per_gpu or 1), fit.estimate)
    high = best[0]
    while high < MAX_MICRO_BATCH and (e := at(min(MAX_MICRO_BATCH, high * 2))) is not None:
        high = min(MAX_MICRO_BATCH, high * 2)
        best = (high, e)
    low, top = best[0], min(MAX_MICRO_BATCH + 1, best[0] * 2)
    while top - low > 1:   # the largest between the last size that fits and the first that does not
        mid = (low + top) // 2
        e = at(mid)
        low, top, best = (mid, top, (mid, e)) if e is not None else (low, mid, best)
    return best
