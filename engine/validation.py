"""Turn pydantic ValidationErrors on Workload into WorkloadErrors that name the field and the allowed range.

Bounds and enum choices are read from Workload's own field annotations, so the messages follow the model.
"""

from __future__ import annotations

import typing
from enum import Enum
from typing import Any

import annotated_types as at
from pydantic import ValidationError

from gpu_advisor.errors import WorkloadError
from gpu_advisor.workload import Workload


def _walk(annotation: Any) -> typing.Iterator[Any]:
    """Every type and metadata object inside an annotation (Optional, Annotated, tuple, ...)."""
    yield annotation
    for meta in getattr(annotation, "__metadata__", ()):
        yield meta
        for inner in getattr(meta, "metadata", ()):
            yield inner
    for arg in typing.get_args(annotation):
        yield from _walk(arg)


def bounds(field: str) -> tuple[float | None, float | None]:
    """(lowest, highest) allowed value of a numeric Workload field, from its Field(ge/gt/le/lt) metadata."""
    info = Workload.model_fields.get(field)
    if info is None:
        return None, None
    low = high = None
    for item in [*_walk(info.annotation), *info.metadata]:
        if isinstance(item, at.Ge | at.Gt):
            low = getattr(item, "ge", None) if isinstance(item, at.Ge) else item.gt
        if isinstance(item, at.Le | at.Lt):
            high = getattr(item, "le", None) if isinstance(item, at.Le) else item.lt
    return low, high


def enum_choices(field: str) -> list[str]:
    info = Workload.model_fields.get(field)
    if info is None:
        return []
    for item in _walk(info.annotation):
        if isinstance(item, type) and issubclass(item, Enum):
            return [m.value for m in item]
    return []


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _range_message(field: str, value: Any, kind: str) -> tuple[str, str]:
    low, high = bounds(field)
    strict_low = kind == "greater_than"
    if low is not None and high is not None:
        op_en = "greater than" if strict_low else "between"
        if strict_low:
            return (f"{field}: must be greater than {_fmt(low)} and at most {_fmt(high)} (got {value!r})",
                    f"{field}：取值须大于 {_fmt(low)} 且不超过 {_fmt(high)}（收到 {value!r}）")
        return (f"{field}: must be {op_en} {_fmt(low)} and {_fmt(high)} (got {value!r})",
                f"{field}：取值范围为 {_fmt(low)} 到 {_fmt(high)}（收到 {value!r}）")
    if low is not None:
        return (f"{field}: must be at least {_fmt(low)} (got {value!r})", f"{field}：取值至少为 {_fmt(low)}（收到 {value!r}）")
    return (f"{field}: must be at most {_fmt(high)} (got {value!r})", f"{field}：取值至多为 {_fmt(high)}（收到 {value!r}）")


def _translate(err: dict[str, Any]) -> WorkloadError:
    loc = [str(p) for p in err.get("loc", ()) if not str(p).startswith(("function-", "tagged-union"))]
    field = loc[0] if loc else None
    name = ".".join(loc) if loc else "workload"
    kind, value = err.get("type", ""), err.get("input")
    if kind == "extra_forbidden":
        allowed = ", ".join(Workload.model_fields)
        return WorkloadError(f"unknown field {name}; allowed: {allowed}", f"未知字段 {name}；允许的字段：{allowed}", field=field)
    if kind == "missing":
        return WorkloadError(f"{name}: required field is missing", f"{name}：缺少必填字段", field=field)
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than") and field:
        en, zh = _range_message(field, value, kind)
        return WorkloadError(en.replace(f"{field}:", f"{name}:", 1), zh.replace(f"{field}：", f"{name}：", 1), field=field)
    if kind == "enum" and field:
        choices = ", ".join(enum_choices(field))
        return WorkloadError(f"{name}: must be one of {choices} (got {value!r})",
                             f"{name}：必须是 {choices} 之一（收到 {value!r}）", field=field)
    if kind in ("string_too_long", "string_too_short", "too_long", "too_short"):
        ctx = err.get("ctx", {})
        limit = ctx.get("max_length", ctx.get("min_length"))
        return WorkloadError(f"{name}: length must respect the limit {limit} (got {value!r})",
                             f"{name}：长度须符合限制 {limit}（收到 {value!r}）", field=field)
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    return WorkloadError(f"{name}: {msg} (got {value!r})", f"{name}：取值无效——{msg}（收到 {value!r}）", field=field)


def workload_from_dict(d: Any) -> Workload:
    """Validate ``d`` into a Workload; raise WorkloadError (zh + en, field named) on the first problem."""
    if not isinstance(d, dict):
        raise WorkloadError("workload must be a mapping of field names to values", "workload 必须是字段名到取值的映射")
    try:
        return Workload.model_validate(d)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise _translate(errors[0] if errors else {}) from None
