"""Merges that understand memories: nxs's git merge driver, its formats, its set-up per clone.

Unit tests merge the three versions of each kind of committed file directly (`nxm.store.merge`);
the integration tests drive real git (merge, revert, cherry-pick, rebase, stash, pull, worktrees)
with the driver installed by `nxm.store.gitconfig.install`, and each scenario also runs without
it where that is cheap, to show the fallback (git's text and union merges) gets it wrong.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import nxm
from nxm import projection
from nxm.cli import app as nxm_app
from nxm.record import new_record
from nxm.store import gitconfig, merge, text
from tests.conftest import make_workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
NOW = "2026-06-01T10:00:00.000Z"
LATER = "2026-06-02T10:00:00.000Z"
KEY = "0123456789abcdef"
CODE = str(Path(nxm.__file__).resolve().parents[1])  # the driver imports this tree's nxm
runner = CliRunner()


# -- helpers ------------------------------------------------------------------------------------


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


def nxm_json(root: Path, *args: str) -> Any:
    result = runner.invoke(nxm_app, [*args, "--json", "--workspace", str(root)])
    assert result.exit_code == 0, result.stdout
    return orjson.loads(result.stdout_bytes) if result.stdout_bytes.strip() else None


def write(root: Path, *args: str, now: str = NOW) -> Any:
    return nxm_json(root, *args, "--now", now, "--actor", "tester")


def add(root: Path, body: str, intro: str, now: str = NOW) -> str:
    got = write(root, "add", body, "--introduction", intro, "--category", "notes", now=now)
    return got["memory"]["key"]


def exported(root: Path) -> list[dict[str, Any]]:
    result = runner.invoke(nxm_app, ["export", "--workspace", str(root)])
    assert result.exit_code == 0, result.stdout
    return [orjson.loads(x) for x in result.stdout_bytes.splitlines()]


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def memory_file(root: Path, key: str) -> Path:
    return root / ".nxs" / "memories" / f"{key}.md"


def uninstall(root: Path) -> None:
    """The clone as one where nxs never configured its driver."""
    top, common = gitconfig.repository(root)  # type: ignore[misc]
    git(top, "config", "--remove-section", "merge.nxs", ok=False)
    (common / "info" / "attributes").unlink(missing_ok=True)


def never_installs(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's writes configure nothing, as in a clone nxs never wrote in."""
    monkeypatch.setattr(gitconfig, "install", lambda root: [])


@pytest.fixture(params=["driver", "fallback"])
def repo(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository holding a workspace, with nxs's driver configured or not (the fallback)."""
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_workspace(root)  # init configures the driver: the repository is there
    if request.param == "fallback":
        uninstall(root)
        never_installs(monkeypatch)
    assert gitconfig.configured(root) is (request.param == "driver")
    commit(root, "init")
    return root


def driven(root: Path) -> bool:
    return bool(gitconfig.configured(root))


def rec(**values: Any) -> dict[str, Any]:
    values.setdefault("key", KEY)
    values.setdefault("introduction", "Release tags come from main")
    values.setdefault("body", "First paragraph.\n\nSecond paragraph.\n\nThird paragraph.")
    return new_record(**values)


def md(**values: Any) -> bytes:
    return text.render(rec(**values))


# -- memory files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ({"status": "closed"}, {"priority": "HIGH"}),
        ({"category": "ops"}, {"scope": "item"}),
        ({"refs": ["a.py"]}, {"expires": "2027-01-01"}),
        ({"introduction": "Tags from main only"}, {"metadata": {"x": 1}, "billable": True}),
        ({"body": "First paragraph, edited.\n\nSecond paragraph.\n\nThird paragraph."},
         {"body": "First paragraph.\n\nSecond paragraph.\n\nThird paragraph, edited."}),
    ],
)  # fmt: skip
def test_fields_changed_on_one_side_each_merge_cleanly(ours: dict, theirs: dict) -> None:
    out, clean = merge.memory3(md(), md(**ours), md(**theirs), ("HEAD", "b"))
    assert clean
    want = rec(**ours)
    want.update({k: v for k, v in theirs.items() if k != "body"})
    if "body" in ours:
        want["body"] = "First paragraph, edited.\n\nSecond paragraph.\n\nThird paragraph, edited."
    got = text.record_of(KEY, out, None, "merged")
    assert {n: got[n] for n in (*text.COMMITTED, "body")} == {
        n: want[n] for n in (*text.COMMITTED, "body")
    }
    assert out == text.render(want)


def test_a_field_both_sides_changed_conflicts_alone() -> None:
    out, clean = merge.memory3(
        md(),
        md(priority="HIGH", status="closed"),
        md(priority="LOW", category="ops"),
        ("HEAD", "b"),
    )
    assert not clean
    assert text.conflicted(out)
    assert b"<<<<<<< HEAD\npriority: HIGH\n=======\npriority: LOW\n>>>>>>> b\n" in out
    ours, theirs, left, right = text.sides(out)
    assert (left, right) == ("HEAD", "b")
    assert text.parse(ours, "o") == text.parse(
        md(priority="HIGH", status="closed", category="ops"), ""
    )
    assert text.parse(theirs, "t") == text.parse(
        md(priority="LOW", status="closed", category="ops"), ""
    )


def test_the_same_body_lines_changed_on_both_sides_conflict_only_there() -> None:
    body = "First paragraph.\n\nSecond paragraph.\n\nThird paragraph."
    out, clean = merge.memory3(
        md(),
        md(body=body.replace("Second", "2nd"), status="closed"),
        md(body=body.replace("Second", "Other second"), priority="HIGH"),
        ("HEAD", "b"),
    )
    assert not clean
    head, _, rest = out.partition(b"<<<<<<<")
    assert b"status: closed\npriority: HIGH\n" in head  # the fields merged
    assert b"First paragraph.\n\n" in head
    assert rest.count(b"\n=======\n") == 1 and b"Third paragraph." in rest.split(b">>>>>>> b\n")[1]


def test_add_add_conflicts_on_each_differing_field_and_agrees_on_the_rest() -> None:
    same = md(priority="HIGH")
    assert merge.memory3(b"", same, same, ("HEAD", "b")) == (same, True)
    out, clean = merge.memory3(b"", md(category="ops"), md(category="dev"), ("HEAD", "b"))
    assert not clean
    assert b"<<<<<<< HEAD\ncategory: ops\n=======\ncategory: dev\n>>>>>>> b\n" in out
    assert out.count(b"<<<<<<<") == 1  # the body and every other field agree


def test_a_side_that_does_not_parse_is_merged_as_text() -> None:
    junk = b"not front matter\n"
    out, clean = merge.memory3(md(), junk, md(priority="HIGH"), ("HEAD", "b"))
    assert not clean and out.startswith(b"<<<<<<< HEAD\nnot front matter\n")
    conflicted = out
    out, clean = merge.memory3(md(), conflicted, md(priority="LOW"), ("HEAD", "b"))
    assert not clean  # an already conflicted side is text too, never read as fields


_plain = st.text(st.characters(codec="utf-8", blacklist_categories=("Cs", "Cc")), max_size=12)
_changes = st.fixed_dictionaries(
    {},
    optional={
        "introduction": _plain.filter(lambda s: s.strip() == s and s),
        "category": st.one_of(st.none(), _plain.filter(lambda s: s.strip() == s and s)),
        "status": st.sampled_from(["open", "closed"]),
        "priority": st.sampled_from(["HIGH", "MEDIUM", "LOW"]),
        "refs": st.lists(st.sampled_from(["a.py", "b/", "ENG-1"]), max_size=2),
        "body": st.lists(st.sampled_from(["p1", "p1'", "p2", "p3", "p3'", "======="]),
                         min_size=1, max_size=4).map("\n\n".join),
    },
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ours=_changes, theirs=_changes)
def test_a_memory_merge_reads_back_as_the_merged_fields(ours: dict, theirs: dict) -> None:
    b = rec(body="p1\n\np2\n\np3")
    o, t = rec(**{"body": b["body"], **ours}), rec(**{"body": b["body"], **theirs})
    out, clean = merge.memory3(*(text.render(x) for x in (b, o, t)), ("HEAD", "b"))
    clash = [n for n in text.COMMITTED if o[n] != b[n] and t[n] != b[n] and o[n] != t[n]]
    want = {n: (t[n] if o[n] == b[n] else o[n]) for n in (*text.COMMITTED, "body")}
    if clean:
        assert not clash
        got = text.record_of(KEY, out, None, "merged")
        both = o["body"] != b["body"] and t["body"] != b["body"] and o["body"] != t["body"]
        assert {n: got[n] for n in want if n != "body" or not both} == {
            n: want[n] for n in want if n != "body" or not both
        }
        assert out == text.render(got)  # the canonical form: it round-trips
    else:
        assert text.conflicted(out)
        mine, yours, *_ = text.sides(out)  # each side reads, with its own value where they clash
        got_o, got_t = text.record_of(KEY, mine, None, "o"), text.record_of(KEY, yours, None, "t")
        for n in text.COMMITTED:
            assert (got_o[n], got_t[n]) == ((o[n], t[n]) if n in clash else (want[n], want[n])), n


# -- the body's escape and conflict markers -----------------------------------------------------

_MARKERS = st.sampled_from(
    ["<<<<<<< HEAD", "=======", ">>>>>>> b", "||||||| base", "\\=======", "\\\\<<<<<<<", "x", ""]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_MARKERS, _plain), min_size=1, max_size=8))
def test_any_body_survives_its_file_marker_lines_included(lines: list[str]) -> None:
    body = "\n".join(lines).strip("\n")
    if not body.strip():
        return
    data = text.render(rec(body=body))
    assert not text.conflicted(data)
    assert text.parse(data, "t")["body"] == body


def test_an_added_body_quoting_a_conflict_reads_back(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "w")
    body = "Resolve like this:\n\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n```"
    key = add(root, body, "How to read a conflict")
    assert nxm_json(root, "show", key)["memory"]["body"] == body
    assert b"\n\\<<<<<<< HEAD\n" in memory_file(root, key).read_bytes()


def test_a_lone_separator_is_a_heading_not_a_conflict() -> None:
    raw = b"---\nintroduction: x\n---\n\nTitle\n=======\n\ntext\n"
    assert not text.conflicted(raw)
    assert text.parse(raw, "t")["body"] == "Title\n=======\n\ntext"
    assert not text.conflicted(b"<<<<<<< a\nx\n>>>>>>> b\n")  # no separator
    assert not text.conflicted(b"=======\n<<<<<<< a\n")


@pytest.mark.parametrize("style", ["merge", "diff3", "zdiff3"])
def test_conflicted_and_sides_read_every_conflict_style(tmp_path: Path, style: str) -> None:
    files = {
        "base": b"a\nb\nc\nd\ne\nf\ng\nh\n",
        "ours": b"a\nB1\nc\nd\ne\nf\nG1\nh\n",
        "theirs": b"a\nB2\nc\nd\ne\nf\nG2\nh\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    flag = [] if style == "merge" else [f"--{style}"]
    got = subprocess.run(
        ["git", "merge-file", "-p", *flag, "-L", "HEAD", "-L", "base", "-L", "feature",
         "ours", "base", "theirs"],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    assert got.returncode == 2
    assert text.conflicted(got.stdout)
    assert (b"|||||||" in got.stdout) == (style != "merge")
    assert text.sides(got.stdout) == (files["ours"], files["theirs"], "HEAD", "feature")
    with pytest.raises(text.FileProblem, match="unresolved merge conflict markers"):
        text.parse_log(got.stdout, "log")


# -- event logs ---------------------------------------------------------------------------------


def ev(kind: str, at: str, **data: Any) -> bytes:
    return text.event_line(
        {"type": kind, "at": at, "actor": "t", **({"data": data} if data else {})}
    )


C, U1, U2 = ev("CREATED", "1"), ev("UPDATED", "2"), ev("UPDATED", "3")
NEG, POS = (
    ev("FEEDBACK_SUBMITTED", "4", signal="NEGATIVE"),
    ev("FEEDBACK_SUBMITTED", "5", signal="POSITIVE"),
)


def test_a_log_merge_is_a_multiset_of_event_lines() -> None:
    assert merge.log3(C + NEG, C + NEG + POS, C) == C + POS  # a revert of the vote
    assert merge.log3(C + U1 + U2, C, C + U1 + U2 + NEG) == C + NEG  # a cherry-pick of the vote
    assert merge.log3(C, C + U1, C + NEG) == C + U1 + NEG  # both appended
    assert merge.log3(C, C + NEG, C + NEG) == C + NEG + NEG  # the same event on both sides
    assert merge.log3(b"", C, C) == C + C
    assert merge.log3(C + U1, C, C) == C  # removed on both: once
    assert merge.log3(C, C + b'{"type": "CLO', C + U1) == C + U1  # a line cut short is left out


@settings(max_examples=200, deadline=None)
@given(*[st.lists(st.sampled_from([C, U1, U2, NEG, POS]), max_size=6) for _ in range(3)])
def test_each_event_counts_ours_plus_theirs_minus_base(b: list, o: list, t: list) -> None:
    got = merge.log3(b"".join(b), b"".join(o), b"".join(t))
    counts = collections.Counter(got.splitlines(keepends=True))
    was, mine, yours = map(collections.Counter, (b, o, t))
    for line in {*b, *o, *t}:
        assert counts[line] == max(0, mine[line] + yours[line] - was[line])
    assert merge.merge3("x/.nxs/graph.jsonl", b"".join(b), b"".join(o), b"".join(t)) == (got, True)


# -- NEXUS_MEMORY.md ----------------------------------------------------------------------------

_intro = st.text(
    st.characters(codec="utf-8", blacklist_categories=("Cs",)), min_size=1, max_size=20
)
_category = st.one_of(st.none(), st.sampled_from(["ops", "conventions", "b · c", "x_(y)_"]))


def mem(i: int, **values: Any) -> dict[str, Any]:
    values.setdefault("introduction", f"Memory {i}")
    return new_record(key=f"{i:016x}", created=f"2026-01-{1 + i % 28:02d}T00:00:00Z", **values)


_op = st.one_of(
    st.tuples(st.just("close"), st.integers(0, 9)),
    st.tuples(st.just("scope"), st.integers(0, 9)),
    st.tuples(st.just("intro"), st.integers(0, 9), _intro),
    st.tuples(st.just("priority"), st.integers(0, 9), st.sampled_from(["HIGH", "MEDIUM", "LOW"])),
    st.tuples(st.just("category"), st.integers(0, 9), _category),
    st.tuples(st.just("add"), st.integers(10, 14), _intro),
)


def apply(records: dict[str, dict], ops: list[tuple]) -> dict[str, dict]:
    out = {k: dict(r) for k, r in records.items()}
    for kind, i, *value in ops:
        key = f"{i:016x}"
        if kind == "add":
            out[key] = mem(i, introduction=value[0])
        elif key in out and out[key]["status"] == "open":  # edits of what is shown
            field = {"close": "status", "scope": "scope", "intro": "introduction"}.get(kind, kind)
            out[key][field] = {"close": "closed", "scope": "user"}.get(
                kind, value[0] if value else None
            )
    return out


def merged_records(b: dict, o: dict, t: dict) -> list[dict]:
    """The memories' own merge: field by field, ours on a true conflict."""
    out = []
    for key in {**b, **o, **t}:
        x, y, z = b.get(key), o.get(key), t.get(key)
        if y is None or z is None:
            out.append(y or z)
            continue
        r = dict(y)
        for f in y:
            if x is not None and y[f] == x[f]:
                r[f] = z[f]
        out.append(r)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.lists(st.tuples(st.sampled_from(["HIGH", "MEDIUM", "LOW"]), _category), min_size=0,
                  max_size=10),
    ours=st.lists(_op, max_size=5),
    theirs=st.lists(_op, max_size=5),
)  # fmt: skip
def test_the_index_merge_is_what_the_merged_memories_make(
    base: list, ours: list, theirs: list
) -> None:
    b = {f"{i:016x}": mem(i, priority=p, category=c) for i, (p, c) in enumerate(base)}
    o, t = apply(b, ours), apply(b, theirs)
    got = merge.index3(*(projection.derive(x.values()) for x in (b, o, t)))
    assert got == projection.derive(merged_records(b, o, t))
    assert projection.parse(got) is not None


def test_the_index_merge_of_truncated_files_counts_what_it_cannot_see(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(projection, "LIMIT", 3)
    b = {r["key"]: r for r in (mem(i, priority="LOW") for i in range(5))}
    o = b | {r["key"]: r for r in [mem(10, priority="HIGH")]}
    t = b | {r["key"]: r for r in [mem(11, priority="HIGH"), mem(12, priority="LOW")]}
    got = merge.index3(*(projection.derive(x.values()) for x in (b, o, t)))
    assert got == projection.derive((o | t).values())  # 8 open, the first 3 shown
    lines, total = projection.parse(got)  # type: ignore[misc]
    assert total == 8 and len(lines) == 3


def test_an_index_in_another_form_is_merged_as_a_union() -> None:
    old = b"# NEXUS_MEMORY.md\n\n2 open memories (1 closed not shown).\n\n- a\n- b\n"
    new = projection.derive([mem(1)])
    got = merge.index3(old, old.replace(b"- b\n", b"- b\n- c\n"), new)
    assert b"<<<<<<<" not in got and b"- c\n" in got and b"Memory 1" in got


def test_derive_is_what_a_write_makes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "w")
    keys = [add(root, f"Fact {i} about the queue.", f"Fact {i}") for i in range(4)]
    write(root, "update", keys[1], "--priority", "HIGH")
    write(root, "close", keys[2])
    write(root, "classify", keys[3], "--category", "ops")
    assert (root / projection.NAME).read_bytes() == projection.derive(exported(root))


# -- the driver ---------------------------------------------------------------------------------


def test_the_driver_writes_into_ours_and_exits_by_conflict(tmp_path: Path) -> None:
    paths = [tmp_path / n for n in ("o", "a", "b")]
    for p, data in zip(paths, (md(), md(status="closed"), md(priority="HIGH")), strict=True):
        p.write_bytes(data)
    args = [str(p) for p in paths] + ["sub/.nxs/memories/0123456789abcdef.md"]
    assert merge.main(args) == 0
    assert paths[1].read_bytes() == md(status="closed", priority="HIGH")
    paths[1].write_bytes(md(priority="LOW"))
    assert merge.main(args) == 1
    assert text.conflicted(paths[1].read_bytes())


def test_the_driver_falls_back_to_git_text_merge_on_any_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(merge, "merge3", boom)
    paths = [tmp_path / n for n in ("o", "a", "b")]
    base = b"1\n2\n3\n4\n5\n6\n7\n8\n"
    for p, data in zip(
        paths, (base, base.replace(b"2", b"2a"), base.replace(b"7", b"7b")), strict=True
    ):
        p.write_bytes(data)
    assert merge.main([*map(str, paths), "NEXUS_MEMORY.md"]) == 0
    assert paths[1].read_bytes() == b"1\n2a\n3\n4\n5\n6\n7b\n8\n"
    paths[1].write_bytes(b"1\nX\n3\n")
    paths[2].write_bytes(b"1\nY\n3\n")
    assert merge.main([*map(str, paths), "NEXUS_MEMORY.md"]) == 1
    assert text.conflicted(paths[1].read_bytes())


def test_the_driver_imports_nothing_heavy(tmp_path: Path) -> None:
    for name, data in (("o", C), ("a", C + U1), ("b", C + NEG)):
        (tmp_path / name).write_bytes(data)
    got = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "nxm.store.merge", "o", "a", "b",
         ".nxs/history/0123456789abcdef.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": CODE},
        check=False,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr[-2000:]
    assert (tmp_path / "a").read_bytes() == C + U1 + NEG
    imported = {ln.split("|")[-1].strip().split(".")[0] for ln in got.stderr.splitlines()}
    assert not imported & {"typer", "rich", "numpy", "lancedb", "pyarrow", "fastembed", "click"}


# -- the set-up per clone -----------------------------------------------------------------------


def test_install_is_idempotent_cheap_and_keeps_other_lines(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    root = tmp_path / "proj"
    root.mkdir()
    assert gitconfig.configured(root) is None and gitconfig.install(root) == []
    git(root, "init", "-q", "-b", "main")
    info = root / ".git" / "info" / "attributes"
    info.parent.mkdir(exist_ok=True)
    info.write_text("*.bin -diff\n")
    assert gitconfig.configured(root) is False
    assert gitconfig.install(root) == ["merge.nxs.name", "merge.nxs.driver", str(info)]
    assert info.read_text().startswith("*.bin -diff\n")
    assert gitconfig.configured(root) is True
    for path in (
        "NEXUS_MEMORY.md",
        ".nxs/memories/x.md",
        ".nxs/history/x.jsonl",
        ".nxs/graph.jsonl",
    ):
        assert git(root, "check-attr", "merge", path).stdout.strip().endswith(": merge: nxs")
    assert git(root, "config", "merge.nxs.driver").stdout.split()[1:] == list(gitconfig.ARGS)

    def no_process(*_: Any, **__: Any) -> Any:
        raise AssertionError("the check spawns nothing")

    monkeypatch.setattr(subprocess, "run", no_process)
    import time

    start = time.perf_counter()
    for _ in range(100):
        assert gitconfig.install(root) == []
    assert (time.perf_counter() - start) / 100 < 0.001


def test_a_driver_pointing_at_a_removed_interpreter_is_rewritten(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    gitconfig.install(root)
    git(root, "config", "merge.nxs.driver", "'/gone/python 3' -m nxm.store.merge %O %A %B %P")
    assert gitconfig.configured(root) is False
    assert gitconfig.install(root) == ["merge.nxs.driver"]
    assert gitconfig.configured(root) is True


def test_a_failure_is_said_once_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    monkeypatch.setattr(gitconfig, "_warned", False)
    monkeypatch.setattr(gitconfig, "_git_config", lambda *_: (_ for _ in ()).throw(OSError("ro")))
    assert gitconfig.install(root) == [] and gitconfig.install(root) == []
    assert capsys.readouterr().err.count("nxs: ") == 1


def test_a_worktree_shares_the_configuration_and_a_subdirectory_gets_its_prefix(
    tmp_path: Path,
) -> None:
    top = tmp_path / "mono"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    sub = make_workspace(top / "svc dir" / "api")  # init inside the repository installs
    assert gitconfig.configured(sub) is True
    attrs = (top / ".git" / "info" / "attributes").read_text()
    assert '"svc dir/api/NEXUS_MEMORY.md" merge=nxs' in attrs
    for path in ("NEXUS_MEMORY.md", ".nxs/memories/0123456789abcdef.md", ".nxs/graph.jsonl"):
        got = git(top, "check-attr", "merge", f"svc dir/api/{path}").stdout
        assert got.strip().endswith(": merge: nxs"), got
    assert (
        git(top, "check-attr", "merge", "other/.nxs/memories/x.md")
        .stdout.strip()
        .endswith("unspecified")
    )
    commit(top, "init")
    git(top, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    wt_sub = tmp_path / "wt" / "svc dir" / "api"
    assert gitconfig.repository(wt_sub) == (tmp_path / "wt", top / ".git")
    assert gitconfig.configured(wt_sub) is True
    assert gitconfig.install(wt_sub) == []
    got = git(tmp_path / "wt", "check-attr", "merge", "svc dir/api/.nxs/history/x.jsonl")
    assert got.stdout.strip().endswith(": merge: nxs")


# -- real git, as a team uses it ----------------------------------------------------------------


def test_a_close_and_a_priority_change_merge_into_both(repo: Path) -> None:
    key = add(repo, "Release tags are cut from main only.", "Tags from main")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    write(repo, "close", key)
    commit(repo, "close")
    git(repo, "checkout", "-q", "main")
    write(repo, "update", key, "--priority", "HIGH", now=LATER)
    commit(repo, "priority")
    merged = git(repo, "merge", "a", "-m", "merge a", ok=False)
    if not driven(repo):  # git's text merge: status and priority are adjacent lines
        assert merged.returncode != 0 and text.conflicted(memory_file(repo, key).read_bytes())
        return
    assert merged.returncode == 0, merged.stdout + merged.stderr
    shown = nxm_json(repo, "show", key)["memory"]
    assert (shown["status"], shown["priority"]) == ("closed", "HIGH")
    assert sorted(e["type"] for e in shown["events"]) == ["CLOSED", "CREATED", "UPDATED"]
    assert (repo / "NEXUS_MEMORY.md").read_bytes() == projection.derive(exported(repo))


def test_body_edits_conflict_only_around_the_body_lines(repo: Path) -> None:
    body = "The release train leaves on Tuesdays.\n\nIt carries what main held at 09:00."
    key = add(repo, body, "Release train on Tuesdays")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    write(repo, "update", key, "--body", body.replace("Tuesdays", "Wednesdays"))
    write(repo, "close", key)
    commit(repo, "a")
    git(repo, "checkout", "-q", "main")
    write(repo, "update", key, "--body", body.replace("Tuesdays", "Thursdays"), "--priority",
          "HIGH", now=LATER)  # fmt: skip
    commit(repo, "main")
    assert git(repo, "merge", "a", "-m", "m", ok=False).returncode != 0
    data = memory_file(repo, key).read_bytes()
    head, _, rest = data.partition(b"<<<<<<<")
    assert (b"status: closed\npriority: HIGH\n" in head) is driven(repo)
    assert rest.count(b"<<<<<<<") == 0 and b"It carries what main held" in rest.split(b">>>>>>>")[1]
    assert (b"\n---\n" in head) is driven(repo)  # with the driver, the front matter merged


def test_body_edits_in_different_paragraphs_merge(repo: Path) -> None:
    body = "The release train leaves on Tuesdays.\n\nIt carries what main held at 09:00."
    key = add(repo, body, "Release train on Tuesdays")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    write(repo, "update", key, "--body", body.replace("Tuesdays", "Wednesdays"))
    write(repo, "close", key)
    commit(repo, "a")
    git(repo, "checkout", "-q", "main")
    write(repo, "update", key, "--body", body.replace("09:00", "10:00"), "--priority", "LOW",
          now=LATER)  # fmt: skip
    commit(repo, "main")
    merged = git(repo, "merge", "a", "-m", "m", ok=False)
    assert (merged.returncode == 0) is driven(repo)
    if driven(repo):
        shown = nxm_json(repo, "show", key)["memory"]
        assert shown["body"] == body.replace("Tuesdays", "Wednesdays").replace("09:00", "10:00")
        assert (shown["status"], shown["priority"]) == ("closed", "LOW")


def test_reverting_a_vote_takes_it_back_out(repo: Path) -> None:
    key = add(repo, "Feature flags live in LaunchDarkly.", "Flags in LaunchDarkly")
    commit(repo, "base")
    write(repo, "feedback", key, "NEGATIVE", now=LATER)
    commit(repo, "a negative vote")
    vote = git(repo, "rev-parse", "HEAD").stdout.strip()
    write(repo, "feedback", key, "POSITIVE", now="2026-06-03T10:00:00.000Z")
    commit(repo, "a positive vote")
    reverted = git(repo, "revert", "--no-edit", vote, ok=False)
    assert (reverted.returncode == 0) is driven(repo)  # git's union: "nothing to commit"
    log = (repo / ".nxs" / "history" / f"{key}.jsonl").read_bytes()
    feedback = nxm_json(repo, "show", key)["memory"]["feedback"]
    assert (b"NEGATIVE" in log) is not driven(repo)  # git's union keeps the reverted line
    assert feedback == {"POSITIVE": 1, "NEGATIVE": 0 if driven(repo) else 1, "NEUTRAL": 0}


def test_cherry_picking_a_vote_brings_only_its_event(repo: Path) -> None:
    key = add(repo, "Feature flags live in LaunchDarkly.", "Flags in LaunchDarkly")
    commit(repo, "base")
    git(repo, "checkout", "-qb", "a")
    write(repo, "update", key, "--introduction", "Flags: LaunchDarkly", now=LATER)
    write(repo, "update", key, "--priority", "HIGH", now=LATER)
    commit(repo, "two updates")
    write(repo, "feedback", key, "NEGATIVE", now="2026-06-03T10:00:00.000Z")
    commit(repo, "a vote")
    git(repo, "checkout", "-q", "main")
    git(repo, "cherry-pick", "a")
    shown = nxm_json(repo, "show", key)["memory"]
    types = [e["type"] for e in shown["events"]]
    if driven(repo):
        assert types == ["CREATED", "FEEDBACK_SUBMITTED"]
    else:  # git's union brings the two updates' events along, though their edits stay behind
        assert types.count("UPDATED") == 2
    assert shown["introduction"] == "Flags in LaunchDarkly" and shown["priority"] == "MEDIUM"


def _two_branches_adding(root: Path) -> list[str]:
    first = add(root, "Deploys need two approvals.", "Two approvals per deploy")
    commit(root, "base")
    git(root, "checkout", "-qb", "a")
    a = [add(root, f"Branch A fact {i}.", f"A fact {i}", now=LATER) for i in range(3)]
    write(root, "update", first, "--priority", "LOW", now=LATER)
    commit(root, "a")
    git(root, "checkout", "-q", "main")
    b = [add(root, f"Branch B fact {i}.", f"B fact {i}") for i in range(2)]
    write(root, "close", first)
    commit(root, "b")
    return [first, *a, *b]


def index_is_right(root: Path) -> bool:
    data = (root / "NEXUS_MEMORY.md").read_bytes()  # before any command writes it again
    return data == projection.derive(exported(root))


def test_adds_on_two_branches_merge_into_the_right_index(repo: Path) -> None:
    _two_branches_adding(repo)
    merged = git(repo, "merge", "a", "-m", "merge a", ok=False)
    assert (merged.returncode == 0) is driven(repo)  # text: a close beside a priority change
    assert "NEXUS_MEMORY.md" not in git(repo, "diff", "--name-only", "--diff-filter=U").stdout
    if driven(repo):
        assert index_is_right(repo)
        lines, total = projection.parse((repo / "NEXUS_MEMORY.md").read_bytes())  # type: ignore[misc]
        assert total == len(lines) == 5  # the closed one gone, both sides' adds in
        nxm_json(repo, "list")
        assert git(repo, "status", "--porcelain").stdout == ""


def test_a_rebase_keeps_the_index_right(repo: Path) -> None:
    _two_branches_adding(repo)
    git(repo, "checkout", "-q", "a")
    rebased = git(repo, "rebase", "main", ok=False)
    assert (rebased.returncode == 0) is driven(repo), rebased.stdout + rebased.stderr
    if driven(repo):
        assert index_is_right(repo)
        assert git(repo, "status", "--porcelain").stdout == ""


def test_a_stash_pop_keeps_the_index_right(repo: Path) -> None:
    add(repo, "Everything is in UTC.", "UTC everywhere")
    commit(repo, "base")
    add(repo, "A stashed fact.", "Stashed", now=LATER)
    git(repo, "stash", "-u")
    add(repo, "A committed fact.", "Committed", now="2026-06-05T10:00:00.000Z")
    commit(repo, "meanwhile")
    git(repo, "stash", "pop")
    assert index_is_right(repo) is driven(repo)  # union: both count lines, no single truth
    assert {"Stashed", "Committed"} <= {r["introduction"] for r in exported(repo)}


@pytest.mark.parametrize("installed", [True, False])
def test_a_pull_from_a_shared_origin_merges_concurrent_adds(
    tmp_path: Path, installed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    one = tmp_path / "one"
    one.mkdir()
    git(one, "init", "-q", "-b", "main")
    make_workspace(one)
    add(one, "Everything is in UTC.", "UTC everywhere")
    commit(one, "init")
    git(one, "remote", "add", "origin", str(origin))
    git(one, "push", "-q", "origin", "main")
    two = tmp_path / "two"
    git(tmp_path, "clone", "-q", str(origin), str(two))
    assert gitconfig.configured(two) is False  # a clone is configured by nxs, not by git
    assert bool(installed and gitconfig.install(two)) is installed
    if not installed:
        never_installs(monkeypatch)
    add(one, "Fact from one.", "From one")
    commit(one, "one")
    git(one, "push", "-q", "origin", "main")
    add(two, "Fact from two.", "From two", now=LATER)
    commit(two, "two")
    pulled = git(two, "pull", "--no-rebase", "-q", "origin", "main", ok=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert index_is_right(two) is installed
    assert len(exported(two)) == 3


def test_a_clone_without_the_driver_gets_the_committed_fallbacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    make_workspace(repo)
    uninstall(repo)
    never_installs(monkeypatch)
    commit(repo, "init")
    for path, want in (("NEXUS_MEMORY.md", "union"), (".nxs/history/x.jsonl", "union"),
                       (".nxs/graph.jsonl", "union"), (".nxs/memories/x.md", "unspecified")):  # fmt: skip
        assert git(repo, "check-attr", "merge", path).stdout.strip().endswith(f": merge: {want}")
    _two_branches_adding(repo)
    git(repo, "merge", "a", "-m", "merge a", ok=False)  # the memory file closed and edited: text
    unmerged = git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert [p.split("/")[1] for p in unmerged] == ["memories"]  # no conflict in a derived file
    assert not text.conflicted((repo / "NEXUS_MEMORY.md").read_bytes())
    assert not index_is_right(repo)  # union: the closed memory's line kept, the count wrong
