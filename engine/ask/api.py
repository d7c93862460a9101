"""answer_question: a question in, (ParsedQuestion, Recommendation) out, with no prompting."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.verdict import verdict
from gpu_advisor.ask.parser import parse_question, validate_fields
from gpu_advisor.errors import UnknownModelError
from gpu_advisor.util.i18n import Text
from gpu_advisor.workload import enum_value


LEAD_ASSUMPTIONS = ("task", "concurrent_users")
LEAD_HINTS = ("text_length", "daily_average")   # "回答平均 300 字" read as tokens: the ratio is said with the finding


def _recommend(workload: Any, lang: str) -> Any:
    """The advisor call; a seam that tests replace with a fake."""
    from gpu_advisor import recommend
    from gpu_advisor.ask.exclude import EXCLUDED, knowledge_without

    if ids := EXCLUDED.get():   # GPUs the question rules out: planned on the catalog without them
        return recommend(workload, lang=lang, knowledge=knowledge_without(ids))
    return recommend(workload, lang=lang)


def unresolved_error(parsed: ParsedQuestion, fields: dict[str, Any]) -> UnknownModelError | None:
    """The refusal for a model name the knowledge base does not know, or None when the question can be sized as
    asked: the name resolves, or the question also states the model's size (params_billion), which sizes the named
    model with a generic shape of its own kind and says so."""
    name = fields.get("model")
    for text, kind, close in parsed.unresolved:
        if text != name or fields.get("params_billion") is not None:
            continue
        from gpu_advisor.kb.models import not_derived_error

        if kind == "llm" and (refusal := not_derived_error(text)) is not None:
            return refusal   # a model the knowledge base knows, whose architecture it does not derive: the reason
        what_en = {"llm": "language model", "encoder": "text-embedding / reranker model"}.get(kind, "vision model")
        what_zh = {"llm": "语言模型", "encoder": "文本向量 / 重排序模型"}.get(kind, "视觉模型")
        text_kind = kind in ("llm", "encoder")
        near_en = f" Closest known: {', '.join(close[:5])}." if close else ""
        near_zh = f"最接近的已知模型：{'、'.join(close[:5])}。" if close else ""
        return UnknownModelError(
            f"model: the knowledge base has no {what_en} named '{text}', and gpu-advisor does not size a job with "
            f"another model in its place.{near_en} To proceed, name one of those, or state the model's parameter count "
            f"in the question (e.g. '{text}, N B parameters', or --params-billion with recommend) to size '{text}' with a generic "
            f"{'transformer' if text_kind else 'vision'} shape.",
            f"模型：知识库中没有名为“{text}”的{what_zh}，gpu-advisor 不会用别的模型代替它来估算。{near_zh}"
            f"请改用其中一个模型名，或在问题中给出该模型的参数量（如“{text}，N B 参数”，或 recommend 的 --params-billion），"
            f"按通用{'Transformer' if text_kind else '视觉'}结构估算“{text}”。",
            field="model", suggestions=list(close[:5]))
    return None


def _lines(t: Any) -> list[Any]:
    """A lead Text that holds several lines (verdict.LEAD_BREAK in both languages) as one Text per line."""
    from gpu_advisor.ask.verdict import LEAD_BREAK
    from gpu_advisor.util.i18n import Text

    en, zh = t.en.split(LEAD_BREAK), t.zh.split(LEAD_BREAK)
    if len(en) == 1 or len(en) != len(zh):
        return [t]
    return [Text(en=e, zh=z) for e, z in zip(en, zh)]


def recommend_fields(parsed: ParsedQuestion, fields: dict[str, Any], lang: str) -> Any:
    """_without_excluded with an offline preference method's compute per sample (DPO: two sequences and a reference
    forward) in every time and cost the advisor gives for this question."""
    from gpu_advisor.ask.alignment import compute_factor
    from gpu_advisor.costing.timing import SAMPLE_COMPUTE

    factor = compute_factor(parsed.alignment, fields.get("finetune_method")) \
        if fields.get("task") != "inference" else (1.0, None)
    token = SAMPLE_COMPUTE.set(factor)
    try:
        return _without_excluded(parsed, fields, lang)
    finally:
        SAMPLE_COMPUTE.reset(token)


def _without_excluded(parsed: ParsedQuestion, fields: dict[str, Any], lang: str) -> Any:
    """Run the advisor on the fields. A model or backbone name the knowledge base does not know is never dropped
    or replaced by the task's typical one: the UnknownModelError (with the closest known names) goes to the caller,
    who refuses (--no-input, MCP, library) or asks (a terminal)."""
    from gpu_advisor.ask.exclude import EXCLUDED, excluded_ids

    token = EXCLUDED.set(excluded_ids(parsed))
    try:
        return _recommend_fields(parsed, fields, lang)
    finally:
        EXCLUDED.reset(token)


def _recommend_fields(parsed: ParsedQuestion, fields: dict[str, Any], lang: str) -> Any:
    fields = {**fields, "lang": lang}
    from gpu_advisor.ask.followup import follow_up_error

    refusal = follow_up_error(parsed) or unresolved_error(parsed, fields)
    if refusal is not None:
        raise refusal
    from gpu_advisor.ask.alignment import offline_line, online_refusal

    if fields.get("task") != "inference" and (refusal := online_refusal(parsed.alignment, fields)) is not None:
        raise refusal   # an RL loop with rollouts: its resident states, derived, and what to ask instead
    rec = _recommend(validate_fields(fields), lang)
    if not hasattr(rec, "lead"):
        return rec
    fields, rec, one = one_machine(parsed, fields, rec, lang)
    from gpu_advisor.ask.alignment import with_offline_method

    # DPO / KTO / ORPO: what the method adds, said first; its extras in the per-GPU figures when they still fit
    pref = offline_line(parsed.alignment, rec)
    if pref is not None and not pref[1] and not fields.get("distributed") and rec.planned_memory is not None \
            and enum_value(rec.planned_memory.profile.job.distributed, "none") not in ("zero3", "fsdp"):
        # the method's frozen reference does not fit beside ZeRO-1/2's whole-per-GPU copy: ZeRO-3 shards it too
        sharded = _recommend(validate_fields({**fields, "distributed": "zero3"}), lang)
        line = offline_line(parsed.alignment, sharded) if hasattr(sharded, "lead") else None
        if line is not None and line[1]:
            from gpu_advisor.ask.alignment import _OfflineLine

            was = enum_value(rec.planned_memory.profile.job.distributed, "ddp")
            text = Text(en=f"Sized with ZeRO-3 / FSDP, not stated: under {was} the frozen reference model stays whole on "
                           f"every GPU and the job does not fit; ZeRO-3 shards it like the policy. " + line[0].en,
                        zh=f"按 ZeRO-3 / FSDP 估算（未说明）：在 {was} 下冻结的参考模型每卡一整份，放不下；ZeRO-3 把它与策略模型"
                           "一并分片。" + line[0].zh)
            rec, pref = sharded, _OfflineLine(text, True, line.ref_gpu, line.act)
    rec = with_offline_method(pref, rec)
    from gpu_advisor.ask.asked import asked_line, count_line, memory_line, window_line
    from gpu_advisor.ask.billing import billing_line, budget_route_line, platform_line, savings_line
    from gpu_advisor.ask.capacity import capacity_line
    from gpu_advisor.ask.compare import compare_line, method_compare_line, method_default_line, strategy_compare_line
    from gpu_advisor.ask.scaleout import scale_out
    from gpu_advisor.ask.colocate import colocated_line, concurrency_line, draft_line, draft_plan

    def plan_on(f: dict[str, Any]) -> Any:
        return _recommend(validate_fields(f), lang)

    rec = draft_plan(parsed, fields, rec, plan_on)   # a named speculative draft is sized into the plan

    # "how long / how much" first (the figure asked for), then a yes / no verdict, then a comparison
    together = colocated_line(parsed, rec) or draft_line(parsed, rec)   # both models, not the first one alone
    # a long training job asked "how many GPUs": the scale-out line says the fewest that hold it and the time on more,
    # which is what the plain count line would say first; with its 30-day plan, no second assumed window is added
    scale, month_plan = scale_out(parsed, fields, rec, plan_on)
    from gpu_advisor.ask.verdict import owned_card

    # "How many H20 do I need": the count on the card named (off the catalog) first, the catalog's plan after it
    named_first = owned_card(parsed) is not None and not together
    said_verdict = None if together else verdict(parsed, rec)
    counted = None if scale else count_line(parsed, rec)
    lines = [t for t in (capacity_line(parsed, fields, rec, plan_on), memory_line(parsed, fields, rec, plan_on),
                         savings_line(parsed, fields, rec, plan_on), asked_line(parsed, rec), together,
                         said_verdict if named_first else counted, concurrency_line(parsed, rec),
                         counted if named_first else said_verdict,
                         method_default_line(parsed, fields, rec, plan_on), budget_route_line(parsed, fields, rec, plan_on), compare_line(parsed, fields, rec, plan_on),
                         method_compare_line(parsed, fields, rec, plan_on), strategy_compare_line(parsed, fields, rec, plan_on), billing_line(parsed, rec),
                         platform_line(parsed, rec), scale) if t]
    from gpu_advisor.ask.verdict import SPOT_YES_EN

    said = [t for t in lines if SPOT_YES_EN in t.en]
    if said and not _asks_commitment(parsed):   # the spot verdict gave both totals: the billing line repeats them
        bill = billing_line(parsed, rec)
        lines = [t for t in lines if bill is None or t.en != bill.en]
    from gpu_advisor.ask.network import no_rdma_line, rdma_asked_first, rdma_question_line

    # "没有RDMA": what that means for this job; "需要 RDMA 吗": the inter-node verdict; after the verdict / figure
    if (net := no_rdma_line(parsed, rec)) is not None:
        lines.insert(1 if lines else 0, net)
    elif (net := rdma_question_line(parsed, rec)) is not None:   # first when the question opens with it
        lines.insert(0 if rdma_asked_first(parsed) else min(1, len(lines)), net)
    from gpu_advisor.ask.verdict import limits_line

    from gpu_advisor.ask.exclude import excluded_line

    if (ruled_out := excluded_line(parsed, rec)) is not None:   # "不要用 A100": said first (after a yes / no verdict)
        lines.insert(1 if parsed.yes_no and lines else 0, ruled_out)
    from gpu_advisor.ask.latency import ttft_line, user_speed_line

    for said in (user_speed_line(parsed, rec), ttft_line(parsed, rec)):   # stated targets: met or not, after the verdict
        if said is not None:
            lines.insert(min(1, len(lines)), said)
    if (limits := limits_line(parsed, rec, [*lines, *rec.lead])) is not None:   # a budget / deadline said back
        lines.append(limits)
    if not month_plan and (window := window_line(parsed, fields, rec, plan_on)) is not None:   # a job longer than a week: also a week's plan
        lines.append(window)
    if pref is not None:   # DPO / KTO / ORPO: what the method adds
        lines.insert(1 if lines and pref[1] else 0, pref[0])   # first when it no longer fits the lead
    if one is not None:   # "不用多机": the single-machine plan, said first
        lines.insert(0, one)
    lines = [part for t in lines for part in _lines(t)]
    # the parser's assumptions that decide the answer (training or serving, the users served at once) are said with the
    # finding, not only in what-I-understood
    lines += [a.reason for a in parsed.assumed if a.field in LEAD_ASSUMPTIONS]
    lines += [h.text for h in parsed.hints if h.kind in LEAD_HINTS]   # a conversion that set a field: its ratio
    lines += _default_model_line(parsed, fields, rec)
    return rec if not lines else rec.model_copy(update={"lead": [*lines, *rec.lead]})


def one_machine(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any, lang: str) -> tuple[dict[str, Any], Any, Any]:
    """"不用多机", "single machine only" (lexicon single_node): a plan on several machines is replanned on one
    (num_nodes 1: the planner's full machine, or its note that none holds the job); the line that says so, or None."""
    from gpu_advisor.util.i18n import Text

    if not any(h.kind == "single_node" for h in parsed.hints) or fields.get("num_nodes") is not None:
        return fields, rec, None
    inst = getattr(rec, "instance", None)
    nodes = inst.total_gpus // max(1, inst.gpus_per_node) if inst is not None else 1
    if nodes <= 1:
        if parsed.yes_no and inst is not None:
            return fields, rec, Text(en="Yes, one machine is enough: the plan below fits in one instance.",
                                     zh="可以，一台机器即可：下面的方案在一台实例内。")
        return fields, rec, Text(en="One machine, as asked: the plan below fits in one instance.",
                                 zh="按要求只用一台机器：下面的方案在一台实例内即可。")
    one = {**fields, "num_nodes": 1}
    rec = _recommend(validate_fields(one), lang)
    return one, rec, Text(en=f"One machine, as asked: the cheapest plan needed {nodes} machines; the plan below is the one "
                             "on a single instance (num_nodes 1).",
                          zh=f"按要求只用一台机器：最便宜的方案需要 {nodes} 台；下面是单台实例的方案（num_nodes 1）。")


def _asks_commitment(parsed: ParsedQuestion) -> bool:
    """A subscription / long-term question: the billing line says more than spot and pay-as-you-go."""
    from gpu_advisor.ask.lexicon import load_lexicon

    cue = load_lexicon().keywords.get("subscription_question")
    return cue is not None and cue.search(parsed.text) is not None


LANGUAGE_TASKS = ("llm_finetune", "llm_pretrain", "inference")


def _default_model_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any) -> list[Any]:
    """"我想跑个大模型，买什么服务器", "那如果并发 100 个用户呢": no model and no size named, so the typical model of the task
    decides the memory, the GPUs and the price. That is said with the finding, not only among the assumptions (when the
    task itself was assumed, the task's line says it already)."""
    from gpu_advisor.util.i18n import Text

    if fields.get("model") or fields.get("backbone") or fields.get("params_billion") is not None \
            or fields.get("task") not in LANGUAGE_TASKS:
        return []   # a vision backbone served ("classify 2M images with ResNet-50") names its model too
    if any(a.field == "task" for a in parsed.assumed):
        return []
    from gpu_advisor.ask.capacity import wants_capacity

    if wants_capacity(parsed, fields):   # the capacity line says what the named GPU holds instead
        return []
    assumed = next((a for a in rec.assumptions if a.field == "model"), None)
    if assumed is None:
        return []
    name = str(assumed.value)
    from gpu_advisor.kb.models import knowledge

    spec = knowledge().transformers.get(name)
    shown = spec.display if spec is not None else name
    table_en = " The scenario table below shows other sizes." if rec.scenarios else ""
    table_zh = "其他规模见下方“按场景”。" if rec.scenarios else ""
    return [Text(en=f"No model named: sized with {shown}, the typical model for this task; the model's size decides the "
                    f"memory, the GPU count and the price, so name it (e.g. Qwen2.5-7B, -32B, -72B).{table_en}",
                 zh=f"问题中没有指定模型：按该任务的典型模型 {shown} 估算；模型大小决定显存、卡数和价格，请说明要用的模型"
                    f"（如 Qwen2.5-7B / 32B / 72B）。{table_zh}")]


def answer_question(text: str, lang: str | None = None) -> tuple[ParsedQuestion, Any]:
    """Parse the question and run the advisor with the parser's stated assumptions (never prompts)."""
    parsed = parse_question(text)
    return parsed, recommend_fields(parsed, parsed.workload_fields, lang or parsed.lang)
