"""The `nxs` CLI's Typer app: workspaces, the session bootstrap, the MCP server, integrations.

`nxs.cli.main` runs it (and answers `nxs prime` without it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nxs.clitool import JsonOpt, emit, fail, standard_options
from nxs.errors import NxsError
from nxs.render import render

app = typer.Typer(
    name="nxs",
    help="nxs: a CLI-first memory suite for coding agents (workspaces, prime, MCP, Linear).",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
standard_options(app)
FoundOpt = Annotated[
    str | None, typer.Option("--workspace", "-w", help="Workspace path (default: found).")
]


@app.command()
def init(
    path: Annotated[
        Path, typer.Argument(help="Workspace root (default: the current directory).")
    ] = Path("."),
    module: Annotated[
        list[str] | None, typer.Option("--module", "-m", help="Module to activate: memory, linear.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create `.nxs/` here, or activate more modules in an existing one.

    Example:

        nxs init --module memory
    """
    from nxs.workspace import init as init_ws

    try:
        ws, added = init_ws(path, module or ["memory"])
    except NxsError as err:
        raise fail(err, as_json) from None
    result: dict[str, Any] = {"workspace": str(ws.root), "modules": ws.modules, "activated": added}
    if as_json:
        emit(render(result))
    else:
        typer.echo(f"workspace ready at {ws.root} (modules: {', '.join(ws.modules)})")


@app.command()
def prime(
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=0, help="Bytes for the memory block (default: config)."),
    ] = None,
    format_: Annotated[
        str,
        typer.Option(
            "--format", help="text, or claude-code (SessionStart hook JSON).", show_default=True
        ),
    ] = "text",
    workspace: FoundOpt = None,
    quiet_outside: Annotated[
        bool,
        typer.Option(
            "--quiet-outside",
            help="Print nothing where no workspace is found (for a hook every project runs).",
        ),
    ] = False,
    seam: Annotated[
        str,
        typer.Option(
            "--seam",
            help="cli: name the nxm verbs (a shell); mcp: name the MCP tools served here (a "
            "host, e.g. Claude Code's hook).",
        ),
    ] = "cli",
    tools: Annotated[
        str | None,
        typer.Option("--tools", help="With --seam mcp: the server's --tools (default: config)."),
    ] = None,
    now: Annotated[str | None, typer.Option("--now", hidden=True)] = None,
) -> None:
    """Print the session bootstrap: the protocol, the rules and the memory index. Never fails.

    Example:

        nxs prime --format claude-code
    """
    from nxs.prime import FORMATS, SEAMS, output  # deferred: the CLI's other verbs skip it

    if format_ not in FORMATS:
        raise typer.BadParameter(f"use one of {', '.join(FORMATS)}", param_hint="--format")
    if seam not in SEAMS:
        raise typer.BadParameter(f"use one of {', '.join(SEAMS)}", param_hint="--seam")
    options = {"budget": budget, "now": now, "quiet_outside": quiet_outside, "tools": tools}
    emit(output(workspace, format_=format_, seam=seam, **options))


@app.command()
def ui(
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on (0: any free one).")
    ] = 8766,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; beyond loopback a token is required.")
    ] = "127.0.0.1",
    open_: Annotated[bool, typer.Option("--open", help="Open the dashboard in a browser.")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="NXS_UI_TOKEN",
            show_envvar=True,
            help="Require this token on every request (the printed URL carries it).",
        ),
    ] = None,
    workspace: FoundOpt = None,
) -> None:
    """Serve a local web dashboard: browse, search, history, actions, graph, figures.

    Example:

        nxs ui --open
    """
    if not 0 <= port <= 65535:
        raise typer.BadParameter("a port is 0 to 65535", param_hint="--port")
    from nxs.ui.server import serve  # deferred: starlette and uvicorn load only here

    def announce(url: str) -> None:
        typer.echo(f"nxs ui: serving the dashboard at {url} (Ctrl-C stops it)")

    try:
        serve(workspace, host=host, port=port, token=token, open_browser=open_, announce=announce)
    except NxsError as err:
        raise fail(err, False) from None
    except KeyboardInterrupt:
        pass


@app.command()
def trust(
    workspace: Annotated[
        str | None, typer.Option("--workspace", help="Workspace root (default: found from here).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Confirm the team store this workspace's .nxs/config.toml names (URI and endpoint).

    A cloned repository's store settings would receive your cloud credentials, so nxs uses
    them only after this (kept in your config directory; a later change to them needs it
    again). Read memory.store and memory.storage_options in .nxs/config.toml first.

    Example:

        nxs trust
    """
    from nxs import trust as trusting
    from nxs.workspace import find

    try:
        ws = find(workspace)
        result = trusting.trust(ws.root, ws.section("memory"))
    except NxsError as err:
        raise fail(err, as_json) from None
    if as_json:
        emit(render(result))
    elif result["store"]:
        where = f" at {result['endpoint']}" if result["endpoint"] else ""
        typer.echo(f"trusted the store {result['store']}{where} for {result['workspace']}")
    else:
        typer.echo(f"{result['workspace']} names no team store: nothing to trust")


from nxs.clitool import register  # noqa: E402
from nxs.linear import cli as linear_cli  # noqa: E402
from nxs.mcp import cli as mcpcli  # noqa: E402  (sub-apps are light: heavy imports live in their commands)
from nxs.registry import operations  # noqa: E402

app.add_typer(mcpcli.app, name="mcp")
app.add_typer(linear_cli.app, name="linear")
register(app, [op for op in operations() if op.cli == "nxs"], groups={("linear",): linear_cli.app})
