"""The session protocol, stated once: when to recall, search, add, correct, store context and
update facts.

Each step's words are its operation's ``when``, which the tool's description also ends with, so
`nxs prime` and the tool descriptions cannot disagree. A host (``seam="mcp"``) is told of the
tools it is served, a shell of CLI verbs.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

# (tool, the verb a shell types) in the order a session meets them.
STEPS: tuple[tuple[str, str], ...] = (
    ("memory_recall", 'nxm recall "REQUEST"'),
    ("memory_persona", "nxm persona NAME"),
    ("memory_search", 'nxm search "QUERY"'),
    ("memory_show", "nxm show KEY"),
    ("memory_add", 'nxm remember "BODY" --introduction "LINE"'),
    ("memory_update", 'nxm update KEY --body "NEW BODY"'),
    ("memory_forget", "nxm forget KEY"),
    (
        "memory_store_context",
        'nxm store-context --conversation-id ID --summary "..." --context "..."',
    ),
    ("memory_facts_update", "nxm facts update PATCH"),
)
# The other everyday tools, named after the steps.
ALSO: tuple[tuple[str, str, str], ...] = (
    ("memory_list", "nxm list", "the live set, with filters and pages"),
    ("memory_classify", "nxm classify KEY --category C --scope item --ref ITEM", "file it"),
    ("memory_close", "nxm close KEY", "retire it, undone by memory_reopen"),
    ("memory_restore", "nxm restore KEY", "undo a forget"),
)
_TOOL = re.compile(r"\b(?:memory|graph|linear)_[a-z_]+\b")


def _ops() -> dict[str, Any]:
    from nxs.registry import operations

    return {op.tool: op for op in operations()}


def speak(text: str, seam: str) -> str:
    """``text`` (written with tool names) in the seam's words."""
    if seam == "mcp":
        return text
    ops = _ops()
    return _TOOL.sub(lambda m: f"`{ops[m[0]].command}`" if m[0] in ops else m[0], text)


def steps(seam: str, served: Collection[str] | None = None) -> list[str]:
    """The protocol's lines; a host is told only of the tools in ``served``."""
    ops = _ops()
    lines = []
    for tool, verb in STEPS:
        if seam == "mcp" and served is not None and tool not in served:
            continue
        head = tool if seam == "mcp" else f"`{verb}`"
        lines.append(f"{len(lines) + 1}. {head}: {speak(ops[tool].when, seam)}")
    return lines


def also(seam: str, served: Collection[str] | None = None) -> str:
    """The line naming the other everyday tools ('' when none is served)."""
    parts = []
    for tool, verb, what in ALSO:
        if seam == "mcp" and served is not None and tool not in served:
            continue
        parts.append(f"{tool if seam == 'mcp' else f'`{verb}`'} ({speak(what, seam)})")
    return f"Also: {', '.join(parts)}.\n" if parts else ""


def named(text: str) -> set[str]:
    """The tool names a text mentions (a test holds each to the table)."""
    return set(_TOOL.findall(text))


__all__ = ["ALSO", "STEPS", "also", "named", "speak", "steps"]
