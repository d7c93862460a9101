"""answer_question: a question in, (ParsedQuestion, Recommendation) out, with no prompting."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.verdict import verdict
from gpu_advisor.ask.parser import parse_question, validate_fields
from gpu_advisor.errors import UnknownModelError


LEAD_ASSUMPTIONS = ("task", "concurrent_users")


def _recommend(workload: Any, lang: str) -> Any:
    """The advisor call; a seam that tests replace with a fake."""
    from gpu_advisor import recommend

    return recommend(workload, lang=lang)


def unresolved_error(parsed: ParsedQuestion, fields: dict[str, Any]) -> UnknownModelError | None:
    """The refusal for a model name the knowledge base does not know, or None when the question can be sized as
    asked: the name resolves, or the question also states the model's size (params_billion), which sizes the named
    model with a generic shape of its own kind and says so."""
    name = fields.get("model")
    for text, kind, close in parsed.unresolved:
        if text != name or fields.get("params_billion") is not None:
            continue
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


def recommend_fields(parsed: ParsedQuestion, fields: dict[str, Any], lang: str) -> Any:
    """Run the advisor on the fields. A model or backbone name the knowledge base does not know is never dropped
    or replaced by the task's typical one: the UnknownModelError (with the closest known names) goes to the caller,
    who refuses (--no-input, MCP, library) or asks (a terminal)."""
    fields = {**fields, "lang": lang}
    refusal = unresolved_error(parsed, fields)
    if refusal is not None:
        raise refusal
    from gpu_advisor.ask.alignment import offline_line, online_refusal

    if fields.get("task") != "inference" and (refusal := online_refusal(parsed.alignment, fields)) is not None:
        raise refusal   # an RL loop with rollouts: its resident states, derived, and what to ask instead
    rec = _recommend(validate_fields(fields), lang)
    if not hasattr(rec, "lead"):
        return rec
    from gpu_advisor.ask.asked import asked_line, window_line
    from gpu_advisor.ask.compare import compare_line, method_compare_line

    def plan_on(f: dict[str, Any]) -> Any:
        return _recommend(validate_fields(f), lang)

    # "how long / how much" first (the figure asked for), then a yes / no verdict, then a comparison
    lines = [t for t in (asked_line(parsed, rec), verdict(parsed, rec), compare_line(parsed, fields, rec, plan_on),
                         method_compare_line(parsed, fields, rec, plan_on)) if t]
    from gpu_advisor.ask.network import no_rdma_line

    if (net := no_rdma_line(parsed, rec)) is not None:   # "没有RDMA": what that means for this job, after the verdict
        lines.insert(1 if lines else 0, net)
    if (window := window_line(parsed, fields, rec, plan_on)) is not None:   # a job longer than a week: also a week's plan
        lines.append(window)
    if (pref := offline_line(parsed.alignment, rec)) is not None:   # DPO / KTO / ORPO: what the method adds
        lines.insert(1 if lines and pref[1] else 0, pref[0])   # first when it no longer fits the lead
    # the parser's assumptions that decide the answer (training or serving, the users served at once) are said with the
    # finding, not only in what-I-understood
    lines += [a.reason for a in parsed.assumed if a.field in LEAD_ASSUMPTIONS]
    return rec if not lines else rec.model_copy(update={"lead": [*lines, *rec.lead]})


def answer_question(text: str, lang: str | None = None) -> tuple[ParsedQuestion, Any]:
    """Parse the question and run the advisor with the parser's stated assumptions (never prompts)."""
    parsed = parse_question(text)
    return parsed, recommend_fields(parsed, parsed.workload_fields, lang or parsed.lang)
