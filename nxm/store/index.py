"""The search index: one LanceDB table, derived from the memory files (or, for a team store on
object storage, the store itself: its rows also keep each record whole, ``doc``).

Each row holds a memory's key, the columns filters need, the texts full-text search reads and
its vector. `nxm.store.Store.refresh` writes the rows the record cache marks pending; a deleted
index is made again from the cache. Rows are written under the store's write lock, after
``checkout_latest()`` (two processes never upsert one key twice). Rows outside the full-text
index are searched by a scan with other term statistics, and every write makes a fragment, so
the writer optimizes a small table after every write, a larger one as they pile up (`Upkeep`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import orjson

from nxm.record import body_hash, identifiers, indexed_text
from nxm.store.runtime import _glibc, import_lancedb
from nxs.errors import UpstreamError

if TYPE_CHECKING:
    import numpy as np

TABLE = "memories"
FILTER_COLUMNS = (
    "status", "category", "scope", "priority", "layer", "processing", "user_id", "agent_id",
    "session_id", "created", "updated", "expires",
)  # fmt: skip
COMPACT_EVERY = 24  # fragments before optimize() (docs/benchmarks.md, Scale)
# Old versions are removed by compaction once this old: long enough for any reader that opened
# one to finish (every operation checks out the latest first); 0 would break concurrent readers.
KEEP_VERSIONS = timedelta(hours=1)
FTS_COLUMNS = ("text", "context")  # a memory's own text; its session context
# Up to this many rows every write is folded into the full-text index at once; larger tables
# fold every `COMPACT_EVERY` writes, or when more than `UNINDEXED_MAX` rows are outside it.
FOLD_EVERY_WRITE_UP_TO = 2_000
UNINDEXED_MAX = 256
# LanceDB's caches grow with every version: bounded for a long-lived process (the MCP server).
INDEX_CACHE_BYTES = 32 << 20
METADATA_CACHE_BYTES = 16 << 20


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def where(filters: dict[str, Any]) -> str | None:
    """A LanceDB filter for equality filters (``ref`` matches one of the refs; ``not_expired``)."""
    parts = []
    for name, value in filters.items():
        if value is None:
            continue
        if name == "ref":
            parts.append(f"array_has(refs, {_sql(value)})")
        elif name == "ref_in":  # any of these refs
            parts.append("(" + " OR ".join(f"array_has(refs, {_sql(v)})" for v in value) + ")")
        elif name == "not_expired":
            parts.append(f"(expires IS NULL OR expires > {_sql(value)})")
        elif name == "status_in":
            parts.append("status IN (" + ", ".join(_sql(v) for v in value) + ")")
        elif name in FILTER_COLUMNS:
            parts.append(f"{name} = {_sql(value)}")
        else:
            raise KeyError(name)
    return " AND ".join(parts) or None


@dataclass
class Upkeep:
    """What `optimize()` would find to do in one table version."""

    missing: list[str]  # FTS_COLUMNS without a full-text index
    fragments: int
    rows: int
    unindexed: int  # rows outside the full-text index (the most of any indexed column)

    @classmethod
    def of(cls, table: Any) -> Upkeep:
        indices = {i.columns[0]: i.name for i in table.list_indices() if i.index_type == "FTS"}
        stats = table.stats()
        unindexed = [table.index_stats(n).num_unindexed_rows for n in indices.values()]
        return cls(
            missing=[c for c in FTS_COLUMNS if c not in indices],
            fragments=stats["fragment_stats"]["num_fragments"],
            rows=stats["num_rows"],
            unindexed=max(unindexed, default=0),
        )

    def due(self) -> bool:
        """Whether the writer optimizes now (see `FOLD_EVERY_WRITE_UP_TO`)."""
        small = self.unindexed > 0 and self.rows <= FOLD_EVERY_WRITE_UP_TO
        return self.fragments >= COMPACT_EVERY or self.unindexed > UNINDEXED_MAX or small


class Index:
    """The LanceDB table of one store (``uri``: a local folder or an object-store URI)."""

    def __init__(self, uri: str, storage_options: dict[str, Any] | None, dim: int = 384) -> None:
        self.uri = uri
        self.remote = "://" in uri
        self.dim = dim
        self._storage_options = storage_options
        self._db: Any = None
        self._table: Any = None
        self._fts_at: tuple[tuple[int, int], set[str]] | None = None
        self._pin: tuple[Any, int] | None = None  # (table, version) inside `pinned`
        self._checked: Any = None  # the table whose layout `exists` checked

    def _schema(self, dim: int) -> Any:
        import pyarrow as pa

        cols = [pa.field("key", pa.string()), pa.field("hash", pa.string())]
        cols += [pa.field(c, pa.string()) for c in FILTER_COLUMNS]
        cols += [
            pa.field("refs", pa.list_(pa.string())),
            pa.field("text", pa.string()),
            pa.field("context", pa.string()),
            pa.field("doc", pa.string()),  # the whole record: a team store's only copy
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
        return pa.schema(cols)

    def table(self, create: bool = False, *, again: bool = False) -> Any:
        """The LanceDB table (opened once per process), or None when there is none yet.

        Raises:
            UpstreamError: it cannot be opened (code STORE_UNAVAILABLE).
        """
        if self._table is not None:
            return self._table
        _glibc("mallopt", -8, 2)  # M_ARENA_MAX: two arenas
        _glibc("mallopt", -3, 1 << 20)  # M_MMAP_THRESHOLD: 1 MB, fixed
        lancedb = import_lancedb()
        try:
            if self._db is None:
                session = lancedb.Session(
                    index_cache_size_bytes=INDEX_CACHE_BYTES,
                    metadata_cache_size_bytes=METADATA_CACHE_BYTES,
                )
                self._db = lancedb.connect(
                    self.uri, storage_options=self._storage_options, session=session
                )
            try:
                self._table = self._db.open_table(TABLE)
            except (FileNotFoundError, ValueError):
                if not create:
                    return None
                self._table = self._db.create_table(
                    TABLE, schema=self._schema(self.dim), exist_ok=True
                )
        except (OSError, RuntimeError, ValueError) as exc:  # lance: I/O errors as RuntimeError
            if isinstance(exc, ValueError) and not self.remote:
                raise
            full = "os error 28" in str(exc) or getattr(exc, "errno", None) == 28  # ENOSPC
            if self.remote or full or again or not self.drop(str(exc)):  # made again once
                line = (str(exc).strip().splitlines() or ["?"])[0][:300]
                raise UpstreamError(
                    f"cannot open the memory index at {self.uri}: {line}",
                    suggestion="check the store's URI, endpoint and credentials"
                    if self.remote
                    else "check the path's permissions and free space, or run `nxm reindex`",
                    code="STORE_WRITE_FAILED" if full else "STORE_UNAVAILABLE",
                ) from None
            return self.table(create, again=True)
        return self._table

    def drop(self, why: str) -> bool:
        """Remove a local index that cannot be read (the cache makes it again); False if not."""
        import shutil

        line = (why.strip().splitlines() or ["?"])[0][:200]
        print(f"nxs: the search index is damaged ({line}); making it again", file=sys.stderr)
        self._db = self._table = self._fts_at = None
        try:
            if os.path.isdir(self.uri) and not os.path.islink(self.uri):
                shutil.rmtree(self.uri)
            else:  # junk where the folder belongs
                os.unlink(self.uri)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True

    def exists(self) -> bool:
        """Whether the table is there and of this layout (a local one of another is dropped)."""
        if not self.remote and not os.path.isdir(os.path.join(self.uri, f"{TABLE}.lance")):
            return False
        if self._checked is not None and self._checked is self._table:
            return True  # the layout of the table this process opened was checked already
        table = self.table()
        if table is None:
            return False
        schema = self._schema(self.dim)
        same = set(table.schema.names) >= set(schema.names) and (
            table.schema.field("vector").type == schema.field("vector").type
        )
        if self.remote or same:
            self._checked = table
            return True
        self._db.drop_table(TABLE)
        self._table = self._fts_at = None
        return False

    def _rows(
        self, records: list[dict[str, Any]], vectors: dict[str, Any], context: dict[str, str],
        docs: bool,
    ) -> Any:  # fmt: skip
        import pyarrow as pa

        dim = self.table_dim()
        zero = [0.0] * dim
        rows = []
        for r in records:
            row = {c: r.get(c) for c in FILTER_COLUMNS}
            vec = vectors.get(r["key"])
            row["processing"] = "READY"
            if vec is None or len(vec) != dim:
                vec, row["processing"] = zero, "PENDING"
            row.update(
                key=r["key"],
                hash=body_hash(r["body"]),
                refs=list(r["refs"]),
                text=indexed_text(r),
                context=context[r["key"]],
                doc=orjson.dumps(r, option=orjson.OPT_SORT_KEYS).decode() if docs else None,
                vector=[float(x) for x in vec],
            )
            rows.append(row)
        return pa.Table.from_pylist(rows, schema=self._schema(dim))

    def table_dim(self) -> int:
        table = self.table(create=True)
        return int(table.schema.field("vector").type.list_size)

    def write(
        self, upserts: list[dict[str, Any]], vectors: dict[str, Any], context: dict[str, str],
        deletes: list[str], upkeep: bool = True,
    ) -> None:  # fmt: skip
        """Write rows (PENDING without a vector) and delete keys, under the store's write lock;
        ``upkeep`` false for all but the last of several writes in a row (`_maintain` once).

        Raises:
            UpstreamError: LanceDB refused the write.
        """
        if not upserts and not deletes:
            return
        table = self.table(create=True)
        table.checkout_latest()
        try:
            if upserts:
                rows = self._rows(upserts, vectors, context, docs=self.remote)
                merge = table.merge_insert("key").when_matched_update_all()
                merge.when_not_matched_insert_all().execute(rows)
            if deletes:
                table.delete("key IN (" + ", ".join(_sql(k) for k in deletes) + ")")
        except (OSError, RuntimeError) as exc:  # lance reports I/O errors as RuntimeError
            raise UpstreamError(
                f"the memory index refused the write: {exc}",
                suggestion="check free disk space and permissions",
                code="STORE_WRITE_FAILED",
            ) from None
        try:
            if upkeep:
                self._maintain(table)
        except (OSError, RuntimeError) as exc:  # the rows are written: compaction waits
            print(f"nxs: the write is saved, but index upkeep failed: {exc}", file=sys.stderr)

    def _maintain(self, table: Any) -> None:
        """Keep the full-text index whole (the first write makes it) and the fragments few."""
        state = Upkeep.of(table)
        if state.missing:
            if state.rows:
                from lancedb.index import FTS

                for column in state.missing:
                    table.create_index(column, config=FTS(with_position=False), replace=True)
            return
        if state.due():
            table.optimize(cleanup_older_than=KEEP_VERSIONS)

    def compact(self) -> dict[str, Any]:
        """Compact now (call under the lock); returns fragment counts before and after."""
        table = self.table()
        if table is None:
            return {"fragments_before": 0, "fragments_after": 0}
        table.checkout_latest()
        before = table.stats()["fragment_stats"]["num_fragments"]
        table.optimize(cleanup_older_than=KEEP_VERSIONS)
        after = table.stats()["fragment_stats"]["num_fragments"]
        return {"fragments_before": before, "fragments_after": after}

    def docs(self) -> dict[str, tuple[dict[str, Any], bool]]:
        """Every record a team store holds, and whether it has a vector."""
        table = self.table()
        if table is None:
            return {}
        table.checkout_latest()
        got = table.search().select(["doc", "processing"]).limit(None).to_arrow()
        docs = [orjson.loads(doc) for doc in got.column("doc").to_pylist()]
        ready = [p == "READY" for p in got.column("processing").to_pylist()]
        return {r["key"]: (r, ok) for r, ok in zip(docs, ready, strict=True)}

    def version(self) -> int | None:
        table = self.table()
        if table is None:
            return None
        table.checkout_latest()
        return int(table.version)

    def vectors(self, keys: list[str]) -> dict[str, list[float]]:
        """The stored vectors of READY records among ``keys``."""
        table = self.table()
        if table is None or not keys:
            return {}
        cond = "key IN (" + ", ".join(_sql(k) for k in keys) + ") AND processing = 'READY'"
        got = table.search().where(cond).select(["key", "vector"]).limit(None).to_arrow()
        return dict(
            zip(got.column("key").to_pylist(), got.column("vector").to_pylist(), strict=True)
        )

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Check the latest table version out once for the reads inside (a search's threads)."""
        table = self.table()
        if table is not None:
            table.checkout_latest()
        self._pin = (table, table.version) if table is not None else None
        try:
            yield
        finally:
            self._pin = None

    def _latest(self) -> tuple[Any, int] | None:
        """The table checked out at its latest version, and that version (None: no table)."""
        table = self.table()
        if table is None:
            return None
        pin = self._pin
        if pin is not None and pin[0] is table:
            return pin
        table.checkout_latest()
        return table, table.version

    def keywords(
        self, query: str, filters: dict[str, Any], limit: int, columns: tuple[str, ...]
    ) -> dict[str, list[tuple[str, float]]]:
        """BM25 (key, score) matches in each column's full-text index, best first, asked at once."""
        query = query.replace('"', " ")  # quotes make a phrase query, which needs positions
        latest = self._latest() if columns and query.strip() else None
        if latest is None:
            return dict.fromkeys(columns, [])
        table, version = latest
        query = " ".join([query, *identifiers(query)])
        indexed = self._fts_columns(table, version)
        cond = where(filters)

        # LanceDB's own async queries, awaited together on the loop its sync API runs on: half
        # the cost of a sync search per column. `_table` is the `AsyncTable` the sync table
        # wraps (lancedb is pinned to 0.40.x).
        import asyncio

        from lancedb.background_loop import LOOP

        async def search(column: str) -> Any:
            q = table._table.query().nearest_to_text(query, columns=column)
            q = q.select(["key", "_score"]).limit(limit)
            return await (q.where(cond) if cond else q).to_arrow()  # filtered before the search

        async def every() -> list[Any]:
            return await asyncio.gather(*(search(c) for c in asked))

        asked = [c for c in columns if c in indexed]
        got = dict(zip(asked, LOOP.run(every()), strict=True))
        return {
            c: list(zip(t.column("key").to_pylist(), t.column("_score").to_pylist(), strict=True))
            if (t := got.get(c)) is not None
            else []
            for c in columns
        }

    def _fts_columns(self, table: Any, version: int) -> set[str]:
        """The columns with a full-text index at the checked-out version (asked once for each)."""
        at = (id(table), version)
        if self._fts_at is None or self._fts_at[0] != at:
            got = {i.columns[0] for i in table.list_indices() if i.index_type == "FTS"}
            self._fts_at = (at, got)
        return self._fts_at[1]

    def semantic(
        self, vector: np.ndarray, filters: dict[str, Any], limit: int
    ) -> tuple[list[tuple[str, float]], tuple[float, float] | None]:
        """The ``limit`` nearest READY records and the (mean, std) cosine of all allowed."""
        import numpy as np

        latest = self._latest()
        if latest is None or limit <= 0:
            return [], None
        table = latest[0]
        cond = where({**filters, "processing": "READY"})
        query = table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
        got = (
            query.metric("cosine").where(cond, prefilter=True).select(["key", "_distance"])
            .limit(max(table.count_rows(), 1)).to_arrow()
        )  # fmt: skip
        similar = 1.0 - got.column("_distance").to_numpy(zero_copy_only=False).astype(np.float64)
        keys = got.column("key").to_pylist()
        real = np.isfinite(similar)  # a zero vector has no direction
        if not real.any():
            return [], None
        spread = (float(similar[real].mean()), float(similar[real].std()))
        best = sorted((-s, k) for k, s in zip(keys, similar.tolist(), strict=True) if s == s)
        return [(k, -s) for s, k in best[:limit]], spread

    def passing(self, keys: set[str], filters: dict[str, Any]) -> set[str]:
        """Which of ``keys`` the filters allow (the semantics of `where`)."""
        latest = self._latest() if keys else None
        if latest is None:
            return set()
        cond = where(filters)
        inside = "key IN (" + ", ".join(_sql(k) for k in sorted(keys)) + ")"
        query = latest[0].search().where(f"{inside} AND ({cond})" if cond else inside)
        return set(query.select(["key"]).limit(None).to_arrow().column("key").to_pylist())
