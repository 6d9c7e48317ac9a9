"""The Linear operations: `linear_query` (reads) and `linear_mutate` (writes), seed 000.

An ``action`` chooses the sub-operation; every other parameter is top level. The organisation is
``org`` (alias ``linear_workspace``): the seed's ``workspace`` is the nxs workspace path on every
tool (SPEC section 2). This module imports cheaply; the actions load on the first call.
"""

from __future__ import annotations

from typing import Any

from nxs.context import Context
from nxs.ops import Operation, Param

QUERY_ACTIONS = (
    "get_linear_teams", "get_linear_projects", "get_linear_issue", "search_linear_issues",
    "get_linear_project_detail", "get_linear_team_detail", "list_linear_labels",
    "list_linear_project_labels", "list_linear_statuses", "list_linear_users",
    "list_linear_comments", "get_linear_comment_detail", "get_project_context",
)  # fmt: skip
MUTATE_ACTIONS = (
    "create_linear_issue", "save_linear_issue", "auto_create_linear_issue",
    "create_linear_project", "create_linear_label", "update_linear_label",
    "create_linear_comment", "link_memory_to_linear_issue", "cross_reference_linear_memory",
    "update_ticket_from_memory",
)  # fmt: skip

LINEAR_WHEN = "when the task involves a Linear issue, project or team."
ORG = Param(
    "org",
    help="Linear organisation label, case-insensitive (seed 000's workspace). Needed when two "
    "or more are connected; a label not connected is refused, never replaced.",
    max_len=40, aliases=("linear_workspace",), list_aliases=True,
)  # fmt: skip
ISSUE_ID = Param("issue_id", help="Issue UUID or identifier like NC-103 (resolved for you).",
                 max_len=100)  # fmt: skip
TEAM_ID = Param("team_id", help="Team UUID from get_linear_teams.", max_len=100)
PROJECT_ID = Param("project_id", help="Project UUID from get_linear_projects.", max_len=100)
DESCRIPTION_CHARS = Param(
    "description_chars", type="int",
    help="Description excerpt length: default 200, max 2000 (clamped), 0 omits.",
    min=0, max=2000, clamp=True,
)  # fmt: skip


def _action(choices: tuple[str, ...], verb: str) -> Param:
    return Param("action", help=f"What to {verb}.", required=True, positional=True, choices=choices)


def linear_query(ctx: Context, **kw: Any) -> dict[str, Any]:
    """Run one read action against the chosen Linear organisation."""
    from nxs.linear.actions import QUERY, dispatch  # deferred: keeps `nxs --help` light

    return dispatch(ctx, QUERY, kw)


def linear_mutate(ctx: Context, **kw: Any) -> dict[str, Any]:
    """Run one write action against the chosen Linear organisation."""
    from nxs.linear.actions import MUTATE, dispatch  # deferred: keeps `nxs --help` light

    return dispatch(ctx, MUTATE, kw)


OPERATIONS: list[Operation] = [
    Operation(
        name="query", tool="linear_query", cli="nxs", verb=("linear", "query"), module="linear",
        group="linear",
        summary=(
            "Read Linear: teams, projects, issues (title search with strict search_filters), "
            "labels, statuses, users, comments, and project context with linked memories. "
            "Never writes. Choose the organisation with org (workspace is the project root)."
        ),
        when=LINEAR_WHEN,
        handler=linear_query,
        params=(
            _action(QUERY_ACTIONS, "read"), ORG, ISSUE_ID, TEAM_ID, PROJECT_ID,
            Param("query", help="Words matched against issue titles only, case-insensitive; the "
                  "first 100 characters are used (a longer query is cut, never refused)."),
            Param("limit", type="int", help="Issues to return: default 25, max 100 (clamped).",
                  min=1, max=100, clamp=True),
            DESCRIPTION_CHARS,
            Param("search_filters", type="object", help="Only these keys: state (open, closed, "
                  "todo, ...), label (exact name), project (UUID); e.g. {\"state\": \"open\"}. "
                  "Any other key is refused."),
            Param("include_closed", type="bool", help="get_project_context: include completed "
                  "and canceled issues (default no)."),
        ),
        example="nxs linear query search_linear_issues --team-id TEAM_UUID "
        '--search-filters \'{"state": "open"}\' --json',
    ),
    Operation(
        name="mutate", tool="linear_mutate", cli="nxs", verb=("linear", "mutate"), module="linear",
        group="linear",
        summary=(
            "Write to Linear: create or update issues (team_id on an update MOVES the issue; "
            "labels replace), projects, labels, comments, and link memories to issues. "
            "No deletes. Choose the organisation with org (workspace is the project root)."
        ),
        when=LINEAR_WHEN,
        handler=linear_mutate,
        params=(
            _action(MUTATE_ACTIONS, "write"), ORG, ISSUE_ID,
            Param("title", help="Issue title (required to create).", max_len=512),
            Param("description", help="Markdown body of an issue, project or label."),
            TEAM_ID,
            Param("team_ids", type="list", help="Team UUIDs of a new project.", max_len=50),
            PROJECT_ID,
            Param("priority", type="int", help="0 none, 1 urgent, 2 high, 3 medium (default on "
                  "create), 4 low.", min=0, max=4),
            Param("state_id", help="Workflow state UUID (list_linear_statuses).", max_len=100),
            Param("assignee_id", help="User UUID (list_linear_users).", max_len=100),
            Param("labels", type="list", help="Label UUIDs. REPLACES the issue's labels: send the "
                  "union to add one, [] to remove all.", max_len=100,
                  aliases=("label_ids", "labelIds")),
            Param("name", help="Project or label name.", max_len=256),
            Param("color", help="Label colour, hex like #ff5500.", max_len=7),
            Param("id", help="Label UUID (update_linear_label).", max_len=100, aliases=("label_id",)),
            Param("body", help="Comment body (Markdown)."),
            Param("memory_id", help="Memory key or an unambiguous prefix.", max_len=64),
            Param("update_type", help="update_ticket_from_memory: add_comment (default) or "
                  "update_description.", choices=("add_comment", "update_description")),
            Param("limit", type="int", help="cross_reference_linear_memory: issues to link, "
                  "default 5, max 20.", min=1, max=20, clamp=True),
        ),
        writes=True,
        example="nxs linear mutate create_linear_issue --title 'CORS error from localhost' "
        "--team-id TEAM_UUID --priority 2 --json",
    ),
]  # fmt: skip

__all__ = ["MUTATE_ACTIONS", "OPERATIONS", "QUERY_ACTIONS"]
