"""Choose GPU model, count and a real instance type from the catalog.

For every GPU model the catalog sells, walk the mitigation chain (ladder.py) until the estimated device
memory fits the card with FIT_HEADROOM to spare, then pick that GPU's instance types that carry the GPU
count, have the vCPU and RAM the data pipeline needs, and RDMA when the job spans instances and its traffic over TCP
would dominate (costing/internode.py). Options are
ranked by effective hourly cost (price x nodes x the chain's time factor); options without a price in the
region come after priced ones. Every rejected GPU is kept with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from gpu_advisor.kb.catalog import GPU, Catalog, InstanceType, Price
from gpu_advisor.util.i18n import Text
from gpu_advisor.plan.ladder import STEP_AS_GIVEN, STEP_MORE_NODES, STEP_OFFLOAD, STEP_SHARD, TIME_FACTOR, Copies, Step, Variant, inference_steps, training_steps
from gpu_advisor.memory import MemoryEstimate, estimate_host, estimate_memory
from gpu_advisor.plan.preference import resolve_gpu_preference
from gpu_advisor.workload import Distributed, Precision, Quantization, Task, Workload, enum_value

LESS_SHARDED = (Distributed.zero1, Distributed.zero2)

FIT_HEADROOM = 0.05  # keep 5 % of the card free beyond the estimate (which already has context + slack)
EXCLUDED_STATUS = ("not_recommended", "preview", "unverified")
TRAINING_TAGS = {"training"}  # Alibaba's positioning for training beyond "small-scale" (intended_use_tags)
SOFT_SHORTFALL = 0.10  # a type up to 10 % short of the vCPU / RAM estimate is ranked normally (and warned about)


@dataclass
class Candidate:
    gpu: GPU
    instance: InstanceType
    variant: Variant
    estimate: MemoryEstimate
    nodes: int
    gpus_per_node: int
    vcpu_need: int
    ram_need_gib: float
    host_formula: Text
    price: Price | None
    shortfalls: list[Text] = field(default_factory=list)
    tight: bool = False  # fits on the central estimate only: the planning (upper) estimate exceeds the card
    misses_deadline: bool = False  # scaleout.py: its time misses the deadline even scaled out, or is unknown
    scaled_from: int = 0  # GPUs memory alone needs, when scaleout.py added GPUs to meet the deadline
    replicas: int = 1  # serving: identical copies of this configuration the request rate needs (serving.py)
    quantized: bool = False  # the plan quantizes the weights although the job as given does not (a ladder step)
    # serving (_priced_layout): (GPUs, GiB per GPU, instance type) of the fewest-GPU layout that holds the job but has
    # no price in the region, when this priced candidate uses more GPUs of the same model instead
    fewer: tuple[int, float, str] | None = None
    fp16_for_bf16: bool = False  # a GPU without BF16, sized and timed in FP16 because the precision was not given
    priced_from: int = 0  # _priced_layout: GPUs memory alone needs, when no type of that many has a price here
    zero3_gib: float = 0.0  # ZeRO-1 / 2 plan: the device memory per GPU ZeRO-3 would need at its GPU count

    @property
    def price_per_hour(self) -> float | None:
        return self.price.price_per_hour if self.price else None

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def hourly(self) -> float | None:
        price = self.price  # price_per_hour, read directly: ranking and costing ask for it about 60 times an answer
        return None if price is None or price.price_per_hour is None else price.price_per_hour * self.nodes * self.replicas

    @property
    def headroom_pct(self) -> float:
        cap = self.gpu.memory_gb
        return round(100.0 * (1 - self.estimate.device_total_gib / cap), 1)

    @property
    def hard_shortfall(self) -> bool:
        """Short by more than SOFT_SHORTFALL of the vCPU or RAM need: worse than paying for a bigger type."""
        t = self.instance
        return t.vcpu < self.vcpu_need * (1 - SOFT_SHORTFALL) or t.memory_gib < self.ram_need_gib * (1 - SOFT_SHORTFALL)

    @property
    def upper_gib(self) -> float:
        return upper_gib(self.estimate)

    @property
    def sharded_off_training(self) -> bool:
        """Model states sharded over several GPUs without NVLink of a family Alibaba does not position for training
        (inference, graphics, "small-scale training": gn7i, ebmgn7ix, gn8is, ...): every step all-gathers the
        parameters over PCIe (NET-PCIE-SHARD), and such families are for small training at most
        (shared/research/seed_errors.md, error 10)."""
        if self.variant.workload.task == Task.inference:
            return False  # serving splits weights and KV heads (tensor parallelism), the usual layout of gn7i / gn8is
        # the instance's tags last: the ranking asks this of every candidate, and most are not sharded
        return (self.variant.step >= STEP_SHARD and self.total_gpus > 1 and self.variant.step != STEP_OFFLOAD
                and not self.instance.nvlink and not TRAINING_TAGS.intersection(self.instance.intended_use_tags))

    def rank_key(self) -> tuple[float, ...]:
        """A plan that keeps the model states on the GPUs ranks before CPU offload (whose CPU optimizer step and PCIe
        traffic the time estimate leaves out), and one that shards them on a family positioned for training before one
        that shards them on an inference / graphics family; then, among priced options (an unpriced one cannot be compared on
        cost), a plan that holds the job at the planning (upper) estimate before one that holds it only at the central
        estimate (the answer then says first that it is tight); then by effective hourly cost. A plan that quantizes
        weights the question did not ask to quantize serves another model's numerics: like offload, it ranks after
        every plan that serves the job as asked; a GPU without BF16 that runs a defaulted BF16 job in FP16 comes after
        every GPU that runs it in BF16 (it leads only when asked for or when nothing else holds the job)."""
        hourly = self.hourly
        effective = hourly * TIME_FACTOR[self.variant.step] if hourly is not None else float("inf")
        return (self.hard_shortfall, self.misses_deadline, self.variant.step == STEP_OFFLOAD, self.quantized,
                self.fp16_for_bf16, self.sharded_off_training,
                hourly is None, self.tight,
                effective,
                len(self.shortfalls), self.variant.step, self.total_gpus, -self.gpu.memory_gb)


@dataclass
class Rejection:
    gpu: GPU
    reason: Text


@dataclass
class Plan:
    chosen: Candidate | None
    options: list[Candidate]
    rejected: list[Rejection]
    preferred: frozenset[str] = frozenset()
    deadline_notes: list[Text] = field(default_factory=list)  # scaleout.py / serving.py: said first in the answer
    speed_notes: list[Text] = field(default_factory=list)  # serving.py: a decoder LLM's tokens/s, after the plan's own notes
    # serving.py: the chosen option's time to first token (s, fast-slow), its prompt tokens, sequences and per-user
    # tokens/s, for the ask layer's comparison with a stated TTFT target (answer.choices['serving_speed'])
    serving_speed: dict[str, Any] = field(default_factory=dict)
    deadline_relax: list[Text] = field(default_factory=list)  # scaleout.py: why the deadline cannot be met
    # stated.py: the option a relaxed stated count / strategy named as "the plan below", with that note; the advisor
    # says so when the cost report then leads with another option (advisor.reconcile_stated_pick)
    stated_pick: tuple[Candidate, Text] | None = None

    @property
    def preference_met(self) -> bool:
        return bool(self.preferred) and self.chosen is not None and self.chosen.gpu.id in self.preferred


def upper_gib(estimate: MemoryEstimate) -> float:
    """Device memory at the planning (upper) estimate: the central device total plus the family's planning margin."""
    return estimate.device_total_gib + max(0.0, estimate.allocated_upper_gib - estimate.allocated_peak_gib)


def _fits(estimate: MemoryEstimate, gpu: GPU, strict: bool = False) -> bool:
    """Central estimate within the card less FIT_HEADROOM; ``strict``: the planning (upper) estimate within the card."""
    if estimate.device_total_gib > gpu.memory_gb * (1 - FIT_HEADROOM):
        return False
    return not strict or upper_gib(estimate) <= gpu.memory_gb


def _usable(t: InstanceType, training: bool) -> bool:
    if t.status in EXCLUDED_STATUS or t.vgpu or not t.gpu_count:
        return False
    return not training or "training" in t.intended_use_tags or "inference" in t.intended_use_tags


def _usable_types_by_gpu(catalog: Catalog, training: bool) -> dict[str, tuple[dict[int, list[InstanceType]], int]]:
    """The instance types the planner may use, by GPU id and then by GPUs per instance (catalog order within),
    with the most GPUs one of them carries (once per catalog)."""
    def build() -> dict[str, tuple[dict[int, list[InstanceType]], int]]:
        out: dict[str, dict[int, list[InstanceType]]] = {}
        for t in catalog.instance_types.values():
            if _usable(t, training):
                out.setdefault(t.gpu_id, {}).setdefault(int(t.gpu_count), []).append(t)
        return {gpu_id: (by_count, max(by_count)) for gpu_id, by_count in out.items()}

    return catalog.derived(("planner_usable_types", training), build)


def _prices(catalog: Catalog, region: str) -> dict[str, Price]:
    """The GPU instance types' prices in ``region`` by type (once per catalog and priced region: a plan looks up
    about 12). A region without prices (any string of the right form) gets no table of its own."""
    region = catalog.resolve_region(region)
    if region not in catalog.derived("planner_price_regions", lambda: frozenset(catalog.regions())):
        return {}
    return catalog.derived(("planner_prices", region), lambda: {
        t.type: price for t in catalog.instance_types.values() if (price := catalog.price(t.type, region)) is not None})


def _stated_gpus(w: Workload, max_per_node: int) -> int | None:
    """The GPU count the user fixed: num_gpus, or num_nodes machines of this GPU's largest type. Serving on "one
    machine" ("一台机器上部署 X") fixes no count: it caps the plan at one instance (_layout keeps the stated one), and
    the fewest GPUs that hold the model are chosen, not every GPU of the largest type."""
    if w.num_gpus is not None:
        return w.num_gpus
    if w.num_nodes == 1 and w.task == Task.inference:
        return None
    return w.num_nodes * max_per_node if w.num_nodes else None


def _lm_shape(w: Workload) -> tuple[int, int]:
    """(attention heads, tokens per sequence) of a causal LM in training, for the ladder's long-context steps; (0, 0)
    for anything else (an embedder / reranker computes no vocabulary logits)."""
    if w.task not in (Task.llm_finetune, Task.llm_pretrain):
        return 0, 0
    from gpu_advisor.memory.settings import resolve

    r = resolve(w)
    t = r.transformer
    if t is None or t.family != "llm" or t.role is not None or not t.heads:
        return 0, 0
    return int(t.heads), int(r.settings.get("seq_len") or 0)


def _steps(w: Workload, gpu: GPU, max_per_node: int, keep_strategy: bool = False) -> list[Step]:
    stated = _stated_gpus(w, max_per_node)
    gpus = stated or 1
    fixed = stated is not None
    if w.task == Task.inference:
        return inference_steps(w, gpus=gpus, fixed_gpus=fixed, max_gpus_per_node=max_per_node)
    heads, seq_len = _lm_shape(w)
    return training_steps(w, bf16=gpu.supports_bf16, gpus=gpus, fixed_gpus=fixed, max_gpus_per_node=max_per_node,
                          keep_strategy=keep_strategy, heads=heads, seq_len=seq_len)


Memo = dict[Workload, MemoryEstimate]


class Chains(dict):  # (bf16, GPUs per node) -> the chain's steps; .copies: the workloads built for this plan's job
    def __init__(self, keep_strategy: bool = False) -> None:
        super().__init__()
        self.keep_strategy = keep_strategy  # the user stated the distributed strategy: the chain shards with it only
        self.copies: Copies = {}
        self.estimates: dict[tuple[tuple[str, Any], ...], MemoryEstimate] = {}  # by Step.update, for this plan's job
        # each step's variant of this plan's job, built once: the chain walks of the GPUs ask for the same few steps
        # about 40 times an answer (keyed by the step object, kept alive beside its variant: hashing a Step hashes its
        # update tuple)
        self.variants: dict[int, tuple[Step, Variant]] = {}
        self.zero3: dict[int, tuple[list[Step], dict[tuple[int, int, Any], Step]]] = {}  # _zero3_steps, by chain


def _estimate(memo: Memo, w: Workload, sp: int = 1) -> MemoryEstimate:
    key: Any = w if sp == 1 else (w, sp)
    estimate = memo.get(key)
    if estimate is None:
        estimate = memo[key] = estimate_memory(w, sp) if sp > 1 else estimate_memory(w)
    return estimate


def _step_estimate(w: Workload, step: Step, memo: Memo, chains: Chains) -> tuple[Variant, MemoryEstimate]:
    """The step's variant of ``w`` (this plan's job) and its estimate, looked up by the step's update: a plan asks
    about 30 times for a handful of workloads, and hashing a Workload (every field) for ``memo`` took 15 % of the
    planner's own time."""
    known = chains.variants.get(id(step))
    if known is not None and known[0] is step:
        variant = known[1]
    else:
        variant = step.variant(w, chains.copies)
        chains.variants[id(step)] = (step, variant)
    key = step.update if step.sp == 1 else step.update + (("sequence_parallel", step.sp),)
    estimate = chains.estimates.get(key)
    if estimate is None:
        estimate = chains.estimates[key] = _estimate(memo, variant.workload, step.sp)
    return variant, estimate


STATE_PARTS = ("weights", "master_weights", "optimizer", "gradients", "framework_extras")


def _long_context_ok(w: Workload, step: Step, memo: Memo, chains: Chains) -> bool:
    """A long-context step (chunked loss, sequence parallelism) is tried only where activations dominate -- except the
    chunked loss on the job's own GPU count, which is tried whenever micro-batch 1 does not fit: in the same
    step without it (the plain micro-batch or sharding step at the same GPU count) the activations and the loss's
    transient buffers per GPU are at least the model states. Elsewhere sharding over more GPUs is what shrinks the
    memory, and a short-sequence job's chain walks as it did before these steps."""
    if step.sp <= 1 and step.distributed is None:
        # the chunked loss on the job's own GPUs (before any sharding): one trainer flag instead of splitting the model
        # over more GPUs; a LoRA job a card misses by its fp32 logits (7B at 2048 tokens on 24 GB) fits with it
        return True
    b = _step_estimate(w, step.without_chunked_loss(), memo, chains)[1].breakdown
    return b.get("activations", 0.0) + b.get("transient", 0.0) >= sum(b.get(k, 0.0) for k in STATE_PARTS)


def _chain(w: Workload, gpu: GPU, max_per_node: int, chains: Chains) -> list[Step]:
    """The mitigation chain depends on the GPU only through BF16 support (training) and GPUs per node."""
    key = (w.task != Task.inference and bool(gpu.supports_bf16), max_per_node)
    steps = chains.get(key)
    if steps is None:
        steps = chains[key] = _steps(w, gpu, max_per_node, chains.keep_strategy)
    return steps


def _tensor_parallel_ok(w: Workload, profile: Any) -> Callable[[int], bool]:
    """Serving: tensor parallelism over n GPUs needs the attention heads to divide by n and the KV heads to divide by
    n or n by them (vLLM ModelConfig.verify_with_parallel_config: total_num_attention_heads % tensor_parallel_size;
    KV heads are replicated when there are fewer than GPUs). Qwen2.5-7B (28 heads) runs on 2 or 4 GPUs, never on 8.
    A model without a recorded shape (a synthetic one) is not checked, nor a GPU count the user fixed."""
    from gpu_advisor.kb.models import knowledge

    spec = knowledge().transformers.get(profile.key) if w.task == Task.inference and profile.is_llm else None
    heads, kv = (getattr(spec, "heads", 0) or 0, getattr(spec, "kv_heads", 0) or 0) if spec else (0, 0)
    if not heads or w.num_gpus is not None:
        return lambda n: True
    return lambda n: n <= 1 or (heads % n == 0 and (not kv or kv % n == 0 or n % kv == 0))


def _placeable(w: Workload, types: dict[int, list[InstanceType]], max_per_node: int,
               tp_ok: Callable[[int], bool] = lambda n: True, rdma_only: bool = False) -> Callable[[int], bool]:
    """Whether ``n`` GPUs of this model can be laid out on the catalog's types: a type with that many per instance,
    and for several instances one with RDMA that Alibaba positions for training; serving: a tensor-parallel size the
    model's heads allow. ``rdma_only``: several instances only on types with RDMA (the retry when the traffic of the
    first fit over TCP needs RDMA and this GPU has no such type: a sharded layout on fewer instances may still hold)."""
    known: dict[int, bool] = {}  # by GPU count: a chain asks about the same few counts at many steps

    def ok(n: int) -> bool:
        answer = known.get(n)
        if answer is None:
            answer = known[n] = _layout_ok(n)
        return answer

    def _layout_ok(n: int) -> bool:
        if not tp_ok(n):
            return False
        nodes, per_node = _layout(n, max_per_node, w.num_nodes)
        same = types.get(per_node, [])
        if nodes == 1:
            return bool(same)
        # RDMA or not: _candidates_for weighs the traffic over TCP
        return any("training" in t.intended_use_tags and (not rdma_only or t.rdma != "none") for t in same)
    return ok


def _zero3_steps(steps: list[Step], chains: Chains) -> dict[tuple[int, int, Any], Step]:
    """The chain's ZeRO-3 steps (without sequence parallelism) by (step, GPUs, chunked loss), once per chain of this
    plan (a training chain has a step for every GPU count up to 512)."""
    known = chains.zero3.get(id(steps))
    if known is not None and known[0] is steps:
        return known[1]
    table = {(st.step, st.gpus, st.chunked_loss): st for st in steps
             if st.distributed == Distributed.zero3 and st.sp == 1}
    chains.zero3[id(steps)] = (steps, table)
    return table


def _first_fit(w: Workload, gpu: GPU, max_per_node: int, memo: Memo, chains: Chains,
               placeable: Callable[[int], bool] | None = None,
               keep: Callable[[Step], bool] | None = None) -> tuple[Variant, MemoryEstimate, bool] | None:
    """The first step of the chain whose planning (upper) estimate fits ``gpu``, else the first whose central
    estimate fits (then the third value, tight, is True); only the workloads looked at are built.

    The job as given (step 0, usually estimated already) is tried first: most jobs fit most cards as given, and
    then the chain's other steps are never estimated (3.5 -> 2.8 new estimates per answer on the latency mix).
    The walk does not first estimate the chain's last (most aggressive) step to give up early on a card that cannot
    hold it: that estimate (512 GPUs, every mitigation) served nothing else for 0.8 of an answer's 4.6 estimates,
    while a card that cannot hold the last step holds no earlier one and the walk reaches the same None, reusing
    the estimates the other cards' walks made (4.6 -> 4.0 estimates per answer on the latency mix, median 3 -> 2)."""
    steps = _chain(w, gpu, max_per_node, chains)
    if keep is not None:
        steps = [st for st in steps if keep(st)]
    first, estimate = _step_estimate(w, steps[0], memo, chains)
    if _fits(estimate, gpu, strict=True):
        return first, estimate, False
    loose = (first, estimate) if _fits(estimate, gpu) else None
    zero3: dict[tuple[int, int, Any], Step] | None = None  # built when a ZeRO-1 / 2 step is first reached
    for step in steps[1:]:
        if placeable is not None and not placeable(step.gpus):
            continue  # no type carries this layout: a fit there is no plan
        if step.long_context and not _long_context_ok(w, step, memo, chains):
            continue
        full = None
        if step.distributed in LESS_SHARDED:
            if zero3 is None:
                zero3 = _zero3_steps(steps, chains)
            full = zero3.get((step.step, step.gpus, step.chunked_loss))
        if full is not None and not _fits(_step_estimate(w, full, memo, chains)[1], gpu):
            continue  # ZeRO-1 / 2 hold more than ZeRO-3 at the same count: when ZeRO-3 does not fit, neither do they
        variant, estimate = _step_estimate(w, step, memo, chains)
        if _fits(estimate, gpu, strict=True):
            return variant, estimate, False
        if loose is None and _fits(estimate, gpu):
            loose = (variant, estimate)
    return None if loose is None else (*loose, True)


def stage_key(variant: Variant, estimate: MemoryEstimate) -> tuple[float, float]:
    """How the ZeRO stages that fit are ranked: bytes moved per micro-step (costing/comm.stage_bytes), then the
    device memory per GPU (equal traffic: more memory to spare)."""
    from gpu_advisor.costing.comm import stage_bytes   # costing imports the plan's ladder: imported when used

    return (stage_bytes(variant.workload, estimate.profile, variant.gpus, variant.accum_steps),
            estimate.device_total_gib)


def _best_stage(w: Workload, gpu: GPU, max_per_node: int, memo: Memo, chains: Chains, found: Variant,
                estimate: MemoryEstimate, tight: bool) -> tuple[Variant, MemoryEstimate, float]:
    """Of the ZeRO stages the chain offers at the found step's GPU count (ladder.ZERO_STAGES), the one that moves the
    fewest bytes per micro-step (costing/comm.stage_bytes: ZeRO-1 what DDP moves, ZeRO-2 a gradient reduce-scatter
    per micro-step, ZeRO-3 two parameter all-gathers on top), among those that fit as well as the found one; equal
    traffic goes to the one with more memory to spare. The first fit is the least sharded stage that fits, so the
    stages after it at the same count fit too; the traffic decides between them. Same link for all: one instance.
    The third value: ZeRO-3's device memory per GPU at that count when another stage is chosen (else 0)."""
    if found.step not in (STEP_SHARD, STEP_MORE_NODES) or found.gpus <= 1:
        return found, estimate, 0.0
    def rest(v: Variant) -> Workload:
        return v.workload.model_copy(update={"distributed": found.workload.distributed})

    best = stage_key(found, estimate)
    chosen = (found, estimate)
    zero3 = 0.0
    for step in _chain(w, gpu, max_per_node, chains):
        if step.step != found.step or step.gpus != found.gpus or step.sp != found.sp or step.distributed in (
                None, found.workload.distributed):
            continue
        variant, est = _step_estimate(w, step, memo, chains)
        if rest(variant) != found.workload or not _fits(est, gpu, strict=not tight):
            continue
        if enum_value(variant.workload.distributed, "") == "zero3":
            zero3 = est.device_total_gib
        key = stage_key(variant, est)
        if key < best:
            best, chosen = key, (variant, est)
    return (*chosen, 0.0 if enum_value(chosen[0].workload.distributed, "") == "zero3" else zero3)


def _layout(total: int, max_per_node: int, nodes: int | None = None) -> tuple[int, int]:
    """(instances, GPUs per instance) for ``total`` GPUs: the user's number of machines when given, else as few as
    the largest type of this GPU allows."""
    if nodes and total % nodes == 0:
        return nodes, total // nodes
    per_node = min(total, max_per_node)
    return -(-total // per_node), per_node


def _candidates_for(w: Workload, gpu: GPU, types: dict[int, list[InstanceType]], max_per_node: int, variant: Variant,
                    estimate: MemoryEstimate, prices: dict[str, Price], hosts: dict, tight: bool = False) -> list[Candidate]:
    nodes, per_node = _layout(variant.gpus, max_per_node, w.num_nodes)
    same_count = types.get(per_node)
    if not same_count:
        return []
    key = (variant.workload, per_node)
    host = hosts.get(key)
    if host is None:
        host = hosts[key] = estimate_host(variant.workload, per_node, estimate)  # estimate is this variant's
    out = []
    for t in same_count:
        if nodes > 1 and "training" not in t.intended_use_tags:
            continue  # multi-node training needs a family Alibaba positions for training
        if variant.workload.cpu_offload and t.memory_gib < host.ram_gib:
            continue  # offloaded states live in host RAM: a type without that RAM cannot run the plan at all
        price = prices.get(t.type)
        cand = Candidate(gpu, t, variant, estimate, nodes, per_node, host.vcpu, host.ram_gib, host.formula, price,
                         tight=tight, quantized=variant.workload.quantization != w.quantization)
        if nodes > 1 and t.rdma == "none":
            from gpu_advisor.costing.internode import rdma_required  # costing imports the plan's ladder: used late
            if rdma_required(cand):
                continue  # over this type's TCP network the traffic would dominate the step (costing/internode.py)
        if t.vcpu < host.vcpu:
            cand.shortfalls.append(Text(en=f"{t.vcpu} vCPU < {host.vcpu} needed by the data pipeline",
                                        zh=f"{t.vcpu} vCPU 少于数据流水线所需的 {host.vcpu}"))
        if t.memory_gib < host.ram_gib:
            cand.shortfalls.append(Text(en=f"{t.memory_gib:g} GiB RAM < {host.ram_gib:.0f} GiB needed",
                                        zh=f"内存 {t.memory_gib:g} GiB 少于所需的 {host.ram_gib:.0f} GiB"))
        out.append(cand)
    return out


def _priced_layout(w: Workload, gpu: GPU, types: dict[int, list[InstanceType]], max_per_node: int, found: Variant,
                   prices: dict[str, Price], memo: Memo, chains: Chains, hosts: dict,
                   tp_ok: Callable[[int], bool] = lambda n: True) -> list[Candidate]:
    """When no type of the fewest GPUs that hold the job has a price in the region: the same plan on more GPUs of this
    model in one instance (a later step of the chain that changes nothing but the GPU count and its sharding), at the
    fewest GPUs a priced type carries. Only its priced candidates are returned: they give the answer a job total that
    an unpriced option cannot (the ranking puts them first when the rest is equal). Not when the user fixed the count.
    Serving: tensor parallelism over more GPUs changes neither the model nor the result. Training: the same sharded
    plan over more GPUs of the instance; its time counts the traffic of sharding over them (costing/comm.py)."""
    if not prices or _stated_gpus(w, max_per_node) is not None:
        return []
    if w.task != Task.inference and found.step < STEP_SHARD:
        return []  # a training job that fits unsharded: more GPUs would be data parallelism, a deadline's choice
    reset = {"num_gpus": found.workload.num_gpus, "distributed": found.workload.distributed}
    for step in _chain(w, gpu, max_per_node, chains):
        if step.gpus <= found.gpus or step.gpus > max_per_node or not tp_ok(step.gpus):
            continue
        if not any(t.type in prices for t in types.get(step.gpus, ())):
            continue
        variant = step.variant(w, chains.copies)
        if variant.workload.model_copy(update=reset) != found.workload:
            continue  # it changes more than the GPU count (checkpointing, a smaller batch, quantization ...)
        estimate = _step_estimate(w, step, memo, chains)[1]
        if not _fits(estimate, gpu, strict=True):
            continue
        variant, estimate, zero3 = _best_stage(w, gpu, max_per_node, memo, chains, variant, estimate, False)
        wider = [c for c in _candidates_for(w, gpu, types, max_per_node, variant, estimate, prices, hosts)
                 if c.price is not None]
        for c in wider:
            c.priced_from = found.gpus
            c.zero3_gib = zero3
        return wider
    return []


def _weight_only_fp8(w: Workload, gpu: GPU, dense: bool) -> bool:
    """An FP8 checkpoint served on Ampere: vLLM runs it as weight-only FP8 (W8A16, the FP8 Marlin kernel), weights at 1
    byte, matmuls in 16-bit (vLLM docs, features/quantization/fp8.md; PR #5975). Dense models only: vLLM's fused MoE
    kernel has no FP8 Marlin path on Ampere (neuralmagic/DeepSeek-Coder-V2-Instruct-FP8 discussion #1)."""
    return w.task == Task.inference and dense and gpu.architecture == "Ampere"


def _as_asked(w: Workload, gpu: GPU, types: dict[int, list[InstanceType]], max_per_node: int, memo: Memo,
              chains: Chains, hosts: dict, prices: dict[str, Price], tp_ok: Callable[[int], bool]) -> list[Candidate]:
    """Serving: when the chain's first fit on this GPU quantizes weights the question did not ask to quantize, the
    first fit that keeps the weights as asked (tensor parallelism over more of the same GPU: two A10s for a 14B model
    rather than one A10 at INT8), so that the ranking can prefer serving the model as asked."""
    found = _first_fit(w, gpu, max_per_node, memo, chains, _placeable(w, types, max_per_node, tp_ok),
                       keep=lambda st: not any(k == "quantization" for k, _ in st.update))
    if found is None or found[2]:
        return []   # only a layout that holds the job at the planning estimate: a tight one is no better than INT8
    variant, estimate, _ = found
    return _candidates_for(w, gpu, types, max_per_node, variant, estimate, prices, hosts)


# _precision_gap by (precision, serving, GPU record, dense): asked for every GPU of the catalog in every plan (about 10
# times an answer); a pure function of the GPU record, so a static table (keyed by the GPU object, kept beside its answer)
_GAPS: dict[tuple[str, bool, int, bool], tuple[GPU, Text | None]] = {}
# FP4 (MXFP4) weights run through Marlin on Ampere and later ("GPT-OSS works on Ampere devices by default, using ...
# Marlin MXFP4 MoE", vllm-project/recipes OpenAI/GPT-OSS.md); vLLM's Marlin kernels have no Volta / Turing build
# (docs.vllm.ai/en/v0.9.2/features/quantization/supported_hardware.html)
NO_FP4_ARCHITECTURES = ("Pascal", "Volta", "Turing")


def _precision_gap(w: Workload, gpu: GPU, dense: bool = True) -> Text | None:
    if w.quantization == Quantization.fp4 and gpu.architecture in NO_FP4_ARCHITECTURES:
        return Text(en=f"no kernels for FP4 (MXFP4) weights on {gpu.architecture} (vLLM's Marlin needs Ampere or later)",
                    zh=f"{gpu.architecture} 架构没有 FP4（MXFP4）权重的计算内核（vLLM 的 Marlin 需要 Ampere 及以后）")
    precision = w.precision.value if w.precision else "fp32"
    key = (precision, w.task == Task.inference, id(gpu), dense)
    known = _GAPS.get(key)
    if known is None or known[0] is not gpu:
        if len(_GAPS) > 4096:
            _GAPS.clear()
        known = _GAPS[key] = (gpu, _gap(w, gpu, dense, precision))
    return known[1]


def _gap(w: Workload, gpu: GPU, dense: bool, precision: str) -> Text | None:
    if precision == "fp8" and not gpu.supports_fp8 and _weight_only_fp8(w, gpu, dense):
        return None  # INF-FP8-WEIGHT-ONLY says how it runs
    if precision in ("bf16", "bf16_amp") and not gpu.supports_bf16 and w.task == Task.inference and gpu.architecture:
        return None  # a named pre-Ampere card serves in FP16 (vLLM --dtype half): the same 2 bytes a weight (INF-FP16)
    if precision in ("bf16", "bf16_amp") and not gpu.supports_bf16:
        if gpu.architecture is None:  # Alibaba states neither the model nor the architecture
            return Text(en=f"BF16 support not stated by Alibaba; the job asks for {precision}",
                        zh=f"阿里云未说明是否支持 BF16，而作业要求 {precision}")
        return Text(en=f"no BF16 support ({gpu.architecture}); the job asks for {precision}",
                    zh=f"不支持 BF16（{gpu.architecture} 架构），而作业要求 {precision}")
    if precision == "fp8" and not gpu.supports_fp8:
        return Text(en="no FP8 support; the job asks for fp8", zh="不支持 FP8，而作业要求 fp8")
    return None


FP16_FOR = {Precision.bf16: Precision.fp16_amp, Precision.bf16_amp: Precision.fp16_amp}  # no pure-fp16 training


def _fp16_instead(w: Workload, gpu: GPU, precision_given: bool) -> Workload | None:
    """The job in FP16 on a GPU without BF16 when the BF16 precision was a default, not the user's: FP16 (with loss
    scaling in AMP) is what such cards train in, e.g. QLoRA's fp16 compute dtype on a T4 or V100."""
    if precision_given or w.task == Task.inference or w.precision not in FP16_FOR or gpu.supports_bf16:
        return None
    if gpu.tflops("fp16") is None:
        return None
    return w.model_copy(update={"precision": FP16_FOR[w.precision]})


def _two_phases(catalog: Catalog, options: list[Candidate], preferred: frozenset[str], deferred: list[GPU],
                rejected: list[Rejection], w: Workload) -> Iterator[GPU]:
    """Every GPU of the catalog; then, of the GPUs deferred meanwhile (no BF16 for a defaulted BF16 job), the ones the
    user asked for, or all of them when no other GPU holds the job; the others are rejected for BF16 as before."""
    yield from catalog.derived("planner_gpus_by_id", lambda: tuple(sorted(catalog.gpus.values(), key=lambda g: g.id)))
    later = list(deferred)
    wanted = [g for g in later if g.id in preferred] if options else later
    for gpu in later:
        if gpu not in wanted:
            reason = _precision_gap(w, gpu)
            if reason is not None:
                rejected.append(Rejection(gpu, reason))
    yield from wanted


def plan(catalog: Catalog, w: Workload, region: str, *, memo: Memo | None = None,
         hosts: dict | None = None, precision_given: bool = True, keep_strategy: bool = False) -> Plan:
    """``memo`` (workload -> memory estimate) and ``hosts`` ((workload, GPUs per node) -> host estimate) may
    carry estimates the caller already made; they are filled in place. ``precision_given`` False: a default BF16 is
    planned in FP16 on GPUs without BF16 (the answer says so) instead of rejecting them. ``keep_strategy``: the user
    stated ``w.distributed`` (training): no plan shards with another strategy (plan/stated.py relaxes it when nothing
    holds the job with it)."""
    training = w.task != Task.inference
    options: list[Candidate] = []
    rejected: list[Rejection] = []
    memo = {} if memo is None else memo
    hosts = {} if hosts is None else hosts
    chains = Chains(keep_strategy and training)
    fp16_chains: dict[Workload, Chains] = {}
    deferred: list[GPU] = []  # GPUs without BF16 that a defaulted BF16 job could run on in FP16
    preferred = resolve_gpu_preference(catalog, w.gpu_preference) if w.gpu_preference else frozenset()
    usable = _usable_types_by_gpu(catalog, training)
    prices = _prices(catalog, region)
    profile = _estimate(memo, w).profile
    dense = not profile.active_params_billion or profile.active_params_billion >= 0.99 * profile.params_billion
    tp_ok = _tensor_parallel_ok(w, profile)
    for gpu in _two_phases(catalog, options, preferred, deferred, rejected, w):
        types, max_per_node = usable.get(gpu.id, ({}, 0))
        if not types or not gpu.memory_gb:
            continue
        job_w, gpu_chains = w, chains
        unsupported = _precision_gap(w, gpu, dense)
        if unsupported is not None:
            fp16 = _fp16_instead(w, gpu, precision_given)
            if fp16 is None:
                rejected.append(Rejection(gpu, unsupported))
                continue
            if gpu not in deferred:
                deferred.append(gpu)  # planned only when asked for or when no BF16 GPU holds the job (_two_phases)
                continue
            job_w, gpu_chains = fp16, fp16_chains.setdefault(fp16, Chains(chains.keep_strategy))
        found = _first_fit(job_w, gpu, max_per_node, memo, gpu_chains, _placeable(job_w, types, max_per_node, tp_ok))
        if found is None:
            rejected.append(Rejection(gpu, Text(
                en=f"does not fit even after every mitigation ({gpu.memory_gb:g} GB per GPU)",
                zh=f"即使采取全部显存优化措施仍放不下（每卡 {gpu.memory_gb:g} GB）")))
            continue
        variant, estimate, tight = found
        variant, estimate, zero3 = _best_stage(job_w, gpu, max_per_node, memo, gpu_chains, variant, estimate, tight)
        cands = _candidates_for(job_w, gpu, types, max_per_node, variant, estimate, prices, hosts, tight)
        if not cands and _layout(variant.gpus, max_per_node, w.num_nodes)[0] > 1:
            # the TCP types of this layout cannot carry its traffic (costing/internode.py): the first fit on layouts
            # with RDMA, or on one instance, instead
            retry = _first_fit(job_w, gpu, max_per_node, memo, gpu_chains,
                               _placeable(job_w, types, max_per_node, tp_ok, rdma_only=True))
            if retry is not None and retry[0] != variant:
                variant, estimate, zero3 = _best_stage(job_w, gpu, max_per_node, memo, gpu_chains, *retry)
                cands = _candidates_for(job_w, gpu, types, max_per_node, variant, estimate, prices, hosts, retry[2])
        for c in cands:
            c.zero3_gib = zero3
        for c in cands:
            c.fp16_for_bf16 = job_w is not w
        if not cands:
            nodes, per_node = _layout(variant.gpus, max_per_node, w.num_nodes)
            if per_node not in types:
                rejected.append(Rejection(gpu, Text(
                    en=f"no instance type carries {per_node} of these GPUs ({nodes} machine(s) × {per_node})",
                    zh=f"没有每台 {per_node} 张该 GPU 的规格（{nodes} 台 × {per_node} 卡）")))
                continue
            if nodes == 1 and variant.workload.cpu_offload:
                rejected.append(Rejection(gpu, Text(
                    en=f"fits only with CPU offload, and no instance type of this GPU has the host RAM it needs "
                       f"({hosts[(variant.workload, per_node)].ram_gib:.0f} GiB)",
                    zh=f"只有 CPU 卸载才放得下，而该 GPU 没有内存足够的规格（需 {hosts[(variant.workload, per_node)].ram_gib:.0f} GiB）")))
                continue
            if not any("training" in t.intended_use_tags for t in types.get(per_node, [])):
                rejected.append(Rejection(gpu, Text(
                    en="needs several instances, but no type of this GPU is positioned for training",
                    zh="需要多台实例，但该 GPU 没有定位于训练的规格")))
                continue
            rejected.append(Rejection(gpu, Text(
                en="needs several instances, whose traffic over plain TCP would make every step at least 1.25x its "
                   "compute at the central estimate (RDMA required), and no type of this GPU has RDMA and is positioned "
                   "for training",
                zh="需要多台实例，其通信走普通 TCP 网络时每步按中间估计至少是纯计算的 1.25 倍（必须 RDMA），而该 GPU 没有既支持 RDMA 又定位于训练的规格")))
            continue
        if w.task == Task.inference and variant.workload.quantization != w.quantization:
            cands += _as_asked(job_w, gpu, types, max_per_node, memo, gpu_chains, hosts, prices, tp_ok)
        if not any(c.price is not None for c in cands):
            wider = _priced_layout(job_w, gpu, types, max_per_node, variant, prices, memo, gpu_chains, hosts, tp_ok)
            for c in wider:
                c.fp16_for_bf16 = job_w is not w
                if w.task == Task.inference:
                    c.fewer = (variant.gpus, estimate.device_total_gib, cands[0].instance.type)
            cands += wider
        options.extend(cands)
    options.sort(key=Candidate.rank_key)
    if preferred:  # the user's GPU leads when it holds the job; the ranking decides among its types
        options.sort(key=lambda c: c.gpu.id not in preferred)
    return Plan(options[0] if options else None, options, rejected, preferred)


__all__ = ["Candidate", "Plan", "Rejection", "plan", "upper_gib", "STEP_AS_GIVEN", "STEP_MORE_NODES", "STEP_OFFLOAD"]
