"""Progress of long work (an index built after a clone, an import, embedding) on stderr.

Code that works through many items calls `report(label, done, total)` as it goes; nothing is
shown unless a CLI enabled it (`enable`) and stderr is a terminal, so the MCP server, tests and
piped output stay silent, and stdout only ever holds the answer.
"""

from __future__ import annotations

import sys
import time
from typing import Any

_bars: dict[str, Any] = {}
_enabled = False


def enable() -> None:
    """Show progress from now on, when stderr is a terminal."""
    global _enabled
    _enabled = sys.stderr.isatty()


def report(label: str, done: int, total: int) -> None:
    """``done`` of ``total`` items of ``label`` are done (the bar ends at ``total``)."""
    if not _enabled or total <= 0:
        return
    bar = _bars.get(label)
    if bar is None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
            console=Console(stderr=True), transient=True,
        )  # fmt: skip
        progress.start()
        bar = _bars[label] = (
            progress,
            progress.add_task(label, total=total, rate=""),
            time.monotonic(),
        )
    progress, task, started = bar
    elapsed = time.monotonic() - started
    rate = f"{done / elapsed:,.0f}/s" if elapsed > 0.5 and done else ""
    progress.update(task, completed=done, total=total, rate=rate)
    if done >= total:
        progress.stop()
        del _bars[label]
