"""The session bootstrap (SPEC section 8): `nxs prime` and the MCP server's instructions.

`prime_text(workspace)` is the fan-out of one block per active module. The memory block carries,
in this order: the memory rule, the correction rule, how to write an introduction, why nothing
imports NEXUS_MEMORY.md, the commands, and an index of open, project-scoped, unexpired memories
(key and introduction, reading order) within a byte budget, with a note when some were left out.

Two rules keep it safe to run at every session start:

- **It never fails.** A missing workspace, a broken config or an unreadable store turns into a
  line saying so; the rest of the text is still printed, and the exit code is 0.
- **Memories are data.** An introduction or key is printed on one line, with control
  characters and line separators replaced, so a memory cannot forge instructions of its own.

Records come from the store's record cache (`Store.records().heads()`), so lancedb is not
imported.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import orjson

from nxs.render import parse_timestamp, timestamp

DEFAULT_BUDGET = 6000  # bytes of the memory block; the workspace's memory.prime_budget wins

_RUNS = re.compile(r"\s+")

MEMORY_RULES = """\
# Memory (nxm)

This project keeps its durable knowledge in nxm memory: one store, shared by every session and \
person working here.

Memory rule: when you learn something that will still be true after this task (a convention, \
a decision and its reason, a gotcha, who owns what), save it at once with \
`nxm remember "BODY" --introduction "ONE LINE"` (MCP tool memory_add). Never keep it in an \
ad-hoc MEMORY.md or notes file: nothing ever reads such a file back.

Correction rule: when a memory contradicts what you find in the project, correct it in place \
under its key with `nxm update KEY --body "..." --introduction "..."` (memory_update), or \
`nxm forget KEY` (memory_forget) when it is no longer true. You are the best-informed \
corrector it will ever have; do not work around a wrong memory.

Introductions: the introduction is the one line every session start sees (at most 200 \
characters), so make it the point itself, not its topic. A rules line speaks its rule: write \
"Run tests with `pytest -q`; CI allows ten minutes", not "Testing conventions". Reasons and \
detail go in the body. A memory about one issue, file or board item gets \
`--scope item --ref ITEM`, so it stays out of this list.

NEXUS_MEMORY.md is a projection of every memory (index and bodies) kept for people to read and \
review. Do not import it from CLAUDE.md, AGENTS.md or any rules file: the index below is \
already in your context, and importing it would repeat the index and add every body under it.

Commands (MCP tool in brackets):
  nxm show KEY                      the full memory [memory_show]
  nxm search "QUERY"                find memories by meaning and words [memory_search]
  nxm list                          the live set, with filters and pages [memory_list]
  nxm remember "BODY" --introduction "LINE"   save a memory [memory_add]
  nxm update KEY --body ... --introduction ...   correct it in place [memory_update]
  nxm classify KEY --category C --scope item --ref ITEM   file it [memory_classify]
  nxm close KEY | nxm forget KEY    retire it (reversible: nxm reopen, nxm restore)
Keys accept any unambiguous prefix. Add --json to any verb for the exact answer the MCP tool \
gives.
"""

STATIC_NOTE = (
    "These instructions are static: they were computed when this session started and are not "
    "refreshed. The live set is what `nxm list` (memory_list) answers."
)

LINEAR_BLOCK = """\
# Linear (nxs linear)

Linear issues, projects and teams are reachable here. Read with \
`nxs linear query ACTION` (MCP tool linear_query) and write with `nxs linear mutate ACTION` \
(linear_mutate); nothing deletes. With several organisations connected, name one per call with \
`org` (its label; `workspace` is the nxs workspace path, not the organisation); a missing or \
unknown label is refused, never guessed. Keys are set up with `nxs linear connect` and never \
live in the workspace.
"""


def one_line(text: Any, limit: int = 200) -> str:
    """Text as a single printable line: control characters and line breaks become spaces."""
    text = str(text)
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text)
    text = _RUNS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _live(record: dict[str, Any], now: str) -> bool:
    if record.get("status") != "open" or record.get("scope") != "project":
        return False
    expires = record.get("expires")
    if not expires:
        return True
    try:
        return parse_timestamp(expires) > parse_timestamp(now)
    except (ValueError, TypeError, AttributeError):
        return True  # a malformed expiry is not a reason to hide a memory


def _listed(record: Any, now: str) -> bool:
    return isinstance(record, dict) and bool(record.get("key")) and _live(record, now)


def live_records(records: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """The memories the index lists, in reading order."""
    from nxm.record import reading_order

    return reading_order([r for r in records if _listed(r, now)])


def index_line(record: dict[str, Any]) -> str:
    """One index line: the key and the introduction, each forced onto one line."""
    intro = record.get("introduction") or "(no introduction)"
    return f"- {one_line(record['key'], 64)}  {one_line(intro)}"


def _left_out(count: int, total: int) -> str:
    if count == total:
        head = f"{count} memories are not shown here"
    else:
        head = f"{count} more {'memory is' if count == 1 else 'memories are'} not shown here"
    return (
        f"({head}: the byte budget is spent. "
        "`nxm list --scope project` (memory_list) lists every one.)"
    )


def memory_block(ws: Any, budget: int, now: str) -> str:
    """The memory module's block, at most ``budget`` bytes unless the fixed text alone is longer."""
    head = MEMORY_RULES
    try:
        from nxm.store import Store

        # heads (no body, no history), in reading order from the record cache (no lancedb)
        live = [r for r in Store(ws).records().heads(ordered=True) if _listed(r, now)]
        listed = iter(live)
    except Exception as exc:  # noqa: BLE001 - a broken store must never fail a session start
        reason = one_line(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}", 300)
        return (
            f"{head}\nThe memory index is unavailable ({reason}). "
            "Run `nxm list` to see the memories.\n\n" + STATIC_NOTE + "\n"
        )
    if not live:
        return (
            f"{head}\nNo open project memories yet: the first durable fact you learn is the "
            "first one.\n\n" + STATIC_NOTE + "\n"
        )
    title = "\nMemories (open, project-scoped, in reading order; key, then introduction):\n"
    tail = "\n" + STATIC_NOTE + "\n"
    used = len((head + title + tail).encode())
    shown: list[str] = []
    for n, record in enumerate(listed):  # lines are made only while the budget lasts
        entry = index_line(record)
        size = len(entry.encode()) + 1
        rest = len(live) - n - 1
        note = len(_left_out(rest, len(live)).encode()) + 1 if rest else 0
        if used + size + note > budget:
            break
        shown.append(entry)
        used += size
    body = "".join(x + "\n" for x in shown)
    if len(shown) < len(live):
        body += _left_out(len(live) - len(shown), len(live)) + "\n"
    return head + title + body + tail


def _budget(ws: Any, budget: int | None) -> int:
    if budget is not None:
        return budget
    value = ws.section("memory").get("prime_budget", DEFAULT_BUDGET)
    return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_BUDGET


def prime_text(
    workspace: str | None = None, *, budget: int | None = None, now: str | None = None
) -> str:
    """The bootstrap text for a workspace: one block per active module. Never raises."""
    now = now or timestamp()
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
    blocks = []
    for module in ws.modules:
        if module == "memory":
            blocks.append(memory_block(ws, _budget(ws, budget), now))
        elif module == "linear":
            blocks.append(LINEAR_BLOCK)
    if not blocks:
        blocks.append(
            f"# nxs\n\nThe workspace at {ws.root} has no active module. "
            "Run `nxm init` there to keep project memory.\n"
        )
    return "\n".join(blocks)


FORMATS = ("text", "claude-code")


def output(
    workspace: str | None = None,
    *,
    budget: int | None = None,
    format_: str = "text",
    now: str | None = None,
    quiet_outside: bool = False,
) -> bytes:
    """What `nxs prime` prints: the text, or the Claude Code hook answer wrapping it.

    ``quiet_outside``: nothing at all where no workspace is found (a user-wide hook runs in
    every project, and most have none); a workspace that cannot be opened is still reported.
    """
    if quiet_outside and _outside(workspace):
        return b""
    text = prime_text(workspace, budget=budget, now=now)
    return claude_code_hook(text) if format_ == "claude-code" else text.encode()


def _outside(workspace: str | None) -> bool:
    from nxs.workspace import find

    try:
        find(workspace)
    except Exception as exc:  # noqa: BLE001 - prime never fails
        return getattr(exc, "code", None) == "NO_WORKSPACE"
    return False


def fast_main(argv: list[str]) -> bool:
    """Run `nxs prime ARGS` without building the whole CLI; False when typer must handle ARGS.

    Every session start runs prime, and building every verb's parser costs more than prime
    itself. Anything unusual (--help, a bad value, an unknown option) goes the normal way.
    """
    names = {"--budget": "budget", "--format": "format_", "--workspace": "workspace"}
    names |= {"-w": "workspace", "--now": "now"}
    values: dict[str, Any] = {}
    args = list(argv)
    while args:
        name, eq, value = args.pop(0).partition("=")
        if name == "--quiet-outside" and not eq:
            values["quiet_outside"] = True
            continue
        if name not in names or (not eq and not args):
            return False
        values[names[name]] = value if eq else args.pop(0)
    if values.get("format_", "text") not in FORMATS:
        return False
    if "budget" in values:
        if not values["budget"].isdigit():
            return False
        values["budget"] = int(values["budget"])
    from nxs.clitool import emit

    emit(output(**values))
    return True


def claude_code_hook(text: str) -> bytes:
    """The SessionStart hook answer Claude Code reads: the text as additional context."""
    payload = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return orjson.dumps(payload, option=orjson.OPT_APPEND_NEWLINE)


__all__ = [
    "DEFAULT_BUDGET",
    "FORMATS",
    "claude_code_hook",
    "fast_main",
    "index_line",
    "live_records",
    "one_line",
    "output",
    "prime_text",
]
