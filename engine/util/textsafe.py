"""User text made safe to show: control, bidi and zero-width characters escaped, long echoes cut (issue 21).

A question, a model name or a file name the user gave can reach a terminal (ESC / BEL sequences retitle it or
fake output), a Markdown or HTML viewer, or a JSON text field another program shows. ``clean`` escapes what a
reader cannot see or what changes how the rest is shown - C0 controls but newline and tab (optionally those too),
DEL, C1 controls, bidi embeddings / overrides / isolates and marks, zero-width characters, the BOM, line and
paragraph separators - as visible ``\\xNN`` / ``\\uNNNN`` text, and cuts text longer than ``limit``. ``brief``
is a ``repr`` that never builds more than it shows (a nested or aliased value can expand to gigabytes).
``html`` is ``clean`` plus HTML escaping, for user text inside Markdown (``<img onerror=...>`` stays text).
"""

from __future__ import annotations

import html as _html
import re
from typing import Any

# what is escaped: C0 but \t \n (those two only with newlines=False), DEL, C1, bidi controls, zero-width and
# invisible formatting characters, line / paragraph separators, BOM
_HIDDEN = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\u3164\ufeff\ufff9-\ufffb"
_UNSAFE = re.compile(f"[{_HIDDEN}]")
_UNSAFE_LINE = re.compile(f"[{_HIDDEN}\t\n]")
LIMIT = 200


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: Any, limit: int | None = LIMIT, *, newlines: bool = True) -> str:
    """``text`` with hidden characters escaped and cut to about ``limit`` characters (None: no cut); with
    ``newlines=False`` newline and tab are escaped too (one-line echoes)."""
    text = text if isinstance(text, str) else str(text)
    more = len(text) - limit if limit is not None and len(text) > limit else 0
    if more:
        text = text[:limit]
    text = (_UNSAFE if newlines else _UNSAFE_LINE).sub(_escape, text)
    return f"{text}…(+{more})" if more else text


_FORMAT = re.compile("[\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\ufff9-\ufffb]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def visible(text: str) -> str:
    """Text as a reader sees it, for parsing and echoing a question: invisible format characters (zero-width,
    bidi) removed, control characters (terminal escapes, C1, line separators) replaced by a space."""
    if is_clean(text):
        return text
    return _CONTROL.sub(" ", _FORMAT.sub("", text))


def is_clean(text: str, *, newlines: bool = True) -> bool:
    return (_UNSAFE if newlines else _UNSAFE_LINE).search(text) is None


def html(text: Any, limit: int | None = LIMIT) -> str:
    """``clean`` plus HTML escaping (&, <, >): user text inside Markdown or an MCP text result."""
    return _html.escape(clean(text, limit), quote=False)


def brief(value: Any, limit: int = 60) -> str:
    """A ``repr`` of ``value`` of at most about ``limit`` characters, built without materialising more: strings
    are cut before repr, containers stop after ``limit`` characters of items, huge integers are described."""
    out: list[str] = []
    budget = [limit + 1]

    def put(text: str) -> bool:
        out.append(text[:budget[0]])
        budget[0] -= len(text)
        return budget[0] > 0

    def walk(node: Any, depth: int) -> bool:
        if isinstance(node, str):
            return put(repr(node[:budget[0]]) if len(node) > budget[0] else repr(node))
        if isinstance(node, bool) or node is None or isinstance(node, float):
            return put(repr(node))
        if isinstance(node, int):
            bits = node.bit_length()
            return put(repr(node) if bits <= 256 else f"<integer of about {int((bits - 1) * 0.30103) + 1} digits>")
        if isinstance(node, (list, tuple, dict)):
            if depth >= 6:
                return put("[...]" if not isinstance(node, dict) else "{...}")
            opening, closing = ("{", "}") if isinstance(node, dict) else ("[", "]") if isinstance(node, list) else ("(", ")")
            if not put(opening):
                return False
            items = node.items() if isinstance(node, dict) else ((None, v) for v in node)
            for i, (key, item) in enumerate(items):
                if (i and not put(", ")) or (isinstance(node, dict) and not (walk(key, depth + 1) and put(": "))):
                    return False
                if not walk(item, depth + 1):
                    return False
            return put(closing)
        return put(f"<{type(node).__name__}>")

    walk(value, 0)
    text = "".join(out)
    if len(text) <= limit:
        return clean(text, None, newlines=False)
    size = f"{len(value)} chars" if isinstance(value, str) else f"{len(value)} items" if isinstance(value, (list, tuple, dict)) else "cut"
    return clean(text[:limit - 3], None, newlines=False) + f"... ({size})"
