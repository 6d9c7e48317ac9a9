"""The read actions of `linear_query`: each takes a `Call` and returns ``(message, data)``.

Every local check (filters, required pairs) runs before the first request.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from nxs.errors import ValidationError
from nxs.linear import links, shape
from nxs.linear.session import Call

PAGE = 250
PROJECT_PAGE = 100  # each project lists its teams: 250 would be ~17,500 of Linear's 10,000 points
LIST_CAP = 2000  # pages are followed up to this many items
QUERY_CHARS = 100
SEARCH_LIMIT = 25
CONTEXT_ISSUES = 50
CONTEXT_MEMORY_ISSUES = 20
COMMENTS_FIRST = 50
THREAD_CAP = 1000
DESCRIPTION = shape.DESCRIPTION_DEFAULT

FILTER_KEYS = ("state", "label", "project")
# The seed's state vocabulary, mapped to Linear's workflow state types.
STATE_TYPES: dict[str, tuple[str, ...]] = {
    "open": ("started", "unstarted"), "closed": ("completed", "canceled"),
    "active": ("started",), "in_progress": ("started",), "started": ("started",),
    "todo": ("unstarted",), "unstarted": ("unstarted",), "done": ("completed",),
    "completed": ("completed",), "cancelled": ("canceled",), "canceled": ("canceled",),
    "backlog": ("backlog",), "triage": ("triage",),
}  # fmt: skip
CLOSED_TYPES = ("completed", "canceled")


def _pages(
    call: Call, name: str, path: str, first: int = PAGE, cap: int = LIST_CAP, **variables: Any
) -> tuple[dict, list[dict], bool]:
    """Follow the pages of connection ``path`` ("teams", "issue.comments") up to ``cap`` nodes:
    the node holding it, the nodes, and whether Linear has more. A page with no cursor or no new
    node ends it (said as more): following it would fetch the same page again, or forever."""
    holder, _, field = path.rpartition(".")
    found: dict[str, dict[str, Any]] = {}
    after = None
    while True:
        data = call.run(name, {**variables, "first": first, "after": after})
        node = data[holder] if holder else data
        conn = node.get(field) or {}
        before = len(found)
        for n in shape.nodes(conn):
            found.setdefault(n["id"], n)
        info = conn.get("pageInfo") or {}
        more, after = bool(info.get("hasNextPage")), info.get("endCursor")
        if not more or len(found) >= cap or len(found) == before or not after:
            return node, list(found.values())[:cap], more


def _hint(data: dict[str, Any], cut: bool) -> None:
    if cut:
        data["detail_hint"] = (
            "descriptions were shortened; for an issue's full description call "
            "linear_query action get_linear_issue with issue_id (e.g. NC-103)"
        )


def _rows(field: str, rows: list[Any], cut: bool | None = None, **more: Any) -> dict[str, Any]:
    """``rows`` under ``field`` with their total (and, given ``cut``, whether they may be cut)."""
    out = {**more, field: rows, "total": len(rows)}
    if cut is not None:
        out["may_be_truncated"] = cut
    return out


def get_linear_teams(call: Call) -> tuple[str, dict]:
    _, teams, cut = _pages(call, "Teams", "teams")
    rows = [{**shape.team(t), "description": t.get("description")} for t in teams]
    return "Linear teams retrieved", _rows("teams", rows, cut)


def get_linear_projects(call: Call) -> tuple[str, dict]:
    _, projects, cut = _pages(call, "Projects", "projects", PROJECT_PAGE)
    return "Linear projects retrieved", _rows("projects", [shape.project(p) for p in projects], cut)


def get_linear_issue(call: Call) -> tuple[str, dict]:
    node = call.run("Issue", {"id": call.args["issue_id"]})["issue"]
    return "Linear issue retrieved", {"issue": shape.issue(node)}


def search_filter(filters: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The IssueFilter fragment for ``search_filters``, and the filters applied (a key other
    than state, label, project, or a bad value, is refused)."""
    filters = filters or {}
    unknown = sorted(k for k in filters if k not in FILTER_KEYS)
    if unknown:
        raise ValidationError(
            f"search_filters does not support {', '.join(repr(k) for k in unknown)}; "
            f"the supported keys are: {', '.join(FILTER_KEYS)}",
            suggestion="a dropped filter would return the unfiltered set; narrow with "
            "state, label or project, or with query / team_id",
            code="UNSUPPORTED_FILTER",
        )
    out: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    for key in FILTER_KEYS:
        value = filters.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(
                f"search_filters.{key} must be a non-empty string",
                suggestion='e.g. {"state": "open", "label": "Bug", "project": "<project UUID>"}',
            )
        value = applied[key] = value.strip()
        if key == "state":
            types = STATE_TYPES.get(value.lower().replace(" ", "_").replace("-", "_"))
            if types is None:
                raise ValidationError(
                    f"search_filters.state {value!r} is not a known state",
                    suggestion=f"use one of: {', '.join(STATE_TYPES)}",
                )
            out["state"] = {"type": {"in": list(types)}}
            applied.update(state=value.lower(), state_types=list(types))
        elif key == "label":
            out["labels"] = {"some": {"name": {"eq": value}}}  # exact, case-sensitive
        else:
            out["project"] = {"id": {"eq": value}}
    return out, applied


def search_linear_issues(call: Call) -> tuple[str, dict]:
    query, team_id = call.arg("query"), call.arg("team_id")
    cut = False
    if query is not None:  # seed 000: "first 100 characters of the term", whatever its length
        query = query.strip()
        cut = len(query) > QUERY_CHARS
        query = query[:QUERY_CHARS].strip()
    if not query and not team_id:
        raise ValidationError(
            "search_linear_issues needs query or team_id",
            suggestion="a filter alone is not enough to scope a search: add query (title "
            "words) or team_id (from get_linear_teams)",
        )
    where, applied = search_filter(call.arg("search_filters"))
    if query:
        where["title"] = {"containsIgnoreCase": query}
    if team_id:
        where["team"] = {"id": {"eq": team_id}}
    limit, chars = call.arg("limit", SEARCH_LIMIT), call.arg("description_chars", DESCRIPTION)
    found = shape.nodes(call.run("Issues", {"filter": where, "first": limit})["issues"])
    issues = [shape.issue(n, chars) for n in found]
    data = _rows("issues", issues, len(issues) >= limit, returned_issues=len(issues))
    data["applied_filters"] = applied
    if query:
        data["query"] = query
        data["query_truncated"] = cut
    if team_id:
        data["team_id"] = team_id
    _hint(data, any(i["description_truncated"] for i in issues))
    return "Linear issues retrieved", data


def get_linear_project_detail(call: Call) -> tuple[str, dict]:
    node = call.run("ProjectDetail", {"id": call.args["project_id"]})["project"]
    issues = node.get("issues") or {}
    project = {
        **shape.project(node),
        "lead": shape.ref(node.get("lead"), "id", "name"),
        "members": [shape.ref(m, "id", "name") for m in shape.nodes(node.get("members"))],
        "labels": [shape.ref(lb, "id", "name", "color") for lb in shape.nodes(node.get("labels"))],
        "issue_count": len(shape.nodes(issues)),
        "issue_count_is_floor": bool((issues.get("pageInfo") or {}).get("hasNextPage")),
    }
    return "Linear project retrieved", {"project": project}


def get_linear_team_detail(call: Call) -> tuple[str, dict]:
    node = call.run("TeamDetail", {"id": call.args["team_id"]})["team"]
    states = sorted(shape.nodes(node.get("states")), key=lambda s: s.get("position") or 0)
    team = {
        **shape.team(node),
        "description": node.get("description"),
        "issue_count": node.get("issueCount"),
        "members": [shape.ref(m, "id", "name") for m in shape.nodes(node.get("members"))],
        "states": [shape.ref(s, "id", "name", "type") for s in states],
        "labels": [shape.ref(lb, "id", "name", "color") for lb in shape.nodes(node.get("labels"))],
    }
    return "Linear team retrieved", {"team": team}


def list_linear_labels(call: Call) -> tuple[str, dict]:
    _, labels, cut = _pages(call, "Labels", "issueLabels")
    rows = [shape.label(n) for n in labels]
    data = _rows("labels", rows, cut)
    if call.arg("team_id"):
        data["team_id"] = call.args["team_id"]
        data["note"] = (
            "labels are not filtered by team_id: workspace-level labels have no team, and "
            "filtering would hide the labels most issues use"
        )
    return "Linear labels retrieved", data


def list_linear_project_labels(call: Call) -> tuple[str, dict]:
    node = call.run("ProjectLabels", {"id": call.args["project_id"]})["project"]
    rows = [shape.ref(n, "id", "name", "color", "description") for n in shape.nodes(node["labels"])]
    project = shape.ref(node, "id", "name")
    return "Linear project labels retrieved", _rows("labels", rows, project=project)


def list_linear_statuses(call: Call) -> tuple[str, dict]:
    node = call.run("Statuses", {"id": call.args["team_id"]})["team"]
    states = sorted(shape.nodes(node.get("states")), key=lambda s: s.get("position") or 0)
    rows = [shape.ref(s, "id", "name", "type", "color") for s in states]
    return "Linear statuses retrieved", _rows("statuses", rows, team=shape.team(node))


def list_linear_users(call: Call) -> tuple[str, dict]:
    _, users, cut = _pages(call, "Users", "users")
    rows = [shape.ref(u, "id", "name", "displayName", "email", "active") for u in users]
    for row in rows:
        row["display_name"] = row.pop("displayName")
    return "Linear users retrieved", _rows("users", rows, cut)


def _comments(call: Call, first: int, cap: int) -> tuple[dict, list[dict], bool]:
    node, found, more = _pages(
        call, "Comments", "issue.comments", first, cap, id=call.args["issue_id"]
    )
    return node, sorted(found, key=lambda c: (c.get("createdAt") or "", c["id"])), more


def list_linear_comments(call: Call) -> tuple[str, dict]:
    node, found, more = _comments(call, COMMENTS_FIRST, COMMENTS_FIRST)
    rows = [shape.comment(c, shape.COMMENT_EXCERPT) for c in found]
    issue = shape.ref(node, "id", "identifier", "title", "url")
    data = _rows("comments", rows, more, issue=issue, returned_comments=len(rows))
    if any(r["body_truncated"] for r in rows) or more:
        data["detail_hint"] = (
            "comments were excerpted (first 50, 200 characters each); call linear_query action "
            "get_linear_comment_detail with the same issue_id for the full thread"
        )
    return "Linear comments retrieved", data


def get_linear_comment_detail(call: Call) -> tuple[str, dict]:
    node, found, more = _comments(call, PAGE, THREAD_CAP)
    issue = shape.ref(node, "id", "identifier", "title", "url")
    rows = [shape.comment(c) for c in found]
    return "Linear comment thread retrieved", _rows("comments", rows, more, issue=issue)


def get_project_context(call: Call) -> tuple[str, dict]:
    project_id, team_id = call.arg("project_id"), call.arg("team_id")
    if bool(project_id) == bool(team_id):
        raise ValidationError(
            "get_project_context needs project_id or team_id (exactly one)",
            suggestion="pass project_id (from get_linear_projects) or team_id (from get_linear_teams)",
        )
    scope = "project" if project_id else "team"
    where: dict[str, Any] = {scope: {"id": {"eq": project_id or team_id}}}
    include_closed = call.arg("include_closed", False)
    if not include_closed:
        where["state"] = {"type": {"nin": list(CLOSED_TYPES)}}
    chars = call.arg("description_chars", DESCRIPTION)
    found = shape.nodes(call.run("Issues", {"filter": where, "first": CONTEXT_ISSUES})["issues"])
    issues = [shape.issue(n, chars) for n in found]
    data: dict[str, Any] = {
        "scoped_by": scope, "include_closed": include_closed, "issues": issues,
        "returned_issues": len(issues), "issues_may_be_truncated": len(issues) >= CONTEXT_ISSUES,
        "patterns": patterns(issues),
    }  # fmt: skip
    data[f"{scope}_id"] = project_id or team_id
    memories, note = related_memories(call, [i["identifier"] for i in issues])
    data["related_memories"], data["total_memories"] = memories, len(memories)
    if note:
        data["memory_note"] = note
    _hint(data, any(i["description_truncated"] for i in issues))
    return "Linear project context retrieved", data


def related_memories(call: Call, identifiers: list[str]) -> tuple[list[dict], str | None]:
    """Memories linking one of the first 20 issues in this organisation (not forgotten ones)."""
    service = call.memory_or_none()
    if service is None:
        return [], "no nxs memory workspace here, so no linked memories were looked up"
    wanted = identifiers[:CONTEXT_MEMORY_ISSUES]
    found = links.linked(service, call.org_key, wanted, call.single_org(), forgotten=False)
    return [{**memory, "linked_issues": hits} for memory, hits in found], None


def patterns(issues: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts across the issues by state, label, priority and assignee."""
    return {
        "by_state": dict(Counter(i["state"]["name"] for i in issues if i["state"])),
        "by_label": dict(Counter(lb["name"] for i in issues for lb in i["labels"])),
        "by_priority": dict(Counter(i["priority_label"] or str(i["priority"]) for i in issues)),
        "by_assignee": dict(
            Counter(i["assignee"]["name"] if i["assignee"] else "Unassigned" for i in issues)
        ),
    }


__all__ = ["FILTER_KEYS", "STATE_TYPES", "search_filter"]
