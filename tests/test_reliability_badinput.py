"""Bad input, generated: every tool and every verb either does the call or refuses it cleanly.

A call is either done, or refused with a validation, not_found or conflict error (the kinds a
caller can act on) — never an internal error, never a crash, never a non-JSON answer — and a
refused call leaves `.nxs/` and NEXUS_MEMORY.md byte for byte as they were
(`tests.reliability.common.fingerprint`). Inputs come from `tests.reliability.inputs`: every
operation of the table, each parameter absent, plausible or wrong (wrong types, out-of-range
numbers, huge strings, control characters, lone surrogates, path-like workspaces, keys that do
not exist, unknown parameters). Linear tools reach the fake Linear over HTTP.

- in process, through the SDK's in-memory client on the real low-level server: the volume;
- through a real `nxs mcp serve` over stdio: a smaller batch, then raw JSON-RPC junk (invalid
  JSON, invalid UTF-8, lone surrogate escapes, non-object arguments), and the server still
  answers;
- the CLIs, through their console-script entry points in process (argv as Python strings,
  surrogates included), and real `nxm`/`nxs` processes given invalid UTF-8 argv bytes.

Generated calls, quick / full (``NXS_RELIABILITY_FULL=1``): in-memory client 120 / 2,000;
`Seam.call` 100 / 1,500; CLI entry points 100 / 1,500; stdio server 20 / 250; real processes
with invalid UTF-8 argv 8 / 40.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

from nxs.workspace import init
from tests.linear_fake import fresh_url
from tests.parity.state import KEYS, seeded_copy
from tests.reliability.common import (
    ACTIONABLE,
    StdioSession,
    child_env,
    fingerprint,
    run_cli,
    size,
)
from tests.reliability.inputs import OPS, argv, calls

IN_PROCESS = size(120, 2000)
DIRECT = size(100, 1500)
CLI = size(100, 1500)
STDIO = size(20, 250)
PROCESSES = size(8, 40)
LINEAR_KEY = "lin_api_av_test"
SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
    "print_blob": True,
}


def _workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = seeded_copy(tmp_path / "proj")
    init(root, ["linear"])
    monkeypatch.setenv("LINEAR_API_URL", fresh_url())
    monkeypatch.setenv("LINEAR_API_KEY", LINEAR_KEY)
    monkeypatch.chdir(root)
    return root


OUTCOMES: collections.Counter[str] = collections.Counter()


def check(root: Path, before: dict[str, str], failed: bool, text: str, what: Any) -> None:
    """One answer: JSON; a refusal of an actionable kind that changed nothing."""
    try:
        answer = json.loads(text)
    except ValueError:
        raise AssertionError(f"not JSON: {text[:300]!r} for {what!r}") from None
    if not failed:
        assert not (isinstance(answer, dict) and answer.get("error")), (answer, what)
        OUTCOMES["done"] += 1
        return
    OUTCOMES[answer.get("kind", "?")] += 1
    assert answer.get("error") is True, (answer, what)
    assert answer["kind"] in ACTIONABLE, (answer, what)
    after = fingerprint(root)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert changed == [], (changed, answer, what)


class InMemory:
    """The low-level MCP server over the `Seam`, reached through the SDK's in-memory client."""

    def __init__(self, stack: ExitStack, root: Path) -> None:
        from anyio.from_thread import start_blocking_portal
        from mcp import Client

        from nxs.mcp.server import Seam, build_server

        seam = Seam(str(root), groups="all")
        assert {op.tool for op in seam.ops} == {op.tool for op in OPS}
        self.portal = stack.enter_context(start_blocking_portal())
        client = Client(build_server(seam, "instructions"), mode="legacy")
        self.client = stack.enter_context(self.portal.wrap_async_context_manager(client))

    def call(self, tool: str, arguments: Any) -> tuple[bool, str]:
        result = self.portal.call(self.client.call_tool, tool, arguments)
        assert [c.type for c in result.content] == ["text"], result
        return bool(result.is_error), result.content[0].text


def test_every_tool_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path, monkeypatch)
    with ExitStack() as stack:
        server = InMemory(stack, root)

        show = next(op for op in OPS if op.tool == "memory_show")

        @settings(max_examples=IN_PROCESS, **SETTINGS)
        @given(calls(json_only=True))  # the SDK client refuses to send what JSON cannot carry
        @example((show, {"key": "ffffffffffffffff"}))  # one not found, whatever is drawn
        def one(call: Any) -> None:
            op, arguments = call
            before = fingerprint(root)
            failed, text = server.call(op.tool, arguments)
            check(root, before, failed, text, (op.tool, arguments))

        OUTCOMES.clear()
        one()
        print(f"in-process outcomes: {dict(OUTCOMES)}")
        assert OUTCOMES["done"] and OUTCOMES["validation"] and OUTCOMES["not_found"]
        assert server.call("memory_list", {})[0] is False


def test_every_tool_with_python_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Seam.call` (what the server's call_tool runs) given lone surrogates, NaN, huge ints."""
    from nxs.mcp.server import Seam

    root = _workspace(tmp_path, monkeypatch)
    seam = Seam(str(root), groups="all")

    @settings(max_examples=DIRECT, **SETTINGS)
    @given(calls())
    def one(call: Any) -> None:
        op, arguments = call
        before = fingerprint(root)
        text, failed = seam.call(op.tool, arguments)
        check(root, before, failed, text, (op.tool, arguments))

    OUTCOMES.clear()
    one()
    print(f"direct outcomes: {dict(OUTCOMES)}")
    assert OUTCOMES["done"] and OUTCOMES["validation"]


def test_every_tool_through_a_real_stdio_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path, monkeypatch)
    env = child_env(
        tmp_path / "home", LINEAR_API_URL=fresh_url(), LINEAR_API_KEY=LINEAR_KEY, NXS_DEBUG="1"
    )
    log = tmp_path / "server.log"
    with ExitStack() as stack:
        session = StdioSession(stack, ["--workspace", str(root), "--tools", "all"], env, log)

        @settings(max_examples=STDIO, **SETTINGS)
        @given(calls(json_only=True))
        def one(call: Any) -> None:
            op, arguments = call
            before = fingerprint(root)
            result = session.portal.call(session.client.call_tool, op.tool, arguments)
            check(root, before, bool(result.is_error), result.content[0].text, arguments)

        OUTCOMES.clear()
        one()
        print(f"stdio outcomes: {dict(OUTCOMES)}")
        failed, shown = session.call("memory_show", {"key": KEYS[0]})
        assert not failed and shown["memory"]["key"] == KEYS[0]
    assert "Traceback" not in log.read_text()


RAW = [
    b"{not json\n",
    b'{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"memory_show",'
    b'"arguments":{"key":"\\ud800"}}}\n',
    b'{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{"name":"memory_add",'
    b'"arguments":{"body":"\\udcff\\ud800 body","introduction":"x\\udfff"}}}\n',
    b'{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{"name":"memory_list",'
    b'"arguments":{"category":"\xff\xfe"}}}\n',
    b'{"jsonrpc":"2.0","id":93,"method":"tools/call","params":{"name":"memory_list",'
    b'"arguments":[1,2]}}\n',
    b'{"jsonrpc":"2.0","id":94,"method":"tools/call","params":{"name":7,"arguments":{}}}\n',
    b'{"jsonrpc":"2.0","id":95,"method":"tools/call","params":null}\n',
    b'{"jsonrpc":"2.0","id":96,"method":"tools/call","params":{"name":"memory_search",'
    b'"arguments":{"query":"' + b"q" * 2_000_000 + b'"}}}\n',
    b'{"jsonrpc":"2.0","id":97,"method":"tools/call","params":{"name":"memory_list",'
    b'"arguments":{"page":1e400}}}\n',
    b"\xff\xfe\xfd\n",
]


def test_raw_json_rpc_junk_leaves_the_stdio_server_answering(tmp_path: Path) -> None:
    root = seeded_copy(tmp_path / "proj")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxs", "mcp", "serve", "--workspace", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(tmp_path / "home"),
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
    for raw in RAW:
        proc.stdin.write(raw)
    last = {"name": "memory_show", "arguments": {"key": KEYS[0]}}
    proc.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": last}).encode()
        + b"\n"
    )
    proc.stdin.flush()
    answers: dict[Any, Any] = {}

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            message = json.loads(line)  # every stdout line is JSON-RPC
            answers[message.get("id")] = message
            if message.get("id") == 99:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(300)
    _, err = proc.communicate(timeout=60)  # closes stdin: the end of the session
    assert 99 in answers, err.decode()[-2000:]
    shown = json.loads(answers[99]["result"]["content"][0]["text"])
    assert shown["memory"]["key"] == KEYS[0]
    for n in (90, 91, 92, 93, 96, 97):  # tool calls: a tool answer, or a protocol error
        result = answers.get(n, {}).get("result")
        if result is not None:
            answer = json.loads(result["content"][0]["text"])
            assert not result["isError"] or answer["kind"] in ACTIONABLE, (n, answer)
    assert "result" in answers[1], answers[1]  # initialized properly
    assert b"Traceback" not in err, err.decode()[-3000:]


def test_every_verb_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path, monkeypatch)

    listing = next(o for o in OPS if list(o.verb) == ["list"])

    @settings(max_examples=CLI, **SETTINGS)
    @given(argv())
    @example((listing, ["list", "--json"]))  # one that must be done, whatever is drawn
    def one(call: Any) -> None:
        op, args = call
        before = fingerprint(root)
        code, out, err = run_cli(op.cli, args)
        assert b"Traceback" not in err, err.decode(errors="replace")
        assert code in (0, 2, 3, 4), (code, out, err, args)
        if code == 0 and b"Usage:" in out[:400]:  # a junk "--help" asked for help
            OUTCOMES["help"] += 1
            return
        if not out.strip():  # junk took the place of --json (`-w --json`): a human refusal
            assert code != 0 and b"error" in err.lower(), (code, err, args)
            assert fingerprint(root) == before
            OUTCOMES["refused, human"] += 1
            return
        check(root, before, code != 0, out.decode(), args)

    OUTCOMES.clear()
    one()
    print(f"CLI outcomes: {dict(OUTCOMES)}")
    assert OUTCOMES["done"] and OUTCOMES["validation"]


ADMIN = [
    ["nxm", "import", "/nonexistent/file.jsonl"],
    ["nxm", "import", "/etc/passwd"],
    ["nxm", "export", "--output", "/proc/nope/x"],
    ["nxm", "export", "--output", "/"],
    ["nxm", "compact", "--workspace", "\x01"],
    ["nxm", "embed", "--workspace", "/"],
    ["nxs", "prime", "--format", "bogus"],
    ["nxs", "prime", "--budget", "-5"],
    ["nxs", "prime", "--workspace", "~no_such_user_zz/x"],
    ["nxs", "linear", "connect", "bad label!"],
    ["nxm", "model", "status", "--bogus"],
]


@pytest.mark.parametrize("args", ADMIN, ids=lambda a: " ".join(a)[:40])
def test_administration_verbs_refuse_cleanly(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path, monkeypatch)
    before = fingerprint(root)
    as_json = args[1] not in ("export", "prime")  # they print data, not an answer
    code, out, err = run_cli(args[0], [*args[1:], *(["--json"] if as_json else [])])
    assert b"Traceback" not in err, err.decode(errors="replace")
    assert code in ((0, 2) if args[1] == "prime" else (2, 3, 5)), (
        code,
        out,
        err,
    )  # prime never fails a session
    if as_json:
        assert json.loads(out)["kind"] in {*ACTIONABLE, "upstream"}
    elif code:
        assert b"rror" in err and b"internal" not in err, err
    assert fingerprint(root) == before


BAD_IMPORTS = [
    b'{"body": "b", "introduction": "i", "updated": "garbage"}',
    b'{"body": "b", "introduction": "i", "events": 5}',
    b'{"body": "b", "introduction": "i", "events": [{"type": "CREATED"}]}',
    b'{"body": "b", "introduction": "i", "refs": "ENG-1"}',
    b'{"body": "b", "introduction": "i", "feedback": {"POSITIVE": "many"}}',
    b'{"body": "b", "introduction": "i", "metadata": [1]}',
    b'{"body": "b", "introduction": "i", "category": 5}',
    b'{"body": "b", "introduction": "i", "expires": "0001-13-01"}',
    b'{"body": "\\ud800", "introduction": "i"}',
    b"\xff\xfe",
]


@pytest.mark.parametrize("line", BAD_IMPORTS, ids=range(len(BAD_IMPORTS)))
def test_import_refuses_records_that_would_break_reads(
    line: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path, monkeypatch)
    good = b'{"body": "A good line.", "introduction": "good"}\n'  # a key is minted
    (tmp_path / "in.jsonl").write_bytes(good + line + b"\n")
    before = fingerprint(root)
    code, out, err = run_cli("nxm", ["import", str(tmp_path / "in.jsonl"), "--json"])
    assert (code, json.loads(out)["kind"]) == (2, "validation"), (out, err)
    assert "line 2" in json.loads(out)["message"]
    assert fingerprint(root) == before
    for verb in (["list"], ["stats"], ["entities"], ["knowledge"]):
        assert run_cli("nxm", [*verb, "--json"])[0] == 0


ARGV_BYTES = [
    [b"nxm", b"show", b"\xff\xfe"],
    [b"nxm", b"add", b"body \xff", b"--introduction", b"intro"],
    [b"nxm", b"add", b"body", b"--introduction", b"\xed\xa0\x80"],
    [b"nxm", b"list", b"--category", b"\xc3"],
    [b"nxm", b"search", b"\x80query"],
    [b"nxm", b"history", KEYS[0].encode(), b"--actor", b"\xff"],
    [b"nxm", b"list", b"--workspace", b"/tmp/\xff\xfe"],
    [b"nxs", b"linear", b"query", b"get_linear_issue", b"--issue-id", b"\xfe"],
]


def test_invalid_utf8_argv_in_real_processes(tmp_path: Path) -> None:
    import random

    root = seeded_copy(tmp_path / "proj")
    rng = random.Random(int(os.environ.get("NXS_RELIABILITY_SEED", "8")))
    cases = list(ARGV_BYTES)
    while len(cases) < PROCESSES:
        junk = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 12)))
        cases.append([b"nxm", rng.choice([b"show", b"search", b"persona", b"profile"]), junk])
    env = child_env(tmp_path / "home", LINEAR_API_URL=fresh_url(), LINEAR_API_KEY=LINEAR_KEY)
    for args in cases[:PROCESSES]:
        before = fingerprint(root)
        done = subprocess.run(
            [*args, b"--json"], capture_output=True, cwd=root, env=env, timeout=300, check=False
        )
        assert b"Traceback" not in done.stderr, (args, done.stderr.decode(errors="replace"))
        assert done.returncode in (0, 2, 3, 4), (args, done)
        check(root, before, done.returncode != 0, done.stdout.decode(), args)
