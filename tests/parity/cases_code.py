"""Parity cases for memory and code (nxm/ops/code.py): `stale` and `confirm`.

``_moved`` makes the seeded workspace a git repository whose code moved after the memories were
committed: the item memory's ref tests/test_store.py is deleted. Commits are made with fixed
names and dates, so both seams see the same shas.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.parity.state import KEYS

ITEM, DECISION = KEYS[5], KEYS[1]


def _git(root: Path, *args: str) -> None:
    at = "@1780000000 +0000"
    env = {"GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@p", "GIT_COMMITTER_NAME": "p",
           "GIT_COMMITTER_EMAIL": "p@p", "GIT_AUTHOR_DATE": at, "GIT_COMMITTER_DATE": at,
           "HOME": str(root), "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _moved(root: Path) -> None:
    (root / "tests").mkdir()
    (root / "tests" / "test_store.py").write_text("def test_store():\n    assert True\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the code and its memories")
    _git(root, "rm", "-q", "tests/test_store.py")
    _git(root, "commit", "-qm", "drop the store test")


CASES = [
    {"id": "stale-flagged", "tool": "memory_stale", "arguments": {}, "setup": _moved},
    {"id": "stale-outside-git", "tool": "memory_stale", "arguments": {}},
    {
        "id": "confirm-flagged",
        "tool": "memory_confirm",
        "arguments": {"key": ITEM[:6]},
        "setup": _moved,
    },  # fmt: skip
    {
        "id": "confirm-unflagged",
        "tool": "memory_confirm",
        "arguments": {"key": DECISION},
        "setup": _moved,
    },  # fmt: skip
    {"id": "confirm-unknown", "tool": "memory_confirm", "arguments": {"key": "ffff"}},
]
