"""Safe edits: update changes only what is given, each edit keeps what it replaced, revert puts
it back (and a refused revert writes nothing)."""

from __future__ import annotations

import orjson
import pytest
from conftest import committed

from nxm.lifecycle import revert
from nxs.context import Context
from nxs.errors import ConflictError, NotFoundError, ValidationError

NOW = "2026-05-29T10:00:00.000Z"
LATER = "2026-05-30T10:00:00.000Z"
BODY = "Release tags are cut from main only; CI refuses tags on other branches."


def _add(svc, body: str = BODY) -> dict:
    return svc.add(
        body=body, introduction="Release tags come from main only", category="conventions",
        now=NOW, actor="t",
    )["memory"]  # fmt: skip


def _log(root, key: str) -> list[dict]:
    raw = (root / ".nxs" / "history" / f"{key}.jsonl").read_bytes()
    return [orjson.loads(line) for line in raw.splitlines()]


def test_update_body_only_keeps_introduction_and_records_before(ctx: Context, workspace) -> None:
    svc = ctx.memory
    m = _add(svc)
    out = svc.update(
        key=m["key"][:6], body="Tags come from main or hotfix/*.", now=LATER, actor="u"
    )
    assert out["memory"]["introduction"] == "Release tags come from main only"
    assert out["memory"]["body"] == "Tags come from main or hotfix/*."
    last = _log(workspace, m["key"])[-1]
    assert last["type"] == "UPDATED"
    assert last["data"] == {"before": {"body": BODY}, "fields": ["body"]}


def test_update_priority_only(ctx: Context) -> None:
    svc = ctx.memory
    m = _add(svc)
    out = svc.update(key=m["key"], priority="HIGH", now=LATER, actor="u")["memory"]
    assert (out["priority"], out["body"], out["introduction"]) == (
        "HIGH", BODY, "Release tags come from main only",
    )  # fmt: skip


def test_update_with_nothing_given_is_refused_and_writes_nothing(ctx: Context, workspace) -> None:
    m = _add(ctx.memory)
    before = committed(workspace)
    with pytest.raises(ValidationError, match="needs a body, an introduction or a priority"):
        ctx.memory.update(key=m["key"], now=LATER, actor="u")
    assert committed(workspace) == before


def test_classify_records_the_values_it_replaced(ctx: Context, workspace) -> None:
    m = _add(ctx.memory)
    ctx.memory.classify(key=m["key"], scope="item", refs=["ENG-1"], now=LATER, actor="u")
    data = _log(workspace, m["key"])[-1]["data"]
    assert data == {"before": {"refs": [], "scope": "project"}, "fields": ["refs", "scope"]}


def test_revert_undoes_the_latest_edit_and_is_itself_revertible(ctx: Context, workspace) -> None:
    svc = ctx.memory
    m = _add(svc)
    svc.update(key=m["key"], body="Tags from anywhere.", introduction="Tags anywhere", now=LATER,
               actor="u")  # fmt: skip
    svc.update(key=m["key"], priority="LOW", now=LATER, actor="u")
    got = revert(svc, key=m["key"], now=LATER, actor="r")["memory"]
    assert (got["priority"], got["body"]) == ("MEDIUM", "Tags from anywhere.")
    got = revert(svc, key=m["key"], now=LATER, actor="r")["memory"]  # undoes the revert
    assert got["priority"] == "LOW"
    events = _log(workspace, m["key"])
    assert [e["type"] for e in events] == ["CREATED", "UPDATED", "UPDATED", "REVERTED", "REVERTED"]
    assert events[3]["data"] == {"before": {"priority": "LOW"}, "fields": ["priority"], "to": 2}


def test_revert_to_an_event_restores_body_and_classification(ctx: Context) -> None:
    svc = ctx.memory
    m = _add(svc)
    svc.update(key=m["key"], body="Tags from anywhere.", now=LATER, actor="u")
    svc.classify(key=m["key"], category="wrong", refs=["X-1"], now=LATER, actor="u")
    svc.close(key=m["key"], now=LATER, actor="u")  # status is not content: revert leaves it
    got = revert(svc, key=m["key"], to=1, now=LATER, actor="r")["memory"]
    assert (got["body"], got["category"], got["refs"], got["status"]) == (
        BODY, "conventions", [], "closed",
    )  # fmt: skip
    # the restored body is what keyword search finds again
    svc.reopen(key=m["key"], now=LATER, actor="r")
    hits = svc.search(query="CI refuses tags", mode="keyword", now=LATER)["results"]
    assert [h["key"] for h in hits] == [m["key"]]


@pytest.mark.parametrize(
    ("to", "error", "match"),
    [
        (None, ConflictError, "has no edit to revert"),
        (9, NotFoundError, "there is no event 9"),
        (1, ValidationError, "already as it was after event 1"),
    ],
)
def test_refused_revert_writes_nothing(ctx: Context, workspace, to, error, match) -> None:
    m = _add(ctx.memory)
    before = committed(workspace)
    with pytest.raises(error, match=match):
        revert(ctx.memory, key=m["key"], to=to, now=LATER, actor="r")
    assert committed(workspace) == before


def test_revert_refuses_an_edit_that_kept_no_previous_values(ctx: Context, workspace) -> None:
    m = _add(ctx.memory)
    ctx.memory.update(key=m["key"], priority="HIGH", now=LATER, actor="u")
    path = workspace / ".nxs" / "history" / f"{m['key']}.jsonl"
    lines = path.read_bytes().splitlines()
    old = orjson.loads(lines[-1])
    del old["data"]["before"]  # what an edit of an older release wrote
    path.write_bytes(b"\n".join([*lines[:-1], orjson.dumps(old)]) + b"\n")
    before = committed(workspace)
    with pytest.raises(ConflictError, match="did not keep the values it replaced") as err:
        revert(ctx.memory, key=m["key"], now=LATER, actor="r")
    assert err.value.code == "NOT_REVERTIBLE"
    assert committed(workspace) == before


def test_revert_refuses_a_body_another_memory_has(ctx: Context, workspace) -> None:
    svc = ctx.memory
    m = _add(svc)
    svc.update(key=m["key"], body="Tags from anywhere.", now=LATER, actor="u")
    _add(svc, BODY)  # the old body is a new memory now
    before = committed(workspace)
    with pytest.raises(ConflictError, match="already has the body"):
        revert(svc, key=m["key"], now=LATER, actor="r")
    assert committed(workspace) == before
