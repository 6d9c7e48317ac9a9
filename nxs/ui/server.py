"""The dashboard seam: `nxs ui`, the operation table over HTTP for one browser page.

The page (shipped in this package: no CDN, no build step) calls ``POST /api/call/<tool>``,
run as the MCP seam runs it (`Seam.call`), so the body is the bytes ``nxm … --json`` prints; a
refusal gets an HTTP status for its kind. Only the tools the pages need are reachable, user
facts only from this machine, and the seam parameters are refused (the launch workspace, now).
What no single tool answers is a module's view (`nxs.registry.views`) at ``/api/view/<name>``.
"""

from __future__ import annotations

import secrets
import threading
from importlib import resources
from typing import Any

import orjson

from nxs.errors import NotFoundError, NxsError, UpstreamError, ValidationError
from nxs.ops import SEAM_NAMES
from nxs.render import render
from nxs.ui.guard import Guard, check_bind, is_loopback

UI_TOOLS = (
    "memory_add", "memory_update", "memory_list", "memory_search", "memory_show",
    "memory_history", "memory_close", "memory_reopen", "memory_forget", "memory_restore",
    "memory_classify", "memory_revert", "memory_promote", "memory_feedback", "memory_purge",
    "memory_knowledge", "graph_search", "graph_traverse", "graph_query", "memory_stats",
    "memory_entities", "memory_profile", "memory_stale", "memory_confirm",
)  # fmt: skip
LOCAL_ONLY_TOOLS = ("memory_facts",)
STATUS = {"validation": 400, "not_found": 404, "conflict": 409, "upstream": 502, "internal": 500}
SCRIPTS = ("app.js", "dom.js", "md.js", "memories.js", "memory.js", "graph.js", "figures.js")
ASSETS = {
    **{f"/{name}": (name, "text/javascript; charset=utf-8") for name in SCRIPTS},
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
CSRF_PLACEHOLDER = "{{csrf}}"


def _asset(name: str) -> bytes:
    return (resources.files("nxs.ui") / name).read_bytes()


def _parse_kind(text: str) -> str:
    try:
        return str(orjson.loads(text).get("kind", "internal"))
    except (orjson.JSONDecodeError, AttributeError):
        return "internal"


class Dashboard:
    """The pages and the API over one `Seam` (the MCP seam's call path, reused as it is)."""

    def __init__(self, seam: Any, *, csrf: str) -> None:
        self.seam = seam
        self.csrf = csrf
        from nxs.registry import views

        self.views = {op.tool: op for op in views(seam.modules)}
        seam.by_tool.update(self.views)  # called through the seam, never listed as tools
        page = _asset("index.html").decode()
        self.page = page.replace(CSRF_PLACEHOLDER, csrf).encode()
        self.assets = {path: (_asset(name), kind) for path, (name, kind) in ASSETS.items()}

    def info(self, local: bool) -> dict[str, Any]:
        """What the page needs to build its forms: the workspace and each tool's parameters."""
        from nxs import release

        tools = {}
        for tool in (*UI_TOOLS, *(LOCAL_ONLY_TOOLS if local else ())):
            op = self.seam.by_tool.get(tool)
            if op is None:
                continue
            tools[tool] = {
                "writes": op.writes,
                "params": [
                    {"name": p.name, "type": p.type, "choices": p.choices, "default": p.default}
                    for p in op.params
                ],
            }
        return {
            "facts": local and "memory_facts" in tools, "tools": tools, "version": release(),
            "workspace": self.seam.workspace,
        }  # fmt: skip

    def run(self, tool: str, body: bytes, local: bool, view: bool) -> tuple[int, bytes]:
        """Run one tool or view for the page: (HTTP status, the rendered answer). Never raises."""
        try:
            arguments = self._arguments(tool, body, local, view)
        except NxsError as err:
            return STATUS.get(err.kind, 500) if err.code != "LOCAL_ONLY" else 403, render(err)
        text, failed = self.seam.call(tool, arguments)
        return (STATUS.get(_parse_kind(text), 500) if failed else 200), text.encode()

    def _arguments(self, tool: str, body: bytes, local: bool, view: bool) -> dict[str, Any]:
        if view and tool not in self.views:
            raise NotFoundError(
                f"the dashboard has no view {tool.removeprefix('ui_')!r}",
                suggestion=f"one of: {', '.join(sorted(v.removeprefix('ui_') for v in self.views))}",
                code="UNKNOWN_VIEW",
            )
        if not view and tool in LOCAL_ONLY_TOOLS and not local:
            raise ValidationError(
                "user facts are shown only to a browser on the machine that runs `nxs ui`",
                suggestion="open the dashboard on that machine",
                code="LOCAL_ONLY",
            )
        if not view and tool not in UI_TOOLS and tool not in LOCAL_ONLY_TOOLS:
            raise NotFoundError(
                f"the dashboard does not offer {tool!r}",
                suggestion="use `nxm` or the MCP server for it",
                code="UNKNOWN_TOOL",
            )
        try:
            arguments = orjson.loads(body or b"{}")
        except orjson.JSONDecodeError as exc:
            raise ValidationError(f"the request body is not JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise ValidationError("the request body must be a JSON object of arguments")
        seam = sorted(SEAM_NAMES & set(arguments))
        if seam:
            raise ValidationError(
                f"the dashboard does not take {', '.join(seam)}",
                suggestion="it serves its launch workspace, at the current time",
            )
        return arguments

    def app(self) -> Any:
        """The Starlette app: the page, its two assets, and the API."""
        import anyio.to_thread
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        def local_client(request: Request) -> bool:
            return request.client is not None and is_loopback(request.client.host)

        async def page(request: Request) -> Response:
            kind = "text/html; charset=utf-8"
            return Response(self.page, media_type=kind, headers={"cache-control": "no-store"})

        async def asset(request: Request) -> Response:
            data, kind = self.assets[request.url.path]
            return Response(data, media_type=kind, headers={"cache-control": "no-cache"})

        async def api_info(request: Request) -> Response:
            return _json(200, render(self.info(local_client(request))))

        async def api(request: Request) -> Response:
            view = "name" in request.path_params  # /api/view/NAME, else /api/call/TOOL
            tool = f"ui_{request.path_params['name']}" if view else request.path_params["tool"]
            body, local = await request.body(), local_client(request)
            return _json(*await anyio.to_thread.run_sync(self.run, tool, body, local, view))

        def _json(status: int, data: bytes) -> Response:
            headers = {"cache-control": "no-store"}
            return Response(data, status, media_type="application/json", headers=headers)

        routes = [
            Route("/", page, methods=["GET"]),
            *(Route(path, asset, methods=["GET"]) for path in ASSETS),
            Route("/api/info", api_info, methods=["POST"]),
            Route("/api/view/{name}", api, methods=["POST"]),
            Route("/api/call/{tool}", api, methods=["POST"]),
        ]
        return Starlette(routes=routes)


def build_app(
    workspace: str | None, *, host: str = "127.0.0.1", port: int, token: str | None = None,
    csrf: str | None = None,
) -> Any:  # fmt: skip
    """The guarded dashboard ASGI app for a workspace (`nxs.ui.guard`)."""
    from nxs.mcp.server import Seam
    from nxs.workspace import find

    check_bind(host, token)
    find(workspace).require("memory")
    seam = Seam(workspace=workspace, groups="all")
    csrf = csrf or secrets.token_urlsafe(32)
    dashboard = Dashboard(seam, csrf=csrf)
    app = Guard(dashboard.app(), host=host, port=port, csrf=csrf, token=token)
    app.seam = seam  # type: ignore[attr-defined]  # so `serve` can warm it
    return app


def serve(
    workspace: str | None, *, host: str = "127.0.0.1", port: int = 8766, token: str | None = None,
    open_browser: bool = False, announce: Any = print,
) -> None:  # fmt: skip
    """Serve the dashboard until interrupted; port 0 picks a free one. Prints the URL first.

    Raises:
        ValidationError: a non-loopback host without a token.
        NotFoundError: no workspace with the memory module.
        UpstreamError: the port cannot be bound.
    """
    import socket

    import uvicorn

    check_bind(host, token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UpstreamError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            suggestion="pick another --port, or 0 for any free one",
            code="PORT_UNAVAILABLE",
        ) from None
    port = sock.getsockname()[1]
    try:
        app = build_app(workspace, host=host, port=port, token=token)
    except BaseException:
        sock.close()
        raise
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")  # as Jupyter's does
    announce(url)
    threading.Thread(target=app.seam.warm, name="nxs-ui-warm", daemon=True).start()
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, [url]).start()
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


__all__ = ["LOCAL_ONLY_TOOLS", "UI_TOOLS", "Dashboard", "build_app", "serve"]
