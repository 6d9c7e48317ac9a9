"""The action tables of `linear_query` and `linear_mutate`, and the one dispatcher.

Each action lists the parameters it uses and the ones it requires. A parameter given to an
action that does not use it is refused with the action's list, never silently dropped (a
dropped filter or field looks exactly like an applied one). Answers use seed 000's envelope,
``{"success": true, "message": ..., "org": ..., "data": {...}}``; when the organisation is
ambiguous the answer is the disambiguation one instead. A ``workspace`` naming a connected
organisation is refused first, on every action (`connections.check_workspace`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nxs.context import Context
from nxs.errors import ValidationError
from nxs.linear import connections, reads, writes
from nxs.linear.connections import Disambiguation
from nxs.linear.session import Call

SHARED = frozenset({"action", "org"})


@dataclass(frozen=True)
class Action:
    """One sub-operation: what it runs, which parameters it uses and requires."""

    name: str
    run: Callable[[Call], tuple[str, dict[str, Any]]]
    uses: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    summary: str = ""


def _table(*actions: Action) -> dict[str, Action]:
    return {a.name: a for a in actions}


_ISSUE_WRITE = (
    "title", "description", "team_id", "project_id", "priority", "state_id", "assignee_id",
    "labels",
)  # fmt: skip

QUERY = _table(
    Action("get_linear_teams", reads.get_linear_teams, summary="teams[], total"),
    Action("get_linear_projects", reads.get_linear_projects, summary="projects[], total"),
    Action(
        "get_linear_issue",
        reads.get_linear_issue,
        ("issue_id",),
        ("issue_id",),
        "one issue, full description (UUID or identifier like NC-103)",
    ),
    Action(
        "search_linear_issues",
        reads.search_linear_issues,
        ("query", "team_id", "limit", "description_chars", "search_filters"),
        summary="title search; needs query or team_id; search_filters: state, label, project",
    ),
    Action(
        "get_linear_project_detail",
        reads.get_linear_project_detail,
        ("project_id",),
        ("project_id",),
        "project with members, teams, labels, issue_count",
    ),
    Action(
        "get_linear_team_detail",
        reads.get_linear_team_detail,
        ("team_id",),
        ("team_id",),
        "team with members, states, labels, issue_count",
    ),
    Action(
        "list_linear_labels",
        reads.list_linear_labels,
        ("team_id",),
        summary="every label of the organisation (team_id is only echoed)",
    ),
    Action(
        "list_linear_project_labels",
        reads.list_linear_project_labels,
        ("project_id",),
        ("project_id",),
        "a project's labels",
    ),
    Action(
        "list_linear_statuses",
        reads.list_linear_statuses,
        ("team_id",),
        ("team_id",),
        "a team's workflow states (their UUIDs close issues)",
    ),
    Action("list_linear_users", reads.list_linear_users, summary="users[] (assignee UUIDs)"),
    Action(
        "list_linear_comments",
        reads.list_linear_comments,
        ("issue_id",),
        ("issue_id",),
        "first 50 comments, excerpted",
    ),
    Action(
        "get_linear_comment_detail",
        reads.get_linear_comment_detail,
        ("issue_id",),
        ("issue_id",),
        "the full, unexcerpted comment thread",
    ),
    Action(
        "get_project_context",
        reads.get_project_context,
        ("project_id", "team_id", "include_closed", "description_chars"),
        summary="issues (max 50) plus linked memories and patterns",
    ),
)

MUTATE = _table(
    Action(
        "create_linear_issue",
        writes.create_linear_issue,
        _ISSUE_WRITE,
        ("title", "team_id"),
        "create an issue (priority defaults to 3)",
    ),
    Action(
        "save_linear_issue",
        writes.save_linear_issue,
        ("issue_id", *_ISSUE_WRITE),
        summary="update with issue_id (team_id MOVES it), else create with title + team_id",
    ),
    Action(
        "auto_create_linear_issue",
        writes.create_linear_issue,
        _ISSUE_WRITE,
        ("title", "team_id"),
        "legacy alias of create_linear_issue",
    ),
    Action(
        "create_linear_project",
        writes.create_linear_project,
        ("name", "description", "team_ids", "team_id"),
        ("name",),
        "create a project in one or more teams",
    ),
    Action(
        "create_linear_label",
        writes.create_linear_label,
        ("name", "team_id", "color", "description"),
        ("name",),
        "create a label; team_id makes it team-scoped",
    ),
    Action(
        "update_linear_label",
        writes.update_linear_label,
        ("id", "name", "color", "description"),
        ("id",),
        "rename or recolour a label in place",
    ),
    Action(
        "create_linear_comment",
        writes.create_linear_comment,
        ("issue_id", "body"),
        ("issue_id", "body"),
        "comment on an issue",
    ),
    Action(
        "link_memory_to_linear_issue",
        writes.link_memory_to_linear_issue,
        ("memory_id", "issue_id"),
        ("memory_id", "issue_id"),
        "stamp a memory with linear:<org>/<IDENTIFIER> and a LINKED event",
    ),
    Action(
        "cross_reference_linear_memory",
        writes.cross_reference_linear_memory,
        ("memory_id", "team_id", "limit"),
        ("memory_id",),
        "find issues whose titles share the memory's introduction words; link them",
    ),
    Action(
        "update_ticket_from_memory",
        writes.update_ticket_from_memory,
        ("issue_id", "memory_id", "update_type"),
        ("issue_id", "memory_id"),
        "comment the memory on an issue, or append it to the description",
    ),
)


def check(spec: Action, given: dict[str, Any]) -> None:
    """Refuse parameters the action does not use and missing required ones.

    Raises:
        ValidationError: naming the parameter and what the action takes.
    """
    takes = ", ".join(spec.uses) if spec.uses else "no parameters besides org"
    unused = sorted(k for k in given if k not in spec.uses)
    if unused:
        names = ", ".join(unused)
        raise ValidationError(
            f"{spec.name} does not use {names}; it would be ignored, so the call is refused",
            suggestion=f"{spec.name} takes: {takes}",
            code="UNUSED_PARAMETER",
        )
    missing = [p for p in spec.requires if p not in given]
    if missing:
        raise ValidationError(
            f"{spec.name} requires {', '.join(missing)}",
            suggestion=f"{spec.name} takes: {takes}",
        )


def dispatch(ctx: Context, table: dict[str, Action], kw: dict[str, Any]) -> dict:
    """Run one action: check its parameters, choose the organisation, wrap the answer."""
    spec = table[kw["action"]]
    connections.check_workspace(ctx.workspace_arg)  # seed 000's workspace: "AV" means org
    given = {k: v for k, v in kw.items() if v is not None and k not in SHARED}
    check(spec, given)
    call = Call(ctx=ctx, args=given, org=kw.get("org"))
    try:
        message, data = spec.run(call)
    except Disambiguation as need:
        return need.answer
    finally:
        call.close()
    return {"success": True, "message": message, "org": call.label, "data": data}


__all__ = ["MUTATE", "QUERY", "Action", "check", "dispatch"]
