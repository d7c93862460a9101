"""Question and answer: ask in Chinese or English, get follow-up questions, see why.

``parse_question(text)`` reads a question into Workload fields; ``answer_question(text, lang)`` also runs
the advisor. The CLI (``gpu-advisor ask``) is in ``gpu_advisor.cli.ask``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["parse_question", "answer_question", "ParsedQuestion"]


def __getattr__(name: str) -> Any:
    if name in ("parse_question", "ParsedQuestion"):
        from gpu_advisor.ask import parser

        return getattr(parser, name)
    if name == "answer_question":
        from gpu_advisor.ask.api import answer_question

        return answer_question
    raise AttributeError(f"module 'gpu_advisor.ask' has no attribute {name!r}")


if TYPE_CHECKING:  # pragma: no cover
    from gpu_advisor.ask.api import answer_question
    from gpu_advisor.ask.parser import ParsedQuestion, parse_question
