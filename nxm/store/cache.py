"""The local record cache: every memory parsed once, in SQLite, beside the LanceDB index.

Reading 10,000 memory files takes ~0.3 s here, so `list`, `show` and `prime` read the records
from ``.nxs/index/cache.db`` instead (stdlib sqlite3: no lancedb import). It is derived and
machine-local: each row keeps the identities of the two files it was read from
(`nxm.store.files.ident`), every command compares them with the files first (`Store.sync`),
and a row whose files changed is read again. It is never believed over the files: deleting it
loses nothing. It also holds:

- ``pending``: keys whose LanceDB row is out of date (the index catches up before a search);
- ``vectors``: embeddings by model and text, so a text seen before (on another branch) is
  never embedded again (the row of each in the model's vector file, `nxm.store.matrix`);
- ``extracted``: each memory's entity-graph extraction, by its fingerprint;
- each record's ``facts`` (what `nxs prime` reads of it) and, in ``meta``, the prime index's
  kept candidates (`nxm.kept`) under the docs' version, a counter every docs row written or
  removed moves (triggers), so nothing kept outlives a change the sync saw.

Rows are replaced only if they still hold what the replacing process read (`put`'s ``expect``),
so a reader that parsed a file just before a writer changed it cannot put the old record back.
On a read-only disk the cache lives in memory for the command.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from nxm.projection import line as projection_line
from nxm.record import FIELDS, body_hash, embedded_text, order_bytes
from nxm.store.matrix import Matrix, VectorRows, keep_vectors
from nxm.store.reads import Reads
from nxm.store.schema import LOG_ROWS, SCHEMA, VERSION
from nxm.store.text import LOCAL
from nxs.errors import UpstreamError

HEAD_FIELDS = len(FIELDS) - len(LOCAL) - 2  # a head: the record without body, events, LOCAL
# What `nxs prime` reads of a record (its choice of the index and the lines it prints).
FACTS = (
    "key", "introduction", "category", "scope", "status", "priority", "expires", "created",
    "updated", "feedback",
)  # fmt: skip


def text_hash(record: dict[str, Any]) -> str:
    """What a record's vector is kept under: a hash of the text that is embedded."""
    return body_hash(embedded_text(record))[:32]


class Cache(Reads, VectorRows):
    """The record cache of one workspace (thread-safe: the MCP server searches on threads)."""

    def __init__(self, path: Path | None, model: str) -> None:
        self.path = path  # None: in memory only
        self.model = model
        self._conn: sqlite3.Connection | None = None
        self._inode: tuple[int, int] | None = None
        self._lock = threading.RLock()
        self.persistent = path is not None
        self.matrix = Matrix(path.parent if path is not None else None, model)
        self.forgotten = 0  # vectors found lost from the matrix file (embedded again)

    # -- connection -------------------------------------------------------------------------

    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
            self._inode = self._identity()
        return self._conn

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path) if self.persistent and self.path else None
        except OSError:
            return None
        return (st.st_dev, st.st_ino) if st else None

    def reopen_if_replaced(self) -> None:
        """Open the file again if it was deleted or replaced since (``rm -rf .nxs/index``
        under a running server): a connection to the old file would never see other writers."""
        with self._lock:
            if self._conn is not None and self.persistent and self._identity() != self._inode:
                self._conn.close()
                self._conn = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def reset(self) -> None:
        """Drop a damaged cache file and start an empty one (the files fill it again)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self.path is not None and self.persistent:
                for suffix in ("", "-wal", "-shm"):
                    with contextlib.suppress(OSError):
                        Path(f"{self.path}{suffix}").unlink()
            with contextlib.suppress(OSError):
                self.matrix.remove()

    def _open(self) -> sqlite3.Connection:
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._connect(str(self.path))
                if self._version(conn) == VERSION:
                    return conn
                conn.close()
            except sqlite3.DatabaseError:  # damaged: it is made again from the files
                pass
            except OSError:
                self.persistent = False
            if self.persistent:
                try:
                    return self._remake()
                except (sqlite3.Error, OSError):  # a read-only or full disk: this command only
                    self.persistent = False
        conn = self._connect(":memory:")
        conn.executescript(SCHEMA)
        self.matrix = Matrix(None, self.model)
        return conn

    def _remake(self) -> sqlite3.Connection:
        """A new cache file for this version, keeping the vectors of an older one (embedding
        them again would cost minutes); everything else is read from the files again."""
        assert self.path is not None
        old = Path(f"{self.path}.old")
        for suffix in ("-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        if self.path.exists():
            os.replace(self.path, old)
        conn = self._connect(str(self.path))
        conn.executescript(SCHEMA)
        if old.exists():
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ATTACH DATABASE ? AS old", (str(old),))
                keep_vectors(conn, self.path.parent)
            with contextlib.suppress(sqlite3.Error):
                conn.execute("DETACH DATABASE old")
            old.unlink(missing_ok=True)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (VERSION,))
        return conn

    @staticmethod
    def _connect(where: str) -> sqlite3.Connection:
        conn = sqlite3.connect(where, timeout=30, isolation_level=None, check_same_thread=False)
        if where != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # derived: a lost last commit is re-read
        return conn

    @staticmethod
    def _version(conn: sqlite3.Connection) -> str | None:
        try:
            row = conn.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
        except sqlite3.OperationalError:  # no tables yet
            return None
        # (a file that is no database raises sqlite3.DatabaseError, handled by `_open`)
        return row[0] if row else None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction.

        Raises:
            UpstreamError: the disk refused it (full, read-only: code STORE_WRITE_FAILED).
        """
        with self._lock:
            conn = self.conn()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if not any(w in str(exc) for w in ("full", "readonly", "disk I/O")):
                    raise
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise UpstreamError(
                    f"the local cache cannot be written: {exc}",
                    suggestion="check free disk space and permissions of .nxs/index/",
                    code="STORE_WRITE_FAILED",
                ) from None

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self.conn().execute(sql, tuple(args)).fetchall()

    def data_version(self) -> int:
        """Changes by other connections since this one opened (SQLite's data_version)."""
        return int(self.query("PRAGMA data_version")[0][0])

    def meta(self, name: str) -> str | None:
        got = self.query("SELECT value FROM meta WHERE name = ?", (name,))
        return got[0][0] if got else None

    def set_meta(self, conn: sqlite3.Connection, name: str, value: str) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    # -- records ----------------------------------------------------------------------------

    def idents(self, keys: list[str] | None = None) -> dict[str, tuple[str, str]]:
        """The identities each row (of ``keys``, or every row) was read from, by key."""
        if keys is None:
            got = self.query("SELECT key, md, log FROM records")
        else:
            got = self.query(
                "SELECT r.key, r.md, r.log FROM json_each(?) j JOIN records r ON r.key = j.value",
                (orjson.dumps(keys).decode(),),
            )
        return {k: (md, log) for k, md, log in got}

    def md_idents(self) -> dict[str, str]:
        """The identity of the memory file each row was read from, by key."""
        with self._lock:
            return dict(self.conn().execute("SELECT key, md FROM records"))

    def racy(self) -> list[str]:
        """The keys whose files were read too soon after a change to trust their identity."""
        return [
            k
            for (k,) in self.query(
                "SELECT key FROM records WHERE substr(md, -1) = '~' OR substr(log, -1) = '~'"
            )
        ]

    def put(
        self,
        records: list[tuple[dict[str, Any] | str | None, str, str, str]],
        expect: dict[str, tuple[str, str] | None] | None = None,
    ) -> list[str]:
        """Store (record, md identity, log identity, key) rows; a record None removes the key,
        a string is the problem that keeps its files from making a record. With ``expect``,
        a row is written only if it still holds those identities (None: that it is absent).
        Every key whose record changed is marked pending for the index; returns them."""
        changed: list[str] = []
        sessions: set[str] = set()
        gone: list[tuple[str]] = []
        moved: list[tuple[str, str, str]] = []
        rows: list[dict[str, Any]] = []
        with self.transaction() as conn:
            keys = orjson.dumps([key for *_, key in records]).decode()
            olds = {
                k: rest
                for k, *rest in conn.execute(
                    "SELECT r.key, r.md, r.log, d.doc, r.problem, r.session FROM json_each(?) j "
                    "JOIN records r ON r.key = j.value LEFT JOIN docs d ON d.key = r.key",
                    (keys,),
                )
            }
            for record, md, log, key in records:
                old = olds.get(key)
                if expect is not None and (tuple(old[:2]) if old else None) != expect.get(key):
                    continue  # another process changed it since it was read
                if old is not None and old[4]:
                    sessions.add(old[4])
                if record is None:
                    gone.append((key,))
                    changed += [key] if old is not None else []
                    continue
                row = self._row(record, md, log, key)
                if old is not None and (old[2], old[3]) == (row["doc"], row["problem"]):
                    moved.append((md, log, key))
                    continue
                rows.append(row)
                sessions.update([row["session"]] if row["session"] else [])
                changed.append(key)
            for table in ("records", "docs", "extracted"):
                conn.executemany(f"DELETE FROM {table} WHERE key = ?", gone)  # noqa: S608
            conn.executemany("UPDATE records SET md = ?, log = ? WHERE key = ?", moved)
            conn.executemany(
                "INSERT OR REPLACE INTO records VALUES (:key, :md, :log, :good, :problem, "
                ":hash, :text, :session, :created, :status, :ord, :line, "
                "(SELECT COUNT(*) FROM vectors WHERE model = :model AND text = :text), :facts)",
                rows,
            )
            conn.executemany(
                "INSERT OR REPLACE INTO docs VALUES (:key, :head, :doc)",
                [r for r in rows if r["good"]],
            )
            conn.executemany(
                "DELETE FROM docs WHERE key = ?", [(r["key"],) for r in rows if not r["good"]]
            )
            if changed:
                members = conn.execute(
                    "SELECT key FROM records WHERE session IN (SELECT value FROM json_each(?))",
                    (orjson.dumps(sorted(sessions)).decode(),),
                )
                self._mark_pending(conn, [*changed, *(k for (k,) in members)])
        return changed

    def _row(self, record: Any, md: str, log: str, key: str) -> dict[str, Any]:
        row: dict[str, Any] = dict.fromkeys(
            (
                "doc",
                "head",
                "problem",
                "hash",
                "text",
                "session",
                "created",
                "status",
                "ord",
                "line",
                "facts",
            )
        )
        row.update(key=key, md=md, log=log, model=self.model, good=0)
        if isinstance(record, str):
            row["problem"] = record
            return row
        doc = {k: v for k, v in record.items() if k not in LOCAL}
        head = {k: v for k, v in doc.items() if k not in ("body", "events")}
        row.update(
            doc=orjson.dumps(doc),
            head=orjson.dumps(head),
            hash=body_hash(record["body"]),
            text=text_hash(record),
            session=record.get("session_id") or None,
            created=record.get("created"),
            status=record["status"],
            good=1,
            ord=order_bytes(record),
            line=projection_line(record),
            facts=orjson.dumps({k: head[k] for k in FACTS if k in head}),
        )
        return row

    def _mark_pending(self, conn: sqlite3.Connection, keys: list[str]) -> None:
        """Mark keys as needing their index rows written again (a memory's session context
        is in its row, so a change marks the other memories of its session too)."""
        if not keys:
            return
        got = conn.execute("SELECT value FROM meta WHERE name = 'seq'").fetchone()
        seq = int(got[0]) + 1 if got else 1
        self.set_meta(conn, "seq", str(seq))
        conn.executemany("INSERT OR REPLACE INTO pending VALUES (?, ?)", [(k, seq) for k in keys])

    def _record(self, doc: bytes, ready: int) -> dict[str, Any]:
        record = orjson.loads(doc)
        if not isinstance(record, dict) or len(record) < HEAD_FIELDS:  # not a row `_row` wrote
            self.reset()
            raise UpstreamError(
                f"the record cache {self.path} is damaged (a row lacks fields); it was removed, "
                "and the next command reads the memory files again",
                suggestion="run the command again, or `nxm reindex` (nothing is lost)",
                code="CACHE_DAMAGED",
            )
        record["processing"] = "READY" if ready else "PENDING"
        record["model"] = self.model if ready else None
        return record

    # -- what prime reads and keeps ---------------------------------------------------------

    def open_facts(self) -> tuple[str, int, list[dict[str, Any]]]:
        """The docs' version (it changes with every record written or removed), the facts log's
        last seq and the FACTS of every open record, read in one snapshot."""
        with self._lock:
            conn = self.conn()
            conn.execute("BEGIN")
            try:
                version, seq = self._versions(conn)
                got = conn.execute(
                    "SELECT facts FROM records WHERE good = 1 AND status = 'open'"
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        return version, seq, [orjson.loads(f) for (f,) in got]

    @staticmethod
    def _versions(conn: sqlite3.Connection) -> tuple[str, int]:
        got = conn.execute(
            "SELECT (SELECT value FROM meta WHERE name = 'docs'), "
            "(SELECT COALESCE(MAX(seq), 0) FROM facts_log)"
        ).fetchone()
        return str(got[0] or ""), int(got[1])

    def kept(self, name: str, most: int = 0) -> tuple[str, int, Any, list[tuple[Any, Any]] | None]:
        """The docs' version, the facts log's last seq, what was kept under ``name`` (None)
        and, when it holds a ``seq``
        of the facts log at most ``most`` behind, each record's facts then and now (None:
        absent, or not a good record) for the records changed since, in one snapshot."""
        with self._lock:
            conn = self.conn()
            conn.execute("BEGIN")
            try:
                version, seq = self._versions(conn)
                got = conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
                value = orjson.loads(got[0]) if got and got[0] else None
                since = value.get("seq") if isinstance(value, dict) else None
                changes = None
                if isinstance(since, int) and 0 <= seq - since <= min(most, LOG_ROWS):
                    rows = conn.execute(
                        "SELECT l.key, l.old, r.facts FROM facts_log l "
                        "LEFT JOIN records r ON r.key = l.key AND r.good = 1 "
                        "WHERE l.seq > ? ORDER BY l.seq",
                        (since,),
                    ).fetchall()
                    first: dict[str, tuple[Any, Any]] = {}
                    for key, old, now in rows:  # the first old of a key is the one kept
                        first.setdefault(key, (old, now))
                    changes = [
                        (orjson.loads(old) if old else None, orjson.loads(now) if now else None)
                        for old, now in first.values()
                    ]
            finally:
                conn.execute("COMMIT")
        return version, seq, value, changes

    def keep(self, name: str, value: Any, trim: int | None = None) -> None:
        """Keep a derived value under ``name`` (and forget the facts log up to ``trim``), or
        nothing if a writer holds the cache now (what is kept is only a saving: it never waits)."""
        with self._lock:
            conn = self.conn()
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                with self.transaction() as conn:
                    self.set_meta(conn, name, orjson.dumps(value).decode())
                    if trim is not None:
                        conn.execute("DELETE FROM facts_log WHERE seq <= ?", (trim,))
            except (sqlite3.OperationalError, UpstreamError):
                pass
            finally:
                conn.execute("PRAGMA busy_timeout = 30000")

    # -- the index's bookkeeping ------------------------------------------------------------

    def pending(self) -> list[tuple[str, int]]:
        return self.query("SELECT key, seq FROM pending ORDER BY key")

    def indexed(self, done: list[tuple[str, int]]) -> None:
        """The index holds these (key, seq): unmark those not changed again since."""
        with self.transaction() as conn:
            conn.executemany("DELETE FROM pending WHERE key = ? AND seq = ?", done)

    def reindex_all(self) -> None:
        """Mark every record pending (the index is gone or was made for something else)."""
        with self.transaction() as conn:
            self._mark_pending(conn, [k for (k,) in conn.execute("SELECT key FROM records")])

    # -- graph extraction -------------------------------------------------------------------

    def extractions(self) -> dict[str, dict[str, Any]]:
        return {
            k: {"fingerprint": f, **orjson.loads(d)}
            for k, f, d in self.query("SELECT key, fingerprint, data FROM extracted")
        }

    def store_extractions(self, got: dict[str, dict[str, Any]]) -> None:
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO extracted VALUES (?, ?, ?)",
                [
                    (
                        k,
                        e["fingerprint"],
                        orjson.dumps({x: y for x, y in e.items() if x != "fingerprint"}),
                    )
                    for k, e in got.items()
                ],
            )
