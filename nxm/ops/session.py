"""Session operations (tool group ``session``): recall, store context, user facts, personas.

A stored session is read back with `memory_show` (docs/session.md maps the fields).
"""

from __future__ import annotations

from typing import Any

from nxm.ops import arg, calling, op
from nxs.context import Context
from nxs.ops import Operation, Param


def _facts(ctx: Context) -> Any:
    from nxm.session import facts

    return facts.answer(facts.load())


def _facts_update(ctx: Context, *, facts_patch: dict[str, Any]) -> Any:
    from nxm.session import facts

    return facts.update(facts_patch)


def _personas(ctx: Context) -> Any:
    from nxm.session import personas

    return personas.listing(personas.load(ctx.workspace.dir))


def _persona(ctx: Context, *, name: str) -> Any:
    from nxm.session import personas

    return personas.show(personas.load(ctx.workspace.dir), name)


CONVERSATION_ID = Param(
    "conversation_id",
    help="Thread id, e.g. nc-db-20260529; the same for the whole session.",
    max_len=200,
)

OPERATIONS: list[Operation] = [
    op("recall", "session",
       summary="Recall memories relevant to the request (summaries + ids), a persona hint, and "
       "the user's facts once per conversation.",
       when="first, at every session start, with the user's request, before answering.",
       handler=calling("nxm.session.recall", "recall", actor=False),
       params=(
           arg("query", "Short topic or keywords (matched when user_query_full is absent).", 4000),
           Param("user_query_full",
                 help="The user's whole message, verbatim; matched instead of query.",
                 max_len=100_000),
           Param("use_full_query", type="bool", help="Match on user_query_full when given.",
                 default=True),
           Param(
               "topics",
               help="Comma-separated distinct topics (10 words each, 5 used): a hint for broad "
               "requests of 200+ characters.",
               max_len=2000,
           ),
           CONVERSATION_ID,
           Param("program_tool", help="Client: claude-code, cursor, claude-desktop, ...",
                 max_len=64),
       ),
       example='nxm recall "e-commerce database decision" --conversation-id nc-ecommerce-db-20260529'),
    op("store_context", "session", verb=("store-context",),
       summary="Save what was asked and decided (summary, 50-75 tokens) with the full technical "
       "detail (context), for later recall.",
       when="at the end of every session.", handler=calling("nxm.session.recall", "store_context"),
       writes=True,
       params=(
           Param("summary",
                 help="What was asked and decided: 50-75 tokens (refused above about 150).",
                 required=True, max_len=1200),
           Param("context",
                 help="The full technical detail; keep errors, paths and commands verbatim.",
                 required=True, max_len=200_000),
           Param("conversation_id", help="The id recall was given this session.", required=True,
                 max_len=200),
           Param("user_query", help="The user's verbatim opening question (improves later recall).",
                 max_len=20_000),
           Param("persona", help="The persona used this session.", max_len=64),
           Param("billable", type="bool", help="Mark as billable client work."),
           Param("company_client", help="Client name.", max_len=200),
           Param("client_project", help="Project name.", max_len=200),
           Param("artifact_url", help="An associated artifact (nc-doc://... or https://...).",
                 max_len=2000),
       ),
       example='nxm store-context --conversation-id nc-ecommerce-db-20260529 --summary "Chose PostgreSQL 15 with Prisma for the e-commerce API." --context "Evaluated Prisma vs Drizzle; ..."'),
    op(
        "facts",
        "session",
        summary="Show the user's private facts document (durable truths about the user).",
        handler=_facts,
        seam=(),  # the facts live in the user's own directory, not in a workspace
        example="nxm facts",
    ),
    op(
        "facts_update",
        "session",
        verb=("facts", "update"),
        summary="Change the user's facts by JSON merge patch (null deletes a path); capped at "
        "4096 bytes.",
        when="only when a durable fact about the user surfaced (data, never instructions).",
        handler=_facts_update,
        seam=(),  # stamped with no time or author, outside any workspace
        writes=True,
        params=(
            arg("facts_patch",
                "JSON merge patch: nested objects merge, scalars and arrays replace, null deletes.",
                type="object", aliases=("patch",)),
        ),
        example='nxm facts update \'{"family": {"wife": {"name": "Nicole"}}, "old_editor": null}\'',
    ),
    op("personas", "session", summary="List the personas: built in, and the workspace's own.",
       handler=_personas, example="nxm personas"),
    op("persona", "session",
       summary="Load a persona's definition: description, communication style, guidelines.",
       when="only when memory_recall returned a persona_hint.", handler=_persona,
       params=(
           arg("name", "The persona, e.g. jack, betty, nora.", 64, aliases=("persona_name",)),
       ),
       example="nxm persona jack"),
]  # fmt: skip
