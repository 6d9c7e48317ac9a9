"""`nxs mcp serve --transport http`: the server as streamable HTTP at ``/mcp``.

The SDK's app (DNS-rebinding protection on loopback), refused beyond loopback without a token;
with one, every request must carry ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import contextlib
import hmac
from typing import Any

from nxs.errors import ValidationError
from nxs.mcp.server import Seam, build_server

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_http(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token.

    Raises:
        ValidationError: a non-loopback host and no token.
    """
    if host not in LOOPBACK and not token:
        raise ValidationError(
            f"refusing to serve on {host} without a token: anyone who can reach it could write",
            suggestion="pass --token (or set NXS_MCP_TOKEN), or keep the default 127.0.0.1",
            code="TOKEN_REQUIRED",
        )


def bearer_ok(header: bytes, token: str) -> bool:
    """Whether an Authorization header carries the token (the scheme in any case, RFC 9110)."""
    scheme, _, credentials = header.strip().partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), token.encode())


def _bearer(app: Any, token: str) -> Any:
    """An ASGI wrapper that answers 401 unless ``Authorization: Bearer <token>`` is sent."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not bearer_ok(got, token):
                body = b'{"error":"unauthorized"}\n'
                headers = [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="nxs"'),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def http_app(seam: Seam, host: str = "127.0.0.1", token: str | None = None) -> Any:
    """The streamable-HTTP ASGI app at ``/mcp`` (DNS-rebinding protection on loopback)."""
    check_http(host, token)
    server = build_server(seam, seam.instructions())
    app = server.streamable_http_app(host=host)
    return _bearer(app, token) if token else app


async def serve_http(seam: Seam, host: str, port: int, token: str | None) -> None:
    """Serve streamable HTTP on ``host:port`` until interrupted."""
    import uvicorn

    app = http_app(seam, host, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    with contextlib.suppress(KeyboardInterrupt):
        await uvicorn.Server(config).serve()


__all__ = ["bearer_ok", "check_http", "http_app", "serve_http"]
