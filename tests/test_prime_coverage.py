"""The prime index on a 500-memory store: every category and scope represented within the byte
budget, recency and feedback counted (nxm/coverage.py, docs/mcp.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from nxm.coverage import picks, worth
from nxs.prime import prime_text
from nxs.workspace import init
from tests.test_prime import NOW, record

# category: (how many, priority); the big two are HIGH, as in the store the issue describes
SHAPE = {
    "conventions": (150, "HIGH"),
    "decisions": (150, "HIGH"),
    "gotchas": (60, "MEDIUM"),
    "owners": (30, "MEDIUM"),
    "processes": (25, "LOW"),
    "runbooks": (15, "MEDIUM"),
    None: (10, "MEDIUM"),
}
OTHER_SCOPES = {"item": 30, "user": 10, "session": 20}
HEADING = re.compile(r"\[(.+)\] (\d+) of (\d+):")


def store_of_500(root: Path) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for category, (count, priority) in SHAPE.items():
        for n in range(count):
            day = 1 + n % 28
            r = record(
                f"{category} body {n}",
                f"{category or 'misc'} fact {n:03d} says its rule plainly",
                category=category,
                priority=priority,
                created=f"2026-0{1 + n % 4}-{day:02d}T00:00:00.000Z",
            )
            records[f"{category}-{n}"] = r
    for scope, count in OTHER_SCOPES.items():
        for n in range(count):
            refs = [f"ENG-{n}"] if scope == "item" else []
            records[f"{scope}-{n}"] = record(
                f"{scope} body {n}", f"{scope} memory {n}", scope=scope, refs=refs
            )
    # Same category, priority and age: feedback decides; a fresh update beats an old one.
    records["gotchas-0"]["feedback"] = {"POSITIVE": 4, "NEGATIVE": 0, "NEUTRAL": 0}
    records["gotchas-1"]["feedback"] = {"POSITIVE": 0, "NEGATIVE": 3, "NEUTRAL": 0}
    records["owners-5"]["updated"] = "2026-05-28T00:00:00.000Z"
    assert sum(1 for r in records.values() if r["scope"] == "project") == 440
    assert len(records) == 500
    write(root, list(records.values()))
    return records


def write(root: Path, records: list[dict[str, Any]]) -> None:
    """The memory files and their histories (feedback and updates are events there)."""
    from nxm.store.text import event_line, reconciled, render

    for folder in ("memories", "history"):
        (root / ".nxs" / folder).mkdir(parents=True, exist_ok=True)
    for r in records:
        (root / ".nxs" / "memories" / f"{r['key']}.md").write_bytes(render(r))
        events = b"".join(event_line(e) for e in reconciled(r))
        (root / ".nxs" / "history" / f"{r['key']}.jsonl").write_bytes(events)


@pytest.fixture
def big(tmp_path: Path) -> tuple[Path, dict[str, dict[str, Any]]]:
    ws, _ = init(tmp_path / "proj", ["memory"])
    return ws.root, store_of_500(ws.root)


def sections(text: str) -> dict[str, list[str]]:
    """Each category heading's index lines, in order."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = HEADING.fullmatch(line)
        if heading:
            current = heading[1]
            out[current] = []
        elif line.startswith("- ") and current is not None:
            out[current].append(line)
    return out


def test_every_category_and_scope_is_represented_within_the_budget(big: Any) -> None:
    root, records = big
    for budget in (6000, 4000):
        text = prime_text(str(root), now=NOW, budget=budget)
        assert len(text.encode()) <= budget
        shown = sections(text)
        assert set(shown) == {c or "no category" for c in SHAPE}  # gotchas, owners, processes too
        assert all(shown.values())
        for line in text.splitlines():  # each heading counts its lines and its category's total
            if heading := HEADING.fullmatch(line):
                category = None if heading[1] == "no category" else heading[1]
                assert int(heading[2]) == len(shown[heading[1]])
                assert int(heading[3]) == SHAPE[category][0]
        listed = sum(len(lines) for lines in shown.values())
        assert f"({440 - listed} more memories are not shown here" in text
        assert (
            "Not in this index: 30 item-scoped (`nxm list --scope item --ref ITEM`); "
            "20 session summaries (`nxm recall` finds them); 10 user-scoped" in text
        )
        # The large HIGH categories get more lines, never all of them.
        assert len(shown["conventions"]) > len(shown["processes"])
        assert listed - len(shown["conventions"]) - len(shown["decisions"]) >= len(SHAPE) - 2


def test_feedback_and_recency_order_a_category(big: Any) -> None:
    root, records = big
    shown = sections(prime_text(str(root), now=NOW))
    key = {name: r["key"] for name, r in records.items()}
    assert shown["gotchas"][0].startswith(f"- {key['gotchas-0']}")  # 4 POSITIVE
    assert not any(key["gotchas-1"] in line for line in shown["gotchas"])  # 3 NEGATIVE
    assert shown["owners"][0].startswith(f"- {key['owners-5']}")  # updated yesterday


def test_worth_counts_priority_recency_and_feedback() -> None:
    now = NOW
    base = record("w", "w", created="2026-05-29T00:00:00.000Z")
    from datetime import datetime

    at = datetime.fromisoformat(now.replace("Z", "+00:00"))
    assert (
        worth({**base, "priority": "HIGH"}, at)
        > worth(base, at)
        > worth({**base, "priority": "LOW"}, at)
    )
    old = {**base, "created": "2026-02-28T00:00:00.000Z"}  # 90 days: half way to 0.5
    assert worth(old, at) == pytest.approx(worth(base, at) * 0.75, rel=0.01)
    liked = {**base, "feedback": {"POSITIVE": 2, "NEGATIVE": 0, "NEUTRAL": 0}}
    assert worth(liked, at) == pytest.approx(worth(base, at) * 1.5, rel=0.01)
    hated = {**base, "feedback": {"POSITIVE": 0, "NEGATIVE": 9, "NEUTRAL": 0}}
    assert worth(hated, at) == pytest.approx(worth(base, at) * 0.25, rel=0.01)
    # Coverage first: one of each category before a second of any.
    mixed = [
        record(f"h{n}", "h", category="big", priority="HIGH", created=base["created"])
        for n in range(5)
    ] + [record("l", "l", category="small", priority="LOW", created=base["created"])]
    order = [r["category"] for r in picks(mixed, now)]
    assert order[:2] == ["big", "small"] and order.count("big") == 5


def test_the_choice_is_deterministic(big: Any) -> None:
    root, _ = big
    assert prime_text(str(root), now=NOW) == prime_text(str(root), now=NOW)


def test_the_candidates_read_give_the_picks_of_every_memory(tmp_path: Path) -> None:
    """Prime reads only the most recent few of each category and worth class; whatever number
    of picks a budget takes, they are those `picks` makes of every open memory."""
    import random

    from nxm.coverage import Candidates, Exhausted
    from nxm.store import open_store
    from nxs.workspace import find

    rng = random.Random(31)
    root, _ = init(tmp_path / "proj", ["memory"])
    records = []
    for n in range(400):
        r = record(
            f"random body {n}", f"random fact {n:03d}",
            category=rng.choice(["a", "b", None]),  # few classes: each far larger than EACH
            priority=rng.choice(["HIGH", "MEDIUM"]),
            created=f"2026-0{rng.randrange(1, 6)}-{rng.randrange(1, 29):02d}T{n % 24:02d}:00:00.000Z",
            updated=rng.choice([None] * 8 + ["2026-06-15T00:00:00.000Z", "2026-05-20T12:00:00.000Z"]),
            layer=rng.choice(["PERMANENT"] * 5 + ["TASK"]),
            expires=rng.choice([None, "2026-05-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"]),
            status=rng.choice(["open"] * 8 + ["closed"]),
            feedback={"POSITIVE": rng.choice([0, 0, 0, 1]), "NEGATIVE": 0, "NEUTRAL": 0},
        )  # fmt: skip
        r["updated"] = r["updated"] or r["created"]
        records.append(r)
    write(root.root, records)
    store = open_store(find(root.root))
    store.sync()
    every = [r for r in store.records().values() if r["status"] == "open"]
    live = [r for r in every if not r["expires"] or r["expires"] > NOW]
    want = [r["key"] for r in picks(live, NOW)]
    for taken in range(1, len(want) + 1):  # every stop a budget could make
        found = Candidates(store.cache, NOW)
        while True:
            try:
                got = []
                for r in found.picks():
                    got.append(r["key"])
                    if len(got) == taken:
                        break
                break
            except Exhausted:
                continue
        assert got == want[:taken], taken
