"""The keyword and alias tables of the question parser, loaded once from knowledge/ask/lexicon.yaml,
and the number words shared by the extractors (Arabic digits, Chinese numerals, 万/亿/k/M multipliers)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import Any

from gpu_advisor.util import yamlio
from gpu_advisor.errors import KnowledgeError

LEXICON_FILE = "ask/lexicon.yaml"
FLAGS = re.IGNORECASE | re.ASCII  # ASCII: \b works between "训练" and "llm"


@dataclass(frozen=True)
class Entry:
    """One table row: the value it yields and the compiled pattern that recognises it."""

    value: str
    pattern: re.Pattern[str]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Lexicon:
    tasks: tuple[Entry, ...]
    keywords: dict[str, re.Pattern[str]]
    unsupported: tuple[Entry, ...]
    gpus: re.Pattern[str]
    enums: dict[str, tuple[Entry, ...]]
    regions: tuple[Entry, ...]
    families: tuple[Any, ...] = ()
    alignment: tuple[Entry, ...] = ()   # preference / RL methods (gpu_advisor.ask.alignment)


ENUM_TABLES = ("precision", "finetune_method", "quantization", "optimizer", "framework", "distributed")


def _compile(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, FLAGS)
    except re.error as exc:
        raise KnowledgeError(f"{LEXICON_FILE}: {where}: bad pattern {pattern!r}: {exc}",
                             f"{LEXICON_FILE}：{where}：正则表达式无效 {pattern!r}：{exc}") from exc


def _entries(rows: list[dict[str, Any]], key: str, section: str) -> tuple[Entry, ...]:
    out = []
    for i, row in enumerate(rows):
        where = f"{section}[{i}]"
        if key not in row or ("pattern" not in row and "patterns" not in row):
            raise KnowledgeError(f"{LEXICON_FILE}: {where}: needs '{key}' and 'pattern'",
                                 f"{LEXICON_FILE}：{where}：缺少 '{key}' 或 'pattern'")
        pattern = row.get("pattern") or "|".join(f"(?:{p})" for p in row["patterns"])
        extra = {k: v for k, v in row.items() if k not in (key, "pattern", "patterns")}
        out.append(Entry(str(row[key]), _compile(pattern, where), extra))
    return tuple(out)


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    raw = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath(LEXICON_FILE).read_text(encoding="utf-8"))
    keywords = {name: _compile("|".join(f"(?:{p})" for p in pats), f"keywords.{name}")
                for name, pats in raw["keywords"].items()}
    return Lexicon(
        tasks=_entries(raw["tasks"], "task", "tasks"),
        keywords=keywords,
        unsupported=_entries(raw["unsupported"], "name", "unsupported"),
        gpus=_compile(_gpu_pattern(raw.get("gpus_not_in_catalog", [])), "gpus"),
        enums={name: _entries(raw[name], "value", name) for name in ENUM_TABLES},
        regions=_entries(raw["regions"], "id", "regions"),
        families=_families(raw.get("families", [])),
        alignment=_entries(raw.get("alignment", []), "method", "alignment"),
    )


def _gpu_pattern(others: list[str]) -> str:
    """GPU names: the catalog's named GPUs ("A100-40GB" is written "A100") and the names people use for cards the
    catalog does not list by name; longest first."""
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.kb.owned_gpus import owned_gpu_names

    named = {re.escape(g.id.split("-")[0].lower()) for g in load_catalog().gpus.values() if g.named_by_alibaba}
    # the cards people own that the catalog lacks (knowledge/owned_gpus.yaml): one vocabulary with the verdict's
    alternatives = sorted(named | set(others) | set(owned_gpu_names()), key=len, reverse=True)
    return rf"(?<![a-wyz\d])(?P<gpu>{'|'.join(alternatives)})(?!\d)"


@dataclass(frozen=True)
class Family:
    """A model-family word of the lexicon (families:): an LLM or a vision family, for names the registry lacks."""
    word: str
    kind: str            # llm | vision
    pattern: re.Pattern[str]
    task: str | None = None  # the task a name of this family implies when the registry lacks it (yolo: detection)
    # a longer name that starts with a known alias and is another network ("SAM 2" after "SAM"): the whole name is
    # unresolved, the known alias inside it is not taken (ask/keywords.py extract_names)
    not_alias: bool = False
    # registry keys offered when few known names are spelled like the unknown one (an unknown backbone family:
    # "EfficientNet-B4" is spelled like no backbone the knowledge base has; the common ones it has are the choices)
    suggest: tuple[str, ...] = ()


def _families(rows: list[dict[str, Any]]) -> tuple[Family, ...]:
    return tuple(Family(str(r["name"]), str(r["kind"]), _compile(r["pattern"], f"families[{i}]"), r.get("task"),
                        bool(r.get("not_alias", False)), tuple(r.get("suggest", ())))
                 for i, r in enumerate(rows))


# --- numbers -------------------------------------------------------------------------------------------

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
CN_UNITS = {"十": 10, "百": 100, "千": 1000}
MULTIPLIERS = {"万": 1e4, "w": 1e4, "亿": 1e8, "k": 1e3, "千": 1e3, "m": 1e6, "million": 1e6,
               "mn": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9}

# A number as people write it: "50,000", "1.5", "两", "二十", "十二", optionally followed by a multiplier.
# Bounded repetitions and a look-behind that never starts inside a run of digits or numerals keep every pattern
# linear in the question (issue 21: "一" x 4000 took 31 s).
NUM = r"(?:\d{1,15}(?:,\d{3}){1,5}|\d{1,15}(?:\.\d{1,6})?|[零〇一二两三四五六七八九十百千]{1,8})"
CN_NUMERALS = "零〇一二两三四五六七八九十百千"
MULT = r"(?:万|亿|千|million|billion|bn|mn|k|w|m)"


def cn_numeral(text: str) -> int | None:
    """'二十' -> 20, '十二' -> 12, '三百五十' -> 350, '两' -> 2; None when it is not a Chinese numeral."""
    total, digit = 0, None
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
        elif ch in CN_UNITS:
            total += (1 if digit is None else digit) * CN_UNITS[ch]
            digit = None
        else:
            return None
    return total + (digit or 0)


def to_number(num: str, mult: str | None = None) -> float | None:
    """Turn a NUM match (and an optional MULT) into a float."""
    num = num.strip()
    if re.fullmatch(r"\d+(?:,\d{3})+", num):
        value: float | None = float(num.replace(",", ""))
    elif re.fullmatch(r"\d+(?:\.\d+)?", num):
        value = float(num)
    else:
        parsed = cn_numeral(num)
        value = None if parsed is None else float(parsed)
    if value is None:
        return None
    if mult:
        value *= MULTIPLIERS.get(mult.lower(), 1.0)
    return value
