"""Four CLI writers and one MCP server write one workspace at once: nothing lost, nothing doubled.

Writers (docs/reliability.md):

- w0, w1, w2 — three worker processes, each running the `nxm` Typer app in process (the verb's
  own argument parsing, `run_op`, `--json` output and exit code) for every call;
- w3 — real `nxm` processes, one per call (each pays the CLI's start-up, so it makes few calls);
- mcp — a real `nxs mcp serve` process over stdio, driven by the SDK client from this test.

They mix adds, updates, classifies, closes, reopens and feedback on their own memories, on four
memories they all share, and on "race" bodies they all add. Afterwards the memory files are read
directly, and the search index must hold each once; every acknowledged add present, every acknowledged event present exactly once
(and no event that was not acknowledged), the last acknowledged update/classify/close is what
the record says, feedback counts add up, a keyword search finds every memory by its token, and
every refusal a writer saw was one it could act on (a conflict or validation error).

Quick: 120 operations. Full (``NXS_RELIABILITY_FULL=1``): 1,000 operations.
"""

from __future__ import annotations

import collections
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from conftest import make_workspace

from nxm.service import MemoryService
from nxs.workspace import find
from tests.reliability.common import (
    StdioSession,
    child_env,
    consistent,
    events_of,
    size,
    store_docs,
    workers,
)
from tests.reliability.writers import (
    Plan,
    ProcessDriver,
    cli_writer,
    read_acks,
    run_plan,
    shared_body,
    stamp,
    wait_for,
)

CLI_WRITERS = 3
STEPS_CLI = size(30, 300)  # per in-process CLI writer
STEPS_NXM = size(2, 15)  # real `nxm` processes
STEPS_MCP = size(28, 85)
SHARED = 4
TIMEOUT = 1800


class McpDriver:
    def __init__(self, session: StdioSession) -> None:
        self.session = session

    def __call__(self, op: str, args: dict[str, Any], at: str, actor: str) -> tuple[bool, Any]:
        failed, answer = self.session.call(f"memory_{op}", {**args, "now": at, "actor": actor})
        return not failed, answer


def _background(target: Any, *args: Any) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            target(*args)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    return thread, errors


def test_four_cli_writers_and_an_mcp_server_lose_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "proj")
    seed = MemoryService(find(root))
    shared = [
        seed.add(body=shared_body(k), introduction=f"shared {k}", now=stamp(9, k), actor="seed")[
            "memory"
        ]["key"]
        for k in range(SHARED)
    ]
    env = child_env(tmp_path / "home")
    go = tmp_path / "go"
    outs = [tmp_path / f"w{i}.jsonl" for i in range(CLI_WRITERS + 2)]
    ctx = workers()
    procs = [
        ctx.Process(
            target=cli_writer,
            args=(str(root), f"w{i}", i, 1000 + i, STEPS_CLI, shared, env, str(outs[i]), str(go)),
        )
        for i in range(CLI_WRITERS)
    ]
    for proc in procs:
        proc.start()
    try:
        with ExitStack() as stack:
            session = StdioSession(
                stack,
                ["--workspace", str(root), "--tools", "all"],
                env,
                tmp_path / "server.log",
            )
            assert session.call("memory_list", {})[0] is False
            for out in outs[:CLI_WRITERS]:
                wait_for(Path(f"{out}.ready"))
            nxm_plan = Plan("w3", 3, 1003, shared)
            thread, thread_errors = _background(
                run_plan, nxm_plan, ProcessDriver(str(root), env), STEPS_NXM, outs[3]
            )
            go.touch()
            thread.start()
            run_plan(Plan("mcp", 4, 1004, shared), McpDriver(session), STEPS_MCP, outs[4])
            thread.join(TIMEOUT)
            for proc in procs:
                proc.join(TIMEOUT)
        assert not thread_errors, thread_errors
        assert [p.exitcode for p in procs] == [0] * CLI_WRITERS
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()

    acks = [a for out in outs for a in read_acks(out)]
    assert len(acks) == CLI_WRITERS * STEPS_CLI + STEPS_NXM + STEPS_MCP
    refused = collections.Counter((a["kind"], a["code"]) for a in acks if not a["ok"])
    assert set(refused) <= {("conflict", "BAD_STATE")}, refused
    done = [a for a in acks if a["ok"]]

    docs, doubled = store_docs(root)
    assert doubled == []
    adds = [a for a in done if a["op"] == "add"]
    assert set(docs) == set(shared) | {a["key"] for a in adds}
    for k in {a["race"] for a in adds if "race" in a}:
        racers = [a for a in adds if a.get("race") == k]
        assert len({a["key"] for a in racers}) == 1
        assert [a["created"] for a in racers].count(True) == 1, racers

    expected: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
    for k, key in enumerate(shared):
        expected[(key, "CREATED", "seed", stamp(9, k))] += 1
    for a in done:
        if a["op"] == "add" and a["created"]:
            expected[(a["key"], "CREATED", a["w"], a["at"])] += 1
        elif "event" in a:
            expected[(a["key"], a["event"], a["w"], a["at"])] += 1
    stored = events_of(docs)
    assert stored - expected == collections.Counter(), "events nobody acknowledged"
    assert expected - stored == collections.Counter(), "acknowledged events lost"

    by_event = {(a["w"], a["at"]): a for a in done}
    for key, doc in docs.items():
        events = doc["events"]
        updates = [e for e in events if e["type"] == "UPDATED"]
        if updates:
            last = by_event[(updates[-1]["actor"], updates[-1]["at"])]
            assert (doc["body"], doc["introduction"]) == (
                last["args"]["body"],
                last["args"]["introduction"],
            )
        classifies = [e for e in events if e["type"] == "CLASSIFIED"]
        if classifies:
            last = by_event[(classifies[-1]["actor"], classifies[-1]["at"])]
            assert doc["category"] == last["args"]["category"]
        moves = [e["type"] for e in events if e["type"] in ("CLOSED", "REOPENED")]
        assert doc["status"] == ("closed" if moves and moves[-1] == "CLOSED" else "open")
        signals = collections.Counter(
            a["args"]["signal"] for a in done if a["op"] == "feedback" and a["key"] == key
        )
        assert {s: n for s, n in doc["feedback"].items() if n} == dict(signals)

    service = MemoryService(find(root))
    tokens = {a["key"]: a["token"] for a in adds}
    tokens.update({key: f"sharedtok{k}" for k, key in enumerate(shared)})
    for key, token in tokens.items():
        found = service.search(query=token, mode="keyword", status="all", limit=5, now=stamp(30, 0))
        assert key in [r["key"] for r in found["results"]], (token, found)

    consistent(root)
    assert "Traceback" not in (tmp_path / "server.log").read_text()
