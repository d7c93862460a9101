"""One vocabulary: the model, backbone, dataset and GPU names `ask` recognises come from the knowledge base.

Names are found in one left-to-right pass over the question's name chunks (runs of ASCII words joined by spaces,
hyphens, dots, slashes), longest span first, each candidate checked with the same resolvers `estimate` uses
(gpu_advisor.kb.models.resolve_transformer / resolve_plain_method / resolve_backbone). So every name `estimate`
resolves, `ask` recognises, and a name `ask` takes as a model is one `estimate` resolves. Work is linear in the
question: at most MAX_SPAN tokens per start, each fold looked up in a dict before any resolver runs.

A chunk that starts with a model-family word (knowledge/ask/lexicon.yaml `families`) and does not resolve is an
*unresolved* model name: it is reported, never replaced by another model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpu_advisor.ask.lexicon import Family, load_lexicon
from gpu_advisor.kb.models import knowledge, looks_like_llm, norm, resolve_backbone, resolve_plain_method, resolve_transformer

MAX_SPAN = 7            # tokens in one name ("DeepSeek R1 Distill Qwen 32B", "Mask R-CNN R-50-FPN")
# a token of a name: letters, digits and the joiners names use inside themselves
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.]*(?:/\d+)?")
# what may sit between two tokens of one name: a space, a hyphen, an underscore, a slash (hub ids), or the
# parentheses, commas and plus signs of the knowledge base's display names ("Faster R-CNN (GN + WS)")
COUNT_AFTER = re.compile(r"\s*(?:个|轮|张|台|卡|次|epochs?\b|images?\b|samples?\b|steps?\b|iters?\b|gpus?\b)",
                         re.IGNORECASE)
JOINER = re.compile(r"[ \-_/]{0,2}|\s?[(),+]\s?|\s?\)\s?\(\s?|\s?\+\s?")
# an Ollama tag names the size after a colon ("gemma3:27b", "qwen2.5vl:7b", "deepseek-r1:7b"): the colon joins it to
# the name, so "deepseek-r1:7b" is read whole (and refused unless known), never as "deepseek-r1" (the 671 B model)
OLLAMA_SIZE = re.compile(r"\d+(?:\.\d+)?[bm]", re.IGNORECASE)
OLLAMA_TAG = re.compile(r":\d+(?:\.\d+)?[bm](?![A-Za-z0-9])", re.IGNORECASE)
# words after a known name that keep it the same model (hub suffixes of instruct / chat builds)
# "a Llama 3.1 70B-size model", "Qwen2.5-7B-class": a model of that name's shape, sized as it
VARIANT_WORDS = {"instruct", "chat", "it", "hf", "base", "awq", "gptq", "int4", "int8", "fp8", "gguf", "size", "sized",
                 "class", "scale"}
# hub suffixes of quantized builds of the same model: they also state the weight quantization
QUANT_WORDS = {"awq": "int4", "gptq": "int4", "int4": "int4", "int8": "int8"}
# a size or version written after a known name, apart from it by a space ("InternLM2.5 20B", "Qwen3-Coder 30B-A3B",
# "ConvNeXt XL", "ResNeXt-101 64x8d", "HRNet W64", "Swin V2"): the name with that size is another model than the name
# alone (a bare family name the knowledge base sizes as one of its sizes), so the known name is not taken: the whole
# is an unresolved name, refused naming the closest known models (or sized generically with its stated size).
# Counts ("Qwen2.5-7B 1M tokens"), GPU names ("V100") and plain numbers ("8 卡") are not sizes.
SIZE_AFTER = re.compile(r"(?:\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b|\d+x\d+d|[bwm]\d{1,2}|v\d{1,2}(?:\.\d+)*|x{1,2}l|xlarge|"
                        r"huge|giant|[a-z]/\d+)", re.IGNORECASE)
# English function words: never the first word of a model name written with a space after it, so "Is a single T4
# enough" is not ISANet (alias "isa" = "is" + "a"), nor "an n..." ANNNet. A name written as one word still resolves.
FUNCTION_WORDS = frozenset("a an the is are am be was were do does did can could will would should may might must "
                           "i we you it he she they my our your its me us on in of for to at by as with from into "
                           "onto and or but if so no not than then that this these those what which who how".split())
COUNT_WORD = re.compile(r"[\s-]*(?:tokens?|samples?|images?|sentences?|rows?|examples?|words?|pairs?|pictures?|"
                        r"records?|docs?|documents?|steps?|iter|条|张|个|句|幅|段|篇)", re.IGNORECASE)


@dataclass(frozen=True)
class NameSpan:
    start: int
    end: int
    text: str
    pool: str            # transformers | methods | backbones
    key: str


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, tuple[str, str]], frozenset[str]]:
    """folded name -> (pool, key) over every key, display, alias and same_shape name; and the first-token folds."""
    kb = knowledge()
    out: dict[str, tuple[str, str]] = {}
    for pool, specs, index in (("transformers", kb.transformers, kb.transformer_index),
                               ("methods", kb.methods, kb.method_index),
                               ("backbones", kb.backbones, kb.backbone_index)):
        for folded, key in index.items():
            out.setdefault(folded, (pool, key))
    firsts = frozenset(f[:3] for f in out if len(f) >= 3)
    return out, firsts


@lru_cache(maxsize=8192)
def _resolve(surface: str) -> tuple[str, str] | None:
    """(pool, key) for a name as `estimate` would resolve it, or None."""
    folded = norm(surface)
    if len(folded) < 2:
        return None
    hit = _index()[0].get(folded)
    if hit is not None:
        return hit
    if folded[:3] not in _index()[1]:
        return None
    if (t := resolve_transformer(surface)) is not None:
        return "transformers", t
    if (m := resolve_plain_method(surface)) is not None:
        return "methods", m[0]
    if (b := resolve_backbone(surface)) is not None and not folded.isdigit():
        return "backbones", b[0]
    return None


def tokens(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in TOKEN.finditer(text)]


def _joined(text: str, a: tuple[int, int], b: tuple[int, int]) -> bool:
    gap = text[a[1]:b[0]]
    if "," in gap and text[b[0]:b[1]].isdigit() and COUNT_AFTER.match(text, b[1]):
        return False  # "Sparse R-CNN, 300 个 epoch": a count after a comma, not a name part ("FPG, 128 ch" is one)
    return JOINER.fullmatch(gap) is not None or _size_tag(text, gap, b)


def _size_tag(text: str, gap: str, b: tuple[int, int]) -> bool:
    return gap == ":" and OLLAMA_SIZE.fullmatch(text, b[0], b[1]) is not None


def _tight(text: str, a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two tokens of one written word ("Qwen2.5-72B", "R-50-D8"): joined by a hyphen, an underscore or nothing."""
    return text[a[1]:b[0]] in ("", "-", "_", "/") or _size_tag(text, text[a[1]:b[0]], b)


def _size_after(text: str, toks: list[tuple[int, int]], k: int) -> int | None:
    """The last token of a size written at token k, apart from the name before it by one or two spaces (SIZE_AFTER,
    with the tokens tight-joined to it: "30B-A3B"); None when token k is no such size."""
    if k >= len(toks) or not 1 <= len(text[toks[k - 1][1]:toks[k][0]]) <= 2 or text[toks[k - 1][1]:toks[k][0]].strip(" "):
        return None
    if not SIZE_AFTER.fullmatch(text, toks[k][0], toks[k][1]) or COUNT_WORD.match(text, toks[k][1]):
        return None
    end = k
    while end + 1 < len(toks) and _tight(text, toks[end], toks[end + 1]):
        end += 1
    return end


OWN_SIZE_TOLERANCE = 0.02   # "671B" for 671.03e9 parameters; "8B" is not Qwen2.5-7B's 7.62e9 (that is 5 % off)


def _own_size(key: str, written: str) -> bool:
    """A size written after a known LLM name ("671B") that is the model's own parameter count (or with its MTP
    module, "685B"), within OWN_SIZE_TOLERANCE; a size in millions or a MoE shape ("8x7b") is never taken here."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)b", written, re.IGNORECASE)
    spec = knowledge().transformers.get(key)
    if m is None or spec is None:
        return False
    size = float(m.group(1))
    return any(abs(size - p) <= OWN_SIZE_TOLERANCE * p
               for p in (spec.params_billion, spec.params_billion + (spec.mtp_params_billion or 0.0)))


def find_names(text: str, sized: list[Unresolved] | None = None) -> list[NameSpan]:
    """Known model / backbone names in text, left to right, longest first, non-overlapping. A name starts and ends
    on word boundaries: "Qwen" inside "Foo-Qwen-7B" is not a name, nor "Qwen2.5-7B" inside "Qwen2.5-7B-Foo" (only
    hub suffixes such as "-Instruct" may follow). A known name followed by a size of its own ("InternLM2.5 20B",
    SIZE_AFTER) is not taken: the name with its size goes to ``sized`` as an unresolved name."""
    toks = tokens(text)
    out: list[NameSpan] = []
    i = 0
    while i < len(toks):
        if i > 0 and _tight(text, toks[i - 1], toks[i]):
            i += 1
            continue
        j_max = i
        spaced_word = text[toks[i][0]:toks[i][1]].lower() in FUNCTION_WORDS and i + 1 < len(toks) \
            and text[toks[i][1]:toks[i + 1][0]].strip(" ") == "" and text[toks[i][1]:toks[i + 1][0]] != ""
        while not spaced_word and j_max + 1 < len(toks) and j_max + 1 - i < MAX_SPAN and _joined(text, toks[j_max], toks[j_max + 1]):
            j_max += 1
        if norm(text[toks[i][0]:toks[i][1]])[:3] not in _index()[1] and norm(text[toks[i][0]:toks[j_max][1]])[:3] not in _index()[1]:
            i += 1
            continue
        found = None
        for j in range(j_max, i - 1, -1):
            if j < j_max and _tight(text, toks[j], toks[j + 1]) and not _tail_is_variant(text, toks, j + 1, j_max):
                continue
            surface = text[toks[i][0]:toks[j][1]]
            hit = _resolve(surface)
            if hit is None and j > i:
                # "Mistral-7B-Instruct-v0.3": the hub's build suffix inside a name the registry spells without it;
                # the model field gets the registry's spelling, so that `estimate` resolves it too
                kept = [text[a:b] for a, b in toks[i:j + 1] if text[a:b].lower() not in VARIANT_WORDS]
                if 0 < len(kept) < j - i + 1:
                    hit = _resolve("-".join(kept))
                    surface = "-".join(kept) if hit else surface
            if hit is not None:
                found = (j, surface, hit)
                break
        if found is None:
            i += 1
            continue
        j, surface, (pool, key) = found
        split = _split_method_backbone(text, toks, i, j) if pool == "methods" else None
        if split is not None:
            out.extend(split)
            i = j + 1
            continue
        end_tok = j
        while end_tok + 1 <= j_max and text[toks[end_tok + 1][0]:toks[end_tok + 1][1]].lower() in VARIANT_WORDS:
            end_tok += 1
        size_end = _size_after(text, toks, end_tok + 1)
        if size_end is not None and pool == "transformers" and _own_size(key, text[toks[end_tok + 1][0]:toks[end_tok + 1][1]]):
            # "DeepSeek-V3 671B": the size the model itself has (its parameter count, with or without a multi-token-
            # prediction module, to the written precision) names the same model, not a sibling
            out.append(NameSpan(toks[i][0], toks[size_end][1], surface, pool, key))
            i = size_end + 1
            continue
        if size_end is not None:
            if sized is not None:
                whole = text[toks[i][0]:toks[size_end][1]]
                kind = "llm" if pool == "transformers" or looks_like_llm(whole) else "backbone" if pool == "backbones" else "vision"
                sized.append(Unresolved(toks[i][0], toks[size_end][1], whole, kind))
            i = size_end + 1
            continue
        out.append(NameSpan(toks[i][0], toks[end_tok][1], surface, pool, key))
        i = end_tok + 1
    return out


def _split_method_backbone(text: str, toks: list[tuple[int, int]], i: int, j: int) -> list[NameSpan] | None:
    """"DeepLabV3+ R-50", "Mask2Former Swin-L": a method and, after a space, its backbone are two names (model and
    backbone), as `recommend --model ... --backbone ...` would take them."""
    for k in range(i + 1, j + 1):
        if text[toks[k - 1][1]:toks[k][0]].strip(" ") != "" or _tight(text, toks[k - 1], toks[k]):
            continue
        head, tail = text[toks[i][0]:toks[k - 1][1]], text[toks[k][0]:toks[j][1]]
        h, t = _resolve(head), _resolve(tail)
        if h and t and h[0] == "methods" and t[0] == "backbones":
            return [NameSpan(toks[i][0], toks[k - 1][1], head, *h), NameSpan(toks[k][0], toks[j][1], tail, *t)]
    return None


def _tail_is_variant(text: str, toks: list[tuple[int, int]], a: int, b: int) -> bool:
    """Tokens a..b (the rest of the written word) are all hub suffixes."""
    k = a
    while k <= b and text[toks[k][0]:toks[k][1]].lower() in VARIANT_WORDS:
        if k == b or not _tight(text, toks[k], toks[k + 1]):
            return True
        k += 1
    return False


# --- families: words that make a chunk a model name even when the knowledge base does not know it -----------

@lru_cache(maxsize=1)
def families() -> tuple[Family, ...]:
    return load_lexicon().families


# a chunk: the family word and the version / size / variant tokens that follow it (bounded); a GPU count ("8xA100") is
# no part of it ("8x7b" is), nor a context length written apart ("Seed-OSS-36B-Instruct 32k 上下文"; "-16k" joined stays)
CHUNK_TAIL = (r"(?:(?:[\-_/]{1,2}|\s{1,2}(?!\d+(?:\.\d+)?k(?![a-z0-9]))|)(?:(?!\d+\s*x\s*[a-z])v?\d[\w.]*|\d+\s*x\s*\d+\s*b|[a-z]\d[\w.]*|instruct|chat|base|distill|moe|coder|math|"
              r"turbo|pro|max|plus|lite|mini|small|medium|large|huge|tiny|nano|flash|preview|vl|omni|r\d|a\d+b))"
              r"{0,8}")


@dataclass(frozen=True)
class Unresolved:
    start: int
    end: int
    text: str
    kind: str            # llm | vision | backbone (a known backbone name with another size: find_names)
    task: str | None = None  # the family's task hint (knowledge/ask/lexicon.yaml families: task)


LLM_SIZE = re.compile(r"(?<![a-z])\d+(?:\.\d+)?\s*[bt]\b|\d+\s*x\s*\d+(?:\.\d+)?\s*b\b", re.IGNORECASE)


def find_unresolved(text: str, taken: list[tuple[int, int]]) -> list[Unresolved]:
    """Model-family chunks outside the known names' spans: names the knowledge base does not know."""
    out: list[Unresolved] = []
    for fam in sorted(families(), key=lambda f: f.kind != "none"):
        for m in fam.pattern.finditer(text):
            tail = re.compile(CHUNK_TAIL, re.IGNORECASE | re.ASCII).match(text, m.end())
            end = tail.end() if tail else m.end()
            start = m.start()
            # the whole written word: "my-llama-3.1-8b-variant", not the "llama-3.1-8b" inside it
            # (a dot inside a version: "llava-v1.6-mistral-7b", not "6-mistral-7b")
            while start > 0 and text[start - 1].isascii() and (text[start - 1].isalnum() or text[start - 1] in "-_/" or (
                    text[start - 1] == "." and start > 1 and text[start - 2].isascii() and text[start - 2].isalnum())):
                start -= 1
            while end < len(text) and text[end].isascii() and (text[end].isalnum() or (
                    text[end] in "-_./" and end + 1 < len(text) and text[end + 1].isascii() and text[end + 1].isalnum())):
                end += 1
            if tag := OLLAMA_TAG.match(text, end):   # "deepseek-r1:7b" is one name, not "deepseek-r1"
                end = tag.end()
            if any(not (end <= a or start >= b) for a, b in taken):
                continue
            if any(not (end <= u.start or start >= u.end) for u in out):
                continue
            surface = text[start:end].strip(" -_/")
            if fam.kind == "none":   # a tool named after a model family ("LLaMA-Factory"): claimed, not a model
                out.append(Unresolved(start, start + len(surface), surface, "none"))
                continue
            kind = "llm" if fam.kind == "llm" or LLM_SIZE.search(surface) else fam.kind
            out.append(Unresolved(start, start + len(surface), surface, kind, fam.task if kind == fam.kind else None))
    return sorted((u for u in out if u.kind != "none"), key=lambda u: u.start)


def pool_for(kind: str) -> str:
    return "transformers" if kind == "llm" else "backbones" if kind == "backbone" else "methods"


def all_names() -> list[tuple[str, str, str]]:
    """(name, pool, key) for every name the knowledge base resolves: keys, displays, aliases, same_shape names."""
    kb = knowledge()
    out: list[tuple[str, str, str]] = []
    for pool, specs in (("transformers", kb.transformers), ("methods", kb.methods), ("backbones", kb.backbones)):
        for key, spec in specs.items():
            for name in (spec.display, *spec.aliases, *getattr(spec, "same_shape", ())):
                out.append((name, pool, key))
    return out


def describe(pool: str, key: str) -> dict[str, Any]:
    kb = knowledge()
    spec = {"transformers": kb.transformers, "methods": kb.methods, "backbones": kb.backbones}[pool][key]
    return {"display": spec.display, "family": getattr(spec, "family", None)}
