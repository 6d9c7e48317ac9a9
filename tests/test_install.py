"""`nxs mcp install` against temporary home directories: every host, merging, backups, refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nxs.cli import app
from nxs.errors import ValidationError
from nxs.install import HOSTS, config_path, install

CMD = ["/opt/nxs/bin/nxs"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("APPDATA", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.mark.parametrize(
    ("host", "system", "relative"),
    [
        (
            "claude-desktop",
            "darwin",
            "Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "linux", ".config/Claude/claude_desktop_config.json"),
        ("claude-desktop", "win32", "AppData/Roaming/Claude/claude_desktop_config.json"),
        ("claude-code", "darwin", ".claude.json"),
        ("claude-code", "win32", ".claude.json"),
        ("cursor", "linux", ".cursor/mcp.json"),
        ("cursor", "win32", ".cursor/mcp.json"),
        ("windsurf", "darwin", ".codeium/windsurf/mcp_config.json"),
        ("windsurf", "win32", ".codeium/windsurf/mcp_config.json"),
        ("vscode", "darwin", "Library/Application Support/Code/User/mcp.json"),
        ("vscode", "linux", ".config/Code/User/mcp.json"),
        ("vscode", "win32", "AppData/Roaming/Code/User/mcp.json"),
    ],
)
def test_user_config_paths_per_os(home: Path, host: str, system: str, relative: str) -> None:
    assert config_path(host, "user", home / "proj", home=home, system=system) == home / relative


def test_appdata_and_xdg_are_honoured(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPDATA", str(home / "roaming"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    assert config_path("vscode", "user", home, home=home, system="win32") == (
        home / "roaming/Code/User/mcp.json"
    )
    assert config_path("claude-desktop", "user", home, home=home, system="linux") == (
        home / "xdg/Claude/claude_desktop_config.json"
    )


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_fresh_install_every_host(home: Path, workspace: Path, host: str) -> None:
    result = install(host, home=home, system="linux", command=CMD)
    path = Path(result["path"])
    assert path.is_relative_to(home)
    data = json.loads(path.read_text())
    key = "servers" if host == "vscode" else "mcpServers"
    entry = data[key]["nxs"]
    assert entry["command"] == "/opt/nxs/bin/nxs"
    assert entry["args"][:2] == ["mcp", "serve"]
    assert ("type" in entry) == (host in ("vscode", "claude-code"))
    # Hosts without a project notion get the workspace pinned.
    pinned = host in ("claude-desktop", "windsurf")
    assert (entry["args"][2:] == ["--workspace", str(workspace)]) == pinned
    assert result["changes"][0]["action"] == "added"
    assert result["changes"][0]["backup"] is None


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_merge_keeps_other_servers_and_keys_with_a_backup(
    home: Path, workspace: Path, host: str
) -> None:
    path = config_path(host, "user", workspace, home=home, system="linux")
    key = "servers" if host == "vscode" else "mcpServers"
    before = {
        "theme": "dark",
        key: {"github": {"command": "gh-mcp", "args": ["--stdio"], "env": {"X": "1"}}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(before, indent=4)
    path.write_text(original)
    os.chmod(path, 0o600)

    result = install(host, home=home, system="linux", command=CMD)

    data = json.loads(path.read_text())
    assert data["theme"] == "dark"
    assert data[key]["github"] == before[key]["github"]
    assert list(data[key]) == ["github", "nxs"]
    backup = Path(result["changes"][0]["backup"])
    assert backup == path.with_name(path.name + ".bak")
    assert backup.read_text() == original
    assert path.stat().st_mode & 0o777 == 0o600  # a private host file stays private

    again = install(host, home=home, system="linux", command=CMD)
    assert again["changes"] == []
    assert not path.with_name(path.name + ".bak.1").exists()


def test_update_replaces_only_our_entry_and_keeps_each_backup(home: Path, workspace: Path) -> None:
    install("cursor", home=home, command=CMD)
    result = install("cursor", home=home, command=["/new/nxs"], tools="core,insights")
    path = Path(result["path"])
    entry = json.loads(path.read_text())["mcpServers"]["nxs"]
    assert entry == {"command": "/new/nxs", "args": ["mcp", "serve", "--tools", "core,insights"]}
    assert result["changes"][0]["action"] == "updated"
    install("cursor", home=home, command=["/newer/nxs"])
    assert path.with_name("mcp.json.bak").exists() and path.with_name("mcp.json.bak.1").exists()


def test_claude_code_registers_the_session_start_hook_once(home: Path, workspace: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    other = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"SessionStart": [other]}}))

    result = install("claude-code", home=home, command=CMD)

    assert [c["what"] for c in result["changes"]] == ["server", "hook"]
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["SessionStart"][0] == other
    assert data["hooks"]["SessionStart"][1] == {
        "hooks": [
            {
                "type": "command",
                "command": "/opt/nxs/bin/nxs prime --format claude-code",
                "timeout": 30,
            }
        ]
    }
    install("claude-code", home=home, command=CMD)
    assert len(json.loads(settings.read_text())["hooks"]["SessionStart"]) == 2
    install("claude-code", home=home, command=["/moved/nxs"])
    hooks = json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert len(hooks) == 2 and hooks[1]["hooks"][0]["command"].startswith("/moved/nxs prime")


def test_project_scope_writes_project_files(home: Path, workspace: Path) -> None:
    install("claude-code", scope="project", home=home, command=CMD)
    install("vscode", scope="project", home=home, command=CMD)
    install("cursor", scope="project", home=home, command=CMD)
    assert "nxs" in json.loads((workspace / ".mcp.json").read_text())["mcpServers"]
    assert "nxs" in json.loads((workspace / ".vscode/mcp.json").read_text())["servers"]
    assert "nxs" in json.loads((workspace / ".cursor/mcp.json").read_text())["mcpServers"]
    hook = json.loads((workspace / ".claude/settings.json").read_text())
    assert "prime --format claude-code" in hook["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert not (home / ".claude.json").exists()


def test_dry_run_writes_nothing(home: Path, workspace: Path) -> None:
    result = install("claude-code", home=home, command=CMD, dry_run=True)
    assert [c["action"] for c in result["changes"]] == ["added", "added"]
    assert not (home / ".claude.json").exists()
    assert not (home / ".claude").exists()


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"mcpServers": []}'])
def test_invalid_existing_config_is_refused_and_nothing_written(
    home: Path, workspace: Path, content: str
) -> None:
    path = home / ".claude.json"
    path.write_text(content)
    with pytest.raises(ValidationError) as err:
        install("claude-code", home=home, command=CMD)
    assert str(path) in err.value.message
    assert path.read_text() == content
    assert not (home / ".claude").exists()  # the hook file was not written either
    assert not path.with_name(".claude.json.bak").exists()


def test_bad_hook_settings_refuse_before_the_server_is_written(home: Path, workspace: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"hooks": {"SessionStart": {}}}')
    with pytest.raises(ValidationError):
        install("claude-code", home=home, command=CMD)
    assert not (home / ".claude.json").exists()


def test_unknown_host_scope_and_group_are_refused(home: Path) -> None:
    with pytest.raises(ValidationError, match="unknown host"):
        install("emacs", home=home)
    with pytest.raises(ValidationError, match="no 'project' scope"):
        install("windsurf", scope="project", home=home)
    with pytest.raises(ValidationError, match="unknown tool group"):
        install("cursor", home=home, tools="core,everything")


def test_nothing_installed_yet(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    monkeypatch.chdir(bare)
    result = install("claude-desktop", home=home, command=CMD)
    assert result["server"]["args"] == ["mcp", "serve"]
    assert "nxm init" in result["next"][0]


def test_cli_json_and_exit_codes(home: Path, workspace: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["mcp", "install", "--host", "cursor", "--json"])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.stdout)
    assert body["changes"][0]["path"] == str(home / ".cursor" / "mcp.json")
    (home / ".cursor" / "mcp.json").write_text("{oops")
    bad = runner.invoke(app, ["mcp", "install", "--host", "cursor", "--json"])
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["code"] == "BAD_HOST_CONFIG"
    text = runner.invoke(app, ["mcp", "install", "--host", "vscode", "--dry-run"])
    assert text.exit_code == 0
    assert text.stdout.startswith(f"would write {home / '.config/Code/User/mcp.json'}: added")
