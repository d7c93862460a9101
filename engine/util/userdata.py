"""Files and text a person gave us (workload files, stdin, JSON lines, catalog overrides): read bounded, parsed as
plain data.

A workload is data a person wrote, not a YAML program, so user YAML is read strictly (issue 21):

* **no anchors or aliases** (a 386-byte file of nested aliases expands to gigabytes when shown or walked);
* **no duplicate keys** (YAML's "the last one wins" silently drops a value the user wrote);
* **no tags** (``!!python/...``, ``!!binary``, ``!!set``: nothing a workload needs);
* **no YAML 1.1 implicit types**: a plain scalar means what it means in JSON / YAML 1.2 - ``true`` / ``false``,
  ``null`` / ``~``, decimal integers, decimal floats (``1.5``, ``1e3``, ``.inf``, ``.nan``); a plain scalar that
  YAML 1.1 would have turned into something else (``yes`` / ``no`` / ``on`` / ``off`` / ``y`` / ``n`` as booleans,
  ``1:30`` sexagesimal, ``0x10`` / ``0o17`` / ``0b11`` / ``017`` / ``1_000``, ``<<`` merge keys, ``=``) is refused
  with a request to write it plainly or quote it; dates stay text;
* **bounded**: at most ``max_bytes`` of text, ``MAX_DEPTH`` levels of nesting, ``max_nodes`` values, and
  mapping keys that are scalars.

Errors are ``InputError`` naming the file and line (callers turn it into their own error type). The parser is
libyaml's event stream (C) when PyYAML has it; values are built here without recursion.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from typing import Any, BinaryIO, TextIO

import yaml

MiB = 1024 * 1024
MAX_WORKLOAD_BYTES = 4 * MiB    # a workload is a few hundred bytes; 4 MiB leaves room for long (refused) values
MAX_OVERRIDE_BYTES = 16 * MiB   # a price refresh of every region and type is well under 1 MiB
MAX_JSONL_LINE_BYTES = 1 * MiB  # one workload per line
MAX_SKIPPED_PIECES = 64         # an over-long line is skipped up to 64 times its limit, then reading stops
MAX_DEPTH = 32
MAX_WORKLOAD_NODES = 20_000
MAX_OVERRIDE_NODES = 2_000_000

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InputError(ValueError):
    """Bad user input: ``en`` / ``zh`` messages that already name the file (and line, when there is one)."""

    def __init__(self, en: str, zh: str, *, line: int | None = None, field: str | None = None) -> None:
        super().__init__(en)
        self.en, self.zh, self.line, self.field = en, zh, line, field


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n:,} bytes"


# ---------------------------------------------------------------------------------------------------- reading
def read_text(path: str, what: str, max_bytes: int, stdin: TextIO | None = None) -> str:
    """The UTF-8 text of ``path`` ('-': ``stdin``), at most ``max_bytes``; InputError naming ``what`` and the
    file when it cannot be read, is larger, or is not UTF-8. Reads at most max_bytes + 1 (so /dev/zero ends)."""
    name = "stdin" if path == "-" else path
    try:
        if path == "-":
            if stdin is None:
                raise InputError(f"{what}: no stdin to read", f"{what}：没有可读取的标准输入")
            raw = _read_stream(stdin, max_bytes + 1)
        else:
            with open(path, "rb") as handle:
                raw = handle.read(max_bytes + 1)
    except InputError:
        raise
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"{what}: cannot read {name}: {reason}", f"{what}：无法读取 {name}：{reason}") from None
    if isinstance(raw, str):
        if len(raw) > max_bytes or len(raw.encode("utf-8", "surrogatepass")) > max_bytes:
            raise _too_big(what, name, max_bytes)
        return _checked_str(raw, what, name)
    if len(raw) > max_bytes:
        raise _too_big(what, name, max_bytes)
    return decode(raw, what, name)


def _read_stream(stream: TextIO | BinaryIO, limit: int) -> str | bytes:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:  # a real stdin: bytes, so invalid UTF-8 is reported instead of raised
        return buffer.read(limit)
    return stream.read(limit)


def _too_big(what: str, name: str, limit: int) -> InputError:
    return InputError(f"{what}: {name} is larger than the limit of {_size(limit)}",
                      f"{what}：{name} 超过了 {_size(limit)} 的大小上限")


def decode(raw: bytes, what: str, name: str, line: int | None = None) -> str:
    """``raw`` as UTF-8 (a BOM is dropped); InputError naming the file, line and byte offset otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = line or raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{what}: {name}: line {line}: not valid UTF-8 (byte {exc.start})",
                         f"{what}：{name}：第 {line} 行：不是有效的 UTF-8（第 {exc.start} 字节）", line=line) from None


def _checked_str(text: str, what: str, name: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a text stream that smuggled undecodable bytes (surrogateescape)
        raise InputError(f"{what}: {name}: not valid UTF-8 (character {exc.start})",
                         f"{what}：{name}：不是有效的 UTF-8（第 {exc.start} 个字符）") from None
    return text.removeprefix("\ufeff")


def lines(stream: TextIO | BinaryIO, what: str, name: str, max_bytes: int = MAX_JSONL_LINE_BYTES
          ) -> Iterator[tuple[int, str | InputError]]:
    """(line number, text or InputError) for each line of ``stream``: a line over ``max_bytes`` or not UTF-8 is an
    error for that line alone (the rest of an over-long line is skipped, never held in memory)."""
    source = getattr(stream, "buffer", stream)
    number = 0
    while True:
        chunk = source.readline(max_bytes + 1)
        if not chunk:
            return
        number += 1
        end = "\n" if isinstance(chunk, str) else b"\n"
        if len(chunk) > max_bytes and not chunk.endswith(end):
            yield number, InputError(f"{what}: {name}: line {number} is longer than the limit of {_size(max_bytes)}",
                                     f"{what}：{name}：第 {number} 行超过了 {_size(max_bytes)} 的长度上限", line=number)
            for _ in range(MAX_SKIPPED_PIECES):  # skip to the end of this line, a bounded piece at a time
                chunk = source.readline(max_bytes + 1)
                if not chunk or chunk.endswith(end):
                    break
            else:  # no end of line in sight (/dev/zero): stop reading
                yield number, InputError(
                    f"{what}: {name}: line {number} has no end within {_size(max_bytes * MAX_SKIPPED_PIECES)}; stopped reading",
                    f"{what}：{name}：第 {number} 行在 {_size(max_bytes * MAX_SKIPPED_PIECES)} 内没有结束；已停止读取", line=number)
                return
            continue
        try:
            text = decode(chunk, what, name, number) if isinstance(chunk, bytes) else _checked_str(chunk, what, name)
        except InputError as exc:
            exc.line = number
            yield number, exc
            continue
        yield number, text


# ---------------------------------------------------------------------------------------------------- YAML
_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_SPECIAL_FLOAT = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf, "+.Inf": math.inf,
                  "+.INF": math.inf, "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
                  ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan}
# What YAML 1.1 (PyYAML's resolver) would read as a bool, an int, a float, a merge key or a value key, beyond the
# forms above: written plainly, these are refused (a person means "yes" or "1:30" as words, or made a mistake).
_YAML11 = re.compile(r"""(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF
    |[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?0x[0-9a-fA-F_]+|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    |[-+]?[0-9][0-9_]*_[0-9_]*|[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*_[0-9_]*(?:[eE][-+][0-9]+)?|<<|=)\Z""", re.X)


def _plain(value: str) -> Any:
    """A plain (unquoted, untagged) scalar as JSON / YAML 1.2 reads it; ValueError(en, zh) for YAML 1.1 forms."""
    if _NULL.match(value):
        return None
    if value in _BOOL:
        return _BOOL[value]
    if _INT.match(value):
        if len(value) > 4300:
            raise ValueError("an integer of more than 4300 digits", "整数超过 4300 位")
        return int(value)
    if _YAML11.match(value):
        shown = value if len(value) <= 20 else value[:17] + "..."
        raise ValueError(f"{shown!r} is ambiguous in YAML (YAML 1.1 reads it as a boolean, a base-8/16/60 number or "
                         "a merge key); write true / false or a decimal number, or quote it",
                         f"{shown!r} 在 YAML 中有歧义（YAML 1.1 会把它读成布尔值、八/十六/六十进制数或合并键）；"
                         "请写 true / false 或十进制数，或者加引号")
    if _FLOAT.match(value) and ("." in value or "e" in value or "E" in value):
        return float(value)
    if value in _SPECIAL_FLOAT:
        return _SPECIAL_FLOAT[value]
    return value


def _path(stack: list[Any]) -> str:
    """Where the parser is, as keys and list indexes: ``prices.3.price_per_hour``."""
    parts = []
    for container, key, key_mark, _ in stack:
        if isinstance(container, list):
            parts.append(str(len(container)))
        elif key_mark is not None:
            parts.append(str(key)[:40])
    return ".".join(parts)


def load(text: str, name: str, *, max_bytes: int = MAX_WORKLOAD_BYTES, max_nodes: int = MAX_WORKLOAD_NODES) -> Any:
    """One YAML (or JSON) document as plain data, read strictly (see the module doc); InputError naming ``name``
    and the line otherwise. An empty document is None."""
    if len(text) > max_bytes:
        raise _too_big("YAML", name, max_bytes)

    def fail(mark: Any, en: str, zh: str) -> InputError:
        line = mark.line + 1 if mark is not None else None
        at, at_zh = (f" line {line}:", f"第 {line} 行：") if line else ("", "")
        path = _path(stack)
        if path:
            at, at_zh = f"{at} {path}:", f"{at_zh}{path}："
        return InputError(f"{name}:{at} {en}", f"{name}：{at_zh}{zh}", line=line, field=path.split(".")[0] or None)

    stack: list[Any] = []   # open containers: [list] or [dict, pending key, key mark]
    result: Any = None
    documents = nodes = 0
    try:
        for event in yaml.parse(io.StringIO(text), Loader=_Loader):
            kind = type(event)
            if kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise fail(event.start_mark, "more than one YAML document (---)", "含有多个 YAML 文档（---）")
                continue
            if kind in (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent):
                continue
            if kind is yaml.AliasEvent:
                raise fail(event.start_mark, f"alias *{event.anchor} - anchors and aliases are not allowed in user input",
                           f"别名 *{event.anchor}——用户输入中不允许使用锚点和别名")
            if getattr(event, "anchor", None):
                raise fail(event.start_mark, f"anchor &{event.anchor} - anchors and aliases are not allowed in user input",
                           f"锚点 &{event.anchor}——用户输入中不允许使用锚点和别名")
            tag = getattr(event, "tag", None)
            if tag and tag not in ("!", "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
                raise fail(event.start_mark, f"tag {tag} is not allowed in user input", f"用户输入中不允许使用标签 {tag}")
            if kind in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
                value = stack.pop()[0]
            elif kind is yaml.ScalarEvent:
                plain = event.implicit[0] and not event.style and tag is None
                try:
                    value = _plain(event.value) if plain else event.value
                except ValueError as exc:
                    raise fail(event.start_mark, *exc.args) from None
            else:  # a mapping or sequence starts
                nodes += 1
                if len(stack) >= MAX_DEPTH:
                    raise fail(event.start_mark, f"nested more than {MAX_DEPTH} levels deep", f"嵌套超过 {MAX_DEPTH} 层")
                if nodes > max_nodes:
                    raise fail(event.start_mark, f"more than {max_nodes:,} values", f"值超过 {max_nodes:,} 个")
                stack.append([{} if kind is yaml.MappingStartEvent else [], None, None, event.start_mark])
                continue
            nodes += 1
            if nodes > max_nodes:
                raise fail(event.start_mark, f"more than {max_nodes:,} values", f"值超过 {max_nodes:,} 个")
            if not stack:
                result = value
                continue
            top = stack[-1]
            if isinstance(top[0], list):
                top[0].append(value)
            elif top[2] is None:  # a key
                if isinstance(value, (dict, list)):
                    raise fail(event.start_mark, "a mapping key must be a plain value", "映射的键必须是简单值")
                top[1], top[2] = value, event.start_mark
                if value in top[0]:
                    raise fail(event.start_mark, "duplicate key (YAML would keep only the last value)",
                               "重复的键（YAML 只会保留最后一个值）")
            else:
                top[0][top[1]] = value
                top[1] = top[2] = None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "syntax error"
        raise fail(mark, f"not valid YAML/JSON ({problem})", f"不是合法的 YAML/JSON（{problem}）") from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, other controls)
        line = text.count("\n", 0, max(0, exc.position)) + 1
        code = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)[:12]
        raise InputError(f"{name}: line {line}: character {code} is not allowed in YAML",
                         f"{name}：第 {line} 行：YAML 中不允许字符 {code}", line=line) from None
    except yaml.YAMLError as exc:
        raise fail(None, f"not valid YAML/JSON ({type(exc).__name__})", "不是合法的 YAML/JSON") from None
    return result
