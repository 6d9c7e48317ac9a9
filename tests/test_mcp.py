"""The MCP seam: a real client in a separate process over stdio (and streamable HTTP).

One stdio server on a seeded workspace serves most tests; variations of the surface (groups,
modules, actor) use the SDK's in-process client on the same low-level server.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from nxs.mcp.groups import GROUPS, parse_groups
from nxs.mcp.server import Seam, build_server
from nxs.registry import operations
from tests.conftest import machine
from tests.parity.state import KEYS, NOW, seeded_copy
from tests.reliability.common import StdioSession as SessionBase

CORE_SESSION = [op.tool for op in operations(["memory"]) if op.group in ("core", "session")]
OPS_BY_TOOL = {op.tool: op for op in operations()}


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {
        "NXS_CONFIG_DIR": str(home / "config"),
        "NXS_DATA_DIR": str(home / "data"),
        "NXS_CACHE_DIR": machine(home),
        "HF_HUB_OFFLINE": "1",
        "USER": "tester",
        **extra,
    }


class StdioSession(SessionBase):
    """The shared stdio session; tests here read the SDK's raw CallToolResult."""

    call = SessionBase.raw  # type: ignore[assignment]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StdioSession, Path]]:
    base = tmp_path_factory.mktemp("mcp")
    root = seeded_copy(base / "proj", base / "home")
    with ExitStack() as stack:
        session = StdioSession(
            stack, ["--workspace", str(root)], env_for(base / "home"), base / "server.log"
        )
        yield session, root


def answer(result: Any) -> dict[str, Any]:
    assert result.structured_content is None
    assert [c.type for c in result.content] == ["text"]
    text = result.content[0].text
    assert text.endswith("\n")
    return orjson.loads(text)


def test_lists_the_default_groups_with_schemas(served: tuple[StdioSession, Path]) -> None:
    session, _ = served
    tools = session.tools()
    assert [t.name for t in tools] == CORE_SESSION
    assert len(tools) <= 20
    by_name = {op.tool: op for op in operations()}
    for tool in tools:
        op = by_name[tool.name]
        # a server in a workspace lists no seam parameter (each call still takes them)
        assert tool.input_schema == op.input_schema(seam=False)
        assert tool.description == op.description
        assert not {"now", "actor", "workspace"} & set(tool.input_schema["properties"])
        assert bool(tool.annotations.read_only_hint) is (not op.writes)


def test_the_default_tool_list_fits_its_budget(served: tuple[StdioSession, Path]) -> None:
    """tools/list is read into every session's context: ≤ 12,000 bytes (docs/mcp.md)."""
    import mcp_types as types

    session, _ = served
    listed = types.ListToolsResult(tools=session.tools())
    assert len(listed.model_dump_json(by_alias=True, exclude_unset=True)) <= 12_000


def test_a_server_outside_a_workspace_lists_workspace_on_each_tool(tmp_path: Path) -> None:
    seam = Seam(str(tmp_path / "nowhere"))
    for tool in seam.tools():
        expected = (
            {"workspace"} if tool.name not in ("memory_facts", "memory_facts_update") else set()
        )
        assert {"now", "actor", "workspace"} & set(tool.input_schema["properties"]) == expected


def test_instructions_are_the_prime_text(served: tuple[StdioSession, Path]) -> None:
    session, root = served
    out = subprocess.run(
        [sys.executable, "-m", "nxs", "prime", "--workspace", str(root), "--seam", "mcp"],
        capture_output=True,
        check=True,
        env={**os.environ, "NXS_WORKSPACE": ""},
    ).stdout.decode()
    assert session.client.instructions == out
    assert f"- {KEYS[0]}  Run the test suite" in out


def test_calls_read_and_write(served: tuple[StdioSession, Path]) -> None:
    session, root = served
    shown = answer(session.call("memory_show", {"key": KEYS[1][:6]}))
    assert shown["memory"]["key"] == KEYS[1]
    added = session.call(
        "memory_add",
        {
            "body": "The MCP seam answers in the CLI's bytes.",
            "introduction": "MCP answers are the CLI's --json bytes.",
            "now": NOW,
            "actor": "claude",
        },
    )
    assert added.is_error is False
    memory = answer(added)["memory"]
    assert memory["actor"] == "claude" and memory["updated"] == "2026-05-29T10:00:00.000Z"
    listed = answer(session.call("memory_list", {"page_size": 50}))
    assert memory["key"] in [m["key"] for m in listed["memories"]]
    found = answer(session.call("memory_search", {"query": "bytes seam", "mode": "keyword"}))
    assert found["results"][0]["key"] == memory["key"]


def test_default_actor_is_the_servers_identity(served: tuple[StdioSession, Path]) -> None:
    session, _ = served
    result = answer(session.call("memory_close", {"key": KEYS[2]}))
    assert result["memory"]["actor"] == "tester"  # USER, as NXS_ACTOR/NXF_ACTOR are unset


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"key": 5}, "key must be a string, got 5"),
        ({}, "key is required"),
        ({"key": KEYS[0], "colour": "red"}, "unknown parameter 'colour' for memory_show"),
        ({"key": "a" * 65}, "key is 65 characters; at most 64 are allowed"),
        ({"key": KEYS[0], "now": "yesterday"}, "now must be an ISO-8601 timestamp"),
        ({"key": KEYS[0], "workspace": 3}, "workspace must be a string"),
    ],
)
def test_bad_arguments_are_tool_errors(
    served: tuple[StdioSession, Path], arguments: dict[str, Any], message: str
) -> None:
    session, _ = served
    result = session.call("memory_show", arguments)
    assert result.is_error is True
    body = answer(result)
    assert body["error"] is True and body["kind"] == "validation"
    assert body["message"].startswith(message)


def test_refusals_and_unknown_tools_are_tool_errors(served: tuple[StdioSession, Path]) -> None:
    session, _ = served
    missing = session.call("memory_show", {"key": "ffff0000"})
    assert missing.is_error is True and answer(missing)["kind"] == "not_found"
    unknown = session.call("memory_teleport", {})
    assert unknown.is_error is True and answer(unknown)["code"] == "UNKNOWN_TOOL"
    hidden = session.call("memory_stats", {})  # insights is not a default group
    assert hidden.is_error is True and answer(hidden)["code"] == "UNKNOWN_TOOL"
    assert "insights tool group" in answer(hidden)["suggestion"]
    assert "groups core, session of" in answer(unknown)["suggestion"]


def test_an_unknown_tool_names_only_groups_that_serve_something(tmp_path: Path) -> None:
    root = seeded_copy(tmp_path / "proj")  # the memory module only
    seam = Seam(str(root), groups="all")
    text, failed = seam.call("memory_teleport", {})
    assert failed and "linear" not in orjson.loads(text)["suggestion"]
    text, failed = seam.call("linear_query", {})
    assert failed and "nxs init --module linear" in orjson.loads(text)["suggestion"]


def test_per_call_workspace(served: tuple[StdioSession, Path], tmp_path: Path) -> None:
    session, _ = served
    other = seeded_copy(tmp_path / "other")
    result = answer(session.call("memory_forget", {"key": KEYS[0], "workspace": str(other)}))
    assert result["memory"]["status"] == "forgotten"
    assert answer(session.call("memory_show", {"key": KEYS[0]}))["memory"]["status"] == "open"
    nowhere = session.call("memory_list", {"workspace": str(tmp_path / "none")})
    assert nowhere.is_error is True and answer(nowhere)["code"] == "NO_WORKSPACE"


# Valid arguments for every tool that does not write a memory (persona, entity: seeded names).
READ_ARGUMENTS: dict[str, dict[str, Any]] = {
    "memory_show": {"key": KEYS[0]},
    "memory_list": {},
    "memory_search": {"query": "tests"},
    "memory_history": {"key": KEYS[0]},
    "memory_recall": {"query": "how are the tests run"},
    "memory_facts": {},
    "memory_personas": {},
    "memory_persona": {"name": "betty"},
    "memory_knowledge": {},
    "graph_search": {"query": "test"},
    "graph_traverse": {"entity": "pytest"},
    "graph_query": {"question": "what is pytest?"},
    "memory_stats": {},
    "memory_profile": {"user": "alice"},
    "memory_entities": {},
    "memory_diff": {"base": "HEAD"},  # the workspace is committed to git for it
    "memory_log": {},
    "memory_stale": {},
}


def test_read_only_annotations_are_honest(tmp_path: Path) -> None:
    """A tool annotated read-only changes no file of the workspace (what it derives, the index
    and the search usage log, is the machine's, in its cache); the others say they may."""

    def fingerprint(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    root = seeded_copy(tmp_path / "proj")
    ident = {f"GIT_{w}_{f}": v for w in ("AUTHOR", "COMMITTER") for f, v in (("NAME", "t"),
             ("EMAIL", "t@t"))}  # fmt: skip
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "seed"]):
        subprocess.run(["git", *argv], cwd=root, check=True, capture_output=True,
                       env={**os.environ, **ident})  # fmt: skip
    seam = Seam(str(root), groups="all")
    annotated = {t.name: t.annotations.read_only_hint for t in seam.tools()}
    readers = [op for op in seam.ops if not op.writes]
    assert sorted(READ_ARGUMENTS) == sorted(op.tool for op in readers)
    for op in readers:
        before = fingerprint(root)
        text, failed = seam.call(op.tool, READ_ARGUMENTS[op.tool])
        assert not failed, text
        changed = fingerprint(root) != before
        assert annotated[op.tool] is not changed, f"{op.tool}: read-only {annotated[op.tool]}"
    assert [t for t, ro in annotated.items() if not ro and not OPS_BY_TOOL[t].writes] == []


def test_server_log_has_no_traceback(served: tuple[StdioSession, Path]) -> None:
    session, _ = served
    session.call("memory_list", {})
    assert "Traceback" not in session.log.read_text()


# -- the raw wire -------------------------------------------------------------------------------

PRINTING_SERVER = """
import sys, warnings
from dataclasses import replace
import nxm.ops as ops
for i, op in enumerate(ops.OPERATIONS):
    if op.tool == "memory_show":
        def noisy(ctx, **kw):
            print("stray print from a handler")
            warnings.warn("stray warning")
            sys.__stdout__.write("stray write to sys.__stdout__\\n")
            return {"ok": True}
        ops.OPERATIONS[i] = replace(op, handler=noisy)
import nxs.mcp.server as server
warm = server.Seam.warm
def probe(self):
    heavy = sorted({"lancedb", "fastembed", "pyarrow"} & set(sys.modules))
    sys.stderr.write(f"heavy modules when warm-up starts: {heavy}\\n")
    warm(self)
server.Seam.warm = probe
from nxs.cli import main
main()
"""


def rpc(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def test_stdout_carries_only_protocol_messages(tmp_path: Path) -> None:
    root = seeded_copy(tmp_path / "proj")
    proc = subprocess.Popen(
        [sys.executable, "-c", PRINTING_SERVER, "mcp", "serve", "--workspace", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env_for(tmp_path / "home")},
    )
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "memory_show", "arguments": {"key": KEYS[0]}}
    rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    for i, arguments in enumerate(["a string", [1, 2], 7], start=3):
        params = {"name": "memory_list", "arguments": arguments}
        rpc(proc, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    # Read the five answers before closing stdin: EOF ends the session.
    lines: list[bytes] = []

    def read() -> None:
        assert proc.stdout is not None
        lines.extend(proc.stdout.readline() for _ in range(5))

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(timeout=120)
    out, err = proc.communicate(timeout=60)
    assert out == b""  # nothing after the answers either
    messages = [json.loads(line) for line in lines]  # every stdout line is JSON-RPC
    # Concurrent requests may be answered in any order; each must be answered once.
    messages.sort(key=lambda m: m["id"])
    assert [m["id"] for m in messages] == [1, 2, 3, 4, 5]
    assert messages[1]["result"]["content"][0]["text"] == '{"ok":true}\n'
    for m in messages[2:]:
        assert m["result"]["isError"] is True
        assert "tool arguments must be a JSON object" in m["result"]["content"][0]["text"]
    text = err.decode()
    assert "stray print from a handler" in text and "stray warning" in text
    assert "stray write to sys.__stdout__" in text
    # The heavy modules load after initialize was answered, in the warm-up.
    assert "heavy modules when warm-up starts: []" in text


# -- the surface, in process ----------------------------------------------------------------------


async def _listing(seam: Seam) -> list[str]:
    from mcp import Client

    async with Client(build_server(seam, "instructions"), mode="legacy") as client:
        assert client.instructions == "instructions"
        return [t.name for t in (await client.list_tools()).tools]


def test_groups_choose_the_tools(workspace: Path) -> None:
    every = [op.tool for op in operations(["memory"])]
    assert anyio.run(_listing, Seam(str(workspace), groups="all")) == every
    core = anyio.run(_listing, Seam(str(workspace), groups="core"))
    assert core == [op.tool for op in operations(["memory"]) if op.group == "core"]
    assert anyio.run(_listing, Seam(str(workspace))) == CORE_SESSION  # config: core, session
    cfg = workspace / ".nxs" / "config.toml"
    cfg.write_text(cfg.read_text().replace('tools = ["core", "session"]', 'tools = ["insights"]'))
    insights = anyio.run(_listing, Seam(str(workspace)))
    assert insights == [op.tool for op in operations(["memory"]) if op.group == "insights"]


def test_every_operation_declares_a_documented_group() -> None:
    assert {op.group for op in operations()} <= set(GROUPS)
    assert parse_groups("lifecycle,graph,core") == ("insights", "knowledge", "core")
    assert parse_groups(["all"]) == tuple(GROUPS)


def test_a_workspace_without_memory_exposes_no_memory_tools(tmp_path: Path) -> None:
    from nxs.workspace import init

    ws, _ = init(tmp_path / "lin", ["linear"])
    names = anyio.run(_listing, Seam(str(ws.root), groups="all"))
    assert names == [op.tool for op in operations(["linear"])]
    assert not [n for n in names if n.startswith(("memory_", "graph_"))]


def test_actor_resolution(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def actor(seam: Seam, **arguments: Any) -> str:
        body = f"Actor check {time.monotonic_ns()}"
        text, failed = seam.call("memory_add", {"body": body, "introduction": "x", **arguments})
        assert not failed, text
        return orjson.loads(text)["memory"]["actor"]

    monkeypatch.setenv("NXM_ACTOR", "nxm-only")  # the CLI's variable; the server ignores it
    monkeypatch.setenv("NXF_ACTOR", "flow")
    assert actor(Seam(str(workspace))) == "flow"
    monkeypatch.setenv("NXS_ACTOR", "suite")
    assert actor(Seam(str(workspace))) == "suite"
    assert actor(Seam(str(workspace), actor="launch")) == "launch"
    assert actor(Seam(str(workspace), actor="launch"), actor="call") == "call"


def test_outside_a_workspace_the_groups_are_listed_and_workspace_opens_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Desktop and Windsurf start servers in a directory of their own."""
    bare = tmp_path / "host-dir"
    bare.mkdir()
    monkeypatch.chdir(bare)
    root = seeded_copy(tmp_path / "proj")
    seam = Seam()
    assert [op.tool for op in seam.ops] == CORE_SESSION
    assert anyio.run(_listing, seam) == CORE_SESSION
    text, failed = seam.call("memory_show", {"key": KEYS[0], "workspace": str(root)})
    assert not failed and orjson.loads(text)["memory"]["key"] == KEYS[0]
    text, failed = seam.call("memory_show", {"key": KEYS[0]})
    assert failed
    refused = orjson.loads(text)
    assert refused["code"] == "NO_WORKSPACE" and "`workspace` argument" in refused["suggestion"]
    assert "outside any nxs workspace" in seam.instructions()
    assert "`workspace` argument" in seam.instructions()
    every = Seam(groups="all")  # every module's tools: a call names the workspace
    assert [op.tool for op in every.ops] == [op.tool for op in operations()]


def _stderr_and_instructions(args: list[str], cwd: Path, home: Path) -> tuple[list[str], str, str]:
    """Start a stdio server, read its tool list and instructions, and its stderr."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.conftest import CODE_ENV

    log = cwd / "server.log"

    async def session() -> tuple[list[str], str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "nxs", "mcp", "serve", *args],
            env={**CODE_ENV, **env_for(home)},
            cwd=str(cwd),
        )
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                return tools, client.instructions or ""

    tools, instructions = anyio.run(session)
    return tools, instructions, log.read_text()


@pytest.mark.parametrize(
    ("config", "served", "said"),
    [
        ('tools = ["core", "everythin"]', ["core"], "unknown tool groups ('everythin')"),
        ('tools = ["everythin"]', ["core", "session"], "the defaults are served"),
        ('tools = ["core", oops', ["core", "session"], "is not valid TOML"),
    ],
)
def test_a_bad_mcp_config_still_serves_and_says_why(
    tmp_path: Path, config: str, served: list[str], said: str
) -> None:
    root = seeded_copy(tmp_path / "proj")
    cfg = root / ".nxs" / "config.toml"
    cfg.write_text(cfg.read_text().replace('tools = ["core", "session"]', config))
    tools, instructions, stderr = _stderr_and_instructions([], root, tmp_path / "home")
    assert tools == [op.tool for op in operations(["memory"]) if op.group in served]
    assert said in instructions and said in stderr
    assert instructions.startswith("# ")  # the prime text comes first, then the server's note
    assert "Tool groups served: " + ", ".join(served) in instructions


def test_unknown_group_refuses_to_start(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "nxs", "mcp", "serve", "--tools", "core,everything"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2
    assert "unknown tool group 'everything'" in run.stderr
    assert run.stdout == ""


# -- streamable HTTP --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(root: Path, home: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxs", "mcp", "serve", "--transport", "http"]
        + ["--port", str(port), "--workspace", str(root), *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env_for(home)},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(proc.communicate()[1].decode())


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (b"Bearer s3cret", True),
        (b"bearer s3cret", True),
        (b"BEARER  s3cret ", True),
        (b"Basic s3cret", False),
        (b"Bearer s3cre", False),
        (b"s3cret", False),
        (b"", False),
    ],
)
def test_bearer_scheme_is_case_insensitive(header: bytes, ok: bool) -> None:
    from nxs.mcp.http import bearer_ok

    assert bearer_ok(header, "s3cret") is ok


def test_http_refuses_beyond_loopback_without_a_token() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "nxs", "mcp", "serve", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NXS_MCP_TOKEN": ""},
    )
    assert refused.returncode == 2 and "without a token" in refused.stderr
    assert refused.stdout == ""


def test_http_serves_with_token_and_dns_rebinding_protection(tmp_path: Path) -> None:
    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    root = seeded_copy(tmp_path / "proj")
    proc, url = start_http(root, tmp_path / "home", "--token", "s3cret")
    auth = {"authorization": "Bearer s3cret"}
    try:

        async def session() -> tuple[list[str], Any]:
            async with httpx2.AsyncClient(headers=auth) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode="legacy") as client:
                    tools = [t.name for t in (await client.list_tools()).tools]
                    return tools, await client.call_tool("memory_show", {"key": KEYS[0]})

        tools, shown = anyio.run(session)
        assert tools == CORE_SESSION
        assert answer(shown)["memory"]["key"] == KEYS[0]
        assert httpx.post(url, json=INIT, headers=ACCEPT).status_code == 401
        wrong = {**ACCEPT, "authorization": "Bearer nope"}
        assert httpx.post(url, json=INIT, headers=wrong).status_code == 401
        ok = httpx.post(url, json=INIT, headers={**ACCEPT, **auth})
        assert ok.status_code == 200, ok.text
        lower = httpx.post(url, json=INIT, headers={**ACCEPT, "authorization": "bearer s3cret"})
        assert lower.status_code == 200, lower.text  # the scheme is case-insensitive
        rebound = {**ACCEPT, **auth, "host": "evil.example:80"}
        assert httpx.post(url, json=INIT, headers=rebound).status_code in (403, 421)
        cross = {**ACCEPT, **auth, "origin": "http://evil.example"}
        assert httpx.post(url, json=INIT, headers=cross).status_code == 403
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_connected_linear_is_served_within_twenty_tools(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nxs linear connect` is enough: the linear group joins the configured groups."""
    from nxs.workspace import init

    init(workspace, ["linear"])
    assert anyio.run(_listing, Seam(str(workspace))) == CORE_SESSION  # nothing connected
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_" + "k" * 40)
    served = anyio.run(_listing, Seam(str(workspace)))
    assert served == [*CORE_SESSION, "linear_query", "linear_mutate"]
    assert len(served) <= 20
    # The command line is exact; a workspace without the linear module serves none of it.
    assert anyio.run(_listing, Seam(str(workspace), groups="core,session")) == CORE_SESSION
    memory_only, _ = init(workspace.parent / "memory-only", ["memory"])
    assert "linear_query" not in anyio.run(_listing, Seam(str(memory_only.root)))


def test_the_same_writes_give_the_same_search_bytes_from_a_server_or_processes(
    tmp_path: Path,
) -> None:
    """A long-lived server's index (updated between its writes) and one built by separate CLI
    processes answer a keyword and a hybrid search with the same bytes."""
    home = tmp_path / "home"
    bodies = [
        f"Service {i} deploys with make ship-{i}; alert PagerDutyHigh{i % 3} fired when "
        f"latency passed {i * 10} ms."
        for i in range(6)
    ]
    roots = [seeded_copy(tmp_path / name, home) for name in ("served", "processes")]
    seam = Seam(str(roots[0]))
    env = env_for(home)
    stamp = ["--now", NOW, "--actor", "t"]
    nxm = [sys.executable, "-c", "from nxm.cli import main; main()"]
    for i, body in enumerate(bodies):
        _, failed = seam.call("memory_add", {"body": body, "introduction": f"svc {i}", "now": NOW, "actor": "t"})  # fmt: skip
        assert not failed
        seam.call("memory_search", {"query": "PagerDutyHigh1 fired", "mode": "keyword"})
        cli = [*nxm, "add", body, "--introduction", f"svc {i}", *stamp]
        done = subprocess.run([*cli, "-w", str(roots[1])], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
    for mode in ("keyword", "hybrid"):
        args = {"query": "PagerDutyHigh1 fired", "mode": mode, "now": NOW}
        served, _ = seam.call("memory_search", args)
        cmd = [*nxm, "search", args["query"], "--mode", mode, "--json"]
        out = subprocess.run(
            [*cmd, "--now", NOW, "-w", str(roots[1])], env=env, capture_output=True, text=True
        )
        assert served == out.stdout, mode
