"""Faults of the disk and the files: a clear error that says what to do, nothing lost, recovery.

- a corrupted or mistyped `.nxs/config.toml`: every seam refuses with BAD_CONFIG naming the file
  and how to fix it; prime still prints; once fixed, every memory is there and writes work;
- corrupted derived files (the record cache, a journal, the usage log): reads and writes go on;
- the local index deleted (the workspace's folder in the user's cache): every verb works, and
  the index is made again;
- a read-only `.nxs/`: simulated (``os.open`` raising EROFS for writes under `.nxs/`, as tests
  run as root, which ignores file modes), and for real with a read-only bind mount when the
  test may mount (skipped otherwise);
- a full disk: simulated (the journal's or a memory file's write raising ENOSPC: refused, nothing
  written; LanceDB's write failing: the write stands, a search says the index is behind), and for
  real on a 3 MB tmpfs when the test may mount (skipped otherwise).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from nxs.mcp.server import Seam
from tests.parity.state import KEYS, NOW, seeded_copy
from tests.reliability.common import child_env, consistent, fingerprint, run_cli, store_docs


def nxm(*args: str) -> tuple[int, dict[str, Any], bytes]:
    code, out, err = run_cli("nxm", [*args, "--json"])
    return code, json.loads(out), err


def state(root: Path) -> dict[str, dict[str, Any]]:
    docs, doubled = store_docs(root)
    assert doubled == []
    return docs


def add(n: int) -> tuple[int, dict[str, Any], bytes]:
    body = f"Fault test memory {n}: the cache is rebuilt on demand (token faulttok{n})."
    return nxm("add", body, "--introduction", f"fault {n}", "--now", NOW, "--actor", "f")


def healthy(root: Path, n: int) -> None:
    """The next normal write works, and leaves the cache and NEXUS_MEMORY.md equal to the files."""
    code, answer, err = add(n)
    assert code == 0, (answer, err)
    assert answer["memory"]["key"] in consistent(root)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = seeded_copy(tmp_path / "proj")
    monkeypatch.chdir(path)
    return path


BAD_CONFIGS = [
    b"\xff\xfe not utf-8",
    b"[nxs\nmodules = [",
    b"nxs = 3\n",
    b'[nxs]\nmodules = "memory"\n',
    b'[nxs]\nmodules = ["memory"]\n[memory]\nmodel = "hash"\ntask_ttl_days = "a week"\n',
    b'[nxs]\nmodules = ["memory"]\n[memory]\nmodel = "hash"\nprime_budget = "big"\n',
    b'memory = "hash"\n[nxs]\nmodules = ["memory"]\n',
]


@pytest.mark.parametrize("config", BAD_CONFIGS, ids=range(len(BAD_CONFIGS)))
def test_corrupted_config(root: Path, config: bytes) -> None:
    path = root / ".nxs" / "config.toml"
    good = path.read_bytes()
    before = state(root)
    served = Seam(str(root), groups="all")  # a server started before the file broke
    path.write_bytes(config)
    snapshot = fingerprint(root)
    for args in (["list"], ["show", KEYS[0]], ["search", "pytest"]):
        code, answer, _ = nxm(*args)
        assert (code, answer["code"]) == (2, "BAD_CONFIG"), answer
        assert str(path) in answer["message"]
        assert "fix the file" in answer["suggestion"]
    code, answer, _ = add(1)
    assert (code, answer["code"]) == (2, "BAD_CONFIG")
    for seam in (served, Seam(str(root), groups="all")):  # and one started after
        text, failed = seam.call("memory_list", {})
        assert failed and json.loads(text)["code"] == "BAD_CONFIG", text
    code, out, err = run_cli("nxs", ["prime"])
    assert code == 0 and b"Traceback" not in err
    assert "config.toml" in out.decode() and "fix the file" in out.decode()
    assert "nxm init" not in out.decode()
    assert fingerprint(root) == snapshot
    path.write_bytes(good)
    assert state(root) == before
    healthy(root, 2)


@pytest.mark.parametrize(
    ("name", "junk"),
    [
        ("records.db", b"SQLite format 3\x00 but then garbage" * 50),
        ("records.db", b""),
        ("../../vectors.db", b"SQLite format 3\x00 but then garbage" * 50),
        (".nxs/journal", b'[{"key": "cut sho'),
        (".nxs/journal", b'[{"key": "../../etc/passwd", "md": null, "append": null}]'),
        ("lance/memories.lance/_versions/1.manifest", b"\x00garbage"),
        ("usage.log", b"\xff\xfe\n{not json\n"),
    ],
    ids=[
        "cache-garbage",
        "cache-empty",
        "vectors",
        "journal-cut",
        "journal-foreign",
        "manifest",
        "usage",
    ],  # fmt: skip
)
def test_corrupted_derived_files(root: Path, name: str, junk: bytes) -> None:
    from nxm.store.local import Local

    before = state(root)
    path = root / name if name.startswith(".nxs/") else Local(root).dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(junk)  # a damaged file in its place
    for args in (
        ["list"],
        ["show", KEYS[0]],
        ["search", "pytest"],
        ["graph", "search", "pytest"],
        ["stats"],
    ):
        code, answer, err = nxm(*args)
        assert code == 0, (args, answer, err.decode())
    assert state(root) == before
    healthy(root, 3)


def test_a_deleted_index_is_made_again(root: Path) -> None:
    from nxm.store.local import Local

    before = state(root)
    shutil.rmtree(Local(root).dir)
    code, found, _ = nxm("search", "pytest", "--mode", "keyword")
    assert code == 0 and found["results"]
    code, listed, _ = nxm("list", "--status", "all", "--page-size", "50")
    assert code == 0 and listed["total"] == len(before)
    shutil.rmtree(Local(root).dir)
    code, answer, _ = nxm("close", KEYS[0], "--now", NOW, "--actor", "f")
    assert code == 0 and answer["memory"]["status"] == "closed"
    after = state(root)
    assert after.keys() == before.keys()
    healthy(root, 5)


def test_read_only_nxs_simulated(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = state(root)
    real = os.open
    nxs = str(root / ".nxs")
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & writes and os.path.abspath(os.fsdecode(path)).startswith(nxs):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))
        return real(path, flags, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(os, "open", open_)
        snapshot = fingerprint(root)
        for args in (["close", KEYS[0]], ["feedback", KEYS[0], "POSITIVE"]):
            code, answer, _ = nxm(*args)
            assert (code, answer["code"]) == (5, "STORE_READONLY"), answer
            assert "writable" in answer["suggestion"]
        code, answer, _ = add(6)
        assert (code, answer["code"]) == (5, "STORE_READONLY")
        for args in (["list"], ["show", KEYS[0]], ["search", "pytest"]):
            code, answer, err = nxm(*args)
            assert code == 0, (args, answer, err)
        code, out, err = run_cli("nxs", ["prime"])
        assert code == 0 and KEYS[0].encode() in out
        assert fingerprint(root) == snapshot
    assert state(root) == before
    healthy(root, 7)


def _can_mount(tmp_path: Path) -> bool:
    probe = tmp_path / "mount-probe"
    probe.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode == 0:
        subprocess.run(["umount", str(probe)], check=True)
    return done.returncode == 0


def _umount(path: str) -> None:
    """Unmount, once this process's stores (SQLite files held open until collected) let go."""
    import gc

    gc.collect()
    if subprocess.run(["umount", path], capture_output=True, check=False).returncode:
        subprocess.run(["umount", "-l", path], check=True)  # never leave a mount behind
        raise AssertionError(f"{path} was still in use: a store left a file open")


@contextlib.contextmanager
def _tmpfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A 3 MB tmpfs at ``tmp_path/disk`` (skipped where mount is not permitted), unmounted
    after leaving the directory the test moved into."""
    if not _can_mount(tmp_path):
        pytest.skip("mount is not permitted here; the simulated test covers the logic")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        monkeypatch.chdir(tmp_path)
        _umount(str(disk))


def _real(root: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], bytes]:
    done = subprocess.run(
        ["nxm", *args, "--json", "--workspace", str(root)],
        capture_output=True,
        env=child_env(tmp_path / "home"),
        timeout=600,
        check=False,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return done.returncode, json.loads(done.stdout), done.stderr


def test_read_only_nxs_mounted(root: Path, tmp_path: Path) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("mount is not permitted here; the simulated test covers the logic")
    before = state(root)
    nxs = str(root / ".nxs")
    subprocess.run(["mount", "--bind", nxs, nxs], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", nxs], check=True)
        code, answer, _ = _real(root, tmp_path, "add", "A read-only body.", "--introduction", "ro")
        assert (code, answer["code"]) == (5, "STORE_READONLY"), answer
        code, answer, _ = _real(root, tmp_path, "list")
        assert code == 0 and answer["total"]
        code, answer, _ = nxm("search", "pytest")  # in process: lancedb's import is paid already
        assert code == 0 and answer["results"]
    finally:
        _umount(nxs)
    assert state(root) == before
    healthy(root, 8)


def test_full_disk_simulated(root: Path, monkeypatch: pytest.MonkeyPatch, capfd: Any) -> None:
    from lancedb.table import LanceTable

    import nxm.store.files as files_module

    before = state(root)
    snapshot = fingerprint(root)
    real = files_module.atomic_write

    def full(path: Path, data: bytes, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    def full_for_memories(path: Path, data: bytes, **kwargs: Any) -> None:
        if path.suffix == ".md":  # the journal fits, the memory file does not
            full(path, data)
        real(path, data, **kwargs)

    for refuse in (full, full_for_memories):
        with monkeypatch.context() as patched:
            patched.setattr(files_module, "atomic_write", refuse)
            for args in (["close", KEYS[0]], ["update", KEYS[1], "--introduction", "new intro"]):
                code, answer, _ = nxm(*args)
                assert (code, answer["code"]) == (5, "STORE_WRITE_FAILED"), answer
                assert "nothing was written" in answer["message"]
                assert "free disk space" in answer["suggestion"]
            code, answer, _ = add(9)
            assert (code, answer["code"]) == (5, "STORE_WRITE_FAILED")
        assert fingerprint(root) == snapshot
    assert state(root) == before

    enospc = "lance error: LanceError(IO): No space left on device (os error 28)"

    def refuse_index(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(enospc)

    with monkeypatch.context() as patched:  # the index cannot be written: the files can
        patched.setattr(LanceTable, "merge_insert", refuse_index)
        code, answer, err = add(10)
        assert code == 0, answer
        key = answer["memory"]["key"]
        code, found, err = nxm("search", "pytest")
        assert code == 0 and b"the search index is not up to date" in err
    assert set(state(root)) == set(before) | {key}
    healthy(root, 11)


def test_full_disk_mounted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _tmpfs(tmp_path, monkeypatch) as disk:
        root = seeded_copy(disk / "proj")
        monkeypatch.chdir(root)
        filler = disk / "filler"
        filler.write_bytes(b"\0" * 1_500_000)
        acknowledged, refusal = [], None
        for n in range(40):
            body = f"Disk filler memory {n} (token disktok{n}). " + "lorem ipsum " * 8000
            code, answer, _ = nxm("add", body, "--introduction", f"disk {n}", "--now", NOW)
            if code == 0:
                acknowledged.append(answer["memory"]["key"])
            else:
                refusal = answer
                break
        assert refusal is not None, "the disk never filled"
        assert (refusal["kind"], refusal["code"]) == ("upstream", "STORE_WRITE_FAILED"), refusal
        assert "free disk space" in refusal["suggestion"]
        filler.unlink()  # once there is room again, every acknowledged write is there
        assert set(acknowledged) <= set(state(root))
        healthy(root, 12)
        assert set(acknowledged) <= set(state(root))


def test_reads_answer_on_a_full_disk_with_no_index_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: a clone on a full disk whose machine has no index yet (a fresh cache): every
    read answers from the files; a write refuses and writes nothing."""
    with _tmpfs(tmp_path, monkeypatch) as disk:
        root = seeded_copy(disk / "proj")
        monkeypatch.chdir(root)
        monkeypatch.setenv("NXS_CACHE_DIR", str(disk / "cache"))  # the same disk
        keys = list((root / ".nxs" / "memories").glob("*.md"))  # nothing derived yet
        with open(disk / "filler", "wb") as filler:  # every byte left
            with contextlib.suppress(OSError):
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
        before = fingerprint(root)
        # was: search and recall INTERNAL_ERROR (RecursionError: the index dropped and made
        # again without end)
        for args in (["list", "--page-size", "100"], ["search", "the"], ["recall", "the"],
                     ["search", "the", "--mode", "keyword"], ["stats"]):  # fmt: skip
            code, answer, err = nxm(*args)
            assert code == 0, (args, answer, err)
        code, out, err = run_cli("nxm", ["export"])
        assert code == 0 and len(out.splitlines()) == len(keys), err
        code, answer, err = add(90)
        assert (code, answer["code"]) == (5, "STORE_WRITE_FAILED"), answer
        assert fingerprint(root) == before
