"""Parity cases for the memory core: add, update, classify, close/reopen, forget/restore, purge,
show, list, search and history (nxm/ops/). Success and refusal alike; see `state.py`."""

from __future__ import annotations

import orjson

from tests.parity.state import KEYS, SEED

CONVENTION, DECISION, GOTCHA, CLOSED, FORGOTTEN, ITEM, TASK = KEYS
MISSING = "ffff0000"
SEED_BODIES = [orjson.loads(raw)["body"] for raw in SEED.read_bytes().splitlines() if raw]

NEW_BODY = (
    "Release tags are cut from main only: the release workflow refuses tags on any other "
    "branch, so merge first and tag the merge commit."
)

CASES = [
    # -- add ---------------------------------------------------------------------------------
    {
        "id": "add-new",
        "tool": "memory_add",
        "arguments": {
            "body": NEW_BODY,
            "introduction": "Release tags are cut from main only; the workflow refuses others.",
            "category": "convention",
        },
    },
    {
        "id": "add-classified-with-provenance",
        "tool": "memory_add",
        "arguments": {
            "body": "ENG-51: the importer drops rows whose key has trailing spaces; strip first.",
            "introduction": "ENG-51: strip keys before importing; trailing spaces drop rows.",
            "category": "gotcha",
            "scope": "item",
            "refs": ["ENG-51", "nxm/port.py"],
            "priority": "HIGH",
            "user_id": "alice",
            "agent_id": "claude-code",
            "session_id": "s-0529",
            "metadata": {"source": "review", "pr": 88},
        },
    },
    {
        "id": "add-task-layer",
        "tool": "memory_add",
        "arguments": {
            "body": "Today the CI runners are being migrated; expect queued jobs until 18:00 UTC.",
            "introduction": "CI runners are migrating today; jobs queue until 18:00 UTC.",
            "layer": "TASK",
            "ttl_days": 1.5,
        },
    },
    {
        "id": "add-body-starting-with-dashes",
        "tool": "memory_add",
        "arguments": {
            "body": "--no-verify must never be used on commits to main; hooks run the linters.",
            "introduction": "Never commit to main with --no-verify; the hooks run the linters.",
        },
    },
    {
        "id": "add-alias-content",
        "tool": "memory_add",
        "arguments": {
            "content": "Ownership of the docs site moved to the platform team in May 2026.",
            "introduction": "The platform team owns the docs site since May 2026.",
        },
    },
    {
        "id": "add-supersedes",  # one write: the decision closed and linked, in both histories
        "tool": "memory_add",
        "arguments": {
            "body": SEED_BODIES[1] + " Replaced in June 2026 after the review.",
            "introduction": "The decision was replaced in June 2026.",
            "supersedes": DECISION,
        },
    },
    {
        "id": "add-supersedes-missing",
        "tool": "memory_add",
        "arguments": {"body": "A new fact.", "introduction": "A new fact", "supersedes": MISSING},
    },
    {
        "id": "add-supersedes-forgotten",
        "tool": "memory_add",
        "arguments": {"body": "A new fact.", "introduction": "A new fact", "supersedes": FORGOTTEN},
    },
    {
        "id": "add-duplicate-returns-existing",
        "tool": "memory_add",
        "arguments": {"body": SEED_BODIES[0], "introduction": "Anything: the body decides."},
    },
    {
        "id": "add-empty-body",
        "tool": "memory_add",
        "arguments": {"body": "   ", "introduction": "Nothing"},
    },
    {
        "id": "add-missing-introduction",
        "tool": "memory_add",
        "arguments": {"body": "A memory without an introduction is refused."},
    },
    {
        "id": "add-introduction-too-long",
        "tool": "memory_add",
        "arguments": {"body": "Long introductions are refused.", "introduction": "x" * 201},
    },
    {
        "id": "add-unknown-scope",
        "tool": "memory_add",
        "arguments": {"body": "Scope must be known.", "introduction": "Scopes", "scope": "galaxy"},
    },
    {
        "id": "add-item-scope-without-refs",
        "tool": "memory_add",
        "arguments": {"body": "Item scope needs refs.", "introduction": "Refs", "scope": "item"},
    },
    {
        "id": "add-metadata-not-json",
        "tool": "memory_add",
        "arguments": {"body": "Metadata is JSON.", "introduction": "Meta", "metadata": "{oops"},
    },
    # -- update ------------------------------------------------------------------------------
    {
        "id": "update-body-and-introduction",
        "tool": "memory_update",
        "arguments": {
            "key": DECISION[:6],
            "introduction": "Memories live in LanceDB: one table holds rows, vectors and FTS.",
            "body": SEED_BODIES[1] + " Revisited in May: still the right call.",
        },
    },
    {
        "id": "update-priority",
        "tool": "memory_update",
        "arguments": {
            "key": DECISION,
            "introduction": "Memories live in LanceDB under .nxs/memory so vectors, rows and "
            "full-text search share one store.",
            "priority": "HIGH",
        },
    },
    {
        "id": "update-no-op-refused",
        "tool": "memory_update",
        "arguments": {
            "key": GOTCHA,
            "introduction": "Import lancedb, fastembed and mcp inside functions only: each costs "
            "seconds at start-up.",
        },
    },
    {
        "id": "update-missing-key",
        "tool": "memory_update",
        "arguments": {"key": MISSING, "introduction": "Nothing here"},
    },
    {
        "id": "update-body-only",
        "tool": "memory_update",
        "arguments": {"key": DECISION, "body": "A new body without an introduction."},
    },
    {
        "id": "update-priority-only",
        "tool": "memory_update",
        "arguments": {"key": GOTCHA, "priority": "LOW"},
    },
    {
        "id": "update-nothing-given",
        "tool": "memory_update",
        "arguments": {"key": GOTCHA},
    },
    # -- classify ----------------------------------------------------------------------------
    {
        "id": "classify-to-item",
        "tool": "memory_classify",
        "arguments": {"key": GOTCHA, "scope": "item", "refs": ["ENG-77", "nxs/cli.py"]},
    },
    {
        "id": "classify-category-and-introduction",
        "tool": "memory_classify",
        "arguments": {
            "key": CONVENTION[:4],
            "category": "testing",
            "introduction": "Run `pytest -q`; the whole suite must stay near ten minutes on CI.",
        },
    },
    {
        "id": "classify-item-without-refs",
        "tool": "memory_classify",
        "arguments": {"key": DECISION, "scope": "item"},
    },
    {
        "id": "classify-missing-key",
        "tool": "memory_classify",
        "arguments": {"key": MISSING, "category": "x"},
    },
    # -- close / reopen ----------------------------------------------------------------------
    {"id": "close-open", "tool": "memory_close", "arguments": {"key": CONVENTION}},
    {"id": "close-already-closed", "tool": "memory_close", "arguments": {"key": CLOSED}},
    {"id": "close-missing", "tool": "memory_close", "arguments": {"key": MISSING}},
    {"id": "reopen-closed", "tool": "memory_reopen", "arguments": {"key": CLOSED[:5]}},
    {"id": "reopen-open-refused", "tool": "memory_reopen", "arguments": {"key": TASK}},
    # -- forget / restore / purge ------------------------------------------------------------
    {"id": "forget-open", "tool": "memory_forget", "arguments": {"key": DECISION}},
    {"id": "forget-closed", "tool": "memory_forget", "arguments": {"key": CLOSED}},
    {"id": "forget-forgotten-refused", "tool": "memory_forget", "arguments": {"key": FORGOTTEN}},
    {"id": "restore-forgotten", "tool": "memory_restore", "arguments": {"key": FORGOTTEN}},
    {"id": "restore-open-refused", "tool": "memory_restore", "arguments": {"key": ITEM}},
    {"id": "purge-forgotten", "tool": "memory_purge", "arguments": {"key": FORGOTTEN}},
    {"id": "purge-open-refused", "tool": "memory_purge", "arguments": {"key": CONVENTION}},
    {"id": "purge-missing", "tool": "memory_purge", "arguments": {"key": MISSING}},
    # -- show --------------------------------------------------------------------------------
    {"id": "show-full-key", "tool": "memory_show", "arguments": {"key": ITEM}},
    {"id": "show-prefix", "tool": "memory_show", "arguments": {"key": FORGOTTEN[:4]}},
    {"id": "show-alias-memory-id", "tool": "memory_show", "arguments": {"memory_id": TASK}},
    {"id": "show-missing", "tool": "memory_show", "arguments": {"key": MISSING}},
    {"id": "show-key-too-long", "tool": "memory_show", "arguments": {"key": "a" * 65}},
    # -- list --------------------------------------------------------------------------------
    {"id": "list-default", "tool": "memory_list", "arguments": {}},
    {"id": "list-all-statuses", "tool": "memory_list", "arguments": {"status": "all"}},
    {"id": "list-closed", "tool": "memory_list", "arguments": {"status": "closed"}},
    {"id": "list-forgotten", "tool": "memory_list", "arguments": {"status": "forgotten"}},
    {"id": "list-item-scope", "tool": "memory_list", "arguments": {"scope": "item"}},
    {"id": "list-by-ref", "tool": "memory_list", "arguments": {"ref": "ENG-42"}},
    {"id": "list-by-category", "tool": "memory_list", "arguments": {"category": "gotcha"}},
    {"id": "list-by-user", "tool": "memory_list", "arguments": {"user_id": "bob"}},
    {"id": "list-task-layer", "tool": "memory_list", "arguments": {"layer": "TASK"}},
    {
        "id": "list-second-page",
        "tool": "memory_list",
        "arguments": {"status": "all", "page": 2, "page_size": 3},
    },
    {"id": "list-alias-limit", "tool": "memory_list", "arguments": {"limit": 2}},
    {"id": "list-page-size-zero", "tool": "memory_list", "arguments": {"page_size": 0}},
    {"id": "list-unknown-status", "tool": "memory_list", "arguments": {"status": "archived"}},
    # -- search ------------------------------------------------------------------------------
    {"id": "search-hybrid", "tool": "memory_search", "arguments": {"query": "lancedb import"}},
    {
        "id": "search-keyword",
        "tool": "memory_search",
        "arguments": {"query": "pytest suite minutes", "mode": "keyword", "limit": 3},
    },
    {
        "id": "search-semantic",
        "tool": "memory_search",
        "arguments": {"query": "where are memories stored", "mode": "semantic"},
    },
    {
        "id": "search-filtered",
        "tool": "memory_search",
        "arguments": {"query": "flaky test lock", "scope": "item", "ref": "ENG-42"},
    },
    {
        "id": "search-closed",
        "tool": "memory_search",
        "arguments": {"query": "deploy staging", "status": "closed"},
    },
    {"id": "search-no-match", "tool": "memory_search", "arguments": {"query": "kubernetes"}},
    {
        "id": "search-limit-over-max",
        "tool": "memory_search",
        "arguments": {"query": "lancedb", "limit": 50},
    },
    {
        "id": "search-unknown-mode",
        "tool": "memory_search",
        "arguments": {"query": "lancedb", "mode": "fuzzy"},
    },
    # -- history -----------------------------------------------------------------------------
    {"id": "history-newest", "tool": "memory_history", "arguments": {"key": DECISION}},
    {
        "id": "history-oldest-limited",
        "tool": "memory_history",
        "arguments": {"key": CLOSED, "order": "oldest", "limit": 1},
    },
    {"id": "history-missing", "tool": "memory_history", "arguments": {"key": MISSING}},
]
