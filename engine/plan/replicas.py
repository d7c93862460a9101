"""Concurrent sequences split over replicas of a model that fits one GPU (or a small tensor-parallel group).

Serving N concurrent sequences of a model whose weights fit one card does not need the model split over GPUs:
vLLM's guidance is "if your model fits in a single GPU, you probably don't need to use distributed inference"
(docs/serving/distributed_serving.md, "How to decide the distributed inference strategy"); more load is served by
more copies behind a load balancer (PAI-EAS instances, vLLM --data-parallel-size). So for every GPU model the
planner offers, each tensor-parallel size t the model's heads allow and a priced type carries is tried with the
concurrency divided over r replicas: r = the fewest copies whose share of the sequences fits each GPU at the
planning estimate. Memory per replica is the estimator's (weights per GPU + the replica's KV cache): nothing is
estimated here. A replica layout is offered only when it is priced and costs less per hour than the option of the
same GPU the chain found; it then ranks with the others (Candidate.replicas multiplies the price).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpu_advisor.plan.ladder import STEP_AS_GIVEN, STEP_SHARD, Variant
from gpu_advisor.plan.planner import (Candidate, Plan, _candidates_for, _estimate, _fits, _prices, _tensor_parallel_ok,
                                      _usable_types_by_gpu, upper_gib)
from gpu_advisor.util.i18n import Text
from gpu_advisor.workload import Distributed, Task

if TYPE_CHECKING:
    from gpu_advisor.kb.catalog import GPU, Catalog
    from gpu_advisor.plan.defaults import Job

TP_SIZES = (1, 2, 4, 8)
MAX_REPLICAS = 64
# a layout of several instances must save at least this share of the hourly price over one instance of the same GPUs
# to lead: at a tie (2 x gn7e-c16g1.8xlarge 138.96 vs one gn7e-c16g1.16xlarge 138.97 CNY/h) one instance with its
# NVLink and no load balancer serves the same sequences
REPLICA_SAVING = 0.01


def _per_replica(job: Job, t: int, share: int, memo: dict) -> Variant:
    w = job.workload
    update = {"batch_size_per_gpu": share, "num_gpus": t}
    if t > 1:
        update["distributed"] = Distributed.zero3   # the serving chain's spelling of "split over the GPUs" (ladder.py)
    return Variant(STEP_AS_GIVEN if t == 1 else STEP_SHARD, w.model_copy(update=update), t)


def _fewest_replicas(job: Job, t: int, gpu: GPU, memo: dict) -> int | None:
    """The fewest replicas of t GPUs whose share of the concurrent sequences fits the card at the planning estimate,
    or None. Memory grows linearly with the sequences (KV cache, logits), so two estimates give the slope and one or
    two more confirm the count."""
    batch = job.workload.batch_size_per_gpu or 1
    gpu_gib = float(gpu.memory_gb or 0)
    one = _estimate(memo, _per_replica(job, t, 1, memo).workload)
    if not _fits(one, gpu, strict=True):
        return None                      # the weights alone do not fit t GPUs
    two = _estimate(memo, _per_replica(job, t, 2, memo).workload)
    slope = max(1e-9, upper_gib(two) - upper_gib(one))
    fit = max(1, int((gpu_gib - upper_gib(one)) / slope) + 1)
    r = max(2, math.ceil(batch / fit))

    def holds(n: int) -> bool:
        return _fits(_estimate(memo, _per_replica(job, t, math.ceil(batch / n), memo).workload), gpu, strict=True)

    for r in range(r, min(r + 3, MAX_REPLICAS + 1, batch + 1)):   # the linear guess, confirmed (at most 3 estimates)
        if holds(r):
            # the slope of the first two sequences overstates the later ones (the allocator slack and the fixed
            # activations are shared): fewer replicas may hold their share too; bisect down to the fewest
            low, high = 2, r
            while low < high:
                mid = (low + high) // 2
                if holds(mid):
                    high = mid
                else:
                    low = mid + 1
            return high
    return None


def _precision_ok(w, gpu: GPU) -> bool:
    """The GPU serves the job's precision (the planner's own check: a pre-Ampere card serves BF16 as FP16)."""
    from gpu_advisor.plan.planner import _precision_gap

    return _precision_gap(w, gpu) is None


def split_concurrency(catalog: Catalog, the_plan: Plan, job: Job, memo: dict, hosts: dict) -> Plan:
    """Add priced replica layouts that serve the concurrent sequences for less than the chain's option of the same
    GPU (in place); the lead line says how the load is divided."""
    w = job.workload
    batch = w.batch_size_per_gpu or 1
    if (w.task != Task.inference or not job.memory.profile.is_llm or batch < 2 or job.original.num_gpus is not None
            or job.original.num_nodes is not None):
        return the_plan
    prices = _prices(catalog, job.region)
    if not prices:
        return the_plan
    tp_ok = _tensor_parallel_ok(w, job.memory.profile)
    usable = _usable_types_by_gpu(catalog, False)
    best: dict[str, float] = {}
    for c in the_plan.options:
        # one replica split over machines sends every layer's tensor-parallel all-reduce over the network: vLLM
        # splits a model over nodes only when one node cannot hold it (docs/serving/distributed_serving.md); so such
        # an option sets no price bar, and replicas that each fit one machine are tried whatever they cost
        hourly = c.hourly if c.hourly is not None and c.nodes <= 1 else math.inf
        best[c.gpu.id] = min(best.get(c.gpu.id, math.inf), hourly)
    if not best:  # no single layout holds all the sequences at once: replicas of any GPU that holds a share
        best = {g: math.inf for g in sorted(usable) if g in catalog.gpus and catalog.gpus[g].memory_gb
                and _precision_ok(w, catalog.gpus[g])}
    # the GPU the user named ("要几张 L20") that no single layout holds: its replicas are tried too, priced or not,
    # since the answer is about that card (the ranking below puts it first, as the planner does)
    wanted = {g for g in the_plan.preferred if g in catalog.gpus and g in usable and catalog.gpus[g].memory_gb
              and _precision_ok(w, catalog.gpus[g])} - {c.gpu.id for c in the_plan.options}
    for g in sorted(wanted):
        best.setdefault(g, math.inf)
    if not best:
        return the_plan
    cheapest = min(best.values())
    by_gpu: dict[str, list[Candidate]] = {}   # per GPU: the layout of the fewest GPUs in all
    for gpu_id in best:
        fewest: int | None = None
        gpu = catalog.gpus[gpu_id]
        types, max_per_node = usable.get(gpu_id, ({}, 0))
        bar = min(best[gpu_id], cheapest)  # a replica layout is worth offering only below the cheapest priced option
        for t in TP_SIZES:
            if t > max_per_node or not tp_ok(t):
                continue
            priced = [prices[x.type].price_per_hour for x in types.get(t, ()) if x.type in prices]
            if gpu_id not in wanted and (not priced or 2 * min(priced) >= bar):
                continue                 # no type of t GPUs, or two of the cheapest already cost more
            if not types.get(t):
                continue
            r = _fewest_replicas(job, t, gpu, memo)
            if r is None:
                continue
            if fewest is not None and r * t >= fewest:
                break                    # a wider group only repeats the weights' share: no fewer GPUs in all
            fewest = r * t
            variant = _per_replica(job, t, math.ceil(batch / r), memo)
            estimate = _estimate(memo, variant.workload)
            layout = _candidates_for(w, gpu, types, max_per_node, variant, estimate, prices, hosts)
            for c in layout:
                c.replicas = r           # before the price test: hourly is the price of all the replicas
            layout = [c for c in layout
                      if gpu_id in wanted or c.hourly is not None and c.hourly < bar * (1 - REPLICA_SAVING)]
            if layout:
                # the KV cache of many long sequences outweighs the weights: a wider tensor-parallel group holds more
                # sequences a GPU, so the next size is tried while it needs fewer GPUs in all
                by_gpu[gpu_id] = layout
    added = [c for layout in by_gpu.values() for c in layout]
    if not added:
        return the_plan
    # a GPU whose replicas each fit one machine is not also offered as one replica split over machines
    the_plan.options = [c for c in the_plan.options if not (c.nodes > 1 and c.gpu.id in by_gpu)]
    the_plan.options.extend(added)
    the_plan.options.sort(key=Candidate.rank_key)
    if the_plan.preferred:
        the_plan.options.sort(key=lambda c: c.gpu.id not in the_plan.preferred)
    the_plan.chosen = the_plan.options[0]
    c = the_plan.chosen
    if c.replicas > 1 and c in added:
        share = c.variant.workload.batch_size_per_gpu
        tp_en = f" (tensor parallel {c.total_gpus})" if c.total_gpus > 1 else ""
        tp_zh = f"（张量并行 {c.total_gpus}）" if c.total_gpus > 1 else ""
        the_plan.deadline_notes.append(Text(
            en=f"{batch} concurrent sequences over {c.replicas} replicas of {c.total_gpus} × {c.gpu.display_name}{tp_en}: "
               f"{c.replicas} × {c.instance.type}, about {share} sequences and {c.estimate.device_total_gib:.1f} GiB per "
               f"GPU each, behind a load balancer (PAI-EAS instances, or vLLM --data-parallel-size). The model fits "
               f"{'one GPU' if c.total_gpus == 1 else f'{c.total_gpus} GPUs'}, so more load takes more copies, not a "
               "larger split of the model.",
            zh=f"{batch} 路并发序列分到 {c.replicas} 个副本，每个副本 {c.total_gpus} 张 {c.gpu.display_name}{tp_zh}："
               f"{c.replicas} 台 {c.instance.type}，每个副本约 {share} 路序列、每卡约 {c.estimate.device_total_gib:.1f} GiB，"
               f"前面加负载均衡（PAI-EAS 多实例，或 vLLM --data-parallel-size）。模型在"
               f"{'一张卡' if c.total_gpus == 1 else f' {c.total_gpus} 张卡'}上就放得下，负载更大时加副本，而不是把模型切得更细。"))
    return the_plan


__all__ = ["split_concurrency"]
