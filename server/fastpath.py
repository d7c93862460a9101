"""A shorter route through the SDK for the common HTTP request: one well-formed ``tools/call`` of one of our tools.

In stateless JSON-response mode the SDK serves every POST by building a transport, two memory streams, a
dispatcher and a server task for it, and tearing them down afterwards: about 1.5 ms of CPU per request on the
2-core target, the same for a tool that does nothing (measured in process, no sockets; bench/http_load.py).
``ToolCallFastPath`` sits where the SDK's request handler sits (behind the app's bearer-token middleware and
inside the SDK's request-body limit) and answers such a request itself, with the SDK's own pieces in the SDK's
order: the transport-security check (Host, Origin, Content-Type), the Accept check, the JSON-RPC envelope and
the ``tools/call`` params validated against the SDK's models for the request's protocol version, the tool run
through ``MCPServer.call_tool``, the result shaped by the SDK's per-version serializer and written as the SDK
writes it, except that the structured content (already plain JSON data) is not walked again (``reply_bytes``).
The answer is the same bytes and headers (tests/test_mcp_fastpath.py compares them).

Anything else goes to the SDK unchanged, with the body replayed: other methods, notifications, batches, a
session id or a protocol-version header the handshake does not know, anything a check rejects (the SDK writes
the rejection), an unknown tool, and a tool that raises instead of returning a result (the SDK runs it again and
reports the error in its words; the tools are read-only). Not seen on this route: the SDK's per-request
OpenTelemetry span (a no-op unless an OpenTelemetry SDK is configured in the process). Server middleware:
MCPServer installs only the span and its request-state boundary, which acts on ``requestState`` (a call carrying
one goes to the SDK); with any other middleware or a cache hint for tools/call, every request goes to the SDK.
"""

from collections import deque
from typing import Any

import pydantic_core
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.request_state import RequestStateBoundary
from mcp.server.streamable_http import CONTENT_TYPE_JSON, check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import DEFAULT_NEGOTIATED_VERSION, CallToolResult, JSONRPCRequest, JSONRPCResponse, TextContent
from mcp_types import methods as sdk_methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

METHOD = "tools/call"
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")
_SESSION_HEADER = b"mcp-session-id"
_JSON_HEADERS = {"Content-Type": CONTENT_TYPE_JSON}
# What MCPServer installs: the OpenTelemetry span (skipped here) and the requestState boundary (a no-op for a call
# without requestState, which is all this route takes).
_BUILT_IN_MIDDLEWARE = (OpenTelemetryMiddleware, RequestStateBoundary)


class ToolCallFastPath:
    """ASGI app: serve a plain ``tools/call`` of ``server``'s tools directly, hand everything else to ``fallback``
    (the SDK's handler). For the stateless, JSON-response streamable HTTP app only."""

    def __init__(self, fallback: ASGIApp, server: Any, security: TransportSecuritySettings | None) -> None:
        self.fallback = fallback
        self.server = server
        self.security = TransportSecurityMiddleware(security)
        self.tools = frozenset(tool.name for tool in server._tool_manager.list_tools())
        self.lowlevel = server._lowlevel_server
        self.direct = direct_route_agrees()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self._plain_headers(scope):
            await self.fallback(scope, receive, send)
            return
        body, replay = await _read_body(receive)
        answer = None if body is None else await self._answer(scope, replay, body)
        if answer is None:
            await self.fallback(scope, replay, send)
            return
        await answer(scope, replay, send)

    @staticmethod
    def _plain_headers(scope: Scope) -> bool:
        for key, value in scope["headers"]:
            if key == _SESSION_HEADER:
                return False
            if key == _VERSION_HEADER and value.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
                return False
        return True

    async def _answer(self, scope: Scope, receive: Receive, body: bytes) -> Response | None:
        """The SDK's answer to this request, or None where the SDK should give it."""
        request = Request(scope, receive)
        if await self.security.validate_request(request, is_post=True) is not None:
            return None
        if not check_accept_headers(request)[0] or not _json_content_type(request):
            return None
        if self.lowlevel.cache_hints.get(METHOD) is not None or not all(
                isinstance(m, _BUILT_IN_MIDDLEWARE) for m in self.lowlevel.middleware):
            return None  # configured beyond build_server(): let the SDK apply it
        try:
            raw = pydantic_core.from_json(body)
            if not (isinstance(raw, dict) and raw.get("method") == METHOD and "id" in raw):
                return None
            message = JSONRPCRequest.model_validate(raw, by_name=False)
            params = message.params
            if not params or params.get("name") not in self.tools or params.get("requestState") is not None:
                return None
            version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
            sdk_methods.validate_client_request(METHOD, version, params)
            arguments = params.get("arguments") or {}
            if not isinstance(arguments, dict):
                return None
        except Exception:  # malformed: the SDK words the rejection
            return None
        try:
            result = await self.server.call_tool(params["name"], arguments)
        except Exception:  # the SDK reports (and logs) tool failures its own way
            return None
        if not isinstance(result, CallToolResult):
            return None
        encode = reply_bytes if self.direct else sdk_reply_bytes
        return Response(encode(message.id, version, result), status_code=200, headers=_JSON_HEADERS)


def sdk_reply_bytes(rid: Any, version: str, result: CallToolResult) -> bytes:
    """The JSON-RPC response body as the SDK writes it: the result dumped, validated against the protocol version's
    model and dumped again, then wrapped in a JSONRPCResponse (validated) and dumped to JSON."""
    dumped = sdk_methods.serialize_server_result(
        METHOD, version, result.model_dump(by_alias=True, mode="json", exclude_none=True))
    reply = JSONRPCResponse(jsonrpc="2.0", id=rid, result=dumped)
    return reply.model_dump_json(by_alias=True, exclude_unset=True).encode()


def reply_bytes(rid: Any, version: str, result: CallToolResult) -> bytes:
    """sdk_reply_bytes() without walking the structured content three more times.

    The structured content is already plain JSON data (the tools build it with a JSON-mode dump), and the SDK's
    steps leave such data as it is; they are what costs: a recommendation's 1,300 values are walked by the dump,
    the version's serializer and the response's dump (about 1.4 ms of the 5 ms a request costs the HTTP server).
    Here the SDK's steps run on the result with an empty structured content, which then takes the content's place
    (when the version's model keeps the field), and the response is encoded once. ``direct_route_agrees`` checks
    at start-up that both give the same bytes; tests/test_mcp_fastpath.py compares them on every answer it makes."""
    structured = result.structured_content
    shell = result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"structured_content"})
    if structured is not None:
        shell["structuredContent"] = {}
    dumped = sdk_methods.serialize_server_result(METHOD, version, shell)
    if structured is not None and "structuredContent" in dumped:
        dumped["structuredContent"] = structured
    return pydantic_core.to_json({"jsonrpc": "2.0", "id": rid, "result": dumped})


def direct_route_agrees() -> bool:
    """Whether reply_bytes() writes what sdk_reply_bytes() writes for sample results, in every protocol version the
    handshake accepts (another SDK release may shape results differently: then the SDK's route is used)."""
    nested = {"text": "显存 \"quoted\" <b>&", "n": 3, "x": 0.1, "big": 1e300, "neg": -2.5, "none": None, "ok": True,
              "list": [1, 2.0, "a", {"deep": [None, False]}], "empty": {}, "emptylist": []}
    samples = [
        CallToolResult(content=[TextContent(type="text", text="答案 *md*")], structured_content=nested),
        CallToolResult(content=[TextContent(type="text", text="bad field")], is_error=True),
        CallToolResult(content=[], structured_content={}),
    ]
    try:
        return all(reply_bytes(rid, version, sample) == sdk_reply_bytes(rid, version, sample)
                   for version in HANDSHAKE_PROTOCOL_VERSIONS for sample in samples for rid in (7, "req-7"))
    except Exception:  # noqa: BLE001 - any failure means: use the SDK's route
        return False


def _json_content_type(request: Request) -> bool:
    """The SDK's Content-Type rule for a POST (StreamableHTTPServerTransport._check_content_type)."""
    content_type = request.headers.get("content-type", "")
    return any(part.strip() == CONTENT_TYPE_JSON for part in content_type.split(";")[0].split(","))


async def _read_body(receive: Receive) -> tuple[bytes | None, Receive]:
    """The whole request body (None if the client went away first) and a ``receive`` that replays what was read."""
    messages: deque[Message] = deque()
    chunks: list[bytes] = []
    complete = False
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            complete = True
            break

    async def replay() -> Message:
        if messages:
            return messages.popleft()
        return await receive()

    return (b"".join(chunks) if complete else None), replay
