"""The prime index's candidates, kept in the record cache so a session start reads one row.

Choosing the index (`nxm.coverage`) scores every open memory, and at 10,000 that was most of
what `nxs prime` cost besides the sync with the files. The choice depends on the records and
on the moment (recency decays, memories expire), so what is kept is not the answer but what
proves it again at a later moment from a few rows (meta ``prime`` of the cache):

- the docs' version it was read at (`Cache.open_facts`: any record written or removed, by a
  command or by the sync seeing a hand edit or a checkout, changes it), a mark of this code
  and of `nxm.coverage`, the counts, and the moment of the choice and the first expiry after it;
- the candidates: in each category the best memories at that moment, more than the index took
  from it (``m`` taken: the best ``2m + 9`` kept);
- for the rest of each category, a bound on its worth at any later moment. A memory's worth is
  ``a·(½ + ½·2^(−age/90 days))`` with ``a`` its priority × feedback (a few values), so the
  rest's with a given ``a`` is at most ``a/2 + max(a/2·2^(−age then/90)) · 2^(−days since/90)``
  (an undated memory's: ``a``).

At a later moment, before that expiry, the picks are made again over the candidates alone
(`Candidates.picks`), after taking in the records written since if they are few (the cache
logs each record's facts before a write: the old ones leave the counts and the candidates,
the new ones join both; the rest only loses members, so its bound still holds). They stand
(`holds`) if in every category the rest's bound, with a margin far above rounding, stays below
the worth of the last candidate the picks looked at. Then every left-out memory ranks after
it, and the picks over every memory would have been the same ones in the same order.
Otherwise the index is chosen again from every record (`Candidates.read`) and that choice is
kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from nxm.coverage import HALF_LIFE_DAYS, moment, picks_of, ranked, worth
from nxs.render import parse_timestamp

KEY = "prime"  # the cache's meta row
SPARE = 9  # candidates kept per category beyond twice those taken
MARGIN = 1e-9  # relative: far above the rounding of the bound and of a worth
MOST = 2000  # candidates worth keeping (more: the whole store is about as cheap to read)
CHANGES = 500  # records changed since a kept choice that are worth bringing it up to date

Ranked = dict[Any, list[tuple[float, tuple[Any, ...], dict[str, Any]]]]


def instant(text: Any) -> datetime | None:
    """``text`` as `nxs.render.parse_timestamp` reads it (None: it cannot)."""
    try:
        return parse_timestamp(text)
    except (ValueError, TypeError, AttributeError):
        return None


def unexpired(record: dict[str, Any], at: datetime | None) -> bool:
    """Not past its expiry at ``at`` (a malformed expiry, or moment, hides nothing)."""
    expires = record.get("expires")
    if not expires or at is None:
        return True
    until = instant(expires)
    return until is None or until > at


def is_open(record: Any, at: datetime | None) -> bool:
    """An open record with a key, unexpired at ``at``."""
    return (
        isinstance(record, dict)
        and bool(record.get("key"))
        and record.get("status") == "open"
        and unexpired(record, at)
    )


class Candidates:
    """What the index is picked from at one moment: the counts and the ranked candidates."""

    def __init__(self, now: str, live: int, totals: Counter[Any], others: Counter[str]) -> None:
        self.now = now
        self.at = moment(now)  # what worth reads (naive, or None, as `nxm.coverage` has it)
        self.live = live  # open, project-scoped, unexpired memories
        self.totals = totals  # of those, by category
        self.others = others  # open, unexpired memories of the other scopes, by scope
        self.ranked: Ranked = {}
        self.bounds: dict[Any, list[list[float]]] = {}  # the rest's (`_bound`), when kept
        self.since: datetime | None = None  # the moment of a kept choice
        self.taken: Counter[Any] = Counter()
        self.entry: dict[str, Any] | None = None  # what to keep, after a full choice
        self.refreshed: dict[str, Any] | None = None  # a kept choice brought up to date

    # -- reading ----------------------------------------------------------------------------

    @classmethod
    def read(cls, cache: Any, now: str) -> Candidates:
        """Every open record's candidates, from the cache (after the store's sync)."""
        version, seq, facts = cache.open_facts()
        at = instant(now)
        heads = [r for r in facts if is_open(r, at)]
        live = [r for r in heads if r.get("scope") == "project"]
        others = Counter(str(r.get("scope")) for r in heads if r.get("scope") != "project")
        got = cls(now, len(live), Counter(r.get("category") for r in live), others)
        got.ranked = ranked(live, got.at)
        if _keepable(got.at, at):
            got.entry = {"version": version, "seq": seq, "code": _code(), "now": now}
            got.entry["until"] = _next_expiry(facts, at)
        return got

    @classmethod
    def kept(cls, cache: Any, now: str) -> Candidates | None:
        """The kept candidates if they can answer at ``now`` (None: read every record)."""
        try:
            version, seq, entry, changes = cache.kept(KEY, CHANGES)
            if not isinstance(entry, dict) or not entry.get("code") or entry["code"] != _code():
                return None
            at, since = instant(now), instant(entry["now"])
            refreshed = entry.get("version") != version
            if refreshed:  # records written since: take them in, or choose again
                if changes is None or since is None:
                    return None
                entry = _brought_up(entry, changes, since)
                if entry is None:
                    return None
                entry.update(version=version, seq=seq)
            until = instant(entry["until"]) if entry["until"] else None
            if not _keepable(moment(now), at) or since is None or at is None or at < since:
                return None
            if until is not None and at >= until:
                return None
            got = cls(now, entry["live"], Counter(dict(entry["totals"])), Counter(entry["others"]))
            got.ranked = ranked(entry["candidates"], got.at)
            got.bounds = {c: [[float(h), float(f)] for h, f in b] for c, b in entry["bounds"]}
            got.since = since
            got.refreshed = entry if refreshed else None
        except (KeyError, TypeError, ValueError, AttributeError):  # not what `keep` wrote
            return None
        return got

    # -- picking ----------------------------------------------------------------------------

    def picks(self) -> Iterator[dict[str, Any]]:
        """`nxm.coverage.picks` over the candidates, counting what is taken per category."""
        self.taken = Counter()
        for record in picks_of(self.ranked):
            self.taken[record.get("category")] += 1
            yield record

    def holds(self) -> bool:
        """Whether the picks taken so far are those every open record would give."""
        if self.since is None:
            return True  # read from every record
        assert self.at is not None
        decay = 0.5 ** ((self.at - self.since).total_seconds() / 86400 / HALF_LIFE_DAYS)
        for category, pairs in self.bounds.items():
            entries = self.ranked.get(category, [])
            last = self.taken[category]  # the candidate the picks looked at last
            if last >= len(entries):
                return False
            bound = max(half + fading * decay for half, fading in pairs) * (1 + MARGIN)
            if not bound < -entries[last][0]:
                return False
        return True

    def keep(self, cache: Any) -> None:
        """Keep this full choice's candidates, sized by what the picks took (or a kept choice
        brought up to date, once it held)."""
        if self.refreshed is not None:
            cache.keep(KEY, self.refreshed, trim=self.refreshed["seq"])
            return
        if self.entry is None or self.since is not None:
            return
        candidates, bounds = [], []
        for category, entries in self.ranked.items():
            size = 2 * self.taken[category] + SPARE
            candidates += [r for _, _, r in entries[:size]]
            rest = [r for _, _, r in entries[size:]]
            if rest:
                bound = _bound(rest, self.at)
                if bound is None:
                    return
                bounds.append([category, bound])
        if len(candidates) > MOST:
            return
        cache.keep(
            KEY,
            {
                **self.entry,
                "live": self.live,
                "totals": list(self.totals.items()),
                "others": self.others,
                "candidates": candidates,
                "bounds": bounds,
            },
            trim=self.entry["seq"],
        )


def _brought_up(
    entry: dict[str, Any], changes: list[tuple[Any, Any]], at: datetime
) -> dict[str, Any] | None:
    """A kept choice with records changed since (their facts then and now) taken in, as of its
    own moment ``at``: each old one out of the counts and the candidates, each new one into
    the counts and, if the index may list it, the candidates (the rest's bounds still hold:
    the rest only lost members). None: what was kept does not add up."""
    live, totals, others = entry["live"], Counter(dict(entry["totals"])), Counter(entry["others"])
    candidates = {r["key"]: r for r in entry["candidates"]}
    until = instant(entry["until"]) if entry["until"] else None
    for old, new in changes:
        if old is not None and is_open(old, at):
            if old.get("scope") == "project":
                live -= 1
                totals[old.get("category")] -= 1
                candidates.pop(old["key"], None)
            else:
                others[str(old.get("scope"))] -= 1
        if new is None or not is_open(new, at):
            continue
        if new.get("expires") and (ends := instant(new["expires"])) is not None:
            until = ends if until is None else min(until, ends)  # after ``at``: it is open
        if new.get("scope") == "project":
            live += 1
            totals[new.get("category")] += 1
            candidates[new["key"]] = new
        else:
            others[str(new.get("scope"))] += 1
    if live < 0 or any(n < 0 for n in (*totals.values(), *others.values())):
        return None
    if len(candidates) > MOST:
        return None
    return {
        **entry,
        "until": until.isoformat() if until is not None else None,
        "live": live,
        "totals": [[c, n] for c, n in totals.items() if n > 0],
        "others": {s: n for s, n in others.items() if n > 0},
        "candidates": list(candidates.values()),
    }


def _code() -> str:
    """A mark of the code that scores and proves (an edited or upgraded `nxm.coverage` or
    this module must not be proved by what an older one kept)."""
    import os

    from nxm import coverage

    try:
        marks = [os.stat(path) for path in (coverage.__file__, __file__)]
    except (OSError, TypeError):
        return ""
    return ";".join(f"{st.st_size}:{st.st_mtime_ns}" for st in marks)


def _keepable(at: datetime | None, instant_at: datetime | None) -> bool:
    """A moment a kept choice can be proved at: one with a zone (else worth cannot compare)."""
    return at is not None and at.tzinfo is not None and instant_at is not None


def _next_expiry(facts: list[dict[str, Any]], at: datetime | None) -> str | None:
    """The first expiry after ``at`` of an open record (a later moment must come before it)."""
    later = [
        until
        for r in facts
        if r.get("expires") and (until := instant(r["expires"])) is not None and until > at
    ]
    return min(later).isoformat() if later else None


def _bound(rest: list[dict[str, Any]], at: datetime | None) -> list[list[float]] | None:
    """[[whole, 0], [half, fading], ...]: the rest's worth ``d`` days after ``at`` is at most
    the largest ``half + fading·2^(−d/90)`` (one pair per priority × feedback; None: no finite
    bound)."""
    assert at is not None
    whole = 0.0
    fading: dict[float, float] = {}
    for r in rest:
        a = worth(r, None)  # priority × feedback: the worth at recency 1
        written = moment(r.get("updated") or r.get("created"))
        if written is None:
            whole = max(whole, a)
            continue
        days = (at - written).total_seconds() / 86400  # not clamped: a future date is fine
        try:
            fading[a] = max(fading.get(a, 0.0), a / 2 * 0.5 ** (days / HALF_LIFE_DAYS))
        except OverflowError:
            return None
    return [[whole, 0.0], *([a / 2, f] for a, f in sorted(fading.items()))]


__all__ = ["KEY", "Candidates", "instant", "is_open", "unexpired"]
