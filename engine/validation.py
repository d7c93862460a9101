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


MAX_SHOWN = 60  # characters of a user value echoed in a message (a 1 MB string is not echoed back in full)

# pydantic type errors, worded in both languages (pydantic's own text is English only).
_TYPE_ERRORS: dict[str, tuple[str, str]] = {
    "int_parsing": ("must be a whole number", "必须是整数"),
    "int_type": ("must be a whole number", "必须是整数"),
    "int_from_float": ("must be a whole number", "必须是整数"),
    "float_parsing": ("must be a number", "必须是数字"),
    "float_type": ("must be a number", "必须是数字"),
    "bool_parsing": ("must be true or false", "必须是 true 或 false"),
    "bool_type": ("must be true or false", "必须是 true 或 false"),
    "string_type": ("must be a string", "必须是字符串"),
    "tuple_type": ("must be a list of two integers [height, width]", "必须是两个整数组成的列表 [高, 宽]"),
    "list_type": ("must be a list", "必须是列表"),
    "finite_number": ("must be a finite number", "必须是有限数值"),
}


def shown(value: Any) -> str:
    """A user value as it is echoed in a message: repr (control, bidi and zero-width characters escaped), cut to
    MAX_SHOWN, built without materialising more than it shows (textsafe.brief)."""
    from gpu_advisor.util.textsafe import brief

    return brief(value, MAX_SHOWN)


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _range_message(field: str, value: Any, kind: str) -> tuple[str, str]:
    low, high = bounds(field)
    strict_low = kind == "greater_than"
    if low is not None and high is not None:
        op_en = "greater than" if strict_low else "between"
        if strict_low:
            return (f"{field}: must be greater than {_fmt(low)} and at most {_fmt(high)} (got {shown(value)})",
                    f"{field}：取值须大于 {_fmt(low)} 且不超过 {_fmt(high)}（收到 {shown(value)}）")
        return (f"{field}: must be {op_en} {_fmt(low)} and {_fmt(high)} (got {shown(value)})",
                f"{field}：取值范围为 {_fmt(low)} 到 {_fmt(high)}（收到 {shown(value)}）")
    if low is not None:
        return (f"{field}: must be at least {_fmt(low)} (got {shown(value)})", f"{field}：取值至少为 {_fmt(low)}（收到 {shown(value)}）")
    return (f"{field}: must be at most {_fmt(high)} (got {shown(value)})", f"{field}：取值至多为 {_fmt(high)}（收到 {shown(value)}）")


def _translate(err: dict[str, Any]) -> WorkloadError:
    loc = [str(p) for p in err.get("loc", ()) if not str(p).startswith(("function-", "tagged-union"))]
    field = loc[0] if loc else None
    name = ".".join(loc) if loc else "workload"
    kind, value = err.get("type", ""), err.get("input")
    if kind == "tuple_type" and field != "input_size":
        return WorkloadError(f"{name}: must be a list (got {shown(value)})", f"{name}：必须是列表（收到 {shown(value)}）",
                             field=field)
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
        return WorkloadError(f"{name}: must be one of {choices} (got {shown(value)})",
                             f"{name}：必须是 {choices} 之一（收到 {shown(value)}）", field=field)
    if kind in ("string_too_long", "string_too_short", "too_long", "too_short"):
        ctx = err.get("ctx", {})
        limit = ctx.get("max_length", ctx.get("min_length"))
        return WorkloadError(f"{name}: length must respect the limit {limit} (got {shown(value)})",
                             f"{name}：长度须符合限制 {limit}（收到 {shown(value)}）", field=field)
    if kind in _TYPE_ERRORS:
        en, zh = _TYPE_ERRORS[kind]
        return WorkloadError(f"{name}: {en} (got {shown(value)})", f"{name}：{zh}（收到 {shown(value)}）", field=field)
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    for prefix, (own_field, zh) in _VALIDATOR_ZH.items():
        if msg.startswith(prefix):
            field = field or own_field
            name = name if loc else own_field
            if ("is set but finetune_method" in prefix or prefix == "num_gpus ("
                    or prefix.startswith("expert_parallel (")):  # a check across fields: name the field, not the whole workload
                return WorkloadError(f"{name}: {msg}", f"{name}：{zh}", field=field)
            return WorkloadError(f"{name}: {msg} (got {shown(value)})", f"{name}：{zh}（收到 {shown(value)}）", field=field)
    return WorkloadError(f"{name}: {msg} (got {shown(value)})", f"{name}：取值无效——{msg}（收到 {shown(value)}）", field=field)


# The Workload's own validators speak English; their Chinese, keyed by the start of the English message.
_VALIDATOR_ZH: dict[str, tuple[str, str]] = {
    "region must be": ("region", "必须是 'mainland'（中国内地）、'international'（海外）或地域 ID，如 'cn-hangzhou'"),
    "pytorch_version must look like": ("pytorch_version", "格式应为主版本.次版本，如 '1.8' 或 '2.4'"),
    "must not contain control characters": ("model", "不能包含控制字符"),
    "must be a number, not true/false": ("workload", "必须是数字，不能是 true/false"),
    "lora_rank is set but finetune_method is 'full'": (
        "lora_rank", "设置了 lora_rank，但 finetune_method 为 'full'：请改用 lora 或 qlora，或去掉 lora_rank"),
    "lora_targets is set but finetune_method is 'full'": (
        "lora_targets", "设置了 lora_targets，但 finetune_method 为 'full'：请改用 lora 或 qlora，或去掉 lora_targets"),
    "expert_parallel (": ("expert_parallel", "不能超过 num_gpus（专家并行的 GPU 数不能多于总 GPU 数）"),
    "unknown LoRA target module": (
        "lora_targets", "含有未知的 LoRA 目标模块名；可用 q、k、v、o、gate、up、down、lm_head、attention、mlp 或 all-linear"
        "（也可写 PEFT 的 q_proj、v_proj 等）"),
    "num_gpus (": ("num_gpus", "GPU 总数不是 num_nodes 的整数倍；请给出 GPU 总数，例如两台 8 卡机器为 num_nodes 2、num_gpus 16"),
}
for _key in ("params_billion", "dataset_size_gb", "epochs", "budget_per_hour", "budget_total", "deadline_hours",
             "expected_months_of_use", "training_tokens_billion", "requests_per_second"):
    _VALIDATOR_ZH[f"{_key} must be a finite number"] = (_key, "必须是有限数值")


def workload_from_dict(d: Any) -> Workload:
    """Validate ``d`` into a Workload; raise WorkloadError (zh + en, field named) on the first problem."""
    if not isinstance(d, dict):
        raise WorkloadError("workload must be a mapping of field names to values", "workload 必须是字段名到取值的映射")
    try:
        return Workload.model_validate(d)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise _translate(errors[0] if errors else {}) from None
