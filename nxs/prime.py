"""The session bootstrap (SPEC section 8): `nxs prime` and the MCP server's instructions.

One block per active module (its ``prime`` hook, `nxs.registry`), naming MCP tools to a host
(``seam="mcp"``) or CLI verbs to a shell. Safe at every session start: it never fails (a
problem becomes a line saying so, exit 0), and stored text is printed through `one_line`, so
a memory cannot forge instructions of its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from typing import Any

import orjson

from nxs.render import parse_timestamp, timestamp

_RUNS = re.compile(r"\s+")


def one_line(text: Any, limit: int = 200) -> str:
    """Text as a single printable line: control characters and line breaks become spaces."""
    text = str(text)
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text)
    text = _RUNS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def served_tools(ws: Any, tools: str | None = None) -> set[str]:
    """The tools `nxs mcp serve` would list in this workspace (``tools``: its ``--tools``)."""
    from nxs.mcp.groups import DEFAULT_GROUPS, exposed_operations, split_groups, with_linear

    groups = split_groups(tools if tools is not None else ws.section("mcp").get("tools"))[0]
    groups = groups or DEFAULT_GROUPS
    if tools is None:
        groups = with_linear(ws.modules, groups)
    return {op.tool for op in exposed_operations(ws.modules, groups)}


def prime_text(
    workspace: str | None = None, *, budget: int | None = None, now: str | None = None,
    seam: str = "cli", served: Collection[str] | None = None, tools: str | None = None,
) -> str:  # fmt: skip
    """The bootstrap text for a workspace: one block per active module. Never raises. With
    ``seam="mcp"`` only the tools ``served`` are named (default: the server's, given ``tools``)."""
    now = now or timestamp()
    if _naive(now):  # a moment without a zone is UTC, as `nxs.render.parse_timestamp` reads it
        now = parse_timestamp(now).isoformat()
    try:
        from nxs.workspace import find

        ws = find(workspace)
    except Exception as exc:  # noqa: BLE001 - no workspace is a normal state at session start
        reason = one_line(getattr(exc, "message", None) or str(exc), 300)
        if getattr(exc, "code", None) == "BAD_CONFIG":  # `nxm init` would not help
            hint = one_line(getattr(exc, "suggestion", None) or "", 300)
            return (
                f"# nxs\n\nThe nxs workspace here cannot be opened ({reason}). "
                f"{hint}; memories are listed once it opens.\n"
            )
        return (
            "# nxs\n\nNo nxs workspace is open here "
            f"({reason}). To keep project memory, run `nxm init` in the project's root; "
            "`nxs prime` then lists what is remembered.\n"
        )
    if seam == "mcp" and served is None:
        try:
            served = served_tools(ws, tools)
        except Exception:  # noqa: BLE001 - prime never fails; name every tool then
            served = None
    from nxs.registry import DECLARED, hook, module

    blocks = []
    for name in ws.modules:
        spec = module(name).prime if name in DECLARED else None
        if spec:
            try:
                text = hook(spec)(ws, budget, now, seam, served)
            except Exception as exc:  # noqa: BLE001 - a module must never fail a session start
                text = f"# {name}\n\nThis module's block is unavailable ({one_line(exc, 300)}).\n"
            if text:
                blocks.append(text)
    if not blocks:
        blocks.append(
            f"# nxs\n\nThe workspace at {ws.root} has no active module. "
            "Run `nxm init` there to keep project memory.\n"
        )
    return "\n".join(blocks)


def _naive(now: str) -> bool:
    from datetime import datetime

    try:
        return datetime.fromisoformat(now.replace("Z", "+00:00")).tzinfo is None
    except ValueError:
        return False


FORMATS = ("text", "claude-code")
SEAMS = ("cli", "mcp")

# The instructions of a server whose host gets the prime text from a hook (Claude Code): said
# once, by the hook, which also refreshes it after /clear and compaction.
HOOKED = (
    "# nxs\n\nThe session protocol (when to call each tool) and this project's memory index "
    "reach you from the `nxs prime` session-start hook, so they are not repeated here. Each "
    "tool's description says when to call it.\n"
)


def output(
    workspace: str | None = None, *, budget: int | None = None, format_: str = "text",
    now: str | None = None, quiet_outside: bool = False, seam: str = "cli",
    tools: str | None = None,
) -> bytes:  # fmt: skip
    """What `nxs prime` prints: the text, or the Claude Code hook answer wrapping it;
    ``quiet_outside``: nothing where no workspace is found (a user-wide hook runs everywhere)."""
    if quiet_outside and _outside(workspace):
        return b""
    text = prime_text(workspace, budget=budget, now=now, seam=seam, tools=tools)
    if format_ != "claude-code":
        return text.encode()
    hook = {"hookEventName": "SessionStart", "additionalContext": text}  # what Claude Code reads
    return orjson.dumps({"hookSpecificOutput": hook}, option=orjson.OPT_APPEND_NEWLINE)


def _outside(workspace: str | None) -> bool:
    from nxs.workspace import find

    try:
        find(workspace)
    except Exception as exc:  # noqa: BLE001 - prime never fails
        return getattr(exc, "code", None) == "NO_WORKSPACE"
    return False


_NAMES = {
    "--budget": "budget", "--format": "format_", "--workspace": "workspace", "-w": "workspace",
    "--now": "now", "--seam": "seam", "--tools": "tools",
}  # fmt: skip


def prime_arguments(argv: list[str]) -> dict[str, Any] | None:
    """`nxs prime`'s plain arguments as `output`'s, or None for help or a bad value."""
    values: dict[str, Any] = {}
    args = list(argv)
    while args:
        name, eq, value = args.pop(0).partition("=")
        if name == "--quiet-outside" and not eq:
            values["quiet_outside"] = True
            continue
        if name not in _NAMES or (not eq and not args):
            return None
        values[_NAMES[name]] = value if eq else args.pop(0)
    if values.get("format_", "text") not in FORMATS or values.get("seam", "cli") not in SEAMS:
        return None
    if "budget" in values:
        if not values["budget"].isdigit():
            return None
        values["budget"] = int(values["budget"])
    return values


def fast_main(argv: list[str]) -> bool:
    """Run `nxs prime ARGS` without typer (every session start runs it, and building the CLI
    costs more than prime itself); False when typer must handle ARGS (help, a bad value)."""
    values = prime_arguments(argv)
    if values is None:
        return False
    import sys

    data = output(**values)
    sys.stdout.flush()  # as `nxs.clitool.emit` writes: bytes exactly (typer is not loaded here)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return True


__all__ = [
    "FORMATS", "HOOKED", "SEAMS", "fast_main", "one_line", "output",
    "prime_text", "served_tools",
]  # fmt: skip
