"""The memory files of a workspace: finding what changed, reading them, writing them whole.

A file's identity (`ident`) is its modification time, size and inode. One taken within `RACY_NS`
of the file's last change may miss a second change in the same clock tick (git's "racy" files),
so it is marked (``~``) and the file is read again next time.

A write goes through a journal (`Files.write`): the new bytes are written to ``.nxs/journal``
and flushed, then applied, then the journal is removed. A writer killed half-way leaves the
journal, and the next command that holds the write lock applies it again (`replay`): every
write lands whole or not at all.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from nxm.store.text import KEY
from nxs.errors import UpstreamError
from nxs.paths import atomic_write

RACY_NS = 2_000_000_000
FSYNC_EACH = 4  # a write of more changes (an import's batch) flushes the disk once (os.sync)


def ident(st: os.stat_result, now: int | None = None) -> str:
    """A file's identity for change detection (ending in ``~`` when too recent to trust)."""
    racy = (now or time.time_ns()) - st.st_mtime_ns < RACY_NS
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}" + ("~" if racy else "")


@dataclass
class Change:
    """What a write does to one memory's files: the new Markdown (None deletes both files),
    and events to append to its log, or the whole log to write instead (``rewrite``)."""

    key: str
    md: bytes | None
    append: bytes = b""
    rewrite: bytes | None = None


class Files:
    """The committed memory files under one workspace's ``.nxs/``."""

    def __init__(self, nxs_dir: Path) -> None:
        self.dir = nxs_dir
        self.memories = nxs_dir / "memories"
        self.history = nxs_dir / "history"
        self.journal = nxs_dir / "journal"

    def md(self, key: str) -> Path:
        return self.memories / f"{key}.md"

    def log(self, key: str) -> Path:
        return self.history / f"{key}.jsonl"

    def scan(self, folder: Path, suffix: str) -> tuple[dict[str, str], list[str]]:
        """Every memory file in ``folder`` by key, with its identity, and the names of the other
        entries (not ``<key><suffix>``, or not a plain file: a symlink is never followed); dot
        files are a writer's temporary files. Every command runs this: one stat a file."""
        recent = time.time_ns() - RACY_NS
        cut = len(suffix)
        out: dict[str, str] = {}
        strays: list[str] = []
        try:
            entries = os.scandir(folder)
        except FileNotFoundError:
            return out, strays
        with entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                if not name.endswith(suffix) or not KEY.match(key := name[:-cut]):
                    strays.append(name)
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    got = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
                    out[key] = got + "~" if st.st_mtime_ns > recent else got
                else:
                    strays.append(name)
        return out, strays

    def mark(self, folder: Path) -> str:
        """The identity of a folder: git's checkout and merge change it, a save in place not."""
        try:
            st = folder.stat()
        except FileNotFoundError:
            return "absent"
        return f"{st.st_mtime_ns}:{st.st_ino}"

    def read(self, key: str) -> tuple[bytes | None, str, bytes | None, str]:
        """A memory's Markdown and log bytes, each with the identity of the very bytes read."""
        out: list[bytes | None | str] = []
        for path in (self.md(key), self.log(key)):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:  # absent, or a symlink (ELOOP)
                out += [None, ""]
                continue
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fd)
                out += [fh.read(), ident(st)]
        return out[0], out[1], out[2], out[3]  # type: ignore[return-value]

    def write(self, changes: Iterable[Change]) -> None:
        """Apply ``changes`` as one all-or-nothing write (journaled; call under the write lock).

        Raises:
            UpstreamError: the disk refused it (full, read-only); what was applied is undone.
        """
        changes = list(changes)
        if not changes:
            return
        entries = [
            {"key": c.key, "md": _b64(c.md), "append": _b64(c.append), "rewrite": _b64(c.rewrite)}
            for c in changes
        ]
        try:
            atomic_write(self.journal, orjson.dumps(entries))
        except OSError as exc:
            raise _refused(exc, undone=True) from None
        done: list[tuple[Change, tuple[bytes | None, int | None]]] = []
        each = len(changes) <= FSYNC_EACH  # a batch is flushed once, not a file at a time
        try:
            for change in changes:
                done.append((change, _before(self, change.key)))
                _apply(self, change, durable=each)
            if not each:
                os.sync()
            _sync_dirs(self)
            self.journal.unlink()
        except OSError as exc:
            try:
                for change, before in reversed(done):
                    _undo(self, change.key, before)
                self.journal.unlink()
            except OSError:  # the journal stays: the next command completes the write
                raise _refused(exc, undone=False) from None
            raise _refused(exc, undone=True) from None

    def sweep(self, memories: bool = True) -> None:
        """Remove the temporary files a killed writer left (call under the write lock): they
        start with a dot, beside NEXUS_MEMORY.md (written after the journal is gone: swept at
        every write), and in the committed folders (``memories``: only while a journal is)."""
        folders = ((self.memories, "."), (self.history, ".")) if memories else ()
        for folder, prefix in (*folders, (self.dir, ".journal."),
                               (self.dir.parent, ".NEXUS_MEMORY.md.")):  # fmt: skip
            with contextlib.suppress(OSError):
                for entry in os.scandir(folder):
                    if entry.name.startswith(prefix) and entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)

    def replay(self) -> bool:
        """Apply the journal a killed writer left, if any (call under the write lock)."""
        if any(self.dir.glob(".journal.*")):
            self.sweep()  # killed while writing its journal: nothing was applied
        try:
            entries = orjson.loads(self.journal.read_bytes())
            changes = [
                Change(e["key"], _unb64(e["md"]), _unb64(e["append"]) or b"", _unb64(e["rewrite"]))
                for e in entries
            ]
            if not all(KEY.match(c.key) for c in changes):
                raise ValueError("not a journal this version wrote")
        except FileNotFoundError:
            return False
        except (ValueError, KeyError, TypeError):  # damaged: it was never a complete write
            self.journal.unlink(missing_ok=True)
            return False
        for change in changes:
            if change.append:  # applied already if the log ends with these events
                if (_plain(self.log(change.key)) or b"").endswith(change.append):
                    change.append = b""
            _apply(self, change)
        self.journal.unlink()
        return True


def _apply(files: Files, change: Change, durable: bool = True) -> None:
    md, log = files.md(change.key), files.log(change.key)
    if change.md is None:
        md.unlink(missing_ok=True)
        log.unlink(missing_ok=True)
        return
    if change.rewrite is not None:
        atomic_write(log, change.rewrite, durable=durable)
    elif change.append:
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.is_symlink():  # never read as this memory's log (`read`): never written through
            log.unlink()
        fd = os.open(log, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":  # a line a killed writer cut short
                tail = os.pread(fd, min(size, 1 << 20), max(0, size - (1 << 20)))
                os.ftruncate(fd, size - len(tail) + tail.rfind(b"\n") + 1)
            os.write(fd, change.append)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    atomic_write(md, change.md, durable=durable)


def _before(files: Files, key: str) -> tuple[bytes | None, int | None]:
    """What undoing a change to one memory needs: its Markdown bytes and its log's size."""
    md = _plain(files.md(key))
    try:
        st = files.log(key).lstat()
        size = st.st_size if not os.path.islink(files.log(key)) else None
    except FileNotFoundError:
        size = None
    return md, size


def _plain(path: Path) -> bytes | None:
    """A file's bytes, or None when it is absent or a symlink (which is never followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _undo(files: Files, key: str, before: tuple[bytes | None, int | None]) -> None:
    md, size = before
    if size is None:
        files.log(key).unlink(missing_ok=True)
    elif files.log(key).exists() and not files.log(key).is_symlink():
        os.truncate(files.log(key), size)
    if md is None:
        files.md(key).unlink(missing_ok=True)
    elif _plain(files.md(key)) != md:
        atomic_write(files.md(key), md)


def _refused(exc: OSError, undone: bool) -> UpstreamError:
    outcome = "it is kept in .nxs/journal and completes at the next command"
    outcome = "nothing was written" if undone else outcome
    readonly = exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    return UpstreamError(
        f"the disk refused the write ({exc.strerror}): {outcome}",
        suggestion="make the workspace's .nxs/ writable"
        if readonly
        else "check free disk space and permissions of .nxs/",
        code="STORE_READONLY" if readonly else "STORE_WRITE_FAILED",
    )


def _sync_dirs(files: Files) -> None:
    """Make the renames and new files durable (a file's own fsync does not cover its name)."""
    for folder in (files.memories, files.history):
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode() if data is not None else None


def _unb64(text: str | None) -> bytes | None:
    return base64.b64decode(text) if text is not None else None
