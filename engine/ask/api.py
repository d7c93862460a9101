"""answer_question: a question in, (ParsedQuestion, Recommendation) out, with no prompting."""

from __future__ import annotations

from typing import Any

from gpu_advisor.ask.parsed import Hint, ParsedQuestion
from gpu_advisor.ask.parser import parse_question, validate_fields
from gpu_advisor.errors import UnknownModelError, WorkloadError
from gpu_advisor.util.i18n import Text

NAME_FIELDS = ("model", "backbone")


def _recommend(workload: Any, lang: str) -> Any:
    """The advisor call; a seam that tests replace with a fake."""
    from gpu_advisor import recommend

    return recommend(workload, lang=lang)


def recommend_fields(parsed: ParsedQuestion, fields: dict[str, Any], lang: str) -> Any:
    """Run the advisor on the fields. A model or backbone name read from the question that the knowledge
    base does not know is dropped (the task's typical one is used) and the reason is added to the hints."""
    fields = {**fields, "lang": lang}
    for _ in range(len(NAME_FIELDS) + 1):
        try:
            return _recommend(validate_fields(fields), lang)
        except UnknownModelError as exc:
            field = exc.field if exc.field in NAME_FIELDS else next((f for f in NAME_FIELDS if f in fields), None)
            if field is None or field not in fields:
                raise
            _note_unknown(parsed, field, str(fields.pop(field)), exc)
    raise WorkloadError("model/backbone could not be resolved", "无法识别模型/骨干网络", field="model")


def _note_unknown(parsed: ParsedQuestion, field: str, name: str, exc: UnknownModelError) -> None:
    close = ", ".join(exc.suggestions[:3])
    tail_en = f" Closest known: {close}." if close else ""
    tail_zh = f"最接近的已知名称：{close}。" if close else ""
    parsed.hints.append(Hint("unknown_" + field, name, Text(
        en=f"The knowledge base does not know {field} '{name}'; sized with the task's typical one instead.{tail_en}",
        zh=f"知识库中没有{'模型' if field == 'model' else '骨干网络'}“{name}”，改用该任务的常见配置估算。{tail_zh}")))


def answer_question(text: str, lang: str | None = None) -> tuple[ParsedQuestion, Any]:
    """Parse the question and run the advisor with the parser's stated assumptions (never prompts)."""
    parsed = parse_question(text)
    return parsed, recommend_fields(parsed, parsed.workload_fields, lang or parsed.lang)
