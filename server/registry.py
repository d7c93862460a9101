"""How a gpu-advisor tool is built on the SDK: advertised schemas from pydantic models, our own validation.

The SDK would validate arguments itself and answer bad ones with pydantic's English text behind an
"Error executing tool" prefix. A tool error should instead name the field in the language the caller asked
for, so each tool here takes its arguments as they came (a pass-through argument model), validates them
with the library (``workload_from_dict``) or its own input model, and returns an ``is_error`` result with
that message. The advertised input schema is still the input model's JSON schema. A successful result is the
handler's output model (validated by pydantic when it was built), with bilingual texts in the answer's language;
the advertised output schema describes exactly that (references inlined, texts as strings).

What tools/list publishes is data (server/tools.json, generated from the ToolSpecs in server/tools.py): the server
starts without importing the engine, and the first call of a tool imports the code behind it.
"""

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources as importlib_resources
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from gpu_advisor.server.errors import LANGS, describe_advisor_error, describe_validation, pick_lang

PUBLISHED = "tools.json"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Handler = Callable[[Any, str], tuple[BaseModel, str]]
Validator = Callable[[dict[str, Any], str], Any]


class ToolInputError(Exception):
    """A bad argument, already described in the caller's language."""


class PassThroughArgs(ArgModelBase):
    """Accepts any arguments and hands them to the tool unchanged (the tool validates them itself)."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def inline_refs(schema: dict[str, Any], replace: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The schema with local ``#/$defs/X`` references replaced by their definitions (no ``$defs`` left).

    Some MCP clients and model providers do not resolve ``$ref`` in tool input schemas; enums are then lost.
    For output schemas it also matters for speed: jsonschema validates an inlined schema about 1.6x faster than
    one that resolves ``$ref`` at every node (measured on the recommendation, bench/mcp_roundtrip.py).
    ``replace`` substitutes whole definitions (by name). Only for non-recursive models (the tools' are)."""
    defs = {**schema.get("$defs", {}), **(replace or {})}

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = resolve(defs[ref.removeprefix("#/$defs/")])
                return {**target, **{k: resolve(v) for k, v in node.items() if k != "$ref"}}
            return {k: resolve(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


def pre_parse(arguments: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Some clients send lists and objects as JSON text (e.g. input_size "[1024, 1024]"): parse those."""
    out = dict(arguments)
    for key, value in arguments.items():
        info = model.model_fields.get(key)
        if info is None or not isinstance(value, str) or not value.strip().startswith(("[", "{")):
            continue
        if any(word in str(info.annotation) for word in ("tuple", "list", "dict")):
            try:
                out[key] = json.loads(value)
            except (ValueError, RecursionError):
                pass
    return out


def model_validator(model: type[BaseModel]) -> Validator:
    """Validate arguments into ``model``; a ValidationError becomes a ToolInputError in lang."""

    def validate(arguments: dict[str, Any], lang: str) -> BaseModel:
        try:
            return model.model_validate(pre_parse(arguments, model))
        except ValidationError as exc:
            raise ToolInputError(describe_validation(exc, model, lang)[0]) from None

    return validate


# Bilingual sentences (gpu_advisor.util.i18n.Text, {"zh": ..., "en": ...}) are published in the caller's language only:
# the Markdown answer is in that language already, and the second language doubled the structured content
# (recommendation: 65 KB -> 36 KB), which the client parses and validates against the schema on every call.
ONE_LANGUAGE_TEXT = {"type": "string", "description": "in the requested language (lang)"}


class StructuredOutput(BaseModel):
    """What the SDK validates a tool's structured content against: the handler's output model has already
    validated it, and the published schema (test-checked) describes it."""

    model_config = ConfigDict(extra="allow")


def structured(output: BaseModel, lang: str) -> dict[str, Any]:
    """The output as published: the JSON-mode dump with every Text as its ``lang`` string, in one pass (Text's
    serializer reads the context): 0.76 -> 0.28 ms for a recommendation, against a dump and then a walk that replaces
    every {"zh", "en"} pair. The tools' outputs hold no other such dict (rule ``set`` values are scalars;
    tests/test_mcp_structured.py compares both forms)."""
    return output.model_dump(mode="json", context={"lang": lang})


NULL = {"type": "null"}


def nullable_as_type_list(node: Any) -> Any:
    """``{"anyOf": [X, {"type": "null"}]}`` (pydantic's Optional) as X with ``"null"`` added to its type list.

    The same set of instances (the keywords of X other than ``type`` and ``enum`` only constrain X's own type), but
    jsonschema validates it without trying two branches: the recommendation's schema has 74 such unions, and the
    client-side validation of one answer drops from 21 to 10 ms. Unions it cannot rewrite exactly stay as they are."""
    if isinstance(node, list):
        return [nullable_as_type_list(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: nullable_as_type_list(v) for k, v in node.items()}
    branches = node.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and NULL in branches):
        return node
    other = branches[0] if branches[1] == NULL else branches[1]
    if not isinstance(other, dict) or "type" not in other or {"anyOf", "oneOf", "allOf", "const", "not"} & set(other):
        return node
    types = other["type"] if isinstance(other["type"], list) else [other["type"]]
    merged = {**{k: v for k, v in node.items() if k != "anyOf"}, **other, "type": [*types, "null"]}
    if "enum" in other:
        merged["enum"] = [*other["enum"], None]
    return merged


def compact(node: Any, in_properties: bool = False) -> Any:
    """A schema without what only costs a model tokens: ``title`` keywords (the property name says it) and
    ``"default": null``. Property *names* are kept whatever they are (a property may be called "title")."""
    if isinstance(node, list):
        return [compact(v) for v in node]
    if not isinstance(node, dict):
        return node
    if in_properties:
        return {name: compact(sub) for name, sub in node.items()}
    return {k: compact(v, in_properties=k == "properties") for k, v in node.items()
            if k != "title" and not (k == "default" and v is None)}


def output_schema(output_model: type[BaseModel]) -> dict[str, Any]:
    """The published output schema: the model's as the SDK derives it, with references inlined, bilingual texts
    as strings and nullable fields as type lists (see nullable_as_type_list), without titles."""
    generated = FuncMetadata(arg_model=PassThroughArgs, output_model=output_model).output_schema
    assert generated is not None
    return compact(nullable_as_type_list(inline_refs(generated, replace={"Text": ONE_LANGUAGE_TEXT})))


def not_nullable(node: Any) -> Any:
    """``{"anyOf": [X, {"type": "null"}]}`` as X, with the union's other keywords (description, default): in an
    input, leaving an optional field out is how it is left unset (a null sent anyway is still accepted)."""
    if isinstance(node, list):
        return [not_nullable(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: not_nullable(v) for k, v in node.items()}
    branches = node.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and NULL in branches:
        other = branches[0] if branches[1] == NULL else branches[1]
        if isinstance(other, dict):
            return {**other, **{k: v for k, v in node.items() if k != "anyOf"}}
    return node


def input_schema(input_model: type[BaseModel], descriptions: dict[str, str] | None = None) -> dict[str, Any]:
    """The published input schema: references inlined (some clients lose enums behind $ref), without titles or null
    branches, with ``descriptions`` (by property) in place of the model's where given."""
    schema = compact(not_nullable(inline_refs(input_model.model_json_schema())))
    for name, text in (descriptions or {}).items():
        if name in schema.get("properties", {}):
            schema["properties"][name]["description"] = text
    return schema


# Free-text arguments: where the user's own words are, and so their language.
TEXT_FIELDS = ("question", "model", "backbone", "gpu_preference", "gpu")
CJK_PATTERN = r"[\u3400-\u9fff]"  # compiled at the first call, not at import: 1-2.6 ms of `initialize` otherwise


def bad_lang(arguments: dict[str, Any]) -> str | None:
    """The tool error (in English and Chinese: the language asked for is not one we have) for a lang outside
    zh / en; None when lang is absent, null, zh or en."""
    value = arguments.get("lang")
    if value is None or value in LANGS:
        return None
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return (f"lang: must be 'zh' or 'en' (got {shown}). Correct it and call the tool again. / "
            f"lang：必须是 'zh' 或 'en'（收到 {shown}）。请修正后重新调用。")


def answer_lang(arguments: dict[str, Any]) -> str:
    """The language of the answer and its errors: lang when given; else the question's (ask); else zh when the
    user's words (model, backbone, GPU names) are Chinese; else zh, the Workload's default."""
    value = arguments.get("lang")
    if value in LANGS:
        return value
    question = arguments.get("question")
    if isinstance(question, str) and question.strip():
        from gpu_advisor.ask.parser import detect_lang

        return detect_lang(question[:4000])
    if any(isinstance(arguments.get(f), str) and re.search(CJK_PATTERN, arguments[f]) for f in TEXT_FIELDS):
        return "zh"
    return pick_lang(None)


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


@dataclass(frozen=True)
class ToolSpec:
    """One tool as written in server/tools.py: what it publishes and the code that answers it."""

    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Handler
    validator: Validator | None = None  # default: the input model's (model_validator)
    descriptions: dict[str, str] | None = None  # published field descriptions in place of the input model's

    def __post_init__(self) -> None:
        if self.validator is None:
            object.__setattr__(self, "validator", model_validator(self.input_model))

    def published(self) -> dict[str, Any]:
        """The entry of server/tools.json: what tools/list shows for this tool."""
        return {"name": self.name, "title": self.title, "description": self.description,
                "input_schema": input_schema(self.input_model, self.descriptions),
                "output_schema": output_schema(self.output_model)}

    def run(self, arguments: dict[str, Any]) -> CallToolResult:
        """Validate, call ``handler(input, lang) -> (output model, text)``, return both (or a tool error)."""
        from gpu_advisor.errors import AdvisorError

        bad = bad_lang(arguments)
        if bad is not None:
            return error_result(bad)
        lang = answer_lang(arguments)
        assert self.validator is not None  # set in __post_init__
        try:
            value = self.validator(arguments, lang)
            output, text = self.handler(value, lang)
        except ToolInputError as exc:
            return error_result(str(exc))
        except AdvisorError as exc:
            return error_result(describe_advisor_error(exc, lang))
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=structured(output, getattr(output, "lang", None) or lang))


def published_tools() -> list[dict[str, Any]]:
    """server/tools.json: each tool's name, title, description and schemas, as tools/list publishes them.

    Generated from server/tools.py by tools/gen_tool_schemas.py (a test fails when it is out of date). Reading it
    instead of deriving the schemas means starting the server imports none of the engine's models and runs no
    schema generation (0.13 s of `initialize`); the engine is imported by the first tool call."""
    text = importlib_resources.files("gpu_advisor.server").joinpath(PUBLISHED).read_text(encoding="utf-8")
    return json.loads(text)


_lookup: Callable[[str], ToolSpec] | None = None


def use_tools(lookup: Callable[[str], ToolSpec]) -> None:
    """Where a call finds its ToolSpec by name. The server that composes the tools sets it
    (gpu_advisor.server.app.build_server): this framework imports neither the tools nor the warm-up."""
    global _lookup
    _lookup = lookup


def _spec(name: str) -> ToolSpec:
    if _lookup is None:
        raise RuntimeError("no tools registered: build the server with gpu_advisor.server.app.build_server")
    return _lookup(name)


def time_limit_s() -> float:
    """Seconds one tool call may take before its caller gets a tool error (GPU_ADVISOR_TOOL_TIMEOUT_S, default 20)."""
    text = os.environ.get("GPU_ADVISOR_TOOL_TIMEOUT_S", "").strip()
    try:
        value = float(text) if text else DEFAULT_TIME_LIMIT_S
    except ValueError:
        value = DEFAULT_TIME_LIMIT_S
    return value if 0 < value <= 3600 else DEFAULT_TIME_LIMIT_S


DEFAULT_TIME_LIMIT_S = 20.0


def timeout_result(name: str, limit: float, lang: str) -> CallToolResult:
    return error_result(f"{name}：{limit:g} 秒内未完成，已放弃本次调用；请缩短问题或减少字段后重试。" if lang == "zh" else
                        f"{name}: did not finish within {limit:g} s and was abandoned; shorten the question or the "
                        "input and call again.")


def make_tool(entry: dict[str, Any]) -> Tool:
    """A read-only tool from its published entry; the first call imports the code behind it (server/tools.py).

    Every call runs on a worker thread (anyio's pool), off the event loop, under a time limit (time_limit_s()): a
    slow call never holds up the other requests of the server, and its caller gets a tool error when the limit is
    reached. Python cannot stop a thread: an abandoned call finishes in the background and its answer is dropped
    (the tools are read-only)."""
    import anyio
    import anyio.to_thread

    name = entry["name"]

    def call(arguments: dict[str, Any]) -> CallToolResult:
        return _spec(name).run(arguments)

    async def run(**arguments: Any) -> CallToolResult:
        limit = time_limit_s()
        with anyio.move_on_after(limit) as scope:
            return await anyio.to_thread.run_sync(call, arguments, abandon_on_cancel=True)
        assert scope.cancelled_caught
        return timeout_result(name, limit, answer_lang(arguments) if bad_lang(arguments) is None else "en")

    run.__name__ = name
    metadata = FuncMetadata(arg_model=PassThroughArgs, output_model=StructuredOutput, output_schema=entry["output_schema"])
    return Tool(fn=run, name=name, title=entry["title"], description=entry["description"],
                parameters=entry["input_schema"], fn_metadata=metadata, is_async=True, annotations=READ_ONLY)


def all_tools() -> list[Tool]:
    """The five tools, as published in server/tools.json."""
    return [make_tool(entry) for entry in published_tools()]
