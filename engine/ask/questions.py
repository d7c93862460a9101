"""The follow-up planner: which missing fields to ask about, in which order, with choices, a default and
a why-text; and reading an answer typed at a question."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

from gpu_advisor.util import yamlio
from gpu_advisor.ask.parsed import ParsedQuestion, Scanner
from gpu_advisor.errors import KnowledgeError, WorkloadError
from gpu_advisor.util.i18n import Text
from gpu_advisor.workload import Workload

QUESTIONS_FILE = "ask/questions.yaml"
YES = {"y", "yes", "true", "是", "是的", "可以", "能", "对", "好"}
NO = {"n", "no", "false", "否", "不", "不可以", "不能", "不行"}


@dataclass(frozen=True)
class Choice:
    value: Any
    label: Text


@dataclass(frozen=True)
class Question:
    field: str
    label: Text
    text: Text
    why: Text
    changes: tuple[str, ...]
    choices: tuple[Choice, ...]
    default: Any
    covered_by: tuple[str, ...] = ()

    def default_label(self, lang: str) -> str:
        for choice in self.choices:
            if choice.value == self.default:
                return choice.label.get(lang)
        return str(self.default)


@dataclass(frozen=True)
class QuestionBook:
    max_questions: int
    order: dict[str, tuple[str, ...]]
    group_of: dict[str, str]
    questions: dict[str, Question]


def _question(field: str, raw: dict[str, Any]) -> Question:
    try:
        choices = tuple(Choice(_tuple(c["value"]), Text(en=str(c["en"]), zh=str(c["zh"]))) for c in raw["choices"])
        default = _tuple(raw["default"]) if "default" in raw else choices[0].value
        en = Workload.model_fields[field].description or str(raw["label"]["en"])
        return Question(field, Text(**raw["label"]), Text(en=en, zh=str(raw["zh"])), Text(**raw["why"]),
                        tuple(raw.get("changes", [])), choices, default, tuple(raw.get("covered_by", [])))
    except (KeyError, TypeError, IndexError) as exc:
        raise KnowledgeError(f"{QUESTIONS_FILE}: questions.{field}: missing or malformed key {exc}",
                             f"{QUESTIONS_FILE}：questions.{field}：缺少或格式错误的键 {exc}") from exc


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@lru_cache(maxsize=1)
def load_questions() -> QuestionBook:
    raw = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath(QUESTIONS_FILE).read_text(encoding="utf-8"))
    questions = {field: _question(field, q) for field, q in raw["questions"].items()}
    for field in questions:
        if field not in Workload.model_fields:
            raise KnowledgeError(f"{QUESTIONS_FILE}: questions.{field}: not a Workload field",
                                 f"{QUESTIONS_FILE}：questions.{field}：不是 Workload 字段")
    group_of = {task: group for group, tasks in raw["groups"].items() for task in tasks}
    order = {group: tuple(fields) for group, fields in raw["order"].items()}
    return QuestionBook(int(raw["max_questions"]), order, group_of, questions)


def plan_questions(parsed: ParsedQuestion, limit: int | None = None) -> list[Question]:
    """The missing fields that change the answer most, for the question's task, most important first."""
    book = load_questions()
    stated = parsed.stated()
    assumed = {a.field for a in parsed.assumed}
    group = book.group_of.get(str(parsed.workload_fields.get("task")), "cv")
    planned = []
    for field in book.order.get(group, ()):
        q = book.questions[field]
        if field == "task" and field not in assumed:
            continue
        if field in stated or any(other in stated for other in q.covered_by):
            continue
        planned.append(q)
    return planned[: limit if limit is not None else book.max_questions]


class AnswerError(ValueError):
    """The typed answer could not be read; the message says what is expected."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


def parse_answer(q: Question, answer: str) -> Any:
    """A choice letter (a, b, ...), a choice label, or a free value ("1024x1024", "5万张", "7B", "bf16", "yes")."""
    answer = answer.strip()
    letter = answer.lower()
    if len(letter) == 1 and "a" <= letter < chr(ord("a") + len(q.choices)):
        return q.choices[ord(letter) - ord("a")].value
    for choice in q.choices:
        if answer.lower() in (choice.label.en.lower(), choice.label.zh.lower(), str(choice.value).lower()):
            return choice.value
    value = _from_text(q.field, answer)
    if value is None:
        raise AnswerError(Text(en=f"Could not read '{answer}' as {q.label.en}; type a choice letter or a value.",
                               zh=f"无法把“{answer}”理解为{q.label.zh}；请输入选项字母或具体数值。"))
    _check(q.field, value)
    return value


def _from_text(field: str, text: str) -> Any:
    from gpu_advisor.ask.keywords import run_keywords
    from gpu_advisor.ask.numeric import run_numeric

    s = Scanner(text)
    run_keywords(s)
    run_numeric(s)
    if field in s.fields:
        return _tuple(s.fields[field])
    return _plain(field, text)


def _plain(field: str, text: str) -> Any:
    """A bare value for the field's type: '768' -> (768, 768) for input_size, 'yes' -> True, a name for model."""
    low = text.lower()
    number = re.fullmatch(r"\d+(?:\.\d+)?", text)
    if number and len(text) > 300:  # more digits than a float holds: an integer the range check refuses, not inf
        text = text.split(".")[0][:4000]
    if field == "input_size" and number:
        return (_whole(text), _whole(text))
    if field == "interruptible":
        return True if low in YES else False if low in NO else None
    if field in ("model", "backbone"):
        return text
    if number:
        annotation = str(Workload.model_fields[field].annotation)
        return _whole(text) if "int" in annotation and "float" not in annotation else float(text)
    return None


def _whole(text: str) -> int:
    return int(text) if text.isdigit() else int(float(text))


def _check(field: str, value: Any) -> None:
    """Range-check one value with the Workload's own validators."""
    try:
        Workload.model_validate({"task": "inference", field: value})
    except Exception as exc:  # pydantic.ValidationError, reported in both languages
        raise AnswerError(Text(en=f"{field}: {value!r} is not accepted ({_first_msg(exc)}).",
                               zh=f"{field}：{value!r} 不被接受（{_first_msg(exc)}）。")) from None


def _first_msg(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    return str(errors()[0].get("msg")) if callable(errors) else str(exc)


def apply_answers(parsed: ParsedQuestion, answers: dict[str, Any]) -> dict[str, Any]:
    """The workload fields with the answers merged in (None answers leave the advisor's default)."""
    fields = dict(parsed.workload_fields)
    for field, value in answers.items():
        if value is None:
            if field == "task":
                continue
            fields.pop(field, None)
        else:
            fields[field] = list(value) if isinstance(value, tuple) else value
    return fields


__all__ = ["Question", "Choice", "plan_questions", "parse_answer", "apply_answers", "AnswerError", "WorkloadError"]
