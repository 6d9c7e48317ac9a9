"""Personas: the built-in definitions, workspace additions, not_found, and the recall hint rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nxm.session import personas
from nxs.context import Context
from nxs.errors import NotFoundError, ValidationError
from nxs.ops import validate
from nxs.registry import operations

BUILTIN = ["betty", "jack", "nora", "wren"]
EXTRA = """\
title = "Database whisperer"
description = "Knows the schema and the query planner."
communication_style = "Shows the query and its plan."
guidelines = ["Read the plan before adding an index."]
when_to_use = ["Slow queries"]
keywords = ["index", "query plan", "vacuum"]
"""


def _run(ctx: Context, tool: str, **arguments: Any) -> Any:
    op = next(o for o in operations(["memory"]) if o.tool == tool)
    return op.handler(ctx, **validate(op, arguments))


def test_builtin_personas_are_complete() -> None:
    found = personas.builtin()
    assert list(found) == BUILTIN
    for name, p in found.items():
        assert p["name"] == name and p["source"] == "builtin"
        for field in ("title", "description", "communication_style"):
            assert p[field].strip()
        for field in ("guidelines", "when_to_use", "keywords"):
            assert len(p[field]) >= 3, (name, field)


def test_list_and_show(ctx: Context) -> None:
    listed = _run(ctx, "memory_personas")
    assert listed["total"] == 4
    assert [p["name"] for p in listed["personas"]] == BUILTIN
    assert set(listed["personas"][0]) == {"description", "name", "source", "title", "when_to_use"}
    jack = _run(ctx, "memory_persona", name="jack")["persona"]
    assert jack["title"] == "Pragmatic senior engineer"
    assert set(jack) == {
        "communication_style",
        "description",
        "guidelines",
        "keywords",
        "name",
        "source",
        "title",
        "when_to_use",
    }
    # the seed's parameter name and any case
    assert _run(ctx, "memory_persona", persona_name="NORA")["persona"]["name"] == "nora"


def test_unknown_persona_lists_the_known_ones(ctx: Context) -> None:
    with pytest.raises(NotFoundError) as info:
        _run(ctx, "memory_persona", name="bob")
    assert info.value.message == "no persona named 'bob'; known personas: betty, jack, nora, wren"
    assert info.value.code == "PERSONA_NOT_FOUND"
    assert info.value.exit_code == 3


def test_a_workspace_adds_and_overrides_personas(ctx: Context, workspace: Path) -> None:
    folder = workspace / ".nxs" / "personas"
    folder.mkdir()
    (folder / "dora.toml").write_text(EXTRA)
    (folder / "jack.toml").write_text(EXTRA.replace("Database whisperer", "Our own Jack"))
    listed = _run(ctx, "memory_personas")["personas"]
    assert [(p["name"], p["source"]) for p in listed] == [
        ("betty", "builtin"),
        ("dora", "workspace"),
        ("jack", "workspace"),
        ("nora", "builtin"),
        ("wren", "builtin"),
    ]
    assert _run(ctx, "memory_persona", name="jack")["persona"]["title"] == "Our own Jack"


def test_a_broken_workspace_persona_is_refused_by_show_and_skipped_by_recall(
    ctx: Context, workspace: Path
) -> None:
    folder = workspace / ".nxs" / "personas"
    folder.mkdir()
    (folder / "bad.toml").write_text('title = "x"\n')
    with pytest.raises(ValidationError) as info:
        _run(ctx, "memory_personas")
    assert info.value.code == "BAD_PERSONA"
    assert "description must be a non-empty string" in info.value.message
    (folder / "bad.toml").write_text("title = \n")
    with pytest.raises(ValidationError, match="not valid TOML"):
        _run(ctx, "memory_persona", name="jack")
    assert list(personas.load(workspace / ".nxs", strict=False)) == BUILTIN
    (folder / "bad.toml").write_text(EXTRA + 'name = "other"\n')
    with pytest.raises(ValidationError, match="name must be the file's name"):
        personas.load(workspace / ".nxs")
    (folder / "bad.toml").write_text(EXTRA + 'colour = "red"\n')
    with pytest.raises(ValidationError, match="unknown fields: colour"):
        personas.load(workspace / ".nxs")


@pytest.mark.parametrize(
    ("request_text", "hint"),
    [
        ("Debug this traceback: the build fails after my refactor", "jack"),
        ("Please review the diff and look for a regression", "betty"),
        ("Plan the migration to a new schema and weigh the trade-offs", "nora"),
        ("Write a README tutorial for newcomers", "wren"),
        ("What is the capital of France?", None),
        ("fix it", None),  # one keyword is under the threshold
        ("fix the test", None),  # jack 1, betty 1: a tie gives no hint
    ],
)
def test_hint_rule(request_text: str, hint: str | None) -> None:
    picked = personas.hint(personas.builtin(), request_text, [])
    assert (picked["name"] if picked else None) == hint


def test_hint_counts_distinct_words_and_memory_votes() -> None:
    known = personas.builtin()
    # "documentation" matches both "document" and "documentation": one word, one point
    assert personas.keyword_hits(known["wren"], "documentation documentation") == ["documentation"]
    assert personas.hint(known, "documentation", []) is None
    picked = personas.hint(known, "documentation", ["wren", None, "nobody"])
    assert picked == {
        "name": "wren",
        "reason": "request mentions documentation; 1 recalled memory used wren",
        "score": 2,
    }
    # phrases match in order and are counted once
    assert personas.keyword_hits(known["betty"], "a pull request with an edge case") == [
        "edge case",
        "pull request",
    ]
