"""Retrieval quality on project memory: an evaluation set of our own, and its harness.

    python -m bench.project_memory                    # real model, every system, both halves
    python -m bench.project_memory --json out.json    # also the figures and every ranked list
    python -m bench.project_memory --model hash       # the test embedder (no model needed)
    python -m bench.project_memory --floor "nxs hybrid=0.5"   # drop hits scoring below 0.5
    python -m bench.project_memory --data bench/project_memory/reversals   # the reversal set

The set (``data/``, described in docs/retrieval.md) is 319 memories of four invented teams
(``data/memories/*.jsonl``: a payments API, a hiking app, a data platform, an infra team) and
220 graded queries (``data/queries/*.jsonl``) of six kinds, each in the tuning or the held-out
half. Every memory is added through `MemoryService.add` with ``now`` its own created time, in
time order (with ``session_id`` for session notes, and ``supersedes`` when the service takes
it); memories with ``closed`` are then closed at that time. Every query is searched with
`MemoryService.search` (limit 10) in hybrid, semantic and keyword mode at `NOW`, after every
memory was written, and scored by `bench.project_memory.metrics`. The same run scores two
baselines over introduction + body: bm25s (English stop words, as bench/bench_locomo.py) and
the same embedding model alone (brute-force cosine).

Only `MemoryService`'s public methods and `nxs.workspace.init` are used, so the harness keeps
working whatever the store underneath.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
NOW = "2026-06-01T09:00:00.000Z"  # every search runs after the newest memory (2026-03)
HALVES = ("tune", "held")


def _jsonl(folder: Path) -> list[dict[str, Any]]:
    import orjson

    out = []
    for path in sorted(folder.glob("*.jsonl")):
        out.extend(orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip())
    return out


def memories(data: Path = DATA) -> list[dict[str, Any]]:
    """The memories: id, introduction, body, category, created; optional session, closed,
    supersedes (the id of the memory it replaces)."""
    return _jsonl(data / "memories")


def queries(data: Path = DATA) -> list[dict[str, Any]]:
    """The queries: id, kind, half, query, grades (memory id -> 0/1/2); optional distractors."""
    return _jsonl(data / "queries")
