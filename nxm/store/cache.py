"""The record cache: every memory file parsed once, in SQLite, outside the repository.

`list`, `show` and `prime` read ``records.db`` (`nxm.store.local`; stdlib sqlite3, no lancedb).
Each row keeps the identities of the two files it was read from (`nxm.store.files.ident`);
every command compares them with the files first (`Store.sync`) and reads again what changed,
so it is never believed over the files, and deleting it loses nothing.

Rows are replaced only if they still hold what the replacing process read (`put`'s ``expect``),
so a reader that parsed a file just before a writer changed it cannot put the old record back.
A cache the disk refuses lives in memory for the command.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from nxm import coverage
from nxm.projection import line as projection_line
from nxm.record import FIELDS, body_hash, order_bytes
from nxm.store.text import LOCAL
from nxm.store.vectors import Vectors, text_hash
from nxs.errors import UpstreamError

VERSION = "13"  # of the schema and of what a row holds: another version is made again
HEAD_FIELDS = len(FIELDS) - len(LOCAL) - 2  # a head: the record without body, events, LOCAL
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS records(
    key TEXT PRIMARY KEY,
    md TEXT NOT NULL, log TEXT NOT NULL,  -- the identities of the two files read
    good INTEGER NOT NULL,                -- 1: the files make a record (in docs)
    problem TEXT,                         -- else: why they do not
    hash TEXT, text TEXT, ready INTEGER NOT NULL DEFAULT 0, session TEXT, created TEXT,
    status TEXT, scope TEXT, category TEXT, ord BLOB, line TEXT,
    worth REAL, written TEXT, expires TEXT  -- what the prime index is chosen by
) WITHOUT ROWID;
-- the record without body and events (head), first: a read of it skips the whole one (doc);
-- apart from `records`, so that a scan of every record's columns reads no text
CREATE TABLE IF NOT EXISTS docs(key TEXT PRIMARY KEY, head BLOB NOT NULL, doc BLOB NOT NULL)
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_hash ON records(hash);
CREATE INDEX IF NOT EXISTS records_text ON records(text);
CREATE INDEX IF NOT EXISTS records_session ON records(session) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_order ON records(ord) WHERE good = 1;
CREATE INDEX IF NOT EXISTS records_status ON records(status, ord) WHERE good = 1;
CREATE INDEX IF NOT EXISTS records_lines ON records(ord, line) WHERE line IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_problems ON records(key) WHERE problem IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_open ON records(status, scope, category, expires) WHERE good = 1;
CREATE INDEX IF NOT EXISTS records_recent ON records(category, worth, written)
    WHERE good = 1 AND status = 'open' AND scope = 'project';  -- prime's candidates
CREATE TABLE IF NOT EXISTS pending(key TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS extracted(key TEXT PRIMARY KEY, fingerprint TEXT, data BLOB)
    WITHOUT ROWID;
"""


def moment(text: Any) -> str | None:
    """A timestamp in one comparable form (UTC, ISO-8601), or None when it does not read."""
    from nxs.render import parse_timestamp

    try:
        return parse_timestamp(text).isoformat()
    except (ValueError, TypeError, AttributeError, OverflowError):
        return None


class Cache:
    """The record cache of one workspace (thread-safe: the MCP server searches on threads)."""

    def __init__(self, path: Path | None, model: str, vectors: Vectors) -> None:
        self.path = path  # None: in memory only
        self.model = model
        self.embeddings = vectors
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self.persistent = path is not None

    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def reset(self) -> None:
        """Drop a damaged cache file and start an empty one (the files fill it again)."""
        with self._lock:
            self.close()
            if self.path is not None and self.persistent:
                for suffix in ("", "-wal", "-shm"):
                    with contextlib.suppress(OSError):
                        Path(f"{self.path}{suffix}").unlink()

    def in_memory(self) -> None:
        """Keep the records in memory for this process (the disk refused the cache file)."""
        with self._lock:
            self.close()
            self.persistent = False

    def _open(self) -> sqlite3.Connection:
        if self.persistent and self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._connect(str(self.path))
                version = self._version(conn)
                if version is None:  # new, maybe being made by another process: made in place
                    conn.executescript(SCHEMA)  # (removing it would pull it from under that one)
                    conn.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (VERSION,))
                    version = self._version(conn)
                if version == VERSION:
                    return conn
                conn.close()
                self.reset()  # another version: made again from the files
                return self._connect(str(self.path), fresh=True)
            except sqlite3.DatabaseError:  # damaged: made again from the files
                self.reset()
                with contextlib.suppress(sqlite3.Error, OSError):
                    return self._connect(str(self.path), fresh=True)
            except OSError:
                pass
            self.persistent = False  # a read-only or full disk: this command only
        return self._connect(":memory:", fresh=True)

    @staticmethod
    def _connect(where: str, fresh: bool = False) -> sqlite3.Connection:
        """A connection to the cache at ``where``; ``fresh``: its tables made, of this version."""
        conn = sqlite3.connect(where, timeout=30, isolation_level=None, check_same_thread=False)
        if where != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # derived: a lost last commit is re-read
        if fresh:
            conn.executescript(SCHEMA)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (VERSION,))
        return conn

    @staticmethod
    def _version(conn: sqlite3.Connection) -> str | None:
        try:
            row = conn.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
        except sqlite3.OperationalError:  # no tables yet
            return None
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
                    suggestion=f"check free disk space and permissions of {self.path}",
                    code="STORE_WRITE_FAILED",
                ) from None

    def query(self, sql: str, args: Iterable[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            bound = args if isinstance(args, dict) else tuple(args)
            return self.conn().execute(sql, bound).fetchall()

    def meta(self, name: str) -> str | None:
        got = self.query("SELECT value FROM meta WHERE name = ?", (name,))
        return got[0][0] if got else None

    def set_meta(self, conn: sqlite3.Connection, name: str, value: str) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    def idents(self, racy: bool = False) -> dict[str, tuple[str, str]]:
        """The identities each row was read from, by key (``racy``: those too recent to trust)."""
        where = " WHERE substr(md, -1) = '~' OR substr(log, -1) = '~'" if racy else ""
        return {
            k: (md, log) for k, md, log in self.query("SELECT key, md, log FROM records" + where)
        }

    def md_idents(self) -> dict[str, str]:
        """The identity of the memory file each row was read from, by key."""
        return dict(self.query("SELECT key, md FROM records"))

    def put(
        self,
        records: list[tuple[dict[str, Any] | str | None, str, str, str]],
        expect: dict[str, tuple[str, str] | None] | None = None,
    ) -> list[str]:
        """Store (record, md identity, log identity, key) rows (a record None removes the key, a
        string is why its files make none), only where they still hold the ``expect``ed
        identities; returns the keys whose record changed (now pending for the index)."""
        changed: list[str] = []
        sessions: set[str] = set()
        gone: list[tuple[str]] = []
        moved: list[tuple[str, str, str]] = []
        rows: list[dict[str, Any]] = []
        made = [self._row(r, md, log, key) for r, md, log, key in records if r is not None]
        ready = self.embeddings.get({r["text"] for r in made if r["text"]})
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
            new = iter(made)
            for record, md, log, key in records:
                old = olds.get(key)
                if expect is not None and (tuple(old[:2]) if old else None) != expect.get(key):
                    if record is not None:
                        next(new)
                    continue  # another process changed it since it was read
                if old is not None and old[4]:
                    sessions.add(old[4])
                if record is None:
                    gone.append((key,))
                    changed += [key] if old is not None else []
                    continue
                row = next(new)
                row["ready"] = int(row["text"] in ready)
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
                ":hash, :text, :ready, :session, :created, :status, :scope, :category, :ord, "
                ":line, :worth, :written, :expires)",
                rows,
            )
            conn.executemany(
                "INSERT OR REPLACE INTO docs VALUES (:key, :head, :doc)",
                [r for r in rows if r["good"]],
            )
            conn.executemany(
                "DELETE FROM docs WHERE key = ?", [(r["key"],) for r in rows if not r["good"]]
            )
            if changed:  # a session's context is in its memories' rows: they go again too
                members = conn.execute(
                    "SELECT key FROM records WHERE session IN (SELECT value FROM json_each(?))",
                    (orjson.dumps(sorted(sessions)).decode(),),
                )
                self._mark_pending(conn, [*changed, *(k for (k,) in members)])
        return changed

    def _row(self, record: Any, md: str, log: str, key: str) -> dict[str, Any]:
        names = ("head", "doc", "hash", "text", "session", "created", "status", "scope",
                 "category", "ord", "line", "worth", "written", "expires")  # fmt: skip
        row: dict[str, Any] = dict.fromkeys(names)
        row.update(key=key, md=md, log=log, problem=None, ready=0, good=0)
        if isinstance(record, str):
            row["problem"] = record
            return row
        doc = {k: v for k, v in record.items() if k not in LOCAL}
        head = {k: v for k, v in doc.items() if k not in ("body", "events")}
        row.update(
            good=1,
            head=orjson.dumps(head),
            doc=orjson.dumps(doc),
            hash=body_hash(record["body"]),
            text=text_hash(record),
            session=record.get("session_id") or None,
            created=record.get("created"),
            status=record["status"],
            scope=record["scope"],
            category=record["category"],
            ord=order_bytes(record),
            line=projection_line(record),
            worth=coverage.worth(record, None),  # priority × feedback: what the SQL groups by
            # undated: as if written at the end of time (recency 1, as `coverage.worth` has it)
            written=moment(record.get("updated") or record.get("created")) or "9999",
            expires=moment(record["expires"]) if record.get("expires") else None,
        )
        return row

    def _mark_pending(self, conn: sqlite3.Connection, keys: list[str]) -> None:
        """Mark keys as needing their index rows written again."""
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

    def get(self, key: str) -> dict[str, Any] | None:
        got = self.query(
            "SELECT d.doc, r.ready FROM docs d JOIN records r ON r.key = d.key WHERE d.key = ?",
            (key,),
        )
        return self._record(*got[0]) if got else None

    def many(self, keys: Iterable[str], column: str = "doc") -> dict[str, dict[str, Any]]:
        """The records of ``keys`` that exist, in one query (``head``: without body and events)."""
        assert column in ("doc", "head")
        got = self.query(
            f"SELECT d.key, d.{column}, r.ready FROM json_each(?) j "
            "JOIN docs d ON d.key = j.value JOIN records r ON r.key = j.value",
            (orjson.dumps(list(keys)).decode(),),
        )
        return {k: self._record(doc, ready) for k, doc, ready in got}

    def keys(self, prefix: str | None = None) -> list[str]:
        """Every record's key, or those starting with ``prefix`` (read from the key index)."""
        if prefix is None:
            return [k for (k,) in self.query("SELECT key FROM records WHERE good = 1")]
        got = self.query(
            "SELECT key FROM records WHERE key >= ? AND key < ? AND good = 1",
            (prefix, prefix + "\U0010ffff"),
        )
        return [k for (k,) in got if k.startswith(prefix)]

    def heads(self, ordered: bool = False) -> Iterator[dict[str, Any]]:
        """Every record without body and events, in reading order when ``ordered``."""
        sql = "SELECT d.head, r.ready FROM records r JOIN docs d ON d.key = r.key WHERE r.good = 1"
        for head, ready in self.query(sql + (" ORDER BY r.ord" if ordered else "")):
            yield self._record(head, ready)

    def page(self, status: str, start: int, size: int) -> tuple[list[dict[str, Any]], int]:
        """One page of a status's record heads in reading order, and how many there are."""
        where = "good = 1" + ("" if status == "all" else " AND status = ?")
        args: tuple[Any, ...] = () if status == "all" else (status,)
        total = self.query(f"SELECT COUNT(*) FROM records WHERE {where}", args)[0][0]
        # the page's keys from the order index alone, then their heads
        got = self.query(
            f"SELECT d.head, p.ready FROM (SELECT key, ord, ready FROM records WHERE {where} "
            "ORDER BY ord LIMIT ? OFFSET ?) p JOIN docs d ON d.key = p.key ORDER BY p.ord",
            (*args, size, start),
        )
        return [self._record(head, ready) for head, ready in got], int(total)

    def problems(self) -> list[tuple[str, str]]:
        return self.query("SELECT key, problem FROM records WHERE problem IS NOT NULL ORDER BY key")

    def problem(self, key: str) -> str | None:
        got = self.query("SELECT problem FROM records WHERE key = ?", (key,))
        return got[0][0] if got else None

    def with_hash(self, digest: str) -> list[str]:
        return [k for (k,) in self.query("SELECT key FROM records WHERE hash = ?", (digest,))]

    def in_sessions(self, sessions: set[str]) -> list[dict[str, Any]]:
        got = self.query(
            "SELECT d.doc, r.ready FROM records r JOIN docs d ON d.key = r.key WHERE r.session IN "
            "(SELECT value FROM json_each(?))",
            (orjson.dumps(sorted(sessions)).decode(),),
        )
        return [self._record(doc, ready) for doc, ready in got]

    def sessions(self) -> list[tuple[str, str, str]]:
        """(key, session, created) of every record in a session."""
        return self.query(
            "SELECT key, session, created FROM records WHERE session IS NOT NULL AND good = 1"
        )

    def lines(self, limit: int) -> tuple[list[str], int, int]:
        """NEXUS_MEMORY.md's first ``limit`` lines, how many there are, and how many are closed."""
        got = "SELECT line FROM records WHERE line IS NOT NULL ORDER BY ord LIMIT ?"
        lines = [ln for (ln,) in self.query(got, (limit,))]
        shown = self.query("SELECT COUNT(*) FROM records WHERE line IS NOT NULL")[0][0]
        closed = "SELECT COUNT(*) FROM records WHERE status = 'closed' AND good = 1"
        return lines, int(shown), int(self.query(closed)[0][0])

    def count(self) -> int:
        return int(self.query("SELECT COUNT(*) FROM records WHERE good = 1")[0][0])

    def categories(self) -> dict[str, int]:
        """Every category readable records hold, with how many hold it."""
        sql = "SELECT category, COUNT(*) FROM records WHERE good = 1 GROUP BY category"
        return {c: n for c, n in self.query(sql) if c is not None}

    def open_counts(self, now: datetime) -> list[tuple[str, Any, int]]:
        """(scope, category, count) of the open, unexpired records at ``now``."""
        return self.query(
            "SELECT scope, category, COUNT(*) FROM records WHERE good = 1 AND "
            "status = 'open' AND (expires IS NULL OR expires > ?) GROUP BY scope, category",
            (now.isoformat(),),
        )

    def best_open(
        self, now: datetime, each: int
    ) -> tuple[list[dict[str, Any]], set[tuple[Any, float]]]:
        """The heads of the best open, unexpired, project memories of every category and worth
        class (`coverage.worth` at recency 1), and the classes that may hold more: all written
        now or later (or undated), then the ``each`` most recent (``records_recent``)."""
        at = now.isoformat()
        live = (
            "good = 1 AND status = 'open' AND scope = 'project' AND category IS ? AND worth = ? "
            "AND (expires IS NULL OR expires > ?)"
        )
        keys: list[str] = []
        full = set()
        groups = "SELECT DISTINCT category, worth FROM records WHERE good = 1 AND status = 'open' "
        for category, worth in self.query(groups + "AND scope = 'project'"):
            args = (category, worth, at, at)
            now_ = f"SELECT key FROM records WHERE {live} AND written > ?"
            keys += [k for (k,) in self.query(now_, args)]
            older = f"SELECT key FROM records WHERE {live} AND written <= ? "
            got = self.query(older + "ORDER BY written DESC, ord LIMIT ?", (*args, each))
            keys += [k for (k,) in got]
            if len(got) == each:
                full.add((category, worth))
        return list(self.many(keys, "head").values()), full

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

    def unready(self) -> list[str]:
        """Keys of the records without a vector for this model, in reading order."""
        got = "SELECT key FROM records WHERE ready = 0 AND good = 1 ORDER BY ord"
        return [k for (k,) in self.query(got)]

    def texts(self, keys: Iterable[str]) -> dict[str, str]:
        """The text hash of each of ``keys`` (what its vector is kept under)."""
        got = self.query(
            "SELECT r.key, r.text FROM json_each(?) j JOIN records r ON r.key = j.value "
            "WHERE r.good = 1",
            (orjson.dumps(list(keys)).decode(),),
        )
        return dict(got)

    def open_texts(self) -> dict[str, str]:
        """The text hash of every open record, by key (what a write compares a new one with)."""
        got = "SELECT key, text FROM records WHERE good = 1 AND status = 'open'"
        return dict(self.query(got))

    def now_ready(self, texts: Iterable[str]) -> None:
        """Records with these texts have a vector now: READY, and pending for the index."""
        args = (orjson.dumps(list(texts)).decode(),)
        with self.transaction() as conn:
            inside = "text IN (SELECT value FROM json_each(?))"
            keys = [k for (k,) in conn.execute(f"SELECT key FROM records WHERE {inside}", args)]
            conn.execute(f"UPDATE records SET ready = 1 WHERE {inside}", args)
            self._mark_pending(conn, keys)

    def check_model(self) -> None:
        """After a model change, READY is what this model has vectors for; every row is pending."""
        if self.meta("model") == self.model:
            return
        texts = self.query("SELECT DISTINCT text FROM records WHERE text IS NOT NULL")
        have = list(self.embeddings.get(t for (t,) in texts))
        with self.transaction() as conn:
            conn.execute("UPDATE records SET ready = 0")
            conn.execute(
                "UPDATE records SET ready = 1 WHERE text IN (SELECT value FROM json_each(?))",
                (orjson.dumps(have).decode(),),
            )
            self.set_meta(conn, "model", self.model)
            self._mark_pending(conn, [k for (k,) in conn.execute("SELECT key FROM records")])

    def extractions(self) -> dict[str, dict[str, Any]]:
        return {
            k: {"fingerprint": f, **orjson.loads(d)}
            for k, f, d in self.query("SELECT key, fingerprint, data FROM extracted")
        }

    def store_extractions(self, got: dict[str, dict[str, Any]]) -> None:
        rows = [
            (k, e["fingerprint"], orjson.dumps({x: y for x, y in e.items() if x != "fingerprint"}))
            for k, e in got.items()
        ]
        with self.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO extracted VALUES (?, ?, ?)", rows)
