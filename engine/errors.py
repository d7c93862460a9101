"""A small error hierarchy. Every message names the field (or file + rule id + key) and says how to fix it,
in Chinese and English."""

from __future__ import annotations

from typing import Any


class AdvisorError(Exception):
    """Base of every error gpu-advisor raises on purpose."""

    code = "advisor_error"

    def __init__(self, en: str, zh: str | None = None, *, field: str | None = None,
                 suggestions: list[str] | None = None) -> None:
        super().__init__(en)
        self.en = en
        self.zh = zh or en
        self.field = field
        self.suggestions = list(suggestions or [])

    def message(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else self.en

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        return {"code": self.code, "message": self.message(lang), "field": self.field,
                "suggestions": self.suggestions}


class WorkloadError(AdvisorError):
    """The user's workload is invalid: a field is missing, of the wrong type or out of range."""

    code = "invalid_workload"


class UnknownModelError(WorkloadError):
    """A model or backbone name did not resolve; suggestions list the closest known names."""

    code = "unknown_model"


class KnowledgeError(AdvisorError):
    """A knowledge file is malformed: the message names the file, the entry id and the key."""

    code = "invalid_knowledge"


class EngineError(AdvisorError):
    """The rule engine failed; durable-rules errors are translated into this."""

    code = "engine_error"
