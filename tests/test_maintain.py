"""Compaction of a large table in a detached child (`nxm.maintain`): the writer does not wait
for it, nothing is lost, one maintainer at a time, and a clear failure without a store."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import make_workspace

import nxm.maintain
import nxm.store.index as store_module
from nxm.service import MemoryService
from nxm.store.index import Upkeep

NOW = "2026-05-29T10:00:00.000Z"


def add(svc: MemoryService, i: int) -> str:
    body = f"Fact {i}: the shard-{i} exporter writes to bucket-{i} every {i + 3} minutes."
    return svc.add(body=body, introduction=body[:40], category="notes", now=NOW, actor="t")[
        "memory"
    ]["key"]


def upkeep(svc: MemoryService) -> Upkeep:
    table = svc.store.index.table()
    table.checkout_latest()
    return Upkeep.of(table)


def maintain(root: Path) -> subprocess.CompletedProcess[str]:
    """`python -m nxm.maintain ROOT`, as `spawn` starts it (the environment carries PYTHONPATH)."""
    return subprocess.run(
        [sys.executable, "-m", "nxm.maintain", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def large(ctx: Any, monkeypatch: pytest.MonkeyPatch) -> MemoryService:
    """A service whose table counts as large (above `FOLD_EVERY_WRITE_UP_TO`) from its first
    row and is due after 4 fragments. Only this process sees the constants: the child
    re-checks for more than one fragment or rows outside the index."""
    monkeypatch.setattr(store_module, "FOLD_EVERY_WRITE_UP_TO", 0)
    monkeypatch.setattr(store_module, "COMPACT_EVERY", 4)
    svc = ctx.memory
    svc.store.index.table(create=True)  # this process searches: its writes keep the index
    return svc


def test_a_large_table_is_compacted_by_a_child_the_writer_does_not_wait_for(
    large: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = large
    keys = [add(svc, 0)]  # the first index write makes the full-text index, inline
    while svc.store.index.maintainer is None:
        keys.append(add(svc, len(keys)))
        assert len(keys) <= 8, "no maintainer was started"
    child = svc.store.index.maintainer
    with svc.store.locked():  # the child cannot start compacting while this is held
        assert child.poll() is None  # the write returned while its maintainer runs
        state = upkeep(svc)
        assert state.fragments >= 4 and state.unindexed > 0  # not compacted by the writer
    assert child.wait(timeout=120) == 0
    state = upkeep(svc)
    # one pass: LanceDB merges the indexed fragment and the rest separately (1 + 1)
    assert (state.fragments, state.unindexed, state.rows) == (2, 0, len(keys))
    rows = svc.store.index.table().search().select(["key"]).limit(None).to_arrow()
    assert sorted(rows.column("key").to_pylist()) == sorted(keys)  # what LanceDB holds now
    for i, key in enumerate(keys):
        got = svc.search(query=f"shard-{i} bucket-{i}", mode="keyword", limit=1, now=NOW)
        assert [r["key"] for r in got["results"]] == [key]
        got = svc.search(
            query=svc.show(key=key)["memory"]["body"], mode="semantic", limit=1, now=NOW
        )
        assert [r["key"] for r in got["results"]] == [key]

    # the writer's next write finds the child reaped and every memory where it was
    keys.append(add(svc, len(keys)))
    assert svc.store.index.maintainer is None  # reaped; not due again yet
    assert sorted(MemoryService(svc.ws).store.records()) == sorted(keys)


def test_the_writer_starts_no_second_maintainer_while_one_runs(
    large: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    waited: list[float] = []

    class Child:
        done: int | None = None

        def poll(self) -> int | None:
            return self.done

        def wait(self, timeout: float) -> None:
            waited.append(timeout)

    started: list[Child] = []

    def spawn(root: Path) -> Child:
        assert root == large.ws.root
        started.append(Child())
        return started[-1]

    monkeypatch.setattr(nxm.maintain, "spawn", spawn)
    for i in range(6):  # due from the fourth fragment on
        add(large, i)
    assert len(started) == 1 and not waited
    started[0].done = 0
    add(large, 6)
    assert len(started) == 2 and large.store.index.maintainer is started[1]
    # far past due (twice `COMPACT_EVERY` fragments, the maintainer kept from the lock by the
    # writes): the next write first waits for it, and only then
    table = large.store.index.table()
    for i in range(7, 14):
        table.checkout_latest()
        behind = Upkeep.of(table).fragments >= 2 * store_module.COMPACT_EVERY
        before = len(waited)
        add(large, i)
        assert len(waited) == before + behind, i
    assert waited and set(waited) == {store_module.MAINTAINER_WAIT_S}


def test_a_second_maintainer_exits_at_once(large: MemoryService) -> None:
    for i in range(3):
        add(large, i)
    before = upkeep(large)
    version = large.store.index.table().version
    assert before.pending
    fd = os.open(large.ws.dir / "index" / nxm.maintain.LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a running maintainer holds it
        got = maintain(large.ws.root)
    finally:
        os.close(fd)
    assert (got.returncode, got.stdout, got.stderr) == (0, "", "")
    assert upkeep(large) == before
    assert large.store.index.table().version == version  # nothing was written
    got = maintain(large.ws.root)  # alone, it compacts
    assert (got.returncode, got.stdout, got.stderr) == (0, "", "")
    after = upkeep(large)
    assert after.fragments < before.fragments and after.unindexed == 0
    large.store.compact()  # the one fragment left besides the indexed one
    assert not upkeep(large).pending
    version = large.store.index.table().version
    got = maintain(large.ws.root)  # then it finds nothing to do
    assert (got.returncode, got.stdout, got.stderr) == (0, "", "")
    assert large.store.index.table().version == version


@pytest.mark.parametrize("what", ["no workspace", "no store"])
def test_the_maintainer_fails_clearly_without_a_store(tmp_path: Path, what: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    if what == "no store":
        make_workspace(root)
    got = maintain(root)
    assert got.returncode != 0
    assert got.stdout == ""
    assert got.stderr.startswith("nxm.maintain: ") and got.stderr.count("\n") == 1, got.stderr
    assert ("no memory index" if what == "no store" else "workspace") in got.stderr
    if what == "no store":
        assert not (root / ".nxs" / "index" / "lance" / "memories.lance").exists()  # none made
