"""Bilingual text: every sentence the advisor shows exists in zh and en."""

from __future__ import annotations

from functools import lru_cache
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
