"""The `nxs` CLI's entry point. The Typer app (`nxs.cliapp`) is imported only when needed:
`nxs prime`, run at every session start, answers without it (`nxs.prime.fast_main`)."""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:2] == ["prime"]:
        from nxs.prime import fast_main  # at every session start: skip building every verb

        if fast_main(sys.argv[2:]):
            return
    from nxs.cliapp import app
    from nxs.clitool import main as run_app

    run_app(app, "nxs")


def __getattr__(name: str) -> Any:
    """`nxs.cli.app`: the Typer app, built on first use."""
    if name == "app":
        from nxs.cliapp import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
