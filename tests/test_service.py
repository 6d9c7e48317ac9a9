"""The memory service: every core operation's success and refusal paths.

A refused call writes nothing: `refused` compares the LanceDB version, the records in LanceDB,
the read cache and NEXUS_MEMORY.md before and after each refusal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_workspace

from nxm.record import key_for, normalise, reading_order, summary
from nxm.search import rank
from nxm.service import MemoryService
from nxs.context import Context
from nxs.errors import ConflictError, NotFoundError, NxsError, ValidationError
from nxs.workspace import find
from tests.conftest import committed

NOW = "2026-05-29T10:00:00.000Z"
LATER = "2026-05-30T11:30:00.000Z"
ACTOR = "tester"


@pytest.fixture
def svc(ctx: Context) -> MemoryService:
    return ctx.memory


def add(svc: MemoryService, body: str, intro: str = "An introduction", **kw: Any) -> dict:
    kw.setdefault("now", NOW)
    kw.setdefault("actor", ACTOR)
    kw.setdefault("category", "notes")  # explicit: the default categoriser is another test's
    return svc.add(body=body, introduction=intro, **kw)["memory"]


def state(svc: MemoryService) -> dict[str, bytes]:
    """Everything a write could change that people commit: memory files, logs, NEXUS_MEMORY.md."""
    return committed(svc.ws.root)


def on_disk(svc: MemoryService) -> dict[str, dict[str, Any]]:
    """The records a new process reads from the files."""
    return dict(MemoryService(find(svc.ws.root)).store.records().items())


def refused(
    svc: MemoryService, kind: type[NxsError], call: Callable[[], Any], code: str | None = None
) -> NxsError:
    """Assert that ``call`` raises ``kind`` (with ``code``) and writes nothing."""
    before = state(svc)
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) is kind
    if code is not None:
        assert info.value.code == code
    assert state(svc) == before
    return info.value


# -- add ------------------------------------------------------------------------------------


def test_add_creates_a_memory_under_its_content_hash_key(svc: MemoryService) -> None:
    body = "Release tags are cut from main only.\nCI refuses others."
    result = svc.add(
        body=body,
        introduction="  Release tags come from main only  ",
        category="conventions",
        now=NOW,
        actor=ACTOR,
    )
    key = hashlib.sha256(normalise(body).encode()).hexdigest()[:16]
    assert key == key_for(body)
    assert result == {
        "created": True,
        "memory": {
            "key": key,
            "introduction": "Release tags come from main only",
            "body": body,
            "category": "conventions",
            "scope": "project",
            "refs": [],
            "status": "open",
            "processing": "READY",
            "priority": "MEDIUM",
            "layer": "PERMANENT",
            "expires": None,
            "actor": ACTOR,
            "created": NOW,
            "updated": NOW,
            "user_id": ACTOR,  # no user_id given: the actor's (docs/concepts.md)
            "agent_id": None,
            "session_id": None,
            "persona": None,
            "program_tool": None,
            "user_query": None,
            "billable": False,
            "company_client": None,
            "client_project": None,
            "artifact_url": None,
            "metadata": {},
            "model": "hash",
            "feedback": {"POSITIVE": 0, "NEGATIVE": 0, "NEUTRAL": 0},
        },
        "similar": [],
        "superseded": None,
    }
    shown = svc.show(key=key)["memory"]
    assert shown == {**result["memory"], "events": [{"type": "CREATED", "at": NOW, "actor": ACTOR}]}
    assert list(on_disk(svc)) == [key]
    assert set(svc.store.vectors([key])) == {key}


def test_add_keeps_provenance_and_cleans_refs(svc: MemoryService) -> None:
    m = add(
        svc,
        "The flaky test is tests/test_sync.py::test_retry.",
        scope="item",
        refs=[" ENG-7 ", "tests/test_sync.py", "ENG-7", ""],
        priority="HIGH",
        user_id="alice",
        agent_id="claude-code",
        session_id="s-1",
        metadata={"source": "review", "n": 2},
    )
    assert (m["scope"], m["refs"], m["priority"]) == (
        "item",
        ["ENG-7", "tests/test_sync.py"],
        "HIGH",
    )
    assert (m["user_id"], m["agent_id"], m["session_id"]) == ("alice", "claude-code", "s-1")
    assert m["metadata"] == {"source": "review", "n": 2}
    assert svc.show(key=m["key"])["memory"]["metadata"] == {"source": "review", "n": 2}


def test_add_same_body_returns_the_existing_memory_and_writes_nothing(svc: MemoryService) -> None:
    first = add(svc, "Deploys need two approvals.", "Two approvals per deploy")
    before = state(svc)
    again = svc.add(
        body="  Deploys   need two\napprovals.  ",
        introduction="Something else",
        now=LATER,
        actor="other",
    )
    assert again == {"created": False, "memory": first, "similar": [], "superseded": None}
    assert state(svc) == before


def test_add_task_layer_expires_after_the_configured_days(svc: MemoryService) -> None:
    default = add(svc, "Working on the importer today.", layer="TASK")
    assert (default["layer"], default["expires"]) == ("TASK", "2026-06-05T10:00:00.000Z")
    short = add(svc, "Pairing with bob until tomorrow night.", layer="TASK", ttl_days=1.5)
    assert short["expires"] == "2026-05-30T22:00:00.000Z"
    assert add(svc, "A permanent fact.")["expires"] is None


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"body": "", "introduction": "x"}, "body must not be empty"),
        ({"body": " \n\t ", "introduction": "x"}, "body must not be empty"),
        ({"body": "b", "introduction": "   "}, "introduction must not be empty"),
        ({"body": "b", "introduction": "two\nlines"}, "introduction must be one line"),
        ({"body": "b", "introduction": "carriage\rreturn"}, "introduction must be one line"),
        ({"body": "b", "introduction": "x" * 201}, "introduction is 201 characters; at most 200"),
        (
            {"body": "b", "introduction": "x", "scope": "item"},
            "scope 'item' needs the item in refs",
        ),
        (
            {"body": "b", "introduction": "x", "scope": "item", "refs": [" "]},
            "scope 'item' needs the item in refs",
        ),
        ({"body": "b", "introduction": "x", "ttl_days": 2.0}, "ttl_days applies to TASK memories"),
    ],
)
def test_add_refusals_write_nothing(svc: MemoryService, kw: dict, message: str) -> None:
    add(svc, "An existing memory so the store has a table.")
    err = refused(svc, ValidationError, lambda: svc.add(now=NOW, actor=ACTOR, **kw))
    assert err.message == message


def test_add_refusal_on_an_empty_workspace_creates_no_store(svc: MemoryService) -> None:
    refused(svc, ValidationError, lambda: svc.add(body="", introduction="x", now=NOW, actor=ACTOR))
    assert not (svc.ws.dir / "memory").exists()
    assert not (svc.ws.root / "NEXUS_MEMORY.md").exists()


def test_introduction_of_exactly_200_characters_is_accepted(svc: MemoryService) -> None:
    assert add(svc, "body", "y" * 200)["introduction"] == "y" * 200


# -- update ---------------------------------------------------------------------------------


def test_update_changes_body_in_place_and_reembeds(svc: MemoryService) -> None:
    m = add(svc, "Tags come from main.", "Tags from main")
    old_vector = svc.store.vectors([m["key"]])[m["key"]]
    out = svc.update(
        key=m["key"][:6],
        introduction="Tags from main or hotfix/*",
        body="Tags come from main or hotfix/* branches.",
        now=LATER,
        actor="bob",
    )["memory"]
    assert out["key"] == m["key"]
    assert out["body"] == "Tags come from main or hotfix/* branches."
    assert out["introduction"] == "Tags from main or hotfix/*"
    assert (out["created"], out["updated"], out["actor"]) == (NOW, LATER, "bob")
    assert (out["processing"], out["model"]) == ("READY", "hash")
    events = svc.show(key=m["key"])["memory"]["events"]
    assert events[-1] == {
        "type": "UPDATED",
        "at": LATER,
        "actor": "bob",
        "data": {
            "fields": ["body", "introduction"],
            "before": {"body": "Tags come from main.", "introduction": "Tags from main"},
        },
    }
    assert svc.store.vectors([m["key"]])[m["key"]] != old_vector
    assert on_disk(svc)[m["key"]]["body"] == "Tags come from main or hotfix/* branches."


def test_update_priority_only(svc: MemoryService) -> None:
    m = add(svc, "Never force-push main.", "No force-push on main")
    out = svc.update(
        key=m["key"], introduction=m["introduction"], priority="HIGH", now=LATER, actor=ACTOR
    )
    assert out["memory"]["priority"] == "HIGH"
    assert out["memory"]["body"] == m["body"]
    assert svc.history(key=m["key"])["events"][0]["data"] == {
        "fields": ["priority"],
        "before": {"priority": "MEDIUM"},
    }


def test_update_that_changes_nothing_is_refused(svc: MemoryService) -> None:
    m = add(svc, "Never force-push main.", "No force-push on main", priority="HIGH")
    err = refused(
        svc,
        ValidationError,
        lambda: svc.update(
            key=m["key"],
            introduction=" No force-push on main ",
            body="Never  force-push\nmain.",
            priority="HIGH",
            now=LATER,
            actor=ACTOR,
        ),
        code="NO_CHANGE",
    )
    assert err.message == f"update of {m['key']} changes nothing"


def test_update_to_another_memorys_body_is_a_conflict(svc: MemoryService) -> None:
    a = add(svc, "Body A", "A")
    b = add(svc, "Body B", "B")
    err = refused(
        svc,
        ConflictError,
        lambda: svc.update(key=a["key"], introduction="A", body="Body  B", now=LATER, actor=ACTOR),
    )
    assert err.message == f"memory {b['key']} already has that body"
    assert err.suggestion == f"forget one of them: `nxm forget {b['key']}`"


@pytest.mark.parametrize(
    ("kw", "kind", "message"),
    [
        ({"introduction": "a\nb"}, ValidationError, "introduction must be one line"),
        ({"introduction": "ok", "body": "  "}, ValidationError, "body must not be empty"),
        ({"introduction": "ok", "key": "ffffffffffffffff"}, NotFoundError, None),
    ],
)
def test_update_refusals_write_nothing(
    svc: MemoryService, kw: dict, kind: type[NxsError], message: str | None
) -> None:
    m = add(svc, "Something true.", "Something")
    args = {"key": m["key"], "now": LATER, "actor": ACTOR, **kw}
    err = refused(svc, kind, lambda: svc.update(**args))
    if message:
        assert err.message == message


def test_updated_body_frees_nothing_and_a_readded_old_body_gets_a_salted_key(
    svc: MemoryService,
) -> None:
    m = add(svc, "Old wording.", "Old")
    svc.update(key=m["key"], introduction="New", body="New wording.", now=LATER, actor=ACTOR)
    again = svc.add(body="Old wording.", introduction="Old again", now=LATER, actor=ACTOR)
    assert again["created"] is True
    assert again["memory"]["key"] == key_for("Old wording.", 1)
    assert again["memory"]["key"] != m["key"]
    same = svc.add(body="New wording.", introduction="dup", now=LATER, actor=ACTOR)
    assert (same["created"], same["memory"]["key"]) == (False, m["key"])


# -- classify -------------------------------------------------------------------------------


def test_classify_sets_category_scope_and_refs(svc: MemoryService) -> None:
    m = add(svc, "The retry loop hides timeouts.", "Retry loop hides timeouts")
    out = svc.classify(
        key=m["key"],
        category="gotchas",
        scope="item",
        refs=["ENG-42", "ENG-42"],
        now=LATER,
        actor="carol",
    )["memory"]
    assert (out["category"], out["scope"], out["refs"]) == ("gotchas", "item", ["ENG-42"])
    assert (out["updated"], out["actor"]) == (LATER, "carol")
    assert svc.history(key=m["key"], limit=1)["events"] == [
        {
            "type": "CLASSIFIED",
            "at": LATER,
            "actor": "carol",
            "data": {
                "fields": ["category", "refs", "scope"],
                "before": {"category": "notes", "refs": [], "scope": "project"},
            },
            "n": 2,
        }
    ]


def test_classify_empty_category_clears_it(svc: MemoryService) -> None:
    m = add(svc, "Use ruff.", "Use ruff", category="tooling")
    out = svc.classify(key=m["key"], category="", now=LATER, actor=ACTOR)["memory"]
    assert out["category"] is None


def test_classify_introduction_reembeds(svc: MemoryService) -> None:
    m = add(svc, "Use ruff.", "Use ruff")
    before = svc.store.vectors([m["key"]])[m["key"]]
    out = svc.classify(key=m["key"], introduction="Lint with ruff", now=LATER, actor=ACTOR)
    assert out["memory"]["introduction"] == "Lint with ruff"
    assert svc.store.vectors([m["key"]])[m["key"]] != before


@pytest.mark.parametrize(
    ("kw", "kind", "code", "message"),
    [
        ({}, ValidationError, "NO_CHANGE", "classify of {key} changes nothing"),
        (
            {"category": "tooling"},
            ValidationError,
            "NO_CHANGE",
            "classify of {key} changes nothing",
        ),
        (
            {"refs": ["x.py", "x.py"]},
            ValidationError,
            "NO_CHANGE",
            "classify of {key} changes nothing",
        ),
        (
            {"scope": "item", "refs": []},
            ValidationError,
            None,
            "scope 'item' needs the item in refs",
        ),
        ({"introduction": "a\nb"}, ValidationError, None, "introduction must be one line"),
        ({"key": "0000", "category": "x"}, NotFoundError, "NOT_FOUND", "no memory with key '0000'"),
    ],
)
def test_classify_refusals_write_nothing(
    svc: MemoryService, kw: dict, kind: type[NxsError], code: str | None, message: str
) -> None:
    m = add(svc, "Use ruff.", "Use ruff", category="tooling", refs=["x.py"])
    args = {"key": m["key"], "now": LATER, "actor": ACTOR, **kw}
    err = refused(svc, kind, lambda: svc.classify(**args), code=code)
    assert err.message == message.format(key=m["key"])


# -- the state machine ----------------------------------------------------------------------

STEPS = {
    "close": MemoryService.close,
    "reopen": MemoryService.reopen,
    "forget": MemoryService.forget,
    "restore": MemoryService.restore,
}
# (steps that must succeed, the status they reach)
PATHS = [
    (["close"], "closed"),
    (["close", "reopen"], "open"),
    (["forget"], "forgotten"),
    (["forget", "restore"], "open"),
    (["close", "forget"], "forgotten"),
    (["close", "forget", "restore"], "closed"),
    (["close", "forget", "restore", "reopen"], "open"),
    (["forget", "restore", "close", "forget", "restore"], "closed"),
]


@pytest.mark.parametrize(("steps", "status"), PATHS)
def test_lifecycle_paths(svc: MemoryService, steps: list[str], status: str) -> None:
    m = add(svc, "A lifecycle subject.")
    seen = ["open"]
    for i, step in enumerate(steps):
        at = f"2026-06-0{i + 1}T00:00:00.000Z"
        out = STEPS[step](svc, key=m["key"], now=at, actor=ACTOR)["memory"]
        seen.append(out["status"])
        assert out["updated"] == at
    assert seen[-1] == status
    events = svc.show(key=m["key"])["memory"]["events"]
    assert [e["type"] for e in events] == ["CREATED"] + [
        {"close": "CLOSED", "reopen": "REOPENED", "forget": "FORGOTTEN", "restore": "RESTORED"}[s]
        for s in steps
    ]
    assert [e["data"] for e in events[1:]] == [
        {"from": a, "to": b} for a, b in zip(seen, seen[1:], strict=False)
    ]
    assert on_disk(svc)[m["key"]]["status"] == status


# For each status, the steps that are refused from it, with the verb the message names.
BAD = [
    ("open", "reopen"),
    ("open", "restore"),
    ("closed", "close"),
    ("closed", "restore"),
    ("forgotten", "close"),
    ("forgotten", "reopen"),
    ("forgotten", "forget"),
]
REACH = {"open": [], "closed": ["close"], "forgotten": ["forget"]}


@pytest.mark.parametrize(("status", "step"), BAD)
def test_lifecycle_refusals_are_conflicts_and_write_nothing(
    svc: MemoryService, status: str, step: str
) -> None:
    m = add(svc, "A lifecycle subject.")
    for s in REACH[status]:
        STEPS[s](svc, key=m["key"], now=NOW, actor=ACTOR)
    err = refused(
        svc,
        ConflictError,
        lambda: STEPS[step](svc, key=m["key"], now=LATER, actor=ACTOR),
        code="BAD_STATE",
    )
    assert err.message == f"memory {m['key']} is {status}; cannot {step} it"
    assert err.suggestion == f"see its state with `nxm show {m['key']}`"


@pytest.mark.parametrize("step", ["close", "reopen", "forget", "restore", "purge"])
def test_state_changes_on_a_missing_key_are_not_found(svc: MemoryService, step: str) -> None:
    add(svc, "Present.")
    method = getattr(svc, step)
    refused(svc, NotFoundError, lambda: method(key="0123456789abcdef", now=NOW, actor=ACTOR))


# -- purge ----------------------------------------------------------------------------------


def test_purge_deletes_a_forgotten_memory_for_good(svc: MemoryService) -> None:
    keep = add(svc, "Keep me.")
    gone = add(svc, "Purge me.")
    svc.forget(key=gone["key"], now=NOW, actor=ACTOR)
    assert svc.purge(key=gone["key"][:8], now=LATER, actor=ACTOR) == {
        "purged": True,
        "key": gone["key"],
    }
    assert list(on_disk(svc)) == [keep["key"]]
    assert list(svc.store.records()) == [keep["key"]]
    with pytest.raises(NotFoundError):
        svc.show(key=gone["key"])
    again = svc.add(body="Purge me.", introduction="back", now=LATER, actor=ACTOR)
    assert (again["created"], again["memory"]["key"]) == (True, gone["key"])


@pytest.mark.parametrize("status", ["open", "closed"])
def test_purge_refuses_what_is_not_forgotten(svc: MemoryService, status: str) -> None:
    m = add(svc, "Still live.")
    for s in REACH[status]:
        STEPS[s](svc, key=m["key"], now=NOW, actor=ACTOR)
    err = refused(
        svc,
        ConflictError,
        lambda: svc.purge(key=m["key"], now=LATER, actor=ACTOR),
        code="BAD_STATE",
    )
    assert err.message == f"memory {m['key']} is {status}; only forgotten memories can be purged"
    assert err.suggestion == f"forget it first: `nxm forget {m['key']}`"


# -- show and key prefixes ------------------------------------------------------------------


def test_show_by_key_and_by_unambiguous_prefix(svc: MemoryService) -> None:
    a = add(svc, "note 0")  # key e63c05c9a473bdb5
    b = add(svc, "note 178")  # key e65518b18ef9b75f
    assert (a["key"], b["key"]) == ("e63c05c9a473bdb5", "e65518b18ef9b75f")
    assert svc.show(key="e63")["memory"]["body"] == "note 0"
    assert svc.show(key=" E655 ")["memory"]["body"] == "note 178"
    assert svc.show(key=a["key"])["memory"]["key"] == a["key"]


def test_show_ambiguous_prefix_is_a_conflict(svc: MemoryService) -> None:
    add(svc, "note 0")
    add(svc, "note 178")
    err = refused(svc, ConflictError, lambda: svc.show(key="e6"), code="AMBIGUOUS_KEY")
    assert err.message == "key prefix 'e6' matches 2 memories: e63c05c9a473bdb5, e65518b18ef9b75f"
    assert err.exit_code == 4
    refused(
        svc,
        ConflictError,
        lambda: svc.close(key="e6", now=NOW, actor=ACTOR),
        code="AMBIGUOUS_KEY",
    )


@pytest.mark.parametrize("key", ["f00d", "", "   ", "e63c05c9a473bdb5x"])
def test_show_missing_is_not_found(svc: MemoryService, key: str) -> None:
    add(svc, "note 0")
    err = refused(svc, NotFoundError, lambda: svc.show(key=key), code="NOT_FOUND")
    assert err.suggestion == "find keys with `nxm list` or `nxm search`"


def test_show_on_an_empty_workspace_is_not_found(svc: MemoryService) -> None:
    with pytest.raises(NotFoundError):
        svc.show(key="abc")


def test_show_includes_forgotten_memories(svc: MemoryService) -> None:
    m = add(svc, "Forget me.")
    svc.forget(key=m["key"], now=NOW, actor=ACTOR)
    assert svc.show(key=m["key"])["memory"]["status"] == "forgotten"


# -- history --------------------------------------------------------------------------------


def test_history_order_limit_and_total(svc: MemoryService) -> None:
    m = add(svc, "History subject.", "v0")
    for i in range(1, 4):
        svc.update(
            key=m["key"], introduction=f"v{i}", now=f"2026-06-0{i}T00:00:00.000Z", actor=ACTOR
        )
    svc.close(key=m["key"], now="2026-06-05T00:00:00.000Z", actor="bob")
    newest = svc.history(key=m["key"])
    assert (newest["key"], newest["order"], newest["total"]) == (m["key"], "newest", 5)
    assert [(e["n"], e["type"], e["at"]) for e in newest["events"]] == [
        (5, "CLOSED", "2026-06-05T00:00:00.000Z"),
        (4, "UPDATED", "2026-06-03T00:00:00.000Z"),
        (3, "UPDATED", "2026-06-02T00:00:00.000Z"),
        (2, "UPDATED", "2026-06-01T00:00:00.000Z"),
        (1, "CREATED", NOW),
    ]
    oldest = svc.history(key=m["key"][:5], order="oldest", limit=2)
    assert oldest["total"] == 5
    assert oldest["events"] == [
        {"type": "CREATED", "at": NOW, "actor": ACTOR, "n": 1},
        {
            "type": "UPDATED",
            "at": "2026-06-01T00:00:00.000Z",
            "actor": ACTOR,
            "data": {"fields": ["introduction"], "before": {"introduction": "v0"}},
            "n": 2,
        },
    ]
    assert [e["n"] for e in svc.history(key=m["key"], limit=2)["events"]] == [5, 4]


def test_history_of_a_missing_key_is_not_found(svc: MemoryService) -> None:
    add(svc, "x")
    refused(svc, NotFoundError, lambda: svc.history(key="zzzz"))


# -- list and search over one shared state --------------------------------------------------

# (body, introduction, add arguments, created, then steps)
CORPUS = [
    ("Release tags are cut from main only.", "Tags from main", {"priority": "HIGH", "category": "conventions", "user_id": "alice", "agent_id": "claude-code"}, "2026-05-01", []),
    ("We use LanceDB because one table holds vectors and the full-text index.", "Why LanceDB", {"category": "decisions", "user_id": "bob", "agent_id": "cursor"}, "2026-05-02", []),
    ("The sync test is flaky under load; retry hides timeouts.", "Flaky sync test", {"category": "gotchas", "scope": "item", "refs": ["ENG-42", "tests/test_sync.py"], "user_id": "alice", "session_id": "s-9"}, "2026-05-03", []),
    ("Carol owns the billing service and its on-call rota.", "Carol owns billing", {"priority": "LOW", "user_id": "carol"}, "2026-05-04", ["uncategorise"]),
    ("Today: migrating the importer to batches of 2048.", "Importer migration in progress", {"layer": "TASK", "ttl_days": 10.0, "agent_id": "cursor"}, "2026-05-05", ["uncategorise"]),
    ("The old deploy script needed sudo.", "Old deploy needed sudo", {"category": "gotchas"}, "2026-05-06", ["close"]),
    ("Wrong: tags may be cut from any branch.", "Tags from anywhere (wrong)", {"category": "conventions"}, "2026-05-07", ["forget"]),
    ("Code review needs one approval from an owner of the touched files.", "One owner approval per review", {"category": "conventions", "agent_id": "claude-code"}, "2026-05-08", []),
    ("Never print the Linear API key; errors redact it.", "Never print Linear keys", {"priority": "HIGH", "category": "security"}, "2026-05-09", []),
    ("Timeouts in CI come from the 2-core runners; keep tests small.", "CI has two cores", {"category": "gotchas", "agent_id": "claude-code"}, "2026-05-10", []),
    ("A short-lived task note that has already expired.", "Expired task", {"layer": "TASK", "ttl_days": 1.0}, "2026-05-11", ["uncategorise"]),
]  # fmt: skip
SEARCH_NOW = "2026-05-20T00:00:00.000Z"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryService, list[str]]:
    root = make_workspace(tmp_path_factory.mktemp("corpus") / "proj")
    service = MemoryService(find(root))
    keys = []
    for body, intro, kw, day, steps in CORPUS:
        at = f"{day}T09:00:00.000Z"
        kw = {"category": "tmp", **kw}  # explicit, then cleared: the categoriser is not tested here
        m = service.add(body=body, introduction=intro, now=at, actor="seed", **kw)["memory"]
        for s in steps:
            if s == "uncategorise":
                service.classify(key=m["key"], category="", now=at, actor="seed")
            else:
                STEPS[s](service, key=m["key"], now=at, actor="seed")
        keys.append(m["key"])
    return service, keys


def listed(service: MemoryService, **kw: Any) -> list[int]:
    """Indexes into CORPUS of what list returns, in order."""
    keys = [m["key"] for m in service.list(page_size=200, **kw)["memories"]]
    order = {key_for(body): i for i, (body, *_rest) in enumerate(CORPUS)}
    return [order[k] for k in keys]


def test_list_defaults_to_open_memories_in_reading_order(corpus: Any) -> None:
    service, _ = corpus
    # HIGH first; then categories alphabetically, uncategorised last; then oldest first.
    assert listed(service) == [0, 8, 7, 1, 2, 9, 4, 10, 3]


def test_list_reading_order_matches_the_record_sort(corpus: Any) -> None:
    service, _ = corpus
    everything = list(service.store.records().values())
    expected = [r["key"] for r in reading_order(everything)]
    assert [m["key"] for m in service.list(status="all", page_size=200)["memories"]] == expected


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"status": "closed"}, [5]),
        ({"status": "forgotten"}, [6]),
        ({"status": "all"}, [0, 8, 6, 7, 1, 2, 5, 9, 4, 10, 3]),
        ({"category": "gotchas"}, [2, 9]),
        ({"category": "gotchas", "status": "all"}, [2, 5, 9]),
        ({"category": "nope"}, []),
        ({"scope": "item"}, [2]),
        ({"scope": "project"}, [0, 8, 7, 1, 9, 4, 10, 3]),
        ({"ref": "ENG-42"}, [2]),
        ({"ref": "tests/test_sync.py"}, [2]),
        ({"ref": "ENG-4"}, []),
        ({"user_id": "alice"}, [0, 2]),
        ({"agent_id": "claude-code"}, [0, 7, 9]),
        ({"agent_id": "cursor"}, [1, 4]),
        ({"session_id": "s-9"}, [2]),
        ({"layer": "TASK"}, [4, 10]),
        ({"layer": "PERMANENT", "priority": "HIGH"}, [0, 8]),
        ({"priority": "LOW"}, [3]),
        ({"priority": "MEDIUM", "agent_id": "claude-code"}, [7, 9]),
    ],
)
def test_list_filters(corpus: Any, kw: dict, expected: list[int]) -> None:
    service, _ = corpus
    assert listed(service, **kw) == expected


def test_list_pagination_with_totals(corpus: Any) -> None:
    service, _ = corpus
    everything = service.list(page_size=200)["memories"]
    pages = [service.list(page=p, page_size=4) for p in (1, 2, 3, 4)]
    assert [(p["page"], p["page_size"], p["total"], p["total_pages"]) for p in pages] == [
        (1, 4, 9, 3),
        (2, 4, 9, 3),
        (3, 4, 9, 3),
        (4, 4, 9, 3),
    ]
    assert [len(p["memories"]) for p in pages] == [4, 4, 1, 0]
    assert [m for p in pages for m in p["memories"]] == everything
    assert service.list(category="nope") == {
        "memories": [],
        "page": 1,
        "page_size": 20,
        "total": 0,
        "total_pages": 0,
    }


def test_list_returns_summaries_without_bodies(corpus: Any) -> None:
    service, keys = corpus
    first = service.list(page_size=1)["memories"][0]
    assert first == {
        "key": keys[0],
        "introduction": "Tags from main",
        "category": "conventions",
        "scope": "project",
        "refs": [],
        "status": "open",
        "priority": "HIGH",
        "layer": "PERMANENT",
        "processing": "READY",
        "expires": None,
        "created": "2026-05-01T09:00:00.000Z",
        "updated": "2026-05-01T09:00:00.000Z",
    }


def test_reading_order_is_stable_on_ties() -> None:
    records = [
        {"key": k, "priority": "MEDIUM", "category": None, "created": NOW} for k in ("c", "a", "b")
    ]
    assert [r["key"] for r in reading_order(records)] == ["a", "b", "c"]
    assert [r["key"] for r in reading_order(list(reversed(records)))] == ["a", "b", "c"]


def searched(service: MemoryService, query: str, **kw: Any) -> list[int]:
    kw.setdefault("now", SEARCH_NOW)
    order = {key_for(body): i for i, (body, *_rest) in enumerate(CORPUS)}
    return [order[r["key"]] for r in service.search(query=query, **kw)["results"]]


def test_keyword_search_scores_bm25_only(corpus: Any) -> None:
    service, keys = corpus
    out = service.search(query="billing rota", mode="keyword", now=SEARCH_NOW)
    assert (out["mode"], out["query"], out["total"]) == ("keyword", "billing rota", 1)
    assert "note" not in out
    (hit,) = out["results"]
    assert hit["key"] == keys[3]
    assert hit["score"] == hit["keyword"]
    assert hit["score"] > 0
    assert hit["semantic"] is None
    assert "body" not in hit


def test_keyword_search_hides_closed_forgotten_and_expired(corpus: Any) -> None:
    service, _ = corpus
    assert searched(service, "tags", mode="keyword") == [0]
    assert sorted(searched(service, "tags", mode="keyword", status="all")) == [0, 6]
    assert searched(service, "deploy sudo", mode="keyword") == []
    assert searched(service, "deploy sudo", mode="keyword", status="closed") == [5]
    # expired on 2026-05-12: hidden at SEARCH_NOW, found before it expires
    assert searched(service, "expired", mode="keyword") == []
    assert searched(service, "expired", mode="keyword", now="2026-05-11T12:00:00Z") == [10]


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"category": "gotchas"}, [9, 2]),
        ({"agent_id": "claude-code"}, [9]),
        ({"ref": "ENG-42"}, [2]),
        ({"scope": "item"}, [2]),
        ({"priority": "LOW"}, []),
    ],
)
def test_keyword_search_filters(corpus: Any, kw: dict, expected: list[int]) -> None:
    service, _ = corpus
    assert sorted(searched(service, "timeouts", mode="keyword", **kw)) == sorted(expected)


def test_semantic_search_scores_similarity_only(corpus: Any) -> None:
    service, _ = corpus
    out = service.search(query="Carol owns billing", mode="semantic", limit=3, now=SEARCH_NOW)
    assert 1 <= out["total"] <= 3  # those below the model's relevance floor are not returned
    assert all(r["semantic"] is not None and r["keyword"] is None for r in out["results"])
    assert all(r["semantic"] >= rank.SEMANTIC_FLOORS["hash"] for r in out["results"])
    assert [r["score"] for r in out["results"]] == [r["semantic"] for r in out["results"]]
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)


def test_hybrid_search_fuses_both_lists(corpus: Any) -> None:
    service, keys = corpus
    out = service.search(query="billing rota", now=SEARCH_NOW, limit=20)
    assert out["mode"] == "hybrid"
    top = out["results"][0]
    assert top["key"] == keys[3]
    assert top["keyword"] > 0 and top["semantic"] is not None
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)
    # standard deviations above each list's mean (0 at or below it), half weight each
    assert all(r["score"] >= 0 for r in out["results"])
    assert len(scores) == 1 or top["score"] > scores[1]
    assert len(out["results"]) == out["total"] <= 20
    assert {r["status"] for r in out["results"]} == {"open"}


def test_search_limit(corpus: Any) -> None:
    service, _ = corpus
    assert (
        len(service.search(query="the", mode="semantic", limit=2, now=SEARCH_NOW)["results"]) == 2
    )
    assert len(service.search(query="the", mode="semantic", now=SEARCH_NOW)["results"]) == 5


def test_empty_query_is_refused(corpus: Any) -> None:
    service, _ = corpus
    with pytest.raises(ValidationError) as info:
        service.search(query="  ", now=SEARCH_NOW)
    assert info.value.message == "query must not be empty"


# -- embedding and the projection -----------------------------------------------------------


def test_embed_pending_with_nothing_pending_embeds_nothing(svc: MemoryService) -> None:
    add(svc, "Already embedded.")
    assert svc.embed_pending() == {"embedded": 0, "model": "hash", "pending": 0}
    assert svc.embed_pending(all=True) == {"embedded": 1, "model": "hash", "pending": 0}


def test_projection_lists_open_memories_in_reading_order(svc: MemoryService) -> None:
    a = add(svc, "Body of A.\n\n", "Intro A", category="conventions", refs=["x.py"])
    b = add(svc, "Body of B.", "Intro B", priority="HIGH")
    c = add(svc, "Body of C.", "Intro C")
    svc.close(key=c["key"], now=LATER, actor="bob")
    text = (svc.ws.root / "NEXUS_MEMORY.md").read_text()
    tail = text[text.index("\n2 open") :]
    assert tail == (
        "\n2 open memories.\n\n"
        f'- [`{b["key"]}`](.nxs/memories/{b["key"]}.md "{NOW}") Intro B _(notes · HIGH)_\n'
        f'- [`{a["key"]}`](.nxs/memories/{a["key"]}.md "{NOW}") Intro A _(conventions · MEDIUM)_\n'
    )
    assert text.startswith("# NEXUS_MEMORY.md\n")


def test_a_second_service_sees_writes_of_the_first(workspace: Path) -> None:
    one = MemoryService(find(workspace))
    two = MemoryService(find(workspace))
    m = one.add(body="Shared.", introduction="Shared", now=NOW, actor=ACTOR)["memory"]
    assert two.show(key=m["key"])["memory"]["body"] == "Shared."
    two.close(key=m["key"], now=LATER, actor=ACTOR)
    assert one.show(key=m["key"])["memory"]["status"] == "closed"
    assert one.reopen(key=m["key"], now=LATER, actor=ACTOR)["memory"]["status"] == "open"


def test_the_projection_after_any_writes_is_what_the_files_make(svc: MemoryService) -> None:
    """After a mix of writes in one long-lived service, NEXUS_MEMORY.md is what a fresh
    process makes from the files; one edited by hand is left alone by reads (they write nothing
    git tracks) and written again by the next write."""
    from nxm.projection import derive

    keys = [
        svc.add(body=f"fact {i}", introduction=f"Fact {i}", now=NOW, actor="t")["memory"]["key"]
        for i in range(6)
    ]
    svc.update(key=keys[0], body="fact zero, changed", introduction="Fact 0", now=NOW, actor="t")
    svc.close(key=keys[1], now=NOW, actor="t")
    svc.classify(key=keys[2], scope="user", now=NOW, actor="t")
    svc.purge(key=svc.forget(key=keys[3], now=NOW, actor="t")["memory"]["key"], now=NOW, actor="t")
    path = svc.ws.root / "NEXUS_MEMORY.md"
    assert path.read_bytes() == derive(on_disk(svc).values())
    path.write_text("edited by hand\n")
    MemoryService(find(svc.ws.root)).list()
    assert path.read_text() == "edited by hand\n"
    MemoryService(find(svc.ws.root)).close(key=keys[4], now=NOW, actor="t")
    assert path.read_bytes() == derive(on_disk(svc).values())


def test_the_projection_lists_the_first_lines_and_counts_the_rest(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write rewrites NEXUS_MEMORY.md, so it holds at most LIMIT lines (the first in reading
    order) and counts the others: its size does not grow with the store's."""
    import nxm.projection

    monkeypatch.setattr(nxm.projection, "LIMIT", 3)
    for i, priority in enumerate(["LOW", "LOW", "HIGH", "MEDIUM", "HIGH"]):
        svc.add(body=f"fact {i}", introduction=f"Fact {i}", priority=priority, now=NOW, actor="t")
    text = (svc.ws.root / "NEXUS_MEMORY.md").read_text()
    listed = [m["introduction"] for m in svc.list()["memories"]]
    shown = [ln for ln in text.splitlines() if ln.startswith("- [`")]
    assert [ln.split(") ", 1)[1].split(" _(")[0] for ln in shown] == listed[:3]
    assert "\n5 open memories.\n" in text
    assert text.endswith("\n2 more open memories, in `nxm list` (not shown here).\n")
    svc.forget(key=svc.list()["memories"][-1]["key"], now=NOW, actor="t")
    text = (svc.ws.root / "NEXUS_MEMORY.md").read_text()
    assert text.endswith("\n1 more open memory, in `nxm list` (not shown here).\n")


def test_a_list_by_status_alone_pages_like_the_filtered_path(svc: MemoryService) -> None:
    """`list` with no filter but status reads one page through the cache's order index; its
    pages and totals are those of filtering every record."""
    keys = [
        svc.add(body=f"fact {i}", introduction=f"Fact {i}", priority=p, now=NOW, actor="t")[
            "memory"
        ]["key"]
        for i, p in enumerate(["LOW", "HIGH", "MEDIUM", "HIGH", "LOW", "MEDIUM", "HIGH"])
    ]
    svc.close(key=keys[1], now=NOW, actor="t")
    svc.close(key=keys[4], now=NOW, actor="t")
    svc.forget(key=keys[2], now=NOW, actor="t")
    every = list(svc.store.records().heads(ordered=True))
    for status in ("open", "closed", "forgotten", "all"):
        chosen = svc._select(iter(every), {"status": status})
        for page in (1, 2, 3, 9):
            got = svc.list(status=status, page=page, page_size=2)
            assert got["total"] == len(chosen)
            assert got["memories"] == [summary(r) for r in chosen[(page - 1) * 2 : page * 2]]
    assert svc.list()["total"] == 4 and svc.list(status="all")["total"] == 7
