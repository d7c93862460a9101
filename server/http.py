"""Streamable HTTP transport: stateless, JSON responses, loopback by default.

Security:
- Host / Origin validation against DNS rebinding, matched exactly (``Guard``: a name and a numeric port, nothing
  after it, so ``Host: 127.0.0.1:8000@evil.example`` is refused): loopback names always, plus
  GPU_ADVISOR_ALLOWED_HOSTS / GPU_ADVISOR_ALLOWED_ORIGINS (comma-separated; ``name:*`` allows any port) for a reverse
  proxy. The SDK's own check (TransportSecuritySettings) runs after it.
- Bearer token: when GPU_ADVISOR_TOKEN is set, every request needs ``Authorization: Bearer <token>`` (401
  otherwise). Binding a non-loopback address without a token is refused.
- Request bodies over MAX_BODY_BYTES are refused (413); a body not received within BODY_TIMEOUT_S is 408.
- Only POST: the server is stateless with JSON responses, so GET (an event stream that would stay open) and DELETE
  (a session to end) are 405 at once. Connections: a request head must arrive within HEAD_TIMEOUT_S of the
  connection or of the previous response (slow or idle clients are closed), and at most MAX_CONNECTIONS are served
  at a time (503 beyond).
- Malformed JSON-RPC gets a JSON-RPC error: not JSON -32700, a batch array or a non-request -32600 (HTTP 400).

Speed (bench/http_load.py; figures in docs/mcp.md and docs/benchmarks.md):
- A plain handshake-era ``tools/call`` is answered by server/fastpath.py (behind the exact SDK pin), everything
  else by the SDK; uvicorn parses with httptools (C), h11 as the fallback.
- The tools run on worker threads with a time limit (server/registry.py make_tool): a slow call does not hold up
  the others.
- Before the port opens, ``warm_up()`` (server/warmup.py) calls every tool once, so the knowledge base, the
  templates and the model tables are loaded once, not by dozens of concurrent first requests at the same time.
- ``workers`` > 1 (``--workers`` / GPU_ADVISOR_HTTP_WORKERS) forks that many worker processes after the warm-up;
  they share the listening socket (the server is stateless) and the warm memory pages (copy-on-write).
"""

import gc
import hmac
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings

from gpu_advisor.server.warmup import warm_up

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_BODY_BYTES = 256 * 1024
BODY_TIMEOUT_S = 10.0
HEAD_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256
GC_GEN0_THRESHOLD = 20_000
PATH = "/mcp"
EXIT_OK, EXIT_BAD_INPUT = 0, 2


class StaticTokenVerifier:
    """The SDK's TokenVerifier protocol for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="redacted", client_id="gpu-advisor-client", scopes=[])
        return None


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def security_settings(host: str, port: int) -> TransportSecuritySettings:
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if host not in LOOPBACK and host not in ("0.0.0.0", "::"):
        hosts.append(f"{host}:{port}")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts + _env_list("GPU_ADVISOR_ALLOWED_HOSTS"),
                                     allowed_origins=origins + _env_list("GPU_ADVISOR_ALLOWED_ORIGINS"))


_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]+)(?::([0-9]{1,5}))?")
_ORIGIN = re.compile(r"(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]+)(?::([0-9]{1,5}))?")


_HOST_PATTERN = re.compile(r"(\[[^\]]+\]|[^:\[\]]+)(?::(\*|[0-9]+))?")
_ORIGIN_PATTERN = re.compile(r"(https?://(?:\[[^\]]+\]|[^:/\[\]]+))(?::(\*|[0-9]+))?")


def _allows(patterns: list[str], value: str, port: str | None, pattern_re: re.Pattern[str]) -> bool:
    """``value`` (a host, or scheme://host) with ``port`` (digits or None) against patterns ``X``, ``X:N``, ``X:*``:
    equal names (case-insensitive) and an equal port, or any port for ``*``."""
    for pattern in patterns:
        match = pattern_re.fullmatch(pattern.strip())
        if match is None or match.group(1).lower() != value.lower():
            continue
        want = match.group(2)
        if want == "*" or want == port:
            return True
    return False


class Guard:
    """ASGI middleware in front of the SDK's app: exact Host / Origin, POST only on /mcp, a bounded body read with
    a time limit, and JSON-RPC errors for frames the SDK would answer with no reply or a pydantic dump."""

    def __init__(self, app: Any, hosts: list[str], origins: list[str], token: str | None = None,
                 fast: Any = None) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins
        self.token = token
        self.fast = fast  # server/fastpath.py's ToolCallFastPath, or None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k: v for k, v in scope["headers"]}
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.host_ok(host):
            await _plain(send, 421, "Invalid Host header")
            return
        origin = headers.get(b"origin")
        if origin is not None and not self.origin_ok(origin.decode("latin-1")):
            await _plain(send, 403, "Invalid Origin header")
            return
        if scope["path"].rstrip("/") != PATH:
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            await _rpc_error(send, 405, -32600, "Method not allowed: this server answers POST only (stateless, "
                             "JSON responses: no event stream, no session)", extra=[(b"allow", b"POST")])
            return
        body = await self._body(receive, send)
        if body is None:
            return
        if self.token is None or hmac.compare_digest(headers.get(b"authorization", b""),
                                                     f"Bearer {self.token}".encode()):
            problem = jsonrpc_problem(body)
            if problem is not None:
                await _rpc_error(send, 400, *problem)
                return
        if self.fast is not None and await self.fast.answer(scope, headers, body, send):
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _body(self, receive: Any, send: Any) -> bytes | None:
        """The whole body, within MAX_BODY_BYTES (413) and BODY_TIMEOUT_S (408); None when answered or gone."""
        import anyio

        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(BODY_TIMEOUT_S) as scope:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    await _plain(send, 413, f"Request body over {MAX_BODY_BYTES} bytes")
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        if scope.cancelled_caught:
            await _plain(send, 408, f"Request body not received within {BODY_TIMEOUT_S:g} s")
        return None

    def host_ok(self, host: str) -> bool:
        match = _HOST.fullmatch(host)
        return match is not None and _allows(self.hosts, match.group(1), match.group(2), _HOST_PATTERN)

    def origin_ok(self, origin: str) -> bool:
        match = _ORIGIN.fullmatch(origin)
        return match is not None and _allows(self.origins, f"{match.group(1)}://{match.group(2)}", match.group(3),
                                             _ORIGIN_PATTERN)


def jsonrpc_problem(body: bytes) -> tuple[int, str] | None:
    """(JSON-RPC error code, message) for a body that is not one JSON-RPC request or notification; None if it is."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return -32700, "Parse error: the body is not JSON"
    if isinstance(message, list):
        return -32600, "Invalid Request: batch arrays are not supported; send one JSON-RPC message per POST"
    if not isinstance(message, dict):
        return -32600, "Invalid Request: a JSON-RPC message is an object"
    if message.get("jsonrpc") != "2.0":
        return -32600, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return -32600, 'Invalid Request: "method" must be a string'
        if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
            return -32600, 'Invalid Request: "id" must be a string or an integer'
        if "params" in message and not isinstance(message["params"], dict):
            return -32600, 'Invalid Request: "params" must be an object'
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to a server request: the SDK's to judge
    return -32600, 'Invalid Request: no "method"'


async def _plain(send: Any, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _rpc_error(send: Any, status: int, code: int, message: str,
                     extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


class GuardedApp(Guard):
    """Guard around the SDK's Starlette app, exposing its router (lifespan) and state."""

    @property
    def router(self) -> Any:
        return self.app.router

    @property
    def state(self) -> Any:
        return self.app.state


class _HeadTimeout:
    """A time limit on reading a request head (HEAD_TIMEOUT_S from the connection or from the previous response),
    mixed into uvicorn's HTTP protocols: a client that trickles its headers, or holds an idle connection, is
    closed. The protocol calls ``_head_arrived()`` when a request head has been parsed."""

    _head_timer: Any = None

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_timeout)  # type: ignore[attr-defined]

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        cycle, transport = self.cycle, self.transport  # type: ignore[attr-defined]
        if (cycle is None or cycle.response_complete) and not transport.is_closing():
            transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():  # type: ignore[attr-defined]
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


def protocol_class(kind: str | None = None) -> Any:
    """uvicorn's HTTP protocol with the head time limit (_HeadTimeout): httptools' parser (C, llhttp) when it is
    installed, else h11 (pure Python). ``kind`` ("httptools" / "h11") forces one."""
    if kind is None:
        kind = os.environ.get("GPU_ADVISOR_HTTP_PARSER", "").strip() or "auto"
    if kind in ("auto", "httptools"):
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        except ImportError:
            if kind == "httptools":
                raise
        else:
            class HeadTimeoutHttpTools(_HeadTimeout, HttpToolsProtocol):
                def on_headers_complete(self) -> None:
                    super().on_headers_complete()
                    self._disarm()

            return HeadTimeoutHttpTools
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimeoutH11(_HeadTimeout, H11Protocol):
        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request head arrived
                self._disarm()

    return HeadTimeoutH11


MAX_WORKERS = 64


def _workers(value: int | None) -> int | None:
    """The worker count from the argument or GPU_ADVISOR_HTTP_WORKERS (default 1); None when invalid."""
    if value is None:
        text = os.environ.get("GPU_ADVISOR_HTTP_WORKERS", "").strip() or "1"
        value = int(text) if text.isdigit() else 0
    return value if 1 <= value <= MAX_WORKERS else None


def _serve_forked(config: Any, workers: int) -> None:
    """Bind once, fork ``workers`` processes that serve the same socket, forward SIGINT/SIGTERM to them and wait.
    A worker that dies while the server is not stopping is replaced (forked again from this warm process)."""
    import uvicorn

    sock = config.bind_socket()
    children: set[int] = set()
    stopping = False

    def spawn() -> None:
        pid = os.fork()
        if pid == 0:  # the worker: default signal handling (uvicorn installs its own), serve, exit
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            code = 0
            try:
                uvicorn.Server(config).run(sockets=[sock])
            except BaseException:  # pragma: no cover - uvicorn reports its own errors
                code = 1
            os._exit(code)
        children.add(pid)

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    for _ in range(workers):
        spawn()
    while children:
        try:
            pid, _status = os.wait()
        except ChildProcessError:  # pragma: no cover
            break
        except InterruptedError:  # pragma: no cover - PEP 475 retries, kept for clarity
            continue
        children.discard(pid)
        if not stopping:
            sys.stderr.write(f"gpu-advisor serve: worker {pid} exited; starting another\n")
            time.sleep(0.5)
            spawn()
    sock.close()


def settle_heap() -> None:
    """After the warm-up, before serving (and before the fork): what is alive now (the knowledge base, tables,
    templates, modules) lives as long as the server, so it is kept out of the cyclic garbage collector, whose full
    passes otherwise walk ~110,000 objects several times a second under load (~1.1 ms of CPU per request, 0.4 ms
    with the freeze; bench notes in docs/mcp.md). Before the fork, so the workers also keep those pages shared (a
    collection writes to every object it visits).

    Then the young generation's threshold: each request in flight holds a few hundred container objects (tasks,
    futures, the SDK's models), so with dozens in flight the allocation count crosses the default (700) all the time
    and the collector runs for little garbage: 0.28-0.36 ms of CPU per request under load, 0.03 ms with
    GC_GEN0_THRESHOLD (docs/benchmarks.md). Cyclic garbage is still collected, after at most that many new objects."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])


def run_http(host: str, port: int, workers: int | None, build: Callable[[str, int, str | None], Any]) -> int:
    """Serve ``build(host, port, token)`` (gpu_advisor.server.app.build_http_app) with uvicorn, after the checks."""
    import uvicorn

    token = os.environ.get("GPU_ADVISOR_TOKEN") or None
    if host not in LOOPBACK and token is None:
        sys.stderr.write(f"gpu-advisor serve: refusing to listen on {host} without GPU_ADVISOR_TOKEN; "
                         "set a token or use --host 127.0.0.1\n")
        return EXIT_BAD_INPUT
    if not 0 < port < 65536:
        sys.stderr.write(f"gpu-advisor serve: --port must be 1-65535 (got {port})\n")
        return EXIT_BAD_INPUT
    count = _workers(workers)
    if count is None:
        sys.stderr.write(f"gpu-advisor serve: --workers / GPU_ADVISOR_HTTP_WORKERS must be 1-{MAX_WORKERS}\n")
        return EXIT_BAD_INPUT
    app = build(host, port, token)
    warm_up()
    settle_heap()
    auth = "bearer token required" if token else "no token"
    plural = f", {count} worker processes" if count > 1 else ""
    fast = ", tools/call fast path" if getattr(app, "fast", None) is not None else ""
    sys.stderr.write(f"gpu-advisor MCP server: http://{host}:{port}/mcp (streamable HTTP, stateless, {auth}{plural}"
                     f"{fast})\n")
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False, access_log=False,
                            timeout_graceful_shutdown=5, http=protocol_class(), limit_concurrency=MAX_CONNECTIONS,
                            timeout_keep_alive=5)
    try:
        if count == 1:
            uvicorn.Server(config).run()
        else:
            _serve_forked(config, count)
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C
        pass
    return EXIT_OK
