"""`nxs warm` and `nxs mcp serve --transport http` answering CLI calls (`nxs.warm.command`; issue 20).

Each server is a real process. Whether it answered a call is read from the client's
`NXS_REUSE_LOG`, and its answer is compared with the same call run in process
(``NXS_NO_REUSE=1``), byte for byte, as in tests/test_reuse.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from nxs import warm
from nxs.warm.command import parse_idle
from tests.conftest import CODE_ENV, make_workspace
from tests.test_reuse import LATER, NXM, NXS, _files, _until_warm, run, seed, warmed

READY = b"nxs warm: answering CLI calls of "


class Warm:
    """A running `nxs warm`: its process and the lines it wrote on stderr."""

    def __init__(self, root: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*NXS, "warm", "--workspace", str(root), *args], cwd=root,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, **CODE_ENV},
        )  # fmt: skip
        self.lines: list[bytes] = []
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.lines.append(line)
            if line.startswith(READY):
                self._ready.set()

    def ready(self) -> None:
        if not self._ready.wait(60):
            self.proc.kill()
            raise AssertionError(f"never ready: {self.lines}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        self._reader.join(30)
        self.proc.stderr.close()  # type: ignore[union-attr]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


def test_idle_durations() -> None:
    assert parse_idle("90s") == 90 and parse_idle("30m") == 1800 and parse_idle(" 2H ") == 7200
    assert parse_idle("0") is None and parse_idle("0m") is None
    for bad in ("30", "", "1.5h", "-1m", "5x", "m", "10 m"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_idle(bad)


def test_warm_answers_calls_as_a_process_would_and_sigterm_removes_its_socket(
    root: Path, tmp_path: Path
) -> None:
    seed(root)
    before = tmp_path / "before"
    shutil.copytree(root, before, symlinks=True)
    search = [*NXM, "search", "deploys", "--json", "--now", LATER]
    add = [*NXM, "add", "Release notes live in docs/releases.", "--introduction",
           "Release notes: docs/releases", "--now", LATER, "--json"]  # fmt: skip
    server = Warm(root, "--idle", "10m")
    try:
        server.ready()
        assert warm.socket_path(root).exists()
        hot_search = warmed(root, search)
        hot_add = warmed(root, add)
        assert hot_add.code == 0, hot_add.err
        hot_files = _files(root)
        code = server.stop()
    finally:
        server.kill()
    assert code == 0 and not warm.socket_path(root).exists()
    assert [line for line in server.lines if not line.startswith(READY)] == []
    shutil.rmtree(root)
    shutil.copytree(before, root, symlinks=True)
    assert hot_search.same() == run(root, search, cold=True).same()
    assert hot_add.same() == run(root, add, cold=True).same()
    assert _files(root) == hot_files


def test_warm_stops_by_itself_once_idle(root: Path) -> None:
    seed(root)
    server = Warm(root, "--idle", "2s")
    try:
        server.ready()
        time.sleep(1.2)  # a call before the idle time is up puts the end off
        assert warmed(root, [*NXM, "list", "--json"]).code == 0
        answered = time.monotonic()
        code = server.proc.wait(timeout=30)
        stopped = time.monotonic()
    finally:
        server.kill()
    assert code == 0 and not warm.socket_path(root).exists()
    assert 1.5 <= stopped - answered < 15, stopped - answered
    after = run(root, [*NXM, "list", "--json"])
    assert after.code == 0 and after.log == ["list: in process, no server"]


def test_a_second_warm_refuses_at_once_and_leaves_the_first(root: Path) -> None:
    seed(root)
    server = Warm(root, "--idle", "1m")
    try:
        server.ready()
        start = time.monotonic()
        second = run(root, [*NXS, "warm", "--workspace", str(root)], env=CODE_ENV)
        took = time.monotonic() - start
        assert second.code == 4, second.err
        assert second.err.count(b"\n") == 1 and b"another server" in second.err, second.err
        assert took < 10  # it loads nothing: no wait for lancedb or the model
        assert warmed(root, [*NXM, "list", "--json"]).code == 0  # the first still answers
    finally:
        assert server.stop() == 0
        server.kill()


def _refused(root: Path, cwd: Path, args: list[str], env: dict[str, str] | None = None) -> bytes:
    start = time.monotonic()
    done = subprocess.run(
        [*NXS, "warm", *args], cwd=cwd, capture_output=True, timeout=60,
        env={**os.environ, **CODE_ENV, **(env or {})},
    )  # fmt: skip
    assert time.monotonic() - start < 30
    assert done.returncode != 0 and done.stdout == b""
    assert not warm.socket_path(root).exists() and not warm.socket_path(root).is_symlink()
    return done.stderr


@pytest.mark.parametrize("idle", ["30", "5x", "-1m", "1.5h", ""])
def test_a_bad_idle_is_refused_before_anything_starts(root: Path, idle: str) -> None:
    err = _refused(root, root, ["--idle", idle])
    assert b"--idle" in err and b"not a duration" in err


def test_warm_refuses_where_it_would_serve_nothing(root: Path, tmp_path: Path) -> None:
    err = _refused(root, root, [], env={warm.OFF_ENV: "1"})
    assert err.count(b"\n") == 1 and b"reuse is off" in err
    outside = tmp_path / "outside"
    outside.mkdir()
    err = _refused(root, outside, [])
    assert err.count(b"\n") == 1 and b"no workspace to serve" in err
    from nxs.workspace import init

    linear_only = tmp_path / "linear-only"
    init(linear_only, ["linear"])
    err = _refused(linear_only, linear_only, [])
    assert err.count(b"\n") == 1 and b"no memory module" in err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_http_server_answers_cli_calls(root: Path) -> None:
    seed(root)
    port = _free_port()
    proc = subprocess.Popen(
        [*NXS, "mcp", "serve", "--transport", "http", "--port", str(port), "--workspace",
         str(root)], cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, **CODE_ENV},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while isinstance(probe := warm.connect(root), str):
            assert time.monotonic() < deadline and proc.poll() is None, "never listened"
            time.sleep(0.1)
        probe.close()
        _until_warm(root, [*NXM, "list", "--json"])
        argv = [*NXM, "search", "pytest tests", "--now", LATER]
        assert warmed(root, argv).same() == run(root, argv, cold=True).same()
        proc.send_signal(signal.SIGTERM)  # uvicorn stops; the listener is closed with it
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert not warm.socket_path(root).exists()
