"""Parity cases for `diff` and `log` (nxm/ops/review.py), on the seeded state committed to git.

``_branch`` commits the seeded workspace on ``main`` at a fixed date (so both runs of a case
have the same commits), then on ``feat`` closes the decision (committed) and corrects the
gotcha's introduction (left in the working tree), by hand as an edit would.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from nxm.record import event
from nxm.store.text import event_line
from tests.parity.state import KEYS

CONVENTION, DECISION, GOTCHA, CLOSED, FORGOTTEN, ITEM, TASK = KEYS
FIXED = {"GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "Ann",
         "GIT_COMMITTER_EMAIL": "a@a", "GIT_AUTHOR_DATE": "2026-05-28T12:00:00Z",
         "GIT_COMMITTER_DATE": "2026-05-28T12:00:00Z"}  # fmt: skip


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, **FIXED})  # fmt: skip


def _edit(root: Path, key: str, old: str, new: str, kind: str, **data: object) -> None:
    md = root / ".nxs" / "memories" / f"{key}.md"
    md.write_text(md.read_text().replace(old, new, 1))
    with (root / ".nxs" / "history" / f"{key}.jsonl").open("ab") as log:
        log.write(event_line(event(kind, "2026-05-28T11:00:00.000Z", "alice", **data)))


def _branch(root: Path) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the seeded memories")
    _git(root, "checkout", "-qb", "feat")
    _edit(
        root,
        DECISION,
        "status: open",
        "status: closed",
        "CLOSED",
        **{"from": "open", "to": "closed"},
    )
    _git(root, "commit", "-qam", "close the decision")
    md = (root / ".nxs" / "memories" / f"{GOTCHA}.md").read_text()
    intro = next(ln for ln in md.splitlines() if ln.startswith("introduction: "))
    _edit(root, GOTCHA, intro, "introduction: Keep heavy imports lazy", "CLASSIFIED",
          fields=["introduction"])  # fmt: skip


CASES = [
    {"id": "diff-markdown", "tool": "memory_diff", "arguments": {"markdown": True}, "setup": _branch},
    {"id": "diff-bad-base", "tool": "memory_diff", "arguments": {"base": "nope"}, "setup": _branch},
    {"id": "diff-outside-git", "tool": "memory_diff", "arguments": {}},
    {"id": "log-default", "tool": "memory_log", "arguments": {}, "setup": _branch},
    {"id": "log-filtered", "tool": "memory_log",
     "arguments": {"by": "alice", "since": "2026-05-01", "limit": 3}, "setup": _branch},
    {"id": "log-key", "tool": "memory_log", "arguments": {"key": DECISION[:6]}, "setup": _branch},
    {"id": "log-bad-since", "tool": "memory_log", "arguments": {"since": "soon"}},
]  # fmt: skip
