"""The Linear GraphQL client (httpx), and where its URL comes from.

GraphQL errors are read whatever the HTTP status (Linear answers most with 400) and whatever
their shape. A mutation answered with its payload beside errors was applied: its data is
returned, the errors kept in `LinearClient.beside` (reporting it refused would invite a second
write). Rate limits (``RATELIMITED``, HTTP 429, ``X-RateLimit-*``) are waited out when the reset
is near. Timeouts, connection failures and HTTP 5xx are retried for queries only: a mutation
that may have reached Linear is never sent twice. One client serves one call, and ``timeout``
caps all of it (requests, retries, waits). Messages are scrubbed of the credential.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson

from nxs.errors import NotFoundError, NxsError, UpstreamError, ValidationError
from nxs.linear.connections import Connection
from nxs.linear.documents import DOCUMENTS, MUTATIONS
from nxs.ui.guard import is_loopback

LINEAR_HOST = "api.linear.app"
DEFAULT_URL = f"https://{LINEAR_HOST}/graphql"
ENV_URL = "LINEAR_API_URL"
USER_AGENT = "nxs-linear/0.1"
RESET_HEADERS = (
    ("x-ratelimit-requests-remaining", "x-ratelimit-requests-reset"),
    ("x-ratelimit-complexity-remaining", "x-ratelimit-complexity-reset"),
    ("x-ratelimit-endpoint-requests-remaining", "x-ratelimit-endpoint-requests-reset"),
)


def check_url(url: str, origin: str) -> str:
    """A well-formed endpoint: ``https`` to any host, ``http`` only to loopback (else refused)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
        bad = "" if parts.scheme in ("http", "https") and host else f"an http(s) URL: {url!r}"
    except ValueError as exc:
        bad = f"a valid URL: {url!r} ({exc})"
    if bad:
        raise ValidationError(
            f"{origin} is not {bad}", suggestion=f"e.g. {DEFAULT_URL}", code="BAD_LINEAR_URL"
        )
    if parts.scheme == "http" and not is_loopback(host):
        raise ValidationError(
            f"{origin} would send your Linear key in clear text to {host} (plain http)",
            suggestion="use https, or http only to a loopback address (127.0.0.1, localhost)",
            code="INSECURE_LINEAR_URL",
        )
    return url


def api_url(conn: Connection, section: dict[str, Any]) -> str:
    """The GraphQL endpoint: ``LINEAR_API_URL``, the connection's, the workspace's, the default.

    A workspace's ``[linear] api_url`` is committed, so it may name only Linear or loopback: a
    cloned project must not send your key to a server of its choosing. The user's own settings
    (the variable, ``connect --api-url``) may name a proxy."""
    if os.environ.get(ENV_URL, "").strip():
        return check_url(os.environ[ENV_URL].strip(), ENV_URL)
    if conn.api_url:
        return check_url(conn.api_url, f"the api_url of Linear workspace {conn.label}")
    configured = section.get("api_url")
    if configured:
        url = check_url(str(configured), "[linear] api_url in .nxs/config.toml")
        parts = urlsplit(url)
        linear = parts.scheme == "https" and parts.hostname == LINEAR_HOST
        if not (linear and parts.port in (None, 443) or is_loopback(parts.hostname or "")):
            raise ValidationError(
                f"[linear] api_url in .nxs/config.toml points to {url!r}, which could receive "
                f"your Linear key (a committed file may name only https://{LINEAR_HOST} or a "
                "loopback address)",
                suggestion=f"set {ENV_URL} yourself, or `nxs linear connect LABEL --api-url URL`",
                code="UNTRUSTED_LINEAR_URL",
            )
        return url
    return DEFAULT_URL


class LinearClient:
    """Sends the named documents of `DOCUMENTS` to one organisation's endpoint."""

    def __init__(
        self, conn: Connection, url: str = DEFAULT_URL, *, timeout: float = 30.0, attempts: int = 3,
        max_wait: float = 20.0, sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time, transport: Any = None,
    ) -> None:  # fmt: skip
        self.conn, self.url, self.timeout, self.max_wait = conn, url, timeout, max_wait
        self.sleep, self.clock, self.transport = sleep, clock, transport
        self.attempts = max(1, attempts)
        self.deadline = clock() + timeout  # one budget for every request, retry and wait
        self.sent: list[str] = []  # operation names, in order (tests and debugging)
        self.beside: list[str] = []  # errors Linear reported beside applied writes' data
        self._http: Any = None

    def __enter__(self) -> LinearClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def _client(self) -> Any:
        if self._http is None:
            import httpx  # deferred: keeps `nxs --help` fast

            self._http = httpx.Client(
                transport=self.transport,
                headers={"User-Agent": USER_AGENT, "Content-Type": "application/json"},
            )
        return self._http

    def _scrub(self, text: str) -> str:
        return text.replace(self.conn.key, "[redacted]") if self.conn.key else text

    def run(self, name: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one named document; return its ``data``.

        Raises:
            NotFoundError: Linear says the entity does not exist.
            UpstreamError: authentication, rate limiting, timeouts, any other GraphQL error.
        """
        import httpx

        mutation = name in MUTATIONS
        payload = orjson.dumps(
            {"query": DOCUMENTS[name], "variables": variables or {}, "operationName": name}
        )
        auth = f"Bearer {self.conn.key}" if self.conn.oauth else self.conn.key
        for attempt in range(1, self.attempts + 1):
            last = attempt == self.attempts
            left = self.deadline - self.clock()
            try:
                if left <= 0:
                    raise httpx.TimeoutException("the call's time is used up")
                self.sent.append(name)
                resp = self._client().post(
                    self.url, content=payload, headers={"Authorization": auth},
                    timeout=httpx.Timeout(left, connect=min(left, 10.0)),
                )  # fmt: skip
            except httpx.TransportError as exc:  # timeouts included
                if mutation or last or self._backoff(attempt) >= self.deadline - self.clock():
                    raise self._transport_error(exc, mutation) from None
                self.sleep(self._backoff(attempt))
                continue
            body = self._json(resp)
            if self._rate_limited(resp, body):
                wait = self._reset_wait(resp, attempt)
                if last or wait > min(self.max_wait, self.deadline - self.clock()):
                    raise self._rate_error(wait)
                self.sleep(wait)
                continue
            if resp.status_code >= 500:  # with or without a GraphQL errors body
                wait = self._retry_wait(resp, attempt)
                if mutation or last or wait >= self.deadline - self.clock():
                    raise self._unavailable(resp.status_code, body, mutation)
                self.sleep(wait)
                continue
            return self._data(resp, body, mutation)
        raise AssertionError("unreachable")  # the loop always returns or raises

    @staticmethod
    def _json(resp: Any) -> dict[str, Any] | None:
        """The body, its ``errors`` made a list of dicts with dict extensions (None: not JSON)."""
        try:
            body = orjson.loads(resp.content)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(body, dict):
            return None
        errors = body.get("errors") or []
        errors = errors if isinstance(errors, list) else [errors]
        errors = [e if isinstance(e, dict) else {"message": e} for e in errors]
        body["errors"] = [{**e, "extensions": _dict(e.get("extensions"))} for e in errors]
        return body

    @staticmethod
    def _rate_limited(resp: Any, body: dict[str, Any] | None) -> bool:
        if resp.status_code == 429:
            return True
        errors = (body or {}).get("errors", [])
        if any(e["extensions"].get("code") == "RATELIMITED" for e in errors):
            return True
        exhausted = any(resp.headers.get(rem) == "0" for rem, _ in RESET_HEADERS)
        return exhausted and resp.status_code >= 400

    def _backoff(self, attempt: int) -> float:
        return float(min(2 ** (attempt - 1), self.max_wait))

    def _retry_wait(self, resp: Any, attempt: int) -> float:
        """Retry-After when it is near, else the exponential backoff."""
        after = (resp.headers.get("retry-after") or "").strip()
        if after.isdigit() and int(after) <= self.max_wait:
            return float(after)
        return self._backoff(attempt)

    def _unavailable(
        self, status: int, body: dict[str, Any] | None, mutation: bool
    ) -> UpstreamError:
        first, ext = _first((body or {}).get("errors") or [])
        said = ext.get("userPresentableMessage") or first.get("message")
        message = f"Linear answered HTTP {status}"
        if said:
            message += f": {self._scrub(str(said))}"
        details: dict[str, Any] = {"http_status": status}
        if ext.get("code"):
            details["linear_code"] = str(ext["code"])
        suggestion = "try again in a minute"
        if mutation:
            message += "; the change may or may not have been applied"
            suggestion = "read the state back with linear_query before sending it again"
        suggestion += "; https://linearstatus.com has news"
        return UpstreamError(
            message, suggestion=suggestion, code="LINEAR_UNAVAILABLE", details=details
        )

    def _reset_wait(self, resp: Any, attempt: int) -> float:
        waits: list[float] = []
        retry_after = resp.headers.get("retry-after")
        if retry_after and retry_after.strip().isdigit():
            waits.append(float(retry_after))
        for remaining, reset in RESET_HEADERS:
            value = resp.headers.get(reset)
            if value and value.strip().isdigit() and resp.headers.get(remaining, "0") == "0":
                waits.append(max(0.0, int(value) / 1000 - self.clock()))
        return round(max(waits), 3) if waits else self._backoff(attempt)

    def _rate_error(self, wait: float) -> UpstreamError:
        return UpstreamError(
            f"Linear rate limit reached for workspace {self.conn.label}",
            suggestion=f"wait about {int(wait) + 1} s and try again; fewer or narrower calls help",
            code="RATE_LIMITED",
            details={"retry_after_seconds": int(wait) + 1},
        )

    def _transport_error(self, exc: Exception, mutation: bool) -> UpstreamError:
        import httpx

        what = f"could not be reached ({type(exc).__name__})"
        if isinstance(exc, httpx.TimeoutException):
            what = (
                f"did not answer in time (one call may take {self.timeout:g} s: [linear] timeout)"
            )
        message = f"Linear at {urlsplit(self.url).hostname} {what}"
        then = "try again"
        if mutation:
            message += "; the change may or may not have been applied"
            then = "read the state back first"
        suggestion = f"check your connection (or LINEAR_API_URL) and {then}"
        return UpstreamError(message, suggestion=suggestion, code="LINEAR_UNREACHABLE")

    def _data(self, resp: Any, body: dict[str, Any] | None, mutation: bool) -> dict[str, Any]:
        if body is None:
            raise UpstreamError(
                f"Linear answered HTTP {resp.status_code} without a JSON body",
                suggestion="check LINEAR_API_URL points at a GraphQL endpoint",
                code="LINEAR_BAD_RESPONSE",
            )
        if errors := body["errors"]:
            if not (mutation and _applied(body.get("data"), errors)):
                raise self._graphql_error(resp.status_code, errors)
            self.beside += [self._scrub(_said(e)) for e in errors]
            return _dict(body.get("data"))
        if resp.status_code == 401:
            raise self._auth_error("authentication failed")
        if resp.status_code >= 400 or not isinstance(body.get("data"), dict):
            raise UpstreamError(
                f"Linear answered HTTP {resp.status_code} with no data",
                suggestion="check LINEAR_API_URL (or the connection's --api-url) points at "
                "Linear's GraphQL endpoint",
                code="LINEAR_BAD_RESPONSE",
            )
        return body["data"]

    def _auth_error(self, said: str) -> UpstreamError:
        kind = "OAuth token" if self.conn.oauth else "API key"
        return UpstreamError(
            f"Linear refused the {kind} of workspace {self.conn.label}: {said}",
            suggestion=f"reconnect it: `nxs linear connect {self.conn.label}` (key on stdin)"
            if self.conn.source == "config"
            else "check LINEAR_API_KEY",
            code="LINEAR_AUTH",
        )

    def _graphql_error(self, status: int, errors: list[dict[str, Any]]) -> NxsError:
        first, ext = _first(errors)
        said = self._scrub(_said(first))
        code = str(ext.get("code") or "")
        raw = str(first.get("message") or "")
        if status == 401 or code in ("AUTHENTICATION_ERROR", "UNAUTHENTICATED"):
            return self._auth_error(said)
        if code == "FORBIDDEN" or status == 403:
            return UpstreamError(
                f"Linear forbids this for workspace {self.conn.label}: {said}",
                suggestion="the key's user or app lacks access to that team or entity",
                code="LINEAR_FORBIDDEN",
            )
        if raw.startswith("Entity not found") or "could not find" in said.lower():
            return NotFoundError(
                f"Linear: {said}",
                suggestion="check the id; identifiers like NC-103 change when an issue moves team",
                code="LINEAR_NOT_FOUND",
            )
        details = {"linear_code": code} if code else None
        return UpstreamError(
            f"Linear: {said}",
            suggestion="Linear refused the request as sent: check the ids and values against "
            "linear_query (get_linear_teams, list_linear_statuses, list_linear_labels, ...)",
            code="LINEAR_ERROR",
            details=details,
        )


def _first(errors: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first GraphQL error (as `_json` left it) and its extensions; {} when none."""
    first = errors[0] if errors else {"extensions": {}}
    return first, first["extensions"]


def _said(error: dict[str, Any]) -> str:
    """What a GraphQL error says: Linear's message for people first."""
    ext = error["extensions"]
    return str(ext.get("userPresentableMessage") or error.get("message") or "unknown error")


def _applied(data: Any, errors: list[dict[str, Any]]) -> bool:
    """Whether a mutation's answer shows it ran: its payload says success, or an error comes
    from a field inside the payload (the root resolver returned, so the write was applied)."""
    roots = list(_dict(data).values())
    if roots and all(_dict(p).get("success") is True for p in roots):
        return True
    return any(isinstance(e.get("path"), list) and len(e["path"]) > 1 for e in errors)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["DEFAULT_URL", "ENV_URL", "LinearClient", "api_url", "check_url"]
