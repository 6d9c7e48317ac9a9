"""Reviewing memory changes on a real git repository: `nxm diff` (each memory a branch changed,
once, old → new; what a merge brought from main is not the branch's), `nxm log` (every event,
newest first, with its commit), and the `nxs prime` line.

The branch of `review` makes exactly 20 memory changes of every kind; the test states, for each
memory, the kind and the old → new values a reviewer must see.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from nxm import lifecycle
from nxm.cli import app as nxm_app
from nxm.service import MemoryService
from nxs.cli import app as nxs_app
from nxs.workspace import find
from tests.conftest import make_workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
runner = CliRunner()
GIT_ENV = {"GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "Ann",
           "GIT_COMMITTER_EMAIL": "a@a", "GIT_AUTHOR_DATE": "2026-06-01T12:00:00Z",
           "GIT_COMMITTER_DATE": "2026-06-01T12:00:00Z"}  # fmt: skip


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(root.parent)}
    got = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    assert got.returncode == 0, got.stderr
    return got.stdout.strip()


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


def cli(root: Path, *args: str, code: int = 0) -> Any:
    got = runner.invoke(nxm_app, [*args, "--json", "--workspace", str(root)])
    assert got.exit_code == code, got.stdout
    return orjson.loads(got.stdout_bytes)


class Clock:
    """Writes through the service, each a minute after the last, by a named actor."""

    def __init__(self, root: Path) -> None:
        self.root, self.minute = root, 0

    def __call__(self, name: str, actor: str = "alice", **kw: Any) -> Any:
        self.minute += 1
        at = {"now": f"2026-05-01T{8 + self.minute // 60:02d}:{self.minute % 60:02d}:00.000Z",
              "actor": actor}  # fmt: skip
        svc = MemoryService(find(self.root))  # a new store a call, as a new process has
        try:
            if name in ("promote", "feedback", "revert"):
                return getattr(lifecycle, name)(svc, **at, **kw)
            return getattr(svc, name)(**at, **kw)
        finally:
            svc.release()

    def add(self, n: str, **kw: Any) -> str:
        body = f"Fact {n}: something this project holds true, in a body of its own."
        kw.setdefault("category", "notes")
        return self("add", body=body, introduction=f"Fact {n} holds", **kw)["memory"]["key"]


@pytest.fixture
def review(tmp_path: Path) -> dict[str, Any]:
    """main with 16 memories; branch feat with 20 memory changes (2 uncommitted) and a merge
    of main, which changed M16 and added B1 after the branch started."""
    root = make_workspace(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    w = Clock(root)
    k = {f"M{i}": w.add(f"M{i}") for i in range(1, 17) if i != 13}
    k["M13"] = w.add("M13", layer="TASK")
    w("close", key=k["M7"])
    w("forget", key=k["M9"])
    w("forget", key=k["M11"])
    w("update", key=k["M14"], introduction="M14 as main first corrected it")
    base = commit(root, "main: 16 memories")
    git(root, "checkout", "-qb", "feat")
    k["A1"], k["A2"] = w.add("A1", actor="bob"), w.add("A2")
    k["A3"] = w.add("A3")
    w("close", key=k["A3"])  # added and closed on the branch: listed once, as added (closed)
    k["A4"] = w.add("A4", supersedes=k["M1"])
    w("update", key=k["M2"], body="Fact M2, corrected.\nIt has a second line now.")
    w("update", key=k["M3"], introduction="Fact M3 holds, said better")
    w("update", key=k["M4"], priority="HIGH")
    w("classify", key=k["M5"], category="gotchas", scope="item", refs=["ENG-7"])
    commit(root, "feat: first half")
    w("close", key=k["M6"], actor="carol")
    w("reopen", key=k["M7"])
    w("forget", key=k["M8"])
    w("restore", key=k["M9"])
    for signal in ("POSITIVE", "POSITIVE", "NEGATIVE"):
        w("feedback", key=k["M10"], signal=signal, actor="dave")
    w("purge", key=k["M11"])
    w("update", key=k["M12"], body="Fact M12, rewritten before it was closed.")
    w("close", key=k["M12"])
    w("promote", key=k["M13"])
    w("revert", key=k["M14"])
    commit(root, "feat: second half")
    git(root, "checkout", "-q", "main")
    w("update", key=k["M16"], introduction="M16 changed on main after the branch")
    k["B1"] = w.add("B1")
    main = commit(root, "main: moves on")
    git(root, "checkout", "-q", "feat")
    git(root, "merge", "-q", "--no-edit", "main")
    w("update", key=k["M15"], introduction="M15 edited, not committed")  # the working tree
    k["A5"] = w.add("A5")  # untracked
    return {"root": root, "keys": k, "base": base, "main": main}


def test_a_branch_with_20_memory_changes_lists_each_once_with_old_and_new(
    review: dict[str, Any],
) -> None:
    k = review["keys"]
    got = cli(review["root"], "diff")
    by_key = {c["key"]: c for c in got["changes"]}
    assert len(got["changes"]) == len(by_key) == got["total"] == 20  # each memory once
    assert {name for name, key in k.items() if key in by_key} == {
        *(f"A{i}" for i in range(1, 6)),
        *(f"M{i}" for i in range(1, 16)),
    }  # fmt: skip  (M16 and B1 came from main)
    assert got["base"] == "main" and got["merge_base"] == review["main"]
    assert got["uncommitted"] is True

    def fields(name: str) -> dict[str, tuple[Any, Any]]:
        return {c["field"]: (c.get("old"), c.get("new")) for c in by_key[k[name]]["changes"]}

    expected_kind = {
        "A1": "added", "A2": "added", "A3": "added", "A4": "added", "A5": "added",
        "M1": "superseded", "M2": "changed", "M3": "changed", "M4": "changed", "M5": "changed",
        "M6": "closed", "M7": "reopened", "M8": "forgotten", "M9": "restored", "M10": "feedback",
        "M11": "purged", "M12": "closed", "M13": "changed", "M14": "changed", "M15": "changed",
    }  # fmt: skip
    assert {n: by_key[k[n]]["kind"] for n in expected_kind} == expected_kind
    assert [c["kind"] for c in got["changes"]] == sorted(
        (c["kind"] for c in got["changes"]),
        key=["added", "changed", "reopened", "restored", "closed", "superseded", "forgotten",
             "purged", "feedback"].index,
    )  # fmt: skip
    assert got["counts"] == {"added": 5, "changed": 7, "reopened": 1, "restored": 1, "closed": 2,
                             "superseded": 1, "forgotten": 1, "purged": 1, "feedback": 1}  # fmt: skip
    # added: no field changes, the status it ended in, what it replaces
    assert all(by_key[k[f"A{i}"]]["changes"] == [] for i in range(1, 6))
    assert by_key[k["A3"]]["status"] == "closed" and by_key[k["A1"]]["status"] == "open"
    assert by_key[k["A1"]]["actors"] == ["bob"]
    assert by_key[k["A4"]]["replaces"] == [k["M1"]] and by_key[k["M1"]]["replaced_by"] == k["A4"]
    # changed: old → new of each field
    assert fields("M2") == {"body": ("Fact M2: something this project holds true, in a body of "
                                     "its own.", "Fact M2, corrected.")}  # fmt: skip
    body = by_key[k["M2"]]["changes"][0]
    assert (body["lines_added"], body["lines_removed"]) == (2, 1)
    assert fields("M3") == {"introduction": ("Fact M3 holds", "Fact M3 holds, said better")}
    assert fields("M4") == {"priority": ("MEDIUM", "HIGH")}
    assert fields("M5") == {"category": ("notes", "gotchas"), "scope": ("project", "item"),
                            "refs": ([], ["ENG-7"])}  # fmt: skip
    assert set(fields("M13")) == {"layer", "expires"} and fields("M13")["layer"] == (
        "TASK", "PERMANENT")  # fmt: skip
    assert fields("M14") == {"introduction": ("M14 as main first corrected it", "Fact M14 holds")}
    assert fields("M15") == {"introduction": ("Fact M15 holds", "M15 edited, not committed")}
    # status changes: old → new status, and the fields changed with it
    assert [(by_key[k[n]]["was"], by_key[k[n]]["status"]) for n in ("M6", "M7", "M8", "M9")] == [
        ("open", "closed"),
        ("closed", "open"),
        ("open", "forgotten"),
        ("forgotten", "open"),
    ]
    assert by_key[k["M6"]]["actors"] == ["carol"] and by_key[k["M6"]]["changes"] == []
    assert set(fields("M12")) == {"body"}
    assert by_key[k["M10"]]["votes"] == {"NEGATIVE": 1, "POSITIVE": 2}
    assert by_key[k["M10"]]["changes"] == [] and by_key[k["M10"]]["events"] == 3
    assert by_key[k["M11"]]["introduction"] == "Fact M11 holds"  # purged: as it was
    # which are only in the working tree
    assert {n for n in expected_kind if by_key[k[n]]["uncommitted"]} == {"M15", "A5"}


def test_markdown_has_a_section_per_kind_with_keys_and_old_new(review: dict[str, Any]) -> None:
    k = review["keys"]
    md = cli(review["root"], "diff", "--markdown")["markdown"]
    assert md.startswith("### Memory changes\n\n**20 memories** against `main`")
    assert "including uncommitted changes): 5 added, 7 changed, 1 reopened" in md
    for heading in ("Added (5)", "Changed (7)", "Closed (2)", "Superseded (1)", "Purged (1)",
                    "Feedback (1)"):  # fmt: skip
        assert f"\n#### {heading}\n" in md
    assert f"- `{k['A4'][:8]}` Fact A4 holds — replaces `{k['M1'][:8]}` Fact M1 holds\n" in md
    assert f"- `{k['A3'][:8]}` Fact A3 holds (closed)\n" in md
    assert "  - priority: MEDIUM → HIGH\n" in md
    assert "  - introduction: Fact M3 holds → Fact M3 holds, said better\n" in md
    assert "  - body: +2 −1 lines “Fact M2, corrected.”\n" in md
    assert "— votes: 1 negative, 2 positive" in md
    # the human view says the same, and --markdown prints the block itself
    text = runner.invoke(nxm_app, ["diff", "--workspace", str(review["root"])]).stdout
    assert "priority: MEDIUM → HIGH" in text and "uncommitted" in text
    raw = runner.invoke(nxm_app, ["diff", "--markdown", "--workspace", str(review["root"])])
    assert raw.stdout == md


def test_committed_only_and_an_explicit_base(review: dict[str, Any]) -> None:
    root, k = review["root"], review["keys"]
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feat: the rest")
    got = cli(root, "diff")
    assert got["total"] == 20 and got["uncommitted"] is False
    # against the commit the branch started from, main's own later changes count too
    older = cli(root, "diff", review["base"])
    assert {c["key"] for c in older["changes"]} - {c["key"] for c in got["changes"]} == {
        k["M16"], k["B1"]}  # fmt: skip
    # against HEAD: nothing is left
    assert cli(root, "diff", "HEAD")["changes"] == []


def test_a_bad_base_or_no_git_is_refused_and_writes_nothing(
    review: dict[str, Any], tmp_path: Path
) -> None:
    root = review["root"]
    before = git(root, "status", "--porcelain")
    bad = cli(root, "diff", "no-such-branch", code=3)
    assert bad["code"] == "NO_SUCH_BASE" and "no-such-branch" in bad["message"]
    argv = ["diff", "--json", "--workspace", str(root), "--", "--output=x"]  # an option for git
    got = runner.invoke(nxm_app, argv)
    assert got.exit_code == 2 and orjson.loads(got.stdout_bytes)["kind"] == "validation"
    assert git(root, "status", "--porcelain") == before and not (root / "x").exists()
    git(root, "checkout", "-q", "-f", "main")
    on_main = cli(root, "diff", code=4)
    assert on_main["code"] == "ON_DEFAULT_BRANCH" and "nxm diff" in on_main["suggestion"]
    bare = make_workspace(tmp_path / "nogit")
    assert cli(bare, "diff", code=4)["code"] == "NOT_A_REPOSITORY"
    git(bare, "init", "-q", "-b", "main")
    assert cli(bare, "diff", code=4)["code"] == "NO_COMMIT"
    git(bare, "checkout", "-q", "-b", "trunk")
    commit(bare, "first")
    assert cli(bare, "diff", code=4)["code"] == "NO_DEFAULT_BRANCH"  # neither main nor master
    assert cli(bare, "diff", "trunk")["total"] == 0


def test_on_the_default_branch_with_an_upstream_it_compares_with_the_upstream(
    review: dict[str, Any], tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(review["root"]), str(clone))  # origin/HEAD -> origin/feat
    git(clone, "checkout", "-q", "-b", "main", "origin/main")
    got = cli(clone, "diff")  # the default is origin's: feat
    assert got["base"] == "origin/feat"
    git(clone, "remote", "set-head", "origin", "main")
    got = cli(clone, "diff")
    assert got["note"] == "HEAD is main, the default branch: compared with origin/main"
    assert got["total"] == 0
    svc = MemoryService(find(clone))
    svc.close(key=review["keys"]["M2"], now="2026-06-02T00:00:00.000Z", actor="eve")
    svc.release()
    assert [c["kind"] for c in cli(clone, "diff")["changes"]] == ["closed"]


def test_log_is_newest_first_with_commits_and_filters(review: dict[str, Any]) -> None:
    root, k = review["root"], review["keys"]
    before = git(root, "status", "--porcelain")
    got = cli(root, "log", "--limit", "500")
    events = got["events"]
    assert got["git"] is True and got["total"] == len(events)
    assert [e["at"] for e in events] == sorted((e["at"] for e in events), reverse=True)
    first = events[0]  # A5's add, in the working tree only
    assert (first["key"], first["type"], first["uncommitted"], first["commit"]) == (
        k["A5"], "CREATED", True, None)  # fmt: skip
    subjects = {(e["key"], e["type"]): e["commit"]["subject"] for e in events if e["commit"]}
    assert subjects[(k["M6"], "CLOSED")] == "feat: second half"
    assert subjects[(k["M3"], "UPDATED")] == "feat: first half"
    assert subjects[(k["M16"], "UPDATED")] == "main: moves on"  # through the merge
    assert subjects[(k["M1"], "CREATED")] == "main: 16 memories"
    m15 = [e for e in events if e["key"] == k["M15"]]
    assert [(e["type"], e["uncommitted"]) for e in m15] == [("UPDATED", True), ("CREATED", False)]
    assert "before" not in m15[0]["data"] and m15[0]["introduction"] == "M15 edited, not committed"
    assert all(e["commit"] for e in events if not e["uncommitted"])
    # filters
    assert {e["actor"] for e in cli(root, "log", "--by", "dave")["events"]} == {"dave"}
    assert cli(root, "log", "--by", "dave")["total"] == 3
    one = cli(root, "log", "--key", k["M10"][:6])["events"]
    assert [e["type"] for e in one] == ["FEEDBACK_SUBMITTED"] * 3 + ["CREATED"]
    late = cli(root, "log", "--since", "2026-05-01T08:30:00Z", "--limit", "500")["events"]
    assert late and all(e["at"] >= "2026-05-01T08:30:00" for e in late)
    assert len(late) < len(events)
    assert len(cli(root, "log", "--limit", "3")["events"]) == 3
    assert cli(root, "log", "--since", "last week", code=2)["kind"] == "validation"
    assert git(root, "status", "--porcelain") == before  # a read changed nothing


def test_log_outside_git_lists_events_without_commits(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "nogit")
    key = Clock(root).add("X")
    got = cli(root, "log")
    assert got["git"] is False
    assert [(e["key"], e["commit"], e["uncommitted"]) for e in got["events"]] == [
        (key, None, False)]  # fmt: skip


def test_both_verbs_answer_the_same_bytes_on_both_seams(review: dict[str, Any]) -> None:
    from nxs.mcp.server import Seam

    root = review["root"]
    seam = Seam(str(root), groups="all")
    for tool, argv, arguments in (
        ("memory_diff", ["diff", "--markdown"], {"markdown": True}),
        ("memory_diff", ["diff", "nope"], {"base": "nope"}),
        ("memory_log", ["log", "--by", "alice", "--limit", "7"], {"by": "alice", "limit": 7}),
    ):
        got = runner.invoke(nxm_app, [*argv, "--json", "--workspace", str(root)])
        text, failed = seam.call(tool, arguments)
        assert got.stdout == text and failed is (got.exit_code != 0)


def test_prime_says_what_the_branch_changed_only_on_a_branch(review: dict[str, Any]) -> None:
    root = review["root"]

    def prime() -> str:
        got = runner.invoke(nxs_app, ["prime"], env={"NXS_WORKSPACE": str(root)})
        assert got.exit_code == 0
        return got.stdout

    line = ("This branch changed 20 memories against main (5 added, 7 changed, 1 reopened, "
            "1 restored, 2 closed, 1 superseded, 1 forgotten, 1 purged, 1 feedback); "
            "`nxm diff` shows them.\n")  # fmt: skip
    assert line in prime()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feat: the rest")
    git(root, "checkout", "-q", "main")
    assert "This branch" not in prime()  # the default branch
    git(root, "checkout", "-qb", "empty")
    assert "This branch" not in prime()  # nothing changed


def test_a_team_store_on_object_storage_has_no_branch_to_diff(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from nxm.review import diff
    from nxs.errors import ConflictError

    service = SimpleNamespace(store=SimpleNamespace(remote=True), ws=find(make_workspace(tmp_path)))
    with pytest.raises(ConflictError) as info:
        diff(service, now="2026-06-01T00:00:00Z")
    assert info.value.code == "NOT_IN_GIT"


def test_a_workspace_in_a_subdirectory_of_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "mono"
    root = make_workspace(repo / "services" / "billing")
    git(repo, "init", "-q", "-b", "main")
    w = Clock(root)
    old = w.add("S1")
    commit(repo, "billing memories")
    git(repo, "checkout", "-qb", "feat")
    w("close", key=old)
    commit(repo, "close S1")
    new = w.add("S2")
    got = cli(root, "diff")
    assert [(c["key"], c["kind"], c["uncommitted"]) for c in got["changes"]] == [
        (new, "added", True), (old, "closed", False)]  # fmt: skip
    events = cli(root, "log")["events"]
    assert [(e["key"], e["type"], e["commit"] and e["commit"]["subject"]) for e in events] == [
        (new, "CREATED", None),
        (old, "CLOSED", "close S1"),
        (old, "CREATED", "billing memories"),
    ]


def test_after_a_rebase_the_branch_is_its_own_changes_and_the_log_its_new_commits(
    tmp_path: Path,
) -> None:
    root = make_workspace(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    w = Clock(root)
    shared, mine = w.add("R1"), w.add("R2")
    commit(root, "main")
    git(root, "checkout", "-qb", "feat")
    w("update", key=mine, priority="LOW")
    commit(root, "feat: R2 is LOW")
    git(root, "checkout", "-q", "main")
    w("close", key=shared)
    theirs = w.add("R3")
    commit(root, "main: close R1, add R3")
    git(root, "checkout", "-q", "feat")
    git(root, "rebase", "-q", "main")
    got = cli(root, "diff")
    assert [(c["key"], c["kind"]) for c in got["changes"]] == [(mine, "changed")]
    assert got["merge_base"] == git(root, "rev-parse", "main")
    log = {(e["key"], e["type"]): e["commit"]["sha"] for e in cli(root, "log")["events"]}
    assert log[(mine, "UPDATED")] == git(root, "rev-parse", "HEAD")  # the rebased commit
    assert log[(theirs, "CREATED")] == log[(shared, "CLOSED")] == git(root, "rev-parse", "main")


def test_a_memory_the_branch_only_confirmed_is_listed_as_confirmed(tmp_path: Path) -> None:
    from nxm import stale

    root = make_workspace(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    w = Clock(root)
    key = w.add("C1")
    commit(root, "memory")
    git(root, "checkout", "-qb", "feat")
    svc = MemoryService(find(root))
    try:
        stale.confirm(svc, key=key, now="2026-05-02T08:00:00.000Z", actor="bob")
    finally:
        svc.release()
    (entry,) = cli(root, "diff")["changes"]
    assert (entry["key"], entry["kind"], entry["changes"]) == (key, "confirmed", [])
