"""Recall (seed 000 recall_context): fan-out trigger and table, dedup, caps, facts, persona hint.

Most tests drive `recall` over a fake service whose search answers are fixed, so every count is
exact; the last ones run on a real workspace store.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from nxm.record import new_record
from nxm.session import facts
from nxm.session.recall import (
    FANOUT_MIN_CHARS,
    LONG_QUERY_CHARS,
    PER_TOPIC,
    SUMMARY_MAX_CHARS,
    derive_topics,
    parse_topics,
    plan,
    recall,
    summarize,
)
from nxs.context import Context
from nxs.errors import ValidationError
from nxs.ops import validate
from nxs.paths import data_dir
from nxs.registry import operations

NOW = "2026-05-29T10:00:00.000Z"


class FakeStore:
    def __init__(self, records: dict[str, dict[str, Any]]) -> None:
        self._records = records

    def records(self) -> dict[str, dict[str, Any]]:
        return self._records

    def vectors(self, keys: list[str]) -> dict[str, list[float]]:
        return {}


class FakeWorkspace:
    def __init__(self, root: Path) -> None:
        self.dir = root / ".nxs"


class FakeService:
    """A service whose search returns, for each query, the keys `answers` gives it."""

    def __init__(self, root: Path, answers: Any, records: dict[str, dict[str, Any]]) -> None:
        self.answers = answers
        self.store = FakeStore(records)
        self.ws = FakeWorkspace(root)
        self.calls: list[tuple[str, int]] = []

    def embedder(self) -> None:
        return None

    def noted(self, answer: dict[str, Any]) -> dict[str, Any]:
        return answer  # no file it could not read

    def search(self, *, query: str, mode: str, limit: int, now: str) -> dict[str, Any]:
        assert mode == "hybrid" and now == NOW
        self.calls.append((query, limit))
        keys = self.answers(query)[:limit]
        results = [
            {"key": k, "semantic": 0.9 - i / 100, "snippet": f"of {k}", "snippet_truncated": False}
            for i, k in enumerate(keys)
        ]
        return {"mode": mode, "query": query, "results": results, "total": len(results)}


def record(key: str, body: str = "", intro: str = "", **extra: Any) -> dict[str, Any]:
    return new_record(
        key=key, introduction=intro or f"memory {key}", body=body or f"body of {key}", **extra
    )


def service(tmp_path: Path, answers: Any, n: int = 100) -> FakeService:
    records = {f"k{i:03d}": record(f"k{i:03d}") for i in range(n)}
    return FakeService(tmp_path, answers, records)


def by_topic(query: str) -> list[str]:
    """Each topic ``tN`` gets its own 20 keys, disjoint from the others'."""
    base = int(query.strip("t")) * 20 if query.startswith("t") and query[1:].isdigit() else 0
    return [f"k{base + i:03d}" for i in range(20)]


def text_of(n: int) -> str:
    """A request of exactly ``n`` characters."""
    return ("why is the deploy slow " * 50)[:n]


# -- the trigger ------------------------------------------------------------------------------


def test_two_topics_fan_out_at_200_characters_not_at_199(tmp_path: Path) -> None:
    assert (FANOUT_MIN_CHARS, LONG_QUERY_CHARS) == (200, 600)
    svc = service(tmp_path, by_topic)
    short = recall(svc, query=text_of(199), topics="t0, t1", now=NOW)
    assert short["fanned_out"] is False
    assert "topic_groups" not in short and "topic_count" not in short
    assert svc.calls == [(text_of(199), 10)]
    svc.calls.clear()
    long = recall(svc, query=text_of(200), topics="t0, t1", now=NOW)
    assert long["fanned_out"] is True
    assert long["topic_count"] == 2
    assert svc.calls == [("t0", 8), ("t1", 8)]


def test_one_topic_on_a_long_request_does_not_fan_out(tmp_path: Path) -> None:
    svc = service(tmp_path, by_topic)
    out = recall(svc, query=text_of(LONG_QUERY_CHARS), topics="t0", now=NOW)
    assert out["fanned_out"] is False
    assert len(svc.calls) == 1 and out["total"] == 10


def test_many_topics_on_a_short_request_never_fan_out(tmp_path: Path) -> None:
    svc = service(tmp_path, by_topic)
    out = recall(svc, query="deploy auth", topics="t0,t1,t2,t3,t4", now=NOW)
    assert out["fanned_out"] is False
    assert svc.calls == [("deploy auth", 10)]


def test_repeated_topics_count_once(tmp_path: Path) -> None:
    svc = service(tmp_path, by_topic)
    out = recall(svc, query=text_of(300), topics="t1, T1 ,t1", now=NOW)
    assert out["fanned_out"] is False
    assert parse_topics("t1, T1 ,t1") == ["t1"]


def test_length_threshold_is_exclusive_and_derives_topics(tmp_path: Path) -> None:
    sentences = (
        "The bearer auth tokens expire after an hour and clients fail. "
        "Our deploy pipeline on Fridays takes forty minutes to finish. "
        "Database migrations lock the orders table during the release. "
    )
    text = (sentences * 8)[:LONG_QUERY_CHARS]
    assert plan(text, None) == ([], False)
    longer = (sentences * 8)[: LONG_QUERY_CHARS + 1]
    topics, derived = plan(longer, None)
    assert derived is True
    assert topics == derive_topics(longer)
    assert 2 <= len(topics) <= 5
    assert all(len(t.split()) <= 10 for t in topics)
    svc = service(tmp_path, by_topic)
    out = recall(svc, query=longer, now=NOW)
    assert out["fanned_out"] is True and out["topics_derived"] is True
    assert [g["topic"] for g in out["topic_groups"]] == topics


def test_derived_topics_are_deterministic_and_follow_the_text() -> None:
    text = (
        "Postgres connection pool exhausted under load. Deploy pipeline slow on Fridays. "
        "Bearer auth token refresh fails on mobile. Flaky test in the payments suite. "
        "Docs for the release process are out of date."
    )
    assert derive_topics(text) == [
        "postgres connection pool exhausted load",
        "deploy pipeline slow fridays",
        "bearer auth token refresh fails mobile",
        "flaky test payments suite",
        "docs release process date",
    ]
    assert derive_topics(text) == derive_topics(text)
    # one given topic comes first, the rest are derived
    topics, derived = plan(text * 3, "billing")
    assert topics[0] == "billing" and derived is True and len(topics) == 5


def test_a_single_run_on_sentence_is_cut_into_word_runs() -> None:
    words = " ".join(f"word{i:02d}" for i in range(25))
    assert derive_topics(words) == [
        " ".join(f"word{i:02d}" for i in range(0, 8)),
        " ".join(f"word{i:02d}" for i in range(8, 16)),
        " ".join(f"word{i:02d}" for i in range(16, 25)),
    ]


def test_topics_are_cut_to_ten_words_and_five_topics() -> None:
    eleven = " ".join(f"w{i}" for i in range(11))
    assert parse_topics(eleven) == [" ".join(f"w{i}" for i in range(10))]
    assert plan(text_of(250), "a,b,c,d,e,f,g")[0] == ["a", "b", "c", "d", "e"]


# -- the table --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "per", "total"), [(1, 10, 10), (2, 8, 16), (3, 7, 21), (4, 6, 24), (5, 6, 30), (7, 6, 30)]
)
def test_per_topic_table(tmp_path: Path, n: int, per: int, total: int) -> None:
    svc = service(tmp_path, by_topic, n=200)
    topics = ",".join(f"t{i}" for i in range(n))
    out = recall(svc, query=text_of(250), topics=topics, now=NOW)
    if n == 1:
        assert out["fanned_out"] is False
        assert svc.calls == [(text_of(250), 10)]
    else:
        used = min(n, 5)
        assert out["topic_count"] == used
        assert svc.calls == [(f"t{i}", per) for i in range(used)]
        assert [len(g["memory_ids"]) for g in out["topic_groups"]] == [per] * used
    assert out["total"] == len(out["memories"]) == total
    assert PER_TOPIC == {1: 10, 2: 8, 3: 7, 4: 6, 5: 6}


def test_memories_are_flat_and_deduplicated_groups_carry_ids_only(tmp_path: Path) -> None:
    answers = {"auth": ["k001", "k002", "k003"], "deploy": ["k002", "k004"]}
    svc = service(tmp_path, lambda q: answers[q])
    out = recall(svc, query=text_of(220), topics="auth, deploy", now=NOW)
    assert out["topic_groups"] == [
        {"memory_ids": ["k001", "k002", "k003"], "topic": "auth"},
        {"memory_ids": ["k002", "k004"], "topic": "deploy"},
    ]
    # round-robin over the branches, each memory once
    assert [m["memory_id"] for m in out["memories"]] == ["k001", "k002", "k004", "k003"]
    assert out["total"] == 4
    # a memory found by two topics keeps its best confidence
    assert {m["memory_id"]: m["confidence"] for m in out["memories"]} == {
        "k001": 0.9,
        "k002": 0.9,  # 0.89 under auth, 0.9 under deploy
        "k003": 0.88,
        "k004": 0.89,
    }
    assert set(out["memories"][0]) == {
        "confidence",
        "memory_id",
        "snippet",
        "snippet_truncated",
        "summary",
        "truncated",
    }


# -- what is searched, what is shown ----------------------------------------------------------


def test_user_query_full_is_searched_unless_turned_off(tmp_path: Path) -> None:
    svc = service(tmp_path, by_topic)
    out = recall(svc, query="db", user_query_full="  What database did we pick?  ", now=NOW)
    assert out["searched"] == "user_query_full"
    off = recall(svc, query="db", user_query_full="What database?", use_full_query=False, now=NOW)
    assert off["searched"] == "query"
    blank = recall(svc, query="db", user_query_full="   ", now=NOW)
    assert blank["searched"] == "query"
    assert [q for q, _ in svc.calls] == ["What database did we pick?", "db", "db"]


def test_the_fan_out_trigger_measures_the_text_searched(tmp_path: Path) -> None:
    svc = service(tmp_path, by_topic)
    out = recall(svc, query="db", user_query_full=text_of(200), topics="t0,t1", now=NOW)
    assert out["fanned_out"] is True
    out = recall(
        svc,
        query="db",
        user_query_full=text_of(200),
        use_full_query=False,
        topics="t0,t1",
        now=NOW,
    )
    assert out["fanned_out"] is False


def test_an_empty_query_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="query must not be empty"):
        recall(service(tmp_path, by_topic), query="  ", now=NOW)


def test_summary_is_capped_at_1200_characters() -> None:
    long = record("a", body="x" * 5000, intro="Long one")
    text, more = summarize(long)
    assert len(text) == SUMMARY_MAX_CHARS == 1200
    assert text == "Long one\n\n" + "x" * 1189 + "…"
    assert more is True
    exact = record("b", body="y" * (1200 - len("Intro\n\n")), intro="Intro")
    assert summarize(exact) == ("Intro\n\n" + "y" * 1193, False)
    # a body that starts with its introduction is not repeated
    assert summarize(record("c", body="Intro line\nmore", intro="Intro line")) == (
        "Intro line\nmore",
        False,
    )


def test_a_stored_context_shows_its_summary() -> None:
    r = record(
        "s",
        body="Chose Postgres.\n\nlong context",
        intro="Chose Postgres.",
        category="session-context",
        metadata={"summary": "Chose Postgres."},
    )
    assert summarize(r) == ("Chose Postgres.", True)


def test_confidence_is_clamped_to_0_1(tmp_path: Path) -> None:
    class Odd(FakeService):
        def search(self, **kw: Any) -> dict[str, Any]:
            cut = {"snippet": "", "snippet_truncated": False}
            res = [
                {"key": "k001", "semantic": 1.2, **cut},
                {"key": "k002", "semantic": -0.3, **cut},
            ]
            return {"results": res}

    svc = Odd(tmp_path, None, {k: record(k) for k in ("k001", "k002")})
    out = recall(svc, query="x", now=NOW)
    assert [m["confidence"] for m in out["memories"]] == [1.0, 0.0]


# -- user facts, once per conversation --------------------------------------------------------


def test_facts_are_injected_once_per_conversation(tmp_path: Path) -> None:
    facts.update({"editor": "helix", "family": {"wife": {"name": "Nicole"}}})
    svc = service(tmp_path, by_topic)
    first = recall(svc, query="q", conversation_id="nc-a-20260529", now=NOW)
    assert first["user_facts"] == {"editor": "helix", "family": {"wife": {"name": "Nicole"}}}
    again = recall(svc, query="q", conversation_id="nc-a-20260529", now=NOW)
    assert "user_facts" not in again
    other = recall(svc, query="q", conversation_id="nc-b-20260529", now=NOW)
    assert "user_facts" in other
    # no conversation id: nothing to remember it by, so every such recall gets them
    assert "user_facts" in recall(svc, query="q", now=NOW)
    assert "user_facts" in recall(svc, query="q", now=NOW)
    seen = data_dir() / "conversations.json"
    assert stat.S_IMODE(seen.stat().st_mode) == 0o600
    assert not (tmp_path / ".nxs").exists()


def test_no_facts_no_key(tmp_path: Path) -> None:
    out = recall(service(tmp_path, by_topic), query="q", conversation_id="c", now=NOW)
    assert "user_facts" not in out


def test_a_refused_recall_does_not_mark_the_conversation(tmp_path: Path) -> None:
    facts.update({"editor": "helix"})
    svc = service(tmp_path, by_topic)
    with pytest.raises(ValidationError):
        recall(svc, query=" ", conversation_id="c1", now=NOW)
    assert "user_facts" in recall(svc, query="q", conversation_id="c1", now=NOW)


# -- persona hint -----------------------------------------------------------------------------


def test_persona_hint_from_the_request(tmp_path: Path) -> None:
    svc = service(tmp_path, lambda q: [])
    out = recall(svc, query="review this pull request and its test coverage", now=NOW)
    assert out["persona_hint"] == "betty"
    assert out["persona_reason"] == "request mentions coverage, pull request, review, test"
    none = recall(svc, query="what did we decide about lunch", now=NOW)
    assert "persona_hint" not in none and "persona_reason" not in none


def test_persona_hint_from_recalled_memories(tmp_path: Path) -> None:
    records = {
        "k1": record("k1", persona="nora"),
        "k2": record("k2", persona="nora"),
        "k3": record("k3", persona="someone-else"),
    }
    svc = FakeService(tmp_path, lambda q: ["k1", "k2", "k3"], records)
    out = recall(svc, query="what about the orders service", now=NOW)
    assert out["persona_hint"] == "nora"
    assert out["persona_reason"] == "2 recalled memories used nora"


# -- on a real store --------------------------------------------------------------------------


def _run(ctx: Context, tool: str, **arguments: Any) -> Any:
    op = next(o for o in operations(["memory"]) if o.tool == tool)
    return op.handler(ctx, **validate(op, arguments))


def test_recall_on_a_store_finds_memories_and_keeps_facts_out_of_the_workspace(
    ctx: Context, workspace: Path
) -> None:
    _run(
        ctx,
        "memory_add",
        body="Release tags are cut from main only; CI refuses tags on other branches.",
        introduction="Release tags come from main only",
    )
    _run(ctx, "memory_facts_update", facts_patch={"secret_pet": "zanzibar-the-iguana"})
    out = _run(ctx, "memory_recall", query="release tags", conversation_id="nc-rel-20260529")
    assert out["memories"][0]["summary"] == (
        "Release tags come from main only\n\n"
        "Release tags are cut from main only; CI refuses tags on other branches."
    )
    assert out["user_facts"] == {"secret_pet": "zanzibar-the-iguana"}
    for path in workspace.rglob("*"):
        if path.is_file():
            assert b"zanzibar" not in path.read_bytes(), path
    assert facts.path().parent != workspace / ".nxs"


# -- a whole session through a real MCP client ------------------------------------------------


def test_a_session_end_to_end_over_mcp(ctx: Context, workspace: Path) -> None:
    """recall -> persona -> search -> detail -> store context -> facts -> a new conversation."""
    import os
    import sys

    import anyio
    import orjson
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    _run(
        ctx,
        "memory_add",
        body="Auth tokens are refreshed by the gateway 60 s before expiry; a 401 after refresh "
        "means the clock is skewed, not that the token is bad.",
        introduction="A 401 right after a token refresh means clock skew",
        category="gotchas",
    )
    _run(
        ctx,
        "memory_add",
        body="Release tags are cut from main only; CI refuses tags on other branches.",
        introduction="Release tags come from main only",
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from nxs.cli import main; main()", "mcp", "serve"]
        + ["--workspace", str(workspace)],
        env=dict(os.environ),
        cwd=str(workspace),
    )
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(stdio_client(params), read_timeout_seconds=120) as client:

            async def call(tool: str, **arguments: Any) -> Any:
                result = await client.call_tool(tool, {**arguments, "now": NOW, "actor": "me"})
                return result.is_error, orjson.loads(result.content[0].text)

            request = "Debug the failing token refresh: every call returns a 401 error."
            seen["recall"] = await call(
                "memory_recall",
                query="token refresh 401",
                user_query_full=request,
                conversation_id="nc-auth-20260529",
                program_tool="claude-code",
            )
            hint = seen["recall"][1]["persona_hint"]
            seen["persona"] = await call("memory_persona", persona_name=hint)
            seen["unknown"] = await call("memory_persona", persona_name="bob")
            seen["search"] = await call("memory_search", query="release tags", max_results=10)
            first = seen["recall"][1]["memories"][0]["memory_id"]
            seen["detail"] = await call("memory_show", memory_id=first)
            seen["stored"] = await call(
                "memory_store_context",
                summary="401s after token refresh were clock skew on the CI runner; fixed NTP.",
                context="Symptom: 401 Unauthorized right after refresh.\n"
                "Cause: runner clock 90 s ahead (`date -u` vs `curl -sI https://example.invalid`).\n"
                "Fix: enabled systemd-timesyncd on the runner image.\n",
                conversation_id="nc-auth-20260529",
                user_query=request,
                persona=hint,
            )
            seen["facts"] = await call(
                "memory_facts_update", facts_patch={"ci": {"runner_os": "ubuntu-24.04"}}
            )
            seen["next"] = await call(
                "memory_recall",
                query="401 token",
                user_query_full=request,
                conversation_id="nc-auth-20260530",
            )
            seen["again"] = await call(
                "memory_recall", query="401 token", conversation_id="nc-auth-20260530"
            )

    anyio.run(session)
    error, recalled = seen["recall"]
    assert not error and recalled["fanned_out"] is False
    assert recalled["persona_hint"] == "jack"
    assert recalled["memories"][0]["summary"].startswith("A 401 right after a token refresh")
    assert "user_facts" not in recalled  # no facts yet
    assert seen["persona"] == (False, {"persona": personas_builtin()["jack"]})
    assert seen["unknown"][0] is True and seen["unknown"][1]["code"] == "PERSONA_NOT_FOUND"
    assert seen["search"][1]["results"][0]["introduction"] == "Release tags come from main only"
    assert seen["detail"][1]["memory"]["body"].startswith("Auth tokens are refreshed")
    stored = seen["stored"][1]
    assert stored["created"] is True and stored["conversation_id"] == "nc-auth-20260529"
    assert seen["facts"] == (
        False,
        {"bytes": 35, "facts": {"ci": {"runner_os": "ubuntu-24.04"}}, "max_bytes": 4096},
    )
    error, later = seen["next"]
    assert later["user_facts"] == {"ci": {"runner_os": "ubuntu-24.04"}}
    assert later["memories"][0] == {
        "confidence": later["memories"][0]["confidence"],
        "memory_id": stored["memory_id"],
        "snippet": later["memories"][0]["snippet"],
        "snippet_truncated": True,  # the stored context is longer than a snippet
        "summary": "401s after token refresh were clock skew on the CI runner; fixed NTP.",
        "truncated": True,
    }
    assert later["memories"][0]["snippet"].startswith("401s after token refresh")
    assert "user_facts" not in seen["again"][1]
    for path in workspace.rglob("*"):
        if path.is_file():
            assert b"ubuntu-24.04" not in path.read_bytes(), path


def personas_builtin() -> dict[str, Any]:
    from nxm.session.personas import builtin

    return builtin()


def test_the_parity_texts_sit_on_the_intended_side_of_the_thresholds() -> None:
    from tests.parity.cases_session import BROAD, LONG

    assert FANOUT_MIN_CHARS <= len(BROAD) <= LONG_QUERY_CHARS
    assert plan(BROAD, "a, b")[0] == ["a", "b"] and plan(BROAD, None) == ([], False)
    assert len(LONG) > LONG_QUERY_CHARS and plan(LONG, None)[1] is True


@pytest.mark.model
def test_recall_keeps_the_order_search_gives_the_same_text(tmp_path: Path) -> None:
    """Recall is the session's first call: it must rank as search does (currency, weights),
    not re-sort by the cosine it shows. One team of the project-memory set, real model."""
    from bench.project_memory import memories, queries
    from bench.project_memory.harness import HarnessError, ingest, service_for

    try:
        svc = service_for(tmp_path / "ws", "sentence-transformers/all-MiniLM-L6-v2")
    except HarnessError as err:
        pytest.skip(str(err))
    ingest(svc, [m for m in memories() if m["id"].startswith("pay.")])
    texts = [q["query"] for q in queries() if q["id"].startswith("pay.")]
    differ = 0
    for text in texts:
        found = svc.search(query=text, mode="hybrid", limit=10, now=NOW)["results"]
        got = recall(svc, query=text, now=NOW)["memories"]
        assert [m["memory_id"] for m in got] == [r["key"] for r in found], text
        cosines = [m["confidence"] for m in got]
        differ += cosines != sorted(cosines, reverse=True)
    assert differ  # the set holds queries whose cosine order is not search's order
    # a broad request: each topic's branch in search's order, taken in turn
    text = " ".join(texts[:12])
    out = recall(svc, query=text, topics="payout holds, ledger database pool", now=NOW)
    branches = [
        [r["key"] for r in svc.search(query=t, mode="hybrid", limit=8, now=NOW)["results"]]
        for t in ("payout holds", "ledger database pool")
    ]
    taken = dict.fromkeys(b[i] for i in range(8) for b in branches if i < len(b))
    assert [m["memory_id"] for m in out["memories"]] == list(taken)
