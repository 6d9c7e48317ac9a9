"""Every record of the store, read from the record cache when asked for (`Store.records`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nxm.record import body_hash
from nxm.store.cache import Cache

LOOKS = 32  # keys looked up one by one before every key is read at once


class Records(Mapping[str, dict[str, Any]]):
    """Every record of the store, read from the cache when asked for, with a write's own
    `changes` (`Store.writing`); a record it returns may be shared: copy before changing it."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.changes: dict[str, dict[str, Any] | None] = {}
        self._memo: dict[str, dict[str, Any]] = {}
        self._keys: set[str] | None = None
        self._looks = 0

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key in self.changes:
            got = self.changes[key]
            if got is None:
                raise KeyError(key)
            return got
        if key not in self._memo:
            record = self.cache.get(key)
            if record is None:
                raise KeyError(key)
            self._memo[key] = record
        return self._memo[key]

    def __contains__(self, key: object) -> bool:
        if key in self.changes:
            return self.changes[key] is not None  # type: ignore[index]
        if key in self._memo or (self._keys is not None and key in self._keys):
            return True
        if self._keys is not None or not isinstance(key, str):
            return False
        self._looks += 1  # a few keys: one look each at the key index; many: every key once
        return key in (self.cache.keys(key) if self._looks <= LOOKS else self._key_set())

    def starting(self, prefix: str) -> list[str]:
        """The keys that start with ``prefix``, in the order `__iter__` gives them."""
        stored = set(self.cache.keys(prefix) if self._keys is None else self._keys)
        changes = self.changes
        got = [k for k in sorted(stored) if changes.get(k, k) is not None]
        got += [k for k, r in changes.items() if r is not None and k not in stored]
        return [k for k in got if k.startswith(prefix)]

    def _key_set(self) -> set[str]:
        if self._keys is None:
            self._keys = set(self.cache.keys())
        return self._keys

    def __iter__(self) -> Iterator[str]:
        changes = self.changes
        stored = self._key_set()
        yield from (k for k in sorted(stored) if changes.get(k, k) is not None)
        yield from (k for k, r in changes.items() if r is not None and k not in stored)

    def __len__(self) -> int:
        stored = self._key_set()
        return len(stored) + sum((r is not None) - (k in stored) for k, r in self.changes.items())

    def values(self) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        """Every record, read in batches."""
        keys = list(self)
        for start in range(0, len(keys), 1024):
            batch = [k for k in keys[start : start + 1024] if k not in self.changes]
            got = self.cache.many(batch)
            for key in keys[start : start + 1024]:
                yield self.changes[key] if key in self.changes else got[key]  # type: ignore[misc]

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:  # type: ignore[override]
        return ((r["key"], r) for r in self.values())

    def heads(self, ordered: bool = False) -> Iterator[dict[str, Any]]:
        """The records without body and events (not the write's changes), ordered if ``ordered``."""
        return self.cache.heads(ordered=ordered)

    def with_body(self, digest: str) -> list[str]:
        """The keys of the records whose body hashes to ``digest`` (`body_hash`), sorted."""
        got = {k for k, r in self.changes.items() if r and body_hash(r["body"]) == digest}
        got.update(k for k in self.cache.with_hash(digest) if k not in self.changes)
        return sorted(got)

    def in_sessions(self, sessions: set[str]) -> Iterator[dict[str, Any]]:
        """The records of ``sessions``."""
        for r in self.cache.in_sessions(sessions):
            if r["key"] not in self.changes:
                yield r
        yield from (r for r in self.changes.values() if r and r.get("session_id") in sessions)
