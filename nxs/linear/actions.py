"""The action tables of `linear_query` and `linear_mutate`, and the one dispatcher.

A parameter given to an action that does not use it is refused with the action's list, never
silently dropped (a dropped filter or field looks exactly like an applied one). A ``workspace``
naming a connected organisation is refused first, on every action (`connections.check_workspace`).
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


def _table(*rows: tuple[Any, ...]) -> dict[str, Action]:
    """Actions from rows (function, uses, requires[, name]); the name defaults to the function's."""
    actions = (Action(n[0] if n else f.__name__, f, tuple(u.split()), tuple(r.split()))
               for f, u, r, *n in rows)  # fmt: skip
    return {a.name: a for a in actions}


_ISSUE_WRITE = "title description team_id project_id priority state_id assignee_id labels"

QUERY = _table(
    (reads.get_linear_teams, "", ""),
    (reads.get_linear_projects, "", ""),
    (reads.get_linear_issue, "issue_id", "issue_id"),
    (reads.search_linear_issues, "query team_id limit description_chars search_filters", ""),
    (reads.get_linear_project_detail, "project_id", "project_id"),
    (reads.get_linear_team_detail, "team_id", "team_id"),
    (reads.list_linear_labels, "team_id", ""),  # team_id is only echoed
    (reads.list_linear_project_labels, "project_id", "project_id"),
    (reads.list_linear_statuses, "team_id", "team_id"),
    (reads.list_linear_users, "", ""),
    (reads.list_linear_comments, "issue_id", "issue_id"),
    (reads.get_linear_comment_detail, "issue_id", "issue_id"),
    (reads.get_project_context, "project_id team_id include_closed description_chars", ""),
)

MUTATE = _table(
    (writes.create_linear_issue, _ISSUE_WRITE, "title team_id"),
    (writes.save_linear_issue, f"issue_id {_ISSUE_WRITE}", ""),
    (writes.create_linear_issue, _ISSUE_WRITE, "title team_id", "auto_create_linear_issue"),
    (writes.create_linear_project, "name description team_ids team_id", "name"),
    (writes.create_linear_label, "name team_id color description", "name"),
    (writes.update_linear_label, "id name color description", "id"),
    (writes.create_linear_comment, "issue_id body", "issue_id body"),
    (writes.link_memory_to_linear_issue, "memory_id issue_id", "memory_id issue_id"),
    (writes.cross_reference_linear_memory, "memory_id team_id limit", "memory_id"),
    (writes.update_ticket_from_memory, "issue_id memory_id update_type", "issue_id memory_id"),
)


def check(spec: Action, given: dict[str, Any]) -> None:
    """Refuse parameters the action does not use and missing required ones, naming what it takes."""
    takes = ", ".join(spec.uses) if spec.uses else "no parameters besides org"
    if unused := sorted(k for k in given if k not in spec.uses):
        raise ValidationError(
            f"{spec.name} does not use {', '.join(unused)}; it would be ignored, so the call is "
            "refused",
            suggestion=f"{spec.name} takes: {takes}",
            code="UNUSED_PARAMETER",
        )
    if missing := [p for p in spec.requires if p not in given]:
        raise ValidationError(
            f"{spec.name} requires {', '.join(missing)}", suggestion=f"{spec.name} takes: {takes}"
        )


def dispatch(ctx: Context, table: dict[str, Action], kw: dict[str, Any]) -> dict:
    """Run one action: check its parameters, choose the organisation, wrap the answer."""
    spec = table[kw["action"]]
    connections.check_workspace(ctx.workspace_arg)
    given = {k: v for k, v in kw.items() if v is not None and k not in SHARED}
    check(spec, given)
    call = Call(ctx=ctx, args=given, org=kw.get("org"))
    try:
        message, data = spec.run(call)
    except Disambiguation as need:
        return need.answer
    finally:
        call.close()
    if call._client is not None and call._client.beside:  # an applied write: done, said so
        data["linear_errors"] = call._client.beside
        message += "; Linear reported errors beside it (data.linear_errors)"
    return {"success": True, "message": message, "org": call.label, "data": data}


__all__ = ["MUTATE", "QUERY", "Action", "check", "dispatch"]
