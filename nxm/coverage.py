"""Which memories a session start sees: the prime index, chosen for coverage (docs/mcp.md).

Ranking by priority then category alone would fill the index with HIGH conventions and never
reach a gotcha or an owner: the best memory of every category comes first, then worth (priority
× recency × feedback) shared out among categories; docs/mcp.md gives the rule.
`Candidates` reads from the record cache only what the picks can reach: within a category and
a class of equal priority × feedback, worth falls with age, so the ``EACH`` most recent of every
class hold the category's best; if the picks reach past them, more are read.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from nxm.record import reading_sort_key

HALF_LIFE_DAYS = 90.0
Ranked = dict[Any, list[tuple[float, tuple[Any, ...], dict[str, Any]]]]  # by category, best first
_PRIORITY = {"HIGH": 3.0, "MEDIUM": 2.0, "LOW": 1.0}


def moment(text: Any) -> datetime | None:
    """A timestamp as a datetime (None: not one)."""
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except (ValueError, TypeError):
        return None


def worth(record: dict[str, Any], now: datetime | None) -> float:
    """How much a memory earns its line: priority × recency × feedback."""
    priority = _PRIORITY.get(record.get("priority") or "MEDIUM", 2.0)
    written = moment(record.get("updated") or record.get("created"))
    recency = 1.0
    if written is not None and now is not None:
        days = max((now - written).total_seconds() / 86400, 0.0)
        recency = 0.5 + 0.5 * 0.5 ** (days / HALF_LIFE_DAYS)
    counts = record.get("feedback") or {}
    try:
        net = int(counts.get("POSITIVE", 0)) - int(counts.get("NEGATIVE", 0))
    except (TypeError, ValueError, AttributeError):
        net = 0
    return priority * recency * min(max(1.0 + 0.25 * net, 0.25), 2.0)


def ranked(records: Iterable[dict[str, Any]], at: datetime | None) -> Ranked:
    """Each category's candidates as (-worth, reading key, record), best first."""
    by_category: Ranked = {}
    for r in records:
        entry = (-worth(r, at), reading_sort_key(r), r)
        by_category.setdefault(r.get("category"), []).append(entry)
    for entries in by_category.values():
        entries.sort(key=lambda e: (e[0], e[1]))
    return by_category


def picks(records: Iterable[dict[str, Any]], now: str) -> Iterator[dict[str, Any]]:
    """The candidates in the order the index takes them (coverage first, then shared worth)."""
    return picks_of(ranked(records, moment(now)))


def picks_of(by_category: Ranked) -> Iterator[dict[str, Any]]:
    """`picks` from the categories `ranked` made."""
    # Categories by their best memory; uncategorised after a named one of equal worth.
    order = sorted(by_category, key=lambda c: (by_category[c][0][0], c is None, c or ""))
    for category in order:
        yield by_category[category][0][2]
    heap = [
        (by_category[c][1][0] / 2, by_category[c][1][1], i, c)
        for i, c in enumerate(order)
        if len(by_category[c]) > 1
    ]
    heapq.heapify(heap)
    taken = Counter(dict.fromkeys(order, 1))
    while heap:
        _, _, i, category = heapq.heappop(heap)
        entries = by_category[category]
        yield entries[taken[category]][2]
        taken[category] += 1
        if taken[category] < len(entries):
            nxt = entries[taken[category]]
            heapq.heappush(heap, (nxt[0] / (1 + taken[category]), nxt[1], i, category))


EACH = 16  # candidates read per category and worth class, four times more while not enough


class Candidates:
    """What the prime index is picked from at one moment: counts and the best candidates."""

    def __init__(self, cache: Any, now: str) -> None:
        from nxs.render import parse_timestamp

        self.cache, self.now, self.at = cache, now, moment(now)
        self.instant = parse_timestamp(now)
        self.live = 0  # open, project-scoped, unexpired memories
        self.totals: Counter[Any] = Counter()  # of those, by category
        self.others: Counter[str] = Counter()  # open, unexpired memories of other scopes
        for scope, category, n in cache.open_counts(self.instant):
            if scope == "project":
                self.live += n
                self.totals[category] += n
            else:
                self.others[str(scope)] += n
        self.each = EACH
        self._read()

    def _read(self) -> None:
        records, full = self.cache.best_open(self.instant, self.each)  # full: more left unread
        self.ranked = ranked(records, self.at)
        self.safe = {}  # per category: how many picks are sure to be the true ones
        for category, entries in self.ranked.items():
            last = {worth(r, None): i for i, (_, _, r) in enumerate(entries)}
            unsure = [i for a, i in last.items() if (category, a) in full]
            self.safe[category] = min(unsure) + 1 if unsure else len(entries)  # past a full
        self.taken: Counter[Any] = Counter()  # class's last read, a pick may be the wrong one

    def picks(self) -> Iterator[dict[str, Any]]:
        """`picks` over the candidates; `Exhausted` when they run past those read (call again)."""
        self.taken = Counter()
        for record in picks_of(self.ranked):
            self._sure()
            self.taken[record.get("category")] += 1
            yield record
        self._sure()  # every candidate read was taken: are more left?

    def _sure(self) -> None:
        """Raise `Exhausted` unless every category's next candidate is the true one."""
        taken, safe = self.taken, self.safe
        if any(safe[c] <= taken[c] < self.totals[c] for c in self.ranked):
            self.each *= 4
            self._read()
            raise Exhausted


class Exhausted(Exception):
    """The picks ran past the candidates read: read more, and pick again."""


__all__ = [
    "EACH", "HALF_LIFE_DAYS", "Candidates", "Exhausted", "moment", "picks", "picks_of", "ranked",
    "worth",
]  # fmt: skip
