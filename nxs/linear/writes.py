"""The write actions of `linear_mutate`: no deletes, ever.

Inputs are built from an allow-list (`ISSUE_FIELDS`), so nothing a caller passes can reach
Linear's ``trashed`` or any archive flag. Every local check, and the memory lookup, happens
before the first request: a refused call writes nothing.
"""

from __future__ import annotations

import re
from typing import Any

from nxs.errors import ConflictError, UpstreamError, ValidationError
from nxs.linear import links, shape
from nxs.linear.session import Call

# action parameter -> IssueCreateInput / IssueUpdateInput field
ISSUE_FIELDS: dict[str, str] = {
    "title": "title", "description": "description", "team_id": "teamId",
    "project_id": "projectId", "priority": "priority", "state_id": "stateId",
    "assignee_id": "assigneeId", "labels": "labelIds",
}  # fmt: skip
PRIORITY_DEFAULT = 3
COLOR_RE = re.compile(r"^#[0-9a-fA-F]{6}$")
CROSS_REF_LIMIT = 5
CROSS_REF_SEARCH = 50
STOPWORDS = frozenset(
    """a an and are as at be but by for from has have how in into is it its not of on or that
    the their them then there these this those to was were what when where which while who why
    will with without use uses used using should must can may does do don't never always""".split()
)


def ids(name: str, values: list[str]) -> list[str]:
    """Ids stripped and deduplicated; the one value ``[]`` is the empty list (a CLI has no other
    way to say it); a blank id is refused, never dropped (``labels: [""]`` would clear them)."""
    if [v.strip() for v in values] == ["[]"]:
        return []
    if any(not v.strip() for v in values):
        raise ValidationError(
            f"{name} holds an empty id",
            suggestion=f"pass {name} as UUIDs only"
            + ("; to remove every label pass [] (CLI: --labels '[]')" if name == "labels" else ""),
        )
    return list(dict.fromkeys(v.strip() for v in values))


def issue_input(args: dict[str, Any]) -> dict[str, Any]:
    """The Linear input for the issue fields given (labels replace, they never add)."""
    out = {}
    for name, field in ISSUE_FIELDS.items():
        value = args.get(name)
        if value is None:
            continue
        if name == "title":
            value = value.strip()
            if not value:
                raise ValidationError("title must not be empty", suggestion="say what the issue is")
        if name == "labels":
            value = ids("labels", value)
        out[field] = value
    return out


def _resolve(call: Call, issue_id: str) -> dict[str, Any]:
    """An issue's id, identifier, title, url and team, from a UUID or an identifier (NC-103)."""
    return call.run("IssueRef", {"id": issue_id.strip()})["issue"]


def create_linear_issue(call: Call) -> tuple[str, dict]:
    fields = issue_input(call.args)
    if "title" not in fields or "teamId" not in fields:
        raise ValidationError(
            "creating an issue needs title and team_id",
            suggestion="team_id comes from linear_query get_linear_teams; to update an "
            "existing issue pass issue_id to save_linear_issue",
        )
    fields.setdefault("priority", PRIORITY_DEFAULT)
    issue = shape.issue(call.run("IssueCreate", {"input": fields})["issueCreate"]["issue"])
    return f"Linear issue {issue['identifier']} created", {"issue": issue, "created": True}


def save_linear_issue(call: Call) -> tuple[str, dict]:
    if (issue_id := call.arg("issue_id")) is None:
        return create_linear_issue(call)
    fields = issue_input(call.args)
    if not fields:
        raise ValidationError(
            "an update needs at least one field to change",
            suggestion=f"pass one of: {', '.join(ISSUE_FIELDS)} (Linear would report an "
            "empty update as a success)",
            code="EMPTY_UPDATE",
        )
    before = _resolve(call, issue_id)
    node = call.run("IssueUpdate", {"id": before["id"], "input": fields})["issueUpdate"]["issue"]
    issue = shape.issue(node)
    updated = sorted(k for k in ISSUE_FIELDS if call.args.get(k) is not None)
    data: dict[str, Any] = {"issue": issue, "updated_fields": updated}
    if "teamId" in fields and before["team"]["id"] != issue["team"]["id"]:
        old, new = before["identifier"], issue["identifier"]
        data["moved"] = {"from": old, "to": new, "team": issue["team"]}
        data["warning"] = (
            f"{old} moved to team {issue['team']['key']} and is now {new}; the old identifier "
            "stops resolving. Update anything holding it by hand (comments, memories, other "
            "issues' descriptions)."
        )
        service = call.memory_or_none()
        if service is not None:
            holding = links.linked(service, _org_key(call, before), [old], call.single_org())
            data["memories_holding_old_identifier"] = sorted(m["key"] for m, _ in holding)
        return f"Linear issue {old} moved and updated; it is now {new}", data
    return f"Linear issue {issue['identifier']} updated", data


def create_linear_project(call: Call) -> tuple[str, dict]:
    teams = list(call.arg("team_ids", []))
    if call.arg("team_id") is not None:
        teams.append(call.args["team_id"])
    teams = ids("team_ids", teams)
    name = call.args["name"].strip()
    if not name or not teams:
        raise ValidationError(
            "creating a project needs name and team_ids (or team_id)",
            suggestion="projects belong to one or more teams: pass team_ids (from "
            "get_linear_teams)",
        )
    fields: dict[str, Any] = {"name": name, "teamIds": teams}
    if call.arg("description") is not None:
        fields["description"] = call.args["description"]
    node = call.run("ProjectCreate", {"input": fields})["projectCreate"]["project"]
    return f"Linear project {node['name']} created", {
        "project": {
            "id": node["id"],
            "name": node["name"],
            "description": node.get("description") or "",
            "url": node.get("url"),
            "teams": [shape.team(t) for t in shape.nodes(node.get("teams"))],
        }
    }


def _label_fields(call: Call, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the label's color (checked) and description, where given."""
    color = call.arg("color")
    if color is not None:
        if not COLOR_RE.match(color.strip()):
            raise ValidationError(
                f"color must be a hex colour like #ff5500, got {color!r}",
                suggestion="six hex digits after #, e.g. #eb5757",
            )
        fields["color"] = color.strip()
    if call.arg("description") is not None:
        fields["description"] = call.args["description"]
    return fields


def create_linear_label(call: Call) -> tuple[str, dict]:
    name = call.args["name"].strip()
    if not name:
        raise ValidationError("name must not be empty", suggestion="name the label, e.g. Bug")
    fields: dict[str, Any] = {"name": name}
    if call.arg("team_id"):
        fields["teamId"] = call.args["team_id"]
    node = call.run("LabelCreate", {"input": _label_fields(call, fields)})
    label = shape.label(node["issueLabelCreate"]["issueLabel"])
    return f"Linear {label['scope']} label {label['name']} created", {"label": label}


def update_linear_label(call: Call) -> tuple[str, dict]:
    fields: dict[str, Any] = {}
    if call.arg("name") is not None:
        if not call.args["name"].strip():
            raise ValidationError(
                "name must not be empty", suggestion="leave name out to keep the current one"
            )
        fields["name"] = call.args["name"].strip()
    if not _label_fields(call, fields):
        raise ValidationError(
            "update_linear_label needs one of name, color, description",
            suggestion="a rename keeps the label id and every issue carrying it",
            code="EMPTY_UPDATE",
        )
    node = call.run("LabelUpdate", {"id": call.args["id"], "input": fields})
    label = shape.label(node["issueLabelUpdate"]["issueLabel"])
    return f"Linear label {label['name']} updated", {
        "label": label,
        "updated_fields": sorted(fields),
    }


def create_linear_comment(call: Call) -> tuple[str, dict]:
    body = call.args["body"]
    if not body.strip():
        raise ValidationError("body must not be empty", suggestion="say what to comment")
    issue = _resolve(call, call.args["issue_id"])
    node = call.run("CommentCreate", {"input": {"issueId": issue["id"], "body": body}})
    comment = node["commentCreate"]["comment"]
    return f"Comment added to {issue['identifier']}", {
        "comment": shape.comment(comment),
        "issue": shape.ref(issue, "id", "identifier", "title", "url"),
    }


def _memory(call: Call) -> tuple[Any, dict[str, Any]]:
    service = call.memory()
    return service, service.show(key=call.args["memory_id"])["memory"]


def _org_key(call: Call, issue: dict[str, Any]) -> str:
    """The urlKey of the call's organisation (asked with the issue), or its issue URL's;
    UpstreamError when Linear said neither (a link must name its organisation)."""
    org = call.org_key or links.url_key(issue.get("url"))
    if not org:
        raise UpstreamError(
            "Linear did not say which organisation the issue belongs to",
            suggestion="check LINEAR_API_URL (or the connection's --api-url) points at "
            "Linear's GraphQL endpoint",
            code="LINEAR_BAD_RESPONSE",
        )
    return org


def _migrate(call: Call, service: Any, record: dict[str, Any], data: dict[str, Any]) -> dict:
    """Migrate the workspace's legacy links (`links.migrate`), noted in ``data``; the memory."""
    migrated = links.migrate(service, call.ctx.now, call.ctx.actor)
    if migrated:
        data["migrated_links"] = migrated
        record = service.show(key=record["key"])["memory"]
    return record


def _stamp(call: Call, service: Any, key: str, org: str, issues: list[dict]) -> dict[str, Any]:
    """Add ``linear:<org>/<IDENTIFIER>`` refs and one LINKED event (issue ids kept in it)."""

    def apply(record: dict[str, Any], current: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        held = {r.lower() for r in record["refs"]}
        for i in issues:
            ref = links.ref_for(org, i["identifier"])
            if ref.lower() not in held:
                record["refs"].append(ref)
        linked = [{"id": i["id"], "identifier": i["identifier"], "url": i["url"]} for i in issues]
        return links.LINKED, {"org": call.label, "org_key": org, "linear_issues": linked}

    # the one private method used: a link is one LINKED event with the issues' ids and URLs
    return service._change(key, call.ctx.now, call.ctx.actor, apply)["memory"]


def _memory_out(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("key", "introduction", "refs")}


def link_memory_to_linear_issue(call: Call) -> tuple[str, dict]:
    service, record = _memory(call)
    issue = _resolve(call, call.args["issue_id"])
    org = _org_key(call, issue)
    data: dict[str, Any] = {"issue": shape.ref(issue, "id", "identifier", "title", "url")}
    record = _migrate(call, service, record, data)
    ref = links.ref_for(org, issue["identifier"])
    if ref.lower() in {r.lower() for r in record["refs"]}:
        data.update(memory=_memory_out(record), linked=False, ref=ref)
        return f"Memory {record['key']} is already linked to {issue['identifier']}", data
    record = _stamp(call, service, record["key"], org, [issue])
    data.update(memory=_memory_out(record), linked=True, ref=ref)
    return f"Memory {record['key']} linked to {issue['identifier']}", data


def keywords(text: str, most: int = 6) -> list[str]:
    """The distinctive words of an introduction: no stopwords, 4+ characters, longest first."""
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]", text)]
    kept = [w for w in dict.fromkeys(words) if len(w) >= 4 and w not in STOPWORDS]
    return sorted(kept, key=lambda w: (-len(w), kept.index(w)))[:most]


def cross_reference_linear_memory(call: Call) -> tuple[str, dict]:
    service, record = _memory(call)
    words = keywords(record["introduction"])
    data: dict[str, Any] = {"keywords": words, "memory": _memory_out(record)}
    if not words:
        data.update(candidates=0, linked=[], already_linked=[])
        return "No searchable words in the memory's introduction; nothing linked", data
    where: dict[str, Any] = {"or": [{"title": {"containsIgnoreCase": w}} for w in words]}
    if call.arg("team_id"):
        where["team"] = {"id": {"eq": call.args["team_id"]}}
    found = shape.nodes(call.run("Issues", {"filter": where, "first": CROSS_REF_SEARCH})["issues"])
    need = min(len(words), 2)  # words a title must hold
    scored = [(-sum(w in n["title"].lower() for w in words), n["identifier"], n) for n in found]
    hits = sorted((s for s in scored if -s[0] >= need), key=lambda s: s[:2])
    matches = [n for _, _, n in hits][: call.arg("limit", CROSS_REF_LIMIT)]
    org = _org_key(call, matches[0]) if matches else ""
    record = _migrate(call, service, record, data)
    held = {r.lower() for r in record["refs"]}
    new = [n for n in matches if links.ref_for(org, n["identifier"]).lower() not in held]
    old = [n["identifier"] for n in matches if n not in new]
    if new:
        record = _stamp(call, service, record["key"], org, new)
    data.update(
        memory=_memory_out(record),
        candidates=len(found),
        linked=[shape.ref(n, "id", "identifier", "title", "url") for n in new],
        already_linked=old,
    )
    return f"Memory {record['key']} linked to {len(new)} Linear issue(s)", data


def update_ticket_from_memory(call: Call) -> tuple[str, dict]:
    _, record = _memory(call)
    mode = call.arg("update_type", "add_comment")
    block = f"**From nxs memory `{record['key']}`**: {record['introduction']}\n\n{record['body']}"
    data: dict[str, Any] = {"update_type": mode, "memory": _memory_out(record)}
    if mode == "add_comment":
        issue = _resolve(call, call.args["issue_id"])
        node = call.run("CommentCreate", {"input": {"issueId": issue["id"], "body": block}})
        data["comment"] = shape.comment(node["commentCreate"]["comment"])
        data["issue"] = shape.ref(issue, "id", "identifier", "title", "url")
        return f"Memory {record['key']} added to {issue['identifier']} as a comment", data
    current = call.run("Issue", {"id": call.args["issue_id"].strip()})["issue"]
    old = current.get("description") or ""
    if block in old:
        raise ConflictError(
            f"the description of {current['identifier']} already holds memory {record['key']}",
            suggestion="nothing to do; use add_comment to record a later change",
            code="NO_CHANGE",
        )
    new = f"{old.rstrip()}\n\n---\n\n{block}" if old.strip() else block
    variables = {"id": current["id"], "input": {"description": new}}
    node = call.run("IssueUpdate", variables)["issueUpdate"]["issue"]
    data["issue"] = shape.issue(node)
    return f"Memory {record['key']} appended to the description of {node['identifier']}", data


__all__ = ["ISSUE_FIELDS", "issue_input", "keywords"]
