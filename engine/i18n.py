"""Bilingual text: every sentence the advisor shows exists in zh and en."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Text(BaseModel):
    """One sentence in both languages."""

    model_config = ConfigDict(frozen=True)

    zh: str
    en: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


class Note(BaseModel):
    """An assumption or a warning: which field it concerns, the value used, and the sentence."""

    model_config = ConfigDict(frozen=True)

    code: str
    field: str | None = None
    value: Any = None
    text: Text

    def get(self, lang: str) -> str:
        return self.text.get(lang)


def note(code: str, en: str, zh: str, field: str | None = None, value: Any = None) -> Note:
    return Note(code=code, field=field, value=value, text=Text(en=en, zh=zh))
