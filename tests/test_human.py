"""Human output: every nxm verb has a rendering (no JSON dump), it fits 80 columns with one line
per row, colour marks status and priority, stored markup stays text; --version, -h, `add -`,
export --json, and an honest answer past the last page."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from nxm.cli import app, human, human_more
from nxs.cli import app as nxs_app
from nxs.registry import operations

NOW = "2026-05-29T10:00:00.000Z"
runner = CliRunner()
LONG = (
    "Release tags are cut from main only, after CI passes on the merge commit, never from a branch"
)
ONE_LINERS = {"add", "update", "classify", "close", "reopen", "forget", "restore", "promote",
              "revert", "confirm"}  # fmt: skip


def nxm(*args: str, input: str | None = None) -> str:
    result = runner.invoke(app, list(args), input=input, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


def _seed() -> dict[str, str]:
    keys = {}
    for name, body, intro, extra in (
        ("tags", LONG + ".", LONG, ["--priority", "HIGH", "--category", "conventions"]),
        ("lance", "We chose LanceDB: one table holds rows, vectors and text.", "LanceDB holds it",
         ["--user-id", "alice", "--agent-id", "claude-code"]),
        ("markup", "Markup [red]stays[/red] text.", "[bold]not bold[/bold] intro", []),
    ):  # fmt: skip
        out = runner.invoke(
            app, ["add", body, "--introduction", intro, *extra, "--json", "--now", NOW]
        )
        keys[name] = orjson.loads(out.stdout_bytes)["memory"]["key"]
    return keys


def test_every_nxm_verb_has_a_human_rendering() -> None:
    names = {op.name for op in operations(["memory"]) if op.cli == "nxm"}
    rendered = set(human.READERS) | set(human_more.READERS) | ONE_LINERS
    assert names - rendered == set()


@pytest.mark.usefixtures("workspace")
def test_readers_fit_80_columns_with_one_line_per_row() -> None:
    keys = _seed()
    nxm("update", keys["tags"], "--priority", "LOW")
    nxm("graph", "add", "Dana Kim", "--type", "PERSON")
    nxm("graph", "relate", "Dana Kim", "USES", "LanceDB")
    outputs = {
        args: nxm(*args.split("|"))
        for args in (
            "list", "list|--status|all", "search|release tags|--mode|keyword", f"show|{keys['tags']}",
            f"history|{keys['tags']}", "recall|release tags", "stats", "entities",
            "profile|alice", "personas", "persona|jack", "facts", "graph|search|LanceDB",
            "graph|traverse|Dana Kim", "graph|query|who uses LanceDB", "knowledge|--no-merged",
            f"feedback|{keys['lance']}|POSITIVE", f"revert|{keys['tags']}",
            "store-context|--conversation-id|c-1|--summary|Tags come from main only|--context|"
            "We went over the release workflow and agreed tags come from main only.",
        )
    }  # fmt: skip
    for args, text in outputs.items():
        assert text.strip(), args
        assert not text.lstrip().startswith("{"), f"{args} printed JSON"
        wide = [line for line in text.splitlines() if len(line) > 80]
        assert not wide, f"{args}: {wide}"
    listed = outputs["list"].splitlines()
    row = next(line for line in listed if keys["tags"][:8] in line)
    assert "Release tags are cut" in row and "…" in row  # one line, cut with an ellipsis
    assert not any("never from a branch" in line for line in listed)
    assert "page 1 of 1 · 3 open memories" in outputs["list"]
    # stored markup is shown as text, not applied
    assert "[bold]not bold[/bold] intro" in outputs["list"]
    assert "priority (was HIGH)" in outputs[f"history|{keys['tags']}"]
    assert "Dana Kim -USES-> LanceDB" in outputs["graph|traverse|Dana Kim"]
    assert outputs[f"revert|{keys['tags']}"].startswith(f"reverted {keys['tags']}")


@pytest.mark.usefixtures("workspace")
def test_a_page_past_the_end_says_so() -> None:
    _seed()
    out = nxm("list", "--page", "999")
    assert "page 999 is past the end: 3 memories fill 1 page of 20" in out
    assert "page 999 of" not in out
    assert (
        orjson.loads(runner.invoke(app, ["list", "--page", "999", "--json"]).stdout)["memories"]
        == []
    )


def test_status_and_priority_are_coloured_and_stored_text_escaped() -> None:
    assert human.styled("HIGH", human.PRIORITY_STYLE) == "[bold red]HIGH[/]"
    assert human.styled("forgotten", human.STATUS_STYLE) == "[red]forgotten[/]"
    assert human.styled("[x]", human.STATUS_STYLE) == "\\[x]"
    assert human.line("a [b]\nsecond line", 0) == "a \\[b]"


@pytest.mark.usefixtures("workspace")
def test_add_dash_reads_the_body_from_stdin() -> None:
    body = "Staging deploys need the VPN.\n\nAsk #infra for access."
    out = runner.invoke(app, ["add", "-", "--introduction", "Staging needs VPN", "--json"],
                        input=body)  # fmt: skip
    assert orjson.loads(out.stdout_bytes)["memory"]["body"] == body
    key = orjson.loads(out.stdout_bytes)["memory"]["key"]
    runner.invoke(app, ["update", key, "--body", "-"], input="Staging needs the VPN only.")
    shown = orjson.loads(runner.invoke(app, ["show", key, "--json"]).stdout_bytes)["memory"]
    assert shown["body"] == "Staging needs the VPN only."


@pytest.mark.usefixtures("workspace")
def test_export_takes_json(tmp_path: Path) -> None:
    _seed()
    target = tmp_path / "out.jsonl"
    out = runner.invoke(app, ["export", "-o", str(target), "--json"])
    assert orjson.loads(out.stdout_bytes) == {"exported": 3, "output": str(target)}
    assert len(target.read_bytes().splitlines()) == 3
    lines = runner.invoke(app, ["export", "--json"]).stdout_bytes.splitlines()
    assert [orjson.loads(x)["key"] for x in lines] == sorted(orjson.loads(x)["key"] for x in lines)
    assert "exported 3 memories to" in nxm("export", "-o", str(target))


@pytest.mark.parametrize(("cli", "prog"), [(app, "nxm"), (nxs_app, "nxs")])
def test_version_and_short_help_on_both_clis(cli, prog: str) -> None:
    out = runner.invoke(cli, ["--version"])
    assert out.exit_code == 0 and out.stdout.startswith(f"{prog} ")
    assert out.stdout.split()[1][0].isdigit()
    assert "--version" in runner.invoke(cli, ["-h"]).stdout
    verb = runner.invoke(cli, ["init", "-h"])
    assert verb.exit_code == 0 and "Usage:" in verb.stdout


@pytest.mark.usefixtures("workspace")
def test_an_error_shows_brackets_and_escapes_as_text() -> None:
    """What an error echoes (a key, a path, a config line) is text: rich markup is not read
    and a terminal escape is shown, not obeyed."""
    result = runner.invoke(app, ["show", "[bold]zz\x1b[2J"], env={"COLUMNS": "200"})
    assert result.exit_code != 0
    assert "[bold]zz\\x1b[2j" in result.stderr  # keys are read lowercased
    assert "\x1b[" not in result.stderr


@pytest.mark.usefixtures("workspace")
def test_an_add_names_the_stored_memories_it_resembles() -> None:
    first = orjson.loads(
        runner.invoke(app, ["add", LONG + ".", "--introduction", "Tags from main", "--json"]).stdout
    )["memory"]["key"]
    out = nxm("add", LONG + ", always.", "--introduction", "Tags come from main only")
    shown = [ln for ln in out.splitlines() if first[:8] in ln and "Tags from main" in ln]
    assert shown and shown[0].split()[0] in ("similar", "duplicate"), out
    assert all(len(ln) <= 80 for ln in out.splitlines()), out


@pytest.mark.usefixtures("workspace")
def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    from nxm.prime import _left_out

    assert _left_out(1, 1).startswith("(1 memory is not shown here")
    runner.invoke(app, ["add", "One fact here.", "--introduction", "One", "--user-id", "alice"])
    assert "page 1 of 1 · 1 open memory" in nxm("list")
    assert "exported 1 memory to" in nxm("export", "-o", str(tmp_path / "one.jsonl"))
    assert nxm("reindex").startswith("indexed 1 memory\n")
    assert "alice · 1 memory · " in nxm("profile", "alice")


@pytest.mark.usefixtures("workspace")
def test_knowledge_keeps_angle_brackets_as_text() -> None:
    body = "Branches are named TRN-<ticket>-slug, e.g. TRN-12-login."
    runner.invoke(app, ["add", body, "--introduction", "Branches: TRN-<ticket>-slug"])
    out = nxm("knowledge")
    assert "TRN-<ticket>-slug" in out and "TRN--slug" not in out


@pytest.mark.usefixtures("workspace")
def test_compact_says_what_it_compacted() -> None:
    from nxm.cli import _compacted

    runner.invoke(app, ["add", "A fact to compact.", "--introduction", "A fact"])
    assert nxm("compact") == "this machine's search index is already compact (1 data file)\n"
    done = _compacted({"fragments_before": 3, "fragments_after": 1})
    assert done == "compacted this machine's search index: 3 data files -> 1"


@pytest.mark.usefixtures("workspace")
def test_no_facts_says_so_without_a_byte_count() -> None:
    assert nxm("facts") == 'no user facts yet (`nxm facts update \'{"name": "Ada"}\'`)\n'
    assert "of 4096 bytes" in nxm("facts", "update", '{"name": "Ada"}')


@pytest.mark.usefixtures("workspace")
def test_search_shows_each_hit_with_its_snippet_and_list_gives_the_introduction_room() -> None:
    _seed()
    out = nxm("search", "LanceDB table", "--mode", "keyword")
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if "LanceDB holds it" in ln)
    assert "“We chose LanceDB: one table holds rows, vectors" in lines[at + 1]
    assert all(len(ln) <= 80 for ln in lines), out
    row = next(ln for ln in nxm("list").splitlines() if "Release tags" in ln)
    assert "Release tags are cut from main only, after CI" in row  # two spaces between columns
