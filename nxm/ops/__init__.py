"""The memory module's operations: one declaration each, both seams derived from it.

Handlers receive the call `Context` and validated keyword arguments. This module must import
cheaply (it builds `nxm --help`): services are reached through ``ctx.memory``, lazily.
"""

from __future__ import annotations

import functools
from typing import Any

from nxm import secrets
from nxm.record import LAYERS, PRIORITIES, SCOPES, SIGNALS, STATUSES  # noqa: F401
from nxs.context import Context
from nxs.ops import Operation, Param


def arg(name: str, help: str, max_len: int | None = None, **kw: Any) -> Param:
    """A required positional parameter (an argument on the CLI)."""
    return Param(name, help=help, required=True, positional=True, max_len=max_len, **kw)


KEY = arg("key", "Key or an unambiguous prefix.", 64, aliases=("memory_id",))
INTRODUCTION = Param(
    "introduction", help="One line: the only part a session start sees.", max_len=200
)
CATEGORY = Param(
    "category", help="Kind of knowledge: conventions, decisions, gotchas, owners, ...", max_len=64
)
SCOPE = Param("scope", help="Default project; item needs the item in refs.", choices=SCOPES)
REFS = Param("refs", type="list", help="Issue ids, file paths or items it is about.", max_len=50,
             aliases=("ref",))  # fmt: skip
PRIORITY = Param("priority", help="Default MEDIUM.", choices=PRIORITIES)
ALLOW_SECRET = Param("allow_secret", type="bool", help="Store text that looks like a credential "
                     "(an example, not a real one).")  # fmt: skip

FILTERS = (
    Param("status", help="Default open.", choices=(*STATUSES, "all")),
    Param("category", help="Only this category.", max_len=64),
    Param("scope", help="Only this scope.", choices=SCOPES),
    Param("ref", help="Only memories with this ref, or a path under it.", max_len=200),
    Param("user_id", help="Only this user's memories.", max_len=200),
    Param("agent_id", help="Only this agent's memories.", max_len=200),
    Param("session_id", help="Only this session's memories.", max_len=200,
          aliases=("conversation_id",)),
    Param("layer", help="Only this layer.", choices=LAYERS),
    Param("priority", help="Only this priority.", choices=PRIORITIES),
)  # fmt: skip
PROVENANCE = (
    Param("user_id", help="The user this memory belongs to.", max_len=200),
    Param("agent_id", help="The agent this memory belongs to.", max_len=200),
    Param("session_id", help="The session or conversation it came from.", max_len=200,
          aliases=("conversation_id",)),
    Param("metadata", type="object", help="Free-form JSON object."),
)  # fmt: skip


def _method(name: str, *stamps: str) -> Any:
    """A handler calling the memory service's ``name`` with the call's ``stamps`` (now, actor)."""

    def handler(ctx: Context, **kw: Any) -> Any:
        return getattr(ctx.memory, name)(**{s: getattr(ctx, s) for s in stamps}, **kw)

    handler.__name__ = name
    return handler


def calling(module: str, name: str, actor: bool = True) -> Any:
    """A handler that imports ``module`` when called and runs ``name(service, now=…, **kw)``."""

    def handler(ctx: Context, **kw: Any) -> Any:
        from importlib import import_module

        if actor:
            kw["actor"] = ctx.actor
        return getattr(import_module(module), name)(ctx.memory, now=ctx.now, **kw)

    return handler


def _scanned(handler: Any) -> Any:
    """``handler`` refusing a credential in any text it is given (a comment, metadata, refs,
    the actor, a graph description: what is written is committed), unless ``allow_secret``."""

    @functools.wraps(handler)
    def scan(ctx: Context, **kw: Any) -> Any:
        secrets.refuse(bool(kw.get("allow_secret")), actor=ctx.actor, **kw)
        return handler(ctx, **kw)

    return scan


def op(
    name: str, group: str, *, tool: str = "", verb: tuple[str, ...] = (), **kw: Any
) -> Operation:
    """A memory operation: tool ``memory_<name>`` and verb ``(name,)`` unless given; a write
    scans every text it is given for credentials first (`nxm.secrets`)."""
    if kw.get("writes"):
        kw["handler"] = _scanned(kw["handler"])
    return Operation(name=name, tool=tool or f"memory_{name}", cli="nxm", verb=verb or (name,),
                     module="memory", group=group, **kw)  # fmt: skip


def _state(name: str, summary: str, example: str, group: str = "core", when: str = "") -> Operation:
    handler = _method(name, "now", "actor")
    return op(name, group, summary=summary, handler=handler, params=(KEY,), writes=True,
              example=example, when=when)  # fmt: skip


OPERATIONS: list[Operation] = [
    op("add", "core", aliases=("remember",),
       summary="Save a durable project fact under a content-hash key; the same body twice "
       "returns the existing memory, and the answer lists stored memories it resembles "
       "(pass supersedes to replace one).",
       when="as soon as you learn something still true after this task (a convention, a "
       "decision and its reason, a gotcha, who owns what). The memory rule: never keep such a "
       "fact in an ad-hoc MEMORY.md or notes file; nothing reads one back.",
       handler=_method("add", "now", "actor"), writes=True,
       params=(
           arg("body", "The full content: self-contained, specific.", 200_000,
               aliases=("memory", "content"), stdin=True),
           Param("introduction", help=INTRODUCTION.help, required=True, max_len=200),
           CATEGORY,
           SCOPE,
           REFS,
           PRIORITY,
           Param("layer", help="Default PERMANENT; TASK expires after ttl_days.", choices=LAYERS),
           Param("ttl_days", type="float", help="Days a TASK memory lives (default from config).",
                 min=0.001, max=3650),
           Param("supersedes",
                 help="Key of the memory this one replaces (closed and linked, in one write).",
                 max_len=64),
           *PROVENANCE,
           ALLOW_SECRET,
       ),
       example='nxm add "Release tags are cut from main only; CI refuses others." --introduction "Release tags come from main only" --category conventions'),
    op("update", "core",
       summary="Correct a memory in place under its key (body, introduction, priority).",
       when="when a memory contradicts what you find. The correction rule: you are the "
       "best-informed corrector it will ever have; never work around a wrong memory.",
       handler=_method("update", "now", "actor"), writes=True,
       params=(
           KEY,
           INTRODUCTION,
           Param("body", help="The new full content.", max_len=200_000,
                 aliases=("memory", "content"), stdin=True),
           PRIORITY,
           ALLOW_SECRET,
       ),
       example='nxm update 3f2a --introduction "Release tags come from main or hotfix/*"'),
    op("classify", "core", summary="File a memory: set its category, scope, refs or introduction.",
       handler=_method("classify", "now", "actor"), writes=True,
       params=(KEY, CATEGORY, SCOPE, REFS, INTRODUCTION),
       example="nxm classify 3f2a --scope item --refs NC-103"),
    _state("close", "Close a memory that no longer applies (reversible with reopen).",
           "nxm close 3f2a"),
    _state("reopen", "Reopen a closed memory.", "nxm reopen 3f2a"),
    _state("forget", "Forget a wrong memory: hidden everywhere, reversible with restore.",
           "nxm forget 3f2a", when="when a memory is no longer true at all."),
    _state("restore", "Restore a forgotten memory.", "nxm restore 3f2a"),
    # Destructive, so not in the default tool surface: the "insights" (lifecycle) group.
    _state("purge", "Delete a forgotten memory for good (cannot be undone).", "nxm purge 3f2a",
           group="insights"),
    op("show", "core",
       summary="Fetch one memory in full (body, classification, provenance, history) by key.",
       when="when a memory matters to the task and its introduction is not enough.",
       handler=_method("show"), params=(KEY,), example="nxm show 3f2a"),
    op("list", "core",
       summary="List memories in reading order with filters and pagination (the live set).",
       handler=_method("list"),
       params=(
           *FILTERS,
           Param("page", type="int", help="Page number, from 1.", default=1, min=1, max=1_000_000),
           Param("page_size", type="int", help="Memories per page.", default=20, min=1, max=200,
                 aliases=("limit",)),
       ),
       example="nxm list --category conventions --page 2"),
    op("search", "core",
       summary="Find memories by meaning and words (hybrid keyword + semantic by default).",
       when="before deciding what the project may already have settled, and whenever the "
       "work reaches a new area.",
       handler=_method("search", "now"),
       params=(
           arg("query", "Words, an identifier or a question.", 4000),
           Param("mode", default="hybrid", choices=("hybrid", "semantic", "keyword")),
           Param("limit", type="int", help="Results to return.", default=5, min=1, max=20,
                 aliases=("max_results",)),
           Param("user_query_full",
                 help="The user's whole message, verbatim; matched instead of query.",
                 max_len=20_000),
           Param("use_full_query", type="bool", help="Match on user_query_full when given."),
           Param("conversation_id", help="Thread label, not a filter (see session_id).",
                 max_len=200),
           *(p for p in FILTERS if p.name != "session_id"),
           Param("session_id", help="Only this session's memories.", max_len=200),
       ),
       example='nxm search "how are releases tagged" --mode hybrid --limit 10'),
    op("history", "insights",
       summary="The event timeline of a memory: created, updated, closed, feedback, ...",
       handler=_method("history"),
       params=(
           KEY,
           Param("limit", type="int", help="Events to return.", default=20, min=1, max=1000),
           Param("order", help="Which end first.", default="newest", choices=("newest", "oldest")),
       ),
       example="nxm history 3f2a --order oldest"),
]  # fmt: skip
