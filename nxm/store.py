"""The memory store: one LanceDB table in `.nxs/memory/`, guarded by a lock, cached for reads.

LanceDB holds every record (as its JSON document plus the columns filters need), its vector,
and the native full-text index. Three rules keep it whole and fast:

- **One writer at a time.** Writes take an exclusive file lock and `checkout_latest()` inside
  it, so two processes never upsert the same key twice or lose a read-modify-write.
- **Compaction as it grows.** Every write makes a LanceDB version and fragment; `optimize()`
  merges them and folds new rows into the full-text index, so search time does not grow with
  the number of writes. A small table is optimized by the writer after every write; a large
  one after `COMPACT_EVERY` fragments, by a detached child process (`nxm.maintain`, like
  `git gc --auto`), so the writer neither waits for it nor holds its memory.
- **A read cache.** Importing lancedb costs seconds, so `show`, `list` and `prime` read
  `.nxs/cache/records.json`, a snapshot of every record that writers refresh under the lock.
  A writer deletes it before committing and writes it after, so a crash in between leaves no
  snapshot (the next reader rebuilds it under the lock), never a stale one.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import orjson

from nxm.lines import Lines, built, framed, identity, laid, write
from nxm.rank import feedback_factor
from nxm.record import body_hash, complete, contexts, followers, identifiers, indexed_text
from nxs.errors import UpstreamError
from nxs.paths import atomic_write
from nxs.workspace import Workspace

if TYPE_CHECKING:
    import numpy as np

TABLE = "memories"
# Fragments before optimize(). At 100,000 memories search time showed no trend from 2 to 22
# fragments of single writes, and the optimize() itself took 12-22 s (docs/benchmarks.md, Scale).
COMPACT_EVERY = 24
# Old versions are removed by compaction once this old: long enough for any reader that opened
# one to finish (every operation checks out the latest first); 0 would break concurrent readers.
KEEP_VERSIONS = timedelta(hours=1)
FTS_COLUMNS = ("text", "context")  # a memory's own text; its session context
# Rows: up to this many, every write is folded into the full-text index at once. Folding merges
# the whole index again (~0.1 s at 2,000 rows, 0.5-0.8 s at 10,000 on this 2-core machine) and
# compaction rewrites every row (a 10,000-row fragment is 25 MB), so larger tables fold and
# compact every `COMPACT_EVERY` single writes; the rows written since are found by a scan.
FOLD_EVERY_WRITE_UP_TO = 2_000
# Rows outside the full-text index are searched by a scan (~50 us a row on this 2-core machine,
# loaded: 36,512 of them after a 100,000-memory import made a keyword search take ~2 s), so a
# write that leaves more than this many (an import's or embed's batch) folds them in at once.
UNINDEXED_MAX = 256
MAINTAINER_WAIT_S = 120  # the longest a write waits for a maintainer fallen behind (`_maintain`)
# LanceDB's caches of index and manifest pieces grow with every version (~2 MB a write at
# 10,000 memories), and with each compaction's new index; a long-lived process (the MCP server)
# keeps them to this size. Search took the same time with 8, 32 or 128 MB (10,000 and 100,000
# memories: the pieces a search reads stay in the OS's file cache); 36 adds at 100,000 with a
# compaction raised the peak 5 MB with 32 and 13 MB with 128 (measured).
INDEX_CACHE_BYTES = 32 << 20
METADATA_CACHE_BYTES = 16 << 20
# A process that writes appends its rows to the vectors it holds (`_Vectors.patched`), rather
# than reading every vector again (0.5-0.9 s at 100,000 memories); room for this many rows, or
# a fiftieth of the table, is kept, and the columns are joined into one chunk past MAX_CHUNKS.
SPARE_ROWS = 256
MAX_CHUNKS = 32
FILTER_COLUMNS = (
    "status", "category", "scope", "priority", "layer", "processing", "user_id", "agent_id",
    "session_id", "created", "updated", "expires",
)  # fmt: skip


def _glibc(function: str, *args: int) -> None:
    """Call one of glibc's malloc tunings; elsewhere (not Linux, not glibc) nothing happens.

    - ``mallopt(M_ARENA_MAX=-8, 2)``: two malloc arenas instead of eight per core. Each of
      LanceDB's threads otherwise gets its own, which keeps what it freed: a long-lived process
      grew from 140 to 690 MB in 20 writes at 10,000 memories, and to 330 MB with two arenas
      (measured; `MALLOC_ARENA_MAX=2` does the same). Called before LanceDB starts its threads.
    - ``mallopt(M_MMAP_THRESHOLD=-3, 1 MB)``: every block of 1 MB or more is its own mapping,
      returned to the system when freed. By default glibc raises the threshold after such a
      free (up to 32 MB), and the heap keeps what a write's large temporaries left: at 100,000
      memories 30 adds with searches between took a process's peak from 546 to 638 MB with
      this and from 559 to 651 MB without (measured).
    - ``malloc_trim(0)``: return the free heap to the system (what LanceDB's reads left there
      is otherwise kept, and counted in the process's peak).
    """
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError, TypeError):
            getattr(ctypes.CDLL(None), function)(*args)


# lancedb imports the REST client of Lance namespaces, whose package `__init__` builds every API
# class of its generated OpenAPI code (~2 s and ~14 MB here); a store on a path or an object
# store URI never calls them. Only the package's own `__init__` is deferred: its submodules
# (the models lancedb does import) load as usual, and the first use of one of its names runs it.
LAZY_PACKAGES = ("lance_namespace_urllib3_client",)


def import_lancedb() -> Any:
    """``import lancedb`` with `LAZY_PACKAGES` initialised on first use (deferred: lancedb
    costs ~1.5 s to import; only searches and writes pay it)."""
    import importlib.util

    for name in LAZY_PACKAGES:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and spec.submodule_search_locations:
            sys.modules[name] = _lazy(importlib.util.module_from_spec(spec))
    import lancedb

    return lancedb


def _lazy(module: Any) -> Any:
    """``module`` (made from its spec, not yet run) runs its code on the first missing name."""

    lock = threading.Lock()

    def missing(name: str) -> Any:
        with lock:
            if vars(module).get("__getattr__") is missing:  # once: then a missing name is one
                del module.__getattr__
                module.__spec__.loader.exec_module(module)
        return getattr(module, name)

    module.__getattr__ = missing
    return module


_BACKGROUND: list[Any] = []
os.register_at_fork(after_in_child=_BACKGROUND.clear)  # a forked child has none of the threads


def background() -> Any:
    """The process's two threads for work that overlaps a search's other parts (LanceDB and
    onnxruntime release the GIL); made once, as a new thread per search costs ~1-4 ms. A task
    given them must never wait for another of their tasks (that could deadlock)."""
    if not _BACKGROUND:
        from concurrent.futures import ThreadPoolExecutor

        _BACKGROUND.append(ThreadPoolExecutor(2, thread_name_prefix="nxs-search"))
    return _BACKGROUND[0]


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
        elif name == "not_expired":
            parts.append(f"(expires IS NULL OR expires > {_sql(value)})")
        elif name == "status_in":
            parts.append("status IN (" + ", ".join(_sql(v) for v in value) + ")")
        elif name in FILTER_COLUMNS:
            parts.append(f"{name} = {_sql(value)}")
        else:
            raise KeyError(name)
    return " AND ".join(parts) or None


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
        if name == "ref":
            refs = columns["refs"]
            hit = pc.equal(pc.list_flatten(refs), pa.scalar(value, pa.string()))
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


CACHE_HEAD = b'{"records":[\n'
CACHE_TAIL = b'],"version":1}\n'
CACHE_SEP = b",\n"


def _cache_entries(fh: Any) -> Iterator[tuple[dict[str, Any], int, int]]:
    """The records of a read cache file, parsed a line at a time, each with its span (the
    record's JSON, without the line's ``,\n``; -1, -1 for a file in another layout, parsed whole).

    `Store._write_cache` writes ``{"records":[`` and ``],"version":1}`` around one record a
    line, so the whole file is also plain JSON.

    Raises:
        ValueError: (or orjson's, LookupError, TypeError) the file is damaged.
    """
    first = fh.readline()
    if first != CACHE_HEAD:
        data = orjson.loads(first + fh.read())
        yield from ((r, -1, -1) for r in data["records"])
        return
    at, seen = len(first), False
    more = True  # whether a record may follow: the line before ended with a comma
    for line in fh:
        if line == CACHE_TAIL and (not more or not seen):
            if fh.read():
                raise ValueError("bytes after the end of the read cache")
            return
        if not more or not line.endswith(b"\n"):
            raise ValueError("a damaged line in the read cache")
        more = line.endswith(b",\n")
        size = len(line) - (2 if more else 1)
        yield orjson.loads(line[:size]), at, at + size
        at, seen = at + len(line), True
    raise ValueError("the read cache ends early")


def _parse_cache(fh: Any) -> dict[str, dict[str, Any]]:
    """The records of a read cache file by key (`_cache_entries`)."""
    return {r["key"]: r for r, _, _ in _cache_entries(fh)}


_PLAIN: Mapping[str, Any] = MappingProxyType({})


def _brief(record: dict[str, Any]) -> Mapping[str, Any]:
    """What ranking reads of a record (`nxm.rank.fuse`, `nxm.rank.neighbours`) and a write
    finds sessions by (`Records.in_sessions`): its feedback when that moves its score, its
    session and its time; for most records one shared empty map."""
    brief: dict[str, Any] = {}
    if feedback_factor(record) != 1.0:
        brief["feedback"] = record["feedback"]
    if record.get("session_id"):
        brief.update(session_id=record["session_id"], created=record.get("created"))
    return brief or _PLAIN


class Snapshot(Mapping[str, dict[str, Any]]):
    """Every record of one state of the store, by key, as search reads them (`Store.snapshot`).

    Read from the read cache file, it holds the file open, each record's span in it
    (`nxm.lines.Lines`) and `brief` (what ranking reads of each record), and parses a record
    only when asked for it: a search reads the few it returns. Holding every record as a dict
    instead cost the MCP server 318 MB at 100,000 memories. A writer replacing the file does
    not change what this snapshot reads, and this process's next write copies the unchanged
    records' lines from it (`Store._write_cache`). Made from records in memory (a store
    without a read cache), it serves them. Read-only: a record it returns may be shared.
    """

    def __init__(
        self,
        brief: Mapping[str, Mapping[str, Any]],
        read: Callable[[str], dict[str, Any]],
        sig: Any = None,
        lines: Lines | None = None,
        fd: int | None = None,
    ) -> None:
        self.brief = brief
        self.sig = sig  # the read cache file's identity (`nxm.lines.identity`), None if none
        self.lines = lines  # the file's records, when it has one a line in key order
        self.fd = fd
        self._read = read

    @classmethod
    def of(cls, records: dict[str, dict[str, Any]], sig: Any = None) -> Snapshot:
        """The snapshot of records in memory (each is its own brief)."""
        return cls(records, records.__getitem__, sig)

    @classmethod
    def read(cls, fh: Any, sig: Any) -> Snapshot:
        """The snapshot of an open read cache file (`_cache_entries`, with its errors)."""
        brief: dict[str, Mapping[str, Any]] = {}
        spans: list[int] = []
        whole: dict[str, dict[str, Any]] = {}  # records of a file in another layout
        for record, start, end in _cache_entries(fh):
            key = record["key"]
            brief[key] = _brief(record)
            if start < 0:
                whole[key] = record
            else:
                spans += (start, end)
        if whole:
            return cls.of(whole, sig)
        keys = list(brief)
        if any(a >= b for a, b in itertools.pairwise(keys)):
            raise ValueError("the read cache is not in key order")
        lines = Lines.build(keys, zip(spans[0::2], spans[1::2], strict=True), CACHE_SEP)
        return cls.opened(brief, lines, fh.fileno(), sig)

    @classmethod
    def opened(cls, brief: dict[str, Any], lines: Lines, fileno: int, sig: Any) -> Snapshot:
        """The snapshot of a read cache file open as ``fileno`` (kept open: duplicated)."""
        fd = os.dup(fileno)

        def read(key: str) -> dict[str, Any]:
            i = lines.find(key)
            if i is None:
                raise KeyError(key)
            start, end = int(lines.starts[i]), int(lines.ends[i])
            return orjson.loads(os.pread(fd, end - start, start))

        got = cls(brief, read, sig, lines, fd)
        weakref.finalize(got, os.close, fd)
        return got

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key not in self.brief:
            raise KeyError(key)
        return self._read(key)

    def __contains__(self, key: object) -> bool:
        return key in self.brief

    def __iter__(self) -> Iterator[str]:
        return iter(self.brief)

    def __len__(self) -> int:
        return len(self.brief)


class Records(MutableMapping[str, dict[str, Any]]):
    """Every record inside a write (`Store.writing`): a `Snapshot` and the changes made since.

    A record is parsed when it is asked for, so a write that touches a few records of 100,000
    reads a few, and iterating (a rare, store-wide operation) parses one at a time.

    ``base.sig`` and ``written`` (set by `Store.commit`) identify the read cache before and
    after the write: a file derived from the records (`nxm.graph`, `nxm.projection`) that was
    made for ``base.sig`` needs only this write's changes, and is then current for ``written``.
    """

    def __init__(
        self,
        base: Snapshot,
        bodies: Callable[[str], list[str]],
        changes: dict[str, dict[str, Any] | None] | None = None,
    ) -> None:
        self.base = base
        self.changes: dict[str, dict[str, Any] | None] = dict(changes or {})
        self.written: Any = None  # the read cache's identity once a commit wrote it
        self._bodies = bodies

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key in self.changes:
            got = self.changes[key]
            if got is None:
                raise KeyError(key)
            return got
        return self.base[key]

    def __contains__(self, key: object) -> bool:
        if key in self.changes:
            return self.changes[key] is not None  # type: ignore[index]
        return key in self.base

    def __setitem__(self, key: str, record: dict[str, Any]) -> None:
        self.changes[key] = record

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self.changes[key] = None

    def __iter__(self) -> Iterator[str]:
        changes = self.changes
        yield from (k for k in self.base if changes.get(k, k) is not None)
        yield from (k for k, r in changes.items() if r is not None and k not in self.base)

    def __len__(self) -> int:
        base = self.base
        return len(base) + sum((r is not None) - (k in base) for k, r in self.changes.items())

    def before(self, key: str) -> dict[str, Any] | None:
        """The record as the snapshot holds it (before this write's changes), or None."""
        return self.base[key] if key in self.base else None

    def then(self, upserts: list[dict[str, Any]], deletes: Iterable[str]) -> Records:
        """These records with ``upserts`` and ``deletes`` applied (self is unchanged)."""
        changes = {**self.changes, **{r["key"]: r for r in upserts}}
        changes.update((k, None) for k in deletes if k in self)
        return Records(self.base, self._bodies, changes)

    def with_body(self, digest: str) -> list[str]:
        """The keys of the records whose body hashes to ``digest`` (`body_hash`), sorted."""
        got = {k for k, r in self.changes.items() if r and body_hash(r["body"]) == digest}
        got.update(k for k in self._bodies(digest) if k not in self.changes and k in self.base)
        return sorted(got)

    def in_sessions(self, sessions: set[str]) -> Iterator[dict[str, Any]]:
        """The records of ``sessions`` (read from the snapshot's brief: only these are parsed)."""
        changes = self.changes
        for key, brief in self.base.brief.items():
            if brief.get("session_id") in sessions and key not in changes:
                yield self.base[key]
        yield from (r for r in changes.values() if r and r.get("session_id") in sessions)


def _bools(values: Any) -> np.ndarray:
    import numpy as np

    return np.asarray(values.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


@dataclass
class Upkeep:
    """What `optimize()` would find to do in one table version; the writer (`Store._maintain`)
    and the maintainer (`nxm.maintain`) decide from it."""

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
        """Whether a writer should have the table optimized now: rows outside the index are
        still searched, but scored on other term statistics, so a small table folds every
        write in at once; a large one waits until `COMPACT_EVERY` fragments have piled up
        (single writes), or `UNINDEXED_MAX` rows are outside the index (batches)."""
        small = self.unindexed > 0 and self.rows <= FOLD_EVERY_WRITE_UP_TO
        return self.fragments >= COMPACT_EVERY or self.unindexed > UNINDEXED_MAX or small

    @property
    def pending(self) -> bool:
        """Whether `optimize()` has anything to do: fragments to merge or rows to fold in."""
        return self.fragments > 1 or self.unindexed > 0


class Store:
    """The LanceDB-backed memory store of one workspace."""

    def __init__(self, ws: Workspace, dim: int = 384) -> None:
        self.ws = ws
        configured = ws.section("memory").get("store")
        self.uri = str(configured) if configured else str(ws.dir / "memory")
        self.local = "://" not in self.uri
        self.dim = dim
        self.cache_path = ws.dir / "cache" / "records.json"
        self.lock_path = ws.dir / "memory.lock"
        self._db: Any = None
        self._table: Any = None
        self._storage_options = ws.section("memory").get("storage_options") or None
        self._snapshot: Snapshot | None = None
        self._vectors_at: tuple[tuple[int, int], _Vectors] | None = None
        self._fts_at: tuple[tuple[int, int], set[str]] | None = None
        self._pin: tuple[Any, int] | None = None  # (table, version) inside `pinned`
        self.maintainer: Any = None  # the `nxm.maintain` child last started (a Popen)
        self._behind = False  # the last write found the maintainer falling behind

    # -- LanceDB ---------------------------------------------------------------------------

    def _schema(self, dim: int) -> Any:
        import pyarrow as pa

        cols = [pa.field("key", pa.string()), pa.field("hash", pa.string())]
        cols += [pa.field(c, pa.string()) for c in FILTER_COLUMNS]
        cols += [
            pa.field("refs", pa.list_(pa.string())),
            pa.field("text", pa.string()),
            pa.field("context", pa.string()),
            pa.field("doc", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
        return pa.schema(cols)

    def table(self, create: bool = False) -> Any:
        """The LanceDB table (opened once per process), or None when there is none yet."""
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
                self._check_not_lost()
                if not create:
                    return None
                self._table = self._db.create_table(
                    TABLE, schema=self._schema(self.dim), exist_ok=True
                )
        except (OSError, RuntimeError) as exc:  # lance reports I/O errors as RuntimeError
            raise UpstreamError(
                f"cannot open the memory store at {self.uri}: {exc}",
                suggestion="check the path's permissions and free space",
                code="STORE_UNAVAILABLE",
            ) from None
        return self._table

    def _check_not_lost(self) -> None:
        """Refuse to go on when the table is gone but the read cache still holds records.

        Raises:
            UpstreamError: a new, empty table would hide (and the next crash lose) them.
        """
        cached = self._read_cache()
        if cached:
            raise UpstreamError(
                f"the memory table {TABLE}.lance is missing from {self.uri}, but the read cache "
                f"still holds {len(cached)} memories",
                suggestion="restore .nxs/memory from version control or a backup, or rebuild it "
                "from the cache: `nxm export -o memories.jsonl`, delete "
                ".nxs/cache/records.json, then `nxm import memories.jsonl`",
                code="STORE_MISSING",
            )

    def _rows(
        self, records: list[dict[str, Any]], vectors: dict[str, Any], context: dict[str, str]
    ) -> Any:
        import pyarrow as pa

        dim = self.table_dim()
        zero = [0.0] * dim
        rows = []
        for r in records:
            row = {c: r.get(c) for c in FILTER_COLUMNS}
            vec = vectors.get(r["key"])
            if vec is None or len(vec) != dim:
                vec, row["processing"] = zero, "PENDING"
            row.update(
                key=r["key"],
                hash=body_hash(r["body"]),
                refs=list(r["refs"]),
                text=indexed_text(r),
                context=context[r["key"]],
                doc=orjson.dumps(r, option=orjson.OPT_SORT_KEYS).decode(),
                vector=[float(x) for x in vec],
            )
            rows.append(row)
        return pa.Table.from_pylist(rows, schema=self._schema(dim))

    def table_dim(self) -> int:
        table = self.table(create=True)
        return int(table.schema.field("vector").type.list_size)

    # -- reads -------------------------------------------------------------------------------

    def _scan(self) -> dict[str, dict[str, Any]]:
        table = self.table()
        if table is None:
            return {}
        table.checkout_latest()
        docs = table.search().select(["doc"]).limit(None).to_arrow().column("doc").to_pylist()
        records = [complete(orjson.loads(d)) for d in docs]
        return {r["key"]: r for r in records}

    def _read_cache(self) -> dict[str, dict[str, Any]] | None:
        if not self.local:
            return None
        try:
            with open(self.cache_path, "rb") as fh:
                return _parse_cache(fh)
        except (FileNotFoundError, ValueError, LookupError, TypeError):
            return None  # absent or damaged (orjson's errors are ValueErrors): rebuilt from LanceDB

    def _write_cache(self, records: Mapping[str, dict[str, Any]]) -> Snapshot | None:
        """Write the read cache (under the lock: a temporary file left there is a dead writer's)
        and return its `Snapshot`; None for a store without one (not local).

        One JSON document, one record a line in key order (`_cache_entries`), renamed into
        place. For `Records` whose snapshot holds the file's lines, the lines of the records
        this write did not change are copied from the old file (`nxm.lines`); otherwise every
        record is serialized, one at a time, so the file is never held whole in memory.
        """
        if not self.local:
            return None
        for stale in self.cache_path.parent.glob(f".{self.cache_path.name}.*"):
            stale.unlink(missing_ok=True)
        base = records.base if isinstance(records, Records) else None
        if base is not None and base.lines is not None:
            changes = records.changes  # type: ignore[attr-defined]
            add = [(k, orjson.dumps(r)) for k, r in changes.items() if r is not None]
            drop = [k for k in changes if k in base]
            lines, pieces = base.lines.merge(drop, add, len(CACHE_HEAD))
            brief = dict(base.brief)
            for key, record in changes.items():
                if record is None:
                    brief.pop(key, None)
                else:
                    brief[key] = _brief(record)
            body = write(base.fd, pieces)
            atomic_write(self.cache_path, framed(CACHE_HEAD, body, CACHE_TAIL, bool(lines.keys)))
        else:
            keys: list[str] = []
            spans: list[int] = []
            brief = {}

            def every() -> Iterator[tuple[str, bytes]]:
                for key in sorted(records):
                    record = records[key]
                    brief[key] = _brief(record)
                    yield key, orjson.dumps(record)

            body = laid(every(), len(CACHE_HEAD), CACHE_SEP, keys, spans)
            atomic_write(self.cache_path, framed(CACHE_HEAD, body, CACHE_TAIL, bool(records)))
            lines = built(keys, spans, CACHE_SEP)
        with open(self.cache_path, "rb") as fh:
            return Snapshot.opened(brief, lines, fh.fileno(), identity(fh.fileno()))

    def records(self) -> dict[str, dict[str, Any]]:
        """Every record by key: from the read cache when present, else from LanceDB."""
        cached = self._read_cache()
        if cached is not None:
            return cached
        if self.local and not Path(self.uri, f"{TABLE}.lance").exists():
            return {}
        with self._locked():
            cached = self._read_cache()
            if cached is None:
                cached = self._scan()
                with contextlib.suppress(OSError):  # a full or read-only disk: serve the scan
                    self._snapshot = self._write_cache(cached)
        return cached

    def _cache_sig(self) -> tuple[int, int, int] | None:
        """The read cache file's identity (`nxm.lines.identity`), None when there is none."""
        return identity(self.cache_path) if self.local else None

    def snapshot(self) -> Snapshot:
        """Every record as search reads them, kept while the read cache file is unchanged.

        A long-lived process (the MCP server) reads the file once after each change, not on
        every search, and holds a `Snapshot` of it, not every record.
        """
        got = self._kept_snapshot()
        if got is None:  # absent or damaged: `records()` rebuilds it under the lock
            records = self.records()
            got = self._read_snapshot() or Snapshot.of(records)
            self._snapshot = got if got.sig is not None else None
        return got

    def _kept_snapshot(self) -> Snapshot | None:
        """The snapshot this process holds while the read cache file is unchanged, else the
        file read again (None: there is none, or it is damaged)."""
        sig = self._cache_sig()
        if sig is None or self._snapshot is None or self._snapshot.sig != sig:
            self._snapshot = None  # let the old one go before the new one is read
            self._snapshot = self._read_snapshot()
        return self._snapshot

    def _read_snapshot(self) -> Snapshot | None:
        if not self.local:
            return None
        try:
            with open(self.cache_path, "rb") as fh:  # the identity of the very file read
                return Snapshot.read(fh, identity(fh.fileno()))
        except (FileNotFoundError, ValueError, LookupError, TypeError):
            return None  # absent or damaged (orjson's errors are ValueErrors)

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

    # -- writes ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.ws.dir.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UpstreamError(
                f"cannot take the write lock {self.lock_path}: {exc.strerror}",
                suggestion="check that the workspace's .nxs/ directory is writable",
                code="STORE_READONLY",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @contextlib.contextmanager
    def writing(self) -> Iterator[Records]:
        """Hold the write lock and yield every record (`Records`), freshly read inside it."""
        if self._behind and self.maintainer is not None:  # let it have the lock (`_maintain`)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.maintainer.wait(timeout=MAINTAINER_WAIT_S)
        self._behind = False
        with self._locked():
            table = self.table()
            if table is not None:
                table.checkout_latest()
            # no read cache, or a damaged one: read from LanceDB, and the commit writes it again
            base = self._kept_snapshot() or Snapshot.of(self._scan())
            yield Records(base, self._bodies)

    def _bodies(self, digest: str) -> list[str]:
        """The keys of the stored records whose body hashes to ``digest`` (the ``hash`` column)."""
        table = self.table()
        if table is None:
            return []
        got = table.search().where(f"hash = {_sql(digest)}").select(["key"]).limit(None)
        return got.to_arrow().column("key").to_pylist()

    def commit(
        self,
        current: Records,
        upserts: list[dict[str, Any]],
        vectors: dict[str, Any] | None = None,
        deletes: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        """Write changed records (with new vectors where given) and deletions; call in `writing`.

        Records without a new vector keep the one stored. ``current`` is updated in place.
        """
        if not upserts and not deletes:
            return
        table = self.table(create=True)
        held = self._vectors_at  # patched below if of the version this write starts from
        held = held[1] if held is not None and held[0] == (id(table), table.version) else None
        current.written = None
        after = current.then(upserts, deletes)
        changed = {r["key"] for r in upserts} | set(deletes)
        again = followers(current, after, changed)  # their session context changes with these
        if "context" not in table.schema.names:  # a store from before session context
            table.add_columns({"context": "text"})  # right for every memory without a session
            again |= {k for k, r in after.items() if r.get("session_id")} - changed
        upserts = [*upserts, *(after[k] for k in sorted(again))]
        context = contexts(after, [r["key"] for r in upserts])
        vectors = dict(vectors or {})
        keep = [r["key"] for r in upserts if r["key"] not in vectors and r["processing"] == "READY"]
        vectors.update(self.vectors(keep))
        self.cache_path.unlink(missing_ok=True)
        rows = None
        try:
            if upserts:
                rows = self._rows(upserts, vectors, context)
                (
                    table.merge_insert("key")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(rows)
                )
                for r, processing in zip(
                    upserts, rows.column("processing").to_pylist(), strict=True
                ):
                    r["processing"] = processing
            if deletes:
                table.delete("key IN (" + ", ".join(_sql(k) for k in deletes) + ")")
        except (OSError, RuntimeError) as exc:  # lance reports I/O errors as RuntimeError
            raise UpstreamError(
                f"the memory store refused the write: {exc}",
                suggestion="check free disk space and permissions of .nxs/; nothing was written",
                code="STORE_WRITE_FAILED",
            ) from None
        for r in upserts:
            current[r["key"]] = r
        for k in deletes:
            current.pop(k, None)
        try:
            self._maintain(table)
            written = self._write_cache(current)
        except (OSError, RuntimeError) as exc:  # committed: the next reader rebuilds the cache
            self.cache_path.unlink(missing_ok=True)
            print(f"nxs: the write is saved, but upkeep failed: {exc}", file=sys.stderr)
            return
        # under the lock, the versions since `held` are this write's (and upkeep's, which
        # changes no row): the next search need not read every vector again
        patched = held.patched(rows, deletes) if held is not None else None
        self._vectors_at = ((id(table), table.version), patched) if patched is not None else None
        if written is not None:  # this process's next write and search start from it
            self._snapshot, current.written = written, written.sig

    def _maintain(self, table: Any) -> None:
        """Keep the full-text index whole and the fragments few (`Upkeep`).

        A small table is optimized here, at once (~0.1 s at 2,000 rows). A large one is left to
        a detached `nxm.maintain` child: at 100,000 memories `optimize()` rewrites the whole
        table (~5 s) and raised the MCP server's peak RSS from ~564 to ~860 MB. A missing
        full-text index is made here (the first write's, or an old store's).
        """
        if self.maintainer is not None and self.maintainer.poll() is not None:
            self.maintainer = None  # reaped
        state = Upkeep.of(table)
        if state.missing:
            if state.rows:
                from lancedb.index import FTS

                for column in state.missing:
                    table.create_index(column, config=FTS(with_position=False), replace=True)
            return
        if not state.due():
            return
        if state.rows <= FOLD_EVERY_WRITE_UP_TO:
            table.optimize(cleanup_older_than=KEEP_VERSIONS)
        elif self.maintainer is None:  # one already running will see this write's fragment too
            from nxm import maintain

            self.maintainer = maintain.spawn(self.ws.root)
        # Writes in a burst can keep the maintainer from the lock (it is not handed over in
        # order: 500 adds in a row at 10,000 piled up 45 fragments and doubled search time), so
        # past twice the due count the next write first waits for the maintainer to finish.
        self._behind = state.fragments >= 2 * COMPACT_EVERY

    def upkeep(self) -> bool:
        """Optimize the checked-out table if there is anything to do (`Upkeep.pending`); call
        under the lock. It changes no record, so the read cache and the files derived from the
        records stay as they are (a writer's next write still copies their unchanged parts)."""
        table = self.table()
        if table is None or not Upkeep.of(table).pending:
            return False
        table.optimize(cleanup_older_than=KEEP_VERSIONS)
        return True

    def compact(self) -> dict[str, Any]:
        """Compact now (under the lock); returns fragment counts before and after."""
        with self._locked():
            table = self.table()
            if table is None:
                return {"fragments_before": 0, "fragments_after": 0}
            table.checkout_latest()
            before = table.stats()["fragment_stats"]["num_fragments"]
            table.optimize(cleanup_older_than=KEEP_VERSIONS)
            after = table.stats()["fragment_stats"]["num_fragments"]
        return {"fragments_before": before, "fragments_after": after}

    # -- search ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Check the latest table version out once for the reads inside (a search's keyword,
        vector and filter reads, on two threads); outside, each read checks out again. Each
        checkout and each ask of the version is a round trip to LanceDB's event-loop thread
        (~0.4 ms wall and CPU on a third thread; a search made six)."""
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
        """BM25 matches in each column's full-text index (``text``, or ``context``: the session
        context of `nxm.record.contexts`): (key, score), best first; the queries run at once."""
        query = query.replace('"', " ")  # quotes make a phrase query, which needs positions
        latest = self._latest() if columns and query.strip() else None
        if latest is None:
            return dict.fromkeys(columns, [])
        table, version = latest
        query = " ".join([query, *identifiers(query)])
        indexed = self._fts_columns(table, version)
        cond = where(filters)

        # LanceDB's own async queries, all awaited in one call on the event loop its sync API
        # runs on: the sync `table.search(...)` made ~8 round trips to that loop per query and
        # ran one query per Python thread; this takes half the time and CPU (two columns at
        # 10,000 memories: 13.6 -> 7.0 ms wall, 18.7 -> 10.7 ms CPU; results identical, as
        # `tests/test_store.py` checks against `table.search`). `_table` is the `AsyncTable`
        # the sync table wraps (lancedb is pinned to 0.40.x).
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
        """The columns with a full-text index at the checked-out version (asked once per version)."""
        at = (id(table), version)
        if self._fts_at is None or self._fts_at[0] != at:
            got = {i.columns[0] for i in table.list_indices() if i.index_type == "FTS"}
            self._fts_at = (at, got)
        return self._fts_at[1]

    def semantic(
        self, vector: np.ndarray, filters: dict[str, Any], limit: int
    ) -> tuple[list[tuple[str, float]], tuple[float, float] | None]:
        """Nearest READY records by cosine similarity: (key, similarity), best first, and the
        (mean, std) of the similarities of every record the filters allow (None when none do).

        The same exact (flat) search LanceDB would run, done with numpy over `_ready_vectors`,
        the table's READY vectors kept in memory while the table's version is unchanged.
        """
        import numpy as np

        latest = self._latest()
        if latest is None:
            return [], None
        ready = self._ready_vectors(*latest)
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

    def passing(self, keys: set[str], filters: dict[str, Any]) -> set[str]:
        """Which of ``keys`` the filters allow (`matches`: the semantics of `where`), read from
        the READY rows' columns (`_ready_vectors`) and, for a record without a vector, from the
        record itself."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        latest = self._latest() if keys else None
        if latest is None:
            return set()
        vectors = self._ready_vectors(*latest)
        ready = vectors.columns
        asked = pa.array(sorted(keys), pa.string())
        rows = np.flatnonzero(_bools(pc.is_in(ready["key"], value_set=asked)) & vectors.live())
        found = {c: column.take(rows).combine_chunks() for c, column in ready.items()}
        snapshot = self.snapshot()
        rest = [snapshot[k] for k in keys - set(found["key"].to_pylist()) if k in snapshot]
        if rest:  # not READY: no vector row holds its columns
            more = {c: pa.array([r.get(c) for r in rest], found[c].type) for c in found}
            found = {c: pa.concat_arrays([found[c], more[c]]) for c in found}
        return set(found["key"].filter(pa.array(matches(found, filters))).to_pylist())

    def _ready_vectors(self, table: Any, version: int) -> _Vectors:
        """The READY rows' keys, filter columns and vectors at the checked-out table version.

        Read once per version: a write by any process makes a new version, so a long-lived
        process (the MCP server) reads the vectors again only after the store changed.
        """
        if self._vectors_at is not None and self._vectors_at[0] == (id(table), version):
            return self._vectors_at[1]
        self._vectors_at = None  # let the old matrix go before the new one is read
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
        # room for this process's next writes (`_Vectors.patched`); untouched, it takes no memory
        capacity = len(keys) + max(SPARE_ROWS, len(keys) // 50)
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
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(keys)] = True
        ready = _Vectors(matrix=matrix, norms=norms, columns=columns, alive=alive, size=len(keys))
        self._vectors_at = ((id(table), version), ready)
        return ready


def _norms(rows: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.sqrt(np.einsum("ij,ij->i", rows, rows))


@dataclass
class _Vectors:
    """READY rows of one table version: keys and filter columns (chunked Arrow arrays), vectors
    (float32) and their norms, for the first ``size`` rows of ``matrix``; a row not ``alive``
    was replaced or deleted by a later write (`patched`)."""

    matrix: np.ndarray
    norms: np.ndarray
    columns: dict[str, Any]
    alive: np.ndarray
    size: int

    def live(self) -> np.ndarray:
        """One bool per row of the columns: whether it is still the row of its key."""
        return self.alive[: self.size]

    def rows(self, filters: dict[str, Any]) -> np.ndarray:
        """The indices of the live rows the filters allow."""
        import numpy as np

        return np.flatnonzero(matches(self.columns, filters) & self.live())

    def patched(self, written: Any | None, deletes: list[str]) -> _Vectors | None:
        """These vectors after a write of this process: ``written`` (the rows it stored, an
        Arrow table) and the deleted keys. The rows of those keys die; the written READY rows
        are appended in the room past ``size`` (the matrix is shared: this one never reads
        there). None when there is no room left (then the vectors must be read again)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        gone, ready = list(deletes), None
        if written is not None:
            gone += written.column("key").to_pylist()
            ready = written.filter(pc.equal(written.column("processing"), "READY"))
        start = self.size
        end = start + (ready.num_rows if ready is not None else 0)
        if end > len(self.matrix):
            return None
        alive = self.alive.copy()
        alive[:start] &= ~_bools(
            pc.is_in(self.columns["key"], value_set=pa.array(gone, pa.string()))
        )
        if ready is None or end == start:
            return _Vectors(self.matrix, self.norms, self.columns, alive, start)
        vectors = ready.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        self.matrix[start:end] = vectors.reshape(end - start, self.matrix.shape[1])
        self.norms[start:end] = _norms(self.matrix[start:end])
        alive[start:end] = True
        columns = {}
        for name, column in self.columns.items():
            chunks = [*column.chunks, ready.column(name).combine_chunks().cast(column.type)]
            if len(chunks) > MAX_CHUNKS:  # each chunk costs every filter a little
                chunks = [pa.concat_arrays(chunks)]
            columns[name] = pa.chunked_array(chunks, column.type)
        return _Vectors(self.matrix, self.norms, columns, alive, end)
