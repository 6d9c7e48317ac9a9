"""The raw stdio wire: every malformed request that carries an id gets an answer.

A real `nxs mcp serve` process gets the lines below after a proper handshake, then a ``ping``
whose answer marks the end; each line names the ids that must be answered and how (a JSON-RPC
error code, a tool result, or a batch answer). Nothing but JSON-RPC may reach stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from nxs.mcp.wire import read_line, scan_id
from tests.parity.state import seeded_copy
from tests.reliability.common import child_env

DEEP = b"[" * 50_000 + b"]" * 50_000
SHOW = b'"method":"tools/call","params":{"name":"memory_show","arguments":'

# (the raw line, {id: the expected error code, or "tool" for an isError tool result})
PROBES: list[tuple[bytes, dict[Any, Any]]] = [
    (b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"x"}', {10: -32600}),
    (b'{"jsonrpc":"2.0","id":11,"method":"tools/list","params":"x"}', {11: -32600}),
    (b'{"jsonrpc":"2.0","id":12,' + SHOW + b'{"key":"\\ud800"}}}', {12: "tool"}),
    (b'{"jsonrpc":"2.0","id":13,"method":"\\udc00"}', {13: -32603}),
    (b'{"jsonrpc":"2.0","id":14,' + SHOW + b'{"key":' + DEEP + b"}}}", {14: -32700}),
    (b'{"jsonrpc":"2.0","id":15,"method":"ping","params":{"a":' + DEEP + b"}}", {15: -32700}),
    (
        b'[{"jsonrpc":"2.0","id":16,"method":"ping"},{"jsonrpc":"2.0","id":"17","method":"ping"}]',
        {16: "batch", "17": "batch"},
    ),
    (b'{"jsonrpc":"1.0","id":18,"method":"ping"}', {18: -32600}),
    (b'{"id":19,"method":"ping"}', {19: -32600}),
    (b'{"jsonrpc":"2.0","id":20,"method":', {20: -32700}),
    (b"hello", {None: -32700}),
    (b'{"jsonrpc":"2.0","id":21,' + SHOW + b'{"key":"\xff"}}}', {21: -32700}),
    (b'{"jsonrpc":"2.0","id":22,"method":7}', {22: -32600}),
    (b'{"jsonrpc":"2.0","id":23}', {23: -32600}),
    (b'{"jsonrpc":"2.0","id":24,"method":"ping","params":[]}', {24: -32600}),
    (b'{"jsonrpc":"2.0","id":25,"method":"no/such/method"}', {25: -32601}),
    (b'{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":5}}', {26: -32602}),
    (b'{"jsonrpc":"2.0","id":27,' + SHOW + b"[1,2]}}", {27: "tool"}),
    (b'{"jsonrpc":"2.0","id":28,' + SHOW + b'{"key":"' + b"k" * 10_000_000 + b'"}}}', {28: "tool"}),
]


def _answers(
    lines: list[bytes], root: Path, home: Path, probes: list[tuple[bytes, dict[Any, Any]]] = PROBES
) -> tuple[dict[Any, Any], bytes]:
    """Every answer by id (batch members too, marked), and the server's stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxs", "mcp", "serve", "--workspace", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(home),
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    handshake = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    end = {"jsonrpc": "2.0", "id": "end", "method": "ping"}
    answers: dict[Any, Any] = {}

    def write() -> None:  # a writer of its own: a 10 MB line must not block the reader
        assert proc.stdin is not None
        for message in handshake:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        for line in lines:
            proc.stdin.write(line + b"\n")
        proc.stdin.write(json.dumps(end).encode() + b"\n")
        proc.stdin.flush()

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            message = json.loads(raw)  # every stdout line is JSON
            for one in message if isinstance(message, list) else [message]:
                answers[one["id"]] = {**one, "batch": isinstance(message, list)}
            # tool calls run in a worker and may be answered after the ping
            if "end" in answers and all(i in answers for _, ids in probes for i in ids):
                return

    writer = threading.Thread(target=write, daemon=True)
    reader = threading.Thread(target=read, daemon=True)
    writer.start()
    reader.start()
    writer.join(300)
    reader.join(300)
    _, err = proc.communicate(timeout=60)
    return answers, err


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[Any, Any], bytes]:
    base = tmp_path_factory.mktemp("wire")
    root = seeded_copy(base / "proj", base / "home")
    return _answers([line for line, _ in PROBES], root, base / "home")


def test_the_handshake_and_the_end_are_answered(wire: tuple[dict[Any, Any], bytes]) -> None:
    answers, err = wire
    assert "result" in answers[1] and "end" in answers, err.decode()[-2000:]
    assert b"Traceback" not in err, err.decode()[-3000:]


@pytest.mark.parametrize(("line", "expected"), PROBES, ids=[str(list(e)) for _, e in PROBES])
def test_every_request_with_an_id_is_answered(
    wire: tuple[dict[Any, Any], bytes], line: bytes, expected: dict[Any, Any]
) -> None:
    answers, err = wire
    for rid, how in expected.items():
        assert rid in answers, f"no answer for id {rid!r}: {err.decode()[-1500:]}"
        got = answers[rid]
        if how == "tool":
            assert got["result"]["isError"] is True
            body = json.loads(got["result"]["content"][0]["text"])
            assert body["kind"] == "validation"
        elif how == "batch":
            assert got["batch"] and got["error"]["code"] == -32600
        else:
            assert got["error"]["code"] == how, got


def test_the_server_still_answers_after_the_junk(wire: tuple[dict[Any, Any], bytes]) -> None:
    answers, _ = wire
    assert answers["end"]["result"] == {}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"jsonrpc":"2.0","id":7,"method":', 7),
        ('{"id" : "a-1", "x": [', "a-1"),
        ('{"params":{"id":3},"id":4,', 4),  # an id inside params is not the request's
        ('{"params":{"id":3}', None),
        ('{"method":"x","id":true', None),
        ('{"a":"}\\"id\\":5","id":6', 6),  # brackets and quotes inside strings are skipped
        ("[1,2", None),
        ("", None),
    ],
)
def test_scan_id_reads_the_top_level_id_of_broken_json(text: str, found: Any) -> None:
    assert scan_id(text) == found


def test_a_valid_line_goes_to_the_sdk_and_a_response_is_not_answered() -> None:
    message, answer = read_line(b'{"jsonrpc":"2.0","id":3,"method":"ping"}')
    assert answer is None and message.message.method == "ping"
    message, answer = read_line(b'{"jsonrpc":"2.0","id":3,"result":{}}')
    assert answer is None and message is not None  # the client answering one of our requests
    message, answer = read_line(b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]')
    assert message is None and answer is None  # a batch of notifications: nothing to answer


BIG = 2**64
# Ids of every JSON type and size: numbers beyond 64 bits are still integers to JSON-RPC.
ID_PROBES: list[tuple[bytes, dict[Any, Any]]] = [
    (b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % BIG, {BIG: "ok"}),
    (b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % -BIG, {-BIG: "ok"}),
    (b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}' % 2**200, {2**200: "ok"}),
    (b'{"jsonrpc":"2.0","id":%d}' % (BIG + 1), {BIG + 1: -32600}),
    (b'{"jsonrpc":"1.0","id":%d,"method":"ping"}' % (BIG + 2), {BIG + 2: -32600}),
    (b'{"jsonrpc":"2.0","id":%d,"method":"ping"' % (BIG + 3), {BIG + 3: -32700}),
    (b'[{"jsonrpc":"2.0","id":%d,"method":"ping"}]' % (BIG + 4), {BIG + 4: "batch"}),
    (b'{"jsonrpc":"2.0","id":"","method":"ping"}', {"": "ok"}),
    (b'{"jsonrpc":"2.0","id":"%s","method":"ping"}' % (b"i" * 100_000), {"i" * 100_000: "ok"}),
    (b'{"jsonrpc":"2.0","id":-1,"method":"ping"}', {-1: "ok"}),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', {}),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', {}),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', {}),
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', {}),
]


def test_ids_of_every_json_type_and_size_are_answered(tmp_path: Path) -> None:
    root = seeded_copy(tmp_path / "proj", tmp_path / "home")
    answers, err = _answers([line for line, _ in ID_PROBES], root, tmp_path / "home", ID_PROBES)
    assert b"Traceback" not in err and "end" in answers, err.decode()[-3000:]
    for _, expected in ID_PROBES:
        for rid, how in expected.items():
            got = answers[rid]
            if how == "ok":
                assert "result" in got, got
            elif how == "batch":
                assert got["batch"] and got["error"]["code"] == -32600
            else:
                assert got["error"]["code"] == how, got
    # ids that are not a string or an integer: refused, answered with a null id
    assert answers[None]["error"]["code"] == -32600


def _serve(root: Path, home: Path) -> subprocess.Popen[bytes]:
    """A server past its handshake (the warm-up starts on ``initialized``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxs", "mcp", "serve", "--workspace", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(home),
    )
    assert proc.stdin is not None and proc.stdout is not None
    client = {"name": "t", "version": "1"}
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    assert b'"result"' in proc.stdout.readline()
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _call(rid: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_requests_queued_when_stdin_closes_are_all_answered(tmp_path: Path) -> None:
    proc = _serve(seeded_copy(tmp_path / "proj", tmp_path / "home"), tmp_path / "home")
    for rid in range(1, 6):
        _send(proc, {"jsonrpc": "2.0", "id": rid, "method": "ping"})
    _send(proc, _call(6, "memory_search", query="deploy"))
    out, err = proc.communicate(timeout=120)
    answered = {json.loads(line)["id"]: json.loads(line) for line in out.splitlines()}
    assert sorted(answered) == [1, 2, 3, 4, 5, 6], err.decode()
    assert answered[6]["result"]["isError"] is False
    assert proc.returncode == 0 and err == b""


def test_a_client_gone_mid_call_leaves_one_line_and_the_write(tmp_path: Path) -> None:
    root = seeded_copy(tmp_path / "proj", tmp_path / "home")
    proc = _serve(root, tmp_path / "home")
    body = "The staging database is reset nightly at 02:00 UTC; do not keep fixtures there."
    _send(proc, _call(1, "memory_add", body=body, introduction="staging reset nightly"))
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.close()  # the host is gone: its ends of both pipes close
    proc.stdin.close()
    assert proc.stderr is not None
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err.decode()
    assert len(err.splitlines()) <= 1 and b"Traceback" not in err, err.decode()
    stored = [p.read_text() for p in (root / ".nxs" / "memories").rglob("*.md")]
    assert sum(body in text for text in stored) == 1


@pytest.mark.parametrize("delay", [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
def test_stdin_closing_during_the_warm_up_exits_cleanly(tmp_path: Path, delay: float) -> None:
    import time

    proc = _serve(seeded_copy(tmp_path / "proj", tmp_path / "home"), tmp_path / "home")
    time.sleep(delay)
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (0, b"")
