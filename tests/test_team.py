"""A team's ordinary git life with one store: three clones of a bare origin, a month of adds,
updates, votes, closes on branches, merged, rebased, cherry-picked, reverted and pulled.

After every step: no git command was refused, reads left `git status` clean, no file was left
out (no ``problems``), and every verb agrees with the committed files (NEXUS_MEMORY.md is what
the memories make). Each clone is set up by nothing but its first nxs command, as a teammate's.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

import nxm
from nxm import projection
from nxm.cli import app as nxm_app
from nxs.cli import app as nxs_app
from tests.conftest import make_workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
CODE = str(Path(nxm.__file__).resolve().parents[1])  # the driver imports this tree's nxm
runner = CliRunner()
PEOPLE = ("alice", "bob", "carol")
TOPICS = ("billing", "ledger", "search", "deploys", "auth", "exports", "queues", "alerts")


def git(root: Path, *args: str) -> str:
    got = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=False,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": os.environ["PATH"],
             "PYTHONPATH": CODE, "GIT_EDITOR": "true"},
    )  # fmt: skip
    assert got.returncode == 0, f"git {' '.join(args)} refused:\n{got.stdout}{got.stderr}"
    return got.stdout


def nxm(root: Path, *args: str, at: str | None = None, actor: str = "t") -> Any:
    seam = ["--now", at, "--actor", actor] if at else []
    result = runner.invoke(nxm_app, [*args, *seam, "--json", "--workspace", str(root)])
    assert result.exit_code == 0, result.stdout
    return orjson.loads(result.stdout_bytes) if result.stdout_bytes.strip() else None


def records(root: Path) -> list[dict[str, Any]]:
    result = runner.invoke(nxm_app, ["export", "--workspace", str(root)])
    assert result.exit_code == 0
    return [orjson.loads(line) for line in result.stdout_bytes.splitlines()]


def check(root: Path) -> None:
    """Reads answer what the files say, report nothing left out, and dirty nothing."""
    every = records(root)
    files = {p.stem for p in (root / ".nxs" / "memories").glob("*.md")}
    assert {r["key"] for r in every} == files  # nothing vanished
    listed = nxm(root, "list", "--status", "all", "--page-size", "200")
    assert "problems" not in listed and listed["total"] == len(files)
    opened = {r["key"] for r in every if r["status"] == "open"}
    assert {m["key"] for m in nxm(root, "list", "--page-size", "200")["memories"]} == opened
    for r in every[:3]:
        shown = nxm(root, "show", r["key"])["memory"]
        assert {k: shown[k] for k in ("status", "priority", "body")} == {
            k: r[k] for k in ("status", "priority", "body")
        }
    nxm(root, "search", "billing ledger deploys", "--mode", "keyword")
    prime = runner.invoke(nxs_app, ["prime"], env={"NXS_WORKSPACE": str(root)})
    assert prime.exit_code == 0
    index = root / "NEXUS_MEMORY.md"
    if every or index.exists():  # made by the first write
        assert index.read_bytes() == projection.derive(every)
    assert git(root, "status", "--porcelain") == ""


def test_a_month_of_a_team_of_three(tmp_path: Path) -> None:
    rng = random.Random(20261206)
    start = make_workspace(tmp_path / "start")
    git(start, "init", "-q", "-b", "main")
    git(start, "add", "-A")
    git(start, "commit", "-qm", "nxs")
    git(tmp_path, "clone", "-q", "--bare", str(start), "origin.git")
    clones = {}
    for person in PEOPLE:
        git(tmp_path, "clone", "-q", "origin.git", person)
        clones[person] = tmp_path / person
    count = 0

    def moment(day: int) -> str:
        return f"2026-06-{day:02d}T{rng.randrange(8, 18):02d}:{rng.randrange(60):02d}:00.000Z"

    def work(root: Path, day: int, who: str, branch: str) -> list[str]:
        """A few writes on ``branch`` (created from main), committed one by one."""
        nonlocal count
        git(root, "checkout", "-qB", branch)
        commits = []
        for _ in range(rng.randrange(1, 4)):
            known = [r for r in records(root) if r["status"] == "open"]
            roll = rng.random()
            if roll < 0.5 or len(known) < 3:
                count += 1
                topic = rng.choice(TOPICS)
                nxm(root, "add", f"Fact {count}: the {topic} service keeps {count} copies.",
                    "--introduction", f"{topic} keeps {count} copies", "--category", topic,
                    at=moment(day), actor=who)  # fmt: skip
            elif roll < 0.7:
                nxm(root, "feedback", rng.choice(known)["key"], rng.choice(["POSITIVE", "NEGATIVE"]),
                    at=moment(day), actor=who)  # fmt: skip
            elif roll < 0.85:
                chosen = rng.choice(known)
                other = rng.choice(
                    [p for p in ("HIGH", "MEDIUM", "LOW") if p != chosen["priority"]]
                )
                nxm(root, "update", chosen["key"], "--priority", other, at=moment(day), actor=who)
            else:
                nxm(root, "close", rng.choice(known)["key"], at=moment(day), actor=who)
            git(root, "add", "-A")
            git(root, "commit", "-qm", f"{who} day {day}")
            commits.append(git(root, "rev-parse", "HEAD").strip())
        return commits

    for day in range(1, 15):
        who = PEOPLE[day % 3]
        root = clones[who]
        git(root, "checkout", "-q", "main")
        git(root, "pull", "-q", "--no-rebase", "origin", "main")
        check(root)
        done = work(root, day, who, f"{who}-{day}")
        git(root, "checkout", "-q", "main")
        how = ("merge", "rebase", "cherry-pick", "merge")[day % 4]
        if how == "merge":
            git(root, "merge", "-q", "--no-ff", f"{who}-{day}", "-m", "merge")
        elif how == "rebase":
            git(root, "checkout", "-q", f"{who}-{day}")
            git(root, "rebase", "-q", "main")
            git(root, "checkout", "-q", "main")
            git(root, "merge", "-q", "--ff-only", f"{who}-{day}")
        else:
            for sha in done:
                git(root, "cherry-pick", sha)
        check(root)
        if day % 7 == 0:  # a change taken back: the revert of the latest commit of work
            git(
                root,
                "revert",
                "--no-edit",
                git(root, "log", "-1", "--no-merges", "--format=%H").strip(),
            )
            check(root)
        # somebody else pushed in the meantime: the pull merges concurrent work
        other = clones[PEOPLE[(day + 1) % 3]]
        git(other, "checkout", "-q", "main")
        git(other, "pull", "-q", "--no-rebase", "origin", "main")
        work(other, day, PEOPLE[(day + 1) % 3], f"side-{day}")
        git(other, "checkout", "-q", "main")
        git(other, "merge", "-q", f"side-{day}")
        git(other, "push", "-q", "origin", "main")
        git(root, "pull", "-q", "--no-rebase", "origin", "main")
        check(root)
        git(root, "push", "-q", "origin", "main")
    for root in clones.values():
        git(root, "checkout", "-q", "main")
        git(root, "pull", "-q", "--no-rebase", "origin", "main")
        check(root)
    ends = {person: records(root) for person, root in clones.items()}
    assert ends["alice"] == ends["bob"] == ends["carol"]
    assert len(ends["alice"]) >= 10


def test_a_second_worktree_embeds_nothing_and_answers_at_once(tmp_path: Path) -> None:
    from nxm.service import MemoryService
    from nxs.workspace import find

    root = make_workspace(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    for i in range(5):
        nxm(root, "add", f"Service {i} is deployed by team {i}.", "--introduction",
            f"Service {i} deploys", at="2026-06-01T10:00:00.000Z")  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-qm", "five")
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    other = MemoryService(find(tmp_path / "wt"))
    embedded: list[int] = []
    real = other._vectors
    other._vectors = lambda rs: embedded.append(len(rs)) or real(rs)  # type: ignore[method-assign]
    got = other.search(query="who deploys service 3", limit=5, now="2026-06-02T10:00:00.000Z")
    assert got["results"] and embedded in ([], [0])
    assert {m["processing"] for m in other.list()["memories"]} == {"READY"}
    assert git(tmp_path / "wt", "status", "--porcelain") == ""
