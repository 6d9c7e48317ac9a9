"""The session bootstrap (SPEC section 8): `nxs prime` and the MCP server's instructions.

`prime_text(workspace)` is the fan-out of one block per active module. The memory block carries,
in this order: the session protocol (`nxs.protocol`: recall, search, the memory rule with add,
the correction rule with update, store context, facts), how to write an introduction, why
nothing imports NEXUS_MEMORY.md, the other commands, and an index of open, project-scoped,
unexpired memories (key and introduction) chosen for coverage (`nxm.coverage`) within a byte
budget, with a note when some were left out and a line counting the other scopes. It names
MCP tools to a host (``seam="mcp"``) and nxm verbs to a shell (``seam="cli"``).

Two rules keep it safe to run at every session start:

- **It never fails.** A missing workspace, a broken config or an unreadable store turns into a
  line saying so; the rest of the text is still printed, and the exit code is 0.
- **Memories are data.** An introduction or key is printed on one line, with control
  characters and line separators replaced, so a memory cannot forge instructions of its own.

Records come from the store's record cache (`nxm.store.cache`), so lancedb is not imported;
only the candidates the coverage choice can reach are read (`nxm.coverage.Candidates`).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections import Counter
from collections.abc import Collection
from typing import Any

import orjson

from nxs.render import parse_timestamp, timestamp

DEFAULT_BUDGET = 6000  # bytes of the memory block; the workspace's memory.prime_budget wins

_RUNS = re.compile(r"\s+")

INTRO = (
    "# Memory (nxm)\n\n"
    "This project keeps its durable knowledge in nxm memory: one store, shared by every session "
    "and person working here. The session protocol, when to {use} each:\n"
)

RULES_AFTER = """\
Introductions: the introduction is the one line every session start sees (at most 200 \
characters), so make it the point itself, not its topic. A rules line speaks its rule: write \
"Run tests with `pytest -q`; CI allows ten minutes", not "Testing conventions". Reasons and \
detail go in the body. A memory about one issue, file or board item gets {item}, so it stays \
out of this list.

NEXUS_MEMORY.md is a projection of the open memories' introductions, kept for people to read \
and review. Do not import it from CLAUDE.md, AGENTS.md or any rules file: the index below is \
already in your context, and importing it would only repeat it.

"""
_ITEM = {"cli": "`--scope item --ref ITEM`", "mcp": 'scope "item" with the item in refs'}
_KEYS = {
    "cli": "Keys accept any unambiguous prefix. Add --json to any verb for the exact answer the "
    "MCP tool gives.\n",
    "mcp": "Keys accept any unambiguous prefix.\n",
}


def memory_rules(seam: str = "cli", served: Collection[str] | None = None) -> str:
    """The fixed head of the memory block: the session protocol and the rules, in seam words."""
    from nxs.protocol import also, steps

    use = "call" if seam == "mcp" else "run"
    text = INTRO.format(use=use) + "".join(line + "\n" for line in steps(seam, served)) + "\n"
    text += RULES_AFTER.format(item=_ITEM[seam])
    return text + also(seam, served) + _KEYS[seam]


def static_note(seam: str = "cli") -> str:
    """The line saying the text is a snapshot, naming what answers the live set."""
    live = "memory_list" if seam == "mcp" else "`nxm list`"
    return (
        "These instructions are static: they were computed when this session started and are "
        f"not refreshed. The live set is what {live} answers."
    )


LINEAR_BLOCK = {
    "cli": """\
# Linear (nxs linear)

Linear issues, projects and teams are reachable here: read with `nxs linear query ACTION`, \
write with `nxs linear mutate ACTION`; nothing deletes. Use them when the task involves a \
Linear issue, project or team. With several organisations connected, name one per call with \
`--org LABEL`; a missing or unknown label is refused, never guessed. Keys are set up with \
`nxs linear connect` and never live in the workspace.
""",
    "mcp": """\
# Linear

Linear issues, projects and teams are reachable here: read with linear_query, write with \
linear_mutate; nothing deletes. Use them when the task involves a Linear issue, project or \
team. With several organisations connected, name one per call with `org` (its label; \
`workspace` is the project root, not the organisation); a missing or unknown label is \
refused, never guessed.
""",
}


def one_line(text: Any, limit: int = 200) -> str:
    """Text as a single printable line: control characters and line breaks become spaces."""
    text = str(text)
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text)
    text = _RUNS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def index_line(record: dict[str, Any]) -> str:
    """One index line: the key and the introduction, each forced onto one line."""
    intro = record.get("introduction") or "(no introduction)"
    return f"- {one_line(record['key'], 64)}  {one_line(intro)}"


def _heading(category: Any, shown: int, total: int) -> str:
    # In brackets, so a category cannot start a line that reads as a heading or an entry.
    name = one_line(category, 64) if category is not None else "no category"
    return f"[{name}] {shown} of {total}:"


def _left_out(count: int, total: int, seam: str = "cli") -> str:
    if count == total:
        head = f"{count} memories are not shown here"
    else:
        head = f"{count} more {'memory is' if count == 1 else 'memories are'} not shown here"
    where = (
        "memory_list with scope project (and a category) lists every one"
        if seam == "mcp"
        else "`nxm list --scope project [--category C]` lists every one"
    )
    return f"({head}: the byte budget is spent. {where}.)"


_SCOPES = {
    "item": ("item-scoped", "`nxm list --scope item --ref ITEM`", "memory_list with scope item"),
    "session": ("session summaries", "`nxm recall` finds them", "memory_recall finds them"),
    "user": ("user-scoped", "`nxm list --scope user`", "memory_list with scope user"),
}


def _elsewhere(counts: dict[str, int], seam: str, served: Collection[str] | None) -> str:
    """The line counting the open memories of the other scopes ('' when there are none)."""
    parts = []
    for scope, (label, cli, mcp) in _SCOPES.items():
        if seam == "mcp" and served is not None and mcp.split()[0] not in served:
            mcp = f"memory_list with scope {scope}"
        if counts.get(scope):
            parts.append(f"{counts[scope]} {label} ({mcp if seam == 'mcp' else cli})")
    return f"Not in this index: {'; '.join(parts)}.\n" if parts else ""


def _index(chosen: list[tuple[Any, str]], totals: dict[Any, int], live: int, seam: str) -> str:
    """The index: (category, line) picks grouped by category, in the order first picked."""
    groups: dict[Any, list[str]] = {}
    for category, line in chosen:
        groups.setdefault(category, []).append(line)
    out = []
    for category, lines in groups.items():
        out.append(_heading(category, len(lines), totals[category]))
        out.extend(lines)
    text = "".join(line + "\n" for line in out)
    if len(chosen) < live:
        text += _left_out(live - len(chosen), live, seam) + "\n"
    return text


def _fit(
    picks: Any, totals: dict[Any, int], live: int, room: int, seam: str
) -> list[tuple[Any, str]]:
    """The picks taken in order while the index stays within ``room`` bytes."""
    chosen: list[tuple[Any, str]] = []
    shown: Counter[Any] = Counter()
    used = 0  # lines and headings, without the note
    for record in picks:
        category, line = record.get("category"), index_line(record)
        n = shown[category]
        grown = len(_heading(category, n + 1, totals[category]).encode()) + 1
        if n:
            grown -= len(_heading(category, n, totals[category]).encode()) + 1
        rest = live - len(chosen) - 1
        note = len(_left_out(rest, live, seam).encode()) + 1 if rest else 0
        if used + grown + len(line.encode()) + 1 + note > room:
            break
        chosen.append((category, line))
        shown[category] += 1
        used += grown + len(line.encode()) + 1
    return chosen


def memory_block(
    ws: Any,
    budget: int,
    now: str,
    seam: str = "cli",
    served: Collection[str] | None = None,
) -> str:
    """The memory module's block, at most ``budget`` bytes unless the fixed text alone is longer.

    The index is chosen for coverage (`nxm.coverage`): every category first, then by worth.
    """
    head = memory_rules(seam, served)
    note = static_note(seam)
    try:
        from nxm.coverage import Candidates
        from nxm.store import open_store

        store = open_store(ws)
        store.sync()
        found = Candidates(store.cache, now)
        if not store.remote:  # a session start in a fresh clone: its merge driver
            from nxm.store import gitconfig

            gitconfig.install(ws.root)
        unread = len(store.problems)
    except Exception as exc:  # noqa: BLE001 - a broken store must never fail a session start
        reason = one_line(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}", 300)
        listing = "memory_list" if seam == "mcp" else "`nxm list`"
        return (
            f"{head}\nThe memory index is unavailable ({reason}). "
            f"{listing} shows the memories.\n\n" + note + "\n"
        )
    finally:
        with contextlib.suppress(Exception):
            store.close()
    return _memory_index(found, head, note, budget, seam, served, unread)


def _memory_index(
    found: Any,
    head: str,
    note: str,
    budget: int,
    seam: str,
    served: Collection[str] | None,
    unread: int = 0,
) -> str:
    from nxm.coverage import Exhausted

    elsewhere = _elsewhere(found.others, seam, served)
    if unread:
        doctor = "`nxm doctor`" if seam == "cli" else "`nxm doctor` in a shell"
        elsewhere += (
            f"{unread} memory file{'s' if unread > 1 else ''} could not be read and "
            f"{'are' if unread > 1 else 'is'} left out: {doctor} says which and how to fix them.\n"
        )
    if not found.live:
        return (
            f"{head}\nNo open project memories yet: the first durable fact you learn is the "
            f"first one.\n{elsewhere}\n" + note + "\n"
        )
    title = (
        "\nMemories (open, project-scoped; the most useful of each category first; "
        "key, then introduction):\n"
    )
    tail = elsewhere + "\n" + note + "\n"
    fixed = len((head + title + tail).encode())
    while True:
        try:
            chosen = _fit(found.picks(), found.totals, found.live, budget - fixed, seam)
            break
        except Exhausted:  # the picks ran past the candidates read: more were read
            continue
    return head + title + _index(chosen, found.totals, found.live, seam) + tail


def _budget(ws: Any, budget: int | None) -> int:
    if budget is not None:
        return budget
    value = ws.section("memory").get("prime_budget", DEFAULT_BUDGET)
    return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_BUDGET


def served_tools(ws: Any, tools: str | None = None) -> set[str]:
    """The tools `nxs mcp serve` would list in this workspace (``tools``: its ``--tools``)."""
    from nxs.mcp.server import DEFAULT_GROUPS, exposed_operations, split_groups, with_linear

    groups = split_groups(tools if tools is not None else ws.section("mcp").get("tools"))[0]
    groups = groups or DEFAULT_GROUPS
    if tools is None:
        groups = with_linear(ws.modules, groups)
    return {op.tool for op in exposed_operations(ws.modules, groups)}


def prime_text(
    workspace: str | None = None,
    *,
    budget: int | None = None,
    now: str | None = None,
    seam: str = "cli",
    served: Collection[str] | None = None,
    tools: str | None = None,
) -> str:
    """The bootstrap text for a workspace: one block per active module. Never raises.

    ``seam`` "cli" names verbs (a shell), "mcp" names tools (a host), only those in ``served``
    (default: what the server would list here, with ``tools`` as its ``--tools``).
    """
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
    blocks = []
    for module in ws.modules:
        if module == "memory":
            blocks.append(memory_block(ws, _budget(ws, budget), now, seam, served))
        elif module == "linear" and (seam == "cli" or served is None or "linear_query" in served):
            blocks.append(LINEAR_BLOCK[seam])
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
    workspace: str | None = None,
    *,
    budget: int | None = None,
    format_: str = "text",
    now: str | None = None,
    quiet_outside: bool = False,
    seam: str = "cli",
    tools: str | None = None,
) -> bytes:
    """What `nxs prime` prints: the text, or the Claude Code hook answer wrapping it.

    ``quiet_outside``: nothing at all where no workspace is found (a user-wide hook runs in
    every project, and most have none); a workspace that cannot be opened is still reported.
    """
    if quiet_outside and _outside(workspace):
        return b""
    text = prime_text(workspace, budget=budget, now=now, seam=seam, tools=tools)
    return claude_code_hook(text) if format_ == "claude-code" else text.encode()


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
    """`nxs prime`'s plain arguments as `output`'s, or None for anything else (help, a bad
    value: the full CLI words those)."""
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
    """Run `nxs prime ARGS` without building the whole CLI; False when typer must handle ARGS.

    Every session start runs prime, and building every verb's parser costs more than prime
    itself. Anything unusual (--help, a bad value, an unknown option) goes the normal way.
    """
    values = prime_arguments(argv)
    if values is None:
        return False
    import sys

    data = output(**values)
    sys.stdout.flush()  # as `nxs.clitool.emit` writes: bytes exactly (typer is not loaded here)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return True


def claude_code_hook(text: str) -> bytes:
    """The SessionStart hook answer Claude Code reads: the text as additional context."""
    payload = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return orjson.dumps(payload, option=orjson.OPT_APPEND_NEWLINE)


__all__ = [
    "DEFAULT_BUDGET",
    "FORMATS",
    "HOOKED",
    "LINEAR_BLOCK",
    "SEAMS",
    "claude_code_hook",
    "fast_main",
    "index_line",
    "memory_rules",
    "one_line",
    "output",
    "prime_text",
    "served_tools",
    "static_note",
]
