"""Parity cases for the lifecycle, knowledge, graph and insight operations (nxm/ops/lifecycle.py).

Success and refusal alike, on the seeded state of `state.py`. Graph cases that need relations
write agent-authored facts in ``setup`` (no memory write, so no lancedb import per case).
"""

from __future__ import annotations

from pathlib import Path

from nxm.knowledge import entry_id
from tests.parity.state import KEYS, NOW

CONVENTION, DECISION, GOTCHA, CLOSED, FORGOTTEN, ITEM, TASK = KEYS
AFTER_EXPIRY = "2026-06-04T00:00:00Z"  # the TASK memory expires 2026-06-03T09:00


def _service(root: Path):  # noqa: ANN202 - a test helper
    from nxm.service import MemoryService
    from nxs.workspace import find

    return MemoryService(find(root))


def _team(root: Path) -> None:
    """Dana Kim (agent-added) works at Acme Corp and uses LanceDB; the config loader needs tomllib."""
    from nxm import graph

    svc = _service(root)
    at = {"now": "2026-05-20T09:00:00.000Z", "actor": "setup"}
    graph.add(svc, name="Dana Kim", type="PERSON", description="Owns billing.", **at)
    graph.add(svc, name="Acme Corp", type="ORGANIZATION", **at)
    graph.relate(svc, source="Dana Kim", relation="WORKS_AT", target="Acme Corp", **at)
    graph.relate(svc, source="Dana Kim", relation="USES", target="LanceDB", **at)
    graph.relate(svc, source="config loader", relation="DEPENDS_ON", target="tomllib", **at)


def _in_conflict(root: Path) -> None:
    """The decision as git leaves it after both branches changed its introduction."""
    path = root / ".nxs" / "memories" / f"{DECISION}.md"
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("introduction:"))
    lines[at : at + 1] = [
        "<<<<<<< HEAD\n", "introduction: Ours: LanceDB\n", "=======\n",
        "introduction: Theirs: LanceDB only\n", ">>>>>>> b\n",
    ]  # fmt: skip
    path.write_text("".join(lines))


def _stray(root: Path) -> None:
    (root / ".nxs" / "memories" / "by-hand.md").write_text(
        "---\nintroduction: Traces go to Tempo\n---\n\nTraces go to Tempo.\n"
    )


def _searches(root: Path) -> None:
    from nxm.insights import log_search

    ws = _service(root).ws
    for at in ("2026-05-28T08:00:00.000Z", "2026-05-29T09:00:00.000Z", "2026-04-20T12:00:00.000Z"):
        log_search(ws, at, "hybrid")


def _edited(root: Path) -> None:
    """The gotcha edited twice: its body (event 2), then its category (event 3)."""
    svc = _service(root)
    at = {"now": "2026-05-20T09:00:00.000Z", "actor": "setup"}
    svc.update(key=GOTCHA, body="Import lancedb lazily: it costs over a second at start-up.", **at)
    svc.classify(key=GOTCHA, category="performance", **at)


CASES = [
    # -- revert ------------------------------------------------------------------------------
    {
        "id": "revert-latest",
        "tool": "memory_revert",
        "arguments": {"key": GOTCHA},
        "setup": _edited,
    },
    {
        "id": "revert-to-created",
        "tool": "memory_revert",
        "arguments": {"key": GOTCHA[:6], "to": 1},
        "setup": _edited,
    },
    {
        "id": "revert-event-alias",
        "tool": "memory_revert",
        "arguments": {"key": GOTCHA, "event": 2},
        "setup": _edited,
    },
    {
        "id": "revert-nothing-to-revert",
        "tool": "memory_revert",
        "arguments": {"key": GOTCHA},
    },
    {
        "id": "revert-older-edit-without-before",
        "tool": "memory_revert",
        "arguments": {"key": DECISION},
    },
    {
        "id": "revert-no-such-event",
        "tool": "memory_revert",
        "arguments": {"key": GOTCHA, "to": 40},
        "setup": _edited,
    },
    {
        "id": "revert-already-there",
        "tool": "memory_revert",
        "arguments": {"key": GOTCHA, "to": 3},
        "setup": _edited,
    },
    {"id": "revert-missing-key", "tool": "memory_revert", "arguments": {"key": "ffff0000"}},
    # -- promote -----------------------------------------------------------------------------
    {"id": "promote-task", "tool": "memory_promote", "arguments": {"key": TASK}},
    {"id": "promote-prefix", "tool": "memory_promote", "arguments": {"key": TASK[:6]}},
    {"id": "promote-permanent", "tool": "memory_promote", "arguments": {"key": CONVENTION}},
    {"id": "promote-missing", "tool": "memory_promote", "arguments": {"key": "ffff0000"}},
    {
        "id": "promote-expired-task",
        "tool": "memory_promote",
        "arguments": {"key": TASK, "now": AFTER_EXPIRY},
    },
    # -- feedback ----------------------------------------------------------------------------
    {
        "id": "feedback-negative-comment",
        "tool": "memory_feedback",
        "arguments": {
            "key": DECISION,
            "signal": "NEGATIVE",
            "comment": "SQLite is back on the table",
        },
    },
    {
        "id": "feedback-lowercase-signal",
        "tool": "memory_feedback",
        "arguments": {"memory_id": CONVENTION, "signal": "positive"},
    },
    {
        "id": "feedback-bad-signal",
        "tool": "memory_feedback",
        "arguments": {"key": CONVENTION, "signal": "LIKE"},
    },
    {
        "id": "feedback-missing",
        "tool": "memory_feedback",
        "arguments": {"key": "ffff0000", "signal": "NEUTRAL"},
    },
    # -- knowledge ---------------------------------------------------------------------------
    {"id": "knowledge-merged", "tool": "memory_knowledge", "arguments": {}},
    {
        "id": "knowledge-entries-category",
        "tool": "memory_knowledge",
        "arguments": {"merged": False, "category": "gotcha"},
    },
    {"id": "knowledge-user", "tool": "memory_knowledge", "arguments": {"user_id": "bob"}},
    {
        "id": "knowledge-after-expiry",
        "tool": "memory_knowledge",
        "arguments": {"merged": False, "now": AFTER_EXPIRY},
    },
    {
        "id": "knowledge-entry",
        "tool": "memory_knowledge",
        "arguments": {"entry": entry_id("decision", [DECISION])},
    },
    {
        "id": "knowledge-entry-alias",
        "tool": "memory_knowledge",
        "arguments": {"knowledge_id": entry_id("convention", [CONVENTION])},
    },
    {
        "id": "knowledge-entry-missing",
        "tool": "memory_knowledge",
        "arguments": {"entry": "kn-000000000000"},
    },
    # -- graph search / traverse / query -----------------------------------------------------
    {"id": "graph-search", "tool": "graph_search", "arguments": {"query": "lancedb"}},
    {
        "id": "graph-search-type-limit",
        "tool": "graph_search",
        "arguments": {"query": "config", "type": "THING", "limit": 1},
    },
    {
        "id": "graph-search-user",
        "tool": "graph_search",
        "arguments": {"query": "lancedb", "user_id": "bob"},
    },
    {"id": "graph-search-empty", "tool": "graph_search", "arguments": {"query": "   "}},
    {
        "id": "graph-traverse-authored",
        "tool": "graph_traverse",
        "arguments": {"entity": "Acme Corp"},
        "setup": _team,
    },
    {
        "id": "graph-traverse-outgoing-one-hop",
        "tool": "graph_traverse",
        "arguments": {"entity_id": "Dana Kim", "direction": "outgoing", "hops": 1},
        "setup": _team,
    },
    {"id": "graph-traverse-missing", "tool": "graph_traverse", "arguments": {"entity": "Nobody"}},
    {
        "id": "graph-traverse-hops-too-deep",
        "tool": "graph_traverse",
        "arguments": {"entity": "LanceDB", "hops": 4},
    },
    {
        "id": "graph-query-dont-know",
        "tool": "graph_query",
        "arguments": {"question": "Who owns billing?"},
    },
    {
        "id": "graph-query-authored",
        "tool": "graph_query",
        "arguments": {"question": "Where does Dana Kim work?"},
        "setup": _team,
    },
    {
        "id": "graph-query-open",
        "tool": "graph_query",
        "arguments": {"question": "What is LanceDB?"},
    },
    # -- graph add / relate ------------------------------------------------------------------
    {
        "id": "graph-add-new",
        "tool": "graph_add",
        "arguments": {"name": "Dana Kim", "type": "PERSON", "description": "Owns billing."},
    },
    {
        "id": "graph-add-correct-extracted",
        "tool": "graph_add",
        "arguments": {"name": "ruff", "description": "Linter and formatter for the repository."},
    },
    {"id": "graph-add-empty-name", "tool": "graph_add", "arguments": {"name": "   "}},
    {
        "id": "graph-add-bad-type",
        "tool": "graph_add",
        "arguments": {"name": "Acme", "type": "COMPANY"},
    },
    {
        "id": "graph-relate",
        "tool": "graph_relate",
        "arguments": {"source": "config loader", "relation": "depends on", "target": "tomllib"},
    },
    {
        "id": "graph-relate-aliases",
        "tool": "graph_relate",
        "arguments": {"from": "pytest", "relationType": "USES", "to": "ruff"},
    },
    {
        "id": "graph-relate-again",
        "tool": "graph_relate",
        "arguments": {"source": "Dana Kim", "relation": "WORKS_AT", "target": "Acme Corp"},
        "setup": _team,
    },
    {
        "id": "graph-relate-unknown",
        "tool": "graph_relate",
        "arguments": {"source": "Nobody", "relation": "USES", "target": "ruff"},
    },
    {
        "id": "graph-relate-bad-relation",
        "tool": "graph_relate",
        "arguments": {"source": "pytest", "relation": "uses!", "target": "ruff"},
    },
    {
        "id": "graph-remove-relation",
        "tool": "graph_remove",
        "arguments": {
            "entity": "Dana Kim",
            "relation": "works at",
            "target": "Acme Corp",
            "reason": "she moved",
        },  # fmt: skip
        "setup": _team,
    },
    {
        "id": "graph-remove-entity",
        "tool": "graph_remove",
        "arguments": {"entity": "Acme Corp"},
        "setup": _team,
    },  # fmt: skip
    {"id": "graph-remove-extracted", "tool": "graph_remove", "arguments": {"entity": "pytest"}},
    {"id": "graph-remove-unknown", "tool": "graph_remove", "arguments": {"entity": "Nobody"}},
    {
        "id": "graph-remove-half",
        "tool": "graph_remove",
        "arguments": {"entity": "Dana Kim", "relation": "WORKS_AT"},
        "setup": _team,
    },  # fmt: skip
    # -- stats / profile / entities ----------------------------------------------------------
    {"id": "stats-default", "tool": "memory_stats", "arguments": {}, "setup": _searches},
    {"id": "stats-week", "tool": "memory_stats", "arguments": {"days": 7}},
    {"id": "stats-zero-days", "tool": "memory_stats", "arguments": {"days": 0}},
    {"id": "profile-alice", "tool": "memory_profile", "arguments": {"user": "alice"}},
    {"id": "profile-alias", "tool": "memory_profile", "arguments": {"user_id": "bob"}},
    {"id": "profile-unknown", "tool": "memory_profile", "arguments": {"user": "zed"}},
    {"id": "entities", "tool": "memory_entities", "arguments": {}},
    {"id": "entities-later", "tool": "memory_entities", "arguments": {"now": AFTER_EXPIRY}},
    # -- resolve / doctor -------------------------------------------------------------------
    {
        "id": "resolve-show",
        "tool": "memory_resolve",
        "arguments": {"key": DECISION[:6]},
        "setup": _in_conflict,
    },
    {
        "id": "resolve-keep",
        "tool": "memory_resolve",
        "arguments": {"key": DECISION, "keep": "theirs", "body": "We keep LanceDB."},
        "setup": _in_conflict,
    },
    {"id": "resolve-not-in-conflict", "tool": "memory_resolve", "arguments": {"key": GOTCHA}},
    {
        "id": "resolve-edit-without-keep",
        "tool": "memory_resolve",
        "arguments": {"key": DECISION, "body": "x"},
        "setup": _in_conflict,
    },
    {"id": "doctor", "tool": "memory_doctor", "arguments": {}, "setup": _stray},
    {"id": "doctor-fix", "tool": "memory_doctor", "arguments": {"fix": True}, "setup": _stray},
]

assert NOW.startswith("2026-05-29")  # the cases above assume the seeded clock
