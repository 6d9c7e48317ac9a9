"""The vector cache's bytes: one flat float32 file per model, a row per embedded text.

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
import zlib
from pathlib import Path
from typing import Any


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
