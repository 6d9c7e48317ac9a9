"""Who may talk to the dashboard: an ASGI wrapper checking every request, in this order.

1. **Host** (421): on a loopback bind the ``Host`` header must name the server itself, so a
   DNS-rebinding page (``evil.example`` resolving to 127.0.0.1) is refused.
2. **Token** (401), when one is set: ``Authorization: Bearer T``, or the cookie the first load
   sets from ``?token=T``.
3. **Cross-site** (403): every POST (every state change is one) carries the page's CSRF token in
   ``X-NXS-CSRF`` and a JSON body, with ``Sec-Fetch-Site`` (when sent) ``same-origin`` or
   ``none`` (another port of localhost is the same site) and ``Origin`` (when sent) its own.

Every answer carries a strict Content-Security-Policy, ``nosniff``, no framing, no referrer.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from nxs.errors import ValidationError
from nxs.render import render

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
CSRF_HEADER = "x-nxs-csrf"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]  # fmt: skip
ASGI = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether an address or host name stays on this machine."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token."""
    if not is_loopback(host) and not token:
        raise ValidationError(
            f"refusing to serve the dashboard on {host} without a token: anyone who can reach "
            "it could read and erase memories",
            suggestion="pass --token (or set NXS_UI_TOKEN), or keep the default 127.0.0.1",
            code="TOKEN_REQUIRED",
        )


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``Host`` values a loopback server answers; None (any) beyond loopback with a token."""
    if not is_loopback(host):
        return None
    names = {*LOOPBACK_NAMES, host}
    return frozenset(n for name in names for n in (name, f"{name}:{port}") if name != "::1")


async def _answer(send: Any, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]]):
    headers = [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *SECURITY_HEADERS, *headers,
    ]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _refusal(code: str, message: str, suggestion: str) -> bytes:
    return render(ValidationError(message, suggestion=suggestion, code=code))


async def _refuse(send: Any, status: int, code: str, message: str, suggestion: str) -> None:
    await _answer(send, status, _refusal(code, message, suggestion), [])


class Guard:
    """The ASGI wrapper that applies the checks above, then calls the app."""

    def __init__(
        self, app: ASGI, *, host: str, port: int, csrf: str, token: str | None = None
    ) -> None:
        self.app, self.port, self.csrf, self.token = app, port, csrf, token
        self.hosts = allowed_hosts(host, port)
        self.cookie = f"nxs_ui_{port}"  # per port: a cookie for 127.0.0.1 goes to every port

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if self.hosts is not None and host.lower() not in self.hosts:
            why = f"this dashboard does not answer for the host {host[:100]!r}"
            await _refuse(send, 421, "BAD_HOST", why, "open it at the URL `nxs ui` printed")
            return
        if self.token is not None:
            verdict = self._token(scope, headers)
            if verdict is not True:
                await _answer(send, *verdict)
                return
        if scope["method"] == "POST":
            problem = self._cross_site(headers, host)
            if problem:
                await _refuse(send, 403, "CROSS_SITE", problem, "use the dashboard page")
                return
        elif scope["method"] not in ("GET", "HEAD"):
            await _refuse(send, 405, "METHOD", "only GET and POST", "use the dashboard page")
            return

        async def secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, secured)

    def _token(self, scope: dict[str, Any], headers: dict[str, str]) -> Any:
        """True, or the (status, body, headers) of the answer that replaces the request."""
        assert self.token is not None
        expected = self.token.encode()
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer ") and hmac.compare_digest(bearer[7:].encode(), expected):
            return True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie and hmac.compare_digest(value.encode(), expected):
                return True
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[0].encode()
        first_load = scope["method"] == "GET" and scope["path"] == "/" and given
        if first_load and hmac.compare_digest(given, expected):
            cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            # A redirect, so the token leaves the address bar and the history.
            return (303, b"", [(b"location", b"/"), (b"set-cookie", cookie.encode())])
        return (
            401,
            _refusal(
                "UNAUTHORIZED",
                "this dashboard needs its token",
                "open the URL `nxs ui` printed (it ends in ?token=...)",
            ),
            [(b"www-authenticate", b'Bearer realm="nxs ui"')],
        )

    def _cross_site(self, headers: dict[str, str], host: str) -> str | None:
        """Why a POST looks cross-site, or None when it comes from the dashboard's own page."""
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return f"refused a {site} request: changes come only from the dashboard's own page"
        origin = headers.get("origin")
        if origin is not None and origin != f"http://{host}":
            return f"refused a request from another origin ({origin[:100]})"
        if not hmac.compare_digest(headers.get(CSRF_HEADER, "").encode(), self.csrf.encode()):
            return "missing or wrong X-NXS-CSRF header: reload the dashboard page"
        if headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return "the request body must be JSON (content-type: application/json)"
        return None


__all__ = ["CSP", "CSRF_HEADER", "Guard", "allowed_hosts", "check_bind", "is_loopback"]
