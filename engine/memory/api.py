"""Dict / JSON-lines front ends of the estimator: never raise on bad input, return an error object."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from gpu_advisor.errors import AdvisorError, WorkloadError


def _error(exc: AdvisorError, lang: str) -> dict[str, Any]:
    return {"error": exc.to_dict(lang)}


def estimate_dict(d: dict, lang: str = "en") -> dict:
    """{"memory": {...}} for a workload dict, or {"error": {code, message, field, suggestions}}."""
    from gpu_advisor.memory.core import estimate_memory
    from gpu_advisor.validation import workload_from_dict
    try:
        workload = workload_from_dict(d)
        return estimate_memory(workload).to_dict(lang)
    except AdvisorError as exc:
        return _error(exc, lang)


def estimate_jsonl(lines: Iterable[str], lang: str = "en") -> Iterator[str]:
    """One JSON object per input line, same order; blank lines are skipped, malformed lines give an error."""
    return estimate_numbered_lines(enumerate(lines, start=1), lang)


def estimate_numbered_lines(lines: Iterable[tuple[int, Any]], lang: str = "en") -> Iterator[str]:
    """estimate_jsonl over (line number, text or userdata.InputError): each line fails alone - too long, not
    UTF-8, not JSON, nested too deep, an integer of too many digits or an invalid workload - with an error object
    naming the line (``"line": N`` and the message's prefix)."""
    from gpu_advisor.util.userdata import MAX_JSONL_LINE_BYTES, InputError

    for number, line in lines:
        if isinstance(line, InputError):
            yield _line_error(number, WorkloadError(line.en, line.zh), lang)
            continue
        if not line.strip():
            continue
        if len(line) > MAX_JSONL_LINE_BYTES:
            yield _line_error(number, WorkloadError(f"line {number}: longer than {MAX_JSONL_LINE_BYTES:,} characters",
                                                    f"第 {number} 行：超过 {MAX_JSONL_LINE_BYTES:,} 个字符"), lang)
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            err = WorkloadError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})",
                                f"第 {number} 行：不是有效的 JSON（第 {exc.colno} 列：{exc.msg}）")
            yield _line_error(number, err, lang)
            continue
        except RecursionError:
            yield _line_error(number, WorkloadError(f"line {number}: JSON nested too deeply",
                                                    f"第 {number} 行：JSON 嵌套过深"), lang)
            continue
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            yield _line_error(number, WorkloadError(f"line {number}: not valid JSON ({str(exc)[:80]})",
                                                    f"第 {number} 行：不是有效的 JSON（{str(exc)[:80]}）"), lang)
            continue
        if not isinstance(data, dict):
            err = WorkloadError(f"line {number}: expected a JSON object", f"第 {number} 行：应为 JSON 对象")
            yield _line_error(number, err, lang)
            continue
        result = estimate_dict(data, lang)
        if "error" in result:
            error = result["error"]
            prefix = f"line {number}: " if lang != "zh" else f"第 {number} 行："
            if not error["message"].startswith(prefix):
                error["message"] = prefix + error["message"]
            error["line"] = number
        yield json.dumps(result, ensure_ascii=False)


def _line_error(number: int, exc: AdvisorError, lang: str) -> str:
    return json.dumps({"error": {**exc.to_dict(lang), "line": number}}, ensure_ascii=False)
