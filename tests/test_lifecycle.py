"""Task layer, expiry, promotion and feedback; feedback changing the search order."""

from __future__ import annotations

import math

import pytest

from nxm.lifecycle import feedback, is_expired, live, promote
from nxm.ops.lifecycle import OPERATIONS
from nxm.record import new_record
from nxm.search import rank
from nxs.context import Context
from nxs.errors import ConflictError, NotFoundError, ValidationError
from nxs.ops import validate

NOW = "2026-05-29T10:00:00.000Z"


def _task(svc, body: str = "Keep both config readers until the tomllib branch lands.", **kw):
    return svc.add(
        body=body, introduction="Keep both config readers for now", layer="TASK", now=NOW,
        actor="t", **kw,
    )["memory"]  # fmt: skip


# -- expiry --------------------------------------------------------------------------------------


def test_expiry_boundary_is_inclusive() -> None:
    r = new_record(key="k", expires="2026-06-03T09:00:00.000Z")
    assert is_expired(r, "2026-06-03T08:59:59.999Z") is False
    assert is_expired(r, "2026-06-03T09:00:00.000Z") is True
    assert is_expired(r, "2026-06-03T09:00:00.001Z") is True


def test_expiry_compares_instants_not_spellings() -> None:
    r = new_record(key="k", expires="2026-06-03T11:00:00+02:00")  # 09:00Z
    assert is_expired(r, "2026-06-03T08:59:59.999Z") is False
    assert is_expired(r, "2026-06-03T09:00:00.000Z") is True
    assert is_expired(new_record(key="p"), "2999-01-01T00:00:00.000Z") is False


def test_live_keeps_open_unexpired_records() -> None:
    records = {
        "a": new_record(key="a"),
        "b": new_record(key="b", status="closed"),
        "c": new_record(key="c", layer="TASK", expires="2026-05-29T10:00:00.000Z"),
        "d": new_record(key="d", layer="TASK", expires="2026-05-29T10:00:00.001Z"),
    }
    assert [r["key"] for r in live(records, NOW)] == ["a", "d"]


def test_task_ttl_sets_expiry_and_expired_memories_leave_search_not_list(ctx: Context) -> None:
    svc = ctx.memory
    m = _task(svc, ttl_days=1)
    assert (m["layer"], m["expires"]) == ("TASK", "2026-05-30T10:00:00.000Z")
    before = svc.search(query="tomllib readers", mode="keyword", now="2026-05-30T09:59:59.999Z")
    after = svc.search(query="tomllib readers", mode="keyword", now="2026-05-30T10:00:00.000Z")
    assert [r["key"] for r in before["results"]] == [m["key"]]
    assert after["results"] == []
    assert [r["key"] for r in svc.list()["memories"]] == [m["key"]]  # stored, not deleted


# -- promote -------------------------------------------------------------------------------------


def test_promote_makes_a_task_memory_permanent(ctx: Context) -> None:
    svc = ctx.memory
    m = _task(svc, ttl_days=1)
    later = "2026-06-01T00:00:00.000Z"  # already expired: promotion brings it back
    out = promote(svc, key=m["key"][:6], now=later, actor="reviewer")
    assert (out["promoted"], out["layer"]) == (True, "PERMANENT")
    got = svc.show(key=m["key"])["memory"]
    assert (got["layer"], got["expires"], got["updated"], got["actor"]) == (
        "PERMANENT", None, later, "reviewer",
    )  # fmt: skip
    assert got["events"][-1] == {
        "type": "PROMOTED", "at": later, "actor": "reviewer",
        "data": {"from": "TASK", "to": "PERMANENT", "expires": "2026-05-30T10:00:00.000Z",
                 "expired": True},
    }  # fmt: skip
    found = svc.search(query="tomllib readers", mode="keyword", now=later)
    assert [r["key"] for r in found["results"]] == [m["key"]]


def test_promoting_a_permanent_memory_is_a_conflict_and_writes_nothing(ctx: Context) -> None:
    svc = ctx.memory
    m = svc.add(body="Tags come from main.", introduction="Tags from main", now=NOW, actor="t")
    with pytest.raises(ConflictError) as err:
        promote(svc, key=m["memory"]["key"], now=NOW, actor="t")
    assert err.value.code == "ALREADY_PERMANENT"
    assert len(svc.show(key=m["memory"]["key"])["memory"]["events"]) == 1
    with pytest.raises(NotFoundError):
        promote(svc, key="ffff0000", now=NOW, actor="t")


# -- feedback ------------------------------------------------------------------------------------


def test_feedback_counts_and_records_an_event_without_touching_the_memory(ctx: Context) -> None:
    svc = ctx.memory
    m = svc.add(body="Tags come from main.", introduction="Tags from main", now=NOW, actor="a")
    key = m["memory"]["key"]
    at = "2026-05-30T08:00:00.000Z"
    out = feedback(svc, key=key, signal="NEGATIVE", comment="  hotfix tags too ", now=at, actor="b")
    assert out == {
        "feedback": {"NEGATIVE": 1, "NEUTRAL": 0, "POSITIVE": 0}, "key": key, "recorded": True,
        "signal": "NEGATIVE",
    }  # fmt: skip
    feedback(svc, key=key, signal="NEGATIVE", comment="   ", now=at, actor="c")
    got = svc.show(key=key)["memory"]
    assert got["feedback"] == {"NEGATIVE": 2, "NEUTRAL": 0, "POSITIVE": 0}
    assert (got["updated"], got["actor"]) == (NOW, "a")  # a vote is not an edit
    history = svc.history(key=key, order="oldest")["events"]
    assert [e["type"] for e in history] == ["CREATED", "FEEDBACK_SUBMITTED", "FEEDBACK_SUBMITTED"]
    assert history[1]["data"] == {"signal": "NEGATIVE", "comment": "hotfix tags too"}
    assert history[2]["data"] == {"signal": "NEGATIVE"}


def test_feedback_signal_is_validated_by_the_operation() -> None:
    op = next(o for o in OPERATIONS if o.tool == "memory_feedback")
    assert validate(op, {"key": "ab", "signal": "positive"})["signal"] == "POSITIVE"
    with pytest.raises(ValidationError):
        validate(op, {"key": "ab", "signal": "LIKE"})


# -- ranking -------------------------------------------------------------------------------------


def test_feedback_factor_is_bounded_and_one_vote_matters() -> None:
    def factor(pos: int, neg: int) -> float:
        return rank.feedback_factor({"feedback": {"POSITIVE": pos, "NEGATIVE": neg}})

    assert factor(0, 0) == 1.0
    assert factor(1, 0) == pytest.approx(1 + 0.15 * math.tanh(0.5))  # 1.0693
    assert factor(0, 1) == pytest.approx(1 - 0.15 * math.tanh(0.5))  # 0.9307
    assert factor(3, 3) == 1.0
    assert 1.149 < factor(50, 0) <= 1.15 and 0.85 <= factor(0, 50) < 0.851
    assert rank.feedback_factor({}) == 1.0


def test_feedback_swaps_two_tied_results_in_fusion() -> None:
    # a is first in keyword and last in semantic, b the reverse: equal fused scores, key order
    kw, sem = [("a", 3.0), ("b", 1.0)], [("b", 0.9), ("a", 0.8)]
    records = {k: new_record(key=k) for k in "ab"}
    assert [k for k, _ in rank.fuse(kw, sem, records, "hybrid")] == ["a", "b"]
    records["a"]["feedback"]["NEGATIVE"] = 1
    got = rank.fuse(kw, sem, records, "hybrid")
    assert [k for k, _ in got] == ["b", "a"]
    assert got[1][1]["feedback"] == pytest.approx(1 - 0.15 * math.tanh(0.5))
    # min-max scaled per list, half weight each: a is 1 in keyword and 0 in semantic
    assert got[1][1]["score"] == pytest.approx(0.5 * got[1][1]["feedback"])
    records["a"]["feedback"]["NEGATIVE"] = 0
    records["b"]["feedback"]["POSITIVE"] = 1
    assert [k for k, _ in rank.fuse(kw, sem, records, "hybrid")] == ["b", "a"]


def test_negative_feedback_lowers_a_memory_in_search(ctx: Context) -> None:
    svc = ctx.memory
    a = svc.add(body="Widget alpha ships on Fridays.", introduction="Alpha", now=NOW, actor="t")
    b = svc.add(body="Widget bravo ships on Mondays.", introduction="Bravo", now=NOW, actor="t")
    first, second = sorted([a["memory"]["key"], b["memory"]["key"]])

    def order() -> list[str]:
        svc.store.compact()  # index every row (a rewritten row is unindexed until then)
        got = svc.search(query="widget ships", mode="keyword", now=NOW)
        assert got["results"][0]["keyword"] == got["results"][1]["keyword"]
        return [r["key"] for r in got["results"]]

    assert order() == [first, second]  # equal BM25 scores: key order
    feedback(svc, key=first, signal="NEGATIVE", now=NOW, actor="t")
    assert order() == [second, first]
    feedback(svc, key=second, signal="NEGATIVE", now=NOW, actor="t")
    feedback(svc, key=first, signal="POSITIVE", now=NOW, actor="t")
    feedback(svc, key=first, signal="POSITIVE", now=NOW, actor="t")
    assert order() == [first, second]
