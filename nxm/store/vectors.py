"""The READY vectors of one index version, in memory: the exact (flat) cosine search.

Semantic search reads every READY row's vector once per table version into one float32 matrix
(`read`), then scores a query against all of it with numpy (`nearest`): the same results as
LanceDB's own flat search, plus the mean and spread of every allowed similarity, which fusion
standardizes against (`nxm.search.rank.fuse`). Filters are evaluated over the rows' Arrow columns with
the semantics of the SQL `nxm.store.index.where` writes (`matches`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nxm.store.runtime import _glibc

if TYPE_CHECKING:
    import numpy as np

FILTER_COLUMNS = (
    "status", "category", "scope", "priority", "layer", "processing", "user_id", "agent_id",
    "session_id", "created", "updated", "expires",
)  # fmt: skip


def matches(columns: dict[str, Any], filters: dict[str, Any]) -> np.ndarray:
    """`where(filters)` evaluated over Arrow columns: one bool per row, NULL never matches.

    ``columns`` holds `FILTER_COLUMNS` and ``refs`` as Arrow arrays of one length; the
    semantics are exactly those of the SQL `where` writes (string equality and comparison are
    by bytes, ``status_in`` is ``IN``, ``ref`` is ``array_has``).
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(columns["key"])
    mask = np.ones(n, dtype=bool)
    for name, value in filters.items():
        if value is None:
            continue
        if name in ("ref", "ref_in"):
            refs = columns["refs"]
            wanted = pa.array([value] if name == "ref" else list(value), pa.string())
            hit = pc.is_in(pc.list_flatten(refs), value_set=wanted)
            rows = np.asarray(pc.list_parent_indices(refs))[_bools(hit)]
            got = np.zeros(n, dtype=bool)
            got[rows] = True
        elif name == "not_expired":
            expires = columns["expires"]
            got = _bools(pc.or_kleene(pc.is_null(expires), pc.greater(expires, value)))
        elif name == "status_in":
            got = _bools(pc.is_in(columns["status"], value_set=pa.array(list(value), pa.string())))
        elif name in FILTER_COLUMNS:
            got = _bools(pc.equal(columns[name], pa.scalar(value, pa.string())))
        else:
            raise KeyError(name)
        mask &= got
    return mask


def _bools(values: Any) -> np.ndarray:
    import numpy as np

    return np.asarray(values.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def nearest(
    ready: Vectors, vector: np.ndarray, filters: dict[str, Any], limit: int
) -> tuple[list[tuple[str, float]], tuple[float, float] | None]:
    """Nearest READY records by cosine similarity: (key, similarity), best first, and the
    (mean, std) of the similarities of every record the filters allow (None when none do)."""
    import numpy as np

    rows = ready.rows({**filters, "processing": "READY"})
    if not len(rows) or limit <= 0:
        return [], None
    query = np.asarray(vector, dtype=np.float32)
    # one pass over the matrix (a gather would copy it)
    dots = (ready.matrix[: ready.size] @ query)[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.float32(1.0) - dots / (ready.norms[rows] * np.linalg.norm(query))
    distance = np.where(np.isnan(distance), np.float32(np.inf), distance)
    if len(rows) > limit:
        top = np.argpartition(distance, limit - 1)[:limit]
    else:
        top = np.arange(len(rows))
    top = top[np.argsort(distance[top], kind="stable")]
    similar = 1.0 - distance[np.isfinite(distance)].astype(np.float64)  # not zero vectors
    spread = (float(similar.mean()), float(similar.std())) if len(similar) else None
    keys = ready.columns["key"].take(rows[top]).to_pylist()
    return [(k, 1.0 - float(distance[i])) for k, i in zip(keys, top, strict=True)], spread


def read(table: Any) -> Vectors:
    """The READY rows' keys, filter columns and vectors at the checked-out table version."""
    import numpy as np
    import pyarrow as pa

    ready_only = "processing = 'READY'"
    names = ["key", "refs", *FILTER_COLUMNS]
    got = table.search().where(ready_only).select(names).limit(None).to_arrow()
    columns = {c: pa.chunked_array([got.column(c).combine_chunks()]) for c in names}
    del got
    # free the chunks just copied (~23 MB at 100,000) before the matrix is made
    _glibc("malloc_trim", 0)
    # The vectors are streamed into one matrix, so the peak is the matrix and one batch
    # (reading them as one Arrow table too would double the process's largest allocation).
    # Keys stay Arrow strings (100,000 Python strings took ~7 MB, twice while checked).
    keys = columns["key"].chunk(0)
    dim = table.schema.field("vector").type.list_size
    capacity = len(keys)
    matrix = np.empty((capacity, dim), dtype=np.float32)
    norms = np.empty(capacity, dtype=np.float32)  # row by row: no temporary
    start = 0
    streamed: list[str] | None = None  # keys in scan order, made only if not in `keys`' order
    query = table.search().where(ready_only).select(["key", "vector"]).limit(None)
    for batch in query.to_batches():
        size = batch.num_rows
        if start + size > len(keys):
            raise RuntimeError("the memory table changed while its vectors were read")
        rows = batch.column("vector").flatten().to_numpy(zero_copy_only=False)
        rows = rows.reshape(size, dim)
        matrix[start : start + size] = rows
        norms[start : start + size] = _norms(rows)
        # compared here, not kept: an Arrow array read from LanceDB keeps its whole batch
        batch_keys = batch.column("key")
        if streamed is None and not batch_keys.equals(keys.slice(start, size)):
            streamed = keys.slice(0, start).to_pylist()
        if streamed is not None:
            streamed += batch_keys.to_pylist()
        start += size
    if start != len(keys):
        raise RuntimeError("the memory table changed while its vectors were read")
    if streamed is not None:  # two scans of one version come in one order; checked all the same
        at = {k: i for i, k in enumerate(streamed)}
        order = [at[k] for k in keys.to_pylist()]
        matrix[: len(keys)], norms[: len(keys)] = matrix[order], norms[order]
    return Vectors(matrix=matrix, norms=norms, columns=columns, size=len(keys))


def _norms(rows: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.sqrt(np.einsum("ij,ij->i", rows, rows))


@dataclass
class Vectors:
    """READY rows of one table version: keys and filter columns (Arrow arrays), vectors
    (float32) and their norms, for the first ``size`` rows of ``matrix``."""

    matrix: np.ndarray
    norms: np.ndarray
    columns: dict[str, Any]
    size: int

    def of(self, keys: list[str]) -> dict[str, np.ndarray]:
        """The vectors of those of ``keys`` held here (views into the matrix); the key -> row
        map is made on the first call and kept with this version."""
        at = self.__dict__.get("_at")
        if at is None:
            at = self.__dict__["_at"] = {
                k: i for i, k in enumerate(self.columns["key"].to_pylist()[: self.size])
            }
        return {k: self.matrix[at[k]] for k in keys if k in at}

    def rows(self, filters: dict[str, Any]) -> np.ndarray:
        """The indices of the rows the filters allow."""
        import numpy as np

        return np.flatnonzero(matches(self.columns, filters))
