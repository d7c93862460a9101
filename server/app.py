"""gpu-advisor as an MCP server: ``build_server()`` and ``serve(transport, host, port)``.

The server is built on demand, never at import time (constructing MCPServer configures root logging).
Run it with ``gpu-advisor serve`` (stdio) or ``gpu-advisor serve --transport http``; see docs/mcp.md.
"""

import os
import sys
from typing import Any

from gpu_advisor import __version__

INSTRUCTIONS = """gpu-advisor recommends Alibaba Cloud GPU instance types for training, fine-tuning and serving ML models,
from a knowledge base of sourced rules and a dated catalog. Every answer states its assumptions and the rule ids
behind each line.
- recommend_gpu_config: the main tool; fill the Workload fields the user gave (task is required), set lang to the
  user's language (zh or en). Unknown fields get stated defaults. The answer is brief (the decision, reasons with
  rule ids, what would change it); detail="full" or sections=[...] return more.
- estimate_memory: GPU memory per card alone. ask: a free-text question when you cannot fill the fields.
- list_instance_types: browse the catalog. explain_rule: the text and sources of a rule id seen in an answer.
Errors name the field to fix. Prices are a dated snapshot: tell the user to confirm them in the console."""


def build_server(*, token: str | None = None, base_url: str = "http://127.0.0.1:8000") -> Any:
    """The MCPServer with tools, resources and prompts. ``token`` turns on bearer auth (HTTP only)."""
    from mcp.server.mcpserver import MCPServer

    from gpu_advisor.server.protocol import check_requests
    from gpu_advisor.server.resources import add_prompts, add_resources
    from gpu_advisor.server.registry import all_tools, use_tools

    auth: dict[str, Any] = {}
    if token:
        from mcp.server.auth.settings import AuthSettings

        from gpu_advisor.server.http import StaticTokenVerifier

        auth = {"auth": AuthSettings(issuer_url=base_url, resource_server_url=None),
                "token_verifier": StaticTokenVerifier(token)}
    server = MCPServer("gpu-advisor", title="gpu-advisor: Alibaba Cloud GPU server advisor",
                       instructions=INSTRUCTIONS, version=__version__, tools=all_tools(),
                       log_level="WARNING", **auth)
    if not tracing_wanted():
        server.middleware[:] = [m for m in server.middleware if not is_sdk_tracing(m)]
    use_tools(tool_spec)
    add_resources(server)
    add_prompts(server)
    server.middleware.append(check_requests(server))
    return server


def tracing_wanted() -> bool:
    """Whether the server keeps the SDK's OpenTelemetry middleware (a span per message): when OpenTelemetry is set
    up through its environment variables (any OTEL_* one, as ``opentelemetry-instrument`` and OTLP exporters use),
    unless OTEL_SDK_DISABLED=true. Without a tracer provider the spans are no-ops that still cost about 0.1 ms of CPU
    per request (docs/benchmarks.md); the SDK documents dropping the middleware from ``server.middleware`` as the
    way to opt out."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(name.startswith("OTEL_") for name in os.environ)


def is_sdk_tracing(middleware: Any) -> bool:
    """The SDK's OpenTelemetry middleware (mcp.server, class OpenTelemetryMiddleware; tests/test_mcp_server.py fails
    when an SDK release renames or moves it)."""
    kind = type(middleware)
    return kind.__name__ == "OpenTelemetryMiddleware" and kind.__module__.split(".")[0] == "mcp"


def tool_spec(name: str) -> Any:
    """A call's ToolSpec: after the stdio warm-up's current step, with the engine imported once per process under a
    lock (concurrent first imports can deadlock, server/warmup.py)."""
    from gpu_advisor.server import warmup

    warmup.BACKGROUND.wait()
    warmup.import_engine()
    from gpu_advisor.server.tools import SPECS

    return SPECS[name]


def build_http_app(host: str = "127.0.0.1", port: int = 8000, token: str | None = None,
                   fast_path: bool = True) -> Any:
    """The ASGI app serving /mcp: the SDK's Starlette app (its lifespan runs the session manager) behind the HTTP
    guard (server/http.py), with the tools/call fast path (server/fastpath.py) unless ``fast_path`` is False or it
    is off. ``.app`` is the SDK's app, ``.state`` its state."""
    from gpu_advisor.server import fastpath
    from gpu_advisor.server.http import MAX_BODY_BYTES, GuardedApp, security_settings

    netloc = f"[{host}]" if ":" in host else host
    server = build_server(token=token, base_url=f"http://{netloc}:{port}")
    security = security_settings(host, port)
    app = server.streamable_http_app(stateless_http=True, json_response=True, max_request_body_size=MAX_BODY_BYTES,
                                     transport_security=security, host=host)
    fast = fastpath.for_server(server, security, token) if fast_path else None
    return GuardedApp(app, security.allowed_hosts, security.allowed_origins, token, fast)


def stdio_server(background: Any = None) -> Any:
    """build_server() as ``gpu-advisor serve`` runs it over stdio: it warms up on a background thread after the
    handshake (server/warmup.py; ``background``, default the process's), unless GPU_ADVISOR_WARM_UP=0."""
    from gpu_advisor.server import warmup

    server = build_server()
    if os.environ.get("GPU_ADVISOR_WARM_UP", "").strip() != "0":
        warmup.warm_after_handshake(server, background or warmup.BACKGROUND)
    return server


def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, workers: int | None = None) -> int:
    """Run the server until its client disconnects (stdio) or it is interrupted (http). Returns an exit code."""
    if transport == "stdio":
        from gpu_advisor.server import warmup

        try:
            stdio_server().run("stdio")
        except KeyboardInterrupt:  # pragma: no cover - Ctrl-C
            pass
        finally:
            warmup.BACKGROUND.stop()
        return 0
    if transport == "http":
        from gpu_advisor.server.http import run_http

        return run_http(host, port, workers, build_http_app)
    sys.stderr.write(f"gpu-advisor serve: unknown transport {transport!r} (stdio or http)\n")
    return 2
