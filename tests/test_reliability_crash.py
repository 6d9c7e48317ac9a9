"""``kill -9`` a writer, or a compaction, at random moments: nothing acknowledged is lost.

Each write trial starts a worker process (the `nxm` app in process, writing adds, updates,
classifies, closes, reopens and feedback without pause), lets it acknowledge 0-11 writes, and
kills it with SIGKILL at a moment chosen by the trial's strategy: after a random delay, while a
write is in flight (its journal exists), just after a write's files landed (a log grew), or
while NEXUS_MEMORY.md is being replaced (its temporary file exists). Each compaction trial kills
`nxm compact` as soon as it writes its first new index file, or 0.01-0.3 s after that. After
every kill:

- the store opens; the memory files (read directly) hold every record whole, and the search
  index, brought up to date, has exactly one row per memory file;
- every acknowledged add and event is there exactly once; the only unacknowledged event allowed
  is the one of the write in flight at the kill;
- nothing half-written is visible: the record cache equals the files, feedback counts equal
  the feedback events, NEXUS_MEMORY.md is whole;
- a compaction changed no record;
- the next write succeeds, and leaves the cache and NEXUS_MEMORY.md equal to the files.

Quick: 5 write trials, 2 compaction trials. Full (``NXS_RELIABILITY_FULL=1``): 24 and 20, the
compactions as real `nxm compact` processes.
"""

from __future__ import annotations

import collections
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import make_workspace

from nxm.projection import HEADER, derive
from nxm.service import MemoryService
from nxm.store.text import LOCAL
from nxs.workspace import find
from tests.reliability.common import FULL, child_env, events_of, size, store_docs, workers
from tests.reliability.writers import (
    compactor,
    crash_writer,
    read_acks,
    shared_body,
    stamp,
    wait_for,
)

WRITE_TRIALS = size(5, 24)
COMPACT_TRIALS = size(2, 20)
SEED = int(os.environ.get("NXS_RELIABILITY_SEED", "8"))
WRITE_KILLS = ("mid-commit", "after-commit", "mid-projection", "random")
COMPACT_KILLS = ("first-new-file", "later")
DEADLINE = 120


def _logs(root: Path) -> int:
    """The total size of the event logs: it grows when a write's files land."""
    path = root / ".nxs" / "history"
    return sum(p.stat().st_size for p in path.iterdir()) if path.exists() else 0


def _lance_files(root: Path) -> set[str]:
    from nxm.store.local import Local

    base = Local(root).lance / "memories.lance"
    return {str(Path(d, f).relative_to(base)) for d, _, files in os.walk(base) for f in files}


def _wait_for_acks(out: Path, count: int) -> None:
    """Let a writer acknowledge ``count`` writes first, so kills land at different depths."""
    deadline = time.monotonic() + DEADLINE
    while len(read_acks(out)) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def _exited(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie its parent has not reaped yet counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] in "ZX"
    except (OSError, IndexError):
        return True


def _kill_when(pid: int, how: str, root: Path, rng: random.Random) -> str:
    """Kill ``pid`` with SIGKILL at the moment ``how`` names; return what was seen."""
    journal = root / ".nxs" / "journal"
    logs = _logs(root)
    files = _lance_files(root)
    if how == "random":
        time.sleep(rng.uniform(0.05, 1.5))
        seen = how
    else:
        deadline = time.monotonic() + DEADLINE
        seen = "deadline"
        while time.monotonic() < deadline:
            if how == "mid-commit" and journal.exists():
                seen = how
            elif how == "after-commit" and _logs(root) > logs:
                seen = how
            elif how == "mid-projection" and any(
                n.startswith(".NEXUS_MEMORY.md.") for n in os.listdir(root)
            ):
                seen = how
            elif how in ("first-new-file", "later") and _lance_files(root) - files:
                if how == "later":  # some way into the compaction, not at its first write
                    time.sleep(rng.uniform(0.01, 0.3))
                seen = how
            if seen != "deadline":
                break
            if _exited(pid):
                return "finished"
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:  # it finished first
        return "finished"
    return seen


def _projection_is_whole(text: str) -> None:
    """NEXUS_MEMORY.md is one complete rendering: header, count, and every index line."""
    assert text.startswith(HEADER)
    head = re.search(r"\n(\d+) open memories\.\n\n", text)
    assert head, text[:400]
    index = re.findall(
        r'^- \[`[0-9a-f]{16}`\]\(\.nxs/memories/[0-9a-f]{16}\.md "[^"]*"\) ', text, flags=re.M
    )
    assert len(index) == int(head.group(1)) == text[head.end() :].count("\n")
    assert text.endswith("\n")


def _committed(records: Any) -> dict[str, dict[str, Any]]:
    return {k: {f: v for f, v in r.items() if f not in LOCAL} for k, r in records.items()}


def _after_kill(
    root: Path, expected: collections.Counter[Any], in_flight: set[tuple[str, str]]
) -> dict[str, dict[str, Any]]:
    """Check the store a kill left; return its records."""
    service = MemoryService(find(root))
    records = service.store.records()  # opens (finishing a write the kill cut short)
    docs, doubled = store_docs(root)
    assert doubled == []
    assert _committed(dict(records.items())) == _committed(docs)
    stored = events_of(docs)
    assert expected - stored == collections.Counter(), "acknowledged writes lost"
    extra = stored - expected
    assert all((actor, at) in in_flight for _, _, actor, at in extra), extra
    assert len({(actor, at) for _, _, actor, at in extra}) <= len(in_flight)
    for doc in docs.values():
        signals = collections.Counter(
            e["data"]["signal"] for e in doc["events"] if e["type"] == "FEEDBACK_SUBMITTED"
        )
        assert {s: n for s, n in doc["feedback"].items() if n} == dict(signals)
    _projection_is_whole((root / "NEXUS_MEMORY.md").read_text())
    return docs


def _next_write(root: Path, n: int, expected: collections.Counter[Any]) -> None:
    service = MemoryService(find(root))
    at = stamp(60, n)
    added = service.add(
        body=f"Written after kill {n}: the store took it (token afterkill{n}).",
        introduction=f"after kill {n}",
        now=at,
        actor="after",
    )
    assert added["created"] is True
    expected[(added["memory"]["key"], "CREATED", "after", at)] += 1
    docs, _ = store_docs(root)
    assert _committed(dict(service.store.records().items())) == _committed(docs)
    assert (root / "NEXUS_MEMORY.md").read_bytes() == derive(docs.values())


def test_killed_writers_lose_nothing_acknowledged(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "proj")
    seed = MemoryService(find(root))
    expected: collections.Counter[Any] = collections.Counter()
    shared = []
    for k in range(3):
        at = stamp(59, k)
        key = seed.add(body=shared_body(k), introduction=f"shared {k}", now=at, actor="seed")
        shared.append(key["memory"]["key"])
        expected[(shared[-1], "CREATED", "seed", at)] += 1
    env = child_env(tmp_path / "home")
    rng = random.Random(SEED)
    in_flight: set[tuple[str, str]] = set()
    seen = []
    for trial in range(WRITE_TRIALS):
        tag, how = f"k{trial}", WRITE_KILLS[trial % len(WRITE_KILLS)]
        out, ready = tmp_path / f"{tag}.jsonl", tmp_path / f"{tag}.ready"
        proc = workers().Process(
            target=crash_writer,
            args=(str(root), tag, trial, SEED + trial, shared, env, str(out), str(ready)),
        )
        proc.start()
        try:
            wait_for(ready)
            _wait_for_acks(out, rng.randrange(0, 12))
            seen.append(_kill_when(proc.pid, how, root, rng))
        finally:
            proc.kill()
            proc.join(60)
        acks = read_acks(out)
        assert all(a["ok"] or a["kind"] == "conflict" for a in acks), acks
        for a in acks:
            if not a["ok"]:
                continue
            if a["op"] == "add" and a["created"]:
                expected[(a["key"], "CREATED", a["w"], a["at"])] += 1
            elif "event" in a:
                expected[(a["key"], a["event"], a["w"], a["at"])] += 1
        in_flight.add((tag, stamp(trial, len(acks) + 1)))
        context = f"trial {trial} ({how}, seen {seen[-1]}, {len(acks)} acknowledged, seed {SEED})"
        try:
            _after_kill(root, expected, in_flight)
            _next_write(root, trial, expected)
        except AssertionError as exc:
            raise AssertionError(f"{context}: {exc}") from exc
    acknowledged = sum(expected.values())
    print(f"write kills: {collections.Counter(seen)}; {acknowledged} acknowledged events checked")


def test_interrupted_compaction_changes_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "proj")
    service = MemoryService(find(root))
    env = child_env(tmp_path / "home")
    rng = random.Random(SEED)
    expected: collections.Counter[Any] = collections.Counter()
    outcomes = []
    for trial in range(COMPACT_TRIALS):
        for i in range(12):  # a fragment each: something to compact
            at = stamp(trial, i)
            body = f"Compaction trial {trial} memory {i} (token comp{trial}x{i})."
            key = service.add(body=body, introduction=f"c{trial}.{i}", now=at, actor="c")
            expected[(key["memory"]["key"], "CREATED", "c", at)] += 1
        before, _ = store_docs(root)
        how = COMPACT_KILLS[trial % len(COMPACT_KILLS)]
        ready, done = tmp_path / f"c{trial}.ready", tmp_path / f"c{trial}.done"
        if FULL:  # a real `nxm compact` process
            proc: Any = subprocess.Popen(
                ["nxm", "compact", "--json", "--workspace", str(root)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        else:
            proc = workers().Process(target=compactor, args=(str(root), env, str(ready), str(done)))
            proc.start()
            wait_for(ready)
        try:
            seen = _kill_when(proc.pid, how, root, rng)
        finally:
            proc.kill()
            proc.wait(60) if FULL else proc.join(60)
        finished = done.exists()
        outcomes.append("finished first" if finished else f"killed ({seen})")
        context = f"compaction trial {trial} ({how}: {outcomes[-1]}, seed {SEED})"
        try:
            docs = _after_kill(root, expected, set())
            assert docs == before
            compacted = MemoryService(find(root)).store.compact()
            assert compacted["fragments_after"] <= compacted["fragments_before"]
            assert store_docs(root)[0] == before
            _next_write(root, 100 + trial, expected)
        except AssertionError as exc:
            raise AssertionError(f"{context}: {exc}") from exc
        service = MemoryService(find(root))
    print(f"compactions: {collections.Counter(outcomes)}; {len(before)} memories each time")
