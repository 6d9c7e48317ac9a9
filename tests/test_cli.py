"""The nxm CLI seam: exit codes by kind, seam options, usage errors under --json, human output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from nxm import cli
from nxm.cli import app

NOW = "2026-05-29T10:00:00.000Z"
runner = CliRunner()


def nxm(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env)


def added(*args: str) -> dict[str, Any]:
    result = nxm("add", *args, "--json", "--now", NOW, "--actor", "tester")
    assert result.exit_code == 0, result.stdout
    return orjson.loads(result.stdout_bytes)["memory"]


def envelope(result: Any) -> dict[str, Any]:
    out = orjson.loads(result.stdout_bytes)
    assert out["error"] is True
    return out


@pytest.mark.usefixtures("workspace")
def test_add_prints_the_service_answer_with_seam_options() -> None:
    result = nxm(
        "add",
        "Release tags are cut from main only.",
        "--introduction",
        "Tags from main",
        "--category",
        "conventions",
        "--ref",
        "ENG-1",
        "--refs",
        "ci.yml",
        "--metadata",
        '{"source": "review"}',
        "--json",
        "--now",
        "2026-05-29T12:00:00+02:00",
        "--actor",
        "alice",
    )
    assert result.exit_code == 0
    assert result.stdout_bytes.endswith(b"}\n")
    out = orjson.loads(result.stdout_bytes)
    assert out["created"] is True
    m = out["memory"]
    assert (m["created"], m["updated"], m["actor"]) == (NOW, NOW, "alice")
    assert (m["refs"], m["metadata"], m["category"]) == (
        ["ENG-1", "ci.yml"],
        {"source": "review"},
        "conventions",
    )


@pytest.mark.usefixtures("workspace")
def test_remember_is_an_alias_of_add() -> None:
    first = added("Same body.", "--introduction", "Same")
    again = nxm("remember", "Same body.", "--introduction", "Other", "--json")
    assert again.exit_code == 0
    expected = {"created": False, "memory": first, "similar": [], "superseded": None}
    assert orjson.loads(again.stdout_bytes) == expected


@pytest.mark.usefixtures("workspace")
def test_actor_comes_from_nxm_actor_then_nxs_actor_then_user() -> None:
    def actor(body: str, env: dict[str, str]) -> str:
        result = nxm("add", body, "--introduction", "x", "--category", "c", "--json", env=env)
        return orjson.loads(result.stdout_bytes)["memory"]["actor"]

    assert actor("a", {"NXM_ACTOR": "m", "NXS_ACTOR": "s", "USER": "u"}) == "m"
    assert actor("b", {"NXS_ACTOR": "s", "USER": "u"}) == "s"
    assert actor("c", {"USER": "u"}) == "u"


@pytest.mark.usefixtures("workspace")
def test_a_bad_now_is_a_validation_error() -> None:
    result = nxm("add", "b", "--introduction", "i", "--now", "yesterday", "--json")
    assert result.exit_code == 2
    assert envelope(result) == {
        "code": "VALIDATION_ERROR",
        "error": True,
        "kind": "validation",
        "message": "now must be an ISO-8601 timestamp, got 'yesterday'",
        "suggestion": "e.g. 2026-05-29T10:00:00Z",
    }
    assert not Path("NEXUS_MEMORY.md").exists()


@pytest.mark.usefixtures("workspace")
def test_exit_codes_by_kind() -> None:
    key = added("Deploys need two approvals.", "--introduction", "Two approvals")["key"]
    cases = [
        (("add", "x", "--introduction", "two\nlines"), 2, "validation"),
        (("update", key, "--introduction", "Two approvals"), 2, "validation"),
        (("list", "--status", "bogus"), 2, "validation"),
        (("show", "0000000000"), 3, "not_found"),
        (("reopen", key), 4, "conflict"),
        (("purge", key), 4, "conflict"),
    ]
    for args, code, kind in cases:
        result = nxm(*args, "--json")
        assert (result.exit_code, envelope(result)["kind"]) == (code, kind), args


@pytest.mark.usefixtures("workspace")
def test_errors_without_json_go_to_stderr() -> None:
    result = nxm("show", "0000000000")
    assert result.exit_code == 3
    assert result.stdout_bytes == b""
    assert result.stderr == (
        "error: no memory with key '0000000000'\nhint: find keys with `nxm list` or `nxm search`\n"
    )


def test_semantic_search_without_a_model_exits_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import make_workspace

    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "empty-cache"))
    root = make_workspace(tmp_path / "proj", "sentence-transformers/all-MiniLM-L6-v2")
    result = nxm("search", "anything", "--mode", "semantic", "--json", "-w", str(root))
    assert result.exit_code == 5
    out = envelope(result)
    assert (out["kind"], out["code"]) == ("upstream", "MODEL_UNAVAILABLE")
    assert out["suggestion"] == "run `nxm model setup`, or search with --mode keyword"


def test_a_search_without_a_model_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import make_workspace

    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "empty-cache"))
    root = make_workspace(tmp_path / "proj", "sentence-transformers/all-MiniLM-L6-v2")
    result = nxm("search", "anything", "-w", str(root))
    assert result.exit_code == 0
    said = (result.stdout + result.stderr).count("semantic search unavailable")
    assert said == 1, result.stdout + result.stderr


@pytest.mark.usefixtures("workspace")
def test_an_unexpected_exception_is_an_internal_error_without_details(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nxm.service import MemoryService

    def boom(self: Any, **kw: Any) -> Any:
        raise RuntimeError("token lin_api_SECRET leaked")

    monkeypatch.setattr(MemoryService, "list", boom)
    result = nxm("list", "--json")
    assert result.exit_code == 1
    assert result.stdout_bytes == (
        b'{"code":"INTERNAL_ERROR","error":true,"kind":"internal","message":"internal error:'
        b' RuntimeError","suggestion":"re-run with NXS_DEBUG=1 to see the traceback, and report'
        b' it"}\n'
    )
    assert "SECRET" not in result.stderr
    debug = nxm("list", "--json", env={"NXS_DEBUG": "1"})
    assert debug.exit_code == 1
    assert "RuntimeError: token lin_api_SECRET leaked" in debug.stderr


@pytest.mark.usefixtures("workspace")
def test_human_output_is_not_json() -> None:
    added("Release tags are cut from main only.", "--introduction", "Tags from main")
    result = nxm("list")
    assert result.exit_code == 0
    assert "Tags from main" in result.stdout
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(result.stdout_bytes)


def test_workspace_option_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import make_workspace

    one, two = make_workspace(tmp_path / "one"), make_workspace(tmp_path / "two")
    monkeypatch.chdir(tmp_path)
    assert nxm("add", "in one", "--introduction", "1", "-w", str(one)).exit_code == 0
    monkeypatch.setenv("NXS_WORKSPACE", str(two))
    assert nxm("add", "in two", "--introduction", "2", "--json").exit_code == 0

    def total(*args: str) -> int:
        return orjson.loads(nxm("list", "--json", *args).stdout_bytes)["total"]

    assert (total(), total("--workspace", str(one))) == (1, 1)
    assert orjson.loads(nxm("list", "--json").stdout_bytes)["memories"][0]["introduction"] == "2"


def run_main(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """Run the console-script entry point in-process; return its exit code."""
    monkeypatch.setattr(sys, "argv", ["nxm", *argv])
    with pytest.raises(SystemExit) as info:
        cli.main()
    return info.value.code


@pytest.mark.usefixtures("workspace")
@pytest.mark.parametrize(
    ("argv", "message", "suggestion"),
    [
        (["list", "--page", "abc", "--json"], "page must be an integer, got 'abc'", "nxm list"),
        (["list", "--page", "2.5", "--json"], "page must be an integer, got 2.5", "nxm list"),
        (["add", "--json"], "body is required", "nxm add"),
        (["remember", "--json"], "body is required", "nxm add"),
        (["facts", "update", "--json"], "facts_patch is required", "nxm facts update"),
        (["show", "a", "b", "--json"], "Got unexpected extra argument(s) (b)", "nxm show"),
        (["list", "--json", "--page"], "Option '--page' requires an argument.", "nxm list"),
        (["frobnicate", "--json"], "No such command 'frobnicate'.", "nxm"),
    ],
)
def test_usage_errors_under_json_print_the_validation_envelope(
    argv: list[str],
    message: str,
    suggestion: str,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: Any,
) -> None:
    assert run_main(argv, monkeypatch) == 2
    out = capsysbinary.readouterr().out
    assert out == (
        b'{"code":"VALIDATION_ERROR","error":true,"kind":"validation","message":'
        + orjson.dumps(message)
        + b',"suggestion":"see `'
        + suggestion.encode()
        + b' --help`"}\n'
    )


@pytest.mark.usefixtures("workspace")
def test_an_unknown_option_is_the_tools_refusal_and_for_a_person_the_closest_flag(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    assert run_main(["show", "abc", "--colour", "red", "--json"], monkeypatch) == 2
    body = orjson.loads(capsysbinary.readouterr().out)
    assert body["message"] == "unknown parameter 'colour' for memory_show"
    assert body["suggestion"] == "parameters: key"
    assert run_main(["show", "abc", "--colour", "red"], monkeypatch) == 2
    err = capsysbinary.readouterr().err
    assert b"unknown option --colour for nxm show\nhint: see `nxm show --help`" in err
    assert run_main(["list", "--categroy", "x"], monkeypatch) == 2
    err = capsysbinary.readouterr().err
    assert b"unknown option --categroy for nxm list" in err
    assert b"did you mean --category? see `nxm list --help`" in err


@pytest.mark.usefixtures("workspace")
def test_usage_errors_without_json_print_the_refusal_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    assert run_main(["list", "--page", "abc"], monkeypatch) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert b"page must be an integer, got 'abc'" in captured.err
    assert b"see `nxm list --help`" in captured.err
    assert run_main(["frobnicate"], monkeypatch) == 2
    assert b"Usage: nxm" in capsysbinary.readouterr().err  # not a verb: click's usage


def test_help_still_marks_a_positional_required(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    assert run_main(["show", "--help"], monkeypatch) == 0
    out = capsysbinary.readouterr().out
    assert b"Usage: nxm show [OPTIONS] {key}" in out and b"[required]" in out


@pytest.mark.parametrize(
    ("verb", "option"), [("add", "--introduction"), ("store-context", "--conversation-id")]
)
def test_help_marks_a_required_option(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any, verb: str, option: str
) -> None:
    """An option `validate` refuses to go without says so in --help (the seams refuse alike)."""
    monkeypatch.setenv("COLUMNS", "200")
    assert run_main([verb, "--help"], monkeypatch) == 0
    lines = capsysbinary.readouterr().out.splitlines()
    line = next(x for x in lines if x.lstrip(b"\xe2\x94\x82 ").startswith(option.encode()))
    assert b"[required]" in line


def test_bare_nxm_prints_help_once_and_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    assert run_main([], monkeypatch) == 0
    out = capsysbinary.readouterr().out
    assert out.count(b"Usage: nxm") == 1
    for verb in (b"add", b"search", b"list", b"export", b"import", b"embed"):
        assert verb in out
    assert run_main(["--help"], monkeypatch) == 0
    assert capsysbinary.readouterr().out == out


def test_program_help_built_from_names_is_the_whole_apps_help(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    """`nxm --help` builds no verb's parameters (`clitool._listing`): same bytes as the full app."""
    import typer

    from nxs.clitool import defer_required

    monkeypatch.setenv("COLUMNS", "100")
    for argv in (["--help"], ["-h"]):
        assert run_main(argv, monkeypatch) == 0
        listed = capsysbinary.readouterr().out
        full = typer.main.get_command(app)
        defer_required(full, "nxm")  # the help tidied as `main` tidies it
        with pytest.raises(SystemExit):
            full.main(args=argv, prog_name="nxm")
        assert listed == capsysbinary.readouterr().out
        assert b"supersedes" in listed  # a verb's help text, not only its name


@pytest.mark.usefixtures("workspace")
def test_json_success_through_the_entry_point_is_the_serializer_bytes(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    assert run_main(["list", "--json"], monkeypatch) == 0
    assert capsysbinary.readouterr().out == (
        b'{"memories":[],"page":1,"page_size":20,"total":0,"total_pages":0}\n'
    )


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_an_out_of_range_port_is_a_usage_error_not_a_traceback(
    port: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from nxs import cli as nxs_cli

    monkeypatch.setattr(sys, "argv", ["nxs", "ui", "--port", port])
    with pytest.raises(SystemExit) as info:
        nxs_cli.main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--port: a port is 0 to 65535" in err


def test_any_unexpected_exception_in_a_verb_is_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from nxs import cli as nxs_cli
    from nxs.ui import server

    def boom(*args: Any, **kwargs: Any) -> None:
        raise OverflowError("bind(): port must be 0-65535.")

    monkeypatch.setattr(server, "serve", boom)
    monkeypatch.setattr(sys, "argv", ["nxs", "ui"])
    with pytest.raises(SystemExit) as info:
        nxs_cli.main()
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error: OverflowError" in err


def test_reads_take_now_and_actor_without_offering_them() -> None:
    assert "--now" not in nxm("list", "--help").stdout
    assert "--actor" not in nxm("search", "--help").stdout
    assert "--now" in nxm("add", "--help").stdout and "--actor" in nxm("close", "--help").stdout


@pytest.mark.usefixtures("workspace")
def test_a_read_still_accepts_now_and_actor() -> None:
    result = nxm("list", "--now", NOW, "--actor", "ci", "--json")
    assert result.exit_code == 0 and orjson.loads(result.stdout_bytes)["total"] == 0


def test_the_program_help_lists_remember_and_what_a_group_holds(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    assert run_main(["--help"], monkeypatch) == 0
    out = capsysbinary.readouterr().out
    assert b"remember" in out and b"Same as add." in out
    assert b"Graph: search, traverse, query, add, relate, remove." in out  # not "Graph commands."
    verbs = [
        ln.split()[1] for ln in out.decode().splitlines() if ln.startswith("│ ") and ln[2] != " "
    ]
    assert verbs.index("init") < verbs.index("add") < verbs.index("search") < verbs.index("compact")
    assert run_main(["add", "--help"], monkeypatch) == 0
    assert b"<bool>" not in out + capsysbinary.readouterr().out  # a flag has no type to show


@pytest.mark.usefixtures("workspace")
@pytest.mark.parametrize("flag", ["--allow-secret", "--allow-secrets"])
def test_import_takes_allow_secret_as_add_does_and_its_old_spelling(
    flag: str, tmp_path: Path
) -> None:
    line = {"body": "An example key: AKIAQWERTYUIOPASDFGH (docs only).", "introduction": "ex"}
    source = tmp_path / "in.jsonl"
    source.write_bytes(orjson.dumps(line) + b"\n")
    refused = nxm("import", str(source), "--json")
    assert orjson.loads(refused.stdout_bytes)["suggestion"].endswith("pass --allow-secret")
    assert nxm("import", str(source), flag, "--json").exit_code == 0
    shown = nxm("import", "--help").stdout
    assert "--allow-secret " in shown and "--allow-secrets" not in shown


def test_help_paragraphs_wrap_at_the_terminal_not_at_the_docstring(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from nxs import cli as nxs_cli
    from nxs.clitool import unwrap

    assert unwrap("One.\n\n    Two\n    lines, and\n    a\n\nthree\nfour") == (
        "One.\n\n    Two\n    lines, and\n    a\n\nthree four"
    )
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "argv", ["nxs", "mcp", "install", "--help"])
    with pytest.raises(SystemExit):
        nxs_cli.main()
    prose = capsys.readouterr().out.split("Example:")[0].splitlines()
    assert "the report says what changed" in " ".join(x.strip() for x in prose)
    assert all(len(x.split()) != 1 or x.strip().endswith((".", ":")) for x in prose), prose


def test_python_dash_m_nxm_runs_the_cli(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "nxm", "--version"], capture_output=True,
                          text=True, cwd=tmp_path, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
