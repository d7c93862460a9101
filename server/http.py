"""Streamable HTTP transport: stateless, JSON responses, loopback by default.

Security, all through the SDK's own hooks:
- Host / Origin validation against DNS rebinding (TransportSecuritySettings): loopback names always, plus
  GPU_ADVISOR_ALLOWED_HOSTS / GPU_ADVISOR_ALLOWED_ORIGINS (comma-separated) for a reverse proxy.
- Bearer token: when GPU_ADVISOR_TOKEN is set, every request needs ``Authorization: Bearer <token>`` (401
  otherwise). Binding a non-loopback address without a token is refused.
- Request bodies over MAX_BODY_BYTES are refused (413).

Speed (bench/http_load.py; figures in docs/mcp.md):
- The tools run on the event loop (``inline_tools``): they are CPU-bound, so worker threads only add a hop and
  GIL contention.
- Before the port opens, ``warm_up()`` (server/warmup.py) calls every tool once, so the knowledge base, the
  templates and the model tables are loaded once, not by dozens of concurrent first requests at the same time.
- ``workers`` > 1 (``--workers`` / GPU_ADVISOR_HTTP_WORKERS) forks that many worker processes after the warm-up;
  they share the listening socket (the server is stateless) and the warm memory pages (copy-on-write).
"""

import gc
import hmac
import os
import signal
import sys
import time
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from gpu_advisor.server.warmup import warm_up

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_BODY_BYTES = 256 * 1024
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


def build_http_app(host: str = "127.0.0.1", port: int = 8000, token: str | None = None, *,
                   fast_path: bool = True) -> Starlette:
    """The ASGI app serving /mcp (the app's lifespan runs the SDK's session manager). ``fast_path`` answers plain
    tools/call requests without the SDK's per-request transport (server/fastpath.py; same bytes)."""
    from gpu_advisor.server.app import build_server

    netloc = f"[{host}]" if ":" in host else host
    server = build_server(token=token, base_url=f"http://{netloc}:{port}", inline_tools=True)
    security = security_settings(host, port)
    app = server.streamable_http_app(stateless_http=True, json_response=True, max_request_body_size=MAX_BODY_BYTES,
                                     transport_security=security, host=host)
    wanted = fast_path and os.environ.get("GPU_ADVISOR_HTTP_FASTPATH", "1") != "0"
    app.state.fast_path = wanted and _install_fast_path(server, security)  # GPU_ADVISOR_HTTP_FASTPATH=0: off
    return app


def _install_fast_path(server: Any, security: TransportSecuritySettings) -> bool:
    """Put ToolCallFastPath in front of the SDK's handler. It reads SDK internals (mcp 2.3): when they are not
    where it expects them (another SDK release), the server runs without it, on the SDK's route, and says so."""
    try:
        from mcp.server.transport_security import RequestBodyLimitMiddleware

        from gpu_advisor.server.fastpath import ToolCallFastPath

        manager = server.session_manager  # its asgi_app is RequestBodyLimitMiddleware(<the SDK's handler>)
        sdk_handler = manager.asgi_app.app
        fast = ToolCallFastPath(sdk_handler, server, security)
    except (ImportError, AttributeError, TypeError) as exc:
        sys.stderr.write(f"gpu-advisor serve: tools/call fast path off ({type(exc).__name__}: {exc}); "
                         "every request takes the SDK's route\n")
        return False
    manager.asgi_app = RequestBodyLimitMiddleware(fast, MAX_BODY_BYTES)
    return True


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


def run_http(host: str, port: int, workers: int | None = None) -> int:
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
    app = build_http_app(host, port, token)
    warm_up()
    # What is alive now (the knowledge base, tables, templates, modules) lives as long as the server: keep it out
    # of the cyclic garbage collector, whose full passes otherwise walk ~110,000 objects several times a second
    # under load (~1.1 ms of CPU per request, 0.4 ms with the freeze; bench notes in docs/mcp.md). Before the
    # fork, so the workers also keep those pages shared (a collection writes to every object it visits).
    gc.collect()
    gc.freeze()
    auth = "bearer token required" if token else "no token"
    plural = f", {count} worker processes" if count > 1 else ""
    sys.stderr.write(f"gpu-advisor MCP server: http://{host}:{port}/mcp (streamable HTTP, stateless, {auth}{plural})\n")
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False, access_log=False,
                            timeout_graceful_shutdown=5)
    try:
        if count == 1:
            uvicorn.Server(config).run()
        else:
            _serve_forked(config, count)
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C
        pass
    return EXIT_OK
