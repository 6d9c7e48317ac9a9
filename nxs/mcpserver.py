"""The MCP seam: `nxs mcp serve`, the operation table as MCP tools.

Built on the SDK's low-level `Server` (the high-level one rewrites results). Every tool is an
operation of the table: its input schema is `Operation.input_schema()`, its description the
operation's summary, and its answer exactly one text content whose text is `render(result)` —
the bytes `nxm … --json` prints for the same state. A refusal is a tool result with
``isError: true`` carrying the rendered error envelope, never a protocol error: arguments are
checked by `nxs.ops.validate` alone, and arguments that are not even a JSON object are caught
before the SDK's own parameter check could turn them into one.

The tool surface is the fan-out over the modules active in the launch workspace, narrowed to
the configured groups (`GROUPS`; `[mcp] tools` in `.nxs/config.toml`, or `--tools`).

Start-up is kept short for hosts with tight time-outs: `initialize` is answered with only mcp
and the light nxs modules loaded; lancedb and the embedding model are warmed in a background
thread once the client says it is initialized. Handlers block, so they run in a worker thread,
one at a time (writes serialise on the store's file lock anyway), and the services they open
(the LanceDB table, the model) stay cached across calls.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nxs.context import SERVER_ACTOR_ENV, Context, resolve_actor, resolve_now
from nxs.errors import NotFoundError, NxsError, ValidationError
from nxs.ops import SEAM_NAMES, Operation, validate
from nxs.render import render

log = logging.getLogger("nxs.mcp")

# The documented tool groups (docs/mcp.md). Each operation declares its own `group`.
GROUPS: dict[str, str] = {
    "core": "capture, correct, retire and read memories: add, update, classify, close, reopen, "
    "forget, restore, purge, show, list, search",
    "session": "session start and end: recall, store_context, facts, facts_update, personas, "
    "persona",
    "knowledge": "consolidated knowledge and the entity graph: knowledge, graph_*",
    "insights": "lifecycle and figures: history, promote, feedback, stats, profile, entities",
    "linear": "Linear issues and projects: linear_query, linear_mutate",
}
GROUP_ALIASES = {"lifecycle": "insights", "graph": "knowledge"}
DEFAULT_GROUPS = ("core", "session")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
SERVER_NAME = "nxs"
BAD_ARGUMENTS = "\x00arguments"  # stands in for arguments that are not a JSON object


def parse_groups(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """Group names from ``core,session`` or a list; ``all`` means every group.

    Raises:
        ValidationError: an unknown group name.
    """
    if spec is None:
        return DEFAULT_GROUPS
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for raw in names:
        name = str(raw).strip().lower()
        if not name:
            continue
        if name == "all":
            return tuple(GROUPS)
        name = GROUP_ALIASES.get(name, name)
        if name not in GROUPS:
            raise ValidationError(
                f"unknown tool group {raw!r}",
                suggestion=f"groups: {', '.join(GROUPS)}, or all",
                code="BAD_TOOL_GROUP",
            )
        if name not in out:
            out.append(name)
    return tuple(out)


def exposed_operations(modules: Iterable[str], groups: Iterable[str]) -> list[Operation]:
    """The operations a server exposes: those of the active modules in the chosen groups."""
    from nxs.registry import operations

    chosen = set(groups)
    return [op for op in operations(list(modules)) if op.group in chosen]


def _stamp(root: Path) -> tuple[int, int] | None:
    """What identifies a workspace's store and config: changes mean cached services are stale."""
    try:
        nxs_dir = (root / ".nxs").stat()
        config = (root / ".nxs" / "config.toml").stat()
    except OSError:
        return None
    return (nxs_dir.st_ino, config.st_mtime_ns)


class Seam:
    """The tool table and the call path, independent of the transport."""

    def __init__(
        self,
        workspace: str | None = None,
        actor: str | None = None,
        groups: str | Iterable[str] | None = None,
    ) -> None:
        from nxs.workspace import find

        self.actor = actor
        self.services: dict[Any, Any] = {}
        self._stamps: dict[Path, tuple[int, int] | None] = {}
        self.lock = threading.Lock()
        self.launch_error: NxsError | None = None
        try:
            ws = find(workspace)
        except NxsError as err:  # served anyway: per-call workspaces still work, prime says why
            log.warning("no workspace at launch: %s", err.message)
            self.launch_error = err
            self.workspace, self.modules, configured = workspace, [], None
        else:
            self.workspace, self.modules = str(ws.root), ws.modules
            configured = ws.section("mcp").get("tools")
        self.groups = parse_groups(groups if groups is not None else configured)
        self.ops = exposed_operations(self.modules, self.groups)
        self.by_tool = {op.tool: op for op in self.ops}

    def tools(self) -> list[Any]:
        """The MCP tool list."""
        import mcp_types as types

        return [
            types.Tool(
                name=op.tool,
                description=op.summary,
                input_schema=op.input_schema(),
                annotations=types.ToolAnnotations(
                    read_only_hint=not op.writes, destructive_hint=op.name == "purge"
                ),
            )
            for op in self.ops
        ]

    def schema(self, name: str) -> dict[str, Any] | None:
        op = self.by_tool.get(name)
        return op.input_schema() if op else None

    def _evict_stale(self) -> None:
        """Drop cached workspaces (re-read each call) and the services of changed stores.

        A store is known by its `.nxs/` inode and config mtime, recorded when its services are
        first seen; a workspace deleted and made again, or reconfigured, gets fresh services.
        """
        roots: dict[Any, Path] = {}
        for key in list(self.services):
            if isinstance(key, tuple) and key and key[0] == "workspace":
                del self.services[key]
            elif isinstance(key, tuple) and len(key) > 1 and isinstance(key[1], Path):
                roots[key] = key[1]
        stamps = {root: _stamp(root) for root in set(roots.values())}
        for key, root in roots.items():
            if self._stamps.get(root, stamps[root]) != stamps[root]:
                del self.services[key]
        self._stamps = stamps

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
        """Run one tool call: (the rendered answer, whether it is an error). Never raises."""
        with self.lock:
            try:
                return render(self._call(name, arguments or {})).decode(), False
            except NxsError as err:
                return render(err).decode(), True
            except Exception as exc:  # noqa: BLE001 - the seam's one catch-all
                from nxs.clitool import internal

                return render(internal(exc)).decode(), True

    def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        op = self.by_tool.get(name)
        if op is None and self.launch_error is not None:
            raise self.launch_error  # why there are no tools (a bad config, no workspace)
        if op is None:
            raise NotFoundError(
                f"unknown tool {name!r}",
                suggestion="list the tools again; the server exposes "
                f"the groups {', '.join(self.groups) or 'none'} of the modules "
                f"{', '.join(self.modules) or 'none'}",
                code="UNKNOWN_TOOL",
            )
        if BAD_ARGUMENTS in arguments:
            raise ValidationError(
                "tool arguments must be a JSON object",
                suggestion=f"e.g. {{}} for {op.tool} without arguments",
            )
        seam = {}
        for key in SEAM_NAMES:
            value = arguments.get(key)
            if value is not None and not isinstance(value, str):
                raise ValidationError(
                    f"{key} must be a string, got {value!r:.60}",
                    suggestion=f"pass {key} as a JSON string, or leave it out",
                )
            seam[key] = value
        kwargs = validate(op, arguments)
        self._evict_stale()
        ctx = Context(
            now=resolve_now(seam["now"]),
            actor=resolve_actor(seam["actor"] or self.actor, SERVER_ACTOR_ENV),
            workspace_arg=seam["workspace"] or self.workspace,
            services=self.services,
        )
        try:
            return op.handler(ctx, **kwargs)
        finally:
            self._evict_stale()  # records the stamps of services this call opened

    def warm(self) -> None:
        """Open the launch workspace's store and model, so the first call does not pay for them."""
        if "memory" not in self.modules:
            return
        # Imports first, outside the lock: calls that read the cache (show, list) go on
        # meanwhile; a call that needs lancedb waits on the import lock anyway.
        try:
            from nxm.store import import_lancedb

            import_lancedb()
        except Exception as exc:  # noqa: BLE001 - warming is an optimisation only
            log.warning("warm-up: cannot import lancedb: %s", exc)
        with self.lock:
            try:
                self._evict_stale()
                ctx = Context(
                    now=resolve_now(None),
                    actor="nxs",
                    workspace_arg=self.workspace,
                    services=self.services,
                )
                service = ctx.memory
                service.store.index.table()
                service.embedder()
                self._evict_stale()  # records the stamp of the store just opened
            except Exception as exc:  # noqa: BLE001 - warming is an optimisation only
                log.warning("warm-up failed: %s", exc)


def build_server(seam: Seam, instructions: str) -> Any:
    """The low-level MCP server over a `Seam`."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import mcp_types as types
    from mcp.server.lowlevel import Server

    warmed = threading.Event()

    def start_warm() -> None:
        if not warmed.is_set():
            warmed.set()
            threading.Thread(target=seam.warm, name="nxs-warm", daemon=True).start()

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=seam.tools())

    # Calls run one at a time (`Seam.call` holds a lock) on one thread of their own: on
    # anyio's pool each could land on another thread, and at 100,000 memories 36 adds with
    # searches spread over 8 threads left the process's peak ~17 MB higher than on one (each
    # thread's own allocations in onnxruntime, LanceDB and BLAS).
    calls = ThreadPoolExecutor(1, thread_name_prefix="nxs-call")

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        call = calls.submit(seam.call, params.name, params.arguments)
        text, failed = await asyncio.wrap_future(call)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    async def guard(ctx: Any, call_next: Any) -> Any:
        # Runs before the SDK checks params: non-object arguments become our own refusal.
        if ctx.method == "tools/call" and isinstance(ctx.params, dict):
            args = ctx.params.get("arguments")
            if args is not None and not isinstance(args, dict):
                import dataclasses

                params = {**ctx.params, "arguments": {BAD_ARGUMENTS: True}}
                ctx = dataclasses.replace(ctx, params=params)
        result = await call_next(ctx)
        # Warm only once initialize has been answered and acknowledged (or, on the 2026 wire,
        # once discovery is done), so the heavy imports never delay the handshake.
        if ctx.method in ("notifications/initialized", "server/discover", "tools/list"):
            start_warm()
        return result

    server = Server(
        SERVER_NAME,
        version=_version(),
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=seam.schema,
    )
    server.middleware.append(guard)
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nxs")
    except PackageNotFoundError:
        return "0"


def _instructions(seam: Seam) -> str:
    from nxs.prime import prime_text

    return prime_text(seam.workspace)


async def serve_stdio(seam: Seam) -> None:
    """Serve over stdin/stdout; only protocol messages reach the real stdout."""
    import io

    import anyio
    from mcp.server.stdio import stdio_server

    # Take the real stdout for the transport, then point fd 1 and sys.stdout at stderr, so
    # nothing a handler, a library or a warning prints can corrupt the protocol stream.
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out = anyio.wrap_file(io.TextIOWrapper(wire, encoding="utf-8", newline="\n"))
    server = build_server(seam, _instructions(seam))
    async with stdio_server(stdout=out) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


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


def _bearer(app: Any, token: str) -> Any:
    """An ASGI wrapper that answers 401 unless ``Authorization: Bearer <token>`` is sent."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, expected):
                body = b'{"error":"unauthorized"}\n'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="nxs"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def http_app(seam: Seam, host: str = "127.0.0.1", token: str | None = None) -> Any:
    """The streamable-HTTP ASGI app at ``/mcp`` (DNS-rebinding protection on loopback)."""
    check_http(host, token)
    server = build_server(seam, _instructions(seam))
    app = server.streamable_http_app(host=host)
    return _bearer(app, token) if token else app


async def serve_http(seam: Seam, host: str, port: int, token: str | None) -> None:
    """Serve streamable HTTP on ``host:port`` until interrupted."""
    import uvicorn

    app = http_app(seam, host, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    with contextlib.suppress(KeyboardInterrupt):
        await uvicorn.Server(config).serve()


__all__ = [
    "DEFAULT_GROUPS",
    "GROUPS",
    "Seam",
    "build_server",
    "check_http",
    "exposed_operations",
    "http_app",
    "parse_groups",
    "serve_http",
    "serve_stdio",
]
