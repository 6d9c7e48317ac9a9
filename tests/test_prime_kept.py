"""The prime index's kept candidates (nxm/kept.py) never answer differently from every record.

Each check compares a prime answered through what the record cache keeps with one computed
after that kept row is removed (every record read and scored again): after a hand edit, a
checkout, an add, an expiry, and at later moments; and a randomized comparison over stores
with ties, future dates, expiries, feedback and odd values.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxm.kept import KEY, Candidates
from nxs.prime import index_text, memory_rules, prime_text, static_note
from nxs.render import timestamp
from nxs.workspace import find, init
from tests.test_prime import NOW, record, write_cache


def fresh(root: Path, now: str = NOW, **kw: Any) -> str:
    """The prime with the cache's kept choice removed: every record read and scored."""
    drop(root)
    return prime_text(str(root), now=now, **kw)


def drop(root: Path) -> None:
    from nxm.store import Store

    store = Store(find(str(root)))
    store.sync()
    with store.cache.transaction() as conn:
        conn.execute("DELETE FROM meta WHERE name = ?", (KEY,))


def kept(root: Path) -> Any:
    from nxm.store import Store

    store = Store(find(str(root)))
    store.sync()
    return store.cache.kept(KEY)[2]


def store_of(root: Path, n: int = 200) -> list[dict[str, Any]]:
    cats = ["conventions", "decisions", "gotchas", "owners", None]
    records = [
        record(
            f"body {i}",
            f"fact {i:03d} says its rule",
            category=cats[i % 5],
            priority=("HIGH", "MEDIUM", "LOW")[i % 3],
            created=f"2026-0{1 + i % 5}-{1 + i % 28:02d}T00:00:00.000Z",
        )
        for i in range(n)
    ]
    write_cache(root, records)
    return records


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root, _ = init(tmp_path / "proj", ["memory"])
    store_of(root.root)
    return root.root


def test_a_prime_with_nothing_changed_is_answered_from_the_kept_row(ws: Path) -> None:
    first = prime_text(str(ws), now=NOW, budget=4000)
    entry = kept(ws)
    assert entry is not None and entry["live"] == 200
    assert len(entry["candidates"]) < 150  # not the whole store
    # What answers is the kept row: a later moment reads it (and says what every record says).
    later = timestamp(datetime(2026, 5, 30, 9, tzinfo=UTC))
    from nxm.store import Store

    store = Store(find(str(ws)))
    store.sync()
    found = Candidates.kept(store.cache, later)
    assert found is not None
    assert prime_text(str(ws), now=later, budget=4000) == fresh(ws, later, budget=4000)
    assert prime_text(str(ws), now=NOW, budget=4000) == first


def test_a_kept_row_is_never_believed_over_the_files(ws: Path) -> None:
    prime_text(str(ws), now=NOW, budget=4000)
    # A kept row saying something else (a damaged cache) is what answers...
    from nxm.store import Store

    store = Store(find(str(ws)))
    store.sync()
    entry = store.cache.kept(KEY)[2]
    for r in entry["candidates"]:
        r["introduction"] = "FORGED " + r["introduction"]
    store.cache.keep(KEY, {**entry, "code": "an older nxm"})  # kept by other code: not used
    assert "FORGED" not in prime_text(str(ws), now=NOW, budget=4000)
    store.cache.keep(KEY, entry)
    assert "FORGED" in prime_text(str(ws), now=NOW, budget=4000)
    # ...as a cache row is, until its memory's file changes: a hand edit replaces that line.
    forged = next(
        ln for ln in prime_text(str(ws), now=NOW, budget=4000).splitlines() if "FORGED" in ln
    )
    path = ws / ".nxs" / "memories" / f"{forged.split()[1]}.md"
    path.write_text(path.read_text().replace("says its rule", "says it by hand"))
    text = prime_text(str(ws), now=NOW, budget=4000)
    line = next(ln for ln in text.splitlines() if ln.startswith(forged.split("  ")[0]))
    assert "says it by hand" in line and "FORGED" not in line
    assert "FORGED" not in fresh(ws, budget=4000)


def test_hand_edits_checkouts_adds_and_expiry_change_the_next_prime_as_every_record_does(
    ws: Path,
) -> None:
    memories = ws / ".nxs" / "memories"
    before = prime_text(str(ws), now=NOW, budget=4000)
    assert kept(ws) is not None

    # Hand edits: a shown memory's introduction, and a LOW memory raised to HIGH.
    shown = next(line.split()[1] for line in before.splitlines() if line.startswith("- "))
    path = memories / f"{shown}.md"
    path.write_text(path.read_text().replace("fact", "EDITED"))
    low = next(p for p in sorted(memories.iterdir()) if "priority: LOW" in p.read_text())
    low.write_text(low.read_text().replace("priority: LOW", "priority: HIGH"))
    edited = prime_text(str(ws), now=NOW, budget=4000)
    assert "EDITED" in edited and "EDITED" not in before
    assert edited == fresh(ws, budget=4000)

    # A checkout: memories removed and others arriving (files replaced under the store).
    gone = sorted(memories.iterdir())[:20]
    for path in gone:
        path.unlink()
        (ws / ".nxs" / "history" / f"{path.stem}.jsonl").unlink()
    write_cache(
        ws,
        [
            record(f"branch {i}", f"branch fact {i}", category="branch", priority="HIGH")
            for i in range(5)
        ],
    )
    prime_text(str(ws), now=NOW, budget=4000)  # keeps this branch's choice
    switched = prime_text(str(ws), now=NOW, budget=4000)
    assert "branch fact" in switched and switched == fresh(ws, budget=4000)

    # An add through the CLI's service.
    from nxm.service import MemoryService

    prime_text(str(ws), now=NOW, budget=4000)
    MemoryService(find(str(ws))).add(
        body="added body",
        introduction="an added fact",
        now="2026-05-29T09:00:00.000Z",
        actor="t",
        category="gotchas",
        priority="HIGH",
    )
    added = prime_text(str(ws), now=NOW, budget=4000)
    assert "an added fact" in added and added == fresh(ws, budget=4000)

    # A task memory expiring between two primes.
    write_cache(
        ws,
        [
            record(
                "task body",
                "a task that expires",
                priority="HIGH",
                category="gotchas",
                layer="TASK",
                expires="2026-05-29T12:00:00.000Z",
            )
        ],
    )
    assert "a task that expires" in prime_text(str(ws), now=NOW, budget=4000)
    assert kept(ws) is not None
    after = "2026-05-29T12:00:00.000Z"
    text = prime_text(str(ws), now=after, budget=4000)
    assert "a task that expires" not in text
    assert text == fresh(ws, after, budget=4000)


# -- the randomized comparison -------------------------------------------------------------


class MemoryCache:
    """The cache methods `nxm.kept` uses, over facts by key, with the log of writes."""

    def __init__(self, facts: list[dict[str, Any]]) -> None:
        self.facts = {r["key"]: r for r in facts}
        self.rows: dict[str, bytes] = {}
        self.log: list[tuple[str, Any]] = []  # (key, facts before the write)
        self.version = 1

    def write(self, key: str, new: dict[str, Any] | None) -> None:
        """A record written (None: removed), as the sync or a command writes it."""
        self.log.append((key, self.facts.get(key)))
        if new is None:
            self.facts.pop(key, None)
        else:
            self.facts[key] = new
        self.version += 1

    def open_facts(self) -> tuple[str, int, list[dict[str, Any]]]:
        got = [copy(r) for r in self.facts.values() if r.get("status") == "open"]
        return str(self.version), len(self.log), got

    def kept(self, name: str, most: int = 0) -> tuple[str, int, Any, Any]:
        value = orjson.loads(self.rows[name]) if name in self.rows else None
        since = value.get("seq") if isinstance(value, dict) else None
        changes = None
        if isinstance(since, int) and 0 <= len(self.log) - since <= most:
            first: dict[str, Any] = {}
            for key, old in self.log[since:]:
                first.setdefault(key, (copy(old), copy(self.facts.get(key))))
            changes = list(first.values())
        return str(self.version), len(self.log), value, changes

    def keep(self, name: str, value: Any, trim: int | None = None) -> None:
        self.rows[name] = orjson.dumps(value)


def copy(value: Any) -> Any:
    return None if value is None else orjson.loads(orjson.dumps(value))


def random_facts(rng: random.Random, t0: datetime, n: int) -> list[dict[str, Any]]:
    cats = ["a", "b", "c", None, "d", "e"][: rng.randint(1, 6)]
    moments = [t0 - timedelta(days=rng.uniform(-3, 700)) for _ in range(n // 3 + 1)]
    out = []
    for i in range(n):
        written = rng.choice(moments)  # shared: ties of worth
        fact: dict[str, Any] = {
            "key": f"k{i:05d}",
            "introduction": f"fact {i} " + "x" * rng.randint(0, 60),
            "category": rng.choice(cats),
            "scope": rng.choice(["project"] * 8 + ["item", "user", "session"]),
            "status": rng.choice(["open"] * 9 + ["closed"]),
            "priority": rng.choice(["HIGH", "MEDIUM", "LOW", None]),
            "expires": None,
            "created": timestamp(written - timedelta(days=rng.choice([0, 0, 5]))),
            "updated": rng.choice([None, timestamp(written)]),
            "feedback": {"POSITIVE": rng.choice([0, 0, 1, 4]), "NEGATIVE": rng.choice([0, 0, 2])},
        }
        if rng.random() < 0.05:
            fact["expires"] = timestamp(t0 + timedelta(hours=rng.uniform(-48, 400)))
        if rng.random() < 0.02:
            fact["created"] = fact["updated"] = None  # undated: recency 1 at any moment
        if rng.random() < 0.01:
            fact["expires"] = "not a moment"
        out.append(fact)
    return out


def block(cache: MemoryCache, now: str, budget: int, use_kept: bool) -> tuple[str, bool]:
    head, note = memory_rules("cli"), static_note("cli")
    found = Candidates.kept(cache, now) if use_kept else None
    answered = found is not None
    found = found or Candidates.read(cache, now)
    text = index_text(cache, found, now, head, note, budget, "cli", None)
    return text, answered and found.holds()


def test_kept_candidates_answer_as_every_record_at_later_moments() -> None:
    rng = random.Random(20)
    held = 0
    for _ in range(60):
        t0 = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 10**7))
        facts = random_facts(rng, t0, rng.choice([20, 150, 400]))
        budget = rng.choice([1400, 2500, 6000])
        cache = MemoryCache(facts)
        block(cache, timestamp(t0), budget, use_kept=False)  # keeps the choice
        for hours in (0, 0.01, 1, 30, 24 * 20, 24 * 400, -1):
            now = timestamp(t0 + timedelta(hours=hours))
            entry = cache.rows.get(KEY)
            later = rng.choice([budget, budget, 9000])  # a larger budget than was kept for
            text, answered = block(cache, now, later, use_kept=True)
            reference = MemoryCache(list(cache.facts.values()))
            assert text == block(reference, now, later, use_kept=False)[0], (hours, budget)
            held += answered
            cache.rows[KEY] = entry  # each later moment against the first choice
    assert held > 150  # most later moments are answered by the kept candidates


def test_records_written_since_are_taken_in_as_every_record_would_see_them() -> None:
    rng = random.Random(21)
    held = 0
    for _ in range(40):
        t = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 10**7))
        facts = random_facts(rng, t, rng.choice([30, 200]))
        budget = rng.choice([2500, 6000])
        cache = MemoryCache(facts)
        block(cache, timestamp(t), budget, use_kept=False)
        for _step in range(8):
            for _ in range(rng.choice([0, 1, 1, 3, 40])):  # edits, adds, closes, removals
                write_randomly(rng, cache, t)
            t += timedelta(hours=rng.choice([0, 0.5, 5, 48, -2]))
            now = timestamp(t)
            text, answered = block(cache, now, budget, use_kept=True)
            reference = MemoryCache(list(cache.facts.values()))
            assert text == block(reference, now, budget, use_kept=False)[0]
            held += answered
    assert held > 100  # most primes after a few writes are answered without reading all


def write_randomly(rng: random.Random, cache: MemoryCache, t: datetime) -> None:
    keys = sorted(cache.facts)
    roll = rng.random()
    if roll < 0.2 or not keys:  # a new memory, often the newest and most valued
        key = f"n{len(cache.log):05d}"
        new = random_facts(rng, t, 1)[0]
        new.update(key=key, updated=timestamp(t), priority=rng.choice(["HIGH", "LOW"]))
        cache.write(key, new)
    elif roll < 0.3:
        cache.write(rng.choice(keys), None)  # removed (purged, or gone with a checkout)
    else:
        key = rng.choice(keys)
        new = copy(cache.facts[key])
        field = rng.choice(["introduction", "priority", "category", "status", "feedback"])
        new[field] = {
            "introduction": f"edited {rng.random()}",
            "priority": rng.choice(["HIGH", "MEDIUM", "LOW"]),
            "category": rng.choice(["a", "b", "z", None]),
            "status": rng.choice(["open", "closed"]),
            "feedback": {"POSITIVE": rng.choice([0, 5]), "NEGATIVE": 0},
        }[field]
        new["updated"] = rng.choice([new["updated"], timestamp(t)])
        cache.write(key, new)


def test_left_out_memories_that_come_to_outrank_the_kept_ones_are_not_missed() -> None:
    # New MEDIUM memories outrank year-old HIGH ones today; in 300 days the HIGH ones lead
    # (priority outlasts recency), though none of them was among the kept candidates.
    t0 = datetime(2026, 6, 1, tzinfo=UTC)
    facts = []
    for i in range(120):
        young = i % 2 == 0
        written = t0 - timedelta(days=i / 2 if young else 400 + i)
        facts.append(
            {
                "key": f"k{i:03d}",
                "introduction": f"{'young' if young else 'old'} fact {i}",
                "category": "x",
                "scope": "project",
                "status": "open",
                "priority": "MEDIUM" if young else "HIGH",
                "expires": None,
                "created": timestamp(written),
                "updated": None,
                "feedback": {},
            }
        )
    cache = MemoryCache(facts)
    today, _ = block(cache, timestamp(t0), 2800, use_kept=False)
    entry = cache.rows[KEY]
    assert all(r["priority"] == "MEDIUM" for r in cache.kept(KEY)[2]["candidates"])
    assert "old fact" not in today
    for days in (1, 300):
        later = timestamp(t0 + timedelta(days=days))
        cache.rows[KEY] = entry
        text, answered = block(cache, later, 2800, use_kept=True)
        assert text == block(MemoryCache(facts), later, 2800, use_kept=False)[0]
        assert answered == (days == 1)  # the bound lets it stand a day later, not 300 days
    assert "old fact" in text


def test_a_moment_without_a_zone_is_utc(ws: Path) -> None:
    # It failed the session start with a traceback (naive and aware times do not subtract).
    naive = prime_text(str(ws), now=NOW.rstrip("Z"), budget=4000)
    assert naive == fresh(ws, NOW, budget=4000)
    assert "unavailable" not in naive
    assert prime_text(str(ws), now="2026-05-29", budget=4000) == fresh(
        ws, "2026-05-29T00:00:00.000Z", budget=4000
    )


def test_a_damaged_kept_row_is_never_what_fails_a_prime(ws: Path) -> None:
    first = prime_text(str(ws), now=NOW, budget=4000)
    from nxm.store import Store

    store = Store(find(str(ws)))
    store.sync()
    entry = store.cache.kept(KEY)[2]
    for damaged in (
        {**entry, "candidates": [{"no": "key"}, *entry["candidates"]]},
        {**entry, "bounds": [["gotchas", [["x", 1]]]]},
        {**entry, "totals": "nonsense"},
        ["not", "a", "dict"],
    ):
        store.cache.keep(KEY, damaged)
        assert prime_text(str(ws), now=NOW, budget=4000) == first
