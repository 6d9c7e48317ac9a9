"""Retrieval quality: a LoCoMo slice through the product's search beats plain BM25 on it.

The full benchmark is `python -m bench.bench_locomo` (docs/benchmarks.md); this runs one
conversation's first sessions with the test embedder, so it is quick and needs no model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import bench_locomo as bl
from nxm.record import new_record
from nxm.search import rank
from nxm.search.when import period
from tests.conftest import make_workspace

NOW = "2026-05-29T10:00:00.000Z"

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
    # "c", in neither list, is a candidate through its neighbour "a", above the unrelated "z"
    assert [k for k, _ in got] == ["a", "b", "c", "z"]
    assert got[1][1]["context"] == pytest.approx(rank.SHARE * got[0][1]["score"], rel=0.3)
    c = got[2][1]
    assert c["keyword"] is None and c["semantic"] is None and c["score"] == c["context"] > 0
    assert "context" not in got[3][1]
    # keyword and semantic modes keep the list's own score
    assert rank.fuse(kw, [], records, "keyword", near)[0][1]["score"] == 3.0


def test_session_context_shares_the_keyword_weight() -> None:
    records = {k: _rec(k, "s", i) for i, k in enumerate("ab")}
    kw = [("a", 2.0), ("b", 1.0)]
    sem = [("a", 0.5), ("b", 0.9)]
    records["y"] = _rec("y", None, 9)
    kw, sem = [*kw, ("y", 1.5)], [*sem, ("y", 0.7)]
    plain = dict(rank.fuse(kw, sem, records, "hybrid"))
    # the context of a memory without a session is its own text: the same list, the same scores
    same = dict(rank.fuse(kw, sem, records, "hybrid", context=kw))
    assert {k: v["score"] for k, v in same.items()} == pytest.approx(
        {k: v["score"] for k, v in plain.items()}
    )
    # "b" is read after a question that matches: its context lifts it above "a"
    assert "context_keyword" not in same["y"]  # reported only for a memory in a session
    got = rank.fuse(kw[:2], sem[:2], records, "hybrid", context=[("b", 5.0), ("a", 1.0)])
    assert [k for k, _ in got] == ["b", "a"]
    assert got[0][1]["context_keyword"] == 5.0 and got[0][1]["keyword"] == 1.0
    own, ctx, semantic = rank.WEIGHTS
    assert got[0][1]["score"] == pytest.approx(ctx + semantic)
    # keyword mode ignores the context list
    keyword = rank.fuse(kw, [], records, "keyword", context=[("b", 5.0)])
    assert [k for k, _ in keyword] == ["a", "y", "b"]


def test_scores_count_by_how_far_they_stand_out() -> None:
    records = {k: _rec(k, None, i) for i, k in enumerate("abcdefgh")}
    # one clear keyword match among weak ones; similarities all near the collection's mean
    kw = [("a", 9.0), ("b", 1.2), ("c", 1.1), ("d", 1.0), ("e", 1.0), ("f", 0.9)]
    sem = [("b", 0.52), ("c", 0.51), ("a", 0.50)]
    got = dict(rank.fuse(kw, sem, records, "hybrid", spread=(0.5, 0.1)))
    z_a = rank.standardize(kw)["a"]
    assert z_a > 2 and got["a"]["score"] == pytest.approx(rank.ALPHA * z_a)  # cos at the mean: 0
    assert got["b"]["score"] == pytest.approx((1 - rank.ALPHA) * 0.2)  # BM25 below its mean: 0
    assert [k for k, _ in rank.fuse(kw, sem, records, "hybrid", spread=(0.5, 0.1))][0] == "a"
    # all hits set the mean; only the first `pool` are candidates
    short = dict(rank.fuse(kw, [], records, "hybrid", pool=2))
    assert set(short) == {"a", "b"} and short["a"]["score"] == pytest.approx(rank.ALPHA * z_a)
    # scores that do not spread all count alike
    assert rank.standardize([("x", 1.0), ("y", 1.0)]) == {"x": 1.0, "y": 1.0}
    assert rank.standardize([("x", 0.7)], (0.7, 0.0)) == {"x": 1.0}


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("What movie did Joanna watch on 1 May, 2022?", ("2022-05-01", "2022-05-02")),
        ("how did it go on October 25, 2022", ("2022-10-25", "2022-10-26")),
        ("the release of the 4th of July 2023", ("2023-07-04", "2023-07-05")),
        ("deploy 2023-11-16 rollback", ("2023-11-16", "2023-11-17")),
        ("what did we decide in December 2023?", ("2023-12-01", "2024-01-01")),
        ("which cities did Dave visit in 2023", ("2023-01-01", "2024-01-01")),
        ("what broke last week", ("2026-11-23", "2026-11-30")),  # now is Monday 30 November
        ("anything from yesterday", ("2026-11-29", "2026-11-30")),
        ("what changed last month", ("2026-10-01", "2026-11-01")),
        ("errors in January", None),  # which January: no period
        ("on 31 February 2023", None),  # no such day
        ("ticket 2023 and PAY-2024", None),  # numbers, not a time
    ],
)
def test_period_is_the_time_a_query_names(query: str, want: tuple[str, str] | None) -> None:
    assert period(query, "2026-11-30T09:00:00.000Z") == want


def test_a_named_period_lifts_what_was_written_then() -> None:
    records = {k: _rec(k, None, i) for i, k in enumerate("ab")}
    records["b"]["created"] = "2023-05-08T12:00:00.000Z"
    kw, sem = [("a", 3.0), ("b", 2.0)], [("a", 0.6), ("b", 0.5)]
    plain = rank.fuse(kw, sem, records, "hybrid")
    assert [k for k, _ in plain] == ["a", "b"] and "period" not in plain[1][1]
    got = dict(rank.fuse(kw, sem, records, "hybrid", period=("2023-05-08", "2023-05-09")))
    assert got["b"]["period"] == pytest.approx(rank.PERIOD_LIFT * plain[0][1]["score"])
    assert got["b"]["score"] == pytest.approx(plain[1][1]["score"] + got["b"]["period"])
    assert "period" not in got["a"]
    # keyword and semantic modes rank by their own score alone
    keyword = rank.fuse(kw, [], records, "keyword", period=("2023-05-08", "2023-05-09"))
    assert keyword[1][1] == {"score": 2.0, "keyword": 2.0, "semantic": None, "feedback": 1.0}


def _stored_context(svc: Any) -> dict[str, str]:
    svc.refresh()
    table = svc.store.index.table()
    table.checkout_latest()
    got = table.search().select(["key", "context"]).limit(None).to_arrow().to_pylist()
    return {r["key"]: r["context"] for r in got}


def _say(svc: Any, body: str, second: int, session: str | None = "chat") -> str:
    now = f"2026-01-01T00:00:{second:02d}.000Z"
    out = svc.add(body=body, introduction=body[:40], now=now, actor="t", session_id=session)
    return out["memory"]["key"]


def test_the_store_keeps_each_memory_s_session_context(ctx: Any) -> None:
    from nxm.record import contexts, indexed_text

    svc = ctx.memory
    a = _say(svc, "Where did you buy the snake?", 1)
    b = _say(svc, "In Paris, a year ago.", 3)
    c = _say(svc, "Does it bite?", 4)
    d = _say(svc, "Never once.", 5)
    lone = _say(svc, "The release branch is cut on Mondays.", 6, session=None)
    stored = _stored_context(svc)
    records = svc.store.records()
    assert stored == contexts(records, list(records))
    assert stored[lone] == indexed_text(records[lone])  # no session: its own text
    assert stored[d] == "\n".join(
        [indexed_text(records[d]), "Does it bite?", "In Paris, a year ago."]
    )
    # the reply is found by the words of the question before it
    hits = svc.search(query="snake", mode="hybrid", limit=5, now=NOW)["results"]
    assert b in [h["key"] for h in hits[:2]]
    assert next(h for h in hits if h["key"] == b)["context_keyword"] > 0
    # a memory said in between, a forgotten one and a purged one: the followers are rewritten
    m = _say(svc, "Which shop?", 2)
    assert _stored_context(svc)[b].endswith("Which shop?\nWhere did you buy the snake?")
    svc.forget(key=m, now=NOW, actor="t")
    svc.forget(key=c, now=NOW, actor="t")
    records = svc.store.records()
    assert _stored_context(svc) == contexts(records, list(records))
    assert "Does it bite?" not in _stored_context(svc)[d]
    svc.purge(key=m, now=NOW, actor="t")
    records = svc.store.records()
    assert _stored_context(svc) == contexts(records, list(records))
    assert a in records and m not in records


def test_an_index_of_another_layout_is_made_again(ctx: Any) -> None:
    svc = ctx.memory
    a = _say(svc, "Where did you buy the snake?", 1)
    b = _say(svc, "In Paris, a year ago.", 2)
    lone = _say(svc, "The release branch is cut on Mondays.", 3, session=None)
    svc.refresh()
    table = svc.store.index.table()
    for index in table.list_indices():
        if index.columns == ["context"]:
            table.drop_index(index.name)
    table.drop_columns(["context"])  # as an index made before session context was
    fresh = type(svc)(svc.ws)  # another process, opening it
    hits = fresh.search(query="snake", mode="hybrid", limit=5, now=NOW)["results"]
    assert a in [h["key"] for h in hits]
    _say(fresh, "Do you like it?", 4)
    stored = _stored_context(fresh)
    assert stored[b].endswith("Where did you buy the snake?")
    assert stored[lone].startswith("The release branch is cut on Mondays.")
    hits = fresh.search(query="snake", mode="hybrid", limit=5, now=NOW)["results"]
    assert next(h for h in hits if h["key"] == b)["context_keyword"] > 0


def test_searches_from_many_threads_at_once_all_finish(ctx: Any) -> None:
    import threading

    svc = ctx.memory
    for i in range(6):
        _say(svc, f"turn {i} about the snake bought in Paris", i + 1)
    got: list[int] = []

    def search() -> None:
        got.append(len(svc.search(query="snake", mode="hybrid", limit=3, now=NOW)["results"]))

    threads = [threading.Thread(target=search, daemon=True) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert got == [3] * 6  # none is left waiting on the shared background threads


def test_a_search_naming_a_day_lifts_what_was_written_that_day(ctx: Any) -> None:
    svc = ctx.memory
    said = {}
    for n, day in enumerate(("2026-03-02", "2026-03-09", "2026-03-16")):
        body = f"Deploy {n} was rolled back because the migration locked the ledger table."
        out = svc.add(body=body, introduction=f"Rollback {day}", now=f"{day}T10:00:00.000Z",
                      actor="t", category="gotchas")  # fmt: skip
        said[day] = out["memory"]["key"]
    assert len(set(said.values())) == 3
    svc.store._snapshot = None  # read back from the read cache, as a fresh process would
    got = svc.search(query="why was the deploy rolled back on 9 March 2026?", limit=3, now=NOW)
    lifted = [r for r in got["results"] if "period" in r]
    assert [r["key"] for r in lifted] == [said["2026-03-09"]]  # read from the whole record
    best = max(r["score"] - r.get("period", 0.0) for r in got["results"])
    assert lifted[0]["period"] == pytest.approx(rank.PERIOD_LIFT * best)
    plain = svc.search(query="why was the deploy rolled back?", limit=3, now=NOW)["results"]
    assert not any("period" in r for r in plain)


def test_session_neighbours_brought_in_still_pass_the_filters(
    ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the filters, not the relevance floor, are what this checks: every hit clears the floor
    monkeypatch.setattr(rank, "relevant", lambda *_: True)
    svc = ctx.memory
    a = _say(svc, "Where did you buy the snake?", 1)
    b = _say(svc, "In Paris, a year ago.", 2)
    c = _say(svc, "Was it expensive there?", 3)
    svc.forget(key=b, now=NOW, actor="t")
    svc.close(key=c, now=NOW, actor="t")
    hits = [h["key"] for h in svc.search(query="snake", limit=5, now=NOW)["results"]]
    assert a in hits and b not in hits and c not in hits  # open only: neither lends its way in
    everything = svc.search(query="snake", limit=5, now=NOW, status="all")["results"]
    assert {b, c} <= {h["key"] for h in everything}  # brought in when the filters allow them
    closed = [
        h["key"] for h in svc.search(query="snake", limit=5, now=NOW, status="closed")["results"]
    ]
    assert a not in closed and b not in closed
