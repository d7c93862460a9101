"""The five MCP tools: thin adapters over the gpu_advisor library (no file, shell or network access).

Each handler takes validated input and the answer language and returns (structured output, text).
"""

import difflib
import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer

from gpu_advisor.server.errors import describe_validation
from gpu_advisor.server.registry import ToolInputError, ToolSpec, pre_parse
from gpu_advisor.workload import REGION_PATTERN, Lang, Workload

LangField = Field(None, description="Answer language: zh or en. Default: the question's language (ask), else zh.")

# What detail="brief" (the default) leaves out, by name: sections=[...] adds them to the brief answer.
SECTIONS = ("memory", "cost", "plan", "assumptions", "rules", "trace", "scenarios", "workload")
Detail = Literal["brief", "full"]
Section = Literal["memory", "cost", "plan", "assumptions", "rules", "trace", "scenarios", "workload"]
DETAIL_DESCRIPTION = "brief (default): the decision and its reasons. full: the whole answer (large)."
SECTIONS_DESCRIPTION = "Parts of the full answer to add: memory breakdown, cost per option, plan (all options), etc."


class AnswerOptions(BaseModel):
    """detail / sections: how much of the answer to return (recommend_gpu_config, ask)."""

    model_config = ConfigDict(extra="forbid")

    detail: Detail = Field("brief", description=DETAIL_DESCRIPTION)
    sections: Annotated[list[Section], Field(max_length=len(SECTIONS))] = Field(
        default_factory=list, description=SECTIONS_DESCRIPTION)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


def _answer_options(arguments: dict[str, Any], lang: str) -> tuple[dict[str, Any], AnswerOptions]:
    """(the arguments less detail / sections, those two validated)."""
    rest = {k: v for k, v in arguments.items() if k not in AnswerOptions.model_fields}
    given = pre_parse({k: v for k, v in arguments.items() if k in AnswerOptions.model_fields}, AnswerOptions)
    try:
        return rest, AnswerOptions.model_validate(given)
    except ValidationError as exc:
        raise ToolInputError(describe_validation(exc, AnswerOptions, lang)[0]) from None


# Type errors that gpu_advisor.validation words only in English (pydantic's text): worded here instead.
_TYPE_ERRORS = {"int_parsing", "int_type", "int_from_float", "float_parsing", "float_type", "bool_parsing",
                "bool_type", "string_type", "tuple_type", "list_type", "dict_type", "model_type"}


def _workload(arguments: dict[str, Any], lang: str) -> Workload:
    """Validate with the library (its messages name the field and the allowed range / choices)."""
    from gpu_advisor.validation import workload_from_dict

    arguments = pre_parse(arguments, Workload)
    try:
        return Workload.model_validate(arguments)
    except ValidationError as exc:
        if exc.errors()[0]["type"] in _TYPE_ERRORS:
            raise ToolInputError(describe_validation(exc, Workload, lang)[0]) from None
    return workload_from_dict(arguments)


def _with_fields(name: str, base: type[BaseModel], **fields: Any) -> type[BaseModel]:
    from pydantic import create_model

    return create_model(name, __base__=base, **fields)


# What recommend_gpu_config publishes as its input: the Workload's fields, detail and sections (validated apart).
RecommendInput = _with_fields(
    "RecommendInput", Workload,
    detail=(Detail, Field("brief", description=DETAIL_DESCRIPTION)),
    sections=(Annotated[list[Section], Field(max_length=len(SECTIONS))],
              Field(default_factory=list, description=SECTIONS_DESCRIPTION)))

# estimate_memory takes every Workload field too; its schema names the common ones and points at recommend_gpu_config
# for the rest, so that tools/list carries the Workload's schema once.
_SAME = "As in recommend_gpu_config."


class MemoryInput(BaseModel):
    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": True})

    task: Workload.model_fields["task"].annotation = Field(description=Workload.model_fields["task"].description)  # type: ignore[valid-type]
    model: str | None = Field(None, description=_SAME)
    params_billion: float | None = Field(None, description=_SAME)
    input_size: list[int] | None = Field(None, description=_SAME)
    seq_len: int | None = Field(None, description=_SAME)
    batch_size_per_gpu: int | None = Field(None, description=_SAME)
    num_gpus: int | None = Field(None, description=_SAME)
    lang: Lang | None = LangField


class RecommendRequest(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    workload: Workload
    options: AnswerOptions


def _recommend_request(arguments: dict[str, Any], lang: str) -> RecommendRequest:
    rest, options = _answer_options(arguments, lang)
    return RecommendRequest(workload=_workload(rest, lang), options=options)


# The Workload's field descriptions as tools/list publishes them: what a model needs to fill the field (the
# allowed values are in the schema's enum), shorter than the library's, which also document the estimator.
DESCRIPTIONS = {
    "task": "What the job does (inference: serving a model).",
    "stage": "finetune (pretrained weights), pretrain (from scratch), serve or prototype. Default: from the task.",
    "precision": "Numeric precision (bf16 = pure bf16). Default: fp32 for CNN training, bf16 for LLMs.",
    "optimizer": "Default: sgd_momentum (CNN), adamw.",
    "distributed": "Multi-GPU strategy. Default: ddp when num_gpus > 1.",
    "finetune_method": "LLM / NLP fine-tuning method. Default: full.",
    "lora_targets": "Layers LoRA adapts, e.g. ['q_proj', 'v_proj'] or ['all-linear']. Default: every linear layer.",
    "chunked_loss": "Cross-entropy computed in chunks (torchtune chunked loss, Liger / Unsloth)? Default: no.",
    "activation_offloading": "Activations offloaded to CPU memory during the forward (torchtune, Unsloth)? Default: no.",
    "cpu_offload": "Model states kept in CPU memory (FSDP CPUOffload, DeepSpeed offload)? Default: no.",
    "framework": "Training code (changes what QLoRA keeps in memory). Default: transformers for LLMs.",
    "num_classes": "Number of classes. Default: the dataset's usual one.",
    "gpu_preference": "A GPU the user wants, e.g. 'A10', 'L20', 'V100 32GB': checked whether it holds the job.",
    "region": "'mainland', 'international' or a region id like 'cn-hangzhou'. Default: cn-hangzhou.",
    "pytorch_version": "PyTorch major.minor. Default: 2.4.",
    "lang": "Answer language: zh or en. Default: zh.",
    "num_nodes": "Machines the GPUs span ('2 nodes x 8 GPUs': 2; num_gpus is the total).",
    "training_tokens_billion": "Training tokens in billions ('100B tokens': 100).",
    "requests_per_second": "Serving load in requests/s: sizes replicas.",
    "kv_cache_dtype": "LLM serving KV cache precision. Default: 16-bit.",
    "expert_parallel": "MoE: GPUs the experts are split over. Default: 1.",
    "quantization": "Weight format (nf4 with qlora). Default: none; serving: the checkpoint's.",
    "model": "Model as written, e.g. 'Mask R-CNN', 'Llama 3.1 8B', 'Qwen/Qwen3-8B'.",
    "params_billion": "Size in billions for a model not in the knowledge base (7 for 7B).",
    "input_size": "Input image [height, width], e.g. [1024, 1024]. Default: the model's crop.",
    "seq_len": "Tokens per sequence (inference: prompt + output). Default: 2048 LLM, 512 BERT.",
    "batch_size_per_gpu": "Micro-batch per GPU (inference: concurrent requests). Default: usual.",
    "num_samples": "Training samples (images or sequences). Default: from dataset_size_gb or the task.",
    "dataset_size_gb": "Dataset size on disk, GB.",
    "deadline_hours": "Hours by which the job must finish: adds GPUs / machines.",
    "expected_months_of_use": "Months the capacity is used (savings plans). Default: under 1.",
    "concurrent_users": "Serving: users or requests in flight at once.",
    "output_tokens": "LLM serving: output tokens per request (in seq_len), e.g. 500.",
}


# ---------------------------------------------------------------- recommend_gpu_config
class Reason(BaseModel):
    rule_id: str
    text: str


class BriefOption(BaseModel):
    instance_type: str
    gpu: str
    total_gpus: int
    gpu_memory_gb: float | None
    price_per_hour: float | None
    currency: str | None
    why: str | None = None


class BriefInstance(BaseModel):
    gpu: str
    total_gpus: int
    gpu_memory_gb: float | None
    price_per_hour: float | None
    currency: str | None
    gpus_per_node: int
    nodes: int
    vcpu: int
    ram_gib: float
    needed_per_gpu_gib: float | None = Field(description="GPU memory the plan needs per GPU")
    headroom_pct: float | None
    mitigations: list[str]
    price_region: str | None
    price_as_of: str | None


class TotalCost(BaseModel):
    low: float | None
    high: float | None
    currency: str | None
    basis: str = Field(description="job, or month (serving)")
    hours_low: float | None
    hours_high: float | None


class ScenarioBrief(BaseModel):
    label: str
    instance_type: str | None
    total_gpus: int
    needed_per_gpu_gib: float | None
    price_per_hour: float | None


class RecommendAnswer(_Open):
    """The decision; sections add their parts by name."""

    lang: str
    lead: list[str] = Field(default_factory=list, description="say first")
    instance_type: str | None = Field(description="the recommended instance type (null: none fits, or CPU only)")
    instance: BriefInstance | None
    cpu_instance: dict[str, Any] | None = None
    total_cost: TotalCost | None = Field(description="pay-as-you-go")
    misses: list[str] = Field(default_factory=list, description="stated budget / deadline it does not meet")
    tier: str | None
    reasons: list[Reason]
    would_change: list[str]
    assumptions: list[str] = Field(description="defaults that matter")
    more_assumptions: int
    alternatives: list[BriefOption]
    knowledge_version: str | None
    catalog_compiled_on: str | None
    scenarios: list[ScenarioBrief] | None = None
    full: dict[str, Any] | None = Field(None, description="detail=full")

    @model_serializer(mode="wrap")
    def _without_absent_parts(self, handler: Any) -> Any:
        data = handler(self)
        for key in ("lead", "scenarios", "full", "cpu_instance", "misses"):
            if key in data and not data[key]:
                del data[key]
        return data


def _sections(full: dict[str, Any], sections: list[str]) -> dict[str, Any]:
    """The named parts of a full recommendation dump."""
    parts = {"memory": ("memory", "planned_memory"), "cost": ("cost",),
             "plan": ("instance", "alternatives", "rejected", "host", "cpu_instance", "choices"),
             "assumptions": ("assumptions", "warnings"), "rules": ("sections",), "trace": ("trace",),
             "scenarios": ("scenarios",), "workload": ("workload",)}
    out: dict[str, Any] = {}
    for name in dict.fromkeys(sections):
        keys = parts[name]
        out[name] = full.get(keys[0]) if len(keys) == 1 else {k: full.get(k) for k in keys}
    return out


def recommendation_answer(rec: Any, lang: str, options: AnswerOptions) -> tuple[dict[str, Any], str]:
    """(structured content, text) of a Recommendation as the tools return it."""
    from gpu_advisor.answer.brief import brief, brief_text
    from gpu_advisor.server.registry import structured

    data = brief(rec, lang)
    if options.detail == "full":
        data["full"] = structured(rec, lang)
        return data, rec.render(lang)
    text = brief_text(rec, lang, data)
    if options.sections:
        extra = _sections(structured(rec, lang), options.sections)
        data.update(extra)
        text += "".join(f"\n\n### {name}\n```json\n{json.dumps(value, ensure_ascii=False, separators=(',', ':'))}\n```"
                        for name, value in extra.items())
    return data, text


def recommend_gpu_config(request: RecommendRequest, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor import recommend

    rec = recommend(request.workload, lang=lang)
    data, text = recommendation_answer(rec, lang, request.options)
    return RecommendAnswer.model_validate(data), text


# ---------------------------------------------------------------- estimate_memory
class NoteOut(_Open):
    code: str
    field: str | None = None
    value: Any = None
    text: str


class MemoryAnswer(_Open):
    """Per-GPU memory of the job as configured."""

    lang: str
    allocated_peak_gib: float = Field(description="torch.cuda.max_memory_allocated")
    device_total_gib: float = Field(description="+ CUDA context and allocator slack")
    breakdown: dict[str, float] = Field(description="GiB per component")
    assumptions: list[NoteOut]
    warnings: list[NoteOut]
    formula: str
    sources: list[str]
    profile: dict[str, Any]


def estimate_memory(workload: Workload, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor.memory import estimate_memory as estimate

    data = estimate(workload).to_dict(lang)["memory"]
    answer = MemoryAnswer(lang=lang, **data)
    zh = lang == "zh"
    lines = [f"**{'单卡显存估算' if zh else 'GPU memory per card'}: {answer.device_total_gib:.2f} GiB** "
             f"({'分配峰值' if zh else 'allocated peak'} {answer.allocated_peak_gib:.2f} GiB)", "",
             f"| {'组成' if zh else 'Component'} | GiB |", "|---|---:|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in answer.breakdown.items()]
    lines += ["", answer.formula]
    from gpu_advisor.answer.render import md_escape  # notes quote user-given names: Markdown / HTML made inert

    lines += [f"- {'假设' if zh else 'Assumed'}: {md_escape(n.text)}" for n in answer.assumptions]
    lines += [f"- {'注意' if zh else 'Warning'}: {md_escape(n.text)}" for n in answer.warnings]
    return answer, "\n".join(lines)


# ---------------------------------------------------------------- ask
class AskInput(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    question: Annotated[str, Field(min_length=1, max_length=2000)] = Field(
        description="The user's question (Chinese or English) as written, e.g. "
        "'训练语义分割 DeepLabV3+，1024x1024，需要什么 GPU？'")
    lang: Lang | None = LangField
    detail: Detail = Field("brief", description=DETAIL_DESCRIPTION)
    sections: Annotated[list[Section], Field(max_length=len(SECTIONS))] = Field(
        default_factory=list, description=SECTIONS_DESCRIPTION)


class AskAnswer(BaseModel):
    lang: str
    understood: dict[str, Any] = Field(description="workload fields read from the question")
    assumed: dict[str, Any] = Field(description="fields the parser had to fill (the recommendation states more)")
    notes: list[str] = Field(description="what the question said that is not a workload field")
    recommendation: dict[str, Any] = Field(description="the answer, with the fields of recommend_gpu_config's")


def _field_list(fields: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in fields.items())


def ask(value: AskInput, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor.ask import answer_question
    from gpu_advisor.ask.report import render_markdown
    from gpu_advisor.answer.render import md_escape

    parsed, rec = answer_question(value.question, lang=value.lang.value if value.lang else lang)
    lang = rec.lang
    options = AnswerOptions(detail=value.detail, sections=value.sections)
    data, text = recommendation_answer(rec, lang, options)
    understood = {u.field: u.value for u in parsed.understood}
    assumed = {a.field: a.value for a in parsed.assumed}
    # what the question said that sized nothing (a second model, a number without a field) is said back, never dropped
    notes = [h.text.get(lang) for h in parsed.hints] + [
        f"“{u.matched}”{'：' if lang == 'zh' else ': '}{u.why.get(lang)}" for u in parsed.unused]
    answer = AskAnswer.model_validate(dict(lang=lang, understood=understood, assumed=assumed, notes=notes,
                                       recommendation=data))
    if options.detail == "full":
        return answer, render_markdown(parsed, rec, lang)
    zh = lang == "zh"
    head = [f"{'读到' if zh else 'Understood'}: {md_escape(_field_list(understood)) or '-'}"]
    if assumed:
        head.append(f"{'解析时假设' if zh else 'Assumed by the parser'}: {md_escape(_field_list(assumed))}")
    head += [f"{'注意' if zh else 'Note'}: {md_escape(n)}" for n in notes]
    return answer, "\n".join(head) + "\n\n" + text


# ---------------------------------------------------------------- list_instance_types
class CatalogQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    gpu: Annotated[str, Field(min_length=1, max_length=60)] | None = Field(
        None, description="GPU name, e.g. 'A10', 'L20', 'T4', 'A100', 'V100 32GB', or memory for GPUs Alibaba does "
        "not name, e.g. '80GB'.")
    min_gpu_memory_gib: Annotated[float, Field(ge=0, le=1024)] | None = Field(None, description="Minimum memory per GPU, GB.")
    gpu_count: Annotated[int, Field(ge=1, le=64)] | None = Field(None, description="Exact number of GPUs per instance, e.g. 1, 4, 8.")
    rdma: bool | None = Field(None, description="true: only instance types with RDMA (eRDMA or InfiniBand-class); false: only without.")
    region: Annotated[str, Field(max_length=32, pattern=REGION_PATTERN.pattern)] | None = Field(
        None, description="Only types priced in this region ('mainland', 'international', 'cn-hangzhou', ...); "
        "prices need a region.")
    max_price_per_hour: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        None, description="Highest pay-as-you-go price per instance-hour, CNY (implies region cn-hangzhou when no region is given).")
    limit: Annotated[int, Field(ge=1, le=200)] = Field(50, description="Most rows to return (cheapest first when priced).")
    lang: Lang | None = LangField


class InstanceRow(_Open):
    instance_type: str
    family: str
    vcpu: int
    memory_gib: float
    gpu_count: float | None
    gpu_model: str
    gpu_id: str
    gpu_memory_gib: float | None
    rdma: str
    status: str
    price_per_hour: float | None
    currency: str | None
    source: str | None
    as_of: str | None


class InstanceList(BaseModel):
    knowledge_version: str
    catalog_compiled_on: str
    region: str | None
    total: int = Field(description="rows that matched (before limit)")
    instance_types: list[InstanceRow]


def _squash(text: str) -> str:
    """'NVIDIA A100 40 GB' / 'a100-40gb' / 'A100 40G' -> 'a10040g'."""
    return re.sub(r"[\s\-_()]", "", text.lower().removeprefix("nvidia").strip()).replace("gb", "g")


def gpu_names(gpu_id: str, display: str) -> list[str]:
    """How people write this GPU: the NVIDIA model ('A10'), with its memory where a model comes in several sizes
    ('A100 40GB', 'V100 32GB'); for a GPU Alibaba does not name, its memory ('80GB')."""
    words = display.replace("NVIDIA ", "").replace(",", " ").split()
    at = next((i for i, (w, nxt) in enumerate(zip(words, [*words[1:], ""])) if w.isdigit() and nxt.startswith("GB")),
              None)
    memory = f"{words[at]}GB" if at is not None else None
    if display.startswith("NVIDIA ") and "not named" not in display:
        # the model's words before its memory, without form-factor words: 'RTX 5880', 'V100' (of 'V100 SXM2 32 GB')
        model = " ".join(w for w in words[:at] if not w.startswith(("SXM", "PCIe", "("))) if at else words[0]
        return [model, f"{model} {memory}"] if memory else [model]
    return [memory] if memory else []


def _gpu_matches(query: str, gpu_id: str, display: str) -> bool:
    q = query.lower().removeprefix("nvidia").strip()
    memory_only = re.fullmatch(r"(\d+)\s*g(?:b|ib)?", q)
    if memory_only:  # '80GB': every GPU of that memory, named or not
        return re.search(rf"(?<![\d.]){memory_only.group(1)} GB", display) is not None
    gid = gpu_id.lower()
    if q in (gid, display.lower()) or gid.startswith(q + "-") or q in display.lower().replace("nvidia ", "").split():
        return True
    return _squash(query) in {_squash(name) for name in gpu_names(gpu_id, display)}


def _people_names(cat: Any) -> list[str]:
    """The GPU names to suggest: as people write them, never the catalog's internal ids."""
    names: list[str] = []
    for g in cat.gpus.values():
        written = gpu_names(g.id, g.display_name)
        if not written:
            continue
        names.append(written[-1] if len(written) > 1 and sum(
            gpu_names(o.id, o.display_name)[:1] == written[:1] for o in cat.gpus.values()) > 1 else written[0])
    return sorted(dict.fromkeys(names), key=lambda n: (not n[0].isalpha(), n))


def list_instance_types(q: CatalogQuery, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.kb.listing import catalog_rows

    cat = load_catalog()
    region = q.region or ("cn-hangzhou" if q.max_price_per_hour is not None else None)
    rows = catalog_rows(None, q.min_gpu_memory_gib, q.rdma, region)
    if q.gpu:
        known = {g.id: g.display_name for g in cat.gpus.values()}
        if not any(_gpu_matches(q.gpu, gid, name) for gid, name in known.items()):
            close = _people_names(cat)
            raise ToolInputError(f"gpu：目录中没有 GPU “{q.gpu[:40]}”；可选：{'、'.join(close)}" if lang == "zh"
                                 else f"gpu: no GPU '{q.gpu[:40]}' in the catalog; known: {', '.join(close)}")
        rows = [r for r in rows if _gpu_matches(q.gpu, r["gpu_id"], r["gpu_model"])]
    if q.gpu_count is not None:
        rows = [r for r in rows if r["gpu_count"] is not None and r["gpu_count"] == q.gpu_count]
    if q.max_price_per_hour is not None:
        rows = [r for r in rows if r["price_per_hour"] is not None and r["price_per_hour"] <= q.max_price_per_hour]
    if region:
        rows.sort(key=lambda r: (r["price_per_hour"] is None, r["price_per_hour"] or 0.0))
    out = InstanceList(knowledge_version=cat.meta.knowledge_version, catalog_compiled_on=cat.meta.compiled_on,
                       region=region, total=len(rows), instance_types=[InstanceRow(**r) for r in rows[:q.limit]])
    return out, _instance_table(out, lang)


def _instance_table(out: InstanceList, lang: str) -> str:
    zh = lang == "zh"
    head = (f"{out.total} 个实例规格（目录 {out.catalog_compiled_on}，知识库 {out.knowledge_version}）" if zh else
            f"{out.total} instance types (catalog {out.catalog_compiled_on}, knowledge {out.knowledge_version})")
    if out.total > len(out.instance_types):
        head += f"，显示前 {len(out.instance_types)} 个" if zh else f", first {len(out.instance_types)} shown"
    cols = ["实例规格", "GPU", "卡数", "每卡 GB", "vCPU", "内存 GiB", "RDMA", "每小时价格"] if zh else \
        ["instance type", "GPU", "GPUs", "GB/GPU", "vCPU", "RAM GiB", "RDMA", "price/hour"]
    lines = [head, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in out.instance_types:
        price = f"{r.price_per_hour:g} {r.currency}" if r.price_per_hour is not None else "—"
        cells = [f"`{r.instance_type}`", r.gpu_model, f"{r.gpu_count:g}" if r.gpu_count is not None else "—",
                 f"{r.gpu_memory_gib:g}" if r.gpu_memory_gib is not None else "—", str(r.vcpu), f"{r.memory_gib:g}",
                 r.rdma, price]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- explain_rule
class RuleQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    rule_id: Annotated[str, Field(min_length=1, max_length=40)] = Field(
        description="A rule id as shown in a recommendation's [brackets] or trace, e.g. 'TIER-ENTRY', 'NET-RDMA-001'.")
    lang: Lang | None = LangField


class RuleExplanation(_Open):
    lang: str
    id: str
    title: str
    when: list[dict[str, Any]] = Field(description="conditions, all of which must hold (field, op, value)")
    derived: list[str]
    asserts: list[str]
    sets: dict[str, Any]
    advice: str | None
    why: str
    sources: list[str]
    since: str


def explain_rule(q: RuleQuery, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor.advisor import get_knowledge
    from gpu_advisor.kb.listing import rule_summary

    zh = lang == "zh"
    rules = get_knowledge().rules
    rule = rules.by_id(q.rule_id.upper())
    if rule is None:
        close = difflib.get_close_matches(q.rule_id.upper(), [r.id for r in rules.rules], n=5, cutoff=0.4)
        tail = ("；最接近：" + "、".join(close) if zh else "; closest: " + ", ".join(close)) if close else ""
        raise ToolInputError((f"rule_id：没有规则“{q.rule_id}”" if zh else f"rule_id: no rule '{q.rule_id}'") + tail)
    out = RuleExplanation(lang=lang, **rule_summary(rule, lang))
    conds = "\n".join(f"- `{c.get('field')} {c.get('op')} {c.get('value')!r}`" for c in out.when) or "-"
    text = "\n".join([f"### {out.id} — {out.title}", "", out.why, "",
                      f"**{'条件（全部满足）' if zh else 'When (all hold)'}**", conds, "",
                      *([f"**{'建议' if zh else 'Advice'}**: {out.advice}", ""] if out.advice else []),
                      f"**{'来源' if zh else 'Sources'}**", *[f"- {s}" for s in out.sources]])
    if "{" in out.why + (out.advice or ""):
        text += "\n\n" + ("花括号中的值在规则触发时由具体任务填入。" if zh else "Values in {braces} are filled from the job when the rule fires.")
    return out, text



# The five tools. server/tools.json publishes them: after a change here run tools/gen_tool_schemas.py (a test fails
# until it is run).
SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec("recommend_gpu_config", "Recommend a GPU server configuration",
             "Recommend an Alibaba Cloud GPU instance type for a training, fine-tuning or inference job. Fill only "
             "the fields the user stated (task is required); the rest get defaults that the answer states. Returns "
             "the decision first (instance, GPUs, memory per GPU vs the card, price and total), the reasons with "
             "rule ids, what would change it, key assumptions and two alternatives; detail or sections for more.",
             RecommendInput, RecommendAnswer, recommend_gpu_config, _recommend_request, DESCRIPTIONS),
    ToolSpec("estimate_memory", "Estimate GPU memory per card",
             "Estimate the GPU memory per card of a job as configured (weights, gradients, optimizer state, "
             "activations, CUDA context), with the formula and assumptions. Takes the same fields as "
             "recommend_gpu_config (task required); the schema lists the common ones.",
             MemoryInput, MemoryAnswer, estimate_memory, _workload, {"task": DESCRIPTIONS["task"]}),
    ToolSpec("ask", "Ask in plain language",
             "Answer a free-text question in Chinese or English about what GPU server to use: what was read from "
             "the question, and the recommendation (same answer as recommend_gpu_config). Prefer "
             "recommend_gpu_config when you can fill the fields yourself.",
             AskInput, AskAnswer, ask),
    ToolSpec("list_instance_types", "List GPU instance types",
             "List Alibaba Cloud GPU instance types from the dated catalog, filtered by GPU model, memory per "
             "GPU, GPU count, RDMA, region and maximum hourly price.",
             CatalogQuery, InstanceList, list_instance_types),
    ToolSpec("explain_rule", "Explain a rule",
             "Show one knowledge-base rule (its id appears in brackets in a recommendation): its text, "
             "conditions and sources.",
             RuleQuery, RuleExplanation, explain_rule),
)}
