"""`nxs mcp …` and `nxs prime` (filled in by the MCP issue)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, help="The MCP server: serve it, install it into a host.")
