"""store_context: a session's summary and full context become one session-scoped memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nxm.cli import app
from nxm.session.recall import SUMMARY_MAX_TOKENS, estimate_tokens
from nxs.context import Context
from nxs.errors import ValidationError
from nxs.ops import validate
from nxs.registry import operations

SUMMARY = "Decided on PostgreSQL 15 with Prisma ORM for the e-commerce API."
CONTEXT = (
    "Evaluated Prisma vs Drizzle. Chose Prisma for migration tooling and team familiarity.\n"
    "Connection string in .env as DATABASE_URL. Schema lives in prisma/schema.prisma.\n"
    "Error seen: P1001: Can't reach database server at `localhost:5432`\n"
)
QUERY = "What ORM should we use with Postgres for the e-commerce project?"


def _run(ctx: Context, tool: str, **arguments: Any) -> Any:
    op = next(o for o in operations(["memory"]) if o.tool == tool)
    return op.handler(ctx, **validate(op, arguments))


def store(ctx: Context, **extra: Any) -> dict[str, Any]:
    args = {"summary": SUMMARY, "context": CONTEXT, "conversation_id": "nc-ecommerce-db-20260529"}
    return _run(ctx, "memory_store_context", **{**args, **extra})


def test_stored_as_a_session_memory(ctx: Context) -> None:
    out = store(
        ctx,
        user_query=QUERY,
        persona="nora",
        billable=True,
        company_client="Acme",
        client_project="e-commerce",
        artifact_url="https://example.invalid/doc/1",
    )
    assert out == {
        "context_chars": len(CONTEXT),
        "conversation_id": "nc-ecommerce-db-20260529",
        "created": True,
        "introduction": SUMMARY,
        "memory_id": out["memory_id"],
        "summary_tokens": 15,
    }
    m = _run(ctx, "memory_show", memory_id=out["memory_id"])["memory"]
    assert m["body"] == f"{SUMMARY}\n\n{CONTEXT.rstrip(chr(10))}"
    assert (m["scope"], m["category"], m["session_id"]) == (
        "session",
        "session-context",
        "nc-ecommerce-db-20260529",
    )
    assert m["metadata"] == {"summary": SUMMARY}
    assert (m["user_query"], m["persona"], m["billable"]) == (QUERY, "nora", True)
    assert (m["company_client"], m["client_project"], m["artifact_url"]) == (
        "Acme",
        "e-commerce",
        "https://example.invalid/doc/1",
    )
    assert (m["created"], m["actor"]) == ("2026-05-29T10:00:00.000Z", "tester")


def test_storing_the_same_session_twice_returns_the_first(ctx: Context) -> None:
    first = store(ctx)
    again = store(ctx)
    assert again == {**first, "created": False}


def test_introduction_is_the_first_line_cut_to_200(ctx: Context) -> None:
    long_line = " ".join(["word"] * 60)  # 299 characters, 60 words: 80 tokens
    out = store(ctx, summary=f"  {long_line}\nsecond line of the summary")
    assert out["introduction"] == long_line[:199] + "…"
    assert len(out["introduction"]) == 200


def test_summary_token_limit_is_112_words(ctx: Context) -> None:
    assert estimate_tokens(" ".join(["w"] * 112)) == 150 == SUMMARY_MAX_TOKENS
    assert estimate_tokens(" ".join(["w"] * 113)) == 151
    assert store(ctx, summary=" ".join(["ok"] * 112))["summary_tokens"] == 150
    with pytest.raises(ValidationError) as info:
        store(ctx, summary=" ".join(["no"] * 113))
    assert info.value.code == "SUMMARY_TOO_LONG"
    assert info.value.message == (
        "summary is about 151 tokens (113 words x 4/3); a summary is 50-75 tokens, at most 150"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"summary": "  \n "}, "summary must not be empty"),
        ({"context": " \n\t"}, "context must not be empty"),
        ({"conversation_id": "  "}, "conversation_id must not be empty"),
        ({"summary": "x" * 1201}, "summary is 1201 characters; at most 1200 are allowed"),
    ],
)
def test_refusals_write_nothing(
    ctx: Context, workspace: Path, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as info:
        store(ctx, **args)
    assert info.value.message == message
    assert ctx.memory.store.records() == {}
    assert not (workspace / "NEXUS_MEMORY.md").exists()


def test_conversation_id_is_required(ctx: Context) -> None:
    with pytest.raises(ValidationError, match="conversation_id is required"):
        _run(ctx, "memory_store_context", summary=SUMMARY, context=CONTEXT)


def test_a_large_context_is_kept_verbatim(ctx: Context) -> None:
    block = "line with `$PATH` and C:\\tmp\\x and a tab\there\n"
    context = (block * (200_000 // len(block) + 1))[:200_000]
    out = store(ctx, context=context)
    assert out["context_chars"] == 200_000
    body = ctx.memory.show(key=out["memory_id"])["memory"]["body"]
    assert body[len(SUMMARY) + 2 :] == context.rstrip("\n")
    with pytest.raises(ValidationError, match="at most 200000"):
        store(ctx, context=context + "x")


def test_recall_finds_it_by_the_verbatim_user_query(ctx: Context) -> None:
    _run(ctx, "memory_add", body="Lunch is at noon on Fridays.", introduction="Lunch at noon")
    stored = store(ctx, user_query=QUERY)
    out = _run(
        ctx,
        "memory_recall",
        query="orm",
        user_query_full=QUERY,
        conversation_id="nc-ecommerce-db-20260530",
    )
    top = out["memories"][0]
    assert top == {
        "confidence": top["confidence"],
        "memory_id": stored["memory_id"],
        "snippet": top["snippet"],
        "snippet_truncated": True,
        "summary": SUMMARY,
        "truncated": True,
    }


def test_session_context_stays_out_of_prime(ctx: Context, workspace: Path) -> None:
    from nxs.prime import prime_text

    _run(ctx, "memory_add", body="Release tags come from main.", introduction="Tags from main")
    stored = store(ctx)
    text = prime_text(str(workspace), now="2026-05-29T10:00:00Z")
    assert "Tags from main" in text
    assert stored["memory_id"] not in text and SUMMARY not in text


def test_cli_store_context(workspace: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "store-context",
            "--summary",
            SUMMARY,
            "--context",
            CONTEXT,
            "--conversation-id",
            "nc-cli-1",
            "--no-billable",
            "--json",
            "--now",
            "2026-05-29T10:00:00Z",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes.startswith(b'{"context_chars":')
    refused = CliRunner().invoke(app, ["store-context", "--summary", SUMMARY, "--json"])
    assert refused.exit_code == 2
    assert b'"message":"context is required"' in refused.stdout_bytes


@pytest.mark.model
def test_real_model_recalls_a_stored_session_by_meaning(tmp_path: Path) -> None:
    from nxm.embed.model import MODEL_NAME, model_status
    from tests.conftest import make_workspace

    if not model_status()["installed"]:
        pytest.skip(f"{MODEL_NAME} is not installed: run `nxm model setup`")
    root = make_workspace(tmp_path / "real", MODEL_NAME)
    ctx = Context(now="2026-05-29T10:00:00.000Z", actor="tester", workspace_arg=str(root))
    _run(
        ctx,
        "memory_add",
        body="Lunch is ordered from the Thai place on Fridays; vegetarian options are marked.",
        introduction="Friday lunch comes from the Thai place",
    )
    stored = store(ctx)
    out = _run(ctx, "memory_recall", query="which relational database did we pick for the shop")
    first, *rest = out["memories"]
    assert first["memory_id"] == stored["memory_id"]
    # the lunch memory is clearly less alike, or below the relevance floor and not returned
    for other in rest:
        assert first["confidence"] > other["confidence"] + 0.1
        assert 0.0 <= other["confidence"] < first["confidence"] <= 1.0
