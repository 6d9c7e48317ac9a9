"""`nxs linear connect …` (filled in by the Linear issue); the query/mutate verbs come from the table."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, help="Linear: connect organisations, read and write issues.")
