"""Turn the plan and the fired rules into a Recommendation (no decisions here, only bookkeeping)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from gpu_advisor.costing import CostReport
from gpu_advisor.util.i18n import Note, Text, note
from gpu_advisor.plan.ladder import STEP_AMP, STEP_CKPT, STEP_MICROBATCH, STEP_MORE_NODES, STEP_OFFLOAD, STEP_SHARD
from gpu_advisor.plan.planner import Candidate, Plan
from gpu_advisor.answer.recommendation import HostNeeds, Item, Option, Recommendation, TraceEntry
from gpu_advisor.answer.lead import reconcile_assumptions
from gpu_advisor.rules.engine import Firing
from gpu_advisor.rules.loader import PLACEHOLDER
from gpu_advisor.rules.schema import Rule
from gpu_advisor.workload import Task

if TYPE_CHECKING:
    from gpu_advisor.kb.bundle import Knowledge
    from gpu_advisor.plan.defaults import Job

STEP_TEXT = {
    STEP_AMP: Text(en="mixed precision (AMP)", zh="混合精度（AMP）"),
    STEP_CKPT: Text(en="gradient checkpointing", zh="梯度检查点"),
    STEP_MICROBATCH: Text(en="smaller micro-batch + gradient accumulation", zh="减小微批 + 梯度累积"),
    STEP_SHARD: Text(en="ZeRO-3 / FSDP sharding", zh="ZeRO-3 / FSDP 分片"),
    STEP_MORE_NODES: Text(en="more instances (multi-node)", zh="多台实例（多机）"),
    STEP_OFFLOAD: Text(en="CPU offload of the optimizer state and fp32 master weights (ZeRO-3 offload)",
                       zh="把优化器状态与 fp32 主权重卸载到 CPU 内存（ZeRO-3 offload）"),
}
# serving's ladder (ladder.inference_steps): 8-bit weights at the AMP step, tensor parallelism at the sharding step
SERVING_STEP_TEXT = {**STEP_TEXT, STEP_AMP: Text(en="INT8 weights", zh="INT8 权重"),
                     STEP_SHARD: Text(en="tensor parallelism", zh="张量并行")}
# a plan that shards with ZeRO-1 / 2 (ladder.ZERO_STAGES) says which, in DeepSpeed's terms
STAGE_TEXT = {
    "zero1": {**STEP_TEXT, STEP_SHARD: Text(en="ZeRO-1 optimizer-state sharding (DeepSpeed zero_optimization.stage 1)",
                                            zh="ZeRO-1 优化器状态分片（DeepSpeed zero_optimization.stage 1）")},
    "zero2": {**STEP_TEXT, STEP_SHARD: Text(en="ZeRO-2 optimizer-state and gradient sharding (DeepSpeed "
                                               "zero_optimization.stage 2)",
                                            zh="ZeRO-2 优化器状态与梯度分片（DeepSpeed zero_optimization.stage 2）")},
}
for _stage in ("zero1", "zero2"):  # a chain held to a stated ZeRO-1 / 2 offloads the optimizer at that stage (ladder.py)
    STAGE_TEXT[_stage][STEP_OFFLOAD] = Text(
        en=f"CPU offload of the optimizer state and fp32 master weights (DeepSpeed ZeRO-{_stage[-1]} offload_optimizer)",
        zh=f"把优化器状态与 fp32 主权重卸载到 CPU 内存（DeepSpeed ZeRO-{_stage[-1]} offload_optimizer）")
CHUNKED_LOSS_TEXT = Text(en="chunked / fused cross-entropy (Liger, torchtune chunked loss)",
                         zh="分块 / 融合交叉熵（Liger、torchtune 分块损失）")
MAX_ALTERNATIVES = 5


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.0f}" if value == int(value) and abs(value) >= 10 else f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


@lru_cache(maxsize=4096)
def _pieces(template: str) -> tuple[str, ...]:
    """The template split at its placeholders: literal, name, literal, name, ..., literal."""
    return tuple(PLACEHOLDER.split(template))


def interpolate(template: str, facts: dict[str, Any], shown: dict[str, str] | None = None) -> str:
    """Replace {fact} placeholders with fact values; nothing else in the text is interpreted.

    ``shown`` (fact name -> its text) keeps the values already formatted for this fact record: an answer's texts
    show about 35 values, mostly the same few in both languages."""
    pieces = _pieces(template)
    if len(pieces) == 1:
        return template
    shown = {} if shown is None else shown
    out = [pieces[0]]
    for i in range(1, len(pieces), 2):
        name = pieces[i]
        value = shown.get(name)
        if value is None:
            value = shown[name] = fmt(facts[name]) if name in facts else "{" + name + "}"
        out.append(value)
        out.append(pieces[i + 1])
    return "".join(out)


def _text(text: Text, facts: dict[str, Any], shown: dict[str, str] | None = None) -> Text:
    if len(_pieces(text.zh)) == 1 and len(_pieces(text.en)) == 1:
        return text  # no placeholder: the (frozen) text itself
    shown = {} if shown is None else shown
    return Text(zh=interpolate(text.zh, facts, shown), en=interpolate(text.en, facts, shown))


def _shard_added(planned: Any, asked: Any) -> bool:
    """The plan shards the model states where the job as asked did not (ZeRO-3 and FSDP shard alike)."""
    kinds = {getattr(d, "value", d) for d in (planned, asked)}
    return planned != asked and not kinds <= {"zero3", "fsdp"}


def _mitigations(c: Candidate, base: Any) -> list[Text]:
    """The chain's steps this plan actually applies, compared with the job as resolved."""
    w = c.variant.workload
    # more machines than the user stated (two stated machines are the user's layout, not a step to take); sharding
    # over them is said as the multi-node step when that step applies, else as sharding
    more_nodes = c.nodes > max(1, base.num_nodes or 1) and c.variant.step >= STEP_MORE_NODES
    applied = {
        STEP_AMP: (w.precision != base.precision and not c.fp16_for_bf16) or w.quantization != base.quantization,
        STEP_CKPT: bool(w.gradient_checkpointing) and not base.gradient_checkpointing,
        STEP_MICROBATCH: c.variant.accum_steps > 1 and c.variant.step >= STEP_MICROBATCH,
        STEP_SHARD: _shard_added(w.distributed, base.distributed) and not more_nodes,
        STEP_MORE_NODES: more_nodes,
        STEP_OFFLOAD: bool(w.cpu_offload) and not base.cpu_offload,
    }
    texts = SERVING_STEP_TEXT if w.task == Task.inference else STAGE_TEXT.get(getattr(w.distributed, "value", None),
                                                                             STEP_TEXT)
    out = [texts[s] for s in sorted(texts) if s <= c.variant.step and applied[s]]
    # the long-context steps (ladder.py): the chunked loss after the micro-batch, sequence parallelism after sharding
    if w.chunked_loss and not base.chunked_loss:
        at = sum(1 for s in sorted(texts) if s <= min(c.variant.step, STEP_MICROBATCH) and applied[s])
        out.insert(at, CHUNKED_LOSS_TEXT)
    if c.variant.sp > 1:
        out.append(Text(en=f"sequence parallelism over {c.variant.sp} GPUs (DeepSpeed-Ulysses)",
                        zh=f"序列并行 {c.variant.sp} 卡（DeepSpeed-Ulysses）"))
    return out


def _option(c: Candidate, reason: Text, base: Any) -> Option:
    t = c.instance
    return Option(
        instance_type=t.type, family=t.family, gpu_id=c.gpu.id, gpu_display=c.gpu.display_name,
        gpu_memory_gib=float(t.gpu_memory_gb or c.gpu.memory_gb or 0.0), gpus_per_node=c.gpus_per_node,
        nodes=c.nodes, total_gpus=c.total_gpus, replicas=c.replicas, vcpu=t.vcpu, memory_gib=t.memory_gib, rdma=t.rdma,
        fit_step=c.variant.step, mitigations=_mitigations(c, base),
        planned_mem_gib=round(c.estimate.device_total_gib, 2), headroom_pct=c.headroom_pct,
        price_per_hour=c.price_per_hour, currency=c.price.currency if c.price else None,
        price_region=c.price.region if c.price else None, price_source=c.price.source if c.price else None,
        price_as_of=c.price.as_of if c.price else None, reason=reason, source=t.source, as_of=t.as_of)


def _why_not(c: Candidate, best: Candidate, base: Any) -> Text:
    why = _why_not_reason(c, best, base)
    if c.fp16_for_bf16 and not best.fp16_for_bf16:  # said beside the reason: it would not run the job in BF16
        return Text(en=f"fp16, no BF16; {why.en}", zh=f"fp16（不支持 BF16）；{why.zh}")
    return why


def _why_not_reason(c: Candidate, best: Candidate, base: Any) -> Text:
    if c.hourly is None:
        return Text(en="no price in the catalog for this region", zh="目录中没有该地域的价格")
    if c.shortfalls:
        return Text(en="; ".join(s.en for s in c.shortfalls), zh="；".join(s.zh for s in c.shortfalls))
    if best.hourly is not None and c.hourly > best.hourly:
        return Text(en=f"costs {c.hourly:.2f}/h vs {best.hourly:.2f}/h for the recommended option",
                    zh=f"每小时 {c.hourly:.2f}，高于推荐方案的 {best.hourly:.2f}")
    steps = _mitigations(c, base)
    if c.variant.workload.task == Task.inference and SERVING_STEP_TEXT[STEP_SHARD] in steps:
        steps = [t for t in steps if t != SERVING_STEP_TEXT[STEP_SHARD]]   # a layout, not a mitigation
        if not steps:
            return Text(en=f"serves the model over {c.total_gpus} GPUs (tensor parallelism); ranks below the recommended option",
                        zh=f"按张量并行部署到 {c.total_gpus} 张卡上；排在推荐方案之后")
    if not steps:
        return Text(en="fits as configured, but ranks below the recommended option", zh="按原配置放得下，但排在推荐方案之后")
    return Text(en="needs mitigations: " + "; ".join(t.en for t in steps), zh="需要省显存措施：" + "；".join(t.zh for t in steps))


def _alternatives(the_plan: Plan, base: Any) -> list[Option]:
    best = the_plan.chosen
    if best is None:
        return []
    seen = {best.gpu.id}
    out = []
    for c in the_plan.options[1:]:
        if c.gpu.id in seen:
            continue
        seen.add(c.gpu.id)
        out.append(_option(c, _why_not(c, best, base), base))
        if len(out) == MAX_ALTERNATIVES:
            break
    return out


def _choices(kb: Knowledge, firings: list[Firing]) -> dict[str, Any]:
    best: dict[str, tuple[int, Any]] = {}
    for f in firings:
        rule = kb.rules.by_id(f.rule_id)
        for key, value in rule.then.set.items():
            if key not in best or rule.then.priority >= best[key][0]:
                best[key] = (rule.then.priority, value)
    return {key: value for key, (_, value) in sorted(best.items())}


@dataclass(frozen=True)
class _Prepared:
    """What one rule adds to an answer apart from the facts, prepared once per rule base (not once per firing)."""

    rule: Rule
    why_fixed: bool        # the why text has no placeholder: used as it is
    item: Item | None      # the advice item when its text has no placeholder
    asserted: tuple[str, ...]


def _fixed(text: Text) -> bool:
    return len(_pieces(text.zh)) == 1 and len(_pieces(text.en)) == 1


def _prepare(rule: Rule) -> _Prepared:
    advice, section = rule.then.advice, rule.then.section
    item = Item(section=section, rule_id=rule.id, text=advice) if advice is not None and section is not None \
        and _fixed(advice) else None
    return _Prepared(rule, _fixed(rule.why), item, tuple(rule.then.assert_))


def _prepared(kb: Knowledge) -> dict[str, _Prepared]:
    return kb.rules.derived("assemble_prepared", lambda: {r.id: _prepare(r) for r in kb.rules.rules})


def _trace(kb: Knowledge, firings: list[Firing], facts: dict[str, Any]) -> tuple[list[TraceEntry], list[Item]]:
    trace, items = [], []
    prepared = _prepared(kb)
    shown: dict[str, str] = {}
    for f in firings:
        p = prepared[f.rule_id]
        rule = p.rule
        why = rule.why if p.why_fixed else _text(rule.why, facts, shown)
        trace.append(TraceEntry(rule_id=rule.id, title=rule.title, why=why, matched=f.matched,
                                derived=list(f.derived), asserted=list(p.asserted), sources=rule.sources))
        if p.item is not None:
            items.append(p.item)
        elif rule.then.advice is not None and rule.then.section is not None:
            items.append(Item(section=rule.then.section, rule_id=rule.id, text=_text(rule.then.advice, facts, shown)))
    return trace, items


def _dedupe(notes: list[Note]) -> list[Note]:
    seen, out = set(), []
    for n in notes:
        key = (n.code, n.field)
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


def _cpu_instance(kb: Knowledge, job: Job) -> dict[str, Any] | None:
    if not job.cpu_only:
        return None
    need = max(2, job.host.vcpu)
    types = sorted(kb.catalog.cpu_instance_types.values(), key=lambda t: (t.vcpu, t.memory_gib, t.type))
    if not types:
        return None
    fitting = [t for t in types if t.vcpu >= need]
    t = fitting[0] if fitting else max(types, key=lambda t: (t.vcpu, -t.memory_gib))
    count = 1 if fitting else -(-need // t.vcpu)  # several instances when no single type has enough vCPU
    return {"instance_type": t.type, "family": t.family, "vcpu": t.vcpu, "memory_gib": t.memory_gib,
            "instances": count, "vcpu_needed": need, "source": t.source, "as_of": t.as_of}


def assemble(kb: Knowledge, job: Job, the_plan: Plan | None, facts: dict[str, Any], firings: list[Firing],
             lang: str, cost: CostReport | None = None, lead: list[Text] | None = None) -> Recommendation:
    trace, items = _trace(kb, firings, facts)
    chosen = the_plan.chosen if the_plan else None
    warnings = list(job.memory.warnings) + [note(i.rule_id, i.text.en, i.text.zh) for i in items
                                            if i.section in ("warning", "lead")]
    host = None if chosen is None else HostNeeds(vcpu=chosen.vcpu_need, ram_gib=round(chosen.ram_need_gib, 1),
                                                  formula=chosen.host_formula)
    choices = _choices(kb, firings)
    return Recommendation(
        lang=lang, workload=job.workload.model_dump(mode="json", exclude_none=True), tier=choices.get("tier"),
        memory=job.memory, planned_memory=chosen.estimate if chosen else None,
        instance=_option(chosen, _chosen_reason(cost), job.workload) if chosen else None,
        alternatives=_alternatives(the_plan, job.workload) if the_plan else [],
        rejected=[Text(en=f"{r.gpu.display_name}: {r.reason.en}", zh=f"{r.gpu.display_name}：{r.reason.zh}")
                  for r in (the_plan.rejected if the_plan else [])],
        host=host, cpu_instance=_cpu_instance(kb, job), choices=choices, sections=items,
        cost=cost,
        assumptions=reconcile_assumptions(_dedupe(job.assumptions + list(job.memory.assumptions)), chosen, job.workload),
        warnings=_dedupe(warnings), lead=list(lead or []),
        trace=trace, knowledge=_knowledge_info(kb))


def _chosen_reason(cost: CostReport | None) -> Text:
    if cost is not None and cost.why is not None:
        return cost.why
    return Text(en="lowest effective hourly cost among the configurations that fit",
                zh="在放得下的配置中每小时有效成本最低")


def _knowledge_info(kb: Knowledge) -> dict[str, Any]:
    meta = kb.catalog.meta
    return {"version": getattr(meta, "knowledge_version", None), "catalog_compiled_on": getattr(meta, "compiled_on", None),
            "rules": len(kb.rules.active), "rule_files": list(kb.rules.files)}


__all__ = ["assemble", "interpolate", "fmt", "re"]
