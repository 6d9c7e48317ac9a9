"""Derived state kept current on every write: the entity graph's per-memory extraction.

`on_write` runs under the write lock after each commit (`MemoryService._write`), so the derived
file never lags the store by more than the write in progress. Knowledge is not stored: it is
computed from the records on read (docs/lifecycle.md has the measurement behind that choice).
A failure here must not undo a committed write, so it is reported on stderr, and reads extract
whatever the stored file lacks.
"""

from __future__ import annotations

import sys
from typing import Any


def on_write(
    service: Any,
    current: Any,
    changed: list[dict[str, Any]],
    deleted: list[str],
) -> None:
    """Called under the write lock after each commit, before NEXUS_MEMORY.md is rewritten."""
    from nxm import graph

    keys = [r["key"] for r in changed] + list(deleted)
    try:
        graph.refresh(service.ws, current, keys)
    except OSError as exc:  # the commit stands; reads re-extract what the file lacks
        print(f"nxs: could not update .nxs/{graph.GRAPH_FILE}: {exc}", file=sys.stderr)
