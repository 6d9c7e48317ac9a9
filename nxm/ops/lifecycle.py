"""Lifecycle, knowledge and graph operations (seed 002): one declaration each, both seams.

Handlers reach the service through ``ctx.memory`` and the modules behind them lazily, so this
module stays cheap to import (it builds `nxm --help`). Reads take the moment from ``ctx.now``:
expiry depends on it, and it keeps both seams' answers byte-identical.
"""

from __future__ import annotations

from typing import Any

from nxm.ops import KEY
from nxm.record import SIGNALS
from nxs.context import Context
from nxs.ops import Operation, Param

ENTITY_TYPES = ("PERSON", "ORGANIZATION", "PLACE", "THING")
DIRECTIONS = ("both", "outgoing", "incoming")


def _promote(ctx: Context, **kw: Any) -> Any:
    from nxm.lifecycle import promote

    return promote(ctx.memory, now=ctx.now, actor=ctx.actor, **kw)


def _feedback(ctx: Context, **kw: Any) -> Any:
    from nxm.lifecycle import feedback

    return feedback(ctx.memory, now=ctx.now, actor=ctx.actor, **kw)


def _revert(ctx: Context, **kw: Any) -> Any:
    from nxm.lifecycle import revert

    return revert(ctx.memory, now=ctx.now, actor=ctx.actor, **kw)


def _knowledge(ctx: Context, **kw: Any) -> Any:
    from nxm.knowledge import knowledge

    return knowledge(ctx.memory.store.records(), now=ctx.now, **kw)


def _graph(ctx: Context) -> Any:
    from nxm import graph

    return graph.current(ctx.memory, ctx.now)


def _graph_search(ctx: Context, **kw: Any) -> Any:
    from nxm.graph.query import search

    return search(_graph(ctx), **kw)


def _graph_traverse(ctx: Context, **kw: Any) -> Any:
    from nxm.graph.query import traverse

    return traverse(_graph(ctx), **kw)


def _graph_query(ctx: Context, **kw: Any) -> Any:
    from nxm.graph.query import ask

    return ask(_graph(ctx), **kw)


def _graph_add(ctx: Context, **kw: Any) -> Any:
    from nxm.graph import add

    return add(ctx.memory, now=ctx.now, actor=ctx.actor, **kw)


def _graph_relate(ctx: Context, **kw: Any) -> Any:
    from nxm.graph import relate

    return relate(ctx.memory, now=ctx.now, actor=ctx.actor, **kw)


def _graph_remove(ctx: Context, **kw: Any) -> Any:
    from nxm.graph import remove

    return remove(ctx.memory, now=ctx.now, actor=ctx.actor, **kw)


def _stats(ctx: Context, **kw: Any) -> Any:
    from nxm.insights import stats

    service = ctx.memory
    return stats(service.ws, service.store.records(), now=ctx.now, **kw)


def _profile(ctx: Context, *, user: str) -> Any:
    from nxm.insights import profile

    entities = list(_graph(ctx).entities.values())
    return profile(ctx.memory.store.records(), entities, user=user, now=ctx.now)


def _entities(ctx: Context) -> Any:
    from nxm.insights import entities

    return entities(ctx.memory.store.records(), now=ctx.now)


def _op(name: str, tool: str, verb: tuple[str, ...], group: str, **kw: Any) -> Operation:
    return Operation(name=name, tool=tool, cli="nxm", verb=verb, module="memory", group=group, **kw)


ENTITY_REF = Param(
    "entity",
    help="Entity id (ent-...) or its exact name.",
    required=True,
    positional=True,
    max_len=200,
    aliases=("entity_id",),
)

OPERATIONS: list[Operation] = [
    _op(
        "promote",
        "memory_promote",
        ("promote",),
        "insights",
        summary="Make a TASK memory permanent (it stops expiring). Use when a temporary note "
        "turned out to matter for good.",
        handler=_promote,
        params=(KEY,),
        writes=True,
        example="nxm promote 3f2a",
    ),
    _op(
        "feedback",
        "memory_feedback",
        ("feedback",),
        "insights",
        summary="Rate a memory POSITIVE, NEGATIVE or NEUTRAL after using it; positive memories "
        "rank higher in search, negative ones lower.",
        handler=_feedback,
        params=(
            KEY,
            Param(
                "signal",
                help="POSITIVE, NEGATIVE or NEUTRAL.",
                required=True,
                positional=True,
                choices=SIGNALS,
            ),
            Param("comment", help="Why (kept in the memory's history).", max_len=2000),
        ),
        writes=True,
        example='nxm feedback 3f2a NEGATIVE --comment "outdated since the move to tomllib"',
    ),
    _op(
        "revert",
        "memory_revert",
        ("revert",),
        "insights",
        summary="Undo edits: put a memory's body, introduction, priority and classification "
        "back as they were before its latest edit, or just after event `to` of its history.",
        handler=_revert,
        params=(
            KEY,
            Param(
                "to",
                type="int",
                help="The history event to return to (its n in the history); default: the one "
                "before the latest edit.",
                min=1,
                max=1_000_000,
                aliases=("event",),
            ),
        ),
        writes=True,
        example="nxm revert 3f2a --to 2",
    ),
    _op(
        "knowledge",
        "memory_knowledge",
        ("knowledge",),
        "knowledge",
        summary="The consolidated knowledge profile: open memories by category and subject (a "
        "service, person, technology...), one statement each, near-duplicates merged; as one "
        "Markdown document (default) or entries; or one entry by id.",
        handler=_knowledge,
        params=(
            Param(
                "entry",
                help="One entry by its id (kn-...).",
                max_len=64,
                aliases=("knowledge_id", "entry_id"),
            ),
            Param("category", help="Only this category.", max_len=64),
            Param("user_id", help="Only this user's memories.", max_len=200),
            Param(
                "merged",
                type="bool",
                help="One Markdown document (default) instead of full entries.",
                default=True,
            ),
        ),
        example="nxm knowledge --category conventions --no-merged",
    ),
    _op(
        "graph_search",
        "graph_search",
        ("graph", "search"),
        "knowledge",
        summary="Find people, organisations, places and things in the entity graph by name or "
        "description.",
        handler=_graph_search,
        params=(
            Param("query", help="A name or words.", required=True, positional=True, max_len=500),
            Param("type", help="Only this entity type.", choices=ENTITY_TYPES),
            Param("user_id", help="Only entities from this user's memories.", max_len=200),
            Param("limit", type="int", help="Entities to return.", default=10, min=1, max=100),
        ),
        example='nxm graph search "billing" --type THING',
    ),
    _op(
        "graph_traverse",
        "graph_traverse",
        ("graph", "traverse"),
        "knowledge",
        summary="Follow an entity's relations 1-3 hops out: who works where, what uses what.",
        handler=_graph_traverse,
        params=(
            ENTITY_REF,
            Param(
                "direction",
                help="outgoing, incoming or both (default).",
                default="both",
                choices=DIRECTIONS,
            ),
            Param("hops", type="int", help="Depth, 1 to 3.", default=2, min=1, max=3),
        ),
        example='nxm graph traverse "Dana Kim" --hops 1',
    ),
    _op(
        "graph_query",
        "graph_query",
        ("graph", "query"),
        "knowledge",
        summary="Answer a question from the entity graph, following relations over 1-3 hops "
        "('where is the lead of the team that owns ledger-svc based?'): extractive, citing "
        "the memories used, with a confidence; 'I don't know' when an entity or a relation "
        "is missing.",
        handler=_graph_query,
        params=(
            Param(
                "question",
                help="A question in plain words.",
                required=True,
                positional=True,
                max_len=2000,
            ),
        ),
        example='nxm graph query "Who owns the billing service?"',
    ),
    _op(
        "graph_add",
        "graph_add",
        ("graph", "add"),
        "knowledge",
        summary="Add an entity to the graph, or correct the type or description of one; kept "
        "apart from extracted entities, so it survives re-extraction.",
        handler=_graph_add,
        params=(
            Param("name", help="The entity's name.", required=True, positional=True, max_len=200),
            Param(
                "type", help="Its type (default: as extracted, else THING).", choices=ENTITY_TYPES
            ),
            Param("description", help="One or two sentences about it.", max_len=1000),
            Param("user_id", help="The user it belongs to.", max_len=200),
        ),
        writes=True,
        example='nxm graph add "Dana Kim" --type PERSON --description "Owns billing."',
    ),
    _op(
        "graph_relate",
        "graph_relate",
        ("graph", "relate"),
        "knowledge",
        summary="State a relation between two entities in the graph (e.g. WORKS_AT, USES, "
        "OWNS); agent-authored, idempotent.",
        handler=_graph_relate,
        params=(
            Param(
                "source",
                help="The entity the relation starts from (id or name).",
                required=True,
                positional=True,
                max_len=200,
                aliases=("from", "from_entity"),
            ),
            Param(
                "relation",
                help="WORKS_AT, LEADS, USES, DEPENDS_ON, PREFERS, OWNS, MEMBER_OF, LOCATED_IN, "
                "REPORTS_TO, or another WORD_LIKE_THIS.",
                required=True,
                positional=True,
                max_len=40,
                aliases=("relation_type", "relationType"),
            ),
            Param(
                "target",
                help="The entity it points to (id or name).",
                required=True,
                positional=True,
                max_len=200,
                aliases=("to", "to_entity"),
            ),
        ),
        writes=True,
        example='nxm graph relate "Dana Kim" OWNS "billing service"',
    ),
    _op(
        "graph_remove",
        "graph_remove",
        ("graph", "remove"),
        "knowledge",
        summary="Remove what an agent wrote in the graph: an entity (with the relations stated "
        "on it), or one relation of it (relation and target); kept in the graph's history.",
        handler=_graph_remove,
        params=(
            Param(
                "entity",
                help="The entity (id or name).",
                required=True,
                positional=True,
                max_len=200,
            ),  # fmt: skip
            Param("relation", help="Remove only this relation of it (with target).", max_len=40),
            Param("target", help="The relation's other end (id or name).", max_len=200),
            Param("reason", help="Why, for the history.", max_len=500),
        ),
        writes=True,
        example='nxm graph remove "Dana Kim" --relation OWNS --target "billing service"',
    ),
    _op(
        "stats",
        "memory_stats",
        ("stats",),
        "insights",
        summary="Dashboard figures over the last N days with the window before for comparison: "
        "memories created/updated/closed/forgotten, feedback, searches, tokens (estimated).",
        handler=_stats,
        params=(Param("days", type="int", help="Window in days.", default=30, min=1, max=3650),),
        example="nxm stats --days 7",
    ),
    _op(
        "profile",
        "memory_profile",
        ("profile",),
        "insights",
        summary="A user's profile from their memories: summary (their top memories' "
        "introductions), top topics, categories, entity count.",
        handler=_profile,
        params=(
            Param(
                "user",
                help="The user id.",
                required=True,
                positional=True,
                max_len=200,
                aliases=("user_id",),
            ),
        ),
        example="nxm profile alice",
    ),
    _op(
        "entities",
        "memory_entities",
        ("entities",),
        "insights",
        summary="Users and agents that have memories, with memory counts and last activity.",
        handler=_entities,
        example="nxm entities",
    ),
]
