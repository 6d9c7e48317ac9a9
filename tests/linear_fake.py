"""A stand-in for Linear's GraphQL API, executing requests against Linear's real schema.

Every request is parsed, validated and executed by graphql-core over ``schema.graphql`` (built
once per session), so a document or variable the real API would reject is rejected here, and
every answer has the real types' shape (a missing non-null field is an error, not a pass).
Resolvers serve two organisations from `linear_fake_data` and model what nxs relies on:
identifier resolution, team moves (renumbering; the old identifier stops resolving), label
scope (a team label refused on another team's issue), comment threads, label replacement,
rate limiting (``RATELIMITED`` with HTTP 400 and ``X-RateLimit-*`` headers), outages (HTTP
5xx with a GraphQL errors body or an HTML page) and auth errors (personal keys without
``Bearer``, OAuth tokens with it). Every request is logged in ``requests``.

Use it three ways:

- ``FakeLinear().transport()`` — an ``httpx.MockTransport`` for in-process tests;
- ``serve_fake_linear()`` — the same over HTTP on 127.0.0.1 (a thread, once per process), for
  CLI and MCP-server subprocess tests; ``/graphql`` keeps state (``shared_fake()``), while
  ``/fresh/graphql`` answers every request from fresh seed data (byte-parity cases);
- `schema()` — the built schema, for document validation tests.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
from graphql import (
    GraphQLError,
    GraphQLSchema,
    build_ast_schema,
    default_field_resolver,
    graphql_sync,
    parse,
)

from tests import linear_fake_data as seed
from tests.linear_fake_roots import Org, Roots, error

SCHEMA_PATH = Path(__file__).parent / "data" / "linear" / "schema.graphql"  # @linear/sdk 88.3.0
NOW = "2026-05-29T10:00:00.000Z"
COMPLEXITY_LIMIT = 10_000  # Linear's cap on one query's estimated complexity


@functools.cache
def schema() -> GraphQLSchema:
    """Linear's real schema (about 2.5 s to build; once per process)."""
    return build_ast_schema(parse(SCHEMA_PATH.read_text(), no_location=True), assume_valid_sdl=True)


def complexity(document: str, variables: dict[str, Any] | None = None) -> int:
    """A document's complexity by Linear's published rule: a property 0.1 point, an object 1, a
    connection's children times its ``first`` (default 50), rounded up. Conservative: a
    connection's ``pageInfo`` counts once per node, as its children do."""
    from graphql import FragmentDefinitionNode, FragmentSpreadNode, IntValueNode, VariableNode

    doc = parse(document)
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}

    def cost(selections: Any) -> float:
        total = 0.0
        for sel in selections:
            if isinstance(sel, FragmentSpreadNode):
                total += cost(fragments[sel.name.value].selection_set.selections)
            elif sel.selection_set is None:
                total += 0.1
            else:
                inner = cost(sel.selection_set.selections)
                names = {c.name.value for c in sel.selection_set.selections if hasattr(c, "name")}
                args = sel.arguments or ()  # None in graphql-core 3.3
                first = next((a.value for a in args if a.name.value == "first"), None)
                if isinstance(first, VariableNode):
                    first = (variables or {}).get(first.name.value)
                elif isinstance(first, IntValueNode):
                    first = int(first.value)
                total += 1 + inner * ((first or 50) if "nodes" in names else 1)
        return total

    ops = [d for d in doc.definitions if not isinstance(d, FragmentDefinitionNode)]
    return math.ceil(sum(cost(op.selection_set.selections) for op in ops) - 1e-9)


class FakeLinear:
    """The fake API: credentials, rate limiting, the Query and Mutation roots."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[dict[str, Any]] = []
        self.reset()

    def reset(self) -> None:
        """Back to the seed data, no pending rate limits, no recorded requests."""
        with self.lock:
            self.orgs = {k: Org(v) for k, v in seed.seed_orgs().items()}
            self.rate_limited = 0
            self.reset_in_ms = 1500
            self.failing, self.fail_status, self.fail_errors = 0, 503, True
            self.broken: set[str] = set()
            self.hang = 0.0  # seconds the HTTP server waits before answering (a hanging Linear)
            self.requests.clear()

    def rate_limit_next(self, count: int, reset_in_ms: int = 1500) -> None:
        """Answer the next ``count`` authenticated requests with RATELIMITED."""
        self.rate_limited, self.reset_in_ms = count, reset_in_ms

    def fail_next(self, count: int, status: int = 503, errors: bool = True) -> None:
        """Answer the next ``count`` authenticated requests with an HTTP error (an outage).

        With ``errors`` the body is a GraphQL errors body, as Linear's gateway sends in an
        outage; without, an HTML page.
        """
        self.failing, self.fail_status, self.fail_errors = count, status, errors

    def break_field(self, *coordinates: str) -> None:
        """Make fields (``"Issue.project"``) of a mutation's answer fail as they resolve, after
        the root field ran: the write is applied and the answer holds errors beside data (or,
        for a non-null field, a null entity), as Linear's can. Reads are not affected."""
        self.broken.update(coordinates)

    def _resolve(self, source: Any, info: Any, **args: Any) -> Any:
        broken = f"{info.parent_type.name}.{info.field_name}" in self.broken
        if broken and info.operation.operation.value == "mutation":
            raise error("Internal server error", "INTERNAL_SERVER_ERROR")
        return default_field_resolver(source, info, **args)

    def transport(self) -> Any:
        """An httpx.MockTransport answering from this fake."""
        import httpx

        def handler(request: httpx.Request) -> httpx.Response:
            status, headers, body = self.handle(dict(request.headers), request.content)
            return httpx.Response(status, headers=headers, content=body)

        return httpx.MockTransport(handler)

    # -- requests -------------------------------------------------------------------------------

    def _org_for(self, authorization: str) -> Org | None:
        if authorization.startswith("Bearer "):
            label = seed.OAUTH.get(authorization[7:])
        else:
            label = seed.KEYS.get(authorization)
        return self.orgs.get(label) if label else None

    def handle(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Answer one HTTP request: (status, headers, body)."""
        with self.lock:
            lower = {k.lower(): v for k, v in headers.items()}
            auth = lower.get("authorization", "")
            try:
                payload = orjson.loads(body)
            except orjson.JSONDecodeError:
                payload = None
            self.requests.append({"authorization": auth, "payload": payload})
            if isinstance(payload, dict) and isinstance(payload.get("query"), str):
                variables = payload.get("variables") or {}
                self.requests[-1]["complexity"] = complexity(payload["query"], variables)
            org = self._org_for(auth)
            limits = {
                "X-RateLimit-Requests-Limit": "1500",
                "X-RateLimit-Requests-Remaining": "1499",
                "X-RateLimit-Requests-Reset": str(int(time.time() * 1000) + 3_600_000),
            }
            if org is None:
                return self._errors(
                    400,
                    error(
                        "Authentication required, not authenticated",
                        "AUTHENTICATION_ERROR",
                        "You need to authenticate to access this operation.",
                    ),
                )
            if self.failing > 0:
                self.failing -= 1
                if not self.fail_errors:
                    return self.fail_status, {"Content-Type": "text/html"}, b"<html>down</html>"
                return self._errors(
                    self.fail_status,
                    error(
                        "Service unavailable",
                        "SERVICE_UNAVAILABLE",
                        "Linear is temporarily unavailable. Please try again.",
                    ),
                )
            if self.rate_limited > 0:
                self.rate_limited -= 1
                limits["X-RateLimit-Requests-Remaining"] = "0"
                limits["X-RateLimit-Requests-Reset"] = str(
                    int(time.time() * 1000) + self.reset_in_ms
                )
                return self._errors(
                    400,
                    error("Rate limit exceeded", "RATELIMITED", "Too many requests."),
                    limits,
                )
            if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
                return self._errors(400, error("Must provide query string.", "BAD_REQUEST"))
            result = graphql_sync(
                schema(),
                payload["query"],
                root_value=Roots(org),
                variable_values=payload.get("variables") or {},
                operation_name=payload.get("operationName"),
                field_resolver=self._resolve,
            )
            out: dict[str, Any] = {"data": result.data}
            status = 200
            if result.errors:
                out["errors"] = [e.formatted for e in result.errors]
                status = 400 if result.data is None and not _executed(result.errors) else 200
            return status, {"Content-Type": "application/json", **limits}, orjson.dumps(out)

    @staticmethod
    def _errors(status: int, err: GraphQLError, headers: dict[str, str] | None = None):
        body = orjson.dumps({"errors": [err.formatted]})
        return status, {"Content-Type": "application/json", **(headers or {})}, body


def _executed(errors: list[GraphQLError]) -> bool:
    """True when the errors come from resolvers (a path), not from validation."""
    return any(e.path for e in errors)


# -- the HTTP server --------------------------------------------------------------------------

_server: dict[str, Any] = {}
_server_lock = threading.Lock()


def shared_fake() -> FakeLinear:
    """The stateful fake behind ``/graphql`` of the session server."""
    serve_fake_linear()
    return _server["fake"]


def serve_fake_linear() -> str:
    """Start the fake on 127.0.0.1 (once per process); return its stateful ``/graphql`` URL.

    ``url.replace("/graphql", "/fresh/graphql")`` answers every request from fresh seed data.
    """
    with _server_lock:
        if "url" not in _server:
            fake = FakeLinear()

            class Handler(BaseHTTPRequestHandler):
                def do_POST(self) -> None:  # noqa: N802 - http.server's spelling
                    length = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(length)
                    target = fake
                    if self.path.startswith("/fresh/"):
                        target = FakeLinear()
                    elif not self.path.startswith("/graphql"):
                        self.send_error(404)
                        return
                    status, headers, out = target.handle(dict(self.headers.items()), body)
                    time.sleep(target.hang)  # outside the lock: other requests go on
                    try:
                        self.send_response(status)
                        for k, v in headers.items():
                            self.send_header(k, v)
                        self.send_header("Content-Length", str(len(out)))
                        self.end_headers()
                        self.wfile.write(out)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the client gave up waiting (a hang)

                def log_message(self, *args: Any) -> None:  # quiet
                    pass

            server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            _server.update(fake=fake, server=server)
            _server["url"] = f"http://127.0.0.1:{server.server_address[1]}/graphql"
        return _server["url"]


def fresh_url() -> str:
    """The URL whose every request sees fresh seed data (deterministic writes)."""
    return serve_fake_linear().replace("/graphql", "/fresh/graphql")


def run(
    tool: str,
    fake: FakeLinear | None = None,
    *,
    workspace: Any = None,
    sleep: Any = None,
    **arguments: Any,
) -> dict[str, Any]:
    """Call `linear_query`/`linear_mutate` in-process against a fake; the answer or error dict.

    Goes through the operation table's `validate`, as both seams do.
    """
    from nxs.context import Context
    from nxs.errors import NxsError
    from nxs.linear.ops import OPERATIONS
    from nxs.linear.session import SLEEP, TRANSPORT
    from nxs.ops import validate

    op = next(o for o in OPERATIONS if o.tool == tool)
    services: dict[str, Any] = {SLEEP: sleep or (lambda seconds: None)}
    if fake is not None:
        services[TRANSPORT] = fake.transport()
    ctx = Context(
        now=NOW,
        actor="tester",
        workspace_arg=str(workspace) if workspace is not None else None,
        services=services,
    )
    try:
        return op.handler(ctx, **validate(op, arguments))
    except NxsError as err:
        return err.to_dict()


__all__ = ["FakeLinear", "fresh_url", "run", "schema", "serve_fake_linear", "shared_fake"]
