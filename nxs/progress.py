"""Progress of long work (an index built after a clone, an import, embedding) on stderr.

Inner work that knows nothing of the outer task (the embedder) calls `tick(n)`. Silent unless a
CLI called `enable` (the MCP server and tests stay quiet): a bar on a terminal, else a plain
line now and then, so an agent waiting on a first index sees why.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

QUIET_S = 2.0  # work shorter than this prints nothing when stderr is not a terminal
EVERY_S = 10.0

_bars: dict[str, Any] = {}
_mode: str | None = None  # None: silent; "bar": a terminal; "lines": anything else
_open: list[list[Any]] = []  # the `items` tasks open now: [label, done, ticked, total]


def enable() -> None:
    """Show progress from now on: bars on a terminal's stderr, plain lines elsewhere."""
    global _mode
    _mode = "bar" if sys.stderr.isatty() else "lines"


def shown() -> bool:
    """True when progress bars are drawn (a CLI on a terminal)."""
    return _mode == "bar"


def _bar(label: str, total: int) -> Any:
    from rich import progress as rp
    from rich.console import Console

    progress = rp.Progress(
        rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
        rp.TextColumn("{task.fields[rate]}"), rp.TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    )  # fmt: skip
    progress.start()
    return progress, progress.add_task(label, total=total, rate=""), time.monotonic()


def _line(label: str, done: int, total: int) -> None:
    """A plain progress line, once the task has run `QUIET_S`, then every `EVERY_S`."""
    now = time.monotonic()
    state = _bars.setdefault(label, [now, 0.0])  # [started, last printed]
    started, printed = state
    elapsed = now - started
    finished = done >= total
    if finished:
        _bars.pop(label, None)
    if elapsed < QUIET_S or (now - printed < EVERY_S if not finished else not printed):
        return
    state[1] = now
    rate = done / elapsed if elapsed > 0 else 0.0
    left = f", about {(total - done) / rate:.0f} s left" if rate and not finished else ""
    print(f"nxs: {label}: {done:,} of {total:,} ({rate:,.0f}/s{left})", file=sys.stderr, flush=True)


def report(label: str, done: int, total: int) -> None:
    """``done`` of ``total`` items of ``label`` are done (the bar ends at ``total``)."""
    if _mode is None or total <= 0:
        return
    if _mode == "lines":
        _line(label, done, total)
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
    bar = _bars.pop(label, None)
    if bar is not None and _mode == "bar":
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
    """``n`` more items of the innermost open task are under way (until its next advance)."""
    if not _open or _mode is None:
        return
    task = _open[-1]
    label, done, ticked, total = task
    task[2] = ticked + n
    report(label, min(done + task[2], max(total - 1, 0)), total)  # the advance ends the bar


__all__ = ["close", "enable", "items", "report", "shown", "tick"]
