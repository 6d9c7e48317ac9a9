"""The store travels through git: branches, merges, conflicts, checkouts, clones, hand edits.

Each test drives real git in a temporary repository and the `nxm` verbs in process (a new
store per call, as a new process would have), and checks every verb against the files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from nxm.cli import app as nxm_app
from nxs.cli import app as nxs_app
from tests.conftest import make_workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
NOW = "2026-06-01T10:00:00.000Z"
runner = CliRunner()


def git(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    got = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=False,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    if ok:
        assert got.returncode == 0, got.stdout + got.stderr
    return got


def nxm(root: Path, *args: str) -> Any:
    result = runner.invoke(nxm_app, [*args, "--json", "--workspace", str(root)])
    assert result.exit_code == 0, result.stdout
    return orjson.loads(result.stdout_bytes) if result.stdout_bytes.strip() else None


def nxm_bytes(root: Path, *args: str) -> bytes:
    result = runner.invoke(nxm_app, [*args, "--workspace", str(root)])
    assert result.exit_code == 0, result.stdout
    return result.stdout_bytes


def write(root: Path, *args: str, now: str = NOW) -> Any:
    return nxm(root, *args, "--now", now, "--actor", "tester")


def add(root: Path, body: str, intro: str) -> str:
    return write(root, "add", body, "--introduction", intro, "--category", "notes")["memory"]["key"]


def prime(root: Path) -> str:
    result = runner.invoke(nxs_app, ["prime"], env={"NXS_WORKSPACE": str(root)})
    assert result.exit_code == 0
    return result.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def keys_of(root: Path) -> set[str]:
    return {p.stem for p in (root / ".nxs" / "memories").glob("*.md")}


def agrees_with_files(root: Path) -> dict[str, Any]:
    """Every verb answers exactly the memories whose files are on disk; returns them."""
    keys = keys_of(root)
    listed = nxm(root, "list", "--status", "all", "--page-size", "100")
    assert {m["key"] for m in listed["memories"]} == keys
    shown = {k: nxm(root, "show", k)["memory"] for k in keys}
    exported = [orjson.loads(x) for x in nxm_bytes(root, "export").splitlines()]
    mine = ("processing", "model")  # this machine's: not exported
    assert {r["key"]: r for r in exported} == {
        k: {f: v for f, v in r.items() if f not in mine} for k, r in shown.items()
    }
    for mode in ("keyword", "semantic", "hybrid"):
        found = nxm(root, "search", "fact", "--mode", mode, "--limit", "20", "--status", "all")
        assert {r["key"] for r in found["results"]} <= keys
    for key, record in shown.items():
        found = nxm(root, "search", record["introduction"], "--mode", "keyword", "--limit", "20",
                    "--status", "all")  # fmt: skip
        assert key in [r["key"] for r in found["results"]]
        assert nxm(root, "history", key, "--limit", "100")["total"] == len(record["events"])
    text = prime(root)
    for key, record in shown.items():
        assert (key in text) == (record["status"] == "open" and record["scope"] == "project")
    projection = (root / "NEXUS_MEMORY.md").read_text()
    for key, record in shown.items():
        assert (f"[`{key}`]" in projection) == (record["status"] == "open")
    return shown


def test_two_branches_merge_with_no_conflict_and_every_verb_shows_the_union(repo: Path) -> None:
    m = add(repo, "Deploys need two approvals from the owning team.", "Two approvals per deploy")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    a_keys = {
        add(repo, f"Branch A fact {i}: the cache keeps {i} hours.", f"A fact {i}") for i in range(3)
    }
    write(repo, "update", m, "--introduction", "Two approvals per deploy",
          "--body", "Deploys need two approvals from the owning team and one from SRE.")  # fmt: skip
    commit(repo, "a")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-qb", "b")
    b_keys = {
        add(repo, f"Branch B fact {i}: the queue holds {i} jobs.", f"B fact {i}") for i in range(3)
    }
    write(repo, "feedback", m, "POSITIVE")
    commit(repo, "b")

    merged = git(repo, "merge", "-q", "a", "-m", "merge a")
    assert "CONFLICT" not in merged.stdout + merged.stderr
    assert keys_of(repo) == {m} | a_keys | b_keys
    shown = agrees_with_files(repo)  # the merge driver derived NEXUS_MEMORY.md too
    assert shown[m]["body"].endswith("and one from SRE.")
    assert shown[m]["feedback"]["POSITIVE"] == 1
    types = [e["type"] for e in shown[m]["events"]]
    assert sorted(types) == ["CREATED", "FEEDBACK_SUBMITTED", "UPDATED"]
    assert git(repo, "status", "--porcelain").stdout.strip() == ""  # reads wrote nothing


def test_the_same_body_edited_on_two_branches_conflicts_in_that_file_only(repo: Path) -> None:
    m = add(repo, "The release train leaves on Tuesdays.", "Release train on Tuesdays")
    other = add(repo, "Staging resets every night.", "Staging resets nightly")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    write(repo, "update", m, "--introduction", "Release train on Tuesdays",
          "--body", "The release train leaves on Tuesdays at 10:00.")  # fmt: skip
    commit(repo, "a")
    git(repo, "checkout", "-q", "main")
    write(repo, "update", m, "--introduction", "Release train on Tuesdays",
          "--body", "The release train leaves on Wednesdays.", now="2026-06-02T10:00:00.000Z")  # fmt: skip
    commit(repo, "main")

    merged = git(repo, "merge", "a", "-m", "merge", ok=False)
    assert merged.returncode != 0
    conflicted = git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert conflicted == [f".nxs/memories/{m}.md"]
    # while unresolved, the other memories are served and this one says what is wrong
    assert nxm(repo, "show", other)["memory"]["key"] == other
    broken = runner.invoke(nxm_app, ["show", m, "--json", "--workspace", str(repo)])
    assert orjson.loads(broken.stdout_bytes)["code"] == "MEMORY_IN_CONFLICT"

    path = repo / ".nxs" / "memories" / f"{m}.md"
    text = path.read_text()
    head = text[: text.index("<<<<<<<")]
    path.write_text(head + "The release train leaves on Wednesdays at 10:00.\n")
    commit(repo, "resolved")
    shown = agrees_with_files(repo)
    assert shown[m]["body"] == "The release train leaves on Wednesdays at 10:00."
    assert [e["type"] for e in shown[m]["events"]].count("UPDATED") == 2


def test_a_checkout_is_seen_by_every_verb_and_a_write_after_it_brings_nothing_back(
    repo: Path,
) -> None:
    base = add(repo, "Everything is in UTC.", "All times are UTC")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "wide")
    wide = {
        add(repo, f"Wide fact {i}: service {i} owns topic {i}.", f"Wide fact {i}")
        for i in range(50)
    }
    nxm(repo, "search", "service", "--mode", "hybrid")  # the index now holds the 50
    commit(repo, "wide")
    git(repo, "checkout", "-q", "main")
    assert agrees_with_files(repo).keys() == {base}
    found = nxm(repo, "search", "Wide fact service topic", "--limit", "20")
    assert {r["key"] for r in found["results"]} <= {base}
    write(repo, "close", base)
    assert keys_of(repo) == {base}  # nothing of the other branch was written back
    assert git(repo, "status", "--porcelain").stdout.split() == [
        "M", ".nxs/history/" + base + ".jsonl", "M", ".nxs/memories/" + base + ".md",
        "M", "NEXUS_MEMORY.md",
    ]  # fmt: skip
    commit(repo, "closed")
    git(repo, "checkout", "-q", "wide")
    shown = agrees_with_files(repo)
    assert shown.keys() == wide | {base} and shown[base]["status"] == "open"


def test_a_hand_edit_is_what_the_next_search_finds(repo: Path) -> None:
    key = add(repo, "The payments webhook retries for 72 hourz.", "Webhook retries for 72 hours")
    nxm(repo, "search", "hourz", "--mode", "keyword")
    path = repo / ".nxs" / "memories" / f"{key}.md"
    path.write_text(path.read_text().replace("hourz", "hours"))  # in place, same inode
    assert nxm(repo, "search", "hourz", "--mode", "keyword")["results"] == []
    found = nxm(repo, "search", "hours", "--mode", "keyword")["results"]
    assert [r["key"] for r in found] == [key]
    assert nxm(repo, "show", key)["memory"]["body"] == "The payments webhook retries for 72 hours."


def test_an_add_changes_at_most_three_committed_files(repo: Path) -> None:
    add(repo, "First memory, so NEXUS_MEMORY.md exists.", "First")
    commit(repo, "first")
    add(repo, "A second memory about the billing cron.", "Second")
    changed = git(repo, "status", "--porcelain", "--untracked-files=all").stdout.splitlines()
    assert len(changed) <= 3, changed
    for i in range(13):
        add(repo, f"Memory {i} of a batch of thirteen.", f"Batch {i}")
    git(repo, "add", "-A")
    staged = git(repo, "diff", "--cached", "--name-only").stdout.split()
    assert len(staged) <= 40, staged
    assert all(not name.startswith(".nxs/index") for name in staged)


def test_a_fresh_clone_searches_what_was_committed(repo: Path, tmp_path: Path) -> None:
    from nxm.service import MemoryService
    from nxs.workspace import find

    service = MemoryService(find(repo))
    records = [
        {"body": f"Fact {i}: team {i % 7} owns the {i}th queue of region {i % 11}.",
         "introduction": f"Queue {i} belongs to team {i % 7}", "category": "owners"}
        for i in range(1000)
    ]  # fmt: skip
    from nxm.port import import_records
    from nxm.record import key_for, new_record

    import_records(service, [new_record(key=key_for(r["body"]), created=NOW, updated=NOW,
                                        actor="tester", **r) for r in records])  # fmt: skip
    commit(repo, "a thousand memories")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert not (clone / ".nxs" / "index").exists()
    found = nxm(clone, "search", "Queue 417 belongs to team", "--mode", "keyword")
    assert found["results"][0]["key"] == key_for(records[417]["body"])
    assert len(nxm(clone, "list", "--page-size", "1")["memories"]) == 1
    assert nxm(clone, "list")["total"] == 1000


def test_the_first_search_of_a_clone_shows_its_progress_on_a_terminal(
    repo: Path, tmp_path: Path
) -> None:
    import os
    import pty
    import sys

    from tests.conftest import CODE_ENV

    (repo / ".nxs" / "memories").mkdir()
    for i in range(300):
        (repo / ".nxs" / "memories" / f"{i:016x}.md").write_text(
            f"---\nintroduction: Fact {i}\n---\n\nFact {i} about the queue.\n"
        )
    commit(repo, "300 memories written by hand")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    main, secondary = pty.openpty()
    env = {**os.environ, **CODE_ENV, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", "from nxm.cli import main; main()", "search", "queue", "--json",
         "--workspace", str(clone)],
        stdout=subprocess.PIPE, stderr=secondary, env=env, timeout=300, check=False,
    )  # fmt: skip
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert done.returncode == 0, shown.decode(errors="replace")[-2000:]
    assert orjson.loads(done.stdout)["results"]  # stdout holds only the answer
    assert b"indexing memories" in shown and b"300/300" in shown
