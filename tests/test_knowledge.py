"""Consolidated knowledge: grouping, near-duplicate merging, order, ids, and staying current."""

from __future__ import annotations

import pytest

from nxm.knowledge import SHOWN, THRESHOLD, entries, entry_id, jaccard, knowledge, title, words
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
    # 3 of 5 words shared: 3 / 5 = 0.6 -> one statement
    same = {
        "k1": rec("k1", "alpha bravo charlie delta", category="c"),
        "k2": rec(
            "k2", "alpha bravo charlie echo", category="c", updated="2026-05-02T00:00:00.000Z"
        ),
    }
    got = entries(same, NOW)
    assert [e["sourceMemoryIds"] for e in got] == [["k2", "k1"]]  # newest first
    assert got[0]["statements"] == [
        {"text": "alpha bravo charlie echo", "sourceMemoryIds": ["k2", "k1"]}
    ]
    assert got[0]["content"] == "alpha bravo charlie echo"
    assert got[0]["id"] == entry_id("c", ["k1", "k2"])
    # 3 of 6 words shared: 0.5 -> two statements of one subject (the word both use)
    apart = {
        "k1": rec("k1", "alpha bravo charlie delta", category="c"),
        "k3": rec("k3", "alpha bravo charlie foxtrot golf", category="c"),
    }
    (entry,) = entries(apart, NOW)
    assert entry["subject"] == "alpha"
    assert [s["sourceMemoryIds"] for s in entry["statements"]] == [["k1"], ["k3"]]


def test_entries_group_by_subject() -> None:
    records = {
        "a": rec("a", "ledger-svc is owned by the payments team.", category="people"),
        "b": rec("b", "ledger-svc depends on Kafka.", category="tech-stack"),
        "c": rec("c", "ledger-svc uses PostgreSQL 15.", category="tech-stack"),
        "d": rec("d", "Traced ERR_LEDGER_LOCKED to the nightly job.", category="gotchas"),
        "e": rec("e", "Dana Kim reviews every migration.", category="people"),
        "f": rec("f", "Dana prefers Go for new services.", category="people"),
        "g": rec("g", "The user prefers pnpm.", category="preferences", user_id="alice"),
        "h": rec("h", "Postgres vacuum runs nightly.", category="tech-stack"),
    }
    got = {(e["category"], e["subject"]): e["sourceMemoryIds"] for e in entries(records, NOW)}
    assert got == {
        ("gotchas", None): ["d"],  # an identifier is nobody's subject
        ("people", "ledger-svc"): ["a"],
        ("people", "Dana Kim"): ["e", "f"],  # a first name joins the one full name
        ("preferences", "alice"): ["g"],  # the user writing about themselves
        ("tech-stack", "ledger-svc"): ["b", "c"],
        ("tech-stack", "PostgreSQL"): ["h"],  # a word-list name in any spelling
    }


def test_a_filter_does_not_change_an_entry() -> None:
    records = {
        "a": rec("a", "ledger-svc depends on Kafka.", category="tech-stack", user_id="u1"),
        "b": rec("b", "ledger-svc uses PostgreSQL.", category="tech-stack", user_id="u1"),
        "c": rec("c", "Deploys need a green main.", category="processes"),
    }
    every = {e["id"] for e in entries(records, NOW)}
    assert {e["id"] for e in entries(records, NOW, category="tech-stack")} <= every
    assert {e["id"] for e in entries(records, NOW, user_id="u1")} <= every


def test_the_merged_document_shows_a_few_statements_and_keys_an_entry() -> None:
    topics = "alpha bravo charlie delta echo foxtrot golf hotel".split()
    records = {
        f"k{i}": rec(f"k{i}", f"rate-limiter gotcha about {topic} {topic}s.",
                     category="gotchas", updated=f"2026-05-{i + 1:02}T00:00:00.000Z")
        for i, topic in enumerate(topics)
    }  # fmt: skip
    for i in range(4):  # four copies of the newest statement
        records[f"d{i}"] = rec(f"d{i}", "rate-limiter gotcha about hotel hotels.",
                               category="gotchas", updated="2026-05-08T00:00:00.000Z")  # fmt: skip
    got = knowledge(records, now=NOW)
    (entry,) = knowledge(records, now=NOW, merged=False)["entries"]
    assert (entry["subject"], len(entry["statements"]), len(entry["sourceMemoryIds"])) == (
        "rate-limiter", 8, 12,
    )  # fmt: skip
    lines = got["content"].splitlines()
    assert lines[:3] == ["## Gotchas", "", "- **rate-limiter**"]
    assert lines[3] == (
        "  - rate-limiter gotcha about hotel hotels _(memories: `d0`, `d1`, `d2` and 2 more)_"
    )
    assert len(lines) == 3 + SHOWN + 1
    assert lines[-1] == (
        f"  - … 3 more statements from 3 memories: `nxm knowledge --entry {entry['id']}`"
    )


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
    # a statement is the memory's introduction; a subject leads its entry
    assert got["content"] == (
        "## Preferences\n\n- **u1**: Prefers short answers _(memories: `b`)_\n"
        "\n## Tech Stack\n\n- **ruff**: Use ruff for linting _(memories: `a`)_\n"
    )
    assert got["entries"] == [
        {"category": "preferences", "id": entry_id("preferences", ["b"]), "subject": "u1"},
        {"category": "tech-stack", "id": entry_id("tech-stack", ["a"]), "subject": "ruff"},
    ]
    assert (got["total"], got["memories"], got["mergedAt"]) == (2, 2, "2026-05-01T00:00:00.000Z")
    one = knowledge(records, now=NOW, entry=entry_id("preferences", ["b"]))["entry"]
    assert one == {
        "id": entry_id("preferences", ["b"]), "category": "preferences", "subject": "u1",
        "content": "Prefers short answers",
        "statements": [{"text": "Prefers short answers", "sourceMemoryIds": ["b"]}],
        "introduction": "Prefers short answers",
        "priority": "MEDIUM", "sourceMemoryIds": ["b"], "userIds": ["u1"],
        "createdAt": "2026-05-01T00:00:00.000Z", "updatedAt": "2026-05-01T00:00:00.000Z",
    }  # fmt: skip
    with pytest.raises(NotFoundError) as err:
        knowledge(records, now=NOW, entry="kn-000000000000")
    assert err.value.code == "ENTRY_NOT_FOUND"
    assert knowledge({}, now=NOW) == {
        "categories": [], "content": "", "entries": [], "memories": 0, "mergedAt": None, "total": 0,
    }  # fmt: skip


def test_a_memory_without_an_introduction_is_stated_by_its_body() -> None:
    body = ("This sentence is about forty characters. " * 40).strip()
    record = new_record(key="a", body=body, introduction="", updated=NOW, created=NOW)
    content = entries({"a": record}, NOW)[0]["content"]
    assert content.endswith("…") and len(content) == 200 and body.startswith(content[:-1])


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

    def statements() -> list[list[str]]:
        return [s["sourceMemoryIds"] for e in current() for s in e["statements"]]

    assert statements() == [sorted([a, b])]  # near-duplicates: one statement
    svc.update(key=a, body="Release tags are cut by the release bot from main or hotfix/*.",
               introduction="Release tags are cut by the release bot", now=NOW, actor="t")  # fmt: skip
    assert statements() == [[k] for k in sorted([a, b])]  # same time: key order
    (entry,) = current()  # one subject still: the word both use
    assert entry["subject"] == "tags"
    mine = next(s for s in entry["statements"] if s["sourceMemoryIds"] == [a])
    assert mine["text"] == "Release tags are cut by the release bot"
    assert entry["id"] == entry_id("conventions", [a, b])
    svc.forget(key=b, now=NOW, actor="t")
    assert statements() == [[a]]
