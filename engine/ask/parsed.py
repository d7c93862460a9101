"""What the parser understood from a question: ParsedQuestion, and the Scanner that builds it.

The Scanner walks the normalised question with one pattern at a time; a match claims its span so that a
later, looser pattern cannot read the same characters again ("8x A100" is a GPU count, not a resolution).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Iterator, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from gpu_advisor.util.i18n import Text
from gpu_advisor.ask.lexicon import FLAGS, load_lexicon


class Understood(NamedTuple):
    """One field read from the question: the field, the value, and the words it came from."""

    field: str
    value: Any
    matched: str


class Assumed(NamedTuple):
    """A field the parser had to fill to make a valid Workload, and why."""

    field: str
    value: Any
    reason: Text


class Hint(NamedTuple):
    """Something the question says that is not a Workload field (a GPU preference, RAM, a dataset)."""

    kind: str
    matched: str
    text: Text


class Unused(NamedTuple):
    """Words of the question that set no field, and why."""

    matched: str
    why: Text


class ParsedQuestion(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=False)

    text: str
    lang: str
    workload_fields: dict[str, Any] = Field(default_factory=dict)
    understood: list[Understood] = Field(default_factory=list)
    assumed: list[Assumed] = Field(default_factory=list)
    hints: list[Hint] = Field(default_factory=list)
    unused: list[Unused] = Field(default_factory=list)
    # model names the knowledge base does not know: (name, kind llm|vision, closest known names)
    unresolved: list[tuple[str, str, list[str]]] = Field(default_factory=list)
    other_language: bool = False
    # further model names the knowledge base knows, beside the one sized: (registry pool, key, as written)
    other_models: list[tuple[str, str, str]] = Field(default_factory=list)
    alignment: str | None = Field(None, description="a preference / RL method the question names (lexicon alignment)")
    yes_no: bool = Field(False, description="a yes/no question ('单卡够吗？', 'Can I ... on one A10?'): the verdict leads")

    def stated(self) -> set[str]:
        """Fields the question itself gave (not assumed)."""
        return {u.field for u in self.understood}


def normalise(text: str) -> str:
    """NFKC (full-width digits and punctuation become ASCII), unify the multiplication sign, squeeze spaces."""
    # a full-width comma separates clauses, never thousands ("batch 2，300 个 epoch"): keep it a clause break
    text = unicodedata.normalize("NFKC", text.replace("，", ", "))
    text = text.replace("×", "x").replace("✕", "x").replace("＊", "*")
    return re.sub(r"\s+", " ", text).strip()


CLAUSE_MARKS = ",，。;；!?！？()（）"


class _Taken(list):  # type: ignore[type-arg]
    """Claimed (start, end) spans, mirrored in a per-character mask so that a freedom check costs the span's length,
    not the number of spans (a 4,000-character question of "8卡" repeated claimed 2,000 spans: quadratic)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.mask = bytearray(size + 1)

    def append(self, span: tuple[int, int]) -> None:  # type: ignore[override]
        super().append(span)
        start, end = max(0, span[0]), min(len(self.mask), span[1])
        if end > start:
            self.mask[start:end] = b"\x01" * (end - start)


class Scanner:
    """Accumulates fields, understood items and hints while claiming spans of the question."""

    def __init__(self, text: str) -> None:
        self.text = normalise(text)
        self.taken: _Taken = _Taken(len(self.text))
        self.fields: dict[str, Any] = {}
        self.understood: list[Understood] = []
        self.hints: list[Hint] = []
        self.resolved: dict[str, tuple[str, str]] = {}     # field -> (pool, key) of a known name
        self.unresolved: list[Any] = []                     # vocab.Unresolved: names the knowledge base lacks
        self.unused: list[Unused] = []

    def reset_text(self, text: str) -> None:
        """The text to read instead (misspelt task verbs read as the verbs, gpu_advisor.ask.typos); before any claim."""
        assert not self.taken, "reset_text after a span was claimed"
        self.text = text
        self.taken = _Taken(len(text))

    def note_unused(self, matched: str, en: str, zh: str) -> None:
        """A stated value that sets no field, and why (shown in what-I-understood; nothing is dropped silently)."""
        self.unused.append(Unused(matched.strip(), Text(en=en, zh=zh)))

    def _free(self, start: int, end: int) -> bool:
        return not any(self.taken.mask[start:end])

    def matches(self, pattern: str | re.Pattern[str]) -> Iterator[re.Match[str]]:
        """Matches of pattern that do not overlap a claimed span, left to right."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, FLAGS)
        for m in regex.finditer(self.text):
            if m.end() > m.start() and self._free(m.start(), m.end()):
                yield m

    def first(self, pattern: str | re.Pattern[str]) -> re.Match[str] | None:
        return next(self.matches(pattern), None)

    def claim(self, m: re.Match[str]) -> None:
        self.taken.append((m.start(), m.end()))

    def has(self, name: str) -> bool:
        return name in self.fields

    def set(self, name: str, value: Any, m: re.Match[str] | str, claim: bool = True) -> bool:
        """Record a field unless it is already known (the first statement wins). Returns True if set."""
        if isinstance(m, re.Match) and claim:
            self.claim(m)
        matched = m.group(0).strip() if isinstance(m, re.Match) else m
        if name in self.fields:
            if self.fields[name] != value and not name.startswith("_") and isinstance(m, re.Match) and self.switched(m):
                self._replace_stated(name, value, matched)
                return True
            if self.fields[name] != value and not name.startswith("_") and isinstance(m, re.Match) and claim:
                first = next((u.matched for u in self.understood if u.field == name), "")
                self.note_unused(matched, f"{name} was already read as {self.fields[name]!r} from '{first}'; the first "
                                 "statement is used", f"{name} 已按“{first}”读作 {self.fields[name]!r}；以第一次的说法为准")
            return False
        self.fields[name] = value
        self.understood.append(Understood(name, value, matched))
        return True

    def switched(self, m: re.Match[str]) -> bool:
        """The match sits in a clause that changes an earlier value ("那用两张卡呢", "换成 int4", "2 GPUs instead"):
        the lexicon's switch_to cue, in the match's clause and outside the match."""
        lo = max((self.text.rfind(c, 0, m.start()) for c in CLAUSE_MARKS), default=-1) + 1
        ends = [i for i in (self.text.find(c, m.end()) for c in CLAUSE_MARKS) if i >= 0]
        hi = min(ends, default=len(self.text))
        cue = load_lexicon().keywords["switch_to"]
        return any(c.end() <= m.start() or c.start() >= m.end()
                   for c in cue.finditer(self.text, lo, hi))

    def _replace_stated(self, name: str, value: Any, matched: str) -> None:
        """A later value the question switches to replaces the earlier one, which is said back as replaced."""
        old = self.fields[name]
        first = next((u.matched for u in self.understood if u.field == name), str(old))
        self.note_unused(first, f"{name}: {old!r} replaced by {value!r} ('{matched}'): the question changes it",
                         f"{name}：{old!r} 已改为 {value!r}（“{matched}”）：问题中改用了后者")
        self.fields[name] = value
        self.understood[:] = [Understood(name, value, matched) if u.field == name else u for u in self.understood]

    def hint(self, kind: str, m: re.Match[str], en: str, zh: str, claim: bool = True) -> None:
        if claim:
            self.claim(m)
        self.hints.append(Hint(kind, m.group(0).strip(), Text(en=en, zh=zh)))
