"""server/fastpath.py: (a) the same requests through the fast path and through the SDK give the same bytes, status
and headers, and each call runs its tool once; (b) the SDK pieces the fast path mirrors are where and what it expects,
and the installed SDK is the pinned one (a new SDK release fails here first: re-check the fast path against it, then
move the pins in server/fastpath.py and pyproject.toml together)."""

import asyncio
import inspect
import json
import re
from pathlib import Path
from typing import Any


ROOT = Path(__file__).resolve().parent.parent
HOST = b"127.0.0.1:8000"
BASE_HEADERS = [(b"host", HOST), (b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream")]


def call(name: str, arguments: Any = None, rid: Any = 1, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    params.update(extra)
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


VALID = [
    call("recommend_gpu_config", {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024],
                                  "lang": "en"}),
    call("recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora",
                                  "lang": "zh"}, rid="abc"),
    call("recommend_gpu_config", {"task": "object_detection", "model": "Mask R-CNN", "batch_size_per_gpu": 4}, rid=0),
    call("recommend_gpu_config", {"task": "llm_inference", "model": "Qwen2.5 72B", "detail": "full", "lang": "en"}),
    call("estimate_memory", {"task": "llm_finetune", "model": "Qwen2.5 7B", "lang": "en"}, rid=2 ** 40),
    call("list_instance_types", {"gpu": "L20", "region": "cn-hangzhou"}),
    call("list_instance_types", {}),
    call("list_instance_types"),  # no arguments at all
    call("explain_rule", {"rule_id": "NET-MULTINODE", "lang": "en"}),
    call("ask", {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16"}),
    call("ask", {"question": "用两张 A10 部署 Qwen2.5 14B 够吗？"}),
]
INVALID_ARGUMENTS = [
    call("recommend_gpu_config", {"model": "Llama 3.1 8B"}),  # no task
    call("recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 3.1 8B", "lang": "fr"}),
    call("recommend_gpu_config", {"task": "llm_finetune", "model": "NoSuchModel 9000B", "lang": "en"}),
    call("recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 3.1 8B", "batch_size_per_gpu": -3}),
    call("estimate_memory", {"task": "no_such_task"}),
    call("list_instance_types", {"gpu": 42}),
    call("explain_rule", {"rule_id": "NO-SUCH-RULE", "lang": "zh"}),
    call("explain_rule", {}),
    call("ask", {"question": "x" * 5000}),
    call("ask", {"question": 12}),
]
# what the fast path leaves to the SDK (or the guard answers before it): the answers must still agree
OTHERS = [
    call("no_such_tool", {}),
    call("ask", {"question": "hi"}, _meta={"progressToken": 5}),
    call("ask", {"question": "hi"}, extra_key=1),
    call("ask", None, rid=None),
    call("ask", {"question": "hi"}, rid=True),
    call("ask", {"question": "hi"}, rid=1.5),
    {**call("ask", {"question": "hi"}), "extra": 1},
    {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "ask", "arguments": {"question": "hi"}}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ask", "arguments": "question=hi"}},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": 7}},
    [call("ask", {"question": "hi"})],  # a batch
]


def _bodies() -> list[tuple[str, bytes]]:
    out = [(f"valid-{i}", json.dumps(m).encode()) for i, m in enumerate(VALID)]
    out += [(f"invalid-{i}", json.dumps(m, ensure_ascii=False).encode()) for i, m in enumerate(INVALID_ARGUMENTS)]
    out += [(f"other-{i}", json.dumps(m).encode()) for i, m in enumerate(OTHERS)]
    out += [("not-json", b"{nope"), ("spaced", json.dumps(VALID[-3], indent=2).encode())]
    return out


def _header_variants() -> list[tuple[str, list[tuple[bytes, bytes]], bool]]:
    """(label, headers, whether the fast path may take a plain call with them)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    out = [("plain", BASE_HEADERS, True)]
    out += [(f"version {v}", [*BASE_HEADERS, (b"mcp-protocol-version", v.encode())], True)
            for v in HANDSHAKE_PROTOCOL_VERSIONS]
    out += [(f"version {v}", [*BASE_HEADERS, (b"mcp-protocol-version", v.encode())], False)
            for v in (*MODERN_PROTOCOL_VERSIONS, "1999-01-01")]
    swap = {b"accept": [b"application/json", b"text/event-stream", b"*/*", b"application/*", b"text/html"],
            b"content-type": [b"application/json; charset=utf-8", b"text/plain", b"APPLICATION/JSON"]}
    for name, values in swap.items():
        for value in values:
            headers = [(k, value if k == name else v) for k, v in BASE_HEADERS]
            fast = (name == b"accept" and value in (b"application/json", b"*/*", b"application/*"))
            out.append((f"{name.decode()}: {value.decode()}", headers, fast))
    out.append(("no accept", [h for h in BASE_HEADERS if h[0] != b"accept"], False))
    out.append(("session id", [*BASE_HEADERS, (b"mcp-session-id", b"not-a-session")], False))
    out.append(("two accepts", [*BASE_HEADERS, (b"accept", b"text/html")], False))
    out.append(("origin", [*BASE_HEADERS, (b"origin", b"http://localhost:3000")], True))
    out.append(("foreign origin", [*BASE_HEADERS, (b"origin", b"http://evil.example")], False))
    out.append(("bad host", [(b"host", b"evil.example"), *BASE_HEADERS[1:]], False))
    return out


class Exchange:
    """Both apps (fast path on and off) in one event loop, their lifespans running."""

    def __init__(self) -> None:
        from gpu_advisor.server.app import build_http_app

        self.fast = build_http_app("127.0.0.1", 8000)
        self.slow = build_http_app("127.0.0.1", 8000, fast_path=False)
        assert self.fast.fast is not None and self.slow.fast is None
        self.taken: list[bool] = []
        answer = self.fast.fast.answer

        async def recording(*args: Any) -> bool:
            self.taken.append(await answer(*args))
            return self.taken[-1]

        self.fast.fast.answer = recording

    @staticmethod
    async def send(app: Any, headers: list[tuple[bytes, bytes]], body: bytes, path: str = "/mcp",
                   query: bytes = b"") -> tuple[int, list, bytes]:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
                 "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query,
                 "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
                 "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        out: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            out.append(message)

        await app(scope, receive, send)
        start = next(m for m in out if m["type"] == "http.response.start")
        return start["status"], sorted(start["headers"]), b"".join(m.get("body", b"") for m in out
                                                                   if m["type"] == "http.response.body")

    async def both(self, cases: list[tuple]) -> list[tuple[str, Any, Any, bool]]:
        out = []
        async with self.fast.router.lifespan_context(self.fast.app), self.slow.router.lifespan_context(self.slow.app):
            for label, headers, body, *where in cases:
                before = len(self.taken)
                fast = await self.send(self.fast, headers, body, *where)
                slow = await self.send(self.slow, headers, body, *where)
                out.append((label, fast, slow, any(self.taken[before:])))
        return out


def test_fast_path_answers_as_the_sdk_does_byte_for_byte() -> None:
    exchange = Exchange()
    cases = [(f"{b} / plain", BASE_HEADERS, body) for b, body in _bodies()]
    plain_call = json.dumps(VALID[8]).encode()  # explain_rule: cheap
    cases += [(f"explain_rule / {label}", headers, plain_call) for label, headers, _ in _header_variants()]
    cases += [("explain_rule / path /mcp/", BASE_HEADERS, plain_call, "/mcp/"),
              ("explain_rule / query", BASE_HEADERS, plain_call, "/mcp", b"x=1")]
    results = asyncio.run(exchange.both(cases))
    expected_fast = {"explain_rule / query"}
    expected_fast |= {f"{b} / plain" for b, _ in _bodies() if b.startswith(("valid", "invalid")) or b == "spaced"}
    expected_fast |= {f"explain_rule / {label}" for label, _, fast in _header_variants() if fast}
    mismatches = [(label, fast, slow) for label, fast, slow, _ in results if fast != slow]
    assert not mismatches, mismatches[:3]
    taken = {label for label, _, _, was_fast in results if was_fast}
    assert taken == expected_fast, (sorted(taken - expected_fast), sorted(expected_fast - taken))
    statuses = {label: fast[0] for label, fast, _, _ in results}
    assert statuses["valid-0 / plain"] == 200 and statuses["other-12 / plain"] == 400  # the batch: the guard's
    assert statuses["explain_rule / path /mcp/"] == 307  # Starlette's redirect to /mcp, on both routes


MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}


def modern(message: dict[str, Any], meta: Any = ENVELOPE, **headers: str) -> tuple[list, bytes]:
    """A 2026-07-28 request as the SDK's client sends it: the _meta envelope and the routing headers."""
    message = json.loads(json.dumps(message))
    if meta is not None:
        message["params"]["_meta"] = meta
    routing = {"mcp-protocol-version": MODERN, "mcp-method": message["method"],
               "mcp-name": str(message["params"].get("name")), **headers}
    lines = [*BASE_HEADERS, *((k.encode(), v.encode()) for k, v in routing.items() if v is not None)]
    return lines, json.dumps(message, ensure_ascii=False).encode()


def test_fast_path_answers_2026_07_28_requests_as_the_sdk_does_byte_for_byte() -> None:
    exchange = Exchange()
    plain = call("explain_rule", {"rule_id": "NET-MULTINODE", "lang": "en"}, rid=9)
    cases, expected = [], set()
    for i, m in enumerate(VALID + INVALID_ARGUMENTS):
        cases.append((f"modern-{i}", *modern(m)))
        expected.add(f"modern-{i}")
    no_info = {k: v for k, v in ENVELOPE.items() if not k.endswith("clientInfo")}
    cases += [
        ("no clientInfo", *modern(plain, meta=no_info)),
        ("unknown tool", *modern(call("no_such_tool", {}))),
        ("no _meta", *modern(plain, meta=None)),
        ("progress token", *modern(plain, meta={**ENVELOPE, "progressToken": 3})),
        ("other version in _meta",
         *modern(plain, meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2026-01-01"})),
        ("name header mismatch", *modern(plain, **{"mcp-name": "ask"})),
        ("no method header", *modern(plain, **{"mcp-method": None})),
        ("param header", *modern(plain, **{"mcp-param-rule_id": "NET-MULTINODE"})),
        ("tools/list", *modern({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}})),
        ("bad arguments type", *modern({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                        "params": {"name": "ask", "arguments": "x"}})),
    ]
    expected.add("no clientInfo")
    headers, body = modern(plain)
    cases += [("accept json only", [(k, b"application/json" if k == b"accept" else v) for k, v in headers], body),
              ("accept sse only", [(k, b"text/event-stream" if k == b"accept" else v) for k, v in headers], body),
              ("foreign origin", [*headers, (b"origin", b"http://evil.example")], body)]
    expected.add("accept json only")
    results = asyncio.run(exchange.both(cases))
    mismatches = [(label, fast, slow) for label, fast, slow, _ in results if fast != slow]
    assert not mismatches, mismatches[:3]
    taken = {label for label, _, _, was_fast in results if was_fast}
    assert taken == expected, (sorted(taken - expected), sorted(expected - taken))
    reply = json.loads(dict((label, fast) for label, fast, _, _ in results)["modern-0"][2])
    assert reply["result"]["resultType"] == "complete" and reply["result"]["_meta"]


def test_fast_path_runs_a_raising_tool_once_and_answers_as_the_sdk(monkeypatch) -> None:
    from gpu_advisor.server import tools as T

    calls: list[int] = []

    def boom(q, lang):
        calls.append(1)
        raise RuntimeError("secret internal detail")

    monkeypatch.setitem(T.SPECS, "explain_rule", T.SPECS["explain_rule"].__class__(
        **{**T.SPECS["explain_rule"].__dict__, "handler": boom}))
    exchange = Exchange()
    message = call("explain_rule", {"rule_id": "TIER-ENTRY"})
    results = asyncio.run(exchange.both([("boom", BASE_HEADERS, json.dumps(message).encode()),
                                         ("boom 2026", *modern(message))]))
    assert calls == [1, 1, 1, 1]  # once on each route, in each era
    for _, fast, slow, was_fast in results:
        assert was_fast and fast == slow
        reply = json.loads(fast[2])
        assert reply["result"]["isError"] is True and "secret" not in fast[2].decode()


def test_fast_path_turns_an_mcp_error_into_the_dispatchers_json_rpc_error(monkeypatch) -> None:
    from mcp.shared.exceptions import MCPError

    from gpu_advisor.server import tools as T

    def refuse(q, lang):
        raise MCPError(code=-32001, message="refused here", data={"why": "test"})

    monkeypatch.setitem(T.SPECS, "explain_rule", T.SPECS["explain_rule"].__class__(
        **{**T.SPECS["explain_rule"].__dict__, "handler": refuse}))
    exchange = Exchange()
    message = call("explain_rule", {"rule_id": "TIER-ENTRY"}, rid="x")
    results = asyncio.run(exchange.both([("mcp error", BASE_HEADERS, json.dumps(message).encode()),
                                         ("mcp error 2026", *modern(message))]))
    for _, fast, slow, was_fast in results:
        assert was_fast and fast == slow
        assert json.loads(fast[2])["error"]["code"] == -32001


def test_fast_path_is_off_without_the_pinned_sdk_and_says_so_once(monkeypatch, capsys) -> None:
    from gpu_advisor.server import fastpath
    from gpu_advisor.server.app import build_http_app

    monkeypatch.setattr(fastpath, "installed_versions", lambda: {"mcp": "2.4.0", "mcp-types": "2.4.0"})
    monkeypatch.setattr(fastpath, "_reported", set())
    assert build_http_app("127.0.0.1", 8000).fast is None
    assert build_http_app("127.0.0.1", 8000).fast is None
    err = capsys.readouterr().err
    assert err.count("HTTP fast path off") == 1 and "2.4.0" in err
    monkeypatch.undo()
    monkeypatch.setenv("GPU_ADVISOR_HTTP_FAST_PATH", "0")
    assert build_http_app("127.0.0.1", 8000).fast is None
    monkeypatch.delenv("GPU_ADVISOR_HTTP_FAST_PATH")
    assert build_http_app("127.0.0.1", 8000, token="t0ken").fast is None


def test_fast_path_is_off_when_tracing_middleware_runs(monkeypatch) -> None:
    from gpu_advisor.server.app import build_http_app

    monkeypatch.setenv("OTEL_SERVICE_NAME", "gpu-advisor-test")
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    assert build_http_app("127.0.0.1", 8000).fast is None


def test_the_installed_sdk_is_the_pinned_one() -> None:
    from gpu_advisor.server import fastpath

    assert fastpath.installed_versions() == fastpath.PINS
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for name, version in fastpath.PINS.items():
        pin = rf'"{re.escape(name)}=={re.escape(version)}"'
        assert re.search(pin, text), f"pyproject.toml must pin {name}=={version}"


def test_the_sdk_pieces_the_fast_path_mirrors_are_where_it_expects() -> None:
    """What server/fastpath.py reads or reproduces, checked against the installed SDK: the names, their kinds and
    signatures, and the constants and code it mirrors (the tools/call handler's exception ladder, the runner's
    serialisation, the transport's response writer)."""
    from mcp.server import runner, streamable_http, streamable_http_manager
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver import server as mcpserver_module
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.server.request_state import RequestStateBoundary
    from mcp.server.transport_security import TransportSecurityMiddleware
    from mcp.shared import jsonrpc_dispatcher
    from mcp.shared.exceptions import MCPError
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
    from mcp_types import DEFAULT_NEGOTIATED_VERSION, CallToolRequestParams, JSONRPCRequest, methods
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from gpu_advisor.server.app import build_server

    assert MCP_PROTOCOL_VERSION_HEADER.lower() == "mcp-protocol-version"
    assert streamable_http.MCP_SESSION_ID_HEADER.lower() == "mcp-session-id"
    assert streamable_http.CONTENT_TYPE_JSON == "application/json"
    assert DEFAULT_NEGOTIATED_VERSION in HANDSHAKE_PROTOCOL_VERSIONS
    assert not set(HANDSHAKE_PROTOCOL_VERSIONS) & set(MODERN_PROTOCOL_VERSIONS)
    assert issubclass(UnexpectedToolError, ToolError) and issubclass(MCPError, Exception)
    assert set(CallToolRequestParams.model_fields) >= {"name", "arguments"}
    assert list(inspect.signature(methods.validate_client_request).parameters)[:3] == ["method", "version", "params"]
    assert list(inspect.signature(methods.serialize_server_result).parameters)[:3] == ["method", "version", "data"]
    assert inspect.iscoroutinefunction(TransportSecurityMiddleware.validate_request)
    assert list(inspect.signature(TransportSecurityMiddleware.validate_request).parameters) == [
        "self", "request", "is_post"]
    assert list(inspect.signature(MCPServer.call_tool).parameters) == ["self", "name", "arguments", "context"]
    assert isinstance(JSONRPCRequest.model_fields["id"].annotation, object)

    def source(obj: Any) -> str:
        return re.sub(r"\s+", " ", inspect.getsource(obj))

    # the stateless legacy route the fast path replaces: header routing, then one transport per request
    manager = source(streamable_http_manager.StreamableHTTPSessionManager._handle_request)
    assert "pv not in HANDSHAKE_PROTOCOL_VERSIONS" in manager and "handle_modern_request" in manager
    post = source(streamable_http.StreamableHTTPServerTransport._handle_post_request)
    for piece in ("self._validate_accept_header(", "self._check_content_type(", "pydantic_core.from_json(body)",
                  "jsonrpc_message_adapter.validate_python(raw_message, by_name=False)",
                  "request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)"):
        assert piece in post, piece
    assert "model_dump_json(by_alias=True, exclude_unset=True)" in source(
        streamable_http.StreamableHTTPServerTransport._create_json_response)
    assert 'response_headers = {"Content-Type": CONTENT_TYPE_JSON}' in source(
        streamable_http.StreamableHTTPServerTransport._create_json_response)
    # the runner: per-version request check, typed params, serialisation of the handler's result
    inner = source(runner.ServerRunner._on_request)
    for piece in ("_methods.validate_client_request(method, version, params)",
                  "entry.params_type.model_validate({} if params is None else params, by_name=False)",
                  "return self._serialize(method, version, result)"):
        assert piece in inner, piece
    serialize = source(runner.ServerRunner._serialize)
    for piece in ("_methods.serialize_server_result(method, version, dumped)",
                  'message="Handler returned an invalid result"', "if version in MODERN_PROTOCOL_VERSIONS"):
        assert piece in serialize, piece
    assert 'model_dump(by_alias=True, mode="json", exclude_none=True)' in source(runner._dump_result)
    # the dispatcher: result and error envelopes, MCPError's own ErrorData
    assert 'JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)' in source(
        jsonrpc_dispatcher.JSONRPCDispatcher._write_result)
    assert 'JSONRPCError(jsonrpc="2.0", id=request_id, error=error)' in source(
        jsonrpc_dispatcher.JSONRPCDispatcher._write_error)
    assert "return exc.error" in source(jsonrpc_dispatcher.handler_exception_to_error_data)
    # MCPServer's tools/call handler: the exception ladder the fast path copies
    handler = source(mcpserver_module.MCPServer._handle_call_tool)
    for piece in ("await self.call_tool(params.name, params.arguments or {}, context)", "except MCPError: raise",
                  "isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError)",
                  'CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)'):
        assert piece in handler, piece
    # the 2026-07-28 single-exchange entry (JSON mode) and the runner's 2026-era result stamps
    from mcp.server import _streamable_http_modern as modern_entry
    from mcp.shared import inbound
    from mcp.server.lowlevel import server as lowlevel

    entry = source(modern_entry.handle_modern_request)
    for piece in ("decoded = json.loads(body)", "req = JSONRPCRequest.model_validate(decoded)",
                  "find_duplicated_routing_header(request.headers.items())",
                  "verdict = classify_inbound_request(decoded, headers=dict(request.headers))",
                  "await _mcp_param_rejection(app, request, req, verdict, lifespan_state)",
                  "if json_response and req.method != \"subscriptions/listen\":",
                  "serve_one(app, dctx, req.method, req.params, connection=connection, lifespan_state=lifespan_state)"):
        assert piece in entry, piece
    assert "lookup = app.get_tool_input_schema" in source(modern_entry._mcp_param_rejection)
    assert "validate_mcp_param_headers(input_schema, arguments, request.headers)" in source(
        modern_entry._mcp_param_rejection)
    params_check = source(inbound.validate_mcp_param_headers)
    assert "for path, token, schema in _annotated_positions(input_schema):" in params_check
    assert params_check.count("return InboundLadderRejection(") == params_check.split(
        "for path, token, schema in _annotated_positions(input_schema):")[1].count("return InboundLadderRejection(")
    assert "X_MCP_HEADER_KEY" in source(inbound._annotated_positions) or "x-mcp-header" in source(
        inbound._annotated_positions)
    assert "error=modern_error_data(exc)" in source(modern_entry._to_jsonrpc_response)
    write = source(modern_entry._write)
    for piece in ("ERROR_CODE_HTTP_STATUS.get(msg.error.code, _OK_STATUS)",
                  'msg.model_dump(mode="json", by_alias=True, exclude_none=True)',
                  'json.dumps(body, separators=(",", ":"))', 'media_type="application/json"'):
        assert piece in write, piece
    assert modern_entry._OK_STATUS == 200
    assert 'dumped["resultType"] = "complete"' in serialize
    assert "return self._stamp_server_info(version, dumped)" in serialize
    stamp = source(runner.ServerRunner._stamp_server_info)
    assert "result[\"_meta\"] = {SERVER_INFO_META_KEY: self.server.server_info_stamp}" in stamp
    assert "if meta.get(SERVER_INFO_META_KEY) is None:" in stamp
    info = source(lowlevel.Server.server_info.fget)
    for field in ("name=self.name", "version=self.version", "title=self.title", "description=self.description",
                  "website_url=self.website_url", "icons=self.icons"):
        assert field in info, field
    assert "return None if tool is None else tool.parameters" in source(mcpserver_module.MCPServer._tool_input_schema)
    assert "get_tool_input_schema=self._tool_input_schema" in source(mcpserver_module.MCPServer.__init__)
    # our server: no cache hints, tools that take no Context, middleware the fast path accounts for
    server = build_server()
    tools = asyncio.run(server.list_tools())
    assert {t.name for t in tools} == {"recommend_gpu_config", "estimate_memory", "list_instance_types",
                                       "explain_rule", "ask"}
    for middleware in server.middleware:
        assert isinstance(middleware, RequestStateBoundary) or middleware.__module__.startswith("gpu_advisor.server.")
    assert "requestState" in source(RequestStateBoundary) or "request_state" in source(RequestStateBoundary)
    from gpu_advisor.server.registry import make_tool, published_tools

    for entry in published_tools():
        assert make_tool(entry).context_kwarg is None
