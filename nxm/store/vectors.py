"""The machine's vectors: one embedding per model and text, shared by every workspace.

``$NXS_CACHE_DIR/vectors.db`` (SQLite) keeps each embedded text's float32 vector under the
model's name and `text_hash`, so a text embedded on another branch, clone or worktree of this
machine is never embedded again. It is a cache: deleting it means embedding again.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from nxm.record import body_hash, embedded_text

# A rowid table: its large rows read faster than in a WITHOUT ROWID one.
SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors(model TEXT NOT NULL, text TEXT NOT NULL, vector BLOB NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS vectors_text ON vectors(model, text);
"""
VERSION = 2  # PRAGMA user_version: a file of another layout starts again


def text_hash(record: dict[str, Any]) -> str:
    """What a record's vector is kept under: a hash of the text that is embedded."""
    return body_hash(embedded_text(record))[:32]


def vector_bytes(records: list[dict[str, Any]], vectors: dict[str, Any]) -> dict[str, bytes]:
    """The records' vectors as float32 bytes by text hash (how the machine keeps them)."""
    import numpy as np

    return {
        text_hash(r): np.asarray(vectors[r["key"]], dtype=np.float32).tobytes()
        for r in records if vectors.get(r["key"]) is not None
    }  # fmt: skip


class Vectors:
    """The vectors of one model (``path`` None, or a disk that refuses: kept in memory)."""

    def __init__(self, path: Path | None, model: str) -> None:
        self.path = path
        self.model = model
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = None
            if self.path is not None:
                with contextlib.suppress(sqlite3.Error, OSError):
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
                    conn.execute("PRAGMA journal_mode=WAL")
                    if conn.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                        conn.executescript(
                            f"DROP TABLE IF EXISTS vectors; PRAGMA user_version = {VERSION};"
                        )
                    conn.executescript(SCHEMA)
            if conn is None:  # unreadable, damaged or read-only: this process only
                conn = sqlite3.connect(":memory:", check_same_thread=False)
                conn.executescript(SCHEMA)
            self._conn = conn
        return self._conn

    def get(self, texts: Iterable[str]) -> dict[str, bytes]:
        """The stored vectors of these text hashes, by hash."""
        with self._lock:
            try:
                got = self._db().execute(
                    "SELECT text, vector FROM vectors WHERE model = ? AND text IN "
                    "(SELECT value FROM json_each(?))",
                    (self.model, orjson.dumps(list(texts)).decode()),
                )
                rows = got.fetchall()
            except sqlite3.DatabaseError:  # damaged: start again, in memory for this process
                self.path, self._conn = None, None
                return {}
        return dict(rows)

    def put(self, vectors: dict[str, bytes]) -> None:
        """Keep vectors by text hash (best effort: a disk that refuses keeps them in memory)."""
        if not vectors:
            return
        rows = [(self.model, t, v) for t, v in vectors.items()]
        with self._lock:
            try:
                with self._db() as conn:
                    conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            except sqlite3.Error:
                self.path, self._conn = None, None
                with self._db() as conn:
                    conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def nearest(
    vector: Any, candidates: dict[str, bytes], floor: float, count: int
) -> list[tuple[str, float]]:
    """The ``count`` of ``candidates`` (key -> vector bytes) most like ``vector`` with a cosine
    of at least ``floor``: (key, cosine), best first, ties by key."""
    import numpy as np

    if not candidates:
        return []
    keys = list(candidates)
    matrix = np.frombuffer(b"".join(candidates.values()), dtype=np.float32)
    matrix = matrix.reshape(len(keys), -1)
    query = np.asarray(vector, dtype=np.float32)
    scale = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    with np.errstate(divide="ignore", invalid="ignore"):
        sims = np.where(scale > 0, (matrix @ query) / scale, 0.0)
    best = sorted((-float(sims[i]), keys[i]) for i in np.flatnonzero(sims >= floor))
    return [(k, -s) for s, k in best[:count]]
