"""`nxs mcp install` / `uninstall` against temporary home directories: every host, merging
that keeps what users set, JSONC and TOML edited in place, backups, refusals."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nxs.cli import app
from nxs.errors import ValidationError
from nxs.mcp import jsonc
from nxs.mcp.install import HOSTS, config_path, install, uninstall

CMD = ["/opt/nxs/bin/nxs"]
USER_HOSTS = sorted(HOSTS)
PROJECT_HOSTS = sorted(h for h, spec in HOSTS.items() if "project" in spec.scopes)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("APPDATA", "XDG_CONFIG_HOME", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def read(host: str, path: Path) -> dict[str, Any]:
    """A host file as data, read the way the host reads it."""
    text = path.read_text()
    if HOSTS[host].fmt == "toml":
        return tomllib.loads(text)
    return jsonc.parse(text, strict=HOSTS[host].fmt == "json").value


def servers(host: str, path: Path) -> dict[str, Any]:
    return read(host, path)[HOSTS[host].key]


def write(host: str, path: Path, entries: dict[str, Any], **top: Any) -> str:
    """A host file holding ``entries`` under the host's key (and other top-level keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if HOSTS[host].fmt == "toml":
        lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
        for name, entry in entries.items():
            lines.append(f"\n[{HOSTS[host].key}.{name}]")
            for k, v in entry.items():
                if isinstance(v, dict):
                    inner = ", ".join(f"{a} = {json.dumps(b)}" for a, b in v.items())
                    lines.append(f"{k} = {{ {inner} }}")
                else:
                    lines.append(f"{k} = {json.dumps(v)}")
        text = "\n".join(lines) + "\n"
    else:
        text = json.dumps({**top, HOSTS[host].key: entries}, indent=4)
    path.write_text(text)
    return text


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
        ("codex", "linux", ".codex/config.toml"),
        ("codex", "win32", ".codex/config.toml"),
        ("gemini", "darwin", ".gemini/settings.json"),
        ("gemini", "win32", ".gemini/settings.json"),
        ("zed", "darwin", ".config/zed/settings.json"),
        ("zed", "linux", ".config/zed/settings.json"),
        ("zed", "win32", "AppData/Roaming/Zed/settings.json"),
    ],
)
def test_user_config_paths_per_os(home: Path, host: str, system: str, relative: str) -> None:
    assert config_path(host, "user", home / "proj", home=home, system=system) == home / relative


def test_appdata_xdg_and_codex_home_are_honoured(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APPDATA", str(home / "roaming"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    assert config_path("vscode", "user", home, home=home, system="win32") == (
        home / "roaming/Code/User/mcp.json"
    )
    assert config_path("claude-desktop", "user", home, home=home, system="linux") == (
        home / "xdg/Claude/claude_desktop_config.json"
    )
    assert config_path("zed", "user", home, home=home, system="linux") == (
        home / "xdg/zed/settings.json"
    )
    assert config_path("codex", "user", home, home=home) == home / "codex-home/config.toml"


@pytest.mark.parametrize("host", USER_HOSTS)
def test_fresh_install_every_host(home: Path, workspace: Path, host: str) -> None:
    result = install(host, home=home, system="linux", command=CMD)
    path = Path(result["path"])
    assert path.is_relative_to(home)
    entry = servers(host, path)["nxs"]
    assert entry["command"] == "/opt/nxs/bin/nxs"
    assert entry["args"][:2] == ["mcp", "serve"]
    assert ("type" in entry) == (host in ("vscode", "claude-code"))
    assert (entry.get("source") == "custom") == (host == "zed")
    # Hosts that start servers outside the project get the workspace pinned.
    pinned = HOSTS[host].pinned
    assert (entry["args"][2:] == ["--workspace", str(workspace)]) == pinned
    assert result["changes"][0]["action"] == "added"
    assert result["changes"][0]["backup"] is None


@pytest.mark.parametrize("host", USER_HOSTS)
def test_merge_keeps_other_servers_and_keys_with_a_backup(
    home: Path, workspace: Path, host: str
) -> None:
    path = config_path(host, "user", workspace, home=home, system="linux")
    github = {"command": "gh-mcp", "args": ["--stdio"], "env": {"X": "1"}}
    original = write(host, path, {"github": github}, theme="dark")
    os.chmod(path, 0o600)

    result = install(host, home=home, system="linux", command=CMD)

    data = read(host, path)
    assert data["theme"] == "dark"
    assert data[HOSTS[host].key]["github"] == github
    assert list(data[HOSTS[host].key]) == ["github", "nxs"]
    backup = Path(result["changes"][0]["backup"])
    assert backup == path.with_name(path.name + ".bak")
    assert backup.read_text() == original
    assert path.stat().st_mode & 0o777 == 0o600  # a private host file stays private

    again = install(host, home=home, system="linux", command=CMD)
    assert again["changes"] == []
    assert not path.with_name(path.name + ".bak.1").exists()


@pytest.mark.parametrize("host", USER_HOSTS)
def test_reinstall_keeps_env_tools_and_options_and_says_what_changed(
    home: Path, workspace: Path, host: str
) -> None:
    first = install(host, home=home, system="linux", command=CMD, tools="core,insights")
    path = Path(first["path"])
    text = path.read_text()
    entry = dict(servers(host, path)["nxs"])
    entry["env"] = {"NXS_ACTOR": "me", "HF_HUB_OFFLINE": "1"}
    entry["args"] = [*entry["args"], "--actor", "me"]
    write(host, path, {"nxs": entry})

    result = install(host, home=home, system="linux", command=["/new/nxs"])

    after = servers(host, path)["nxs"]
    assert after["env"] == {"NXS_ACTOR": "me", "HF_HUB_OFFLINE": "1"}
    assert after["command"] == "/new/nxs"
    options = after["args"][2:]
    assert options[options.index("--tools") + 1] == "core,insights"
    assert options[options.index("--actor") + 1] == "me"
    details = result["changes"][0]["details"]
    assert "command: /opt/nxs/bin/nxs -> /new/nxs" in details
    assert "kept --tools core,insights" in details and "kept --actor me" in details
    assert "kept env (2 variables)" in details
    # a new --tools replaces the earlier one, and says so
    changed = install(host, home=home, system="linux", command=["/new/nxs"], tools="core")
    assert "--tools: core,insights -> core" in changed["changes"][0]["details"]
    assert text  # the first install wrote something to start from


def test_vscode_jsonc_keeps_comments_and_trailing_commas(home: Path, workspace: Path) -> None:
    path = config_path("vscode", "user", workspace, home=home, system="linux")
    path.parent.mkdir(parents=True)
    original = (
        "{\n"
        "\t// servers I use every day\n"
        '\t"servers": {\n'
        '\t\t"github": {"type": "http", "url": "https://api.example/mcp"}, // work\n'
        "\t},\n"
        '\t"inputs": [],  /* none yet */\n'
        "}\n"
    )
    path.write_text(original)
    install("vscode", home=home, system="linux", command=CMD)
    text = path.read_text()
    for kept in ("// servers I use every day", "// work", "/* none yet */"):
        assert kept in text
    assert jsonc.parse(text).value["servers"]["nxs"]["command"] == "/opt/nxs/bin/nxs"
    assert '\t\t"nxs": {\n\t\t\t"type": "stdio",' in text  # indented like the file, with tabs
    uninstall("vscode", home=home, system="linux")
    assert path.read_text() == original  # uninstall gives back the very same bytes


@pytest.mark.parametrize("host", ["claude-desktop", "cursor", "windsurf", "claude-code"])
def test_plain_json_hosts_refuse_comments_naming_the_line(
    home: Path, workspace: Path, host: str
) -> None:
    path = config_path(host, "user", workspace, home=home, system="linux")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{\n  "mcpServers": {}, // mine\n}\n')
    with pytest.raises(ValidationError) as err:
        install(host, home=home, system="linux", command=CMD)
    assert "line 2, column 21: comments are not JSON" in err.value.message
    assert err.value.code == "BAD_HOST_CONFIG"


def test_codex_toml_is_edited_in_place(home: Path, workspace: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        '# my codex settings\nmodel = "o3"\n\n[mcp_servers.github]\ncommand = "gh"\n\n'
        '[mcp_servers.nxs]\ncommand = "/old/nxs"\nargs = ["mcp", "serve", "--tools", "core"]\n'
        'startup_timeout_sec = 20\n\n[mcp_servers.nxs.env]\nNXS_ACTOR = "me"\n\n'
        '[profiles.fast]\nmodel = "o4-mini"\n'
    )
    result = install("codex", home=home, command=CMD)
    text = path.read_text()
    assert text.startswith('# my codex settings\nmodel = "o3"\n\n[mcp_servers.github]')
    assert text.endswith('[profiles.fast]\nmodel = "o4-mini"\n')
    data = tomllib.loads(text)
    assert data["mcp_servers"]["nxs"] == {
        "command": "/opt/nxs/bin/nxs",
        "args": ["mcp", "serve", "--tools", "core"],
        "startup_timeout_sec": 20,
        "env": {"NXS_ACTOR": "me"},
    }
    assert "kept startup_timeout_sec" in result["changes"][0]["details"]
    uninstall("codex", home=home)
    data = tomllib.loads(path.read_text())
    assert "nxs" not in data["mcp_servers"] and data["profiles"]["fast"]["model"] == "o4-mini"


def test_codex_entry_in_another_form_is_refused(home: Path, workspace: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('mcp_servers.nxs.command = "/old/nxs"\n')
    with pytest.raises(ValidationError, match="without a \\[mcp_servers.nxs\\] header"):
        install("codex", home=home, command=CMD)
    assert path.read_text() == 'mcp_servers.nxs.command = "/old/nxs"\n'


@pytest.mark.parametrize("host", ["claude-desktop", "windsurf", "zed"])
def test_desktop_hosts_outside_a_workspace_say_so_and_keep_an_earlier_pin(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    monkeypatch.chdir(bare)
    result = install(host, home=home, command=CMD)
    assert result["server"]["args"] == ["mcp", "serve"]
    hint = result["next"][0]
    assert "not pinned" in hint and "`workspace` argument" in hint
    assert f"nxs mcp install --host {host} --workspace /path/to/project" in hint
    pinned = install(host, home=home, command=CMD, workspace=str(tmp_path / "proj"))
    assert "--workspace" in pinned["server"]["args"]
    again = install(host, home=home, command=CMD)  # from outside again: the pin is kept
    assert again["changes"] == [] and "not pinned" not in " ".join(again["next"])


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
                # user scope: every project runs it, so it is silent outside a workspace
                "command": "/opt/nxs/bin/nxs prime --format claude-code --seam mcp --quiet-outside",
                "timeout": 30,
            }
        ]
    }
    # The protocol reaches Claude Code once: the hook says it, the server only points to it.
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["nxs"]
    assert server["args"] == ["mcp", "serve", "--instructions", "hook"]
    install("claude-code", home=home, command=CMD)
    assert len(json.loads(settings.read_text())["hooks"]["SessionStart"]) == 2
    install("claude-code", home=home, command=CMD, tools="core")  # the hook names those tools
    hook = json.loads(settings.read_text())["hooks"]["SessionStart"][1]["hooks"][0]["command"]
    assert hook.endswith("prime --format claude-code --seam mcp --tools core --quiet-outside")
    install("claude-code", home=home, command=["/moved/nxs"])
    hooks = json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert len(hooks) == 2 and hooks[1]["hooks"][0]["command"].startswith("/moved/nxs prime")
    removed = uninstall("claude-code", home=home)
    assert [c["what"] for c in removed["changes"]] == ["server", "hook"]
    assert json.loads(settings.read_text())["hooks"]["SessionStart"] == [other]
    assert "nxs" not in json.loads((home / ".claude.json").read_text())["mcpServers"]


@pytest.mark.parametrize("host", PROJECT_HOSTS)
def test_project_scope_writes_a_command_every_machine_resolves(
    home: Path, workspace: Path, host: str
) -> None:
    result = install(host, scope="project", home=home)
    path = Path(result["path"])
    assert path.is_relative_to(workspace)
    entry = servers(host, path)["nxs"]
    brief = ["--instructions", "hook"] if host == "claude-code" else []
    assert entry["command"] == "nxs" and entry["args"] == ["mcp", "serve", *brief]
    assert str(workspace) not in path.read_text()  # nothing machine-local in a committed file
    if host == "claude-code":
        hook = json.loads((workspace / ".claude/settings.json").read_text())
        command = hook["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        assert command == "nxs prime --format claude-code --seam mcp"
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
    with pytest.raises(ValidationError):
        uninstall("claude-code", home=home)


def test_bad_hook_settings_refuse_before_the_server_is_written(home: Path, workspace: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"hooks": {"SessionStart": {}}}')
    with pytest.raises(ValidationError):
        install("claude-code", home=home, command=CMD)
    assert not (home / ".claude.json").exists()


def test_invalid_toml_is_refused(home: Path, workspace: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("[mcp_servers\n")
    with pytest.raises(ValidationError, match="is not valid TOML"):
        install("codex", home=home, command=CMD)
    assert path.read_text() == "[mcp_servers\n"


def test_unknown_host_scope_and_group_are_refused(home: Path) -> None:
    with pytest.raises(ValidationError, match="unknown host"):
        install("emacs", home=home)
    with pytest.raises(ValidationError, match="no 'project' scope"):
        install("windsurf", scope="project", home=home)
    with pytest.raises(ValidationError, match="unknown tool group"):
        install("cursor", home=home, tools="core,everything")
    with pytest.raises(ValidationError, match="unknown host"):
        uninstall("emacs", home=home)


def test_uninstall_when_nothing_is_installed(home: Path, workspace: Path) -> None:
    assert uninstall("cursor", home=home)["changes"] == []
    path = home / ".cursor" / "mcp.json"
    write("cursor", path, {"github": {"command": "gh"}})
    before = path.read_text()
    assert uninstall("cursor", home=home)["changes"] == []
    assert path.read_text() == before


def test_cli_json_and_exit_codes(home: Path, workspace: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["mcp", "install", "--host", "cursor", "--json"])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.stdout)
    assert body["changes"][0]["path"] == str(home / ".cursor" / "mcp.json")
    again = runner.invoke(app, ["mcp", "install", "--host", "cursor", "--tools", "all"])
    assert again.exit_code == 0 and "--tools: " not in again.stdout  # there was none before
    assert "updated the 'nxs' server" in again.stdout
    gone = runner.invoke(app, ["mcp", "uninstall", "--host", "cursor"])
    assert gone.exit_code == 0 and "removed the 'nxs' server" in gone.stdout
    (home / ".cursor" / "mcp.json").write_text("{oops")
    bad = runner.invoke(app, ["mcp", "install", "--host", "cursor", "--json"])
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["code"] == "BAD_HOST_CONFIG"
    text = runner.invoke(app, ["mcp", "install", "--host", "vscode", "--dry-run"])
    assert text.exit_code == 0
    assert text.stdout.startswith(f"would write {home / '.config/Code/User/mcp.json'}: added")


def test_tools_all_stays_all_in_the_host_file(home: Path, workspace: Path) -> None:
    """A group a later release adds is served too: the file says `all`, not today's list."""
    result = install("cursor", home=home, system="linux", command=CMD, tools="all")
    args = servers("cursor", Path(result["path"]))["nxs"]["args"]
    assert args[args.index("--tools") + 1] == "all"


def test_installing_at_a_second_scope_warns_of_the_double_session_start(
    home: Path, workspace: Path
) -> None:
    first = install("claude-code", home=home, system="linux", command=CMD, workspace=str(workspace))
    assert not any("also installed" in hint for hint in first["next"])
    second = install(
        "claude-code", scope="project", home=home, system="linux", workspace=str(workspace)
    )
    warning = next(hint for hint in second["next"] if "also installed" in hint)
    assert "twice" in warning and "--scope user" in warning


@pytest.mark.parametrize("host", PROJECT_HOSTS)
def test_project_scope_uninstall_leaves_the_repository_as_it_was(
    home: Path, workspace: Path, host: str
) -> None:
    before = {p for p in workspace.rglob("*") if p.is_file()}
    install(host, scope="project", home=home)
    removed = uninstall(host, scope="project", home=home)
    assert removed["changes"] and all(c["backup"] is None for c in removed["changes"])
    after = {p for p in workspace.rglob("*") if p.is_file()}
    assert after == before  # no emptied host file, no "SessionStart": [], no .bak


def test_project_scope_uninstall_keeps_what_else_the_files_hold(
    home: Path, workspace: Path
) -> None:
    path = workspace / ".mcp.json"
    write("claude-code", path, {"github": {"command": "gh"}})
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"Stop": []}, "model": "opus"}\n')
    install("claude-code", scope="project", home=home)
    uninstall("claude-code", scope="project", home=home)
    assert servers("claude-code", path) == {"github": {"command": "gh"}}
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": []}, "model": "opus"}
