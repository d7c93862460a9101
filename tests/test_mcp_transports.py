"""The server as its users run it: `gpu-advisor serve` over stdio and over streamable HTTP on 127.0.0.1,
driven by the SDK's own client; plus the HTTP security checks (token, Origin, Host, body size)."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from stdio_child import Child

pytestmark = pytest.mark.anyio

CALLS = {
    "recommend_gpu_config": {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024], "lang": "en"},
    "estimate_memory": {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "lang": "zh"},
    "ask": {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16, in Singapore"},
    "list_instance_types": {"gpu": "L20", "region": "cn-hangzhou"},
    "explain_rule": {"rule_id": "TIER-ENTRY", "lang": "en"},
}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
TIMEOUT_S = 90


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def serve_command() -> list[str]:
    """The installed console script when there is one, else the module."""
    script = Path(sys.executable).parent / "gpu-advisor"
    return [str(script), "serve"] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli", "serve"]


async def exercise(client) -> None:
    """List tools, call each one (structured output checked against its schema), read resources, get a prompt."""
    import anyio

    with anyio.fail_after(TIMEOUT_S):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(CALLS)
        for name, args in CALLS.items():
            result = await client.call_tool(name, args)
            assert not result.is_error, (name, result.content[0].text)
            Draft202012Validator(tools[name].output_schema).validate(result.structured_content)
            assert result.content[0].text.strip()
        bad = await client.call_tool("recommend_gpu_config", {"task": "semantic_segmentation", "num_gpus": -1, "lang": "zh"})
        assert bad.is_error and "num_gpus" in bad.content[0].text and "取值" in bad.content[0].text
        catalog = json.loads((await client.read_resource("gpu-advisor://catalog/instances")).contents[0].text)
        assert catalog["knowledge_version"] and catalog["instance_types"]
        rule = json.loads((await client.read_resource("gpu-advisor://rules/TIER-ENTRY")).contents[0].text)
        assert rule["en"]["id"] == "TIER-ENTRY"
        prompt = await client.get_prompt("size_training_job", {"lang": "en", "job": "YOLOv8 on COCO"})
        assert "YOLOv8 on COCO" in prompt.messages[0].content.text


async def test_stdio_console_script(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = serve_command()
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(tmp_path))
    with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await exercise(client)
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")


async def test_stdio_first_calls_arrive_together(tmp_path: Path) -> None:
    """A fresh server imports a tool's code on its first call: the five tools called at once as the very first
    calls (each on its own worker thread, importing concurrently) all answer, as they answer when called again."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = serve_command()
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(tmp_path))
    first: dict = {}
    with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            async def one(name: str, args: dict) -> None:
                first[name] = await client.call_tool(name, args)

            with anyio.fail_after(TIMEOUT_S):
                async with anyio.create_task_group() as group:
                    for name, args in CALLS.items():
                        group.start_soon(one, name, args)
                again = {name: await client.call_tool(name, args) for name, args in CALLS.items()}
    assert set(first) == set(CALLS)
    for name in CALLS:
        assert not first[name].is_error, (name, first[name].content[0].text)
        assert first[name].structured_content == again[name].structured_content, name
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("linger_s", [0.0, 0.25])
def test_stdio_client_leaving_during_the_warm_up(tmp_path: Path, linger_s: float) -> None:
    """The server warms up on a background thread after the handshake (server/warmup.py; here at once, delay 0). A
    client that leaves then (stdin closed mid-import or mid-load): the server exits by itself, status 0, nothing on
    stderr. A late answer or exit fails with the server's thread stacks (tests/stdio_child.py)."""
    child = Child(serve_command(), cwd=tmp_path, env={"GPU_ADVISOR_WARM_UP_DELAY_S": "0"})
    try:
        child.send([json.dumps(INIT).encode()])
        if not child.replies_until(INIT["id"], TIMEOUT_S):
            pytest.fail(f"no answer to initialize within {TIMEOUT_S} s; {child.stacks()}")
        assert child.replies[-1]["result"]["serverInfo"]["name"] == "gpu-advisor"
        child.send([json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()])
        time.sleep(linger_s)
        try:
            code = child.close(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"no exit within {TIMEOUT_S} s of the client leaving; {child.stacks()}")
        assert code == 0
        assert child.stderr() == ""
    finally:
        child.kill()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    def __init__(self, tmp: Path, token: str | None = None, workers: int = 1, parser: str | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_ADVISOR_ALLOWED")}
        env.pop("GPU_ADVISOR_TOKEN", None)
        if token:
            env["GPU_ADVISOR_TOKEN"] = token
        env.pop("GPU_ADVISOR_HTTP_PARSER", None)
        if parser:
            env["GPU_ADVISOR_HTTP_PARSER"] = parser
        self.log = open(tmp / f"http-{self.port}.log", "w+", encoding="utf-8")
        self.proc = subprocess.Popen([*serve_command(), "--transport", "http", "--port", str(self.port),
                                      "--workers", str(workers)], env=env,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, cwd=tmp)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError(f"HTTP server did not start: {self.output()}")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory):
    server = HttpServer(tmp_path_factory.mktemp("http"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory):
    server = HttpServer(tmp_path_factory.mktemp("http-token"), token="s3cret-token")
    yield server
    server.stop()


def post(url: str, body: bytes | None = None, **headers: str) -> tuple[int, str]:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, data=body if body is not None else json.dumps(INIT).encode(),
                                     headers={**base, **{k.replace("_", "-"): v for k, v in headers.items()}}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


async def test_streamable_http(http_server: HttpServer) -> None:
    from mcp import Client

    async with Client(http_server.url) as client:
        await exercise(client)


async def test_streamable_http_handshake_era_client(http_server: HttpServer) -> None:
    """The SDK's client in its initialize-handshake mode: its tools/call requests take the fast path
    (server/fastpath.py), the rest the SDK's route; the client validates every answer."""
    from mcp import Client

    async with Client(http_server.url, mode="legacy") as client:
        await exercise(client)


async def test_http_concurrent_calls_agree(http_server: HttpServer) -> None:
    """Sync tools run on worker threads; the rule engine is lock-guarded: concurrent answers are identical."""
    import anyio
    from mcp import Client

    results: list = []
    args = {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "lang": "en"}
    async with Client(http_server.url) as client:
        async def one() -> None:
            results.append(await client.call_tool("recommend_gpu_config", args))

        with anyio.fail_after(TIMEOUT_S):
            async with anyio.create_task_group() as group:
                for _ in range(16):
                    group.start_soon(one)
    assert len(results) == 16 and not any(r.is_error for r in results)
    assert len({json.dumps(r.structured_content, sort_keys=True) for r in results}) == 1


def test_http_is_stateless_json(http_server: HttpServer) -> None:
    status, body = post(http_server.url)
    assert status == 200 and json.loads(body)["result"]["serverInfo"]["name"] == "gpu-advisor"
    # Stateless: a tools/list needs no session id from an earlier initialize.
    status, body = post(http_server.url, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode())
    assert status == 200 and len(json.loads(body)["result"]["tools"]) == len(CALLS)


def test_http_refuses_foreign_origin_and_host(http_server: HttpServer) -> None:
    assert post(http_server.url, Origin="http://evil.example")[0] == 403
    assert post(http_server.url, Host="evil.example:80")[0] == 421
    assert post(http_server.url, Origin=f"http://localhost:{http_server.port}")[0] == 200


def test_http_matches_host_and_origin_exactly(http_server: HttpServer) -> None:
    port = http_server.port
    for host in (f"127.0.0.1:{port}@evil.example", f"127.0.0.1:{port}.evil.example", f"localhost:{port}/x",
                 "127.0.0.1:80x", "127.0.0.1.evil.example", f"[::1]:{port}evil"):
        assert post(http_server.url, Host=host)[0] == 421, host
    for origin in (f"http://127.0.0.1:{port}@evil.example", f"http://localhost:{port}.evil.example",
                   "http://localhost.evil.example", f"http://127.0.0.1:{port}/path"):
        assert post(http_server.url, Origin=origin)[0] == 403, origin
    assert post(http_server.url, Host=f"localhost:{port}")[0] == 200
    assert post(http_server.url, Origin=f"http://127.0.0.1:{port}")[0] == 200


@pytest.mark.parametrize("body, code", [(b"{nope", -32700), (b"\xff\xfe", -32700), (b"[1, 2]", -32600),
                                        (json.dumps([INIT]).encode(), -32600), (b"42", -32600),
                                        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
                                        (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600),
                                        (b'{"jsonrpc": "2.0", "id": 1}', -32600)])
def test_http_malformed_json_rpc_gets_a_json_rpc_error(http_server: HttpServer, body: bytes, code: int) -> None:
    status, text = post(http_server.url, body)
    error = json.loads(text)["error"]
    assert status == 400 and error["code"] == code and "pydantic" not in error["message"], text
    if code == -32600 and body.startswith(b"[") and len(body) > 10:
        assert "batch" in error["message"]


def test_http_get_and_delete_are_refused_at_once(http_server: HttpServer) -> None:
    for method in ("GET", "DELETE"):
        request = urllib.request.Request(http_server.url, method=method, headers={"Accept": "text/event-stream"})
        t0 = time.monotonic()
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError(f"{method} answered 2xx")
        except urllib.error.HTTPError as exc:
            assert exc.code == 405 and exc.headers["Allow"] == "POST"
        assert time.monotonic() - t0 < 2


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_http_3000_get_streams_leave_memory_as_it_was(http_server: HttpServer) -> None:
    """3,000 clients opening GET /mcp (once an event stream that never ended): each is answered 405 and closed;
    the server's RSS stays within 50 MB of where it started."""
    import asyncio

    async def one(port: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        writer.close()
        return head.split(b"\r\n", 1)[0]

    async def many(port: int) -> list[bytes]:
        out: list[bytes] = []
        for _ in range(30):  # 30 waves of 100 concurrent connections
            out += await asyncio.gather(*(one(port) for _ in range(100)))
        return out

    before = _rss_mb(http_server.proc.pid)
    lines = asyncio.run(many(http_server.port))
    time.sleep(0.5)
    after = _rss_mb(http_server.proc.pid)
    print(f"3,000 GET /mcp: server RSS {before:.1f} -> {after:.1f} MB")
    assert len(lines) == 3000 and all(b" 405 " in line for line in lines), set(lines)
    assert after - before < 50, (before, after)


def test_http_idle_and_slow_header_connections_are_closed(http_server: HttpServer, monkeypatch) -> None:
    """A connection that sends no complete request head within HEAD_TIMEOUT_S is closed by the server."""
    from gpu_advisor.server.http import HEAD_TIMEOUT_S

    with socket.create_connection(("127.0.0.1", http_server.port), timeout=HEAD_TIMEOUT_S + 10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and then nothing
        t0 = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server
        assert HEAD_TIMEOUT_S - 1 < time.monotonic() - t0 < HEAD_TIMEOUT_S + 5


def test_http_parser_is_httptools_with_h11_as_the_fallback(tmp_path: Path) -> None:
    """The server uses httptools' parser when installed (a dependency), h11 when asked or when it is missing; both
    keep the head time limit and answer a call the same way."""
    from gpu_advisor.server.http import HEAD_TIMEOUT_S, protocol_class

    assert protocol_class().__name__ == "HeadTimeoutHttpTools"
    assert protocol_class("h11").__name__ == "HeadTimeoutH11"
    server = HttpServer(tmp_path, parser="h11")
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "explain_rule", "arguments": {"rule_id": "NET-MULTINODE", "lang": "en"}}})
        status, text = post(server.url, body.encode())
        assert status == 200 and json.loads(text)["result"]["isError"] is False
        with socket.create_connection(("127.0.0.1", server.port), timeout=HEAD_TIMEOUT_S + 10) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            t0 = time.monotonic()
            assert sock.recv(1024) == b""
            assert HEAD_TIMEOUT_S - 1 < time.monotonic() - t0 < HEAD_TIMEOUT_S + 5
    finally:
        server.stop()


def test_http_refuses_large_bodies(http_server: HttpServer) -> None:
    from gpu_advisor.server.http import MAX_BODY_BYTES

    payload = json.dumps({**INIT, "padding": "x" * (MAX_BODY_BYTES + 1)}).encode()
    assert post(http_server.url, payload)[0] == 413


def test_http_token_required_when_set(token_server: HttpServer) -> None:
    assert post(token_server.url)[0] == 401
    assert post(token_server.url, Authorization="Bearer wrong")[0] == 401
    status, _ = post(token_server.url, Authorization="Bearer s3cret-token")
    assert status == 200
    assert post(token_server.url, Authorization="Bearer s3cret-token", Origin="http://evil.example")[0] == 403


async def test_http_client_with_token(token_server: HttpServer) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}, timeout=60) as http:
        async with Client(streamable_http_client(token_server.url, http_client=http)) as client:
            result = await client.call_tool("explain_rule", {"rule_id": "TIER-ENTRY"})
            assert not result.is_error and result.structured_content["id"] == "TIER-ENTRY"


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as children:
        return [int(x) for x in children.read().split()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_http_workers_share_the_port_and_stop_together(tmp_path: Path) -> None:
    """--workers 2: two forked worker processes answer on one port, keep the checks, and end with the server."""
    server = HttpServer(tmp_path, workers=2)
    try:
        deadline = time.monotonic() + 30
        while len(workers := _children(server.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers) == 2, server.output()
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "explain_rule", "arguments": {"rule_id": "TIER-ENTRY", "lang": "en"}}}
        for _ in range(6):
            status, body = post(server.url, json.dumps(call).encode())
            assert status == 200 and json.loads(body)["result"]["structuredContent"]["id"] == "TIER-ENTRY"
        assert post(server.url, Origin="http://evil.example")[0] == 403
        assert "2 worker processes" in server.output()
    finally:
        server.stop()
    assert server.proc.returncode == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)


def test_bad_worker_count_is_refused() -> None:
    done = subprocess.run([*serve_command(), "--transport", "http", "--port", str(_free_port()), "--workers", "0"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "workers" in done.stderr


def test_non_loopback_without_token_is_refused() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GPU_ADVISOR_TOKEN"}
    done = subprocess.run([*serve_command(), "--transport", "http", "--host", "0.0.0.0", "--port", str(_free_port())],
                          env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "GPU_ADVISOR_TOKEN" in done.stderr


def test_serve_command_is_installed() -> None:
    """The tests above prefer the console script; say so when they fell back to `python -m`."""
    if not (Path(sys.executable).parent / "gpu-advisor").exists() and not shutil.which("gpu-advisor"):
        pytest.skip("no gpu-advisor console script next to this Python: tests ran `python -m gpu_advisor.cli serve`")


def test_http_a_raising_tool_runs_once_and_its_error_hides_the_exception(monkeypatch) -> None:
    """Over HTTP a tool that raises is called once (the former fast path ran it a second time on the SDK's route)
    and the client sees the SDK's "Error executing tool", not the exception's text."""
    import asyncio

    from gpu_advisor.server import tools as T
    from gpu_advisor.server.app import build_http_app

    calls: list[int] = []

    def boom(q, lang):
        calls.append(1)
        raise RuntimeError("secret internal detail")

    monkeypatch.setitem(T.SPECS, "explain_rule", T.SPECS["explain_rule"].__class__(
        **{**T.SPECS["explain_rule"].__dict__, "handler": boom}))
    app = build_http_app("127.0.0.1", 8000)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "explain_rule", "arguments": {"rule_id": "TIER-ENTRY"}}}).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"", "server": ("127.0.0.1", 8000),
             "client": ("127.0.0.1", 5000),
             "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
                         (b"accept", b"application/json, text/event-stream"), (b"content-length", str(len(body)).encode())]}
    out: list[dict] = []

    async def run() -> None:
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            if messages:
                return messages.pop(0)
            await asyncio.sleep(3600)

        async def send(message):
            out.append(message)

        async with app.router.lifespan_context(app.app):
            await app(scope, receive, send)

    asyncio.run(run())
    reply = json.loads(b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body"))
    assert calls == [1]
    assert reply["result"]["isError"] is True and "secret" not in json.dumps(reply)


def test_http_a_quick_call_is_not_stalled_by_four_long_questions(http_server: HttpServer) -> None:
    """Issue 21: while 4 clients send long questions (2,000 characters, the ask tool's limit, and 4,000, refused), another
    client's call completes in under 1 s: the parser is linear and tools run off the event loop."""
    import threading

    def call(i: int, name: str, arguments: dict) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}}).encode()

    long_zh = ("我要在阿里云上微调一个语言模型，" * 200)[:2000]
    stop = time.monotonic() + 6
    sent = []

    def flood(text: str) -> None:
        while time.monotonic() < stop:
            sent.append(post(http_server.url, call(7, "ask", {"question": text}))[0])

    floods = [threading.Thread(target=flood, args=(t,)) for t in (long_zh, long_zh, "一" * 4000, "1" * 4000)]
    for t in floods:
        t.start()
    time.sleep(0.5)
    quick = []
    while time.monotonic() < stop - 1:
        t0 = time.monotonic()
        status, _ = post(http_server.url, call(8, "explain_rule", {"rule_id": "TIER-ENTRY", "lang": "en"}))
        quick.append((status, time.monotonic() - t0))
    for t in floods:
        t.join()
    assert sent and quick and all(status == 200 for status, _ in quick)
    print(f"quick call: max {max(s for _, s in quick):.3f} s over {len(quick)} calls beside {len(sent)} long questions")
    assert max(seconds for _, seconds in quick) < 1.0, quick
