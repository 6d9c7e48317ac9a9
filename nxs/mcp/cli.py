"""`nxs mcp serve`, `install` and `uninstall`: run the MCP server, (un)register it with a host."""

from __future__ import annotations

import contextlib
import os
from typing import Annotated, Any

import typer

from nxs.clitool import JsonOpt, emit, fail, guarded
from nxs.errors import NxsError, ValidationError
from nxs.render import render

app = typer.Typer(no_args_is_help=True, help="The MCP server: serve it, install it into a host.")


@app.command()
def serve(
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio, or http (streamable HTTP).")
    ] = "stdio",
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            help="Tool groups, comma-separated: core, session, knowledge, insights, linear, all "
            "(default: [mcp] tools in the workspace config, else core,session).",
        ),
    ] = None,
    actor: Annotated[
        str | None,
        typer.Option("--actor", help="Identity writes are recorded under (NXS_ACTOR, USER)."),
    ] = None,
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", "-w", help="Launch workspace (default: found from here)."),
    ] = None,
    instructions: Annotated[
        str,
        typer.Option(
            "--instructions",
            help="full: send the `nxs prime` text at initialize; hook: only a pointer, where a "
            "SessionStart hook delivers it (what `nxs mcp install --host claude-code` sets).",
        ),
    ] = "full",
    host: Annotated[str, typer.Option("--host", help="HTTP: address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: port to listen on.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="NXS_MCP_TOKEN",
            show_envvar=True,
            help="HTTP: require `Authorization: Bearer TOKEN` (needed beyond 127.0.0.1).",
        ),
    ] = None,
) -> None:
    """Serve the workspace's operations as MCP tools (stdio by default).

    Example:

        nxs mcp serve --tools core,session
    """
    import logging

    import anyio

    from nxs.mcp.http import check_http, serve_http
    from nxs.mcp.server import Seam, serve_stdio

    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("NXS_DEBUG") else logging.WARNING,
        format="nxs mcp: %(levelname)s %(name)s: %(message)s",
    )  # stderr: stdout belongs to the protocol
    try:
        if transport not in ("stdio", "http"):
            raise ValidationError(
                f"unknown transport {transport!r}", suggestion="use stdio or http"
            )
        if transport == "http":
            check_http(host, token)
        seam = Seam(workspace=workspace, actor=actor, groups=tools, instructions=instructions)
    except NxsError as err:
        raise fail(err, False) from None
    with contextlib.suppress(KeyboardInterrupt):
        try:
            if transport == "stdio":
                anyio.run(serve_stdio, seam)
            else:
                anyio.run(serve_http, seam, host, port, token)
        finally:
            seam.close()


HOST_HELP = "claude-desktop, claude-code, cursor, windsurf, vscode, codex, gemini or zed."
HostOpt = Annotated[str, typer.Option("--host", help=HOST_HELP, show_default=False)]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print what would change; write nothing.")
]


@app.command()
def install(
    host: HostOpt,
    scope: Annotated[
        str,
        typer.Option(
            "--scope", help="user (this machine, every project) or project (committed files)."
        ),
    ] = "user",
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", "-w", help="Workspace the server opens (default: found)."),
    ] = None,
    tools: Annotated[
        str | None,
        typer.Option("--tools", help="Tool groups to pass to `nxs mcp serve` (default: kept)."),
    ] = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Register `nxs mcp serve` in a host's MCP config (merging, with a backup).

    An existing entry keeps what you set (env, an earlier --tools, other options); the
    report says what changed. Project scope writes plain `nxs` (committed files must work on
    every machine); user scope writes this machine's absolute path.

    Example:

        nxs mcp install --host claude-code --scope project
    """
    from nxs.mcp.install import install as do_install

    _report(
        lambda: do_install(host, scope=scope, workspace=workspace, tools=tools, dry_run=dry_run),
        as_json,
        dry_run,
    )


@app.command()
def uninstall(
    host: HostOpt,
    scope: Annotated[
        str, typer.Option("--scope", help="user or project, as it was installed.")
    ] = "user",
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", "-w", help="Project whose files to edit (default: found)."),
    ] = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove the `nxs` server (and Claude Code's hook) from a host's config, with a backup.

    Example:

        nxs mcp uninstall --host cursor
    """
    from nxs.mcp.install import uninstall as do_uninstall

    _report(
        lambda: do_uninstall(host, scope=scope, workspace=workspace, dry_run=dry_run),
        as_json,
        dry_run,
    )


def _report(work: Any, as_json: bool, dry_run: bool) -> None:
    """Run an install or uninstall and print what it changed (or its refusal)."""
    result: dict[str, Any] = guarded(work, as_json)
    if as_json:
        emit(render(result))
        return
    verb = "would write" if dry_run else "wrote"
    for change in result["changes"]:
        typer.echo(f"{verb} {change['path']}: {change['summary']}")
        for detail in change.get("details") or []:
            typer.echo(f"  {detail}")
        if change.get("backup"):
            typer.echo(f"  previous file kept at {change['backup']}")
    if not result["changes"]:
        typer.echo(f"{result['host']}: nothing to change in {result['path']}")
    for hint in result.get("next", []):
        typer.echo(hint)
