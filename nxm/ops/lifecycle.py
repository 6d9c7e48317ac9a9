"""Lifecycle, knowledge and graph operations (seed 002): one declaration each, both seams.

Handlers reach the service through ``ctx.memory`` and the modules behind them lazily, so this
module stays cheap to import (it builds `nxm --help`). Reads take the moment from ``ctx.now``:
expiry depends on it, and it keeps both seams' answers byte-identical.
"""

from __future__ import annotations

from typing import Any

from nxm.ops import KEY, arg, calling, op
from nxm.record import SIGNALS
from nxs.context import Context
from nxs.ops import Operation, Param

ENTITY_TYPES = ("PERSON", "ORGANIZATION", "PLACE", "THING")
DIRECTIONS = ("both", "outgoing", "incoming")


def _knowledge(ctx: Context, **kw: Any) -> Any:
    from nxm.knowledge import knowledge

    return knowledge(ctx.memory.store.records(), now=ctx.now, **kw)


def _graph(ctx: Context) -> Any:
    from nxm import graph

    return graph.current(ctx.memory, ctx.now)


def _graph_read(name: str) -> Any:
    def handler(ctx: Context, **kw: Any) -> Any:
        from nxm.graph import query

        return getattr(query, name)(_graph(ctx), **kw)

    return handler


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


def _graph_op(word: str, **kw: Any) -> Operation:
    name = f"graph_{word}"
    return op(name, "knowledge", tool=name, verb=("graph", word), **kw)


ENTITY_REF = arg("entity", "Entity id (ent-...) or its exact name.", 200, aliases=("entity_id",))

OPERATIONS: list[Operation] = [
    op("promote", "insights",
       summary="Make a TASK memory permanent (it stops expiring). Use when a temporary note "
       "turned out to matter for good.",
       handler=calling("nxm.lifecycle", "promote"), params=(KEY,), writes=True,
       example="nxm promote 3f2a"),
    op("feedback", "insights",
       summary="Rate a memory POSITIVE, NEGATIVE or NEUTRAL after using it; positive memories "
       "rank higher in search, negative ones lower.",
       handler=calling("nxm.lifecycle", "feedback"),
       params=(
           KEY,
           arg("signal", "POSITIVE, NEGATIVE or NEUTRAL.", choices=SIGNALS),
           Param("comment", help="Why (kept in the memory's history).", max_len=2000),
       ),
       writes=True,
       example='nxm feedback 3f2a NEGATIVE --comment "outdated since the move to tomllib"'),
    op("revert", "insights",
       summary="Undo edits: put a memory's body, introduction, priority and classification "
       "back as they were before its latest edit, or just after event `to` of its history.",
       handler=calling("nxm.lifecycle", "revert"),
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
       writes=True, example="nxm revert 3f2a --to 2"),
    op("knowledge", "knowledge",
       summary="The consolidated knowledge profile: open memories by category and subject (a "
       "service, person, technology...), one statement each, near-duplicates merged; as one "
       "Markdown document (default) or entries; or one entry by id.",
       handler=_knowledge,
       params=(
           Param("entry", help="One entry by its id (kn-...).", max_len=64,
                 aliases=("knowledge_id", "entry_id")),
           Param("category", help="Only this category.", max_len=64),
           Param("user_id", help="Only this user's memories.", max_len=200),
           Param("merged", type="bool",
                 help="One Markdown document (default) instead of full entries.", default=True),
       ),
       example="nxm knowledge --category conventions --no-merged"),
    _graph_op("search",
              summary="Find people, organisations, places and things in the entity graph by "
              "name or description.",
              handler=_graph_read("search"),
              params=(
                  arg("query", "A name or words.", 500),
                  Param("type", help="Only this entity type.", choices=ENTITY_TYPES),
                  Param("user_id", help="Only entities from this user's memories.", max_len=200),
                  Param("limit", type="int", help="Entities to return.", default=10, min=1,
                        max=100),
              ),
              example='nxm graph search "billing" --type THING'),
    _graph_op("traverse",
              summary="Follow an entity's relations 1-3 hops out: who works where, what uses what.",
              handler=_graph_read("traverse"),
              params=(
                  ENTITY_REF,
                  Param("direction", help="outgoing, incoming or both (default).", default="both",
                        choices=DIRECTIONS),
                  Param("hops", type="int", help="Depth, 1 to 3.", default=2, min=1, max=3),
              ),
              example='nxm graph traverse "Dana Kim" --hops 1'),
    _graph_op("query",
              summary="Answer a question from the entity graph, following relations over 1-3 hops "
              "('where is the lead of the team that owns ledger-svc based?'): extractive, citing "
              "the memories used, with a confidence; 'I don't know' when an entity or a relation "
              "is missing.",
              handler=_graph_read("ask"),
              params=(arg("question", "A question in plain words.", 2000),),
              example='nxm graph query "Who owns the billing service?"'),
    _graph_op("add",
              summary="Add an entity to the graph, or correct the type or description of one; kept "
              "apart from extracted entities, so it survives re-extraction.",
              handler=calling("nxm.graph", "add"),
              params=(
                  arg("name", "The entity's name.", 200),
                  Param("type", help="Its type (default: as extracted, else THING).",
                        choices=ENTITY_TYPES),
                  Param("description", help="One or two sentences about it.", max_len=1000),
                  Param("user_id", help="The user it belongs to.", max_len=200),
              ),
              writes=True,
              example='nxm graph add "Dana Kim" --type PERSON --description "Owns billing."'),
    _graph_op("relate",
              summary="State a relation between two entities in the graph (e.g. WORKS_AT, USES, "
              "OWNS); agent-authored, idempotent.",
              handler=calling("nxm.graph", "relate"),
              params=(
                  arg("source", "The entity the relation starts from (id or name).", 200,
                      aliases=("from", "from_entity")),
                  arg("relation", "WORKS_AT, LEADS, USES, DEPENDS_ON, PREFERS, OWNS, MEMBER_OF, "
                      "LOCATED_IN, REPORTS_TO, or another WORD_LIKE_THIS.", 40,
                      aliases=("relation_type", "relationType")),
                  arg("target", "The entity it points to (id or name).", 200,
                      aliases=("to", "to_entity")),
              ),
              writes=True, example='nxm graph relate "Dana Kim" OWNS "billing service"'),
    _graph_op(
        "remove",
        summary="Remove what an agent wrote in the graph: an entity (with the relations stated "
        "on it), or one relation of it (relation and target); kept in the graph's history.",
        handler=calling("nxm.graph", "remove"),
        params=(
            arg("entity", "The entity (id or name).", 200),  # fmt: skip
            Param("relation", help="Remove only this relation of it (with target).", max_len=40),
            Param("target", help="The relation's other end (id or name).", max_len=200),
            Param("reason", help="Why, for the history.", max_len=500),
        ),
        writes=True,
        example='nxm graph remove "Dana Kim" --relation OWNS --target "billing service"',
    ),
    op("stats", "insights",
       summary="Dashboard figures over the last N days with the window before for comparison: "
       "memories created/updated/closed/forgotten, feedback, searches, tokens (estimated).",
       handler=_stats,
       params=(Param("days", type="int", help="Window in days.", default=30, min=1, max=3650),),
       example="nxm stats --days 7"),
    op("profile", "insights",
       summary="A user's profile from their memories: summary (their top memories' "
       "introductions), top topics, categories, entity count.",
       handler=_profile, params=(arg("user", "The user id.", 200, aliases=("user_id",)),),
       example="nxm profile alice"),
    op("entities", "insights",
       summary="Users and agents that have memories, with memory counts and last activity.",
       handler=_entities, example="nxm entities"),
]  # fmt: skip
