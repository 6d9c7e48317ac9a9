"""Parity cases for the session operations (nxm/ops/session.py): recall, store_context, facts,
facts_update, personas and persona. Success and refusal alike; see `state.py`.

The harness empties the user directories before each seam's run and then calls ``setup`` with
``NXS_DATA_DIR`` pointing at them, so facts written in setup are there for both runs and the
conversations recall has seen never carry over from one seam to the other.
"""

from __future__ import annotations

from pathlib import Path

from tests.parity.state import KEYS

CONVENTION, DECISION, GOTCHA, CLOSED, FORGOTTEN, ITEM, TASK = KEYS

FACTS = {"editor": "helix", "family": {"wife": {"name": "Nicole"}}, "langs": ["python", "go"]}

BROAD = (
    "I'm picking this project up again after a break. How do we run the test suite on CI and "
    "how long may it take, where do memories live on disk and which store did we choose, and "
    "what should I know about slow imports at start-up before I add a new command?"
)
LONG = (
    "Before I start the release I want the whole picture. The test suite has to stay fast on "
    "CI with its two cores, and I remember a flaky lock contention test in the store tests. "
    "The memory store is LanceDB under the workspace directory, with vectors and full-text "
    "search together. Imports of lancedb, fastembed and mcp are slow, so they must stay inside "
    "functions. The config loader is moving to tomllib this week and both readers stay until "
    "then. Staging deploys used to go through a make target, and Dana once owned billing. "
    "Tell me what still applies today, what changed since, and what I should check first."
)

PERSONA = """\
title = "Release captain"
description = "Runs the release checklist."
communication_style = "A checklist, one line per step."
guidelines = ["Tag from main only."]
when_to_use = ["Cutting a release"]
keywords = ["release", "tag", "changelog"]
"""


def _facts(root: Path) -> None:
    from nxm.session import facts

    facts.update(FACTS)


def _persona_file(root: Path) -> None:
    folder = root / ".nxs" / "personas"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rex.toml").write_text(PERSONA, encoding="utf-8")


def _big_facts(root: Path) -> None:
    from nxm.session import facts

    facts.update({"notes": "n" * 4000})


CASES = [
    # -- recall ------------------------------------------------------------------------------
    {"id": "recall-short", "tool": "memory_recall", "arguments": {"query": "pytest suite on CI"}},
    {
        "id": "recall-full-query-with-facts",
        "tool": "memory_recall",
        "arguments": {
            "query": "memory store",
            "user_query_full": "Which database did we choose for the memory store, and why?",
            "conversation_id": "nc-store-20260529",
            "program_tool": "claude-code",
        },
        "setup": _facts,
    },
    {
        "id": "recall-full-query-off",
        "tool": "memory_recall",
        "arguments": {
            "query": "lancedb imports",
            "user_query_full": "Why is nxm --help slow?",
            "use_full_query": False,
        },
    },
    {
        "id": "recall-fan-out-topics",
        "tool": "memory_recall",
        "arguments": {
            "query": "project orientation",
            "user_query_full": BROAD,
            "topics": "test suite on CI, memory store choice, slow imports",
            "conversation_id": "nc-orientation-20260529",
        },
    },
    {
        "id": "recall-topics-on-short-query",
        "tool": "memory_recall",
        "arguments": {"query": "tests and store", "topics": "test suite, memory store, imports"},
    },
    {
        "id": "recall-fan-out-derived",
        "tool": "memory_recall",
        "arguments": {"query": "release picture", "user_query_full": LONG},
    },
    {
        "id": "recall-persona-hint",
        "tool": "memory_recall",
        "arguments": {"query": "review the flaky test and check for a regression"},
    },
    {
        "id": "recall-empty-query",
        "tool": "memory_recall",
        "arguments": {"query": "   "},
    },
    {
        "id": "recall-topics-too-long",
        "tool": "memory_recall",
        "arguments": {"query": "tests", "topics": "t, " * 700},
    },
    # -- store_context -----------------------------------------------------------------------
    {
        "id": "store-context-new",
        "tool": "memory_store_context",
        "arguments": {
            "summary": "Decided to keep both TOML readers until the tomllib branch lands.",
            "context": "Checked pyproject.toml: `toml` is still imported by nxs/workspace.py.\n"
            "Error before the fix: ModuleNotFoundError: No module named 'toml'\n",
            "conversation_id": "nc-config-20260529",
            "user_query": "Can we drop the toml dependency now?",
            "persona": "jack",
            "billable": False,
            "client_project": "nxs",
        },
    },
    {
        "id": "store-context-summary-too-long",
        "tool": "memory_store_context",
        "arguments": {
            "summary": " ".join(["word"] * 113),
            "context": "detail",
            "conversation_id": "nc-x-20260529",
        },
    },
    {
        "id": "store-context-no-conversation",
        "tool": "memory_store_context",
        "arguments": {"summary": "Short summary.", "context": "detail"},
    },
    # -- facts -------------------------------------------------------------------------------
    {"id": "facts-empty", "tool": "memory_facts", "arguments": {}},
    {"id": "facts-present", "tool": "memory_facts", "arguments": {}, "setup": _facts},
    {
        "id": "facts-update-merge",
        "tool": "memory_facts_update",
        "arguments": {
            "facts_patch": {
                "family": {"son": {"name": "Leo"}},
                "langs": ["rust"],
                "editor": None,
            }
        },
        "setup": _facts,
    },
    {
        "id": "facts-update-alias-json-text",
        "tool": "memory_facts_update",
        "arguments": {"patch": '{"tz": "Europe/Paris"}'},
    },
    {
        "id": "facts-update-oversize",
        "tool": "memory_facts_update",
        "arguments": {"facts_patch": {"more": "m" * 200}},
        "setup": _big_facts,
    },
    {
        "id": "facts-update-empty",
        "tool": "memory_facts_update",
        "arguments": {"facts_patch": {}},
    },
    {
        "id": "facts-update-not-an-object",
        "tool": "memory_facts_update",
        "arguments": {"facts_patch": "[1, 2]"},
    },
    # -- personas ----------------------------------------------------------------------------
    {"id": "personas-builtin", "tool": "memory_personas", "arguments": {}},
    {
        "id": "personas-with-workspace-file",
        "tool": "memory_personas",
        "arguments": {},
        "setup": _persona_file,
    },
    {"id": "persona-jack", "tool": "memory_persona", "arguments": {"name": "jack"}},
    {
        "id": "persona-seed-name-workspace",
        "tool": "memory_persona",
        "arguments": {"persona_name": "rex"},
        "setup": _persona_file,
    },
    {"id": "persona-unknown", "tool": "memory_persona", "arguments": {"name": "bob"}},
]
