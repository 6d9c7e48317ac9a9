"""Memory and code: a memory whose refs name code is flagged possibly stale when git shows that
code moved since it was written (renamed, deleted, its symbol changed), and only then.

Every test builds a real git repository with a small codebase, writes memories with the `nxm`
verbs in process, moves the code with real commits and reads the flags back through the verbs.
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
FEES = '''"""Billing fees."""


def compute_fee(amount: int) -> int:
    # the card network's cut
    return amount * 25 // 1000


def refund_fee(amount: int) -> int:
    return 0
'''
MAKEFILE = "ship:\n\t./deploy.sh --prod\n\ntest:\n\tpytest -q\n"
_clock = iter(range(1_780_000_000, 1_790_000_000, 60))  # commit times, a minute apart


def git(root: Path, *args: str) -> str:
    at = f"@{next(_clock)} +0000"
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": "/usr/bin:/bin",
           "GIT_AUTHOR_DATE": at, "GIT_COMMITTER_DATE": at}  # fmt: skip
    got = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    return got.stdout


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def nxm(root: Path, *args: str, ok: bool = True) -> Any:
    result = runner.invoke(
        nxm_app, [*args, "--json", "--workspace", str(root), "--now", NOW, "--actor", "tester"]
    )
    assert (result.exit_code == 0) == ok, result.stdout
    return orjson.loads(result.stdout_bytes)


def add(root: Path, ref: str, body: str = "Fees are computed in the billing service.") -> str:
    got = nxm(root, "add", body, "--introduction", body[:60], "--category", "notes", "--ref", ref)
    return got["memory"]["key"]  # type: ignore[no-any-return]


def flagged(root: Path) -> dict[str, Any]:
    return {m["key"]: m["stale"] for m in nxm(root, "stale")["memories"]}


def edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    assert old in file.read_text()
    file.write_text(file.read_text().replace(old, new))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj")
    (root / "services" / "billing").mkdir(parents=True)
    (root / "services" / "billing" / "fees.py").write_text(FEES)
    (root / "services" / "billing" / "rates.py").write_text("RATE = 3\n")
    (root / "Makefile").write_text(MAKEFILE)
    git(root, "init", "-q", "-b", "main")
    commit(root, "the codebase")
    return root


def test_a_renamed_file_flags_its_memory_with_the_commit_and_where_it_went(repo: Path) -> None:
    key = add(repo, "services/billing/fees.py")
    other = add(repo, "services/billing/rates.py", "Rates are a constant in rates.py.")
    commit(repo, "memories")
    assert flagged(repo) == {}
    git(repo, "mv", "services/billing/fees.py", "services/billing/charges.py")
    commit(repo, "rename fees to charges")
    got = flagged(repo)
    assert list(got) == [key] and other not in got
    assert got[key]["reason"] == ("services/billing/fees.py renamed to services/billing/charges.py")
    (change,) = got[key]["changes"]
    assert change["ref"] == "services/billing/fees.py"
    assert [c["subject"] for c in change["commits"]] == ["rename fees to charges"]
    # every read that shows the memory says so
    listed = {m["key"]: m.get("stale") for m in nxm(repo, "list")["memories"]}
    assert listed == {key: got[key]["reason"], other: None}
    assert nxm(repo, "show", key)["stale"]["reason"] == got[key]["reason"]
    assert "stale" not in nxm(repo, "show", other)
    hits = nxm(repo, "search", "billing fees computed", "--mode", "keyword")["results"]
    assert any(h["key"] == key and h["stale"] == got[key]["reason"] for h in hits)
    shown = runner.invoke(nxs_app, ["prime"], env={"NXS_WORKSPACE": str(repo)}).stdout
    assert f"- {key}  (possibly stale) Fees are computed" in shown
    assert f"- {other}  Rates are a constant" in shown


def test_a_deleted_file_and_a_folder_whose_file_moved_are_flagged(repo: Path) -> None:
    file = add(repo, "services/billing/rates.py", "Rates are a constant in rates.py.")
    folder = add(repo, "services/billing", "Billing lives in services/billing.")
    commit(repo, "memories")
    git(repo, "rm", "-q", "services/billing/rates.py")
    commit(repo, "drop rates")
    got = flagged(repo)
    assert got[file]["reason"] == "services/billing/rates.py deleted"
    assert got[folder]["reason"] == "services/billing/rates.py deleted"


def test_a_symbol_edited_inside_flags_and_an_edit_elsewhere_in_its_file_does_not(
    repo: Path,
) -> None:
    fee = add(repo, "services/billing/fees.py:compute_fee", "The fee is 2.5% of the amount.")
    refund = add(repo, "services/billing/fees.py:refund_fee", "Refunds carry no fee.")
    commit(repo, "memories")
    edit(
        repo, "services/billing/fees.py", "    # the card network's cut", "    # the network's cut"
    )
    commit(repo, "reword a comment")
    edit(repo, "services/billing/fees.py", "amount * 25 // 1000", "amount * 30 // 1000")
    commit(repo, "fee to 3%")
    got = flagged(repo)
    assert list(got) == [fee]
    assert got[fee]["reason"] == "compute_fee changed in services/billing/fees.py"
    assert [c["subject"] for c in got[fee]["changes"][0]["commits"]] == ["fee to 3%"]
    assert refund not in got


def test_comments_and_layout_inside_a_symbol_are_not_a_change(repo: Path) -> None:
    add(repo, "services/billing/fees.py:compute_fee", "The fee is 2.5% of the amount.")
    commit(repo, "memory")
    edit(repo, "services/billing/fees.py", "    # the card network's cut\n", "")
    edit(repo, "services/billing/fees.py", "amount * 25 // 1000", "amount*25//1000")
    edit(repo, "services/billing/fees.py", "return 0", "return 0  # never refunded")
    commit(repo, "tidy: comments and spacing")
    assert flagged(repo) == {}


def test_a_value_the_memory_states_decides_a_rewritten_symbol(repo: Path) -> None:
    says = add(repo, "services/billing/fees.py:compute_fee",
               "compute_fee takes `amount * 25 // 1000`: 25 per mille.")  # fmt: skip
    commit(repo, "memory")
    edit(repo, "services/billing/fees.py", "amount * 25 // 1000", "25 * amount // 1000")
    commit(repo, "reorder")
    assert flagged(repo) == {}  # every value it states is still there
    edit(repo, "services/billing/fees.py", "25 * amount", "30 * amount")
    commit(repo, "fee to 3%")
    assert flagged(repo)[says]["reason"] == "compute_fee changed: 25 no longer in it"


TS = """export function computeFee(amountCents: number): number {
  const rate = 0.029;
  return Math.round(amountCents * rate) + 30;
}

export function sortRows(rows: Row[]): Row[] {
  return orderBy(rows, ['createdAt'], ['desc']);
}
"""
PACKAGE = (
    '{\n  "scripts": {\n    "test": "vitest run --coverage",\n    "lint": "eslint ."\n  }\n}\n'
)


def test_a_formatter_and_a_local_renamed_throughout_change_nothing_a_new_value_does(
    repo: Path,
) -> None:
    (repo / "web").mkdir()
    (repo / "web" / "fees.ts").write_text(TS)
    commit(repo, "web fees")
    # the memories state their values as people do: 2.9%, "newest first"
    fee = add(repo, "web/fees.ts:computeFee", "computeFee charges 2.9% plus 30 cents.")
    order = add(repo, "web/fees.ts:sortRows", "sortRows lists rows by createdAt, newest first.")
    commit(repo, "memories")
    pretty = (TS.replace("['desc']", "[\n    'desc',\n  ]").replace("'", '"')
              .replace("(amountCents: number)", "(\n  amountCents: number,\n)")
              .replace("rate", "feeRate"))  # fmt: skip
    (repo / "web" / "fees.ts").write_text(pretty)
    commit(repo, "style: prettier, clearer names")
    assert flagged(repo) == {}
    edit(repo, "web/fees.ts", "0.029", "0.025")
    edit(repo, "web/fees.ts", '"desc"', '"asc"')
    commit(repo, "cheaper fees, oldest first")
    assert set(flagged(repo)) == {fee, order}


def test_a_json_key_is_a_symbol(repo: Path) -> None:
    (repo / "package.json").write_text(PACKAGE)
    commit(repo, "scripts")
    test = add(repo, "package.json:test", "`npm test` runs vitest with coverage.")
    lint = add(repo, "package.json:lint", "`npm run lint` runs eslint on everything.")
    commit(repo, "memories")
    edit(repo, "package.json", "vitest run --coverage", "vitest run")
    commit(repo, "faster tests")
    assert list(flagged(repo)) == [test] and lint not in flagged(repo)


def test_a_renamed_symbol_and_a_renamed_make_target_are_flagged(repo: Path) -> None:
    fee = add(repo, "services/billing/fees.py:compute_fee", "The fee is 2.5% of the amount.")
    ship = add(repo, "Makefile:ship", "`make ship` deploys to production.")
    test = add(repo, "Makefile:test", "`make test` runs pytest quietly.")
    commit(repo, "memories")
    edit(repo, "services/billing/fees.py", "def compute_fee", "def card_fee")
    edit(repo, "Makefile", "ship:", "release:")
    commit(repo, "renames")
    got = flagged(repo)
    assert got[fee]["reason"] == "compute_fee is no longer defined in services/billing/fees.py"
    assert got[ship]["reason"] == "ship is no longer defined in Makefile"
    assert test not in got


def test_confirm_and_update_clear_the_flag_until_the_code_moves_again(repo: Path) -> None:
    a = add(repo, "services/billing/fees.py:compute_fee", "The fee is 2.5% of the amount.")
    b = add(repo, "services/billing/fees.py:refund_fee", "Refunds carry no fee.")
    commit(repo, "memories")
    edit(repo, "services/billing/fees.py", "return 0", "return amount // 100")
    edit(repo, "services/billing/fees.py", "amount * 25 //", "amount * 26 //")
    commit(repo, "fees move")
    assert set(flagged(repo)) == {a, b}
    assert nxm(repo, "confirm", a[:6])["memory"]["key"] == a
    assert nxm(repo, "history", a, "--limit", "1")["events"][0]["type"] == "CONFIRMED"
    nxm(repo, "update", b, "--body", "Refunds carry a 1% fee.")
    assert flagged(repo) == {}
    commit(repo, "confirmed and updated")
    assert flagged(repo) == {}
    edit(repo, "services/billing/fees.py", "amount // 100", "amount // 50")
    commit(repo, "refund fee 2%")
    assert set(flagged(repo)) == {b}
    assert nxm(repo, "confirm", "ffff", ok=False)["code"] == "NOT_FOUND"


def test_a_git_revert_of_the_change_clears_its_flags(repo: Path) -> None:
    fee = add(repo, "services/billing/fees.py:compute_fee", "The fee is 2.5% of the amount.")
    folder = add(repo, "services/billing", "Billing lives in services/billing.")
    commit(repo, "memories")
    edit(repo, "services/billing/fees.py", "amount * 25 //", "amount * 30 //")
    git(repo, "mv", "services/billing/rates.py", "services/billing/rate.py")
    commit(repo, "fee to 3%, rates renamed")
    assert set(flagged(repo)) == {fee, folder}
    git(repo, "revert", "--no-edit", "HEAD")  # the code is as the memories describe it again
    assert flagged(repo) == {}
    git(repo, "revert", "--no-edit", "HEAD")  # and moved again
    assert flagged(repo)[folder]["reason"] == (
        "services/billing/rates.py renamed to services/billing/rate.py"
    )


def test_a_memory_written_in_the_commit_that_changed_the_code_is_not_flagged(repo: Path) -> None:
    edit(repo, "services/billing/fees.py", "amount * 25 //", "amount * 30 //")
    key = add(repo, "services/billing/fees.py:compute_fee", "The fee is 3% of the amount.")
    commit(repo, "fee to 3%, and the memory that says so")
    assert flagged(repo) == {}
    edit(repo, "services/billing/fees.py", "amount * 30 //", "amount * 35 //")
    commit(repo, "fee to 3.5%")
    assert set(flagged(repo)) == {key}


def test_refs_that_are_not_code_and_memories_without_refs_are_never_flagged(repo: Path) -> None:
    nxm(repo, "add", "Billing owns fees.", "--introduction", "Billing owns fees")
    add(repo, "ENG-42", "The fee change is tracked in ENG-42.")
    add(repo, "services/billing/new.py", "A new module will hold fees.")
    commit(repo, "memories")
    git(repo, "rm", "-q", "services/billing/fees.py")
    (repo / "services" / "billing" / "new.py").write_text("X = 1\n")
    commit(repo, "churn")
    assert flagged(repo) == {}


def test_suggested_refs_name_the_files_and_symbols_the_body_mentions(repo: Path) -> None:
    got = nxm(repo, "add", "The fee is `compute_fee` in services/billing/fees.py; ship with "
              "`make ship` (see Makefile). Tracked in ENG-9.", "--introduction", "Fees",
              "--ref", "ENG-9")  # fmt: skip
    assert got["suggested_refs"] == ["services/billing/fees.py:compute_fee", "Makefile:ship"]
    (created,) = nxm(repo, "history", got["memory"]["key"])["events"]
    assert len(created["data"]["commit"]) == 40
    said = nxm(repo, "add", "Run `make test` before `make ship`; never make deploy.",
               "--introduction", "Make targets")  # fmt: skip
    assert said["suggested_refs"] == ["Makefile:test", "Makefile:ship"]  # no deploy target
    plain = nxm(repo, "add", "Nothing here names code.", "--introduction", "Plain")
    assert "suggested_refs" not in plain


def test_a_rebase_keeps_flags_right_and_the_merge_driver_keeps_both_confirmations(
    repo: Path,
) -> None:
    key = add(repo, "services/billing/fees.py:compute_fee", "The fee is 2.5% of the amount.")
    commit(repo, "memory")
    git(repo, "checkout", "-qb", "topic")
    nxm(repo, "update", key, "--introduction", "The fee is 2.5 percent")
    commit(repo, "topic: reword")
    git(repo, "checkout", "-q", "main")
    (repo / "README").write_text("billing\n")
    commit(repo, "main: readme")
    git(repo, "checkout", "-q", "topic")
    git(repo, "rebase", "-q", "main")  # the commit the UPDATED event names is gone
    assert flagged(repo) == {}
    edit(repo, "services/billing/fees.py", "amount * 25 //", "amount * 26 //")
    commit(repo, "topic: fee")
    assert set(flagged(repo)) == {key}
    git(repo, "checkout", "-q", "main")
    nxm(repo, "confirm", key)
    commit(repo, "main: confirm")
    git(repo, "checkout", "-q", "topic")
    nxm(repo, "confirm", key)
    commit(repo, "topic: confirm")
    git(repo, "merge", "-q", "main", "-m", "merge main")
    events = [e["type"] for e in nxm(repo, "history", key, "--limit", "50")["events"]]
    assert events.count("CONFIRMED") == 2
    assert flagged(repo) == {}


def test_a_workspace_in_a_folder_of_the_repository_names_paths_from_there(tmp_path: Path) -> None:
    top = tmp_path / "mono"
    root = make_workspace(top / "billing")
    (root / "fees.py").write_text(FEES)
    git(top, "init", "-q", "-b", "main")
    commit(top, "monorepo")
    key = add(root, "./fees.py:compute_fee", "The fee is 2.5% of the amount.")
    commit(top, "memory")
    edit(root, "fees.py", "amount * 25 //", "amount * 26 //")
    commit(top, "fee")
    assert (
        flagged(root)[key]["reason"] == "compute_fee changed in billing/fees.py"
    )  # the repository's path


def test_outside_git_nothing_is_flagged_and_every_verb_works(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "plain")
    (root / "fees.py").write_text(FEES)
    got = nxm(root, "add", "`compute_fee` in fees.py", "--introduction", "Fees", "--ref", "fees.py")
    (created,) = nxm(root, "history", got["memory"]["key"])["events"]
    assert "commit" not in (created.get("data") or {})
    assert "suggested_refs" not in got
    answer = nxm(root, "stale")
    assert answer["memories"] == [] and "not in a git repository" in answer["note"]
    assert nxm(root, "confirm", got["memory"]["key"])["memory"]["key"] == got["memory"]["key"]


def test_reads_write_nothing_git_tracks(repo: Path) -> None:
    add(repo, "services/billing/fees.py")
    commit(repo, "memory")
    git(repo, "mv", "services/billing/fees.py", "services/billing/charges.py")
    commit(repo, "rename")
    assert flagged(repo)
    nxm(repo, "list")
    assert git(repo, "status", "--porcelain") == ""
