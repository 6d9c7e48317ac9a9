"""Nothing vanishes silently, and git's leftovers are mended with nxs: every read reports the
files it could not read (with the fix), `nxm resolve` settles a memory in a merge conflict, no
write goes over one, and `nxm doctor --fix` adopts a memory file added by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

import nxm
from nxm.cli import app as nxm_app
from nxm.store import text
from nxs.cli import app as nxs_app
from tests.conftest import make_workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
CODE = str(Path(nxm.__file__).resolve().parents[1])
NOW = "2026-06-01T10:00:00.000Z"
runner = CliRunner()


def git(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    got = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=False,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": os.environ["PATH"],
             "PYTHONPATH": CODE, "GIT_EDITOR": "true"},
    )  # fmt: skip
    if ok:
        assert got.returncode == 0, got.stdout + got.stderr
    return got


def nxm(root: Path, *args: str, code: int = 0) -> Any:
    result = runner.invoke(
        nxm_app, [*args, "--now", NOW, "--actor", "t", "--json", "--workspace", str(root)]
    )
    assert result.exit_code == code, result.stdout
    return orjson.loads(result.stdout_bytes)


def add(root: Path, body: str, intro: str, *more: str) -> str:
    return nxm(root, "add", body, "--introduction", intro, "--category", "notes", *more)["memory"][
        "key"
    ]


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    commit(root, "init")
    return root


@pytest.fixture
def conflicted(repo: Path) -> tuple[Path, str, str]:
    """A memory whose introduction and body both branches changed: git leaves it in conflict."""
    key = add(repo, "The release train leaves on Tuesdays.", "Release train on Tuesdays")
    other = add(repo, "Staging resets every night.", "Staging resets nightly")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    nxm(repo, "update", key, "--introduction", "Train: Tuesdays 10:00", "--body",
        "The release train leaves on Tuesdays at 10:00.", "--priority", "HIGH")  # fmt: skip
    commit(repo, "a")
    git(repo, "checkout", "-q", "main")
    nxm(repo, "update", key, "--introduction", "Train: Wednesdays", "--body",
        "The release train leaves on Wednesdays.")  # fmt: skip
    nxm(repo, "feedback", key, "POSITIVE")
    commit(repo, "main")
    assert git(repo, "merge", "a", "-m", "merge", ok=False).returncode != 0
    assert text.conflicted((repo / ".nxs" / "memories" / f"{key}.md").read_bytes())
    return repo, key, other


def test_a_memory_in_conflict_is_reported_by_every_read_and_served_by_none(
    conflicted: tuple[Path, str, str],
) -> None:
    repo, key, other = conflicted
    listed = nxm(repo, "list")
    assert [m["key"] for m in listed["memories"]] == [other]
    [problem] = listed["problems"]
    assert problem["file"] == f".nxs/memories/{key}.md" and "conflict" in problem["problem"]
    assert problem["fix"].startswith(f"`nxm resolve {key}`")
    assert nxm(repo, "search", "release train", "--mode", "keyword")["problems"] == [problem]
    shown = nxm(repo, "show", key[:6], code=4)
    assert shown["code"] == "MEMORY_IN_CONFLICT" and "nxm resolve" in shown["suggestion"]
    human = runner.invoke(nxm_app, ["list", "--workspace", str(repo)])
    assert f".nxs/memories/{key}.md" in human.stderr and "nxm resolve" in human.stderr
    prime = runner.invoke(nxs_app, ["prime"], env={"NXS_WORKSPACE": str(repo)}).stdout
    assert "1 memory file could not be read" in prime and "`nxm doctor`" in prime
    assert nxm(repo, "doctor")["problems"][0] == problem


def test_no_write_goes_over_a_memory_in_conflict(conflicted: tuple[Path, str, str]) -> None:
    repo, key, _ = conflicted
    path = repo / ".nxs" / "memories" / f"{key}.md"
    before = path.read_bytes()
    # what an agent does when search finds nothing: add the same text again
    again = nxm(repo, "add", "The release train leaves on Tuesdays.", "--introduction", "Train",
                code=4)  # fmt: skip
    assert again["code"] == "MEMORY_IN_CONFLICT"
    for args in (
        ["close", key],
        ["update", key, "--priority", "LOW"],
        ["feedback", key, "NEGATIVE"],
    ):
        assert nxm(repo, *args, code=4)["code"] == "MEMORY_IN_CONFLICT"
    assert path.read_bytes() == before


def test_resolve_shows_both_sides_then_keeps_one_with_both_histories(
    conflicted: tuple[Path, str, str],
) -> None:
    repo, key, _ = conflicted
    both = nxm(repo, "resolve", key[:6])
    assert both["resolved"] is False and both["labels"]["ours"] == "HEAD"
    assert both["ours"]["introduction"] == "Train: Wednesdays"
    assert both["theirs"]["introduction"] == "Train: Tuesdays 10:00"
    # the driver merged what only one side changed: both sides carry theirs' priority
    assert both["ours"]["priority"] == both["theirs"]["priority"] == "HIGH"
    assert set(both["differs"]) == {"introduction", "body"}
    done = nxm(repo, "resolve", key, "--keep", "theirs", "--body",
               "The release train leaves on Wednesdays at 10:00.")  # fmt: skip
    memory = done["memory"]
    assert (memory["introduction"], memory["priority"]) == ("Train: Tuesdays 10:00", "HIGH")
    assert memory["body"] == "The release train leaves on Wednesdays at 10:00."
    kinds = [e["type"] for e in nxm(repo, "show", key)["memory"]["events"]]
    assert kinds.count("UPDATED") == 2 and kinds[-1] == "RESOLVED"  # both branches' events
    assert "FEEDBACK_SUBMITTED" in kinds
    assert "problems" not in nxm(repo, "list")
    commit(repo, "resolved")
    assert git(repo, "status", "--porcelain").stdout == ""
    assert nxm(repo, "resolve", key, code=4)["code"] == "BAD_STATE"  # not in conflict any more


def test_a_side_that_does_not_read_is_refused_and_the_other_can_be_kept(
    conflicted: tuple[Path, str, str],
) -> None:
    repo, key, _ = conflicted
    path = repo / ".nxs" / "memories" / f"{key}.md"
    path.write_text(path.read_text().replace('"Train: Tuesdays 10:00"', '"Train: unterminated'))
    before = path.read_bytes()
    both = nxm(repo, "resolve", key)
    assert "problem" in both["theirs"] and both["ours"]["introduction"] == "Train: Wednesdays"
    refused = nxm(repo, "resolve", key, "--keep", "theirs", code=4)
    assert refused["code"] == "SIDE_UNREADABLE" and path.read_bytes() == before
    kept = nxm(repo, "resolve", key, "--keep", "ours")["memory"]
    assert kept["introduction"] == "Train: Wednesdays" and not text.conflicted(path.read_bytes())


def test_a_body_quoting_conflict_markers_reads_back_exactly(repo: Path) -> None:
    body = "A conflict looks like this:\n\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n```"
    key = add(repo, body, "What a conflict looks like")
    assert nxm(repo, "show", key)["memory"]["body"] == body
    assert "problems" not in nxm(repo, "list")


def test_misnamed_stray_and_orphaned_files_are_reported_and_a_hand_added_one_adopted(
    repo: Path,
) -> None:
    key = add(repo, "Logs go to Loki.", "Logs in Loki")
    memories = repo / ".nxs" / "memories"
    (memories / f"{key}.md").rename(memories / "logs-in-loki.md")  # renamed to a readable name
    (memories / "notes.txt").write_text("scratch")  # a stray
    (memories / "by-hand.md").write_text(  # added by hand, with no key for a name
        "---\nintroduction: Tracing goes to Tempo\ncategory: notes\n---\n\nTraces go to Tempo.\n"
    )
    got = {p["file"]: p for p in nxm(repo, "list")["problems"]}
    assert set(got) == {
        ".nxs/memories/logs-in-loki.md", ".nxs/memories/notes.txt", ".nxs/memories/by-hand.md",
        f".nxs/history/{key}.jsonl",
    }  # fmt: skip
    assert "doctor --fix" in got[".nxs/memories/by-hand.md"]["fix"]
    fixed = nxm(repo, "doctor", "--fix")
    adopted = {f["file"]: f.get("adopted") for f in fixed["fixed"] if "adopted" in f}
    assert set(adopted) == {".nxs/memories/logs-in-loki.md", ".nxs/memories/by-hand.md"}
    assert adopted[".nxs/memories/logs-in-loki.md"] == key  # its key is its body's hash
    keys = {m["key"] for m in nxm(repo, "list")["memories"]}
    assert keys == set(adopted.values())
    assert [p["file"] for p in nxm(repo, "list")["problems"]] == [".nxs/memories/notes.txt"]


def test_reads_after_a_union_merge_leave_the_tree_clean(repo: Path, tmp_path: Path) -> None:
    """A clone where nxs never ran yet merges with git's committed fallbacks (NEXUS_MEMORY.md by
    union: wrong, but no conflict); no read writes it back, the next write derives it."""
    git(repo, "checkout", "-qb", "a")
    add(repo, "Branch a's fact.", "A fact")
    commit(repo, "a")
    git(repo, "checkout", "-q", "main")
    add(repo, "Main's fact.", "Main fact")
    commit(repo, "main")
    git(tmp_path, "clone", "-q", str(repo), "clone")
    clone = tmp_path / "clone"
    git(clone, "branch", "-q", "a", "origin/a")
    git(clone, "merge", "-q", "a", "-m", "merge")  # no nxs command ran here: no driver
    index = (clone / "NEXUS_MEMORY.md").read_bytes()
    keys = [m["key"] for m in nxm(clone, "list")["memories"]]
    assert len(keys) == 2
    nxm(clone, "search", "fact")
    nxm(clone, "show", keys[0][:6])
    runner.invoke(nxs_app, ["prime"], env={"NXS_WORKSPACE": str(clone)})
    assert git(clone, "status", "--porcelain").stdout == ""
    assert (clone / "NEXUS_MEMORY.md").read_bytes() == index
    add(clone, "A third fact.", "Third fact")  # the next write derives the index again
    from nxm import projection

    exported = runner.invoke(nxm_app, ["export", "--workspace", str(clone)]).stdout_bytes
    records = [orjson.loads(line) for line in exported.splitlines()]
    assert (clone / "NEXUS_MEMORY.md").read_bytes() == projection.derive(records)
