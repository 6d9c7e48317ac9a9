"""Reviewing memory changes (issue 35): `nxm diff`, `nxm log` and the `nxs prime` line on a
store of 2,000 memories with a history of 200 commits.

    python -m bench.review                     # 2,000 memories, 200 commits
    python -m bench.review --memories 10000    # a bigger store, the same shape

`build` writes the store as nxs writes it (`nxm.store.text.render`, one history line an event),
commit by commit on ``main``: each commit adds its share of the memories and appends an event
(an update, a vote, a close) to a few older ones, so the history files have ~3 events each and
git's history is long. Then a branch ``feat`` gets 20 memory changes through the service (adds,
updates, closes, a forget, votes), the last two left uncommitted.

Measured, each the median of 7 runs after one warm-up (the first command reads every file):
the prime line in process (`nxm.review.branch_line`: what it adds to a session start), and end
to end, as a person runs them: `nxs prime` on the branch, `nxm diff`, `nxm log` (20 events),
`nxm log --limit 2000`, and `nxm log --key` of a memory created in the first commit (its oldest
event is found only at the end of git's history).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})  # fmt: skip


def build(root: Path, memories: int, commits: int) -> list[str]:
    """The repository at ``root``; the keys in the order they were made."""
    import random

    from nxm.record import event, key_for, new_record
    from nxm.store.text import event_line, render
    from tests.conftest import make_workspace

    rng = random.Random(7)
    make_workspace(root)
    _git(root, "init", "-q", "-b", "main")
    mem, hist = root / ".nxs" / "memories", root / ".nxs" / "history"
    for folder in (mem, hist):
        folder.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    records = {}
    per = max(1, memories // commits)
    for c in range(commits):
        at = f"2026-{1 + c * 10 // commits:02d}-{1 + c % 28:02d}T09:{c % 60:02d}:00.000Z"
        actor = ("alice", "bob", "carol", "claude-code")[c % 4]
        for i in range(len(keys), min(memories, len(keys) + per)):
            body = f"Fact {i} about the {('billing', 'ledger', 'search')[i % 3]} service."
            r = new_record(key=key_for(body), body=body, introduction=f"Fact {i} holds",
                           category=("conventions", "decisions", "gotchas")[i % 3])  # fmt: skip
            keys.append(r["key"])
            records[r["key"]] = r
            (mem / f"{r['key']}.md").write_bytes(render(r))
            (hist / f"{r['key']}.jsonl").write_bytes(event_line(event("CREATED", at, actor)))
        for key in rng.sample(keys, min(len(keys), 2 * per)):
            r = records[key]
            kind = rng.choice(("UPDATED", "FEEDBACK_SUBMITTED", "FEEDBACK_SUBMITTED", "CLOSED"))
            if kind == "UPDATED":
                before = {"introduction": r["introduction"]}
                r["introduction"] += " (checked)"
                e = event(kind, at, actor, fields=["introduction"], before=before)
            elif kind == "CLOSED" and r["status"] == "open":
                r["status"] = "closed"
                e = event(kind, at, actor, **{"from": "open", "to": "closed"})
            else:
                e = event("FEEDBACK_SUBMITTED", at, actor, signal="POSITIVE")
            (mem / f"{key}.md").write_bytes(render(r))
            with (hist / f"{key}.jsonl").open("ab") as fh:
                fh.write(event_line(e))
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", f"commit {c}")
    return keys


def branch(root: Path, keys: list[str]) -> None:
    """20 memory changes on ``feat``: 18 committed, 2 left in the working tree."""
    from nxm import lifecycle
    from nxm.service import MemoryService
    from nxs.workspace import find

    _git(root, "checkout", "-qb", "feat")
    svc = MemoryService(find(root))
    at = {"now": "2026-12-01T10:00:00.000Z", "actor": "dana"}
    for i in range(6):
        svc.add(body=f"New fact {i} of the branch.", introduction=f"Branch fact {i}", **at)
    for key in keys[:5]:
        svc.update(key=key, introduction="Corrected on the branch", **at)
    for key in keys[5:9]:
        if svc.show(key=key)["memory"]["status"] == "open":
            svc.close(key=key, **at)
        else:
            svc.reopen(key=key, **at)
    svc.forget(key=keys[9], **at)
    for key in keys[10:12]:
        lifecycle.feedback(svc, key=key, signal="NEGATIVE", **at)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "branch work")
    for key in keys[12:14]:
        svc.update(key=key, priority="HIGH", **at)
    svc.release()


def _timed(argv: list[str], env: dict[str, str], runs: int = 7) -> float:
    subprocess.run(argv, env=env, capture_output=True, check=True)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nxs-review-") as tmp:
        base = Path(tmp)
        for name in ("config", "data", "cache"):
            os.environ[f"NXS_{name.upper()}_DIR"] = str(base / name)
        root = base / "repo"
        started = time.perf_counter()
        keys = build(root, args.memories, args.commits)
        branch(root, keys)
        print(f"built {args.memories:,} memories, {args.commits} commits "
              f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
        env = {**os.environ, "NXS_WORKSPACE": str(root), "PYTHONPATH": os.getcwd()}
        py = [sys.executable, "-c"]
        nxm, nxs = "from nxm.cli import main; main()", "from nxs.cli import main; main()"
        from nxm.review import branch_line

        line = branch_line(root / ".nxs")
        print(f"prime line: {line.strip()}")
        times = []
        for _ in range(7):
            start = time.perf_counter()
            branch_line(root / ".nxs")
            times.append(time.perf_counter() - start)
        print(f"prime line in process: {statistics.median(times) * 1000:.1f} ms")
        for label, argv in (
            ("nxs prime", [*py, nxs, "prime"]),
            ("nxm diff", [*py, nxm, "diff"]),
            ("nxm log", [*py, nxm, "log"]),
            ("nxm log --limit 2000", [*py, nxm, "log", "--limit", "2000"]),
            (f"nxm log --key {keys[0][:8]}", [*py, nxm, "log", "--key", keys[0]]),
        ):
            print(f"{label}: {_timed(argv, env) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
