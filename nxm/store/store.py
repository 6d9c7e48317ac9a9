"""The store of a workspace's memory files: following them, writing them, searching them
(the package's docstring says how)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from nxm.record import contexts
from nxm.store import lock
from nxm.store.cache import Cache
from nxm.store.files import Change, Files
from nxm.store.index import Index
from nxm.store.local import Local
from nxm.store.records import Records
from nxm.store.text import FileProblem, event_line, record_of, render
from nxm.store.vectors import Vectors, by_text, text_hash
from nxs import progress
from nxs.errors import ConflictError, NotFoundError, NxsError, UpstreamError
from nxs.workspace import Workspace

BATCH = 512  # memories embedded and indexed per step of a large refresh
READ_WAIT_S = 2.0  # how long a search waits for a writer before it answers from memory
Embed = Callable[[list[dict[str, Any]]], dict[str, Any]]  # records -> their vectors by key


class Store:
    """The memory store of one workspace."""

    remote = False

    def __init__(self, ws: Workspace, index: Index | None = None) -> None:
        self.ws = ws
        self.local = Local(ws.root)
        model = ws.section("memory")["model"]
        self.embeddings = Vectors(self.local.vectors, model)
        self.cache = Cache(self.local.records, model, self.embeddings)
        self.index = index or Index(str(self.local.lance), None)
        self.files = Files(ws.dir)
        self._lock = threading.RLock()
        self._held = 0
        self.problems: list[dict[str, str]] = []
        self._on_disk: Index | None = None  # the disk index while a busy lock keeps it behind
        self._commits = 0
        self._set_up = self.remote  # what the first write of a process sets up (`writing`)

    @property
    def dim(self) -> int:
        return self.index.dim

    @dim.setter
    def dim(self, value: int) -> None:
        self.index.dim = value

    def close(self) -> None:
        """Close the record cache, the vectors and the index (a later call opens them again)."""
        self.cache.close()
        self.embeddings.close()
        self.index = Index(self.index.uri, self.index._storage_options, self.index.dim)

    @contextlib.contextmanager
    def locked(self, wait: float | None = None) -> Iterator[None]:
        """Hold the write lock (re-entrant in this process), waiting at most ``wait`` seconds."""
        with self._lock:
            if self._held:
                self._held += 1
                try:
                    yield
                finally:
                    self._held -= 1
                return
            with lock.locked(self.ws.dir, wait):
                self._held = 1
                try:
                    yield
                finally:
                    self._held = 0

    def sync(self, adds: bool = False) -> list[str]:
        """Bring the record cache up to date with the files; the keys whose record changed."""
        import sqlite3

        short = not self._held  # a read waits briefly for another's cache write (a stopped one)
        try:
            if short:
                self.cache.conn().execute(f"PRAGMA busy_timeout = {int(READ_WAIT_S * 1000)}")
            return self._sync(adds)
        except sqlite3.OperationalError as exc:
            if not self._in_memory(exc):
                raise
            return self._sync(adds)
        except sqlite3.DatabaseError:
            self.cache.reset()  # damaged: made again from the files
            return self._sync(adds)
        except UpstreamError as exc:
            if exc.code != "STORE_WRITE_FAILED" or not self._in_memory(exc):
                raise
            return self._sync(adds)
        finally:
            if short:  # what the cache's writes wait for anyone else (its connection's)
                with contextlib.suppress(sqlite3.Error):
                    self.cache.conn().execute("PRAGMA busy_timeout = 30000")

    def _in_memory(self, exc: Exception) -> bool:
        """Keep the records in memory after the cache file refused a write (a full or read-only
        disk, another process in the middle of one); False for any other error."""
        text = getattr(exc, "message", None) or str(exc)
        refused = any(w in text for w in ("full", "readonly", "read-only", "disk I/O", "locked"))
        if not refused or not self.cache.persistent:
            return False
        print(f"nxs: the local cache cannot be written ({text}); working from the files",
              file=sys.stderr)  # fmt: skip
        self.cache.in_memory()
        return True

    def _sync(self, adds: bool = False) -> list[str]:
        from nxm.store import migrate

        with self._lock:
            migrate.if_needed(self)
            if self.files.journal.exists() and lock.free(self.ws.dir):
                with contextlib.suppress(Exception), self.locked():  # a killed writer's
                    self.files.sweep(memories=self.files.replay())
            self.cache.check_model()
            seen = self._seen()
            marks = {n: self.files.mark(getattr(self.files, n)) for n in ("memories", "history")}
            mds, md_strays = self._look("memories", seen, marks, trust=adds)
            logs, log_strays = self._look("history", seen, marks, trust=True)
            if logs is None and (mds is None or mds == self.cache.md_idents()):  # the usual case
                stored = self.cache.idents(racy=True)
                todo, orphans = sorted(stored), seen["history"]["orphans"]
            else:
                stored = self.cache.idents()
                if mds is None:  # the memories folder as it was: the files as read
                    mds = {k: md for k, (md, _) in stored.items()}
                if logs is None:  # the history folder as it was: the logs as read
                    logs = {k: log for k, (_, log) in stored.items() if log}
                    logs |= dict.fromkeys(seen["history"]["orphans"], "?")
                todo = sorted(_changed(stored, mds, logs))
                orphans = sorted(logs.keys() - mds.keys())
            rows = []
            for n, key in enumerate(todo, 1):
                gone = mds is not None and key not in mds
                rows.append((None, "", "", key) if gone else self._read(key))
                if n % 200 == 0 or n == len(todo):
                    progress.report("reading memory files", n, len(todo))
            changed = self.cache.put(rows, expect={k: stored.get(k) for k in todo}) if todo else []
            from nxm.store.doctor import problems

            self.problems = problems(self.cache.problems(), md_strays, log_strays, orphans)
            held = {"strays": sorted(md_strays)}, {"strays": sorted(log_strays), "orphans": orphans}
            self._saw(dict(zip(("memories", "history"), held, strict=True)), marks)
            return changed

    def _seen(self) -> dict[str, Any]:
        """What the folders held when last looked at file by file, and their marks then."""
        return orjson.loads(self.cache.meta("folders") or "{}")  # type: ignore[no-any-return]

    def _look(
        self, name: str, seen: dict[str, Any], marks: dict[str, str], trust: bool
    ) -> tuple[Any, list[str]]:
        """A folder's files by key with their identities, and its other names; None for the files
        when ``trust`` and its mark has not moved (an edit in place does not move it: reads trust
        only the history folder, an add both)."""
        was = seen.get(name, {})
        if trust and was.get("mark") == marks[name] and self.cache.persistent:
            return None, was["strays"]
        return self.files.scan(getattr(self.files, name), ".md" if name == "memories" else ".jsonl")

    def _saw(self, held: dict[str, dict[str, Any]], marks: dict[str, str] | None = None) -> None:
        """Keep what the folders held at their marks (default: now; nothing when as kept)."""
        marks = marks or {n: self.files.mark(getattr(self.files, n)) for n in held}
        kept = orjson.dumps({n: {**held[n], "mark": marks[n]} for n in held}).decode()
        if self.cache.meta("folders") != kept:
            with self.cache.transaction() as conn:
                self.cache.set_meta(conn, "folders", kept)

    def _read(self, key: str) -> tuple[Any, str, str, str]:
        md, md_ident, log, log_ident = self.files.read(key)
        if md is None:
            return None, "", "", key
        try:
            return record_of(key, md, log, ".nxs"), md_ident, log_ident, key
        except FileProblem as exc:
            return str(exc), md_ident, log_ident, key

    def records(self) -> Records:
        """Every record, after `sync`."""
        self.sync()
        return Records(self.cache)

    def generation(self) -> tuple[int, int]:
        """Changes whenever any process changed the cache (for what a process keeps)."""
        return int(self.cache.query("PRAGMA data_version")[0][0]), self._commits

    @contextlib.contextmanager
    def writing(self, adds: bool = False) -> Iterator[Records]:
        """Hold the write lock and yield every record, brought up to date inside it; the first
        write of a process also configures this clone's merge driver."""
        with self.locked():
            self.files.sweep(memories=self.files.replay())  # what a killed writer left
            if not self._set_up:
                from nxm.store import gitconfig

                self.local.drop_earlier()
                gitconfig.install(self.ws.root)
                self._set_up = True
            self.sync(adds)
            yield Records(self.cache)

    def commit(
        self,
        current: Records,
        upserts: list[dict[str, Any]],
        vectors: dict[str, Any] | None = None,
        deletes: list[str] = (),  # type: ignore[assignment]
        resolving: str | None = None,
    ) -> None:
        """Write changed records and deletions (inside `writing`); ``current`` sees them after.

        Raises:
            ConflictError: a memory it would write is in conflict or cannot be read
                (``resolving``: the one key `nxm resolve` may write over).
        """
        if not upserts and not deletes:
            return
        for key in [r["key"] for r in upserts] + list(deletes):
            problem = self.cache.problem(key)
            if problem is not None and key != resolving:
                raise unreadable(key, problem, write=True)
        self._save(current, upserts, list(deletes), by_text(upserts, vectors or {}))
        for r in upserts:
            current.changes[r["key"]] = r
            if (vectors or {}).get(r["key"]) is not None:
                r["processing"] = "READY"
            elif r["processing"] != "READY":
                r["processing"] = "PENDING"
        for k in deletes:
            current.changes[k] = None
        self._commits += 1
        self.project()
        if self.index._table is not None:  # this process searches: keep the index current
            self.refresh()

    def _save(
        self, current: Records, upserts: list[dict[str, Any]], deletes: list[str],
        by_text: dict[str, bytes],
    ) -> None:  # fmt: skip
        """Write the files, then what is derived from them (a team store: its table)."""
        changes = [self._change(current, r) for r in upserts]
        changes += [Change(k, None) for k in deletes]
        names = ("memories", "history")
        before = {n: self.files.mark(getattr(self.files, n)) for n in names}
        self.files.write(changes)  # the write is saved: what follows is derived
        seen = self._seen()
        if len(seen) == 2 and all(seen[n]["mark"] == before[n] for n in names):
            # nobody else changed the folders since they were looked at: its own files did
            written = {r["key"] for r in upserts}
            seen["history"]["orphans"] = [k for k in seen["history"]["orphans"] if k not in written]
            self._saw(seen)
        self.embeddings.put(by_text)
        rows = [self._read(r["key"]) for r in upserts] + [(None, "", "", k) for k in deletes]
        try:
            self.cache.put(rows)
        except UpstreamError as exc:
            if exc.code != "STORE_WRITE_FAILED" or not self._in_memory(exc):
                raise
            self._sync()

    def _change(self, current: Records, record: dict[str, Any]) -> Change:
        key = record["key"]
        before = current.get(key) if key not in current.changes else current.changes[key]
        old = (before or {}).get("events") or []
        new = record["events"]
        md = render(record)
        if old == new[: len(old)] and self.cache.problem(key) is None:
            return Change(key, md, append=b"".join(event_line(e) for e in new[len(old) :]))
        return Change(key, md, rewrite=b"".join(event_line(e) for e in new))

    def embed(self, embed: Embed, everything: bool = False) -> int:
        """Embed the records without a vector (all with ``everything``); returns how many."""
        cache = self.cache
        todo = cache.keys() if everything else cache.unready()
        if not everything and todo:  # another clone or branch of this machine embedded them
            known = self.embeddings.get(set(cache.texts(todo).values()))
            if known:
                cache.now_ready(known)
                todo = cache.unready()
        with progress.items("embedding memories", len(todo)) as advance:
            for start in range(0, len(todo), BATCH):
                batch = list(cache.many(todo[start : start + BATCH]).values())
                made = by_text(batch, embed(batch))
                self.embeddings.put(made)
                cache.now_ready(made)
                advance(len(batch))
        return len(todo)

    def refresh(self, embed: Embed | None = None) -> None:
        """Write the pending memories into the search index (a missing index is made again)."""
        cache = self.cache
        if self._on_disk is not None and lock.free(self.ws.dir):
            self.index, self._on_disk = self._on_disk, None  # the holder is gone: back to disk
        if embed is not None and cache.unready():
            self.embed(embed)
        if self.index.uri.startswith("memory://"):
            return  # made once for this process (below)
        if not self.index.exists() and cache.count():
            cache.reindex_all()
        if not cache.pending():
            return
        reader = not self._held  # a search: it must not wait long for a writer
        try:
            self._write_pending(min(READ_WAIT_S, lock.WAIT_S) if reader else None)
        except (UpstreamError, ConflictError) as exc:
            if exc.code not in ("STORE_READONLY", "STORE_BUSY", "STORE_WRITE_FAILED") or not reader:
                raise
            # a writer holds the lock (a stopped `nxm import`), the workspace is read-only or the
            # disk full: an index in memory, made from the record cache, answers this process
            if exc.code == "STORE_BUSY":
                self._on_disk = self.index
            self.index = Index("memory://nxs", None, self.index.dim)
            self._write_pending()

    def _write_pending(self, wait: float | None = None) -> None:
        import numpy as np

        cache = self.cache
        in_memory = self.index.uri.startswith("memory://")  # all of it, unlocked, once
        with contextlib.nullcontext() if in_memory else self.locked(wait):
            pending = [(k, 0) for k in cache.keys()] if in_memory else cache.pending()
            records = Records(cache)
            for start in range(0, len(pending), BATCH):
                batch = pending[start : start + BATCH]
                got = cache.many([k for k, _ in batch])
                upserts = list(got.values())
                deletes = [k for k, _ in batch if k not in got]
                stored = self.embeddings.get(text_hash(r) for r in upserts)
                vectors = {
                    r["key"]: np.frombuffer(stored[text_hash(r)], dtype=np.float32)
                    for r in upserts if text_hash(r) in stored
                }  # fmt: skip
                last = start + BATCH >= len(pending)
                self.index.write(upserts, vectors, contexts(records, list(got)), deletes, last)
                if not in_memory:
                    cache.indexed(batch)
                progress.report("indexing memories", start + len(batch), len(pending))

    def vectors(self, keys: list[str]) -> dict[str, list[float]]:
        """The vectors of the READY records among ``keys``."""
        import numpy as np

        texts = self.cache.texts(keys)
        stored = self.embeddings.get(set(texts.values()))
        return {
            k: np.frombuffer(stored[t], dtype=np.float32).tolist()
            for k, t in texts.items() if t in stored
        }  # fmt: skip

    def open_vectors(self) -> dict[str, bytes]:
        """The vector of every open READY record, by key (what a write compares a new one with)."""
        texts = self.cache.open_texts()
        stored = self.embeddings.get(set(texts.values()))
        return {k: stored[t] for k, t in texts.items() if t in stored}

    def reindex(self) -> dict[str, Any]:
        """Read every memory file again and make the search index anew (vectors are kept)."""
        import shutil

        with self.locked():
            self.close()
            shutil.rmtree(self.local.dir, ignore_errors=True)
            self.sync()
            return {"memories": self.cache.count(), "problems": len(self.problems)}

    def compact(self) -> dict[str, Any]:
        """Bring the index up to date with the files, then compact it now."""
        with self.locked():
            self.sync()
            self.refresh()
            return self.index.compact()

    def project(self) -> None:
        """Write NEXUS_MEMORY.md again if it does not show the records (a failure heals later)."""
        from nxm.projection import write

        try:
            write(self.ws.root, self.cache)
        except OSError as exc:
            print(f"nxs: NEXUS_MEMORY.md could not be written: {exc.strerror}", file=sys.stderr)

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.index.pinned())
            except (OSError, RuntimeError) as exc:
                raise self._damaged(exc) from None
            yield

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
        """The error of a search the index could not answer; the derived index is removed."""
        line = (str(exc).strip().splitlines() or ["?"])[0][:300]
        with self._lock:
            dropped = self.index.drop(line)
            self.index = Index(self.index.uri, None, self.index.dim)
        return UpstreamError(
            f"the search index is damaged ({line})"
            + ("; it was removed, and the next command makes it again" if dropped else ""),
            suggestion="run `nxm reindex` (it reads the memory files; nothing is lost), then "
            "search again",
            code="INDEX_DAMAGED",
        )


def unreadable(key: str, problem: str, write: bool = False) -> NxsError:
    """The refusal of a memory whose files do not read: in a merge conflict (``conflict``),
    or broken (``not_found``, as a memory no verb can see); ``write``: nothing was written."""
    done = "; nothing was written" if write else ""
    if "conflict" in problem:
        return ConflictError(
            f"memory {key} is in a merge conflict ({problem}){done}",
            suggestion=f"resolve it first: `nxm resolve {key}` shows both sides",
            code="MEMORY_IN_CONFLICT",
        )
    return NotFoundError(
        f"memory {key} cannot be read: {problem}{done}",
        suggestion="fix the file by hand (`nxm doctor` says how), then run the command again",
        code="MEMORY_FILE_BROKEN",
    )


def _changed(
    stored: dict[str, tuple[str, str]], mds: dict[str, str], logs: dict[str, str]
) -> set[str]:
    """The keys whose files changed since the cache read them, or are too recent to trust."""
    out = {k for k, _ in mds.items() ^ {k: md for k, (md, _) in stored.items()}.items()}
    was = {k: log for k, (_, log) in stored.items() if log}
    out |= {k for k, _ in logs.items() ^ was.items()} & (mds.keys() | stored.keys())
    return out | {k for k, (md, log) in stored.items() if md[-1:] == "~" or log[-1:] == "~"}
