"""A shorter route for the common HTTP request, behind an exact SDK pin: one plain ``tools/call`` of one of our tools,
from a handshake-era client (no ``Mcp-Session-Id``, no protocol-version header or one of the handshake versions) or
a 2026-07-28 one (the ``_meta`` envelope and routing headers the SDK's client sends).

Why: in stateless JSON-response mode the SDK serves every handshake-era POST by building a transport, two memory
streams, a JSON-RPC dispatcher and a server task for it, and tearing them down afterwards; with Starlette and the
runner's middleware chain that is about 0.9-1 ms of CPU per request on the 2-core target (0.3 ms on the 2026-07-28
single-exchange path), a third of a typical tool call (docs/benchmarks.md).

What it does: ``ToolCallFastPath.answer`` is called by the HTTP guard (server/http.py) after the body is read and
checked. It answers only a request it fully understands, and returns False (nothing sent, the body replayed to the
SDK) for anything else: another path than exactly /mcp, duplicate header names, a session id, a protocol-version
header it does not know, a Content-Type other than exactly ``application/json``, an Accept the SDK would refuse, a
Host / Origin the SDK's transport security refuses, a body that is not exactly ``{jsonrpc, id, method: "tools/call",
params: {name, arguments}}`` with a known tool name (2026-07-28: plus ``_meta`` holding only the protocol version,
client info and capabilities; in the handshake era no ``_meta``: progress tokens, request state and log levels go to
the SDK), an envelope or routing header the SDK's ladder (``classify_inbound_request``) rejects, any
``Mcp-Param-*`` header, or params the SDK's per-version surface rejects. A request it takes is answered with the
SDK's own pieces in the SDK's order: its JSON-RPC models, its per-version request check
(``mcp_types.methods.validate_client_request``), the tool run once through ``MCPServer.call_tool`` (public: the
tool's argument model, our wrapper with its thread hop and time limit, the result conversion), a raised exception
turned into a tool error as the SDK's ``tools/call`` handler does (an ``MCPError`` into a JSON-RPC error as its
dispatcher or its modern entry does), the result shaped by ``mcp_types.methods.serialize_server_result`` for the
request's version (2026-07-28: ``resultType`` and the ``serverInfo`` stamp, as the runner adds them) and written as
the SDK's transport writes it. The bytes, status and headers are the SDK route's (tests/test_mcp_fastpath.py sends
every case through both and compares them).

Not on this route: the SDK's request context (``ServerRequestContext``: our tools take no Context argument, a test
checks it) and the server middleware chain: MCPServer's request-state boundary acts only on ``_meta.requestState``
(such a call goes to the SDK), our request checks only refuse unknown tools (such a call goes to the SDK), prompt
registration only acts on prompt methods; the OpenTelemetry middleware, when tracing is wanted, turns the fast path
off. With a bearer token the SDK's auth middleware runs, so the fast path is off too. No private SDK attribute is
read; the SDK code it mirrors is checked against the installed SDK by tests/test_mcp_fastpath.py.

Pinned: the route mirrors the SDK's behaviour, so it is on only when the installed ``mcp`` and ``mcp-types`` are
exactly the versions in PINS (pyproject.toml pins the same); otherwise it says so once on stderr and every request
goes to the SDK. GPU_ADVISOR_HTTP_FAST_PATH=0 turns it off.
"""

import importlib.metadata
import logging
import os
import sys
from typing import Any

import pydantic_core
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.request_state import RequestStateBoundary
from mcp.server.streamable_http import CONTENT_TYPE_JSON, check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.exceptions import MCPError
from mcp.server.runner import modern_error_data
from mcp.shared.inbound import (ERROR_CODE_HTTP_STATUS, MCP_PARAM_HEADER_PREFIX, MCP_PROTOCOL_VERSION_HEADER,
                                X_MCP_HEADER_KEY, InboundModernRoute, classify_inbound_request,
                                validate_mcp_param_headers)
from mcp_types import (CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, DEFAULT_NEGOTIATED_VERSION,
                       PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY, CallToolRequestParams, CallToolResult,
                       ErrorData, Implementation, JSONRPCError, JSONRPCRequest, JSONRPCResponse, TextContent,
                       jsonrpc_message_adapter, methods)
from mcp_types.jsonrpc import INTERNAL_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

PINS = {"mcp": "2.3.0", "mcp-types": "2.3.0"}
PARAM_KEYS = frozenset({"name", "arguments"})
MODERN_PARAM_KEYS = PARAM_KEYS | {"_meta"}
ENVELOPE_META_KEYS = frozenset({PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY})
_PARAM_HEADER_PREFIX = MCP_PARAM_HEADER_PREFIX.lower().encode("latin-1")
ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
METHOD = "tools/call"
PATH = "/mcp"  # the SDK's streamable_http_path, as server/http.py serves it
CONTENT_TYPE = CONTENT_TYPE_JSON.encode("latin-1")
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")
_SESSION_HEADER = b"mcp-session-id"
# The SDK's tools/call handler logs through its module's logger; the fast path logs the same events there.
_sdk_logger = logging.getLogger("mcp.server.mcpserver.server")
_reported: set[str] = set()


def installed_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PINS:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def off_reason(server: Any, token: str | None) -> str | None:
    """Why the fast path cannot serve ``server``, or None when it can."""
    if os.environ.get("GPU_ADVISOR_HTTP_FAST_PATH", "").strip() == "0":
        return "GPU_ADVISOR_HTTP_FAST_PATH=0"
    versions = installed_versions()
    if versions != PINS:
        shown = ", ".join(f"{k} {v}" for k, v in versions.items())
        return f"the installed SDK ({shown}) is not the pinned one ({', '.join(f'{k} {v}' for k, v in PINS.items())})"
    if token is not None:
        return "a bearer token is set (the SDK's auth middleware runs)"
    for middleware in server.middleware:
        if not isinstance(middleware, RequestStateBoundary) and \
                not getattr(middleware, "__module__", "").startswith("gpu_advisor.server."):
            return f"server middleware {type(middleware).__name__} would not run"
    return None


def report_off(reason: str) -> None:
    """Say once per process, on stderr, why the fast path is off (not for an explicit opt-out or a token)."""
    if reason in _reported or reason.startswith(("GPU_ADVISOR_HTTP_FAST_PATH", "a bearer token")):
        return
    _reported.add(reason)
    sys.stderr.write(f"gpu-advisor serve: HTTP fast path off: {reason}; every request goes through the SDK\n")


def for_server(server: Any, security: Any, token: str | None) -> "ToolCallFastPath | None":
    """The fast path for ``server`` (an MCPServer built by gpu_advisor.server.app.build_server), or None when off."""
    reason = off_reason(server, token)
    if reason is not None:
        report_off(reason)
        return None
    from gpu_advisor.server.registry import published_tools

    return ToolCallFastPath(server, security, {entry["name"]: entry["input_schema"] for entry in published_tools()})


def _annotates(node: Any) -> bool:
    """Whether a JSON schema has an ``x-mcp-header`` key anywhere."""
    if isinstance(node, dict):
        return X_MCP_HEADER_KEY in node or any(_annotates(v) for v in node.values())
    if isinstance(node, list):
        return any(_annotates(v) for v in node)
    return False


def _tool_error(name: str, exc: Exception) -> Any:
    """MCPServer's tools/call handler for a raising tool, mirrored: logged as the SDK logs it, and a tool error result
    with the exception's text."""
    if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
        if isinstance(exc.__cause__, ValidationError):
            fields = sorted({".".join(str(part) for part in err["loc"]) for err in exc.__cause__.errors()})
            _sdk_logger.info("Tool %r rejected arguments: %r", name, fields)
        else:
            _sdk_logger.info("Tool %r failed: %r", name, str(exc))
    else:
        _sdk_logger.exception("Tool %r raised an unexpected exception", name)
    return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)


async def _no_receive() -> dict[str, Any]:  # pragma: no cover - a plain Response never reads
    return {"type": "http.disconnect"}


class ToolCallFastPath:
    def __init__(self, server: Any, security: Any, tools: dict[str, Any]) -> None:
        self.server = server
        self.security = TransportSecurityMiddleware(security)
        self.tools = frozenset(tools)
        self.input_schemas = tools  # what MCPServer's tools publish as inputSchema (server/registry.make_tool)
        # Tools whose input schema annotates no property with x-mcp-header: with no Mcp-Param-* header in the
        # request (else the SDK answers it), validate_mcp_param_headers has nothing to compare and returns None.
        self.no_param_headers = frozenset(name for name, schema in tools.items() if not _annotates(schema))
        # the serverInfo stamp of a 2026-07-28 result, as the low-level server derives it from these fields
        self.server_info = Implementation(name=server.name, version=server.version, title=server.title,
                                          description=server.description, website_url=server.website_url,
                                          icons=server.icons).model_dump(by_alias=True, mode="json", exclude_none=True)

    async def answer(self, scope: Any, headers: dict[bytes, bytes], body: bytes, send: Any) -> bool:
        """Answer a plain tools/call of one of our tools and return True; False (nothing sent) for the SDK."""
        if scope["path"] != PATH or scope.get("root_path") or len(headers) != len(scope["headers"]) \
                or _SESSION_HEADER in headers:  # "/mcp/" is the SDK's app's (a redirect), as are duplicates
            return False
        version = headers.get(_VERSION_HEADER)
        if version is None:
            version_text = DEFAULT_NEGOTIATED_VERSION
        else:
            version_text = version.decode("latin-1")
            if version_text in MODERN_PROTOCOL_VERSIONS:
                return await self.answer_modern(scope, headers, body, send)
            if version_text not in HANDSHAKE_PROTOCOL_VERSIONS:
                return False
        if headers.get(b"content-type") != CONTENT_TYPE:
            return False
        request = Request(scope)
        if not check_accept_headers(request)[0]:
            return False
        if await self.security.validate_request(request, is_post=True) is not None:
            return False
        try:
            raw = pydantic_core.from_json(body)
        except ValueError:
            return False
        if type(raw) is not dict or raw.keys() != ENVELOPE_KEYS or raw["method"] != METHOD:
            return False
        params = raw["params"]
        if type(params) is not dict or not params.keys() <= PARAM_KEYS or params.get("name") not in self.tools \
                or type(params.get("arguments", {})) is not dict:
            return False
        try:
            message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
            if not isinstance(message, JSONRPCRequest) or message.params != params:
                return False
            methods.validate_client_request(METHOD, version_text, params)
            typed = CallToolRequestParams.model_validate(params, by_name=False)
        except (ValueError, KeyError, ValidationError):  # the SDK's to answer (its error, its words)
            return False
        payload = await self._call(message.id, version_text, typed.name, typed.arguments or {})
        await Response(payload, status_code=200, headers={"Content-Type": CONTENT_TYPE_JSON})(scope, _no_receive, send)
        return True

    async def _call(self, request_id: Any, version: str, name: str, arguments: dict[str, Any]) -> bytes:
        """The JSON-RPC answer to one tools/call, as the SDK's handler, runner and dispatcher write it."""
        error: ErrorData | None = None
        try:
            result = await self.server.call_tool(name, arguments)
        except MCPError as exc:  # the dispatcher's handler_exception_to_error_data
            error = exc.error
        except Exception as exc:  # MCPServer's tools/call handler: a tool error with the exception's text
            result = _tool_error(name, exc)
        if error is None:
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            try:
                wire = methods.serialize_server_result(METHOD, version, dumped)
            except ValidationError:
                logging.getLogger("mcp.server.runner").exception("handler for %r returned an invalid result", METHOD)
                error = ErrorData(code=INTERNAL_ERROR, message="Handler returned an invalid result")
            else:
                return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=wire).model_dump_json(
                    by_alias=True, exclude_unset=True).encode()
        return JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump_json(
            by_alias=True, exclude_unset=True).encode()

    async def answer_modern(self, scope: Any, headers: dict[bytes, bytes], body: bytes, send: Any) -> bool:
        """The same for a 2026-07-28 request (the SDK's single-exchange path, mcp.server._streamable_http_modern
        in JSON-response mode): the envelope in ``_meta`` classified by the SDK's ladder, the ``Mcp-Param-*`` headers
        checked against the tool's input schema, the result stamped with ``resultType`` and ``serverInfo``."""
        import json

        if headers.get(b"content-type") != CONTENT_TYPE or any(k.startswith(_PARAM_HEADER_PREFIX) for k in headers):
            return False
        request = Request(scope)
        if await self.security.validate_request(request, is_post=True) is not None:
            return False
        if not check_accept_headers(request)[0]:
            return False
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return False
        if type(decoded) is not dict or decoded.keys() != ENVELOPE_KEYS or decoded["method"] != METHOD:
            return False
        params = decoded["params"]
        if type(params) is not dict or not params.keys() <= MODERN_PARAM_KEYS or params.get("name") not in self.tools \
                or type(params.get("arguments", {})) is not dict or type(params.get("_meta")) is not dict \
                or not params["_meta"].keys() <= ENVELOPE_META_KEYS:
            return False
        try:
            message = JSONRPCRequest.model_validate(decoded)
            if message.params != params:
                return False
            verdict = classify_inbound_request(decoded, headers=dict(request.headers))
            if not isinstance(verdict, InboundModernRoute):
                return False
            arguments = params.get("arguments") or {}
            if params["name"] not in self.no_param_headers and validate_mcp_param_headers(
                    self.input_schemas[params["name"]], arguments, request.headers) is not None:
                return False
            version = verdict.protocol_version
            methods.validate_client_request(METHOD, version, params)
            typed = CallToolRequestParams.model_validate(params, by_name=False)
        except (ValueError, KeyError, ValidationError):
            return False
        reply = await self._call_modern(message.id, version, typed.name, typed.arguments or {})
        status = ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200) if isinstance(reply, JSONRPCError) else 200
        wire = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
        await Response(json.dumps(wire, separators=(",", ":")), status_code=status,
                       media_type=CONTENT_TYPE_JSON)(scope, _no_receive, send)
        return True

    async def _call_modern(self, request_id: Any, version: str, name: str,
                           arguments: dict[str, Any]) -> JSONRPCResponse | JSONRPCError:
        """The reply to one 2026-07-28 tools/call, as the SDK's handler, runner and single-exchange entry make it."""
        try:
            try:
                result = await self.server.call_tool(name, arguments)
            except MCPError:
                raise
            except Exception as exc:
                result = _tool_error(name, exc)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if dumped.get("resultType") not in (None, "complete"):  # pragma: no cover - our tools never set it
                raise RuntimeError("a tool result with a resultType the fast path does not mirror")
            try:
                dumped = methods.serialize_server_result(METHOD, version, dumped)
            except ValidationError:
                logging.getLogger("mcp.server.runner").exception("handler for %r returned an invalid result", METHOD)
                raise MCPError(code=INTERNAL_ERROR, message="Handler returned an invalid result") from None
            if dumped.get("resultType") is None:
                dumped["resultType"] = "complete"
            meta = dumped.get("_meta")
            if meta is None:
                dumped["_meta"] = {SERVER_INFO_META_KEY: dict(self.server_info)}
            elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
                dumped["_meta"] = {**meta, SERVER_INFO_META_KEY: dict(self.server_info)}
        except Exception as exc:
            return JSONRPCError(jsonrpc="2.0", id=request_id, error=modern_error_data(exc))
        return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)
