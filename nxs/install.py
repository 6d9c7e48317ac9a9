"""`nxs mcp install`: register `nxs mcp serve` in an MCP host's own config file.

Each host keeps its servers in its own file under its own key (`HOSTS`): VS Code uses
``servers``, the others ``mcpServers``. Install merges one entry, ``nxs``, into that object and
leaves every other key and server as it was; the previous file is kept as a backup beside it.
A file that is not valid JSON is refused and nothing is written. For Claude Code it also
registers the SessionStart hook that runs ``nxs prime --format claude-code``.

Paths are derived from the home directory (and ``APPDATA`` / ``XDG_CONFIG_HOME`` where the
host uses them), so a test can point HOME at a temporary directory.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nxs.errors import ValidationError

SERVER_NAME = "nxs"
HOOK_MARK = "prime --format claude-code"


@dataclass(frozen=True)
class Host:
    """Where one MCP host keeps its servers."""

    name: str
    key: str  # the object holding the servers
    scopes: tuple[str, ...]
    typed: bool  # entries carry "type": "stdio"


HOSTS = {
    "claude-desktop": Host("claude-desktop", "mcpServers", ("user",), False),
    "claude-code": Host("claude-code", "mcpServers", ("user", "project"), True),
    "cursor": Host("cursor", "mcpServers", ("user", "project"), False),
    "windsurf": Host("windsurf", "mcpServers", ("user",), False),
    "vscode": Host("vscode", "servers", ("user", "project"), True),
}


def _system(system: str | None) -> str:
    system = system or sys.platform
    return "windows" if system.startswith("win") else "macos" if system == "darwin" else "linux"


def _appdata(home: Path) -> Path:
    return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")


def _xdg(home: Path) -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")


def config_path(
    host: str, scope: str, project: Path, *, home: Path | None = None, system: str | None = None
) -> Path:
    """The file a host reads its MCP servers from, for a scope, on an OS."""
    home = home or Path.home()
    os_name = _system(system)
    if scope == "project":
        return (
            project
            / {
                "claude-code": ".mcp.json",
                "cursor": ".cursor/mcp.json",
                "vscode": ".vscode/mcp.json",
            }[host]
        )
    if host == "claude-desktop":
        base = {
            "macos": home / "Library" / "Application Support",
            "windows": _appdata(home),
            "linux": _xdg(home),
        }[os_name]
        return base / "Claude" / "claude_desktop_config.json"
    if host == "claude-code":
        return home / ".claude.json"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "windsurf":
        return home / ".codeium" / "windsurf" / "mcp_config.json"
    base = {
        "macos": home / "Library" / "Application Support",
        "windows": _appdata(home),
        "linux": _xdg(home),
    }[os_name]
    return base / "Code" / "User" / "mcp.json"


def hook_path(scope: str, project: Path, *, home: Path | None = None) -> Path:
    """Claude Code's settings file that holds hooks."""
    if scope == "project":
        return project / ".claude" / "settings.json"
    return (home or Path.home()) / ".claude" / "settings.json"


def server_command() -> list[str]:
    """The absolute command that starts nxs: the console script, else this interpreter."""
    found = shutil.which("nxs")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "nxs"]


def server_entry(host: Host, command: list[str], args: list[str]) -> dict[str, Any]:
    """The host's entry for the nxs server."""
    entry: dict[str, Any] = {"type": "stdio"} if host.typed else {}
    entry["command"] = command[0]
    entry["args"] = [*command[1:], "mcp", "serve", *args]
    return entry


def read_json(path: Path) -> dict[str, Any]:
    """A host config as a dict ({} when the file is missing or empty).

    Raises:
        ValidationError: the file is not a JSON object; nothing is written then.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(
            f"cannot read {path}: {exc}", suggestion="fix or move the file, then run install again"
        ) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            suggestion="fix the file by hand (nothing was written), then run install again",
            code="BAD_HOST_CONFIG",
        ) from None
    if not isinstance(data, dict):
        raise ValidationError(
            f"{path} does not hold a JSON object",
            suggestion="fix the file by hand (nothing was written), then run install again",
            code="BAD_HOST_CONFIG",
        )
    return data


def _object(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise ValidationError(
            f"{key!r} in {path} is not a JSON object",
            suggestion="fix the file by hand (nothing was written), then run install again",
            code="BAD_HOST_CONFIG",
        )
    return value


def _backup(path: Path) -> Path:
    backup = path.with_name(path.name + ".bak")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.bak.{n}")
        n += 1
    shutil.copy2(path, backup)
    return backup


def _write(path: Path, data: dict[str, Any]) -> None:
    """Replace the file atomically, keeping its permissions (host files may be private)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _hook_command(command: list[str]) -> str:
    return " ".join(shlex.quote(c) for c in command) + " " + HOOK_MARK


def merge_hook(data: dict[str, Any], command: str, path: Path) -> str:
    """Register the SessionStart hook in Claude Code settings; returns what changed."""
    hooks = _object(data, "hooks", path)
    groups = hooks.setdefault("SessionStart", [])
    if not isinstance(groups, list):
        raise ValidationError(
            f"hooks.SessionStart in {path} is not a list",
            suggestion="fix the file by hand (nothing was written), then run install again",
            code="BAD_HOST_CONFIG",
        )
    for group in groups:
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and HOOK_MARK in str(hook.get("command", "")):
                if hook.get("command") == command:
                    return "unchanged"
                hook["command"] = command
                return "updated"
    # No matcher: every SessionStart source (startup, resume, clear, compact) gets the index.
    groups.append({"hooks": [{"type": "command", "command": command, "timeout": 30}]})
    return "added"


def _plan(path: Path, change: Any, what: str, summary: dict[str, str]) -> dict[str, Any] | None:
    """Read a file and apply a change in memory; None when nothing would change."""
    data = read_json(path)
    action = change(data)
    if action == "unchanged":
        return None
    return {"path": path, "data": data, "action": action, "what": what, "summary": summary[action]}


def install(
    host: str,
    *,
    scope: str = "user",
    workspace: str | None = None,
    tools: str | None = None,
    dry_run: bool = False,
    home: Path | None = None,
    system: str | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """Write or merge the host's config (and Claude Code's hook); report each change.

    Raises:
        ValidationError: an unknown host or scope, or an existing config that is not JSON.
    """
    if host not in HOSTS:
        raise ValidationError(
            f"unknown host {host!r}", suggestion=f"hosts: {', '.join(HOSTS)}", code="BAD_HOST"
        )
    spec = HOSTS[host]
    if scope not in spec.scopes:
        raise ValidationError(
            f"{host} has no {scope!r} scope",
            suggestion=f"{host} scopes: {', '.join(spec.scopes)}",
            code="BAD_SCOPE",
        )
    if tools is not None:
        from nxs.mcpserver import parse_groups

        tools = ",".join(parse_groups(tools))
    from nxs.workspace import find

    root: Path | None
    try:
        root = find(workspace).root
    except Exception:  # noqa: BLE001 - installing before `nxm init` is allowed
        root = None
    project = root or Path.cwd().resolve()
    # Hosts without a project (Claude Desktop, Windsurf) start servers in an unrelated
    # directory, so they get the workspace pinned; the others start it in the project.
    args: list[str] = []
    if workspace is not None or (root is not None and host in ("claude-desktop", "windsurf")):
        args += ["--workspace", str(root or Path(workspace or ".").resolve())]
    if tools:
        args += ["--tools", tools]
    command = command or server_command()
    entry = server_entry(spec, command, args)
    path = config_path(host, scope, project, home=home, system=system)

    def change_server(data: dict[str, Any]) -> str:
        servers = _object(data, spec.key, path)
        before = servers.get(SERVER_NAME)
        if before == entry:
            return "unchanged"
        servers[SERVER_NAME] = entry
        return "added" if before is None else "updated"

    plans = [
        _plan(
            path,
            change_server,
            "server",
            {
                "added": f"added the {SERVER_NAME!r} server under {spec.key!r}",
                "updated": f"updated the {SERVER_NAME!r} server under {spec.key!r}",
            },
        )
    ]
    if host == "claude-code":
        settings = hook_path(scope, project, home=home)
        hook = _hook_command(command)
        plans.append(
            _plan(
                settings,
                lambda data: merge_hook(data, hook, settings),
                "hook",
                {
                    "added": "added the SessionStart hook running `nxs prime --format claude-code`",
                    "updated": "updated the SessionStart hook to `nxs prime --format claude-code`",
                },
            )
        )
    # Every file was read and checked above: a refusal has written nothing.
    changes = []
    for plan in filter(None, plans):
        target: Path = plan.pop("path")
        data = plan.pop("data")
        plan["path"], plan["backup"] = str(target), None
        if not dry_run:
            if target.exists():
                plan["backup"] = str(_backup(target))
            _write(target, data)
        changes.append(plan)
    hints = []
    if root is None:
        hints.append(
            "no nxs workspace found here: run `nxm init` in your project's root so the server "
            "has memories to serve"
        )
    hints.append(f"restart {host} (or reload its MCP servers) to pick up the change")
    return {
        "host": host,
        "scope": scope,
        "dry_run": dry_run,
        "path": str(path),
        "server": entry,
        "changes": changes,
        "next": hints,
    }


__all__ = ["HOSTS", "config_path", "hook_path", "install", "merge_hook", "read_json"]
