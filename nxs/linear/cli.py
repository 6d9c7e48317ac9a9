"""`nxs linear connect|disconnect|workspaces`; the query/mutate verbs come from the table.

Keys are read from stdin (a hidden prompt on a terminal) or from a named environment variable,
never from an argument (it would land in shell history and process lists), and never printed.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Annotated, Any

import typer

from nxs.clitool import JsonOpt, emit, fail
from nxs.errors import NxsError, ValidationError
from nxs.render import render

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
app = typer.Typer(
    no_args_is_help=True, help="Linear: connect organisations, read and write issues."
)


def _refuse_typed_key(extra: list[str], from_env: str | None) -> None:
    """A key typed as an argument is refused without being echoed (typer would print it)."""
    from nxs.linear.connections import looks_like_key

    if extra:
        raise ValidationError(
            f"connect takes one argument, the label, and got {len(extra)} more (not shown: "
            "one may be a key)",
            suggestion="pass the key on stdin (`pass show linear/av | nxs linear connect AV`) "
            "or name an environment variable with --from-env; revoke a key that reached "
            "your shell history",
            code="KEY_AS_ARGUMENT",
        )
    if from_env and (looks_like_key(from_env) or not ENV_NAME.match(from_env)):
        raise ValidationError(
            "--from-env takes the name of an environment variable (not shown: it may be a key)",
            suggestion="e.g. --from-env JL_LINEAR_KEY after `export JL_LINEAR_KEY=...`",
            code="KEY_AS_ARGUMENT" if looks_like_key(from_env) else "VALIDATION_ERROR",
        )


def _read_key(from_env: str | None) -> str:
    if from_env:
        value = os.environ.get(from_env, "")
        if not value.strip():
            raise ValidationError(
                f"environment variable {from_env} is empty or not set",
                suggestion=f"export {from_env}=... first, or pipe the key on stdin",
            )
        return value
    if sys.stdin is not None and sys.stdin.isatty():
        return typer.prompt("Linear API key", hide_input=True)
    return sys.stdin.read() if sys.stdin is not None else ""


def _check(label: str, key: str, oauth: bool, api_url: str | None) -> dict[str, Any]:
    from nxs.linear.client import LinearClient
    from nxs.linear.client import api_url as resolve_url
    from nxs.linear.connections import Connection, check_key
    from nxs.workspace import find

    conn = Connection(label=label, key=check_key(key), oauth=oauth, api_url=api_url)
    try:
        section = find().section("linear")
    except NxsError:
        section = {}
    with LinearClient(conn, resolve_url(conn, section)) as client:
        viewer = client.run("Viewer")["viewer"]
    org = viewer.get("organization") or {}
    return {"organization": org.get("name"), "url_key": org.get("urlKey"), "user": viewer["name"]}


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def connect(
    typer_ctx: typer.Context,
    label: Annotated[str, typer.Argument(help="Your name for this organisation, e.g. AV.")],
    from_env: Annotated[
        str | None, typer.Option("--from-env", help="Read the key from this environment variable.")
    ] = None,
    oauth: Annotated[
        bool, typer.Option("--oauth", help="The credential is an OAuth token (sent as Bearer).")
    ] = False,
    api_url: Annotated[
        str | None,
        typer.Option("--api-url", help="GraphQL endpoint for this organisation (a proxy)."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Ask Linear who the key belongs to before storing it.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Store a Linear key under LABEL (owner-only, in your config dir; never in `.nxs/`).

    The key is read from stdin (a hidden prompt on a terminal) or from --from-env VAR.

    A key typed as an argument is refused without being shown.

    Connecting a label again replaces its key. --api-url must be https (or http to loopback).

    Example:

        pass show linear/av | nxs linear connect AV --check
    """
    from nxs.linear import connections
    from nxs.linear.client import check_url

    try:
        _refuse_typed_key(typer_ctx.args, from_env)
        connections.check_label(label)
        if api_url is not None:
            api_url = check_url(api_url.strip(), "--api-url")
        key = _read_key(from_env)
        checked = _check(label, key, oauth, api_url) if check else None
        result = connections.connect(label, key, oauth=oauth, api_url=api_url)
    except NxsError as err:
        raise fail(err, as_json) from None
    if checked:
        result["verified"] = checked
    if as_json:
        emit(render(result))
        return
    kind = "OAuth token" if result["oauth"] else "API key"
    typer.echo(f"connected {result['connected']} ({kind}) in {result['stored_in']}")
    if checked:
        typer.echo(f"organisation: {checked['organization']} (as {checked['user']})")
    typer.echo(_serving_hint())


def _serving_hint() -> str:
    """Where `nxs mcp serve` will list the Linear tools now, or what makes it (docs/mcp.md)."""
    from nxs.workspace import find

    try:
        ws = find(None)
    except Exception:  # noqa: BLE001 - only a hint
        return (
            "MCP servers started in a workspace with the linear module now list linear_query "
            "and linear_mutate (restart them)"
        )
    if "linear" in ws.modules:
        return "restart your MCP host: its nxs server now lists linear_query and linear_mutate"
    return (
        f"to serve the Linear tools in {ws.root}, run `nxs init --module linear` there, then "
        "restart your MCP host"
    )


@app.command()
def disconnect(
    label: Annotated[str, typer.Argument(help="The label to forget (case-insensitive).")],
    as_json: JsonOpt = False,
) -> None:
    """Forget the key stored under LABEL (nothing changes in Linear).

    Example:

        nxs linear disconnect JL
    """
    from nxs.linear import connections

    try:
        result = connections.disconnect(label)
    except NxsError as err:
        raise fail(err, as_json) from None
    if as_json:
        emit(render(result))
    else:
        typer.echo(f"disconnected {result['disconnected']}")


@app.command()
def workspaces(as_json: JsonOpt = False) -> None:
    """List the connected organisations' labels (never their keys).

    Example:

        nxs linear workspaces --json
    """
    from nxs.linear import connections

    try:
        conns = connections.load()
    except NxsError as err:
        raise fail(err, as_json) from None
    result = {
        "workspaces": [c.label for c in conns],
        "total": len(conns),
        "from_environment": any(c.source == "env" for c in conns),
    }
    if as_json:
        emit(render(result))
    elif not conns:
        typer.echo("no Linear workspace connected; run `nxs linear connect LABEL`")
    else:
        for c in conns:
            typer.echo(c.label + ("  (LINEAR_API_KEY)" if c.source == "env" else ""))
