"""The vector cache: a row per embedded text in one flat float32 file per model.

The record cache (SQLite) says which row holds a text's vector and its CRC; the rows live in
``.nxs/index/vectors-<model>.f32`` so that a write can compare a new memory with every stored
vector as one matrix product over the mapped file (`nearest`): reading 100,000 vectors out of
SQLite rows took ~0.8 s, the product over the file takes tens of milliseconds.

Rows are only appended, inside the cache's write transaction (so one process appends at a
time, at the row the file's size gives). A row the transaction did not keep, a torn last row
or a file shorter than the rows SQLite names (deleted, or a crash that kept SQLite's commit
and not the file's bytes) is harmless: a row whose bytes do not match its CRC is treated as no
vector, and the text is embedded again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson


def crc(blob: bytes) -> int:
    return zlib.crc32(blob)


class Matrix:
    """The rows of one model's vectors (``path`` None: kept in memory, for a read-only disk)."""

    def __init__(self, folder: Path | None, model: str) -> None:
        tag = hashlib.blake2b(model.encode(), digest_size=6).hexdigest()
        self.path = folder / f"vectors-{tag}.f32" if folder is not None else None
        self._memory = bytearray()

    def append(self, blobs: list[bytes]) -> int:
        """Write ``blobs`` (one row each, all the same size) after the last row; returns the
        first one's row number (call inside the cache's write transaction)."""
        size = len(blobs[0])
        data = b"".join(blobs)
        if self.path is None:
            first = -(-len(self._memory) // size)
            self._memory[first * size :] = data
            return first
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            first = -(-os.fstat(fd).st_size // size)  # after a torn row, at the next whole one
            os.pwrite(fd, data, first * size)
        finally:
            os.close(fd)
        return first

    def rows(self, wanted: list[tuple[int, int, int]]) -> list[bytes | None]:
        """The bytes of each (row, size, crc), None where they are missing or not what was
        stored."""
        data = self._view() if wanted else None
        out: list[bytes | None] = []
        for row, size, check in wanted:
            blob = bytes(data[row * size : (row + 1) * size]) if data is not None else b""
            out.append(blob if len(blob) == size and crc(blob) == check else None)
        return out

    def nearest(self, query: Any, count: int) -> list[tuple[int, float]]:
        """The ``count`` rows most like ``query`` (a unit float32 vector; every stored row is
        unit or zero, `nxm.embed`), as (row, dot product), best first."""
        import numpy as np

        data = self._view()
        query = np.asarray(query, dtype=np.float32)
        dim = len(query)
        if data is None or len(data) < dim * 4:
            return []
        matrix = np.frombuffer(data, dtype=np.float32, count=len(data) // (dim * 4) * dim)
        sims = np.einsum("ij,j->i", matrix.reshape(-1, dim), query)  # one thread: BLAS's
        # threads made this product 3x slower in wall time on a busy 2-core machine
        top = (
            np.argpartition(-sims, count - 1)[:count] if len(sims) > count else np.arange(len(sims))
        )
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(i), float(sims[i])) for i in top]

    def _view(self) -> Any:
        """The file's bytes, mapped (None when there is no file)."""
        if self.path is None:
            return memoryview(self._memory)
        import mmap

        try:
            with open(self.path, "rb") as fh:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (FileNotFoundError, ValueError):  # absent, or empty (mmap refuses 0 bytes)
            return None

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self._memory = bytearray()


class VectorRows:
    """The record cache's vectors (`nxm.store.cache.Cache` is one): which row of the model's
    `Matrix` holds each text's vector, and the records that become READY with it."""

    if TYPE_CHECKING:  # what the cache gives it
        model: str
        matrix: Matrix
        forgotten: int

        def query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]: ...
        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def meta(self, name: str) -> str | None: ...
        def set_meta(self, conn: sqlite3.Connection, name: str, value: str) -> None: ...
        def _mark_pending(self, conn: sqlite3.Connection, keys: list[str]) -> None: ...

    def vectors(self, texts: Iterable[str]) -> dict[str, bytes]:
        """Stored float32 vectors by text hash, for this model. A vector whose bytes are
        gone from the vector file is forgotten: its records are embedded again."""
        got = self.query(
            "SELECT v.text, v.row, v.size, v.crc FROM json_each(?) j JOIN vectors v "
            "ON v.model = ? AND v.text = j.value",
            (orjson.dumps(list(texts)).decode(), self.model),
        )
        blobs = self.matrix.rows([(row, size, check) for _, row, size, check in got])
        lost = [text for (text, *_), blob in zip(got, blobs, strict=True) if blob is None]
        if lost:
            self._forget_vectors(lost)
        return {t: b for (t, *_), b in zip(got, blobs, strict=True) if b is not None}

    def nearest_open(self, vector: Any, floor: float, count: int) -> list[tuple[str, float]]:
        """The ``count`` open records embedded with this model most like ``vector`` with a
        cosine of at least ``floor``: (key, cosine), best first (what a write compares a new
        memory with: one product over the vector file, no search index opened)."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        wanted, found = 4 * count, {}
        while True:
            rows = [(r, s) for r, s in self.matrix.nearest(query, wanted) if s >= floor - 1e-4]
            got = self.query(  # the rows' texts, then their open records (two indexed lookups)
                "SELECT row, size, crc, text FROM vectors INDEXED BY vectors_row WHERE model = ? AND row IN "
                "(SELECT value FROM json_each(?))",
                (self.model, orjson.dumps([r for r, _ in rows]).decode()),
            )
            keys = self.query(
                "SELECT key, text FROM records WHERE text IN (SELECT value FROM json_each(?)) "
                "AND good = 1 AND +status = 'open'",
                (orjson.dumps([text for *_, text in got]).decode(),),
            )
            blobs = dict(
                zip((t for *_, t in got), self.matrix.rows([g[:3] for g in got]), strict=True)
            )
            norm = float(np.linalg.norm(query))
            for key, text in keys:
                if (blob := blobs.get(text)) is not None:
                    row = np.frombuffer(blob, dtype=np.float32)
                    scale = float(np.linalg.norm(row)) * norm
                    found[key] = float(row @ query) / scale if scale > 0 else 0.0
            best = sorted(((-s, k) for k, s in found.items() if s >= floor))[:count]
            if len(best) == count or len(rows) < wanted:  # enough, or every close row seen
                return [(k, -s) for s, k in best]
            wanted *= 8

    def store_vectors(self, vectors: dict[str, bytes]) -> None:
        """Keep vectors by text hash; the records with those texts become READY (and pending,
        so the index gets the vector)."""
        if not vectors:
            return
        texts = orjson.dumps(list(vectors)).decode()
        with self.transaction() as conn:
            kept = dict(
                conn.execute(
                    "SELECT text, crc FROM vectors WHERE model = ? AND text IN "
                    "(SELECT value FROM json_each(?))",
                    (self.model, texts),
                ).fetchall()
            )
            new = {t: v for t, v in vectors.items() if kept.get(t) != crc(v)}
            for size in {len(v) for v in new.values()}:  # one model: one size
                same = {t: v for t, v in new.items() if len(v) == size}
                first = self.matrix.append(list(same.values()))
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)",
                    [
                        (self.model, t, first + i, size, crc(v))
                        for i, (t, v) in enumerate(same.items())
                    ],
                )
            keys = [
                k
                for (k,) in conn.execute(
                    "SELECT key FROM records WHERE text IN (SELECT value FROM json_each(?))",
                    (texts,),
                )
            ]
            conn.execute(
                "UPDATE records SET ready = 1 WHERE text IN (SELECT value FROM json_each(?))",
                (texts,),
            )
            self._mark_pending(conn, keys)

    def _forget_vectors(self, texts: list[str]) -> None:
        self.forgotten += len(texts)
        args = (self.model, orjson.dumps(texts).decode())
        with self.transaction() as conn:
            conn.execute(
                "DELETE FROM vectors WHERE model = ? AND text IN (SELECT value FROM json_each(?))",
                args,
            )
            conn.execute(
                "UPDATE records SET ready = 0 WHERE text IN (SELECT value FROM json_each(?))",
                args[1:],
            )

    def unready(self) -> list[str]:
        """Keys of the records without a vector for this model."""
        return [
            k
            for (k,) in self.query(
                "SELECT key FROM records WHERE ready = 0 AND good = 1 ORDER BY ord"
            )
        ]

    def check_model(self) -> None:
        """Recount READY after the configured model changed (each model has its own vectors)."""
        if self.meta("model") == self.model:
            return
        with self.transaction() as conn:
            conn.execute(
                "UPDATE records SET ready = EXISTS (SELECT 1 FROM vectors v WHERE v.model = ? "
                "AND v.text = records.text)",
                (self.model,),
            )
            self.set_meta(conn, "model", self.model)
            self._mark_pending(conn, [k for (k,) in conn.execute("SELECT key FROM records")])


def keep_vectors(conn: sqlite3.Connection, folder: Path) -> None:
    """Copy the vectors of the cache being replaced (``old``, attached) into the new one: the
    rows of this layout as they are, a version-5 cache's vectors (SQLite blobs) into files."""
    try:
        conn.execute("INSERT OR IGNORE INTO vectors SELECT * FROM old.vectors")
    except sqlite3.OperationalError:  # version 5: the bytes were in the table
        by_model: dict[str, dict[str, bytes]] = {}
        for model, text, blob in conn.execute("SELECT model, text, vector FROM old.vectors"):
            by_model.setdefault(model, {})[text] = blob
        for model, vectors in by_model.items():
            matrix = Matrix(folder, model)
            for size in {len(v) for v in vectors.values()}:
                same = {t: v for t, v in vectors.items() if len(v) == size}
                first = matrix.append(list(same.values()))
                conn.executemany(
                    "INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?, ?)",
                    [(model, t, first + i, size, crc(v)) for i, (t, v) in enumerate(same.items())],
                )
    conn.commit()
