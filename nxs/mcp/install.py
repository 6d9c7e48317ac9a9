"""`nxs mcp install` and `nxs mcp uninstall`: register `nxs mcp serve` in an MCP host's config.

An existing ``nxs`` entry keeps what its user set (``env``, timeouts, other options): only the
command, the options this install chose and the transport type change. Files are edited in
place (`nxs.mcp.hostfiles`), so comments and other servers stay, with a backup beside them.
A user-scope file gets this nxs's absolute path (a host may start servers with a minimal PATH);
a committed project-scope file gets plain ``nxs``. Claude Code also gets a SessionStart hook
running `nxs prime`, which delivers the protocol after /clear and compaction too (docs/mcp.md).
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from nxs.errors import ValidationError
from nxs.mcp import hostfiles, jsonc
from nxs.mcp.hosts import HOSTS, Host, config_path, hook_path

SERVER_NAME = "nxs"
HOOK_MARK = "prime --format claude-code"
SERVE = ("mcp", "serve")
# options of `nxs mcp serve` that take a value (short forms folded into the long ones)
_VALUED = {
    "--tools", "--workspace", "--actor", "--transport", "--host", "--port", "--token",
    "--instructions",
}  # fmt: skip
_SHORT = {"-w": "--workspace", "-t": "--transport"}


def server_command() -> list[str]:
    """The absolute command that starts this nxs: the console script, else this interpreter."""
    found = shutil.which("nxs")
    return [str(Path(found).resolve())] if found else [sys.executable, "-m", "nxs"]


def serve_options(args: Any) -> tuple[dict[str, str], list[str]] | None:
    """The options after ``mcp serve`` in an entry's args, and its other words (None: none)."""
    if not isinstance(args, list):
        return None
    words = [str(a) for a in args]
    at = next((i for i in range(len(words) - 1) if words[i : i + 2] == list(SERVE)), None)
    if at is None:
        return None
    options: dict[str, str] = {}
    extra: list[str] = []
    rest = words[at + 2 :]
    i = 0
    while i < len(rest):
        name, eq, value = rest[i].partition("=")
        name = _SHORT.get(name, name)
        if name in _VALUED and (eq or i + 1 < len(rest)):
            options[name] = value if eq else rest[i + 1]
            i += 1 if eq else 2
        else:
            extra.append(rest[i])
            i += 1
    return options, extra


def _flat(entry: dict[str, Any]) -> dict[str, Any]:
    """Zed's older ``"command": {"path", "args", "env"}`` as the flat form."""
    command = entry.get("command")
    if not isinstance(command, dict):
        return entry
    flat = {k: v for k, v in entry.items() if k != "command"}
    flat["command"], flat["args"] = command.get("path"), command.get("args") or []
    if command.get("env"):
        flat["env"] = command["env"]
    return flat


def merge_entry(
    spec: Host, before: Any, command: list[str], chosen: dict[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """The entry to write over ``before``, and a note per setting changed or kept."""
    notes: list[str] = []
    before = _flat(before) if isinstance(before, dict) else None
    parsed = serve_options(before.get("args")) if before else None
    options, extra = parsed or ({}, [])
    if before is not None and parsed is None:
        notes.append("its args did not run `nxs mcp serve`: replaced")
    for name, value in chosen.items():
        if name in options and options[name] != value:
            notes.append(f"{name}: {options[name]} -> {value}")
        options[name] = value
    notes.extend(f"kept {name} {value}" for name, value in options.items() if name not in chosen)
    notes.extend(f"kept the argument {word!r}" for word in extra)
    flags = [w for name, value in options.items() for w in (name, value)]
    managed: dict[str, Any] = {"source": "custom"} if spec.custom else {}
    if spec.typed:
        managed["type"] = "stdio"
    managed.update(command=command[0], args=[*command[1:], *SERVE, *flags, *extra])
    if before is None:
        if spec.custom:
            managed["env"] = {}
        return managed, notes
    if before.get("command") != managed["command"]:
        notes.append(f"command: {before.get('command')} -> {managed['command']}")
    entry = {k: managed.get(k, v) for k, v in before.items()}
    entry.update({k: v for k, v in managed.items() if k not in entry})
    for key, value in before.items():
        if key not in managed:
            size = f" ({len(value)} variables)" if key == "env" and isinstance(value, dict) else ""
            notes.append(f"kept {key}{size}")
    return entry, notes


def _bad(message: str) -> ValidationError:
    return ValidationError(message, suggestion=hostfiles.FIX, code="BAD_HOST_CONFIG")


def _read(spec: Host, path: Path) -> tuple[str, dict[str, Any]]:
    text = hostfiles.read_text(path)
    if spec.fmt == "toml":
        return text, hostfiles.parse_toml(path, text)
    return text, hostfiles.parse_json(path, text, strict=spec.fmt == "json")


def _servers(spec: Host, path: Path, data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get(spec.key, {})
    if not isinstance(servers, dict):
        raise _bad(f"{spec.key!r} in {path} is not an object")
    return servers


def _with_entry(spec: Host, path: Path, text: str, entry: dict[str, Any]) -> str:
    if spec.fmt == "toml":
        return hostfiles.toml_set(path, text, [spec.key, SERVER_NAME], entry)
    return hostfiles.json_set(path, text, (spec.key,), SERVER_NAME, entry)


def _without_entry(spec: Host, text: str) -> str | None:
    if spec.fmt == "toml":
        return hostfiles.toml_remove(text, [spec.key, SERVER_NAME])
    return jsonc.remove_member(text, (spec.key,), SERVER_NAME)


def _pruned(text: str, keys: tuple[str, ...]) -> str:
    """A project's JSON file without the members along ``keys`` an uninstall left empty, or ''
    (the file goes) when nothing is left: it held only what nxs wrote."""
    for depth in range(len(keys), 0, -1):
        node: Any = jsonc.parse(text).value
        for key in keys[:depth]:
            node = node.get(key) if isinstance(node, dict) else None
        if node not in ({}, []):
            break
        text = jsonc.remove_member(text, keys[: depth - 1], keys[depth - 1]) or text
    return "" if jsonc.parse(text).value == {} else text


def _hook_command(command: list[str], scope: str, tools: str | None) -> str:
    """The hook's command: the prime text for this host, naming the tools its server lists."""
    words = [*command, *HOOK_MARK.split(), "--seam", "mcp"]
    if tools:
        words += ["--tools", tools]
    if scope == "user":
        words.append("--quiet-outside")
    return " ".join(shlex.quote(w) for w in words)


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and HOOK_MARK in str(hook.get("command", ""))


def _session_start(path: Path, data: dict[str, Any]) -> list[Any]:
    hooks = data.get("hooks", {})
    groups = hooks.get("SessionStart", []) if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        raise _bad(f"hooks.SessionStart in {path} is not a list")
    return groups


def merge_hook(data: dict[str, Any], command: str, path: Path) -> tuple[str, list[Any]]:
    """Claude Code's SessionStart groups with our hook registered; (what changed, groups)."""
    groups = _session_start(path, data)
    for group in groups:
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if _ours(hook):
                if hook.get("command") == command:
                    return "unchanged", groups
                hook["command"] = command
                return "updated", groups
    # No matcher: every SessionStart source (startup, resume, clear, compact) gets the index.
    groups.append({"hooks": [{"type": "command", "command": command, "timeout": 30}]})
    return "added", groups


def _drop_hook(path: Path, data: dict[str, Any]) -> list[Any] | None:
    """The SessionStart groups without our hook (None when it was not there)."""
    groups = _session_start(path, data)
    out, found = [], False
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(hooks, list) and any(_ours(h) for h in hooks):
            found = True
            rest = [h for h in hooks if not _ours(h)]
            if rest:
                out.append({**group, "hooks": rest})
            continue
        out.append(group)
    return out if found else None


# A file to write: (path, what, action, summary, its new text, details).
_Plan = tuple[Path, str, str, str, str, list[str]]


def _apply(plans: list[_Plan], dry_run: bool, scope: str = "user") -> list[dict[str, Any]]:
    """Write every planned file (each read and checked first, so a refusal wrote nothing); an
    empty text deletes it. A project's files get no backup: git has them."""
    changes = []
    for path, what, action, summary, text, details in plans:
        backup = None
        if not dry_run:
            if path.exists() and scope != "project":
                backup = str(hostfiles.backup(path))
            if text:
                hostfiles.write(path, text)
            else:
                path.unlink(missing_ok=True)
        change = {"path": str(path), "what": what, "action": action, "summary": summary}
        changes.append({**change, "details": details, "backup": backup})
    return changes


def _host(host: str, scope: str) -> Host:
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
    return spec


def _root(workspace: str | None) -> Path | None:
    from nxs.workspace import find

    try:
        return find(workspace).root
    except Exception:  # noqa: BLE001 - installing before `nxm init` is allowed
        return None


def install(
    host: str, *, scope: str = "user", workspace: str | None = None, tools: str | None = None,
    dry_run: bool = False, home: Path | None = None, system: str | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Write or merge the host's entry (and Claude Code's hook); report each change.

    Raises:
        ValidationError: an unknown host, scope or tool group, or a host file that does not
            parse (nothing is written then).
    """
    spec = _host(host, scope)
    if tools is not None:
        from nxs.mcp.groups import parse_groups

        # `all` stays `all`: a group added in a later release is then served too
        names = [name.strip().lower() for name in tools.split(",")]
        tools = "all" if "all" in names else ",".join(parse_groups(tools))
    root = _root(workspace)
    project = root or Path.cwd().resolve()
    if command is None:
        command = ["nxs"] if scope == "project" else server_command()
    chosen: dict[str, str] = {}
    if workspace is not None or (root is not None and spec.pinned):
        chosen["--workspace"] = str(root or Path(workspace or ".").expanduser().resolve())
    if tools:
        chosen["--tools"] = tools
    if host == "claude-code":
        chosen["--instructions"] = "hook"  # the hook says it; the server does not repeat it
    path = config_path(host, scope, project, home=home, system=system)
    text, data = _read(spec, path)
    before = _servers(spec, path, data).get(SERVER_NAME)
    entry, notes = merge_entry(spec, before, command, chosen)
    plans: list[_Plan] = []
    if entry != before:
        action = "added" if before is None else "updated"
        where = f"{SERVER_NAME!r} server under {spec.key!r}"
        text = _with_entry(spec, path, text, entry)
        plans.append((path, "server", action, f"{action} the {where}", text, notes))
    if host == "claude-code":
        settings = hook_path(scope, project, home=home)
        hook_text = hostfiles.read_text(settings)
        hook_data = hostfiles.parse_json(settings, hook_text, strict=True)
        served = (serve_options(entry["args"]) or ({}, []))[0].get("--tools")
        hook = _hook_command(command, scope, served)
        action, groups = merge_hook(hook_data, hook, settings)
        if action != "unchanged":
            new = hostfiles.json_set(settings, hook_text, ("hooks",), "SessionStart", groups)
            summary = f"{action} the SessionStart hook running `nxs {HOOK_MARK}`"
            plans.append((settings, "hook", action, summary, new, []))
    changes = _apply(plans, dry_run, scope)
    options = serve_options(entry["args"])
    pinned = options is not None and "--workspace" in options[0]
    hints = _hints(spec, scope, root, pinned, command, bool(changes))
    for other in set(spec.scopes) - {scope}:
        there = config_path(host, other, project, home=home, system=system)
        with contextlib.suppress(ValidationError):  # that file's own problem, not this install's
            if SERVER_NAME in _servers(spec, there, _read(spec, there)[1]):
                hints.insert(0, _twice(host, other, there))
    report = {"host": host, "scope": scope, "dry_run": dry_run, "path": str(path)}
    return {**report, "server": entry, "changes": changes, "next": hints}


def _twice(host: str, other: str, path: Path) -> str:
    return (
        f"nxs is also installed for {host} at {other} scope ({path}): a session there starts two "
        "servers and receives the protocol and the memory index twice. Keep one: "
        f"`nxs mcp uninstall --host {host} --scope {other}`"
    )


def _hints(
    spec: Host, scope: str, root: Path | None, pinned: bool, command: list[str], changed: bool
) -> list[str]:
    hints = []
    if spec.pinned and not pinned:
        hints.append(
            f"{spec.name} starts servers outside any project and no nxs workspace was found "
            "here, so the entry is not pinned to one: the server lists its tools and each call "
            "must name the project in its `workspace` argument. To pin it, run "
            f"`nxs mcp install --host {spec.name} --workspace /path/to/project` (after "
            "`nxm init` there), or run this again from inside the project."
        )
    elif root is None:
        hints.append(
            "no nxs workspace found here: run `nxm init` in your project's root so the server "
            "has memories to serve"
        )
    if scope == "project" and command == ["nxs"] and shutil.which("nxs") is None:
        hints.append(
            "the committed entry runs plain `nxs`, which is not on PATH on this machine: "
            "install nxs on PATH (e.g. with pipx) here and on every teammate's machine"
        )
    if changed:
        hints.append(f"restart {spec.name} (or reload its MCP servers) to pick up the change")
    return hints


def uninstall(
    host: str, *, scope: str = "user", workspace: str | None = None, dry_run: bool = False,
    home: Path | None = None, system: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Remove the host's ``nxs`` entry (and Claude Code's hook); report each change.

    Raises:
        ValidationError: an unknown host or scope, or a host file that does not parse.
    """
    spec = _host(host, scope)
    project = _root(workspace) or Path.cwd().resolve()
    path = config_path(host, scope, project, home=home, system=system)
    text, data = _read(spec, path)
    plans: list[_Plan] = []
    if SERVER_NAME in _servers(spec, path, data):
        new = _without_entry(spec, text)
        if new is None:
            raise ValidationError(
                f"{path} defines the {SERVER_NAME!r} server in a form uninstall does not edit",
                suggestion="remove it by hand",
                code="BAD_HOST_CONFIG",
            )
        summary = f"removed the {SERVER_NAME!r} server from {spec.key!r}"
        if scope == "project":
            new = new.strip() and (new if spec.fmt == "toml" else _pruned(new, (spec.key,)))
        plans.append((path, "server", "removed", summary, new, []))
    if host == "claude-code":
        settings = hook_path(scope, project, home=home)
        hook_text = hostfiles.read_text(settings)
        groups = _drop_hook(settings, hostfiles.parse_json(settings, hook_text, strict=True))
        if groups is not None:
            new = hostfiles.json_set(settings, hook_text, ("hooks",), "SessionStart", groups)
            new = _pruned(new, ("hooks", "SessionStart")) if scope == "project" else new
            summary = "removed the SessionStart hook"
            plans.append((settings, "hook", "removed", summary, new, []))
    changes = _apply(plans, dry_run, scope)
    hints = [f"restart {host} (or reload its MCP servers) to drop the server"] if changes else []
    report = {"host": host, "scope": scope, "dry_run": dry_run, "path": str(path)}
    return {**report, "changes": changes, "next": hints}


__all__ = [
    "HOSTS", "config_path", "hook_path", "install", "merge_entry", "merge_hook", "serve_options",
    "uninstall",
]  # fmt: skip
