"""Request checks the SDK leaves to the server, as one MCPServer middleware (``check_requests``):

- ``tools/call`` of a tool the server does not have: a protocol error (JSON-RPC -32602) that lists the tools,
  instead of the SDK's tool result "Unknown tool: x";
- ``prompts/get``: the prompt's arguments validated (``lang`` zh / en, ``job`` text within JOB_MAX_CHARS, no unknown
  argument), each error naming the field, instead of the SDK's "Internal server error" and a logged traceback;
  an unknown prompt lists the prompts;
- ``resources/read`` of a URI longer than URI_MAX_CHARS: refused without echoing it.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

JOB_MAX_CHARS = 4000
URI_MAX_CHARS = 512
PROMPT_ARGUMENTS = ("lang", "job")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def prompt_problem(name: str, arguments: Any, prompts: list[str]) -> str | None:
    """What is wrong with a prompts/get request (in English and Chinese), or None."""
    if name not in prompts:
        return f"Unknown prompt {_shown(name)}; prompts: {', '.join(prompts)} / 没有提示词 {_shown(name)}；可用：{'、'.join(prompts)}"
    if arguments is None:
        return None
    if not isinstance(arguments, dict):
        return "arguments: must be an object / arguments：必须是对象"
    for key, value in arguments.items():
        if key not in PROMPT_ARGUMENTS:
            return (f"{_shown(key)}: unknown argument of prompt {name} (known: {', '.join(PROMPT_ARGUMENTS)}) / "
                    f"{_shown(key)}：提示词 {name} 没有此参数（可用：{'、'.join(PROMPT_ARGUMENTS)}）")
    lang = arguments.get("lang")
    if lang is not None and lang not in ("zh", "en"):
        return f"lang: must be 'zh' or 'en' (got {_shown(lang)}) / lang：必须是 'zh' 或 'en'（收到 {_shown(lang)}）"
    job = arguments.get("job")
    if job is not None and (not isinstance(job, str) or len(job) > JOB_MAX_CHARS):
        return (f"job: must be text of at most {JOB_MAX_CHARS} characters / "
                f"job：必须是不超过 {JOB_MAX_CHARS} 个字符的文本")
    return None


def check_requests(server: Any) -> Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]:
    """The middleware for ``server`` (an MCPServer); it reads the tool and prompt names from the server when a
    request names one it has not seen, so tools added after it (a benchmark's no-op) are known too."""
    known_tools: set[str] = set()
    known_prompts: set[str] = set()

    async def tool_names() -> list[str]:
        return [t.name for t in await server.list_tools()]

    async def prompt_names() -> list[str]:
        return [p.name for p in await server.list_prompts()]

    async def middleware(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if ctx.method == "tools/call":
            name = params.get("name")
            if name not in known_tools:
                names = await tool_names()
                known_tools.update(names)
                if name not in known_tools:
                    raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool {_shown(name)}; tools: {', '.join(names)}")
        elif ctx.method == "resources/read":
            uri = params.get("uri")
            if isinstance(uri, str) and len(uri) > URI_MAX_CHARS:
                raise MCPError(code=INVALID_PARAMS, message=f"uri: longer than {URI_MAX_CHARS} characters "
                               f"({len(uri)}); list the resources with resources/list")
        elif ctx.method == "prompts/get":
            name = params.get("name")
            names = sorted(known_prompts) if name in known_prompts else await prompt_names()
            known_prompts.update(names)
            problem = prompt_problem(name, params.get("arguments"), names)
            if problem is not None:
                raise MCPError(code=INVALID_PARAMS, message=problem)
        return await call_next(ctx)

    return middleware
