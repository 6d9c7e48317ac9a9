"""Retrieval quality: a LoCoMo slice through the product's search beats plain BM25 on it.

The full benchmark is `python -m bench.bench_locomo` (docs/benchmarks.md); this runs one
conversation's first sessions with the test embedder, so it is quick and needs no model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import bench_locomo as bl
from nxm import rank
from nxm.record import new_record
from tests.conftest import make_workspace

SESSIONS = 4


def _slice() -> dict[str, Any]:
    try:
        conv = bl.load()[0]
    except FileNotFoundError:
        pytest.skip(f"{bl.DATA} is absent")
    c = conv["conversation"]
    kept = {k: v for k, v in c.items() if not k.startswith("session_")}
    for n in range(1, SESSIONS + 1):
        kept[f"session_{n}"] = c[f"session_{n}"]
        kept[f"session_{n}_date_time"] = c[f"session_{n}_date_time"]
    return {**conv, "conversation": kept}


def test_locomo_slice_beats_bm25(tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    conv = _slice()
    make_workspace(tmp_path / "ws")  # the hash embedder
    got = bl.product([conv], tmp_path / "ws", "hash")
    base = bl.bm25_baseline([conv])
    ours, theirs = got["metrics"]["overall"], base["overall"]
    assert ours["n"] == theirs["n"] > 30
    assert ours["recall_any@10"] > theirs["recall_any@10"]
    assert ours["mrr@10"] > theirs["mrr@10"]


def _rec(key: str, session: str | None, second: int) -> dict[str, Any]:
    at = f"2026-01-01T00:00:{second:02d}.000Z"
    return new_record(key=key, session_id=session, created=at)


def test_neighbours_are_the_same_session_in_time_order() -> None:
    records = {
        "a": _rec("a", "s1", 1),
        "c": _rec("c", "s1", 3),
        "b": _rec("b", "s1", 2),
        "d": _rec("d", "s1", 4),
        "x": _rec("x", "s2", 2),
        "y": _rec("y", None, 2),
    }
    near = rank.neighbours(records)
    assert near["a"] == [("b", 1), ("c", 2)]
    assert near["c"] == [("a", 2), ("b", 1), ("d", 1)]
    assert "x" not in near and "y" not in near  # alone in its session; no session


def test_context_lifts_a_neighbour_but_not_above_the_match() -> None:
    records = {k: _rec(k, "s", i) for i, k in enumerate("abc")}
    records["z"] = _rec("z", "other", 9)
    near = rank.neighbours(records)
    # "a" matches best; "b" (its neighbour) and "z" (unrelated) tie on their own scores
    kw = [("a", 3.0), ("b", 1.0), ("z", 1.0)]
    sem = [("a", 0.9), ("z", 0.5), ("b", 0.5)]
    got = rank.fuse(kw, sem, records, "hybrid", near)
    assert [k for k, _ in got] == ["a", "b", "z"]
    assert got[1][1]["context"] == pytest.approx(rank.SHARE * got[0][1]["score"], rel=0.3)
    assert "context" not in got[2][1]
    # keyword and semantic modes keep the list's own score
    assert rank.fuse(kw, [], records, "keyword", near)[0][1]["score"] == 3.0
