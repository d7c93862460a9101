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
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            err = WorkloadError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})",
                                f"第 {number} 行：不是有效的 JSON（第 {exc.colno} 列：{exc.msg}）")
            yield json.dumps(_error(err, lang), ensure_ascii=False)
            continue
        if not isinstance(data, dict):
            err = WorkloadError(f"line {number}: expected a JSON object", f"第 {number} 行：应为 JSON 对象")
            yield json.dumps(_error(err, lang), ensure_ascii=False)
            continue
        yield json.dumps(estimate_dict(data, lang), ensure_ascii=False)
