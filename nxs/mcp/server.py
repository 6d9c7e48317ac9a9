"""The MCP seam: `nxs mcp serve`, the operation table as MCP tools.

Built on the SDK's low-level `Server` (the high-level one rewrites results). A tool's answer is
one text content, `render(result)`: the bytes `nxm … --json` prints. A refusal is a tool result
with ``isError: true``, never a protocol error, even for arguments that are not a JSON object.

A server that cannot open its launch workspace (a host's own directory, a broken config) still
serves every module's chosen groups, each call naming its ``workspace``; what is wrong is said
on stderr and in the ``initialize`` instructions. `initialize` is answered before anything heavy
loads (hosts have tight time-outs); the warm-up runs afterwards, only between calls.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nxs.context import SERVER_ACTOR_ENV, Context, resolve_actor, resolve_now
from nxs.errors import NotFoundError, NxsError, ValidationError
from nxs.mcp.groups import (
    DEFAULT_GROUPS,
    GROUPS,
    exposed_operations,
    parse_groups,
    split_groups,
    with_linear,
)
from nxs.ops import SEAM_NAMES, validate
from nxs.render import render

log = logging.getLogger("nxs.mcp")

SERVER_NAME = "nxs"
BAD_ARGUMENTS = "\x00arguments"  # stands in for arguments that are not a JSON object
WARM_ENV = "NXS_MCP_WARM"  # "0": no warm-up (each first call loads what it needs)
# full: the prime text; hook: a pointer, where a session-start hook delivers it (Claude Code)
INSTRUCTIONS = ("full", "hook")


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
        self, workspace: str | None = None, actor: str | None = None,
        groups: str | Iterable[str] | None = None, instructions: str = "full",
    ) -> None:  # fmt: skip
        from nxs.registry import MODULES
        from nxs.workspace import find

        if instructions not in INSTRUCTIONS:
            raise ValidationError(
                f"unknown instructions {instructions!r}", suggestion="use full or hook"
            )
        self.brief = instructions == "hook"
        self.actor = actor
        self.services: dict[Any, Any] = {}
        self._stamps: dict[Path, tuple[int, int] | None] = {}
        self.lock = threading.Lock()  # one call at a time
        self._idle = threading.Condition()  # the warm-up waits on it while calls run
        self._running = 0
        self._warmer: threading.Thread | None = None
        self._closing = False
        self.problems: list[str] = []  # what is wrong at launch: stderr and the instructions
        self.launch_error: NxsError | None = None
        self.workspace = workspace
        configured: Any = None
        try:
            ws = find(workspace)
        except NxsError as err:  # served anyway: each call can name its workspace
            self.launch_error = err
            self.modules = list(MODULES)
            self.problems.append(_launch_problem(err, named=bool(workspace)))
        else:
            self.workspace, self.modules = str(ws.root), ws.modules
            configured = ws.section("mcp").get("tools")
        if groups is not None:
            self.groups = parse_groups(groups)  # the command line: refused at start
        else:
            self.groups, unknown = split_groups(configured)
            if unknown:
                self.problems.append(_groups_problem(unknown, self.groups, self.workspace))
                self.groups = self.groups or DEFAULT_GROUPS
            self.groups = with_linear(self.modules, self.groups)
        self.ops = exposed_operations(self.modules, self.groups)
        self.by_tool = {op.tool: op for op in self.ops}
        for problem in self.problems:
            log.warning("%s", problem)

    def tools(self) -> list[Any]:
        """The MCP tool list (`workspace` listed only where calls must name one)."""
        import mcp_types as types

        return [
            types.Tool(
                name=op.tool,
                description=op.description,
                input_schema=op.input_schema(self.launch_error is not None),
                # Only the hints that differ from MCP's defaults (not read-only, destructive).
                # Search and recall count themselves in the usage log, yet change no memory.
                annotations=types.ToolAnnotations(read_only_hint=True)
                if not op.writes
                else types.ToolAnnotations(destructive_hint=op.name == "purge"),
            )
            for op in self.ops
        ]

    def schema(self, name: str) -> dict[str, Any] | None:
        op = self.by_tool.get(name)
        return op.input_schema(self.launch_error is not None) if op else None

    def instructions(self) -> str:
        """The `initialize` instructions: the prime text (or a pointer to the hook), then what is
        wrong."""
        from nxs.prime import HOOKED, prime_text

        text = HOOKED if self.brief else prime_text(self.workspace, seam="mcp", served=self.by_tool)
        if not self.problems:
            return text
        lines = "".join(f"- {problem}\n" for problem in self.problems)
        groups = ", ".join(self.groups) or "none"
        return f"{text}\n# nxs MCP server\n\n{lines}Tool groups served: {groups}.\n"

    def _evict_stale(self) -> None:
        """Drop cached workspaces, and services of stores made again or reconfigured since."""
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
        with self._idle:
            self._running += 1
        try:
            with self.lock:
                try:
                    return render(self._call(name, arguments or {})).decode(), False
                except NxsError as err:
                    return render(err).decode(), True
                except Exception as exc:  # noqa: BLE001 - the seam's one catch-all
                    from nxs.clitool import internal

                    return render(internal(exc)).decode(), True
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        op = self.by_tool.get(name)
        if op is None:
            raise NotFoundError(
                f"unknown tool {name!r}", suggestion=self._unknown(name), code="UNKNOWN_TOOL"
            )
        if BAD_ARGUMENTS in arguments:
            raise ValidationError(
                "tool arguments must be a JSON object",
                suggestion=f"e.g. {{}} for {op.tool} without arguments",
            )
        seam = {key: arguments.get(key) for key in SEAM_NAMES}
        for key, value in seam.items():
            if value is not None and not isinstance(value, str):
                raise ValidationError(f"{key} must be a string, got {value!r:.60}")
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
        except NotFoundError as err:
            if err.code == "NO_WORKSPACE" and not seam["workspace"] and self.launch_error:
                raise NotFoundError(
                    f"this server was started outside any nxs workspace ({err.message})",
                    suggestion="pass the project's root as this call's `workspace` argument, "
                    "or start the server with `--workspace PATH`",
                    code="NO_WORKSPACE",
                ) from None
            raise
        finally:
            self._evict_stale()  # records the stamps of services this call opened

    def _unknown(self, name: str) -> str:
        """Why a tool is not served, and what serves it."""
        from nxs.registry import operations

        known = next((op for op in operations() if op.tool == name), None)
        if known is not None and known.module not in self.modules:
            return (
                f"{name} belongs to the {known.module} module, which this workspace does not "
                f"enable (`nxs init --module {known.module}`)"
            )
        if known is not None:
            return (
                f"{name} is in the {known.group} tool group, not served here: add it to the "
                "server's --tools (or [mcp] tools in .nxs/config.toml) and restart it"
            )
        served = [g for g in self.groups if any(op.group == g for op in self.ops)]
        return (
            f"list the tools again; this server serves the groups {', '.join(served) or 'none'} "
            f"of the modules {', '.join(self.modules) or 'none'}"
        )

    def _when_idle(self) -> None:
        """Wait until no call runs (the warm-up's steps go between calls, never before one)."""
        with self._idle:
            self._idle.wait_for(lambda: self._running == 0 or self._closing)

    def start_warm(self) -> None:
        """Start the warm-up once, on a thread of its own."""
        if self._warmer is None:
            self._warmer = threading.Thread(target=self.warm, name="nxs-warm", daemon=True)
            self._warmer.start()

    def close(self) -> None:
        """Stop the warm-up at its next step and wait for it: a native library (onnxruntime)
        torn down at exit while another thread loads it aborts the process."""
        with self._idle:
            self._closing = True
            self._idle.notify_all()
        if self._warmer is not None:
            self._warmer.join()

    def warm(self) -> None:
        """Open the memory service ahead of the first call, a step at a time between calls, so
        a call never waits for it (unless NXS_MCP_WARM=0)."""
        started = time.perf_counter()
        off = os.environ.get(WARM_ENV, "").strip() == "0"
        if off or "memory" not in self.modules or self.launch_error is not None:
            return
        try:
            ctx = Context(now="", actor="nxs", workspace_arg=self.workspace, services={})
            service = ctx.memory  # in a cache of its own until it is handed over
            root = service.ws.root
            before = _stamp(root)
            for _ in service.warm():  # a step at a time, each while no call runs
                self._when_idle()
                if self._closing:
                    return
            with self.lock:
                key = ("memory", root)
                if key not in self.services and _stamp(root) == before:
                    self.services[key] = service
                    self._stamps[root] = before
        except Exception as exc:  # noqa: BLE001 - warming is an optimisation only
            log.warning("warm-up failed: %s", exc)
            return
        log.debug("warm-up done in %.2f s", time.perf_counter() - started)


def _launch_problem(err: NxsError, *, named: bool) -> str:
    """What a server that could not open its launch workspace tells the host."""
    if named and err.code != "BAD_CONFIG":
        return (
            f"The workspace this server was started with cannot be opened ({err.message}): run "
            "`nxm init` there, or fix `--workspace`. Meanwhile every tool takes a `workspace` "
            "argument naming another project's root."
        )
    if err.code == "BAD_CONFIG":
        return (
            f"The launch workspace cannot be opened ({err.message}). The default tool groups "
            "are served; a call that opens this workspace answers with this error until the "
            "file is fixed, and a call naming another workspace in `workspace` works."
        )
    return (
        f"This server was started outside any nxs workspace ({err.message}). Every tool takes "
        "a `workspace` argument: pass the project's root (the directory holding `.nxs/`) on "
        "each call, or start the server with `--workspace PATH`."
    )


def _groups_problem(unknown: list[str], groups: tuple[str, ...], root: str | None) -> str:
    names = ", ".join(repr(name) for name in unknown)
    where = f"{root}/.nxs/config.toml" if root else "the workspace config"
    text = (
        f"[mcp] tools in {where} names unknown tool groups ({names}), ignored; the groups "
        f"are {', '.join(GROUPS)}, or all."
    )
    return text if groups else text + " None is left, so the defaults are served."


def build_server(seam: Seam, instructions: str) -> Any:
    """The low-level MCP server over a `Seam`."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import mcp_types as types
    from mcp.server.lowlevel import Server

    from nxs import release

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=seam.tools())

    # Calls run one at a time (`Seam.call` holds a lock) on one thread of their own: spread over
    # anyio's pool, each thread's own allocations (onnxruntime, BLAS) raise the peak memory.
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
        # Warm once initialize is acknowledged (or discovery done): never delay the handshake.
        if ctx.method in ("notifications/initialized", "server/discover", "tools/list"):
            seam.start_warm()
        return result

    server = Server(
        SERVER_NAME,
        version=release(),
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=seam.schema,
    )
    server.middleware.append(guard)
    return server


async def serve_stdio(seam: Seam) -> None:
    """Serve over stdin/stdout; only protocol messages reach the real stdout."""
    from nxs.mcp.wire import stdio_wire

    # The transport takes the real stdin and stdout; fd 0 then reads the null device and fd 1
    # writes to stderr, so nothing a handler, library or child prints touches the protocol.
    sys.stdout.flush()
    wire_out = os.fdopen(os.dup(1), "wb", buffering=0)
    wire_in = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    server = build_server(seam, seam.instructions())
    async with stdio_wire(wire_in, wire_out) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


__all__ = ["Seam", "build_server", "serve_stdio"]
