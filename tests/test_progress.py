"""Progress that moves: counts, rate and time left on a terminal's stderr for import, embed,
reindex and the model download; stdout holds only the answer."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxs import progress


class FakeBar:
    """What `progress._bar` returns, recording each update instead of drawing."""

    def __init__(self, log: list[tuple[str, int, int]], label: str) -> None:
        self.log, self.label, self.stopped = log, label, False

    def update(self, task: Any, *, completed: int, total: int, rate: str) -> None:
        self.log.append((self.label, completed, total))

    def stop(self) -> None:
        self.stopped = True


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    log: list[tuple[str, int, int]] = []
    monkeypatch.setattr(progress, "_mode", "bar")
    monkeypatch.setattr(progress, "_bar", lambda label, total: (FakeBar(log, label), 0, 0.0))
    return log


def test_ticks_move_a_task_between_its_advances(drawn: list) -> None:
    with progress.items("importing memories", 300) as advance:
        for _ in range(3):
            progress.tick(64)  # the embedder, batch by batch, inside the first commit
        advance(200)  # the commit of those 200
        progress.tick(64)
        progress.tick(64)  # would pass the total: held below it until the advance
        advance(100)
    assert drawn == [
        ("importing memories", 64, 300), ("importing memories", 128, 300),
        ("importing memories", 192, 300), ("importing memories", 200, 300),
        ("importing memories", 264, 300), ("importing memories", 299, 300),
        ("importing memories", 300, 300),
    ]  # fmt: skip
    assert progress._bars == {} and progress._open == []


def test_the_innermost_task_gets_the_ticks_and_nothing_shows_when_disabled(
    drawn: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    with progress.items("outer", 10) as outer, progress.items("inner", 4):
        progress.tick(2)
        outer(1)
    assert drawn == [("inner", 2, 4), ("outer", 1, 10)]
    monkeypatch.setattr(progress, "_mode", None)
    drawn.clear()
    with progress.items("quiet", 5) as advance:
        progress.tick(1)
        advance(5)
    assert drawn == []


def test_the_model_download_uses_pips_bar_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nxm.embed.model import _pip_bar

    monkeypatch.setattr(progress, "_mode", None)
    assert _pip_bar() == "off"
    monkeypatch.setattr(progress, "_mode", "lines")
    assert _pip_bar() == "off"
    monkeypatch.setattr(progress, "_mode", "bar")
    assert _pip_bar() == "on"


def test_off_a_terminal_long_work_prints_plain_lines_and_short_work_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(progress, "_mode", "lines")
    with progress.items("indexing memories", 10) as advance:
        advance(10)  # at once: nothing
    assert capsys.readouterr().err == ""
    with progress.items("embedding memories", 2050) as advance:
        clock[0] += 1.0
        advance(100)  # before QUIET_S: nothing yet
        clock[0] += 2.0
        advance(200)  # 2 s after the first report: the first line
        clock[0] += 1.0
        advance(200)  # within EVERY_S: nothing
        clock[0] += 10.0
        advance(1550)  # done: the last line
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "nxs: embedding memories: 300 of 2,050 (150/s, about 12 s left)",
        "nxs: embedding memories: 2,050 of 2,050 (158/s)",
    ]


def on_terminal(args: list[str], workspace: Path, stdin: bytes = b"") -> tuple[bytes, bytes]:
    """Run nxm with stderr on a pseudo-terminal: (stdout, what the terminal showed)."""
    import pty

    from tests.conftest import CODE_ENV

    main, secondary = pty.openpty()
    shown = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(main, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    env = {**os.environ, **CODE_ENV, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", "from nxm.cli import main; main()", *args, "--workspace",
         str(workspace)],
        input=stdin, stdout=subprocess.PIPE, stderr=secondary, env=env, timeout=300,
        check=False,
    )  # fmt: skip
    os.close(secondary)
    reader.join(timeout=10)
    os.close(main)
    assert done.returncode == 0, bytes(shown).decode(errors="replace")[-2000:]
    return done.stdout, bytes(shown)


@pytest.fixture
def exported(workspace: Path) -> bytes:
    from nxm.port import export_lines
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(workspace))
    for i in range(300):
        svc.add(body=f"Fact {i} about the queue and its retries.", introduction=f"Queue fact {i}",
                now="2026-05-29T10:00:00.000Z", actor="t")  # fmt: skip
    data = b"".join(export_lines(svc.store.records()))
    svc.store.close()
    return data


def test_import_embed_and_reindex_show_counts_on_stderr_only(
    exported: bytes, tmp_path: Path
) -> None:
    from conftest import make_workspace

    target = make_workspace(tmp_path / "other")
    out, shown = on_terminal(["import", "-", "--json"], target, stdin=exported)
    assert orjson.loads(out)["imported"] == 300  # stdout holds only the answer
    assert b"importing memories" in shown and b"300/300" in shown
    out, shown = on_terminal(["embed", "--all", "--json"], target)
    assert orjson.loads(out)["embedded"] == 300
    assert b"embedding memories" in shown and b"300/300" in shown
    out, shown = on_terminal(["reindex", "--json"], target)
    assert orjson.loads(out)["memories"] == 300
    assert b"reading memory files" in shown and b"300/300" in shown
