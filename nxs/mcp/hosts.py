"""Where each MCP host keeps its servers: the file per scope and OS, the key, the entry's form
(each host's own documentation, cited in docs/mcp.md).

Paths derive from the home directory (and ``APPDATA``, ``XDG_CONFIG_HOME``, ``CODEX_HOME``), so
a test can point HOME at a temporary directory.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Host:
    """Where one MCP host keeps its servers, and how."""

    name: str
    key: str  # the table holding the servers
    scopes: tuple[str, ...]
    typed: bool = False  # entries carry "type": "stdio"
    fmt: str = "json"  # json (read strictly) | jsonc (comments, trailing commas) | toml
    pinned: bool = False  # starts servers outside the project: install pins the workspace
    custom: bool = False  # entries carry "source": "custom" (Zed)


HOSTS = {
    "claude-desktop": Host("claude-desktop", "mcpServers", ("user",), pinned=True),
    "claude-code": Host("claude-code", "mcpServers", ("user", "project"), typed=True),
    "cursor": Host("cursor", "mcpServers", ("user", "project")),
    "windsurf": Host("windsurf", "mcpServers", ("user",), pinned=True),
    "vscode": Host("vscode", "servers", ("user", "project"), typed=True, fmt="jsonc"),
    "codex": Host("codex", "mcp_servers", ("user", "project"), fmt="toml"),
    "gemini": Host("gemini", "mcpServers", ("user", "project"), fmt="jsonc"),
    "zed": Host("zed", "context_servers", ("user",), fmt="jsonc", pinned=True, custom=True),
}
PROJECT_FILES = {
    "claude-code": ".mcp.json", "cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json",
    "codex": ".codex/config.toml", "gemini": ".gemini/settings.json",
}  # fmt: skip
USER_FILES = {  # under the home directory, whatever the OS
    "claude-code": ".claude.json",
    "cursor": ".cursor/mcp.json",
    "windsurf": ".codeium/windsurf/mcp_config.json",
    "gemini": ".gemini/settings.json",
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
        return project / PROJECT_FILES[host]
    if host in USER_FILES:
        return home / USER_FILES[host]
    app_support = {
        "macos": home / "Library" / "Application Support",
        "windows": _appdata(home),
        "linux": _xdg(home),
    }[os_name]
    if host == "claude-desktop":
        return app_support / "Claude" / "claude_desktop_config.json"
    if host == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if host == "zed":  # ~/.config/zed on macOS too
        base = _appdata(home) / "Zed" if os_name == "windows" else _xdg(home) / "zed"
        return base / "settings.json"
    return app_support / "Code" / "User" / "mcp.json"


def hook_path(scope: str, project: Path, *, home: Path | None = None) -> Path:
    """Claude Code's settings file that holds hooks."""
    if scope == "project":
        return project / ".claude" / "settings.json"
    return (home or Path.home()) / ".claude" / "settings.json"


__all__ = ["HOSTS", "PROJECT_FILES", "Host", "config_path", "hook_path"]
