"""The HTTP fast path for tools/call (server/fastpath.py) answers exactly as the SDK does: same status, headers
and body bytes, for answers, tool errors, protocol errors and security rejections. Both apps are driven in
process through ASGI, with and without the fast path."""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from latency import mixed_workloads  # noqa: E402

from gpu_advisor.server.http import build_http_app  # noqa: E402

HOST = b"127.0.0.1:8000"
JSON_HEADERS = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]


def call(name: str, arguments: Any, rid: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


async def exchange(app: Any, body: bytes, headers: list[tuple[bytes, bytes]], chunks: int = 1) -> tuple[int, list, bytes]:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"", "server": ("127.0.0.1", 8000),
             "client": ("127.0.0.1", 5000), "headers": headers + [(b"content-length", str(len(body)).encode())]}
    size = max(1, -(-len(body) // chunks))
    parts = [body[i:i + size] for i in range(0, len(body), size)] or [b""]
    messages = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1} for i, p in enumerate(parts)]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    status, out_headers, out = 0, [], []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, out_headers
        if message["type"] == "http.response.start":
            status, out_headers = message["status"], sorted(message.get("headers", []))
        elif message["type"] == "http.response.body":
            out.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, out_headers, b"".join(out)


def cases() -> list[tuple[str, bytes, list[tuple[bytes, bytes]]]]:
    std = [(b"host", HOST), *JSON_HEADERS]
    out = [(f"workload {i}", call("recommend_gpu_config", w, rid=i), std) for i, w in enumerate(mixed_workloads(120, seed=5))]
    out += [(f"estimate {i}", call("estimate_memory", w, rid=f"m{i}"), std) for i, w in enumerate(mixed_workloads(30, seed=6))]
    out += [
        ("ask", call("ask", {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16"}), std),
        ("ask zh", call("ask", {"question": "用 DeepLabV3+ 在 Cityscapes 上训练语义分割，1024x1024，需要什么 GPU？"}), std),
        ("list", call("list_instance_types", {"gpu": "L20", "region": "cn-hangzhou"}), std),
        ("list all", call("list_instance_types", {}), std),
        ("explain", call("explain_rule", {"rule_id": "NET-MULTINODE", "lang": "en"}), std),
        ("json-text args", call("recommend_gpu_config", {"task": "semantic_segmentation", "input_size": "[512, 512]"}), std),
        # tool errors (is_error results) and argument problems
        ("bad field", call("recommend_gpu_config", {"task": "llm_finetune", "seq_len": -3, "lang": "en"}), std),
        ("unknown task", call("recommend_gpu_config", {"task": "dreaming", "lang": "zh"}), std),
        ("wrong type", call("recommend_gpu_config", {"task": "llm_finetune", "batch_size_per_gpu": "many"}), std),
        ("unknown rule", call("explain_rule", {"rule_id": "NOPE"}), std),
        ("unknown gpu", call("list_instance_types", {"gpu": "H900"}), std),
        ("extra arg", call("explain_rule", {"rule_id": "TIER-ENTRY", "colour": "red"}), std),
        ("arguments not an object", call("explain_rule", [1, 2]), std),
        ("no arguments", json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask"}}).encode(), std),
        # what the SDK answers itself
        ("unknown tool", call("rm_rf", {}), std),
        ("not json", b"{nope", std),
        ("batch", b"[" + call("explain_rule", {"rule_id": "TIER-ENTRY"}) + b"]", std),
        ("notification", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), std),
        ("tools/list", json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).encode(), std),
        ("no params", json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call"}).encode(), std),
        ("bad id", json.dumps({"jsonrpc": "2.0", "id": [1], "method": "tools/call", "params": {"name": "ask"}}).encode(), std),
        ("meta", json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "explain_rule", "arguments": {"rule_id": "TIER-ENTRY"}, "_meta": {"progressToken": 7}}}).encode(), std),
        ("protocol 2025-06-18", call("explain_rule", {"rule_id": "TIER-ENTRY"}),
         [*std, (b"mcp-protocol-version", b"2025-06-18")]),
        ("protocol 2024-11-05", call("recommend_gpu_config", {"task": "llm_inference", "model": "Qwen2.5 7B"}),
         [*std, (b"mcp-protocol-version", b"2024-11-05")]),
        ("protocol unknown", call("explain_rule", {"rule_id": "TIER-ENTRY"}), [*std, (b"mcp-protocol-version", b"1999-01-01")]),
        ("session id", call("explain_rule", {"rule_id": "TIER-ENTRY"}), [*std, (b"mcp-session-id", b"abc")]),
        ("foreign host", call("explain_rule", {"rule_id": "TIER-ENTRY"}), [(b"host", b"evil.example:80"), *JSON_HEADERS]),
        ("foreign origin", call("explain_rule", {"rule_id": "TIER-ENTRY"}),
         [*std, (b"origin", b"http://evil.example")]),
        ("text/plain", call("explain_rule", {"rule_id": "TIER-ENTRY"}),
         [(b"host", HOST), (b"content-type", b"text/plain"), (b"accept", b"application/json")]),
        ("accept sse only", call("explain_rule", {"rule_id": "TIER-ENTRY"}),
         [(b"host", HOST), (b"content-type", b"application/json"), (b"accept", b"text/event-stream")]),
        ("too large", call("ask", {"question": "x" * 300_000}), std),
    ]
    return out


@pytest.fixture(scope="module")
def apps() -> tuple[Any, Any]:
    return build_http_app("127.0.0.1", 8000), build_http_app("127.0.0.1", 8000, fast_path=False)


def test_fast_path_answers_like_the_sdk(apps: tuple[Any, Any]) -> None:
    fast, sdk = apps

    async def run() -> None:
        async with fast.router.lifespan_context(fast), sdk.router.lifespan_context(sdk):
            for i, (label, body, headers) in enumerate(cases()):
                chunks = 1 + i % 3  # bodies in one, two or three ASGI messages
                got, want = await exchange(fast, body, headers, chunks), await exchange(sdk, body, headers, chunks)
                assert got == want, label

    asyncio.run(run())


def test_fast_path_serves_tool_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The route is taken (the SDK's per-request transport is not built) for a plain call, not for others."""
    from mcp.server import streamable_http_manager

    fast = build_http_app("127.0.0.1", 8000)
    built: list[int] = []
    original = streamable_http_manager.StreamableHTTPServerTransport.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(streamable_http_manager.StreamableHTTPServerTransport, "__init__", counting)
    std = [(b"host", HOST), *JSON_HEADERS]

    async def run() -> None:
        async with fast.router.lifespan_context(fast):
            status, _, body = await exchange(fast, call("explain_rule", {"rule_id": "TIER-ENTRY"}), std)
            assert status == 200 and json.loads(body)["result"]["isError"] is False
            assert built == []
            await exchange(fast, json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).encode(), std)
            assert built == [1]

    asyncio.run(run())


def test_without_the_sdk_internals_it_expects_the_server_takes_the_sdk_route(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Another SDK release may move what the fast path reads: the server then serves everything the SDK's way."""
    from gpu_advisor.server import fastpath

    def moved(*args: Any, **kwargs: Any) -> None:
        raise AttributeError("'MCPServer' object has no attribute '_tool_manager'")

    monkeypatch.setattr(fastpath.ToolCallFastPath, "__init__", moved)
    app = build_http_app("127.0.0.1", 8000)
    assert app.state.fast_path is False and "fast path off" in capsys.readouterr().err
    std = [(b"host", HOST), *JSON_HEADERS]

    async def run() -> None:
        async with app.router.lifespan_context(app):
            status, _, body = await exchange(app, call("explain_rule", {"rule_id": "TIER-ENTRY"}), std)
            assert status == 200 and json.loads(body)["result"]["isError"] is False

    asyncio.run(run())


def test_the_fast_path_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert build_http_app("127.0.0.1", 8000).state.fast_path is True
    monkeypatch.setenv("GPU_ADVISOR_HTTP_FASTPATH", "0")
    assert build_http_app("127.0.0.1", 8000).state.fast_path is False


def test_the_direct_reply_is_the_sdks_and_is_checked_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """reply_bytes() (structured content not walked again) writes the SDK's bytes for real answers in every protocol
    version; where it would not (another SDK release), the start-up check turns it off and the SDK's writer is used."""
    from mcp_types import CallToolResult
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from gpu_advisor.server import fastpath
    from gpu_advisor.server.app import build_server

    server = build_server(inline_tools=True)
    results = [asyncio.run(server.call_tool("recommend_gpu_config", w)) for w in mixed_workloads(12, seed=9)]
    results.append(asyncio.run(server.call_tool("recommend_gpu_config", {"task": "llm_finetune", "seq_len": -3})))
    assert all(isinstance(r, CallToolResult) for r in results) and results[-1].is_error
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        for i, result in enumerate(results):
            assert fastpath.reply_bytes(i, version, result) == fastpath.sdk_reply_bytes(i, version, result), version
    assert fastpath.direct_route_agrees() is True

    def reshaped(method: str, version: str, data: Any) -> dict[str, Any]:
        return {**data, "structuredContent": {"moved": True}} if "structuredContent" in data else dict(data)

    monkeypatch.setattr(fastpath.sdk_methods, "serialize_server_result", reshaped)
    assert fastpath.direct_route_agrees() is False
    assert fastpath.ToolCallFastPath(None, server, None).direct is False
