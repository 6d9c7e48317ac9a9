"""The dashboard's own views (`nxm.views`) and its write tools, without a browser.

Each view is checked against what it claims to agree with: the sorted list against
`memory_list`, the export against `nxm export`, the figures over time against `memory_stats`,
what a session sees against a real MCP session, the generation against another process's write.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from nxs.context import Context
from nxs.registry import operations
from nxs.render import timestamp
from tests.conftest import committed
from tests.test_ui import REFUSED, client, post, seed


@pytest.fixture
def keys(workspace: Path) -> dict[str, str]:
    return seed(workspace)


def view(http: Any, name: str, **args: Any) -> Any:
    got = post(http, f"/api/view/{name}", args)
    assert got.status_code == 200, got.text
    return got.json()


def test_the_sorted_list_is_memory_list_reordered(workspace: Path, keys: dict[str, str]) -> None:
    http = client(workspace)
    listed = post(http, "/api/call/memory_list", {"status": "all", "page_size": 200}).json()
    reading = view(http, "list", status="all", page_size=200)
    assert reading["memories"] == listed["memories"]  # the same summaries, in reading order
    assert {k: reading[k] for k in ("page", "total", "total_pages")} == {
        k: listed[k] for k in ("page", "total", "total_pages")
    }
    every = listed["memories"]
    for sort, order, expected in (
        ("created", "asc", sorted(every, key=lambda m: m["created"])),
        ("created", "desc", sorted(every, key=lambda m: m["created"], reverse=True)),
        ("updated", "desc", sorted(every, key=lambda m: m["updated"], reverse=True)),
        ("priority", "desc", sorted(every, key=lambda m: ("HIGH", "MEDIUM", "LOW").index(m["priority"]))),
    ):  # fmt: skip
        got = view(http, "list", status="all", page_size=200, sort=sort, order=order)
        assert [m["key"] for m in got["memories"]] == [m["key"] for m in expected], (sort, order)
    paged = view(http, "list", status="all", sort="created", order="asc", page=2, page_size=3)
    assert [m["key"] for m in paged["memories"]] == [
        m["key"] for m in sorted(every, key=lambda m: m["created"])[3:6]
    ]
    assert paged["total_pages"] == 3
    high = view(http, "list", priority="HIGH", sort="updated")
    assert {m["key"] for m in high["memories"]} == {keys["billing"], keys["tomllib"]}


def test_views_refuse_bad_arguments_with_the_envelope(
    workspace: Path, keys: dict[str, str]
) -> None:
    http = client(workspace)
    for name, args, words in (
        ("list", {"sort": "sideways"}, "sort must be one of"),
        ("list", {"page_size": 0}, "page_size must be from 1"),
        ("activity", {"days": 0}, "days must be from 1"),
        ("export", {"colour": "red"}, "unknown parameter 'colour'"),
        ("select", {"status": "gone"}, "status must be one of"),
    ):
        got = post(http, f"/api/view/{name}", args)
        assert got.status_code == 400 and words in got.json()["message"], (name, got.text)
    assert post(http, "/api/view/list", {"now": "2020-01-01T00:00:00Z"}).status_code == 400


def test_select_and_export_follow_the_filter(workspace: Path, keys: dict[str, str]) -> None:
    http = client(workspace)
    chosen = view(http, "select", agent_id="claude-code", status="all")
    assert {m["key"] for m in chosen["memories"]} == {keys["release"], keys["tomllib"]}
    assert {m["key"]: m["status"] for m in chosen["memories"]}[keys["release"]] == "closed"
    done = subprocess.run(
        [sys.executable, "-c", "from nxm.cli import main; main()", "export", "--status", "all",
         "--workspace", str(workspace)],
        capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    everything = view(http, "export", status="all")
    assert everything["jsonl"].encode() == done.stdout and everything["count"] == 7
    assert everything["filename"].startswith("memories-") and everything["filename"].endswith(
        ".jsonl"
    )
    gotchas = view(http, "export", category="gotchas")
    lines = [orjson.loads(x) for x in gotchas["jsonl"].splitlines()]
    assert sorted(x["key"] for x in lines) == sorted([keys["flaky"], keys["script"]])
    assert all(x["events"] for x in lines)  # history included, as `nxm export` writes it
    wanted = {
        x["key"] for x in orjson.loads(b"[" + done.stdout.strip().replace(b"\n", b",") + b"]")
    }
    assert {x["key"] for x in lines} <= wanted


def test_figures_over_time_agree_with_memory_stats(workspace: Path, keys: dict[str, str]) -> None:
    from nxm.activity import activity
    from nxm.insights import stats

    now = timestamp()
    ctx = Context(now=now, actor="tester", workspace_arg=str(workspace))
    for days in (7, 30, 365):
        got = activity(ctx, days=days)
        figures = stats(ctx.memory.ws, ctx.memory.store.records(), now=now, days=days)
        # The buckets start at a UTC midnight, so the window is a little shorter than stats';
        # no seeded event falls in that gap (they are whole days apart from the seeding).
        made = figures["memories"]["created"] + figures["memories"]["imported"]
        assert sum(got["events"]["created"]) == made, days
        changed = sum(figures["memories"][k] for k in ("updated", "classified", "promoted"))
        assert sum(got["events"]["edited"]) == changed, days
        assert sum(got["events"]["feedback"]) == sum(figures["feedback"].values()), days
        assert got["stored"][-1] == figures["totals"]["stored"] == 7
        assert got["open"][-1] == figures["totals"]["open"] == 6
    got = activity(ctx, days=30)
    assert len(got["buckets"]) == 30 and got["bucketDays"] == 1
    assert len(activity(ctx, days=365)["buckets"]) == 53
    assert got["stored"] == sorted(got["stored"])  # nothing was purged: it only grows
    # 45 and 40 days ago two memories were made; 20, 12, 6, 3 and 1 day ago one each.
    assert got["stored"][0] == 2
    actors = {row["name"]: row for row in got["actors"]}
    assert actors["tester"]["created"] == 5 and actors["tester"]["memories"] == 6
    agents = {row["name"]: row["events"] for row in got["agents"]}
    assert agents == {"claude-code": 3, "cursor": 1}  # tomllib: created, feedback; release: closed
    assert got["actorsTotal"] == 1 and got["tools"] == []


def test_what_a_session_sees_is_what_an_mcp_session_gets(
    workspace: Path, keys: dict[str, str]
) -> None:
    from mcp import Client

    from nxs.mcp.server import Seam, build_server

    got = view(client(workspace), "session")

    async def session() -> tuple[str | None, list[Any], Any]:
        seam = Seam(str(workspace))
        async with Client(build_server(seam, seam.instructions()), mode="legacy") as c:
            listed = await c.list_tools()
            return c.instructions, listed.tools, listed

    instructions, tools, listed = anyio.run(session)
    assert got["instructions"] == instructions and got["instructionsBytes"] == len(
        instructions.encode()
    )
    assert [t["name"] for t in got["tools"]] == [t.name for t in tools]
    for shown, tool in zip(got["tools"], tools, strict=True):
        assert shown["bytes"] == len(
            tool.model_dump_json(by_alias=True, exclude_unset=True).encode()
        )
    total = listed.model_dump_json(by_alias=True, exclude_unset=True, include={"tools"})
    assert got["toolsBytes"] == len(total.encode())
    assert got["groups"] == ["core", "session"]


def test_the_generation_moves_only_when_the_store_does(
    workspace: Path, keys: dict[str, str]
) -> None:
    http = client(workspace)

    def generation() -> str:
        return view(http, "generation")["generation"]

    first = generation()
    post(http, "/api/call/memory_list", {})
    post(http, "/api/call/memory_search", {"query": "billing", "mode": "keyword"})
    assert generation() == first  # reads leave it
    ops = {op.tool: op for op in operations(["memory"])}
    ctx = Context(now=timestamp(), actor="teammate", workspace_arg=str(workspace))
    ops["memory_close"].handler(ctx, key=keys["billing"])  # another process writes
    second = generation()
    assert second != first and generation() == second
    ops["graph_add"].handler(ctx, name="payments gateway", type="THING")
    assert generation() != second  # the graph log is watched too
    ctx.release()


def test_every_write_is_guarded_and_a_refusal_writes_nothing(
    workspace: Path, keys: dict[str, str]
) -> None:
    http = client(workspace)
    writes = [
        ("memory_add", {"body": "A new fact about queues.", "introduction": "Queues are FIFO"}),
        ("memory_update", {"key": keys["billing"], "introduction": "Dana owns billing", "body": "Dana owns it."}),
        ("memory_classify", {"key": keys["billing"], "category": "owners"}),
        ("memory_close", {"key": keys["billing"]}),
        ("memory_feedback", {"key": keys["billing"], "signal": "POSITIVE"}),
        ("memory_revert", {"key": keys["release"], "to": 1}),
    ]  # fmt: skip
    before = committed(workspace)
    for tool, args in writes:
        for headers, status, code in REFUSED:
            got = post(http, f"/api/call/{tool}", args, **headers)
            assert (got.status_code, got.json()["code"]) == (status, code), (tool, headers)
    # The service's own refusals: the envelope, its status, and nothing written either.
    for tool, args, status in (
        ("memory_add", {"body": "x", "introduction": ""}, 400),
        ("memory_add", {"body": "x", "introduction": "y", "scope": "item"}, 400),
        ("memory_add", {"body": "x", "introduction": "y", "ttl_days": 3}, 400),
        ("memory_update", {"key": keys["billing"], "introduction": "Dana Kim owns billing; it runs on PostgreSQL and Stripe"}, 400),
        ("memory_update", {"key": keys["billing"], "introduction": "z", "body": "Releases are tagged vX.Y.Z from main after CI passes; never tag a branch."}, 409),
        ("memory_classify", {"key": keys["export"], "refs": []}, 400),
        ("memory_revert", {"key": keys["billing"]}, 409),
        ("memory_revert", {"key": keys["release"], "to": 99}, 404),
    ):  # fmt: skip
        got = post(http, f"/api/call/{tool}", args)
        assert got.status_code == status and got.json()["error"] is True, (tool, got.text)
    assert committed(workspace) == before
    added = post(http, "/api/call/memory_add", writes[0][1])
    assert added.status_code == 200 and added.json()["created"] is True
    assert committed(workspace) != before
    assert added.json()["memory"]["actor"] == "tester"
