"""Bilingual text: every sentence the advisor shows exists in zh and en."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, SerializationInfo, model_serializer


class Text(BaseModel):
    """One sentence in both languages."""

    # Dumped as {"zh": ..., "en": ...}; dumped with context={"lang": "zh" | "en"} it is the one string in that
    # language: the MCP tools publish one language, in one pass instead of a dump and a walk over the dump
    # (a recommendation: 0.76 -> 0.28 ms, server/registry.py structured()). The JSON schema stays the model's
    # (__get_pydantic_json_schema__).

    model_config = ConfigDict(frozen=True)

    zh: str
    en: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    @model_serializer(mode="plain")
    def _one_language(self, info: SerializationInfo) -> Any:
        context = info.context
        if context is not None and "lang" in context:
            return self.zh if context["lang"] == "zh" else self.en
        return {"zh": self.zh, "en": self.en}

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        """The object schema in both modes (the serializer above would make it "any" in serialization mode)."""
        if handler.mode == "serialization" and core_schema.get("type") == "model":
            return {**handler(core_schema["schema"]), "title": cls.__name__, "description": cls.__doc__}
        return handler(core_schema)


class Note(BaseModel):
    """An assumption or a warning: which field it concerns, the value used, and the sentence."""

    model_config = ConfigDict(frozen=True)

    code: str
    field: str | None = None
    value: Any = None
    text: Text

    def get(self, lang: str) -> str:
        return self.text.get(lang)


# Values whose type and equality say everything the JSON shows. Not 0.0: -0.0 == 0.0 but prints "-0.0".
_SCALARS = (str, int, bool, float, type(None))


def note(code: str, en: str, zh: str, field: str | None = None, value: Any = None) -> Note:
    """A Note; one with a scalar value is shared with earlier identical ones (Note is frozen).

    An answer makes about 30 notes, most of them the same sentences each estimate and each answer repeats (the
    defaults filled in, where the peak is): looking them up costs less than validating two models."""
    kind = type(value)
    if kind in _SCALARS and not (kind is float and value == 0.0):
        return _shared_note(code, en, zh, field, value, kind)
    return Note(code=code, field=field, value=value, text=Text(en=en, zh=zh))


@lru_cache(maxsize=4096)
def _shared_note(code: str, en: str, zh: str, field: str | None, value: Any, kind: type) -> Note:
    return Note(code=code, field=field, value=value, text=Text(en=en, zh=zh))


@lru_cache(maxsize=1)
def messages() -> dict[str, Any]:
    """prompts/messages.yaml: the headings and labels of an answer in both languages (read once)."""
    from importlib import resources

    from gpu_advisor.util import yamlio

    return yamlio.safe_load((resources.files("gpu_advisor.prompts") / "messages.yaml").read_text(encoding="utf-8"))


def section_label(section: str, lang: str) -> str:
    """The heading of an answer section (messages.yaml ``sections``), or its key when it has none."""
    return messages()["sections"].get(section, {}).get(lang, section)
