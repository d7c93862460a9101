"""Extractors driven by the keyword tables of knowledge/ask/lexicon.yaml: models, backbones, datasets,
regions, enum choices (precision, LoRA, ...), yes/no flags, and the task and stage."""

from __future__ import annotations

import re

from gpu_advisor.ask.lexicon import Entry, Lexicon, load_lexicon
from gpu_advisor.ask.parsed import Scanner

LLM_TASKS = ("llm_finetune", "llm_pretrain")


def _earliest(s: Scanner, entries: tuple[Entry, ...]) -> tuple[Entry, re.Match[str]] | None:
    """The entry whose pattern matches first in the text (ties: table order)."""
    best: tuple[Entry, re.Match[str]] | None = None
    for entry in entries:
        m = s.first(entry.pattern)
        if m and (best is None or m.start() < best[1].start()):
            best = (entry, m)
    return best


def _variant(entry: Entry, m: re.Match[str]) -> str:
    groups = m.groupdict()
    var = groups.get("var") or groups.get("var2")
    fam = groups.get("fam")
    if fam:
        base = {"bert": "BERT", "roberta": "RoBERTa", "macbert": "MacBERT"}[fam.lower()]
        return f"{base}-{var.lower()}" if var else base
    if not var:
        return entry.value
    mapped = entry.extra.get("variant_map", {}).get(var.lower())
    if mapped:
        return str(mapped)
    if entry.value == "YOLO":
        return f"YOLO{var.lower()}" if var.lower().startswith("v") else f"YOLO{var.upper()}"
    return f"{entry.value}-{var.upper() if len(var) <= 3 else var.capitalize()}"


def extract_model(s: Scanner, lex: Lexicon) -> str | None:
    """Set `model` from the model table; returns the task the model implies."""
    found = _earliest(s, lex.models)
    if not found:
        return None
    entry, m = found
    s.set("model", _variant(entry, m), m)
    return str(entry.extra.get("task")) if entry.extra.get("task") else None


def extract_llm(s: Scanner, lex: Lexicon) -> re.Match[str] | None:
    """Find an LLM family; the model string is completed with the size once params are known."""
    found = _earliest(s, lex.llm_families)
    if not found:
        return None
    entry, m = found
    s.claim(m)
    ver = m.groupdict().get("ver")
    joiner = str(entry.extra.get("joiner", " "))
    s.fields["_llm_family"] = entry.value + (f"{joiner}{ver.upper() if ver.startswith('v') else ver}" if ver else "")
    s.fields["_llm_match"] = m.group(0).strip()
    return m


def extract_backbone(s: Scanner, lex: Lexicon) -> None:
    found = _earliest(s, lex.backbones)
    if found:
        entry, m = found
        s.set("backbone", _variant(entry, m), m)


def extract_dataset(s: Scanner, lex: Lexicon) -> None:
    found = _earliest(s, lex.datasets)
    if not found:
        return
    entry, m = found
    s.hint("dataset", m, f"Dataset {entry.value}: {entry.extra.get('num_classes')} classes.",
           f"数据集 {entry.value}：{entry.extra.get('num_classes')} 类。")
    if "num_classes" in entry.extra:
        s.set("num_classes", int(entry.extra["num_classes"]), m, claim=False)


def extract_region(s: Scanner, lex: Lexicon) -> None:
    found = _earliest(s, lex.regions)
    if found:
        entry, m = found
        s.set("region", entry.value, m)


def extract_enums(s: Scanner, lex: Lexicon) -> None:
    """precision, finetune_method, quantization, optimizer, distributed: the first listed entry that matches."""
    for field, entries in lex.enums.items():
        for entry in entries:
            m = s.first(entry.pattern)
            if m:
                s.set(field, entry.value, m, claim=False)
                break


def extract_flags(s: Scanner, lex: Lexicon) -> None:
    kw = lex.keywords
    no, yes = s.first(kw["interruptible_no"]), s.first(kw["interruptible_yes"])
    if no:
        s.set("interruptible", False, no)
    elif yes:
        s.set("interruptible", True, yes, claim=False)
    if m := s.first(kw["checkpointing"]):
        s.set("gradient_checkpointing", True, m, claim=False)
    if m := s.first(kw["heavy_aug"]):
        s.set("augmentation", "heavy", m, claim=False)
    elif m := s.first(kw["light_aug"]):
        s.set("augmentation", "light", m, claim=False)


def extract_task(s: Scanner, lex: Lexicon, implied: str | None) -> None:
    """Task from explicit words, else from the model / LLM family / size; inference wins unless training is said."""
    kw = lex.keywords
    explicit = _earliest_task(s, lex)
    task, m = explicit if explicit else (implied, None)
    if task is None and ("_llm_family" in s.fields or s.fields.get("params_billion", 0) >= 1):
        task = "llm"
    pretrain, finetune = s.first(kw["pretrain"]), s.first(kw["finetune"])
    if task == "llm":
        task = "llm_pretrain" if pretrain else "llm_finetune"
    infer, train = s.first(kw["inference"]), s.first(kw["training"])
    if infer and not train:
        s.set("stage", "serve", infer, claim=False)
        task, m = "inference", infer
    if task:
        s.set("task", task, m or _implied_source(s), claim=False)
    _stage(s, lex, pretrain, finetune)


def _earliest_task(s: Scanner, lex: Lexicon) -> tuple[str, re.Match[str]] | None:
    for entry in lex.tasks:  # table order is priority order
        m = s.first(entry.pattern)
        if m:
            return entry.value, m
    return None


def _implied_source(s: Scanner) -> str:
    return str(s.fields.get("model") or s.fields.get("_llm_match") or "params_billion")


def _stage(s: Scanner, lex: Lexicon, pretrain: re.Match[str] | None, finetune: re.Match[str] | None) -> None:
    if pretrain:
        s.set("stage", "pretrain", pretrain, claim=False)
    elif finetune or s.fields.get("finetune_method"):
        s.set("stage", "finetune", finetune or str(s.fields["finetune_method"]), claim=False)
    elif m := s.first(lex.keywords["prototype"]):
        s.set("stage", "prototype", m, claim=False)


def run_keywords(s: Scanner) -> str | None:
    """Names first (they claim "R-50", "Llama 3.1" before numbers can), then regions and enums.
    Returns the task implied by a named model."""
    lex = load_lexicon()
    implied = extract_model(s, lex)
    extract_llm(s, lex)
    extract_backbone(s, lex)
    extract_dataset(s, lex)
    extract_region(s, lex)
    extract_enums(s, lex)
    extract_flags(s, lex)
    return implied


def finish_task(s: Scanner, implied: str | None) -> None:
    extract_task(s, load_lexicon(), implied)
