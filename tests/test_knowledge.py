"""Consolidated knowledge: grouping, near-duplicate merging, order, ids, and staying current."""

from __future__ import annotations

import pytest

from nxm.knowledge import THRESHOLD, entries, entry_id, jaccard, knowledge, title, words
from nxm.record import new_record
from nxs.context import Context
from nxs.errors import NotFoundError

NOW = "2026-05-29T10:00:00.000Z"


def rec(key: str, body: str, **kw) -> dict:
    kw.setdefault("updated", "2026-05-01T00:00:00.000Z")
    kw.setdefault("created", kw["updated"])
    return new_record(key=key, body=body, introduction=body.split(".")[0], **kw)


def test_words_and_jaccard() -> None:
    assert words("The CI runs ruff, then pytest -q.") == frozenset({"ci", "runs", "ruff", "pytest"})
    assert jaccard(frozenset("abc"), frozenset("abd")) == 0.5
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_near_duplicates_merge_at_the_threshold_and_not_below() -> None:
    assert THRESHOLD == 0.6
    # 3 of 5 words shared: 3 / 5 = 0.6 -> merged
    same = {
        "k1": rec("k1", "alpha bravo charlie delta", category="c"),
        "k2": rec(
            "k2", "alpha bravo charlie echo", category="c", updated="2026-05-02T00:00:00.000Z"
        ),
    }
    got = entries(same, NOW)
    assert [e["sourceMemoryIds"] for e in got] == [["k2", "k1"]]  # newest is the representative
    assert got[0]["content"] == "alpha bravo charlie echo"
    assert got[0]["id"] == entry_id("c", ["k1", "k2"])
    # 3 of 6 words shared: 0.5 -> kept apart
    apart = {
        "k1": rec("k1", "alpha bravo charlie delta", category="c"),
        "k3": rec("k3", "alpha bravo charlie foxtrot golf", category="c"),
    }
    assert [e["sourceMemoryIds"] for e in entries(apart, NOW)] == [["k1"], ["k3"]]


def test_grouped_by_category_ordered_by_priority_then_recency() -> None:
    records = {
        "a": rec("a", "Use ruff for linting.", category="conventions", priority="LOW"),
        "b": rec("b", "Tags come from main.", category="conventions", priority="HIGH"),
        "c": rec("c", "Postgres was chosen for orders.", category="decisions"),
        "d": rec("d", "Snapshots reset on Sunday.", category="conventions",
                 updated="2026-05-20T00:00:00.000Z"),
        "e": rec("e", "Lunch is at noon."),
    }  # fmt: skip
    got = entries(records, NOW)
    assert [(e["category"], e["sourceMemoryIds"]) for e in got] == [
        ("conventions", ["b"]), ("conventions", ["d"]), ("conventions", ["a"]),
        ("decisions", ["c"]), ("general", ["e"]),
    ]  # fmt: skip
    assert [e["id"] for e in entries(records, NOW, category="decisions")] == [
        entry_id("decisions", ["c"])
    ]


def test_only_open_unexpired_memories_and_user_filter() -> None:
    records = {
        "a": rec("a", "Open one.", user_id="u1"),
        "b": rec("b", "Closed one.", status="closed", user_id="u1"),
        "c": rec("c", "Forgotten one.", status="forgotten", user_id="u1"),
        "d": rec("d", "Expired task.", layer="TASK", expires=NOW, user_id="u1"),
        "e": rec("e", "Live task.", layer="TASK", expires="2026-06-01T00:00:00.000Z", user_id="u2"),
    }
    assert [e["sourceMemoryIds"] for e in entries(records, NOW)] == [["a"], ["e"]]
    assert [e["sourceMemoryIds"] for e in entries(records, NOW, user_id="u2")] == [["e"]]


def test_merged_document_and_entry_lookup() -> None:
    records = {
        "a": rec("a", "Use ruff for linting.\nFormat with ruff format.", category="tech-stack"),
        "b": rec("b", "Prefers short answers.", category="preferences", user_id="u1"),
    }
    got = knowledge(records, now=NOW)
    assert got["content"] == (
        "## Preferences\n\n- Prefers short answers. _(memories: `b`)_\n"
        "\n## Tech Stack\n\n- Use ruff for linting.\n  Format with ruff format. _(memories: `a`)_\n"
    )
    assert got["entries"] == [
        {"category": "preferences", "id": entry_id("preferences", ["b"])},
        {"category": "tech-stack", "id": entry_id("tech-stack", ["a"])},
    ]
    assert (got["total"], got["memories"], got["mergedAt"]) == (2, 2, "2026-05-01T00:00:00.000Z")
    one = knowledge(records, now=NOW, entry=entry_id("preferences", ["b"]))["entry"]
    assert one == {
        "id": entry_id("preferences", ["b"]), "category": "preferences",
        "content": "Prefers short answers.", "introduction": "Prefers short answers",
        "priority": "MEDIUM", "sourceMemoryIds": ["b"], "userIds": ["u1"],
        "createdAt": "2026-05-01T00:00:00.000Z", "updatedAt": "2026-05-01T00:00:00.000Z",
    }  # fmt: skip
    with pytest.raises(NotFoundError) as err:
        knowledge(records, now=NOW, entry="kn-000000000000")
    assert err.value.code == "ENTRY_NOT_FOUND"
    assert knowledge({}, now=NOW) == {
        "categories": [], "content": "", "entries": [], "memories": 0, "mergedAt": None, "total": 0,
    }  # fmt: skip


def test_long_bodies_are_cut_at_a_sentence_end() -> None:
    body = ("This sentence is about forty characters. " * 40).strip()
    content = entries({"a": rec("a", body)}, NOW)[0]["content"]
    assert content.endswith(". …") and len(content) <= 1202


def test_title() -> None:
    assert [title(c) for c in ("tech-stack", "gotchas", "user_facts")] == [
        "Tech Stack", "Gotchas", "User Facts",
    ]  # fmt: skip


def test_knowledge_follows_updates_and_forgets(ctx: Context) -> None:
    svc = ctx.memory
    a = svc.add(
        body="Release tags are cut from main only; CI refuses tags on other branches.",
        introduction="Release tags come from main", category="conventions", now=NOW, actor="t",
    )["memory"]["key"]  # fmt: skip
    b = svc.add(
        body="Release tags are cut from main only; CI refuses tags made on other branches.",
        introduction="Release tags come from main only", category="conventions", now=NOW,
        actor="t",
    )["memory"]["key"]  # fmt: skip

    def current() -> list[dict]:
        return knowledge(svc.store.records(), now=NOW, merged=False)["entries"]

    assert [e["sourceMemoryIds"] for e in current()] == [sorted([a, b])]  # near-duplicates
    svc.update(key=a, body="Release tags are cut by the release bot from main or hotfix/*.",
               introduction="Release tags come from main or hotfix/*", now=NOW, actor="t")  # fmt: skip
    after = current()
    assert [e["sourceMemoryIds"] for e in after] == [[k] for k in sorted([a, b])]  # same time: key
    mine = next(e for e in after if e["sourceMemoryIds"] == [a])
    assert mine["content"] == "Release tags are cut by the release bot from main or hotfix/*."
    assert mine["id"] == entry_id("conventions", [a])
    svc.forget(key=b, now=NOW, actor="t")
    assert [e["sourceMemoryIds"] for e in current()] == [[a]]
