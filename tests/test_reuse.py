"""CLI calls answered by a warm server (`nxs.warm`, `nxs.warm.server`; issue 20).

Every answer a warm server gives is compared with the answer the same call gives in process
(``NXS_NO_REUSE=1``) on the same store: stdout, stderr and exit code, byte for byte. Whether the
server answered is read from the client's `NXS_REUSE_LOG` file, so a test of reuse fails when
the call quietly ran in process, and a refusal test names the refusal it expects.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from nxs import warm
from nxs.mcp.server import Seam
from nxs.warm.server import Listener
from tests.conftest import CODE_ENV, make_workspace

NOW = "2026-05-29T10:00:00.000Z"
LATER = "2026-05-29T11:00:00.000Z"
NXM = [sys.executable, "-c", "from nxm.cli import main; main()"]
NXS = [sys.executable, "-m", "nxs"]


class Call:
    """One CLI process: what it printed, its exit code, and who answered it."""

    def __init__(self, done: subprocess.CompletedProcess[bytes], log: list[str]) -> None:
        self.out, self.err, self.code, self.log = done.stdout, done.stderr, done.returncode, log

    def same(self) -> tuple[bytes, bytes, int]:
        return self.out, self.err, self.code


def run(root: Path, argv: list[str], *, cold: bool = False, env: dict[str, str] | None = None,
        stdin: bytes | None = None) -> Call:  # fmt: skip
    log = root.parent / f"reuse-{time.monotonic_ns()}.log"
    extra = {warm.OFF_ENV: "1"} if cold else {}
    done = subprocess.run(
        argv, cwd=root, input=stdin, capture_output=True, timeout=120,
        env={**os.environ, warm.LOG_ENV: str(log), "NXM_ACTOR": "tester", **extra, **(env or {})},
    )  # fmt: skip
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return Call(done, lines)


def seed(root: Path) -> list[str]:
    """Three memories, written in process; their keys."""
    keys = []
    for body, intro, category in (
        ("Run the tests with pytest -q; CI allows ten minutes.", "Tests: pytest -q", "convention"),
        ("Deploys are blue-green behind the load balancer.", "Deploys are blue-green", "decision"),
        ("The cache must be warmed before the nightly import.", "Warm the cache first", None),
    ):
        argv = [*NXM, "add", body, "--introduction", intro, "--now", NOW, "--json"]
        got = run(root, [*argv, *(["--category", category] if category else [])], cold=True)
        assert got.code == 0, got.err
        import orjson

        keys.append(orjson.loads(got.out)["memory"]["key"])
    return keys


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


class Served:
    """A warm server in this process: a `Seam` and its `Listener`, as `nxs mcp serve` has."""

    def __init__(self, root: Path) -> None:
        self.seam = Seam(workspace=str(root))
        self.listener = Listener(self.seam)
        self.streams = (sys.stdout, sys.stderr)
        assert self.listener.start()
        with self.seam.lock:  # what a server's first call (or its warm-up) loads
            assert self.listener._state() is None

    def close(self) -> None:
        self.listener.close()
        sys.stdout, sys.stderr = self.streams
        for ctx_service in self.seam.services.values():
            store = getattr(ctx_service, "store", None)
            if store is not None:
                store.close()


@pytest.fixture
def served(root: Path) -> Any:
    server = Served(root)
    yield server
    server.close()


def warmed(root: Path, argv: list[str], **kw: Any) -> Call:
    """The call, answered by the warm server (the test fails if it ran in process)."""
    got = run(root, argv, **kw)
    assert got.log and got.log[-1].endswith(": warm"), got.log
    return got


# -- byte-identical answers --------------------------------------------------------------------


READS = [
    ["list"],
    ["list", "--json"],
    ["list", "--category", "decision", "--json"],
    ["search", "pytest tests"],
    ["search", "pytest tests", "--json"],
    ["search", "deploys", "--mode", "keyword"],
    ["search", "deploys", "--mode", "keyword", "--json"],
    ["search", "warm cache", "--mode", "semantic", "--json"],
    ["recall", "how do we deploy"],
    ["recall", "how do we deploy", "--json"],
    ["show", "zzzz"],  # a refusal: not found, on stderr
    ["show", "zzzz", "--json"],  # the same, as the envelope on stdout
]


def test_reads_searches_recall_and_errors_are_byte_identical(root: Path, served: Served) -> None:
    keys = seed(root)
    calls = [*READS, ["show", keys[0][:6]], ["show", keys[1], "--json"], ["history", keys[0]]]
    for argv in calls:
        argv = [*NXM, *argv, "--now", LATER]
        cold = run(root, argv, cold=True)
        hot = warmed(root, argv)
        assert hot.same() == cold.same(), argv
    assert run(root, [*NXM, "show", "zzzz"], cold=True).code == 3  # the error class kept its exit


def test_a_refusal_before_the_call_is_the_clients_own(root: Path, served: Served) -> None:
    # bad values are refused by validate in the client, as in process: no server is asked
    for argv in (["search", "x", "--limit", "0"], ["add", "body"], ["show"]):
        cold = run(root, [*NXM, *argv], cold=True)
        hot = run(root, [*NXM, *argv])
        assert hot.same() == cold.same() and cold.code == 2 and hot.log == []


WRITES = [
    ["add", "The staging database is reset every Monday.", "--introduction",
     "Staging resets on Mondays", "--category", "gotcha", "--json"],
    ["add", "-", "--introduction", "Read from stdin"],
    ["update", "{k0}", "--body", "Run the tests with pytest -q -x; CI allows ten minutes."],
    ["forget", "{k1}", "--json"],
    ["close", "{k2}"],
    ["classify", "{k2}", "--category", "gotcha", "--json"],
    ["feedback", "{k0}", "POSITIVE", "--comment", "saved a CI run"],
    ["update", "{k0}"],  # a no-op write: a validation error from the handler
]  # fmt: skip


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[:2] != (".nxs", "index")
    }


@pytest.mark.parametrize("template", WRITES, ids=lambda t: " ".join(t[:2]))
def test_writes_are_byte_identical_and_leave_the_same_files(
    root: Path, tmp_path: Path, template: list[str]
) -> None:
    keys = seed(root)
    argv = [*NXM, *(w.format(k0=keys[0], k1=keys[1], k2=keys[2]) for w in template), "--now", LATER]
    stdin = b"Body from a pipe: the build cache lives in /var/cache/build.\n"
    before = tmp_path / "before"
    shutil.copytree(root, before, symlinks=True)
    cold = run(root, argv, cold=True, stdin=stdin)
    cold_files = _files(root)
    shutil.rmtree(root)
    shutil.copytree(before, root, symlinks=True)
    server = Served(root)
    try:
        hot = warmed(root, argv, stdin=stdin)
        # what the server wrote is what an in-process read sees right after
        listed = run(root, [*NXM, "list", "--status", "all", "--json"], cold=True)
    finally:
        server.close()
    assert hot.same() == cold.same()
    assert _files(root) == cold_files
    if cold.code == 0 and template[0] == "add":
        assert b"Staging" in listed.out or b"Read from stdin" in listed.out


def test_prime_is_byte_identical(root: Path, served: Served) -> None:
    seed(root)
    for extra in ([], ["--format", "claude-code"], ["--seam", "mcp"], ["--budget", "300"]):
        argv = [*NXS, "prime", "--now", LATER, *extra]
        cold = run(root, argv, cold=True)
        hot = warmed(root, argv)
        assert hot.same() == cold.same()
        assert b"Deploys are blue-green" in cold.out or extra == ["--budget", "300"]


def test_what_the_handler_says_on_stderr_comes_back(tmp_path: Path) -> None:
    # a model that cannot load: in process every search says so on stderr; the warm server's
    # first search says it through the socket, and later ones are refused (it would not say it
    # again), so every call prints what a new process prints
    root = make_workspace(tmp_path / "ws", model="no-such/model")
    (root / ".nxs" / "memories").mkdir(exist_ok=True)
    argv = [*NXM, "add", "Plain body text here.", "--introduction", "A memory", "--now", NOW]
    assert run(root, argv, cold=True).code == 0
    server = Served(root)
    try:
        search = [*NXM, "search", "plain body", "--json", "--now", LATER]
        cold = run(root, search, cold=True)
        assert b"semantic search unavailable" in cold.err
        first = warmed(root, search)
        second = run(root, search)
    finally:
        server.close()
    assert first.same() == cold.same()
    assert second.same() == cold.same()
    assert second.log == ["search: in process, refused: the model did not load"]


def test_unreadable_memory_files_make_the_server_refuse(root: Path, served: Served) -> None:
    seed(root)
    (root / ".nxs" / "memories" / "0123456789abcdef.md").write_text("no front matter\n")
    argv = [*NXM, "list", "--json", "--now", LATER]
    cold = run(root, argv, cold=True)
    run(root, argv)  # the server's store reads the file here
    again = run(root, argv)
    assert again.same() == cold.same()
    assert again.log == ["list: in process, refused: memory files that cannot be read"]


# -- refusals: missing, stale, slow, busy, foreign ---------------------------------------------


def _ask(root: Path, op: str = "list", writes: bool = False, **args: Any) -> tuple[Any, float]:
    from nxs.ops import validate
    from nxs.registry import operations

    table = {o.name: o for o in operations(["memory"])}
    request = {"op": op, "kwargs": validate(table[op], args), "now": LATER, "actor": "tester"}
    start = time.perf_counter()
    got = warm.ask(root, request, writes=writes)
    return got, time.perf_counter() - start


def test_no_socket_costs_nothing(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = root.parent / "log"
    monkeypatch.setenv(warm.LOG_ENV, str(log))
    got, took = _ask(root)
    assert got is None and took < 0.02
    assert log.read_text() == "list: in process, no server\n"


def _stale(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.fsencode(path))
    sock.close()  # the file stays, nobody listens: a server killed with -9


def test_a_stale_socket_is_passed_at_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root)
    _stale(warm.socket_path(root))
    log = root.parent / "log"
    monkeypatch.setenv(warm.LOG_ENV, str(log))
    got, took = _ask(root)
    assert got is None and took < 0.05
    assert log.read_text() == "list: in process, nobody listens\n"
    argv = [*NXM, "list", "--json", "--now", LATER]
    assert run(root, argv).same() == run(root, argv, cold=True).same()
    # a server started later takes the stale file's place
    server = Served(root)
    try:
        warmed(root, argv)
    finally:
        server.close()
    assert not warm.socket_path(root).exists()  # removed on close


class Fake:
    """A listener of this user that answers as told (``ready``, then closes; or never)."""

    def __init__(self, root: Path, behaviour: str) -> None:
        self.path = warm.socket_path(root)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(os.fsencode(self.path))
        self.sock.listen(4)
        self.behaviour, self.conns = behaviour, []  # type: list[socket.socket]
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.behaviour == "ready-then-die":
                warm.receive(conn)
                warm.send(conn, {"ready": True})
                warm.receive(conn)
                conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self.conns:
            conn.close()
        self.path.unlink(missing_ok=True)


def test_a_silent_listener_is_not_waited_for(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root)
    fake = Fake(root, "silent")
    log = root.parent / "log"
    monkeypatch.setenv(warm.LOG_ENV, str(log))
    try:
        got, took = _ask(root)
        argv = [*NXM, "list", "--json", "--now", LATER]
        hot, cold = run(root, argv), run(root, argv, cold=True)
    finally:
        fake.close()
    assert got is None and took < warm.HANDSHAKE_S + 0.15
    assert log.read_text() == "list: in process, no answer in time\n"
    assert hot.same() == cold.same() and hot.log == ["list: in process, no answer in time"]


def test_a_server_lost_mid_call(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Fake(root, "ready-then-die")
    try:
        got, _ = _ask(root, "list")
        assert got is None  # a read runs in process
        with pytest.raises(warm.UpstreamError) as err:
            _ask(
                root, "forget", writes=True, key="0123456789abcdef"
            )  # a write may have been saved: never run twice
    finally:
        fake.close()
    assert err.value.code == "SERVER_LOST"


def test_a_busy_server_refuses_at_once(root: Path, served: Served) -> None:
    seed(root)
    argv = [*NXM, "list", "--json", "--now", LATER]
    with served.seam.lock:  # an MCP tool call is running
        start = time.perf_counter()
        hot = run(root, argv)
        took = time.perf_counter() - start
    assert hot.log == ["list: in process, refused: busy"]
    assert hot.same() == run(root, argv, cold=True).same()
    assert took < 30  # (no wait for the lock: the call ran at once, in process)


def test_another_environment_or_protocol_is_refused(root: Path, served: Served) -> None:
    seed(root)
    argv = [*NXM, "list", "--json", "--now", LATER]
    hot = run(root, argv, env={"NXS_LOCK_WAIT_S": "9"})  # changes how a write waits: foreign
    assert hot.log == ["list: in process, refused: another nxs (code, packages or environment)"]
    assert hot.same() == run(root, argv, cold=True, env={"NXS_LOCK_WAIT_S": "9"}).same()
    # the actor and the workspace are the client's own: they do not make a server foreign
    assert warmed(root, argv, env={"NXS_ACTOR": "someone"}).code == 0
    conn = warm.connect(root)
    assert not isinstance(conn, str)
    with conn:
        warm.send(conn, {"hello": 999, "op": "list", "kwargs": {}})
        assert warm.receive(conn, time.monotonic() + 5) == {"refused": "another protocol"}


def test_another_workspaces_server_is_refused(root: Path, served: Served, tmp_path: Path) -> None:
    other = make_workspace(tmp_path / "other")
    conn = warm.connect(root)
    assert not isinstance(conn, str)
    with conn:  # the socket of `root`, asked for `other`
        request = {"hello": warm.PROTOCOL, "fp": warm.fingerprint(), "root": str(other)}
        warm.send(conn, {**request, "op": "list", "kwargs": {}, "now": NOW, "actor": "t"})
        assert warm.receive(conn, time.monotonic() + 5) == {"refused": "another workspace"}
    # a socket file that is a link to another workspace's socket is not this workspace's
    link = warm.socket_path(other)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(warm.socket_path(root))
    assert warm.connect(other) == "not a socket of this user"


@pytest.mark.skipif(os.getuid() != 0, reason="needs to make a file of another user")
def test_another_users_socket_is_refused(root: Path) -> None:
    fake = Fake(root, "silent")
    try:
        os.chown(fake.path, 65534, 65534)
        assert warm.connect(root) == "not a socket of this user"
    finally:
        fake.close()


def test_no_reuse_turns_it_off(root: Path, served: Served) -> None:
    seed(root)
    got = run(root, [*NXM, "list", "--json"], env={warm.OFF_ENV: "1"})
    assert got.code == 0 and got.log == []
    assert warmed(root, [*NXM, "list", "--json"]).code == 0  # and without it, the server


def test_a_long_workspace_path_uses_a_private_short_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    runtime = Path(tempfile.mkdtemp(prefix="nxs-run-"))  # a short path, as /run/user/UID is
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    root = make_workspace(tmp_path / ("deep-" * 20) / "ws")
    path = warm.socket_path(root)
    assert path.parent == runtime / "nxs" and len(os.fsencode(path)) < 100
    seed(root)
    server = Served(root)
    try:
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
        warmed(root, [*NXM, "list", "--json"])
        path.parent.chmod(0o755)  # another user could reach it now: not used
        assert warm.connect(root) == "not a socket of this user"
    finally:
        server.close()
        shutil.rmtree(runtime, ignore_errors=True)


# -- a real `nxs mcp serve` ------------------------------------------------------------------------


def _serve(root: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*NXS, "mcp", "serve", "--workspace", str(root)], cwd=root,
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, **CODE_ENV},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        probe = warm.connect(root)
        if not isinstance(probe, str):
            probe.close()
            return proc
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the server never listened")


def _until_warm(root: Path, argv: list[str]) -> Call:
    """The server answers once its first call has loaded what it needs (the handshake bound
    can pass while a fresh server imports the store)."""
    for _ in range(50):
        got = run(root, argv)
        if got.log and got.log[-1].endswith(": warm"):
            return got
        time.sleep(0.1)
    raise AssertionError(f"never answered warm: {got.log}")


def test_mcp_serve_answers_and_a_write_survives_kill_9(root: Path) -> None:
    keys = seed(root)
    proc = _serve(root)
    try:
        _until_warm(root, [*NXM, "list", "--json"])
        argv = [*NXM, "search", "deploys", "--json", "--now", LATER]
        assert warmed(root, argv).same() == run(root, argv, cold=True).same()
        add = [*NXM, "add", "Release notes live in docs/releases.", "--introduction",
               "Release notes: docs/releases", "--now", LATER, "--json"]  # fmt: skip
        acknowledged = warmed(root, add)
        assert acknowledged.code == 0
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdin.close()  # type: ignore[union-attr]
    assert warm.socket_path(root).exists()  # a kill -9 leaves its socket file: stale now
    after = run(root, [*NXM, "search", "release notes", "--mode", "keyword", "--json"])
    assert after.log == ["search: in process, nobody listens"]
    assert b"Release notes: docs/releases" in after.out
    assert keys[0].encode() in run(root, [*NXM, "list", "--json"], cold=True).out


def test_two_calls_at_once(root: Path) -> None:
    seed(root)
    proc = _serve(root)
    try:
        _until_warm(root, [*NXM, "list", "--json"])
        argv = [*NXM, "search", "pytest", "--json", "--now", LATER]
        logs = [root.parent / f"two-{i}.log" for i in range(2)]
        env = {**os.environ, "NXM_ACTOR": "tester"}
        both = [
            subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**env, warm.LOG_ENV: str(log)})
            for log in logs
        ]  # fmt: skip
        answers = [p.communicate(timeout=120) + (p.returncode,) for p in both]
        cold = run(root, argv, cold=True)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=30)
    assert answers == [cold.same(), cold.same()]
    said = [log.read_text() for log in logs]
    assert all(s in ("search: warm\n", "search: in process, refused: busy\n") for s in said), said


# -- what travels ----------------------------------------------------------------------------------


def test_only_exact_json_values_travel() -> None:
    from nxs.warm.server import plain

    value = {"a": [1, 2.5, "x", None, True, {"b": -(2**63)}]}
    assert plain(value) == value
    import numpy as np

    for bad in ({"t": (1, 2)}, {"n": np.float32(0.5)}, {1: "key"}, {"f": float("nan")}, {2**64}):
        with pytest.raises(TypeError):
            plain(bad)


def test_a_read_whose_result_would_not_travel_runs_in_process(root: Path, served: Served) -> None:
    import dataclasses

    seed(root)
    op = served.listener.ops["list"]
    served.listener.ops["list"] = dataclasses.replace(op, handler=lambda ctx, **kw: {"t": (1, 2)})
    argv = [*NXM, "list", "--json", "--now", LATER]
    hot = run(root, argv)
    assert hot.log == ["list: in process, a result that does not travel exactly"]
    assert hot.same() == run(root, argv, cold=True).same()


def test_the_servers_progress_is_drawn_by_the_client(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nxs import progress

    seed(root)
    (root / ".nxs" / "index" / "cache.db").unlink()  # the server's first look reads every file
    frames: list[Any] = []
    drawn: list[Any] = []
    real_receive, real_report = warm.receive, progress.report

    def receive(sock: Any, deadline: float | None = None) -> Any:
        got = real_receive(sock, deadline)
        frames.append(got)
        return got

    def report(label: str, done: int, total: int) -> None:
        if threading.current_thread() is threading.main_thread():
            drawn.append((label, done, total))  # the client's bar (the server's thread forwards)
        real_report(label, done, total)

    monkeypatch.setattr(warm, "receive", receive)
    monkeypatch.setattr(progress, "report", report)
    server = Served(root)
    try:
        got, _ = _ask(root, "list")
    finally:
        server.close()
    assert got is not None and "result" in got and got["result"]["total"] == 3
    assert {"progress": ["reading memory files", 3, 3]} in frames
    assert drawn == [("reading memory files", 3, 3)]


def test_a_server_of_other_code_is_refused(root: Path, served: Served) -> None:
    # the client's code changed after the server started (an upgrade, a checkout): its
    # fingerprint is not the server's
    seed(root)
    source = Path(warm.__file__).parents[1] / "render.py"
    before = source.stat()
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    try:
        hot = run(root, [*NXM, "list", "--json"])
    finally:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert hot.log == ["list: in process, refused: another nxs (code, packages or environment)"]
    assert warmed(root, [*NXM, "list", "--json"]).code == 0  # the same code again: served


def test_a_config_changed_under_the_server_is_followed(root: Path) -> None:
    seed(root)
    argv = [*NXM, "search", "deploys", "--json", "--now", LATER]
    # started here, not in a fixture: pytest sets its own stderr again between the two, and
    # the server's stderr must be the one it split (as in `nxs mcp serve`)
    server = Served(root)
    try:
        warmed(root, argv)
        config = root / ".nxs" / "config.toml"
        time.sleep(0.01)  # a new mtime: the server opens the workspace again
        config.write_text(config.read_text().replace('model = "hash"', 'model = "no-such/model"'))
        cold = run(root, argv, cold=True)
        hot = warmed(root, argv)
    finally:
        server.close()
    assert hot.same() == cold.same() and b"semantic search unavailable" in cold.err


def test_a_client_gone_after_run_leaves_a_whole_write(root: Path, served: Served) -> None:
    # the CLI was interrupted (Ctrl-C) after telling the server to run: the write is whole,
    # and the server answers the next call
    from nxs.ops import validate
    from nxs.registry import operations

    seed(root)
    op = next(o for o in operations(["memory"]) if o.name == "add")
    body = "Interrupted writes still land whole."
    kwargs = validate(op, {"body": body, "introduction": "Interrupted add"})
    conn = warm.connect(root)
    assert not isinstance(conn, str)
    with conn:
        request = {"op": "add", "kwargs": kwargs, "now": LATER, "actor": "tester"}
        warm.send(conn, {**request, "hello": warm.PROTOCOL, "fp": warm.fingerprint(),
                         "root": str(root)})  # fmt: skip
        assert warm.receive(conn, time.monotonic() + 5) == {"ready": True}
        warm.send(conn, {"run": True})
    deadline = time.monotonic() + 30
    while not served.seam.lock.acquire(timeout=0.1):  # the call is still running
        assert time.monotonic() < deadline
    served.seam.lock.release()
    listed = run(root, [*NXM, "list", "--json"], cold=True)
    assert b"Interrupted add" in listed.out
    assert warmed(root, [*NXM, "list", "--json"]).out == listed.out


def test_calls_one_right_after_another_are_all_answered(
    root: Path, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the answer leaves after the call lock is free: the next call is not refused as busy
    seed(root)
    log = root.parent / "log"
    monkeypatch.setenv(warm.LOG_ENV, str(log))
    for _ in range(10):
        got, _ = _ask(root)
        assert got is not None and got["result"]["total"] == 3
    assert log.read_text() == "list: warm\n" * 10
