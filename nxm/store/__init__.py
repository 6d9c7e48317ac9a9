"""The memory store: Markdown files git merges, and a local index that follows them.

What a workspace commits (`nxm.store.text`)::

    .nxs/memories/<key>.md       one memory: front matter and body
    .nxs/history/<key>.jsonl     its events, one a line (merged by git's union driver)

and what each machine derives from them, ignored by git (``.nxs/index/``): the record cache
(`nxm.store.cache`, SQLite: what ``list``, ``show`` and ``prime`` read without lancedb) and the
search index (`nxm.store.index`, LanceDB: what every search reads).

Every command first brings the cache up to date with the files (`Store.sync`): it compares
each memory file's identity with the one its row was read from, so a checkout, a pull, a merge,
a rebase or a hand edit is seen by the next command of every seam, and no verb answers from, or
writes back, another branch's state (an add, which only makes files, looks at every file only
when a folder's mark says one was made, removed or replaced since). Memories the cache marks
changed are written into the index before the next search (`Store.refresh`), from vectors kept
by their text, so switching branches back and forth embeds nothing again.

A write (`Store.writing`, `Store.commit`) holds the write lock, brings the cache up to date,
and writes only the files of the memories it changes, through a journal (`nxm.store.files`).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from nxm.record import contexts
from nxm.store import lock
from nxm.store.cache import Cache, text_hash
from nxm.store.files import Change, Files
from nxm.store.index import Index, where
from nxm.store.records import Records
from nxm.store.runtime import background, import_lancedb
from nxm.store.text import KEY, FileProblem, event_line, record_of, render
from nxs import progress
from nxs.errors import ConflictError, UpstreamError
from nxs.workspace import Workspace

__all__ = ["Records", "Store", "background", "import_lancedb", "where"]

REFRESH_BATCH = 512  # memories embedded and indexed per step of a large refresh
READ_WAIT_S = 2.0  # how long a search waits for a writer before it answers from memory
MARKS = ("memories_mark", "history_mark")  # the cache's meta names of the folders' marks


class Store:
    """The memory store of one workspace."""

    def __init__(self, ws: Workspace, dim: int = 384) -> None:
        self.ws = ws
        from nxs import trust

        config = ws.section("memory")
        trust.check_paths(ws.root)  # before anything is written (a committed symlink)
        configured, options = trust.store_settings(ws.root, config)  # before anything is sent
        self.remote = configured is not None
        index_uri = configured if configured else str(ws.dir / "index" / "lance")
        self.index = Index(index_uri, options or None, dim)
        self.index.root = ws.root
        self.files = Files(ws.dir)
        self.cache = Cache(ws.dir / "index" / "cache.db", config["model"])
        self.lock_path = ws.dir / "index" / "lock"
        self._lock = threading.RLock()
        self._held = 0
        self._synced: tuple[int, int] | None = None  # (cache data_version, own commits) seen
        self.commits = 0
        self.problems: list[tuple[str, str]] = []
        self._syncs = 0
        self._watch: Any = None  # a `nxm.store.watch.Watch` once the store lives long
        self._on_disk: Index | None = None  # the disk index while a busy lock keeps it behind

    @property
    def dim(self) -> int:
        return self.index.dim

    @dim.setter
    def dim(self, value: int) -> None:
        self.index.dim = value

    def close(self) -> None:
        """Close the record cache, the index and the watch (a later call opens them again)."""
        self.cache.close()
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self.index = Index(self.index.uri, self.index._storage_options, self.index.dim)
        self.index.root = self.ws.root

    # -- the lock ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, wait: float | None = None) -> Iterator[None]:
        """Hold the write lock (re-entrant within this process; none for an index in memory),
        waiting at most ``wait`` seconds (default `lock.WAIT_S`)."""
        with self._lock:
            if self._held or self.index.uri.startswith("memory://"):
                self._held += 1
                try:
                    yield
                finally:
                    self._held -= 1
                return
            with lock.locked(self.lock_path, wait):
                self._held = 1
                try:
                    yield
                finally:
                    self._held = 0

    # -- following the files ----------------------------------------------------------------

    def sync(self, folders: bool = False, keys: list[str] | None = None) -> list[str]:
        """Bring the record cache up to date with the files (or a team store's table); returns
        the keys whose record changed. Cheap when nothing did: one identity per memory file.

        ``folders`` (a write of one memory): when neither folder's mark moved since the cache
        last looked (no file was made, removed or renamed over, as git's checkout, merge and
        pull do and most editors' saves), only the files read too soon after a change are
        looked at again, not every file (the next read looks at all: an editor that saves in
        place is seen there). ``keys``: look at those memories' files alone (what such a
        write is about to change)."""
        import sqlite3

        self.cache.reopen_if_replaced()
        try:
            return self._sync(folders, keys)
        except sqlite3.OperationalError as exc:
            if not self._in_memory(exc):
                raise
            return self._sync(folders, keys)
        except sqlite3.DatabaseError:
            self.cache.reset()  # damaged: made again from the files
            return self._sync(folders, keys)

    def _in_memory(self, exc: Exception) -> bool:
        """After the cache file refused a write (a full or read-only disk): keep the records
        in memory for this process instead; False for any other error."""
        if (
            not any(w in str(exc) for w in ("full", "readonly", "disk I/O"))
            or not self.cache.persistent
        ):
            return False
        print(
            f"nxs: the local cache cannot be written ({exc}); working from the files",
            file=sys.stderr,
        )
        self.cache.close()
        self.cache = Cache(None, self.cache.model)
        return True

    def _sync(self, folders: bool = False, keys: list[str] | None = None) -> list[str]:
        from nxm.store import migrate

        with self._lock:
            if self.remote:
                return self._sync_remote()
            migrate.if_needed(self)
            if self.files.journal.exists() and lock.free(self.lock_path):
                with contextlib.suppress(Exception), self.locked():  # a killed writer's
                    self.files.replay()
            cache, files = self.cache, self.files
            cache.check_model()
            told = set(keys) if keys is not None else self._told()
            if told is None and folders and self._marks() == self._marks_seen():
                told = set(cache.racy())
            if told is not None:  # the kernel (or the folders) say which files changed
                todo = sorted(told)
                stored = cache.idents(todo)
                rows = [self._read(k) for k in todo]
            else:
                marks = self._marks()
                mds = files.scan(files.memories, ".md")
                logs = None  # the logs' identities: those stored while no log was made or renamed
                if marks[1] != cache.meta(MARKS[1]) or not cache.persistent:
                    logs = files.scan(files.history, ".jsonl")
                if logs is None and mds == cache.md_idents():  # the usual case: one comparison
                    todo = sorted(cache.racy())
                    stored = cache.idents(todo)
                else:
                    stored = cache.idents()
                    todo = sorted(_changed(stored, mds, logs))
                rows = []
                for n, k in enumerate(todo, 1):
                    rows.append(self._read(k) if k in mds else (None, "", "", k))
                    if n % 200 == 0 or n == len(todo):
                        progress.report("reading memory files", n, len(todo))
                if marks != self._marks_seen():
                    with cache.transaction() as conn:
                        for name, value in zip(MARKS, marks, strict=True):
                            cache.set_meta(conn, name, value)
            changed = cache.put(rows, expect={k: stored.get(k) for k in todo}) if todo else []
            if todo or told is None:
                self.problems = cache.problems()
            if changed or not self._projection_current():
                self.project()
            return changed

    def _marks(self) -> tuple[str, str]:
        return self.files.mark(self.files.memories), self.files.mark(self.files.history)

    def _marks_seen(self) -> tuple[str | None, str | None]:
        """The folders' marks when the cache last looked at every file in them."""
        return self.cache.meta(MARKS[0]), self.cache.meta(MARKS[1])

    def _told(self) -> set[str] | None:
        """The keys whose files changed since the last sync, as inotify tells them; None when
        that is not known (then every file is looked at). A store synced more than once (a
        long-lived process) starts watching, before the full look that follows."""
        self._syncs += 1
        if self._watch is not None:
            got = self._watch.changed()
            if got is not None:
                names = got[self.files.memories] | got[self.files.history]
                return {n.split(".", 1)[0] for n in names if KEY.match(n.split(".", 1)[0])}
            self._watch.close()
            self._watch = None
        if self._syncs >= 2:
            from nxm.store.watch import Watch  # ctypes: only a long-lived process pays for it

            watch = Watch([self.files.memories, self.files.history])
            self._watch = watch if watch.fd is not None else None
        return None

    def _read(self, key: str) -> tuple[Any, str, str, str]:
        md, md_ident, log, log_ident = self.files.read(key)
        if md is None:
            return None, "", "", key
        try:
            return record_of(key, md, log, ".nxs"), md_ident, log_ident, key
        except FileProblem as exc:
            return str(exc), md_ident, log_ident, key

    def _sync_remote(self) -> list[str]:
        try:
            return self._read_remote()
        except (OSError, RuntimeError, ValueError) as exc:  # the bucket's listing failed
            line = (str(exc).strip().splitlines() or ["?"])[0][:300]
            raise UpstreamError(
                f"cannot read the memory store at {self.index.uri}: {line}",
                suggestion="check the store's URI, endpoint and credentials",
                code="STORE_UNAVAILABLE",
            ) from None

    def _read_remote(self) -> list[str]:
        version = self.index.version()
        if version is not None and str(version) == self.cache.meta("remote_version"):
            return []
        docs = self.index.docs()
        stale = [(None, "", "", k) for k in self.cache.keys() if k not in docs]
        rows = [(r, "remote", "ready" if ready else "", k) for k, (r, ready) in docs.items()]
        changed = self.cache.put(stale + rows)
        with self.cache.transaction() as conn:
            conn.execute("DELETE FROM pending")  # the table is the index
            conn.execute("UPDATE records SET ready = (log = 'ready')")
            self.cache.set_meta(conn, "remote_version", str(version))
        self.project()
        return changed

    def records(self) -> Records:
        """Every record, after `sync`."""
        self.sync()
        return Records(self.cache)

    def generation(self) -> tuple[int, int]:
        """Changes whenever any process changed the cache (for what a process keeps)."""
        return self.cache.data_version(), self.commits

    def report_problems(self) -> None:
        """Say on stderr which memory files could not be read (they are left out)."""
        for key, problem in self.problems:
            print(f"nxs: memory {key} is left out: {problem}", file=sys.stderr)

    # -- writes -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, folders: bool = False) -> Iterator[Records]:
        """Hold the write lock and yield every record, brought up to date inside it. With
        ``folders`` (a write of new memories or of the ones it reads), by the folders' marks
        alone (see `sync`), and each record the write reads is read from its files first."""
        index = self.index
        if index.behind and index.maintainer is not None:  # let it have the lock (index._maintain)
            with contextlib.suppress(Exception):
                index.maintainer.wait(timeout=120)
        index.behind = False
        with self.locked():
            if not self.remote and self.files.replay():
                self.files.sweep()  # what the killed writer left half-made
            self.sync(folders)
            yield Records(self.cache, (lambda keys: self.sync(keys=keys)) if folders else None)

    def commit(
        self,
        current: Records,
        upserts: list[dict[str, Any]],
        vectors: dict[str, Any] | None = None,
        deletes: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        """Write changed records and deletions (call inside `writing`); ``vectors`` are new
        embeddings by key. ``current`` sees the changes afterwards."""
        import numpy as np

        if not upserts and not deletes:
            return
        by_text = {
            text_hash(r): np.asarray(vectors[r["key"]], dtype=np.float32).tobytes()
            for r in upserts if vectors and vectors.get(r["key"]) is not None
        }  # fmt: skip
        if self.remote:
            self._commit_remote(current, upserts, vectors or {}, list(deletes))
        else:
            changes = [self._change(current, r) for r in upserts]
            changes += [Change(k, None) for k in deletes]
            before = self._marks()
            self.files.write(changes)  # the write is saved: what follows is derived
            seen, after = self._marks_seen(), self._marks()
            known = [
                (n, a) for n, b, s, a in zip(MARKS, before, seen, after, strict=True) if b == s
            ]
            if known:  # no one else changed the folder since it was looked at: its own files
                with self.cache.transaction() as conn:
                    for name, mark in known:
                        self.cache.set_meta(conn, name, mark)
            self._cached(by_text, [r["key"] for r in upserts], list(deletes))
        for r in upserts:
            current.changes[r["key"]] = r
            if r["key"] in by_text or r["processing"] != "READY":
                r["processing"] = "READY" if r["key"] in by_text else "PENDING"
        for k in deletes:
            current.changes[k] = None
        self.commits += 1
        self.project()
        if self.index._table is not None:  # this process searches: keep the index current
            self.refresh()

    def _cached(self, vectors: dict[str, bytes], keys: list[str], deletes: list[str]) -> None:
        """Bring the cache up to date with a write's files (or, on a full disk, work from an
        in-memory cache read from the files)."""
        rows = [self._read(k) for k in keys] + [(None, "", "", k) for k in deletes]
        try:
            self.cache.store_vectors(vectors)
            self.cache.put(rows)
        except UpstreamError as exc:
            if not self._in_memory(exc):
                raise
            self.cache.store_vectors(vectors)
            self._sync()

    def _change(self, current: Records, record: dict[str, Any]) -> Change:
        key = record["key"]
        before = current.get(key) if key not in current.changes else current.changes[key]
        old = (before or {}).get("events") or []
        new = record["events"]
        md = render(record)
        if old == new[: len(old)]:
            return Change(key, md, append=b"".join(event_line(e) for e in new[len(old) :]))
        return Change(key, md, rewrite=b"".join(event_line(e) for e in new))

    def _commit_remote(
        self, current: Records, upserts: list[dict[str, Any]], vectors: dict[str, Any],
        deletes: list[str],
    ) -> None:  # fmt: skip
        keep = [r["key"] for r in upserts if r["key"] not in vectors and r["processing"] == "READY"]
        vectors = {**vectors, **self.index.vectors(keep)}
        after = dict(current)
        after.update({r["key"]: r for r in upserts})
        for k in deletes:
            after.pop(k, None)
        for r in upserts:
            r["processing"] = "READY" if vectors.get(r["key"]) is not None else "PENDING"
            r["model"] = self.cache.model if r["processing"] == "READY" else None
        self.index.write(upserts, vectors, contexts(after, [r["key"] for r in upserts]), deletes)
        self.cache.put(
            [
                (r, "remote", "ready" if r["processing"] == "READY" else "", r["key"])
                for r in upserts
            ]
            + [(None, "", "", k) for k in deletes]
        )
        with self.cache.transaction() as conn:
            conn.execute("DELETE FROM pending")
            conn.execute("UPDATE records SET ready = (log = 'ready')")
            self.cache.set_meta(conn, "remote_version", str(self.index.version()))

    # -- the index --------------------------------------------------------------------------

    def embed(
        self,
        embed: Callable[[list[dict[str, Any]]], dict[str, Any]],
        everything: bool = False,
    ) -> int:
        """Embed the records without a vector (every record with ``everything``) in batches,
        keeping the vectors by text; returns how many were embedded."""
        import numpy as np

        cache = self.cache
        todo = cache.keys() if everything else cache.unready()
        with progress.items("embedding memories", len(todo)) as advance:
            for start in range(0, len(todo), REFRESH_BATCH):
                batch = list(cache.many(todo[start : start + REFRESH_BATCH]).values())
                got = embed(batch)
                cache.store_vectors({
                    text_hash(r): np.asarray(got[r["key"]], dtype=np.float32).tobytes()
                    for r in batch if got.get(r["key"]) is not None
                })  # fmt: skip
                advance(len(batch))
        return len(todo)

    def refresh(
        self, embed: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None
    ) -> None:
        """Write the pending memories into the search index (embedding, with ``embed``, those
        without a vector first); the index is made again from the cache when it is missing."""
        if self.remote:
            return
        cache = self.cache
        if self._on_disk is not None and lock.free(self.lock_path):
            self.index, self._on_disk = self._on_disk, None  # the holder is gone: back to disk
        if embed is not None and cache.unready():
            self.embed(embed)
        if not self.index.exists() and cache.count():
            cache.reindex_all()
        if not cache.pending() or self.index.uri.startswith("memory://"):
            return
        reader = not self._held  # a search: it must not wait long for a writer (issue 24)
        lost = cache.forgotten
        try:
            self._write_pending(min(READ_WAIT_S, lock.WAIT_S) if reader else None)
        except (UpstreamError, ConflictError) as exc:
            if exc.code not in ("STORE_READONLY", "STORE_BUSY") or not reader:
                raise
            # a read-only workspace (a clone on a read-only disk), or a writer that holds the
            # lock (a stopped `nxm import`): an index in memory, made from the record cache,
            # answers this process's searches until the disk index can be written again
            if exc.code == "STORE_BUSY":
                self._on_disk = self.index
            self.index = Index("memory://nxs", None, self.index.dim)
            self._write_pending()
        if embed is not None and cache.forgotten != lost:  # vectors lost from the file
            self.refresh(embed)

    def _write_pending(self, wait: float | None = None) -> None:
        import numpy as np

        cache = self.cache
        in_memory = self.index.uri.startswith("memory://")  # all of it, once per process
        with self.locked(wait):
            pending = [(k, 0) for k in cache.keys()] if in_memory else cache.pending()
            records = Records(cache)
            for start in range(0, len(pending), REFRESH_BATCH):
                batch = pending[start : start + REFRESH_BATCH]
                got = cache.many([k for k, _ in batch])
                upserts = list(got.values())
                deletes = [k for k, _ in batch if k not in got]
                stored = cache.vectors(text_hash(r) for r in upserts)
                vectors = {
                    r["key"]: np.frombuffer(stored[text_hash(r)], dtype=np.float32)
                    for r in upserts if text_hash(r) in stored
                }  # fmt: skip
                self.index.write(upserts, vectors, contexts(records, list(got)), deletes)
                if not in_memory:
                    cache.indexed(batch)
                progress.report("indexing memories", start + len(batch), len(pending))

    def vectors(self, keys: list[str]) -> dict[str, list[float]]:
        """The vectors of the READY records among ``keys``."""
        import numpy as np

        if self.remote:
            return self.index.vectors(keys)
        got = self.cache.many(keys)
        stored = self.cache.vectors(text_hash(r) for r in got.values())
        return {
            k: np.frombuffer(stored[text_hash(r)], dtype=np.float32).tolist()
            for k, r in got.items() if text_hash(r) in stored
        }  # fmt: skip

    def reindex(self) -> dict[str, Any]:
        """Read every memory file again and make the search index anew (vectors are kept)."""
        import shutil

        with self.locked():
            self.close()  # the index, the cache's connection and the watch: all made anew
            if not self.remote:
                shutil.rmtree(self.index.uri, ignore_errors=True)
            with self.cache.transaction() as conn:
                for table in ("records", "docs", "pending", "extracted"):
                    conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
                for name in (*MARKS, "remote_version"):
                    self.cache.set_meta(conn, name, "")
            self.sync()
            return {"memories": self.cache.count(), "problems": len(self.problems)}

    def compact(self) -> dict[str, Any]:
        """Bring the index up to date with the files, then compact it now."""
        with self.locked():
            self.sync()
            self.refresh()
            return self.index.compact()

    # -- NEXUS_MEMORY.md --------------------------------------------------------------------

    def _projection_current(self) -> bool:
        from nxm.projection import identity

        return self.cache.meta("projection") == identity(self.ws.root)

    def project(self) -> None:
        """Write NEXUS_MEMORY.md again if it does not show the records (best effort: the
        records are saved, and the next command heals the projection)."""
        from nxm.projection import write

        try:
            got = write(self.ws.root, self.cache)
        except OSError as exc:
            print(f"nxs: NEXUS_MEMORY.md could not be written: {exc.strerror}", file=sys.stderr)
            return
        with contextlib.suppress(Exception), self.cache.transaction() as conn:
            self.cache.set_meta(conn, "projection", got)

    # -- search -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        try:
            context = self.index.pinned()
            context.__enter__()
        except (OSError, RuntimeError) as exc:
            raise self._damaged(exc) from None
        try:
            yield
        finally:
            context.__exit__(None, None, None)

    def keywords(self, *args: Any, **kwargs: Any) -> Any:
        return self._reading(self.index.keywords, *args, **kwargs)

    def semantic(self, *args: Any, **kwargs: Any) -> Any:
        return self._reading(self.index.semantic, *args, **kwargs)

    def passing(self, keys: set[str], filters: dict[str, Any]) -> set[str]:
        return self._reading(self.index.passing, keys, filters)

    def _reading(self, read: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return read(*args, **kwargs)
        except (OSError, RuntimeError) as exc:  # lance reports a missing or cut file so
            raise self._damaged(exc) from None

    def _damaged(self, exc: Exception) -> UpstreamError:
        """The error of a search the index could not answer. A local index is derived: it is
        removed, and the next command makes it again from the record cache (issue 24)."""
        line = (str(exc).strip().splitlines() or ["?"])[0][:300]
        if self.remote:
            return UpstreamError(
                f"cannot read the memory store at {self.index.uri}: {line}",
                suggestion="check the store's URI, endpoint and credentials",
                code="STORE_UNAVAILABLE",
            )
        with self._lock:
            dropped = self.index.drop(line)
            self.index = Index(self.index.uri, None, self.index.dim)
            self.index.root = self.ws.root
        return UpstreamError(
            f"the search index in .nxs/index/ is damaged ({line})"
            + ("; it was removed, and the next command makes it again" if dropped else ""),
            suggestion="run `nxm reindex` (it reads the memory files; nothing is lost), then "
            "search again",
            code="INDEX_DAMAGED",
        )


def _changed(
    stored: dict[str, tuple[str, str]], mds: dict[str, str], logs: dict[str, str] | None
) -> set[str]:
    """The keys whose files are gone, new or changed since the cache read them, or were read
    too soon after a change to trust their identity (set operations: every command runs this
    over every memory)."""
    out = {k for k, _ in mds.items() ^ {k: md for k, (md, _) in stored.items()}.items()}
    if logs is not None:
        was = {k: log for k, (_, log) in stored.items() if log}
        out |= {k for k, _ in logs.items() ^ was.items()} & (mds.keys() | stored.keys())
    return out | {k for k, (md, log) in stored.items() if md[-1:] == "~" or log[-1:] == "~"}
