"""Files of sorted entries, rewritten by copying what did not change.

The read cache (`nxm.store`), the graph file (`nxm.graph`) and NEXUS_MEMORY.md
(`nxm.projection`) each hold one entry per memory, in an order that does not depend on the
other entries: by key, or by reading order. A long-lived writer (the MCP server) keeps each
file's `Lines` (every entry's order key and byte span, ~2 MB at 100,000 memories), and a write
makes the new file from the old one: the runs of entries it did not touch are copied as bytes,
only the changed entries are made again. Holding the entries themselves instead (as records,
or as their serialized lines) cost the server ~630 MB at 100,000 memories.
"""

from __future__ import annotations

import bisect
import contextlib
import os
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from nxs.paths import atomic_write

CHUNK = 1 << 20  # bytes copied at a time
KEPT = b"nxs-lines 1\n"  # the first line of a file of kept `Lines` (`keep`)


@dataclass
class Lines:
    """One region of a file: its entries' order keys (sorted, unique) and byte spans.

    An entry is ``[starts[i], ends[i])``; between two entries the region has ``sep``, which
    is not part of either, so a run of entries is one contiguous span of the file.
    """

    keys: list[Any]
    starts: array[int]  # of "q" (numpy is not imported by readers: ~0.2 s)
    ends: array[int]
    sep: bytes = b""

    @classmethod
    def build(cls, keys: list[Any], spans: Iterable[tuple[int, int]], sep: bytes = b"") -> Lines:
        """From entries in order, each with its (start, end) span."""
        got = array("q", (x for span in spans for x in span))
        return cls(keys, got[0::2], got[1::2], sep)

    def find(self, key: Any) -> int | None:
        """The index of the entry with ``key``, or None."""
        i = bisect.bisect_left(self.keys, key)
        return i if i < len(self.keys) and self.keys[i] == key else None

    def size(self) -> int:
        """The region's length in bytes."""
        if not self.keys:
            return 0
        return int(self.ends[-1] - self.starts[0])

    def merge(
        self, drop: Iterable[Any], add: Iterable[tuple[Any, bytes]], at: int
    ) -> tuple[Lines, list[tuple[int, int] | bytes]]:
        """The region without the entries keyed ``drop`` and with the ``add`` ones (key, bytes;
        a key may be both: it is replaced), placed at offset ``at`` of a new file.

        Returns the new region's `Lines` and its pieces in order: spans of this file to copy
        and new bytes (separators included; `write` turns them into bytes).

        Raises:
            KeyError: a dropped key is not here, or an added one is here and not dropped.
        """
        import numpy as np

        old_starts = np.frombuffer(self.starts, dtype=np.int64)
        old_ends = np.frombuffer(self.ends, dtype=np.int64)
        events: list[tuple[int, int, Any, bytes | None]] = []
        for key in drop:
            i = self.find(key)
            if i is None:
                raise KeyError(key)
            events.append((i, 0, key, None))  # before an add at the same place: a replace
        for key, data in add:
            events.append((bisect.bisect_left(self.keys, key), 1, key, data))
        events.sort(key=lambda e: (e[0], e[1], e[2]))
        keys: list[Any] = []
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        pieces: list[tuple[int, int] | bytes] = []
        pos, cursor, sep = at, 0, self.sep

        def place(length: int) -> int:
            nonlocal pos
            if pieces and sep:
                pieces.append(sep)
                pos += len(sep)
            start, pos = pos, pos + length
            return start

        def keep(stop: int) -> None:  # the old entries cursor..stop, as one run
            nonlocal cursor
            if stop > cursor:
                first, last = int(self.starts[cursor]), int(self.ends[stop - 1])
                shift = place(last - first) - first
                keys.extend(self.keys[cursor:stop])
                starts.append(old_starts[cursor:stop] + shift)
                ends.append(old_ends[cursor:stop] + shift)
                pieces.append((first, last))
            cursor = max(cursor, stop)

        for i, kind, key, data in events:
            keep(i)
            if kind == 0:
                cursor = i + 1
                continue
            if keys and keys[-1] == key or (cursor < len(self.keys) and self.keys[cursor] == key):
                raise KeyError(key)  # added twice, or already here
            assert data is not None
            start = place(len(data))
            keys.append(key)
            starts.append(np.array([start], dtype=np.int64))
            ends.append(np.array([start + len(data)], dtype=np.int64))
            pieces.append(data)
        keep(len(self.keys))

        def joined(parts: list[np.ndarray]) -> array[int]:
            return array("q", np.concatenate(parts).tobytes() if parts else b"")

        return Lines(keys, joined(starts), joined(ends), sep), pieces


def write(fd: int | None, pieces: Iterable[tuple[int, int] | bytes]) -> Iterator[bytes]:
    """The bytes of `Lines.merge`'s pieces, copying spans from the open file ``fd``."""
    for piece in pieces:
        if isinstance(piece, bytes):
            yield piece
            continue
        start, end = piece
        while start < end:
            assert fd is not None
            got = os.pread(fd, min(CHUNK, end - start), start)
            if not got:
                raise OSError(f"the file ended at {start}, before {end}")
            yield got
            start += len(got)


def identity(fd_or_path: int | Any) -> tuple[int, int, int] | None:
    """A file's identity (inode, mtime, size): a writer replacing it changes it; None when
    there is no such file."""
    try:
        st = os.fstat(fd_or_path) if isinstance(fd_or_path, int) else os.stat(fd_or_path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def laid(
    entries: Iterable[tuple[Any, bytes]], at: int, sep: bytes, keys: list[Any], spans: list[int]
) -> Iterator[bytes]:
    """The bytes of a region of ``entries`` (key, bytes; in order) placed at offset ``at``,
    ``sep`` between two; as each is given, its key and span (start, end) are appended to
    ``keys`` and ``spans`` (`Lines.build` them once the region is written)."""
    for key, data in entries:
        if keys:
            yield sep
            at += len(sep)
        keys.append(key)
        spans += (at, at + len(data))
        at += len(data)
        yield data


def framed(head: bytes, body: Iterable[bytes], tail: bytes, entries: bool) -> Iterator[bytes]:
    """A file of one JSON document with its entries a line each: ``head`` (ending in a
    newline), the region's bytes, a newline after the last entry (when there are ``entries``),
    ``tail``."""
    yield head
    yield from body
    yield b"\n" + tail if entries else tail


def built(keys: list[Any], spans: list[int], sep: bytes = b"") -> Lines:
    """The `Lines` of a region `laid` out."""
    return Lines.build(keys, zip(spans[0::2], spans[1::2], strict=True), sep)


@contextlib.contextmanager
def reopened(path: Any, then: Any, valid: bool) -> Iterator[int | None]:
    """``path`` open for `write` to copy from, when ``valid`` (the caller's kept `Lines` are of
    the records this write started from) and the file is still the one whose identity was
    ``then``; else None. Closed on exit."""
    fd = None
    if valid:
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(path, os.O_RDONLY)
        if fd is not None and identity(fd) != then:
            os.close(fd)
            fd = None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def keep(path: Path, stamp: tuple[Any, Any], lines: list[Lines], extra: Any = None) -> None:
    """Write ``lines`` (and ``extra``, JSON) to ``path`` for the next process that writes.

    ``stamp`` says what they are current for: the identities (`identity`) of the file they
    describe and of the read cache it was made from. A process's first write would otherwise read every
    record to make them (~5 s at 100,000 memories). Keys equal to an earlier `Lines`' are
    written once. Not fsynced (`kept` checks it all), and the old file is removed first: ext4
    flushes a file renamed over another at once (~75 ms for this one at 100,000). Call under
    the write lock.
    """

    def pieces() -> Iterator[bytes]:
        specs: list[dict[str, Any]] = []
        for x in lines:
            earlier = enumerate(lines[: len(specs)])
            same = next((i for i, y in earlier if y.keys is x.keys or y.keys == x.keys), None)
            specs.append({"n": len(x.keys), "sep": x.sep.decode(), "text": _text(x), "as": same})
        head = {"stamp": _stamp(stamp), "extra": extra, "lines": specs}
        yield KEPT + orjson.dumps(head) + b"\n"
        for x, spec in zip(lines, specs, strict=True):
            yield x.starts.tobytes() + x.ends.tobytes()
            if spec["as"] is None:
                raw = [k.encode() for k in x.keys] if spec["text"] else x.keys
                yield array("q", map(len, raw)).tobytes()
                yield b"".join(raw)

    with contextlib.suppress(OSError):  # only a saving: without it the next writer reads all
        for old in (path, *path.parent.glob(f".{path.name}.*")):  # a temporary: a dead writer's
            old.unlink(missing_ok=True)
        atomic_write(path, pieces(), durable=False)


def kept(path: Path, stamp: tuple[Any, Any]) -> tuple[list[Lines], Any] | None:
    """The `Lines` and extra `keep` wrote to ``path`` with this very ``stamp``; None when
    there are none, they are of another state, or the file is damaged."""
    try:
        data = path.read_bytes()
        if not data.startswith(KEPT):
            return None
        at = data.index(b"\n", len(KEPT)) + 1
        head = orjson.loads(data[len(KEPT) : at])
        if head["stamp"] != _stamp(stamp):
            return None
        out: list[Lines] = []
        for spec in head["lines"]:
            n, same = spec["n"], spec["as"]
            starts = array("q", data[at : at + 8 * n])
            ends = array("q", data[at + 8 * n : at + 16 * n])
            at += 16 * n
            if same is not None:
                keys = out[same].keys
            else:
                sizes = array("q", data[at : at + 8 * n])
                at += 8 * n
                keys = []
                for size in sizes:
                    keys.append(data[at : at + size])
                    at += size
                if spec["text"]:
                    keys = [k.decode() for k in keys]
            if len(starts) != n or len(ends) != n or len(keys) != n or at > len(data):
                return None
            out.append(Lines(keys, starts, ends, spec["sep"].encode()))
        return (out, head["extra"]) if at == len(data) else None
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # absent or damaged: made again


def _stamp(stamp: tuple[Any, Any]) -> list[Any]:
    return [list(x) for x in stamp]  # as JSON reads it back


def _text(lines: Lines) -> bool:
    return bool(lines.keys) and isinstance(lines.keys[0], str)
