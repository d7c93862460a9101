"""The five MCP tools: thin adapters over the gpu_advisor library (no file, shell or network access).

Each handler takes validated input and the answer language and returns (structured output, text).
"""

import difflib
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpu_advisor.answer.recommendation import Recommendation
from gpu_advisor.server.errors import describe_validation
from gpu_advisor.server.registry import ToolInputError, ToolSpec, pre_parse
from gpu_advisor.workload import REGION_PATTERN, Lang, Workload

LangField = Field(None, description="Answer language: zh (Chinese) or en (English). Default: zh.")


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


# ---------------------------------------------------------------- recommend_gpu_config
def recommend_gpu_config(workload: Workload, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor import recommend

    rec = recommend(workload, lang=lang)
    return rec, rec.render(lang)


# ---------------------------------------------------------------- estimate_memory
class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class NoteOut(_Open):
    code: str
    field: str | None = None
    value: Any = None
    text: str


class MemoryAnswer(_Open):
    """Per-GPU memory of the job as configured (no instance chosen), texts in one language."""

    lang: str
    allocated_peak_gib: float = Field(description="peak of torch.cuda.max_memory_allocated, GiB")
    device_total_gib: float = Field(description="what the GPU must hold: allocated peak + CUDA context + allocator slack, GiB")
    breakdown: dict[str, float] = Field(description="GiB per component (weights, gradients, optimizer, activations, ...)")
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
        description="The user's question in Chinese or English, as they wrote it, e.g. "
        "'用 DeepLabV3+ 在 Cityscapes 上训练语义分割，1024x1024，需要什么 GPU？'")
    lang: Lang | None = LangField


class Understood(BaseModel):
    field: str
    value: Any
    matched: str = Field(description="the words of the question it was read from")


class Assumed(BaseModel):
    field: str
    value: Any
    reason: str


class AskNote(BaseModel):
    kind: str
    matched: str
    text: str


class AskAnswer(BaseModel):
    question: str
    lang: str
    understood: list[Understood] = Field(description="workload fields read from the question")
    assumed: list[Assumed] = Field(description="fields the parser filled, and why")
    notes: list[AskNote] = Field(description="things the question said that are not workload fields")
    workload_fields: dict[str, Any]
    recommendation: Recommendation


def ask(value: AskInput, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor.ask import answer_question
    from gpu_advisor.ask.report import render_markdown

    parsed, rec = answer_question(value.question, lang=value.lang.value if value.lang else None)
    lang = rec.lang
    answer = AskAnswer(
        question=parsed.text, lang=lang, workload_fields=parsed.workload_fields, recommendation=rec,
        understood=[Understood(field=u.field, value=u.value, matched=u.matched) for u in parsed.understood],
        assumed=[Assumed(field=a.field, value=a.value, reason=a.reason.get(lang)) for a in parsed.assumed],
        notes=[AskNote(kind=h.kind, matched=h.matched, text=h.text.get(lang)) for h in parsed.hints])
    return answer, render_markdown(parsed, rec, lang)


# ---------------------------------------------------------------- list_instance_types
class CatalogQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    gpu: Annotated[str, Field(min_length=1, max_length=60)] | None = Field(
        None, description="GPU id or name, e.g. 'A10', 'L20', 'T4', 'A100' (matches A100-40GB), 'V100'.")
    min_gpu_memory_gib: Annotated[float, Field(ge=0, le=1024)] | None = Field(None, description="Minimum memory per GPU, GB.")
    gpu_count: Annotated[int, Field(ge=1, le=64)] | None = Field(None, description="Exact number of GPUs per instance, e.g. 1, 4, 8.")
    rdma: bool | None = Field(None, description="true: only instance types with RDMA (eRDMA or InfiniBand-class); false: only without.")
    region: Annotated[str, Field(max_length=32, pattern=REGION_PATTERN.pattern)] | None = Field(
        None, description="Only types priced in this region: 'mainland', 'international' or e.g. 'cn-hangzhou'. "
        "Prices are shown only when a region is given.")
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


def _gpu_matches(query: str, gpu_id: str, display: str) -> bool:
    q = query.lower().removeprefix("nvidia").strip()
    gid = gpu_id.lower()
    return q in (gid, display.lower()) or gid.startswith(q + "-") or q in display.lower().replace("nvidia ", "").split()


def list_instance_types(q: CatalogQuery, lang: str) -> tuple[BaseModel, str]:
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.kb.listing import catalog_rows

    cat = load_catalog()
    region = q.region or ("cn-hangzhou" if q.max_price_per_hour is not None else None)
    rows = catalog_rows(None, q.min_gpu_memory_gib, q.rdma, region)
    if q.gpu:
        known = {g.id: g.display_name for g in cat.gpus.values()}
        if not any(_gpu_matches(q.gpu, gid, name) for gid, name in known.items()):
            close = sorted(known)
            raise ToolInputError(f"gpu：目录中没有 GPU “{q.gpu}”；可选：{'、'.join(close)}" if lang == "zh"
                                 else f"gpu: no GPU '{q.gpu}' in the catalog; known: {', '.join(close)}")
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
             "Recommend an Alibaba Cloud GPU instance type for a training, fine-tuning or inference job, with "
             "memory estimate, alternatives, cost, assumptions and the rules behind every line. Fill the fields "
             "the user stated (task is required); everything else gets a stated default. Returns the full "
             "recommendation as structured content and Markdown in the requested language (lang).",
             Workload, Recommendation, recommend_gpu_config, _workload),
    ToolSpec("estimate_memory", "Estimate GPU memory per card",
             "Estimate the GPU memory per card of a job as configured (weights, gradients, optimizer state, "
             "activations, CUDA context), with the formula and assumptions. Same fields as recommend_gpu_config.",
             Workload, MemoryAnswer, estimate_memory, _workload),
    ToolSpec("ask", "Ask in plain language",
             "Answer a free-text question in Chinese or English about what GPU server to use: returns what was "
             "understood from the question, what was assumed, and the recommendation. Prefer "
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
