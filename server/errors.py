"""Tool errors a model can fix, in the caller's language: a message that names the field, says what is
wrong and, where there are any, lists the closest valid values. Never a traceback, never the SDK's wording.
"""

from typing import Any

from pydantic import BaseModel, ValidationError

LANGS = ("zh", "en")

# pydantic error type -> (en, zh); {x} placeholders come from the error's ctx.
_TEMPLATES: dict[str, tuple[str, str]] = {
    "missing": ("this field is required", "此字段为必填项"),
    "extra_forbidden": ("unknown field", "未知字段"),
    "enum": ("must be one of {expected}", "必须是以下之一：{expected}"),
    "literal_error": ("must be one of {expected}", "必须是以下之一：{expected}"),
    "int_parsing": ("must be a whole number", "必须是整数"),
    "int_type": ("must be a whole number", "必须是整数"),
    "int_from_float": ("must be a whole number", "必须是整数"),
    "float_parsing": ("must be a number", "必须是数字"),
    "float_type": ("must be a number", "必须是数字"),
    "finite_number": ("must be a finite number", "必须是有限数值"),
    "bool_parsing": ("must be true or false", "必须是 true 或 false"),
    "bool_type": ("must be true or false", "必须是 true 或 false"),
    "string_type": ("must be a string", "必须是字符串"),
    "string_too_short": ("must have at least {min_length} character(s)", "至少需要 {min_length} 个字符"),
    "string_too_long": ("must have at most {max_length} characters", "最多 {max_length} 个字符"),
    "greater_than": ("must be greater than {gt}", "必须大于 {gt}"),
    "greater_than_equal": ("must be at least {ge}", "必须大于或等于 {ge}"),
    "less_than": ("must be less than {lt}", "必须小于 {lt}"),
    "less_than_equal": ("must be at most {le}", "必须小于或等于 {le}"),
    "tuple_type": ("must be a list of two integers [height, width]", "必须是两个整数组成的列表 [高, 宽]"),
    "list_type": ("must be a list", "必须是列表"),
    "too_short": ("has too few items", "元素太少"),
    "too_long": ("has too many items", "元素太多"),
    "dict_type": ("must be an object", "必须是对象"),
    # Only `region` has a pattern among the tool inputs.
    "string_pattern_mismatch": ("must be 'mainland', 'international' or a region id such as 'cn-hangzhou'",
                                "必须是 'mainland'、'international' 或地域 ID（如 'cn-hangzhou'）"),
    "model_type": ("the arguments must be an object", "参数必须是对象"),
}
_FALLBACK = ("is invalid", "取值无效")
_FIX = {"en": "Correct it and call the tool again.", "zh": "请修正后重新调用。"}


def pick_lang(value: Any, default: str = "zh") -> str:
    """The requested language when it is a valid one, else the default (zh, as in the Workload)."""
    value = getattr(value, "value", value)
    return value if value in LANGS else default


def _value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_validation(exc: ValidationError, model: type[BaseModel], lang: str) -> tuple[str, str | None, list[str]]:
    """(message, first field, suggestions) for a pydantic ValidationError, in lang."""
    parts: list[str] = []
    first_field: str | None = None
    suggestions: list[str] = []
    known = list(model.model_fields)
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"])
        first_field = first_field or (str(err["loc"][0]) if err["loc"] else None)
        kind = err["type"]
        if kind == "value_error":
            # Our own validators (region, pytorch_version, consistency) write English; keep the sentence.
            detail = str(err["ctx"]["error"]) if "ctx" in err else err["msg"]
        else:
            en, zh = _TEMPLATES.get(kind, _FALLBACK)
            ctx = {k: v for k, v in (err.get("ctx") or {}).items()}
            try:
                detail = (zh if lang == "zh" else en).format(**ctx)
            except (KeyError, IndexError):
                detail = zh if lang == "zh" else en
        if kind == "extra_forbidden":
            import difflib  # here, not at import: the server's start-up needs no difflib

            close = difflib.get_close_matches(loc, known, n=3, cutoff=0.5)
            suggestions.extend(close)
            hint = (f"（是否想用：{'、'.join(close)}？）" if lang == "zh" else f" (did you mean: {', '.join(close)}?)") if close else ""
            detail += hint
        elif kind not in ("missing", "model_type") and "input" in err:
            detail += f"（收到 {_value(err['input'])}）" if lang == "zh" else f" (got {_value(err['input'])})"
        parts.append(f"{loc or ('参数' if lang == 'zh' else 'arguments')}: {detail}")
    sep = "；" if lang == "zh" else "; "
    return sep.join(parts) + ("。" if lang == "zh" else ". ") + _FIX[lang], first_field, suggestions


def describe_advisor_error(exc: Any, lang: str) -> str:
    """The message of a gpu_advisor AdvisorError in lang, with its suggestions when it lists any."""
    message = exc.message(lang) if hasattr(exc, "message") else str(exc)
    suggestions = [s for s in getattr(exc, "suggestions", []) or [] if s not in message]
    if suggestions:
        joined = ("、" if lang == "zh" else ", ").join(suggestions[:8])
        message += f"（可选：{joined}）" if lang == "zh" else f" (closest known: {joined})"
    field = getattr(exc, "field", None)
    if field and field not in message:
        message = f"{field}: {message}"
    return message
