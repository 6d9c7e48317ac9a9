"""Dashboard figures, user profiles, and the users and agents list."""

from __future__ import annotations

from pathlib import Path

import pytest

from nxm.insights import entities, log_search, profile, stats
from nxm.record import event, new_record
from nxm.store.local import Local
from nxs.context import Context
from nxs.errors import NotFoundError
from nxs.workspace import Workspace

NOW = "2026-05-29T10:00:00.000Z"


def rec(key: str, created: str, *events: dict, **kw) -> dict:
    r = new_record(key=key, body=kw.pop("body", "x" * 10), introduction=kw.pop("intro", key),
                   created=created, updated=kw.pop("updated", created), **kw)  # fmt: skip
    r["events"] = [event("CREATED", created, "t"), *events]
    return r


def test_windows_count_events_searches_and_estimated_tokens(tmp_path: Path) -> None:
    ws = Workspace(root=tmp_path)
    records = {
        # created exactly at the window's start: belongs to the previous window
        "a": rec("a", "2026-04-29T10:00:00.000Z", body="y" * 9),
        "b": rec(
            "b",
            "2026-05-10T00:00:00.000Z",
            event("UPDATED", "2026-05-11T00:00:00.000Z", "t"),
            event("FEEDBACK_SUBMITTED", "2026-05-12T00:00:00.000Z", "t", signal="NEGATIVE"),
            event("CLOSED", NOW, "t"),  # at the window's end: inside
            body="z" * 7,
            status="closed",
        ),  # fmt: skip
        "c": rec("c", "2026-05-29T10:00:00.001Z"),  # after now: in no window
    }
    for at in ("2026-05-28T00:00:00.000Z", "2026-04-01T00:00:00.000Z", "2026-05-29T10:00:00Z"):
        log_search(ws, at, "hybrid")
    with Local(ws.root).usage.open("ab") as fh:
        # a hand-edited line (a time that is not one) and a torn last line are skipped
        fh.write(b'{"op": "search", "at": 5}\n{"op": "search"}\n{"at": "2026-05-28T0')
    got = stats(ws, records, now=NOW, days=30)
    assert (got["from"], got["to"], got["days"]) == ("2026-04-29T10:00:00.000Z", NOW, 30)
    assert got["memories"] == {
        "classified": 0, "closed": 1, "created": 1, "forgotten": 0, "imported": 0,
        "promoted": 0, "reopened": 0, "restored": 0, "reverted": 0, "updated": 1,
    }  # fmt: skip
    assert got["feedback"] == {"NEGATIVE": 1, "NEUTRAL": 0, "POSITIVE": 0}
    assert (got["searches"], got["tokens"]) == (2, 2)  # ceil(7 / 4)
    prev = got["comparisonPeriod"]
    assert (prev["from"], prev["to"]) == ("2026-03-30T10:00:00.000Z", "2026-04-29T10:00:00.000Z")
    assert (prev["memories"]["created"], prev["searches"], prev["tokens"]) == (1, 1, 3)
    assert got["totalMemories"] == 2
    assert got["totals"] == {"closed": 1, "expired": 0, "forgotten": 0, "open": 2, "stored": 3}
    assert "estimate" in got["methods"]["tokens"]


def test_search_logs_one_line_per_search(ctx: Context) -> None:
    svc = ctx.memory
    svc.add(body="Tags come from main.", introduction="Tags from main", now=NOW, actor="t")
    svc.search(query="tags", mode="keyword", now=NOW)
    svc.search(query="main", mode="keyword", now=NOW)
    lines = Local(svc.ws.root).usage.read_bytes().splitlines()
    assert lines == [b'{"at":"2026-05-29T10:00:00.000Z","mode":"keyword","op":"search"}'] * 2
    assert stats(svc.ws, svc.store.records(), now=NOW, days=1)["searches"] == 2


def test_profile_summary_topics_and_entity_count() -> None:
    records = {
        "a": rec("a", "2026-05-01T00:00:00.000Z", user_id="u1", priority="HIGH",
                 intro="Deploys go through Fly.io", body="Deploys go through Fly.io and staging."),
        "b": rec("b", "2026-05-02T00:00:00.000Z", user_id="u1", category="gotchas",
                 intro="Staging resets on Sunday.", body="Staging resets on Sunday night."),
        "c": rec("c", "2026-05-03T00:00:00.000Z", user_id="u1", status="forgotten"),
        "d": rec("d", "2026-05-04T00:00:00.000Z", user_id="u2"),
    }  # fmt: skip
    graph_entities = [
        {"name": "Fly.io", "userIds": ["u1"], "sourceMemoryIds": ["a"]},
        {"name": "Other", "userIds": ["u2"], "sourceMemoryIds": ["d"]},
    ]
    got = profile(records, graph_entities, user="u1", now=NOW)
    assert got["summary"] == "Deploys go through Fly.io. Staging resets on Sunday."
    # entities of their memories first, then words in two or more memories ("staging")
    assert got["topics"] == ["fly.io", "staging"]
    assert (got["memoryCount"], got["entityCount"]) == (2, 1)
    assert got["categories"] == {"general": 1, "gotchas": 1}
    assert got["lastActivityAt"] == "2026-05-03T00:00:00.000Z"  # forgotten ones count as activity
    with pytest.raises(NotFoundError) as err:
        profile(records, graph_entities, user="nobody", now=NOW)
    assert err.value.code == "USER_NOT_FOUND"


def test_entities_lists_users_then_agents() -> None:
    records = {
        "a": rec("a", "2026-05-01T00:00:00.000Z", user_id="zoe", agent_id="cursor"),
        "b": rec("b", "2026-05-03T00:00:00.000Z", user_id="amy", agent_id="cursor",
                 status="closed"),
        "c": rec("c", "2026-05-02T00:00:00.000Z", agent_id="claude-code", layer="TASK",
                 expires="2026-05-20T00:00:00.000Z"),
    }  # fmt: skip
    got = entities(records, now=NOW)
    assert got == {
        "entities": [
            {"kind": "user", "userId": "amy", "memoryCount": 0, "storedCount": 1,
             "lastActivityAt": "2026-05-03T00:00:00.000Z"},
            {"kind": "user", "userId": "zoe", "memoryCount": 1, "storedCount": 1,
             "lastActivityAt": "2026-05-01T00:00:00.000Z"},
            {"kind": "agent", "agentId": "claude-code", "memoryCount": 0, "storedCount": 1,
             "lastActivityAt": "2026-05-02T00:00:00.000Z"},
            {"kind": "agent", "agentId": "cursor", "memoryCount": 1, "storedCount": 2,
             "lastActivityAt": "2026-05-03T00:00:00.000Z"},
        ],
        "total": 4,
    }  # fmt: skip
