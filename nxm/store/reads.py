"""The record cache's reads (`nxm.store.cache.Cache`): records by key, prefix, page, session
or hash, each one query through the indexes `nxm.store.schema` makes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import orjson


class Reads:
    """Queries over the ``records`` and ``docs`` tables (`nxm.store.cache.Cache` is one)."""

    if TYPE_CHECKING:  # what the cache gives it

        def query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]: ...
        def _record(self, doc: bytes, ready: int) -> dict[str, Any]: ...

    def get(self, key: str) -> dict[str, Any] | None:
        got = self.query(
            "SELECT d.doc, r.ready FROM docs d JOIN records r ON r.key = d.key WHERE d.key = ?",
            (key,),
        )
        return self._record(*got[0]) if got else None

    def many(self, keys: Iterable[str], column: str = "doc") -> dict[str, dict[str, Any]]:
        """The records of ``keys`` that exist, in one query; ``column="head"``: without body
        and events (what ranking and summaries read)."""
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

    def heads(self, ordered: bool = False, shown: bool = False) -> Iterator[dict[str, Any]]:
        """Every record without body and events (``shown``: only NEXUS_MEMORY.md's, which
        are open and shared), in reading order when ``ordered``."""
        sql = "SELECT d.head, r.ready FROM records r JOIN docs d ON d.key = r.key WHERE r.good = 1"
        sql += " AND r.line IS NOT NULL" if shown else ""
        sql += " ORDER BY r.ord" if ordered or shown else ""
        for head, ready in self.query(sql):
            yield self._record(head, ready)

    def page(self, status: str, start: int, size: int) -> tuple[list[dict[str, Any]], int]:
        """One page of the records of a status ("all": every one) in reading order, without
        body and events, and how many there are: what `nxm list` shows with no other filter,
        read through the ``ord`` index instead of every record."""
        where = "r.good = 1" + ("" if status == "all" else " AND r.status = ?")
        args: tuple[Any, ...] = () if status == "all" else (status,)
        total = self.query(  # kept by triggers: counting 10,000 rows took ~7 ms
            "SELECT COALESCE(SUM(n), 0) FROM counts"
            + ("" if status == "all" else " WHERE status = ?"),
            args,
        )[0][0]
        # the page's keys from the order index alone, then their rows (an OFFSET reads the
        # whole row of every record it skips)
        got = self.query(
            f"SELECT d.head, r.ready FROM (SELECT r.key, r.ord FROM records r WHERE {where} "
            "ORDER BY r.ord LIMIT ? OFFSET ?) p JOIN records r ON r.key = p.key "
            "JOIN docs d ON d.key = p.key ORDER BY p.ord",
            (*args, size, start),
        )
        return [self._record(head, ready) for head, ready in got], int(total)

    def problems(self) -> list[tuple[str, str]]:
        return self.query("SELECT key, problem FROM records WHERE problem IS NOT NULL ORDER BY key")

    def with_hash(self, digest: str) -> list[str]:
        return [k for (k,) in self.query("SELECT key FROM records WHERE hash = ?", (digest,))]

    def in_sessions(self, sessions: set[str]) -> list[dict[str, Any]]:
        got = self.query(
            "SELECT d.doc, r.ready FROM records r JOIN docs d ON d.key = r.key "
            "WHERE r.session IN (SELECT value FROM json_each(?))",
            (orjson.dumps(sorted(sessions)).decode(),),
        )
        return [self._record(doc, ready) for doc, ready in got]

    def sessions(self) -> list[tuple[str, str, str]]:
        """(key, session, created) of every record in a session."""
        return self.query(
            "SELECT key, session, created FROM records WHERE session IS NOT NULL AND good = 1"
        )

    def lines(self, limit: int) -> tuple[list[str], int, int]:
        """NEXUS_MEMORY.md's first ``limit`` index lines in reading order, how many there are,
        and how many memories are closed (read through indexes: the cost stays that of ``limit``)."""
        lines = [
            ln
            for (ln,) in self.query(
                "SELECT line FROM records WHERE line IS NOT NULL ORDER BY ord LIMIT ?", (limit,)
            )
        ]
        shown = self.query("SELECT COUNT(*) FROM records WHERE line IS NOT NULL")[0][0]
        closed = self.query("SELECT n FROM counts WHERE status = 'closed'")
        return lines, int(shown), int(closed[0][0]) if closed else 0

    def count(self) -> int:
        return int(self.query("SELECT COUNT(*) FROM records WHERE good = 1")[0][0])
