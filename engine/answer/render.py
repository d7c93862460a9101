"""Render a Recommendation to Markdown with the jinja2 templates in prompts/ (zh or en).

User-supplied text (model names, ...) only ever reaches templates as values, passed through ``md`` which
escapes Markdown and HTML; templates are our files, never built from user input.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2

from gpu_advisor.util.i18n import Text, messages
from gpu_advisor.util.numfmt import money, num, purchase_total, span
from gpu_advisor.util.textsafe import visible

if TYPE_CHECKING:
    from gpu_advisor.answer.recommendation import Recommendation

_MD_SPECIAL = re.compile(r"([\\`*\[\]|])")
_LINE_START = re.compile(r"(^|\n)(\s*)([#>+-])")
# control characters other than newline and tab become spaces; <, > become their look-alikes (>= as ≥, -> as →) so
# that no HTML tag can form and a terminal shows no entity ("PyTorch >= 2.0", not "PyTorch &gt;= 2.0"); & becomes
# &amp; only where it would start an entity
_PLAIN = str.maketrans({chr(i): " " for i in range(32) if chr(i) not in "\n\t"})
_ARROWS = (("<=", "≤"), (">=", "≥"), ("->", "→"), ("<-", "←"), ("<", "‹"), (">", "›"))
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def _plain(text: str) -> str:
    text = text.translate(_PLAIN)
    if "<" in text or ">" in text:
        for old, new in _ARROWS:
            text = text.replace(old, new)
    return _ENTITY.sub("&amp;", text) if "&" in text else text


# any character or line start the escaping below would change: most values (numbers, instance types, names) have
# none, and one search is 4-5x cheaper than the translate + two substitutions (same output on 200,000 random strings)
_NEEDS_ESCAPE = re.compile(r"[\\`*\[\]|&<>\x00-\x08\x0b-\x1f]|(?:^|\n)\s*[#>+-]")


def md_escape(value: Any) -> str:
    """Escape text for Markdown: no emphasis, links, code, table cells or HTML can be injected."""
    text = value if type(value) is str else str(value)
    if len(text) <= _CACHED_CHARS:
        return _md_escape_cached(text)
    return _md_escape(text)


def _md_escape(text: str) -> str:
    text = visible(text)  # C1 controls, bidi and zero-width characters: removed or a space (textsafe)
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    text = _MD_SPECIAL.sub(r"\\\1", _plain(text))
    return _LINE_START.sub(r"\1\2\\\3", text)


# An answer escapes ~150 values, most of them the same rule texts, sources and names as the answer before: a cache
# lookup costs less than the search. Bounded in entries and in the length of what it keeps (user text can be long).
_CACHED_CHARS = 400
_md_escape_cached = lru_cache(maxsize=4096)(_md_escape)


@lru_cache(maxsize=2)
def _environment(lang: str) -> jinja2.Environment:
    """One environment per language. The language-dependent helpers are filters (``'title'|t``, ``x.text|L``):
    jinja2 calls a filter directly, while a function passed to render() goes through Context.call, which was
    half of the rendering time."""
    loader = jinja2.FunctionLoader(
        lambda name: (resources.files("gpu_advisor.prompts") / name).read_text(encoding="utf-8"))
    env = jinja2.Environment(loader=loader, autoescape=False, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    msgs = messages()
    env.filters.update(
        md=md_escape, num=num, money=money, span=span, purchase_total=purchase_total,
        # methods as filters: jinja2 calls a filter directly, a method call in a template goes through Context.call
        purchase=lambda option, model: option.purchase(model), section_items=lambda rec, name: rec.items(name),
        t=lambda key: msgs[key][lang],
        s=lambda section: msgs["sections"][section][lang],
        comp=lambda name: msgs["components"].get(name, {}).get(lang, name),
        tier=lambda name: msgs["tiers"].get(name, {}).get(lang, name) if name else "-",
        L=lambda value: value.get(lang) if isinstance(value, Text) or hasattr(value, "get") else str(value))
    return env


# Cost-table cells as filters, not jinja2 macros: a macro call goes through jinja2's Context.call and costs about
# ten times a filter, and the cost table makes ~60 of them per answer. Same text as the macros they replaced.
def message(key: str, lang: str) -> str:
    return messages()[key][lang]


def _sources(rec: Recommendation) -> list[str]:
    seen: list[str] = []
    for src in [*rec.memory.sources, *(s for e in rec.trace for s in e.sources)]:
        if src not in seen:
            seen.append(src)
    return seen


def render_markdown(rec: Recommendation, lang: str) -> str:
    if lang not in ("zh", "en"):
        lang = "zh"
    template = _environment(lang).get_template("recommendation.md.j2")
    text = template.render(r=rec, sources=_sources(rec))
    while "\n\n\n" in text:  # runs of blank lines -> one blank line (str.replace: ~10x faster than a regex here)
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n"
