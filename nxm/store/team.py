"""A team store on object storage (``memory.store = "s3://…"``): the records live in the
bucket's LanceDB table, one row each, whole (docs/team-store.md); this machine's record cache
follows the table's version instead of files."""

from __future__ import annotations

from typing import Any

from nxm.record import contexts
from nxm.store.records import Records
from nxm.store.store import Store
from nxm.store.vectors import text_hash
from nxs.errors import UpstreamError


class TeamStore(Store):
    """A store whose records are a LanceDB table's rows, not files."""

    remote = True

    def _sync(self, adds: bool = False) -> list[str]:
        with self._lock:
            try:
                return self._read_table()
            except (OSError, RuntimeError, ValueError) as exc:  # the bucket's listing failed
                line = (str(exc).strip().splitlines() or ["?"])[0][:300]
                raise UpstreamError(
                    f"cannot read the memory store at {self.index.uri}: {line}",
                    suggestion="check the store's URI, endpoint and credentials",
                    code="STORE_UNAVAILABLE",
                ) from None

    def _read_table(self) -> list[str]:
        version = self.index.version()
        if version is not None and str(version) == self.cache.meta("remote_version"):
            return []
        docs = self.index.docs()
        stale = [(None, "", "", k) for k in self.cache.keys() if k not in docs]
        rows = [(r, "remote", "ready" if ready else "", k) for k, (r, ready) in docs.items()]
        changed = self.cache.put(stale + rows)
        self._mirror(str(version))
        return changed

    def _mirror(self, version: str) -> None:
        """The table is the index: nothing is pending, and READY is what its rows say (kept
        in the rows' log identity, which a file store uses for its history file)."""
        with self.cache.transaction() as conn:
            conn.execute("DELETE FROM pending")
            conn.execute("UPDATE records SET ready = (log = 'ready')")
            self.cache.set_meta(conn, "remote_version", version)

    def _save(
        self, current: Records, upserts: list[dict[str, Any]], deletes: list[str],
        by_text: dict[str, bytes],
    ) -> None:  # fmt: skip
        import numpy as np

        vectors = {
            r["key"]: np.frombuffer(by_text[t], dtype=np.float32)
            for r in upserts if (t := text_hash(r)) in by_text
        }  # fmt: skip
        keep = [r["key"] for r in upserts if r["key"] not in vectors and r["processing"] == "READY"]
        vectors.update(self.index.vectors(keep))
        after = dict(current)
        after.update({r["key"]: r for r in upserts})
        for k in deletes:
            after.pop(k, None)
        for r in upserts:
            r["processing"] = "READY" if vectors.get(r["key"]) is not None else "PENDING"
            r["model"] = self.cache.model if r["processing"] == "READY" else None
        self.index.write(upserts, vectors, contexts(after, [r["key"] for r in upserts]), deletes)
        self.embeddings.put(by_text)
        rows = [
            (r, "remote", "ready" if r["processing"] == "READY" else "", r["key"]) for r in upserts
        ]
        self.cache.put(rows + [(None, "", "", k) for k in deletes])
        self._mirror(str(self.index.version()))

    def project(self) -> None:
        """A team store has no NEXUS_MEMORY.md: its records are not in the repository."""

    def refresh(self, embed: Any = None) -> None:
        """The table is the index."""

    def vectors(self, keys: list[str]) -> dict[str, list[float]]:
        return self.index.vectors(keys)

    def reindex(self) -> dict[str, Any]:
        with self.locked():
            self.close()
            self.cache.reset()
            self.sync()
            return {"memories": self.cache.count(), "problems": len(self.problems)}
