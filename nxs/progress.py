"""Progress of long work (an index built after a clone, an import, embedding) on stderr.

Code that works through many items either calls `report(label, done, total)` as it goes, or
opens `items(label, total)` and advances it as items are done; inner work that knows nothing of
the outer task (the embedder, batch by batch) calls `tick(n)`, which moves the innermost open
task between its advances, so a bar over 2,048-record commits still moves every 64 texts.
Each bar shows the count, the rate and the time left. Nothing is shown unless a CLI enabled it
(`enable`) and stderr is a terminal, so the MCP server, tests and piped output stay silent, and
stdout only ever holds the answer.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

_bars: dict[str, Any] = {}
_enabled = False
_open: list[list[Any]] = []  # the `items` tasks open now: [label, done, ticked, total]
_forward: list[Callable[[dict[str, Any]], None]] = []  # a warm server's CLI call: its client


def _forwarding() -> Callable[[dict[str, Any]], None] | None:
    """Where progress goes instead of a bar: the running CLI call's client, from any thread of
    the call (a server's main thread runs its event loop, never a call)."""
    if _forward and threading.current_thread() is not threading.main_thread():
        return _forward[-1]
    return None


def enable() -> None:
    """Show progress from now on, when stderr is a terminal."""
    global _enabled
    _enabled = sys.stderr.isatty()


def shown() -> bool:
    """True when progress is drawn (a CLI on a terminal)."""
    return _enabled


def _bar(label: str, total: int) -> Any:
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
    return progress, progress.add_task(label, total=total, rate=""), time.monotonic()


@contextlib.contextmanager
def forwarded(sink: Callable[[dict[str, Any]], None]) -> Iterator[None]:
    """Send progress to ``sink`` as frames meanwhile (a warm server running a CLI call, one at
    a time: its client draws the bars, `nxs.warm`)."""
    _forward.append(sink)
    try:
        yield
    finally:
        _forward.remove(sink)


def report(label: str, done: int, total: int) -> None:
    """``done`` of ``total`` items of ``label`` are done (the bar ends at ``total``)."""
    sink = _forwarding()
    if sink is not None:
        sink({"progress": [label, done, total]})
        return
    if not _enabled or total <= 0:
        return
    bar = _bars.get(label)
    if bar is None:
        bar = _bars[label] = _bar(label, total)
    progress, task, started = bar
    elapsed = time.monotonic() - started
    rate = f"{done / elapsed:,.0f}/s" if elapsed > 0.5 and done else ""
    progress.update(task, completed=min(done, total), total=total, rate=rate)
    if done >= total:
        close(label)


def close(label: str) -> None:
    """Take the bar of ``label`` off the terminal (done, or the work stopped)."""
    sink = _forwarding()
    if sink is not None:
        sink({"close": label})
        return
    bar = _bars.pop(label, None)
    if bar is not None:
        bar[0].stop()


@contextlib.contextmanager
def items(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A task of ``total`` items: yields ``advance(n)``, called as each ``n`` are done."""
    task = [label, 0, 0, total]
    _open.append(task)

    def advance(n: int) -> None:
        task[1], task[2] = task[1] + n, 0
        report(label, task[1], total)

    try:
        yield advance
    finally:
        _open.remove(task)
        close(label)


def tick(n: int) -> None:
    """``n`` more items of the innermost open task are under way (its next advance counts
    them as done); nothing when no task is open."""
    if not _open or not (_enabled or _forwarding()):
        return
    task = _open[-1]
    label, done, ticked, total = task
    task[2] = ticked + n
    report(label, min(done + task[2], max(total - 1, 0)), total)  # the advance ends the bar


__all__ = ["close", "enable", "items", "report", "shown", "tick"]
