"""Streamable HTTP transport: stateless, JSON responses, loopback by default.

Security, all through the SDK's own hooks:
- Host / Origin validation against DNS rebinding (TransportSecuritySettings): loopback names always, plus
  GPU_ADVISOR_ALLOWED_HOSTS / GPU_ADVISOR_ALLOWED_ORIGINS (comma-separated) for a reverse proxy.
- Bearer token: when GPU_ADVISOR_TOKEN is set, every request needs ``Authorization: Bearer <token>`` (401
  otherwise). Binding a non-loopback address without a token is refused.
- Request bodies over MAX_BODY_BYTES are refused (413).
"""

import hmac
import os
import sys

from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

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


def build_http_app(host: str = "127.0.0.1", port: int = 8000, token: str | None = None) -> Starlette:
    """The ASGI app serving /mcp (the app's lifespan runs the SDK's session manager)."""
    from gpu_advisor.server.app import build_server

    netloc = f"[{host}]" if ":" in host else host
    server = build_server(token=token, base_url=f"http://{netloc}:{port}")
    return server.streamable_http_app(stateless_http=True, json_response=True, max_request_body_size=MAX_BODY_BYTES,
                                      transport_security=security_settings(host, port), host=host)


def run_http(host: str, port: int) -> int:
    import uvicorn

    token = os.environ.get("GPU_ADVISOR_TOKEN") or None
    if host not in LOOPBACK and token is None:
        sys.stderr.write(f"gpu-advisor serve: refusing to listen on {host} without GPU_ADVISOR_TOKEN; "
                         "set a token or use --host 127.0.0.1\n")
        return EXIT_BAD_INPUT
    if not 0 < port < 65536:
        sys.stderr.write(f"gpu-advisor serve: --port must be 1-65535 (got {port})\n")
        return EXIT_BAD_INPUT
    app = build_http_app(host, port, token)
    auth = "bearer token required" if token else "no token"
    sys.stderr.write(f"gpu-advisor MCP server: http://{host}:{port}/mcp (streamable HTTP, stateless, {auth})\n")
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False,
                            timeout_graceful_shutdown=5)
    try:
        uvicorn.Server(config).run()
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C
        pass
    return EXIT_OK
