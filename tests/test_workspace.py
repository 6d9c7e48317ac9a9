"""Workspaces: discovery walking up, explicit overrides, creation, and clear refusals."""

from __future__ import annotations

import tomllib
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from nxm.cli import app
from nxs.errors import NotFoundError, ValidationError
from nxs.workspace import DEFAULT_CONFIG, defaults, dump_config, find, init

runner = CliRunner()


def test_find_walks_up_from_a_subdirectory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init(tmp_path / "proj", ["memory"])
    deep = tmp_path / "proj" / "src" / "pkg" / "sub"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    ws = find()
    assert ws.root == (tmp_path / "proj").resolve()
    assert ws.modules == ["memory"]
    assert find(start=deep).root == ws.root


def test_nearest_workspace_wins(tmp_path: Path) -> None:
    init(tmp_path / "outer", ["memory"])
    init(tmp_path / "outer" / "inner", ["memory"])
    (tmp_path / "outer" / "inner" / "src").mkdir()
    assert (
        find(start=tmp_path / "outer" / "inner" / "src").root
        == (tmp_path / "outer" / "inner").resolve()
    )
    assert find(start=tmp_path / "outer").root == (tmp_path / "outer").resolve()


def test_explicit_workspace_beats_the_environment_and_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("here", "env", "explicit"):
        init(tmp_path / name, ["memory"])
    monkeypatch.chdir(tmp_path / "here")
    assert find().root == (tmp_path / "here").resolve()
    monkeypatch.setenv("NXS_WORKSPACE", str(tmp_path / "env"))
    assert find().root == (tmp_path / "env").resolve()
    assert find(str(tmp_path / "explicit")).root == (tmp_path / "explicit").resolve()


def test_naming_the_nxs_directory_itself_opens_its_workspace(tmp_path: Path) -> None:
    init(tmp_path / "proj", ["memory"])
    assert find(tmp_path / "proj" / ".nxs").root == (tmp_path / "proj").resolve()


def test_no_workspace_is_not_found_and_says_how_to_make_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotFoundError) as info:
        find()
    err = info.value
    assert (err.kind, err.code, err.exit_code) == ("not_found", "NO_WORKSPACE", 3)
    assert err.message == f"no nxs workspace in {tmp_path.resolve()} or any parent directory"
    assert "`nxm init`" in err.suggestion


def test_named_workspace_without_nxs_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        find(tmp_path)
    assert info.value.code == "NO_WORKSPACE"
    assert info.value.suggestion == (
        f"run `nxm init` in {tmp_path.resolve()}, or name another with --workspace"
    )


def test_nxs_workspace_env_naming_nothing_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init(tmp_path / "proj", ["memory"])
    monkeypatch.chdir(tmp_path / "proj")
    monkeypatch.setenv("NXS_WORKSPACE", str(tmp_path / "missing"))
    with pytest.raises(NotFoundError):
        find()


def test_corrupted_config_is_a_validation_error_saying_what_to_do(tmp_path: Path) -> None:
    ws, _ = init(tmp_path / "proj", ["memory"])
    (ws.dir / "config.toml").write_text("[memory\nmodel = ")
    with pytest.raises(ValidationError) as info:
        find(ws.root)
    err = info.value
    assert (err.kind, err.code, err.exit_code) == ("validation", "BAD_CONFIG", 2)
    assert err.message.startswith(f"{ws.dir / 'config.toml'} is not valid TOML: ")
    assert err.suggestion == "fix the file by hand or restore it from version control"


def test_init_writes_config_and_gitignore_and_is_idempotent(tmp_path: Path) -> None:
    ws, added = init(tmp_path / "proj", ["memory"])
    assert added == ["memory"]
    config = tomllib.loads((ws.dir / "config.toml").read_text())
    assert config == {
        "nxs": {"version": 1, "modules": ["memory"]},
        "memory": defaults("memory"),
        "mcp": DEFAULT_CONFIG["mcp"],
    }
    from nxm.store.text import GITATTRIBUTES, GITIGNORE

    assert (ws.dir / ".gitignore").read_bytes() == GITIGNORE
    assert (ws.dir / ".gitattributes").read_bytes() == GITATTRIBUTES
    assert b"NEXUS_MEMORY.md merge=union" in (ws.root / ".gitattributes").read_bytes()
    before = (ws.dir / "config.toml").read_bytes()
    again, added_again = init(tmp_path / "proj", ["memory"])
    assert added_again == []
    assert again.root == ws.root
    assert (ws.dir / "config.toml").read_bytes() == before


def test_init_adds_a_module_and_keeps_edited_settings(tmp_path: Path) -> None:
    ws, _ = init(tmp_path / "proj", ["memory"])
    cfg = ws.dir / "config.toml"
    cfg.write_text(cfg.read_text().replace("task_ttl_days = 7", "task_ttl_days = 3"))
    ws2, added = init(tmp_path / "proj", ["linear"])
    assert added == ["linear"]
    assert ws2.modules == ["memory", "linear"]
    assert find(ws.root).section("memory")["task_ttl_days"] == 3


def test_adding_a_module_keeps_comments_nested_tables_and_odd_text(tmp_path: Path) -> None:
    init(tmp_path, ["memory"])
    config = tmp_path / ".nxs" / "config.toml"
    config.write_text(
        config.read_text()
        + '# the team\'s bucket\n[memory.storage_options]\naws_region = "eu-west-1"\n'
        + '[mcp.note]\ntext = "line one\\nline two"\n'
    )
    init(tmp_path, ["linear"])
    text = config.read_text()
    assert "# the team's bucket" in text and "# nxs workspace configuration" in text
    loaded = tomllib.loads(text)
    assert loaded["memory"]["storage_options"] == {"aws_region": "eu-west-1"}
    assert loaded["mcp"]["note"] == {"text": "line one\nline two"}
    assert loaded["nxs"]["modules"] == ["memory", "linear"]
    assert find(tmp_path).section("memory")["storage_options"] == {"aws_region": "eu-west-1"}


def test_init_refuses_an_unknown_module(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        init(tmp_path, ["memroy"])
    assert info.value.message == "unknown module 'memroy'"
    assert not (tmp_path / ".nxs").exists()


def test_section_merges_over_defaults(tmp_path: Path) -> None:
    ws, _ = init(tmp_path, ["memory"])
    (ws.dir / "config.toml").write_text('[nxs]\nmodules = ["memory"]\n[memory]\nmodel = "hash"\n')
    section = find(tmp_path).section("memory")
    assert section == {**defaults("memory"), "model": "hash"}


def test_dump_config_round_trips_through_toml() -> None:
    config = {
        "nxs": {"version": 1, "modules": ["memory"]},
        "memory": {"model": 'a "quoted" \\ name\n\tend', "ratio": 0.5, "on": True},
    }
    assert tomllib.loads(dump_config(config)) == config


def test_inactive_module_is_not_found_naming_the_command(tmp_path: Path) -> None:
    init(tmp_path, ["linear"])
    result = runner.invoke(app, ["list", "--json", "--workspace", str(tmp_path)])
    assert result.exit_code == 3
    assert orjson.loads(result.stdout_bytes) == {
        "code": "MODULE_INACTIVE",
        "error": True,
        "kind": "not_found",
        "message": f"the memory module is not active in the workspace at {tmp_path.resolve()}",
        "suggestion": "run `nxm init` there",
    }


def test_cli_without_workspace_exits_3_with_the_envelope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 3
    assert result.stdout_bytes == (
        b'{"code":"NO_WORKSPACE","error":true,"kind":"not_found","message":"no nxs workspace in '
        + str(tmp_path.resolve()).encode()
        + b' or any parent directory","suggestion":"run `nxm init` in your project\'s root (or pass'
        b' --workspace / set NXS_WORKSPACE)"}\n'
    )


def test_cli_without_workspace_prints_a_hint_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 3
    assert result.stdout_bytes == b""
    assert "no nxs workspace" in result.stderr
    assert "nxm init" in result.stderr


def test_cli_with_corrupted_config_exits_2(tmp_path: Path) -> None:
    ws, _ = init(tmp_path, ["memory"])
    (ws.dir / "config.toml").write_text("modules = [")
    result = runner.invoke(app, ["list", "--json", "-w", str(tmp_path)])
    assert result.exit_code == 2
    envelope = orjson.loads(result.stdout_bytes)
    assert (envelope["kind"], envelope["code"]) == ("validation", "BAD_CONFIG")
    assert envelope["suggestion"] == "fix the file by hand or restore it from version control"


def test_nxm_init_creates_a_workspace_the_verbs_then_find(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "new"), "--json"])
    assert result.exit_code == 0
    assert orjson.loads(result.stdout_bytes) == {
        "activated": ["memory"],
        "modules": ["memory"],
        "workspace": str((tmp_path / "new").resolve()),
    }
    listed = runner.invoke(app, ["list", "--json", "-w", str(tmp_path / "new")])
    assert listed.exit_code == 0
    assert listed.stdout_bytes == (
        b'{"memories":[],"page":1,"page_size":20,"total":0,"total_pages":0}\n'
    )
