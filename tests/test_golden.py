"""Golden JSON: each verb's ``--json`` stdout, byte for byte, on a fixed state.

Every case copies one fixed workspace (built once through the CLI with fixed ``--now`` and
``--actor``), runs one verb, and compares stdout with ``tests/golden/<case>.json`` and the exit
code with the case's. ``NXS_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` rewrites the files;
read the diff before committing it.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import committed, make_workspace, share_vectors
from typer.testing import CliRunner

from nxm.cli import app
from nxm.ops import OPERATIONS

GOLDEN = Path(__file__).with_name("golden")
UPDATE = os.environ.get("NXS_UPDATE_GOLDEN") == "1"
NOW = "2026-05-29T10:00:00.000Z"
LATER = "2026-06-01T08:00:00.000Z"
ACTOR = "golden"
runner = CliRunner()

# The fixed state: (verb arguments, created at). Keys are content hashes of the bodies.
BASE = [
    (["add", "Release tags are cut from main only; CI refuses tags on other branches.",
      "--introduction", "Release tags come from main only", "--category", "conventions",
      "--priority", "HIGH", "--user-id", "alice", "--agent-id", "claude-code"],
     "2026-05-01T09:00:00Z"),
    (["add", "We chose LanceDB: one table holds the record, its vector and the full-text index.",
      "--introduction", "LanceDB holds records, vectors and the text index",
      "--category", "decisions", "--user-id", "bob"], "2026-05-02T09:00:00Z"),
    (["add", "test_sync is flaky under load: the retry loop hides timeouts.",
      "--introduction", "test_sync flakes under load", "--category", "gotchas",
      "--scope", "item", "--ref", "ENG-42", "--ref", "tests/test_sync.py"],
     "2026-05-03T09:00:00Z"),
    (["add", "The old deploy script needed sudo on the build host.",
      "--introduction", "Old deploy script needed sudo", "--category", "processes"],
     "2026-05-04T09:00:00Z"),
    (["add", "Wrong: release tags may be cut from any branch.",
      "--introduction", "Tags from any branch (wrong)", "--category", "conventions"],
     "2026-05-05T09:00:00Z"),
    (["close", "K3"], "2026-05-06T09:00:00Z"),
    (["forget", "K4"], "2026-05-07T09:00:00Z"),
]  # fmt: skip
KEY_NAMES = ("K0", "K1", "K2", "K3", "K4")

# case name -> (arguments, exit code). "K<n>" is the key of the n-th memory of BASE.
CASES: dict[str, tuple[list[str], int]] = {
    "add": (["add", "Code review needs one approval from an owner of the touched files.",
             "--introduction", "One owner approval per review", "--category", "conventions",
             "--layer", "TASK", "--ttl-days", "2", "--session-id", "s-1",
             "--metadata", '{"source": "review"}'], 0),
    "add_existing": (["add", "Release tags are cut from main only;  CI refuses tags on other branches.",
                      "--introduction", "ignored"], 0),
    "add_refused_intro": (["add", "body", "--introduction", "two\nlines"], 2),
    "add_refused_item_scope": (["add", "body", "--introduction", "x", "--scope", "item"], 2),
    "update": (["update", "K1", "--introduction", "LanceDB holds records, vectors and FTS",
                "--body", "We chose LanceDB: one table holds records, vectors and the FTS index.",
                "--priority", "HIGH"], 0),
    "update_refused_no_change": (["update", "K1", "--introduction",
                                  "LanceDB holds records, vectors and the text index"], 2),
    "update_refused_conflict": (["update", "K1", "--introduction", "x", "--body",
                                 "test_sync is flaky under load: the retry loop hides timeouts."], 4),
    "update_body_only": (["update", "K1", "--body",
                          "We chose LanceDB: one table, vectors and text index together."], 0),
    "update_priority_only": (["update", "K2", "--priority", "LOW"], 0),
    "update_refused_nothing_given": (["update", "K2"], 2),
    "revert_refused_nothing": (["revert", "K0"], 4),
    "revert_refused_no_event": (["revert", "K3", "--to", "9"], 3),
    "revert_refused_no_change": (["revert", "K3", "--to", "1"], 2),
    "classify": (["classify", "K0", "--category", "releases", "--scope", "item", "--ref", "ENG-7"], 0),
    "classify_refused_no_change": (["classify", "K0", "--category", "conventions"], 2),
    "close": (["close", "K0"], 0),
    "close_refused": (["close", "K3"], 4),
    "reopen": (["reopen", "K3"], 0),
    "forget": (["forget", "K3"], 0),
    "restore": (["restore", "K4"], 0),
    "restore_refused": (["restore", "K0"], 4),
    "purge": (["purge", "K4"], 0),
    "purge_refused": (["purge", "K0"], 4),
    "show": (["show", "K2"], 0),
    "show_prefix": (["show", "K2:6"], 0),
    "show_missing": (["show", "ffffffffffff"], 3),
    "list": (["list"], 0),
    "list_all_paged": (["list", "--status", "all", "--page-size", "2", "--page", "2"], 0),
    "list_filtered": (["list", "--ref", "ENG-42", "--scope", "item"], 0),
    "list_refused": (["list", "--page-size", "500"], 2),
    "search": (["search", "release tags", "--limit", "3"], 0),
    "search_keyword": (["search", "release tags", "--mode", "keyword", "--status", "all"], 0),
    "search_semantic": (["search", "flaky retry timeouts", "--mode", "semantic", "--limit", "2"], 0),
    "search_refused": (["search", "   "], 2),
    "history": (["history", "K3", "--order", "oldest"], 0),
    "history_limited": (["history", "K4", "--limit", "1"], 0),
    "embed": (["embed"], 0),
    "embed_all": (["embed", "--all"], 0),
}  # fmt: skip
ADMIN = {"embed"}  # CLI-only verbs with a --json answer
LIFECYCLE = {"revert"}  # verbs of nxm/ops/lifecycle.py held here too (safe edits)


READS = {"show", "list", "search", "history"}


def invoke(root: Path, args: list[str]) -> tuple[bytes, int]:
    result = runner.invoke(app, [*args, "--json", "--workspace", str(root)])
    return result.stdout_bytes, result.exit_code


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    import orjson

    from nxs.paths import cache_dir

    root = make_workspace(tmp_path_factory.mktemp("golden") / "base")
    keys: dict[str, str] = {}
    for args, at in BASE:
        args = [keys.get(a, a) for a in args]
        out, code = invoke(root, [*args, "--now", at, "--actor", ACTOR])
        assert code == 0, out
        if args[0] == "add":
            keys[KEY_NAMES[len(keys)]] = orjson.loads(out)["memory"]["key"]
    return root, keys, cache_dir()


def resolve(args: list[str], keys: dict[str, str]) -> list[str]:
    """Arguments with ``K<n>`` replaced by that key (``K<n>:<len>``: its first len characters)."""
    out = []
    for a in args:
        match = re.fullmatch(r"(K\d)(?::(\d+))?", a)
        out.append(keys[match[1]][: int(match[2] or 16)] if match else a)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, base: tuple[Path, dict[str, str], Path], tmp_path: Path) -> None:
    template, keys, cache = base
    root = tmp_path / "ws"
    shutil.copytree(template, root)
    share_vectors(cache)  # the copy's texts are embedded on this machine, as the template's
    args, code = CASES[case]
    seam = [] if args[0] in ADMIN else ["--now", LATER, "--actor", ACTOR]
    before = committed(root)
    out, got_code = invoke(root, [*resolve(args, keys), *seam])
    if code != 0 or args[0] in READS or case == "embed":
        assert committed(root) == before  # a refusal, a read, or nothing to embed writes nothing
    path = GOLDEN / f"{case}.json"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(out)
    assert got_code == code, out
    assert out == path.read_bytes()
    assert out.endswith(b"\n") and out.count(b"\n") == 1


def test_every_core_verb_has_a_golden_case() -> None:
    verbs = {args[0] for args, _ in CASES.values()}
    assert verbs == {op.verb[-1] for op in OPERATIONS} | ADMIN | LIFECYCLE


def test_every_golden_file_belongs_to_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(CASES)
