"""Moving a store of the earlier layout (a LanceDB table committed in ``.nxs/memory/``) to
the files git merges, losing nothing (`if_needed` on the first command, or ``nxm migrate``).

Each record is written as its two files, read back and compared with what the table held, field
by field, before the old table is removed; vectors are kept, and the graph file moves too.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any

import orjson

from nxm.record import complete
from nxm.store.files import Change
from nxm.store.text import LOCAL, event_line, reconciled, record_of, render
from nxs.errors import UpstreamError

OLD = "memory"  # .nxs/memory/memories.lance
OLD_DERIVED = ("cache", "index", "memory.lock", "graph.lock")


def needed(store: Any) -> bool:
    return not store.remote and (store.ws.dir / OLD / "memories.lance").is_dir()


def if_needed(store: Any) -> dict[str, Any] | None:
    """Migrate when the workspace still has the earlier layout; say so on stderr."""
    if not needed(store):
        return None
    got = run(store)
    print(
        f"nxs: moved {got['memories']} memories ({got['events']} events) from .nxs/memory/ "
        "(LanceDB) to .nxs/memories/*.md and .nxs/history/*.jsonl, which git merges; commit "
        "them: git add -A .nxs NEXUS_MEMORY.md",
        file=sys.stderr,
    )
    return got


def _old_records(store: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from nxm.store.index import Index

    old = Index(str(store.ws.dir / OLD), None)
    table = old.table()
    if table is None:
        return [], {}
    got = table.search().select(["doc", "processing", "vector"]).limit(None).to_arrow()
    records, vectors = [], {}
    for doc, processing, vector in zip(
        *(got.column(c).to_pylist() for c in ("doc", "processing", "vector")), strict=True
    ):
        record = complete(orjson.loads(doc))
        records.append(record)
        if processing == "READY" and record.get("model") == store.cache.model:
            vectors[record["key"]] = vector
    return records, vectors


def run(store: Any) -> dict[str, Any]:
    """Migrate now (under the write lock); returns the counts.

    Raises:
        UpstreamError: a record did not survive the round trip (nothing old is removed).
    """
    from nxm.store.vectors import vector_bytes

    with store.locked():
        if not needed(store):
            return {"memories": 0, "events": 0, "migrated": False}
        records, vectors = _old_records(store)
        changes, events = [], 0
        for r in sorted(records, key=lambda r: r["key"]):
            r["events"] = reconciled(r)
            events += len(r["events"])
            log = b"".join(event_line(e) for e in r["events"])
            changes.append(Change(r["key"], render(r), rewrite=log))
        store.files.write(changes)
        for r in records:  # read back: the files must make the very record the table held
            md, _, log, _ = store.files.read(r["key"])
            back = record_of(r["key"], md or b"", log, ".nxs")
            r["body"] = r["body"].replace("\r\n", "\n")  # git writes text files with LF
            lost = [f for f in r if f not in LOCAL and back.get(f) != r[f]]
            if lost:
                raise UpstreamError(
                    f"memory {r['key']} would lose {', '.join(lost)} in the new layout; "
                    "nothing old was removed",
                    suggestion="report this with `nxm export` of the old store",
                    code="MIGRATION_FAILED",
                )
        store.embeddings.put(vector_bytes(records, vectors))
        from nxm import graph

        graph.migrate(store.ws)
        shutil.rmtree(store.ws.dir / OLD)
        for name in OLD_DERIVED:
            path = store.ws.dir / name
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        from nxm.store.gitconfig import write_git_files

        write_git_files(store.ws.root)
    return {"memories": len(records), "events": events, "migrated": True}
