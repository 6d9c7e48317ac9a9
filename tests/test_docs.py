"""The docs keep up with the code: every command is in docs/commands.md, and it is current."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "docs" / "gen_commands.py"
COMMANDS_MD = ROOT / "docs" / "commands.md"
REGENERATE = "regenerate it with `python docs/gen_commands.py` and commit docs/commands.md"


@pytest.fixture(scope="module")
def generated() -> dict:
    """The generator's answer, run in its own process (it fixes rich's terminal globally)."""
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--json"],
        capture_output=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    return orjson.loads(done.stdout)


def test_both_clis_are_walked(generated: dict) -> None:
    names = {c["name"] for c in generated["commands"]}
    for expected in ("nxm", "nxm add", "nxm search", "nxm model setup", "nxs", "nxs init"):
        assert expected in names


def test_every_command_is_documented(generated: dict) -> None:
    text = COMMANDS_MD.read_text(encoding="utf-8")
    missing = [
        c["name"]
        for c in generated["commands"]
        if (f"### `{c['name']}`" if not c["hidden"] else f"`{c['name']}`") not in text
    ]
    assert not missing, f"undocumented in docs/commands.md: {', '.join(missing)}; {REGENERATE}"


def test_every_operation_is_documented(generated: dict) -> None:
    from nxs.registry import operations

    names = {c["name"] for c in generated["commands"]}
    missing = [op.command for op in operations() if op.command not in names]
    assert not missing, f"operations without a CLI verb: {', '.join(missing)}"


def test_commands_md_is_current(generated: dict) -> None:
    current = COMMANDS_MD.read_text(encoding="utf-8") if COMMANDS_MD.exists() else ""
    if current != generated["markdown"]:
        diff = "".join(
            list(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    generated["markdown"].splitlines(keepends=True),
                    "docs/commands.md (committed)",
                    "docs/commands.md (generated)",
                )
            )[:60]
        )
        pytest.fail(f"docs/commands.md is stale: {REGENERATE}\n{diff}")


def test_mcp_md_prime_examples_are_current() -> None:
    """docs/mcp.md shows the prime text at 0, 50 and 500 memories, as the code prints it."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_prime.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_cli_md_captures_are_current() -> None:
    """docs/cli.md shows what the verbs print on the example workspace, as the code prints it."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_screens.py"), "--check"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def test_concepts_md_review_captures_are_current() -> None:
    """docs/concepts.md shows `nxm diff --markdown`, `nxm diff` and `nxm log` on a branch of the
    example workspace, as the code prints them."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_review.py"), "--check"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def test_docs_link_to_existing_files() -> None:
    import re

    for page in ("getting-started.md", "concepts.md", "benchmarks.md", "commands.md", "uninstall.md",
                 "what-leaves.md"):  # fmt: skip
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (ROOT / "docs" / target).resolve().exists(), f"{page} links to missing {target}"


def test_readme_opening_is_current() -> None:
    """The README's terminal capture is docs/cli.md's (generated and checked), its picture and
    links exist, and it keeps its two set-up commands."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    capture = text.split("```text\n", 1)[1].split("```", 1)[0]
    assert capture.startswith("$ nxm search") and capture in (ROOT / "docs" / "cli.md").read_text()
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).exists(), f"README.md links to missing {target}"
    assert "bash scripts/first-session" in text and "bash scripts/test" in text


EXAMPLE = ROOT / ".nxs-example"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the committed example workspace without its derived files (as a clone has it)."""
    import shutil

    dest = tmp_path_factory.mktemp("example") / "larkspur"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("cache", "*.lock"))
    return dest


def test_example_workspace_is_committed_whole() -> None:
    ignore = (EXAMPLE / ".nxs" / ".gitignore").read_text(encoding="utf-8").split()
    assert "index/" in ignore, "the local index is derived and must not be committed"
    assert not (EXAMPLE / ".nxs" / "index").exists() and not (EXAMPLE / ".nxs" / "memory").exists()
    assert (EXAMPLE / ".nxs" / "config.toml").exists()
    keys = sorted(p.stem for p in (EXAMPLE / ".nxs" / "memories").glob("*.md"))
    assert len(keys) >= 12
    assert keys == sorted(p.stem for p in (EXAMPLE / ".nxs" / "history").glob("*.jsonl"))
    for name in ("memories.jsonl", "NEXUS_MEMORY.md", "README.md", "build.sh"):
        assert (EXAMPLE / name).exists(), name


def test_example_store_matches_its_export(example: Path) -> None:
    from nxm.projection import derive
    from nxm.service import MemoryService
    from nxm.store.text import LOCAL
    from nxs.workspace import find

    store = MemoryService(find(example)).store  # a copy: no local index, read from the files
    records = {
        k: {f: v for f, v in r.items() if f not in LOCAL} for k, r in store.records().items()
    }
    exported = [orjson.loads(x) for x in (EXAMPLE / "memories.jsonl").read_bytes().splitlines()]
    assert records == {
        r["key"]: {f: v for f, v in r.items() if f not in LOCAL} for r in exported
    }, (
        ".nxs-example/memories.jsonl differs from its memory files: rebuild with "
        "`bash .nxs-example/build.sh` and commit the workspace"
    )
    assert derive(store.records().values()) == (EXAMPLE / "NEXUS_MEMORY.md").read_bytes()


def test_example_workspace_answers_the_cli(example: Path) -> None:
    from typer.testing import CliRunner

    from nxm.cli import app

    done = CliRunner().invoke(
        app, ["list", "--status", "all", "--json", "--workspace", str(example)]
    )
    assert done.exit_code == 0, done.output
    answer = orjson.loads(done.stdout_bytes)
    memories = answer["memories"]
    assert answer["total"] == len(memories) >= 12
    assert {m["status"] for m in memories} == {"open", "closed"}
    assert len({m["category"] for m in memories}) >= 5
    assert {m["priority"] for m in memories} == {"HIGH", "MEDIUM", "LOW"}
    item = [m for m in memories if m["scope"] == "item"]
    assert item and all(m["refs"] for m in item)
