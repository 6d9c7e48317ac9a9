"""Linear's nodes turned into the answers' shapes (snake_case, stable, excerpted where said)."""

from __future__ import annotations

from typing import Any

DESCRIPTION_DEFAULT = 200
COMMENT_EXCERPT = 200


def nodes(connection: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list((connection or {}).get("nodes") or [])


def ref(node: dict[str, Any] | None, *fields: str) -> dict[str, Any] | None:
    """A nested entity reduced to the named fields, or None."""
    if not node:
        return None
    return {f: node.get(f) for f in fields}


def team(node: dict[str, Any] | None) -> dict[str, Any] | None:
    return ref(node, "id", "key", "name")


def excerpt(out: dict[str, Any], field: str, text: str | None, chars: int | None) -> None:
    """Put ``text`` under ``field``: whole when ``chars`` is None, else cut with the facts."""
    text = text or ""
    if chars is None:
        out[field] = text
        return
    if chars > 0:
        out[field] = text[:chars]
    out[f"{field}_truncated"] = len(text) > chars
    out[f"{field}_chars_available"] = len(text)


def issue(node: dict[str, Any], chars: int | None = None) -> dict[str, Any]:
    """One issue; ``chars`` None keeps the whole description."""
    out: dict[str, Any] = {
        "id": node["id"], "identifier": node["identifier"], "title": node["title"],
        "url": node.get("url"), "priority": int(node.get("priority") or 0),
        "priority_label": node.get("priorityLabel"),
        "state": ref(node.get("state"), "id", "name", "type"), "team": team(node.get("team")),
        "project": ref(node.get("project"), "id", "name"),
        "assignee": ref(node.get("assignee"), "id", "name"),
        "labels": [ref(n, "id", "name") for n in nodes(node.get("labels"))],
        "created_at": node.get("createdAt"), "updated_at": node.get("updatedAt"),
    }  # fmt: skip
    excerpt(out, "description", node.get("description"), chars)
    return out


def label(node: dict[str, Any]) -> dict[str, Any]:
    """One issue label with its scope read from Linear (a team means team-scoped)."""
    return {
        "id": node["id"], "name": node["name"], "color": node.get("color"),
        "description": node.get("description"), "is_group": bool(node.get("isGroup")),
        "parent": ref(node.get("parent"), "id", "name"), "team": team(node.get("team")),
        "scope": "team" if node.get("team") else "workspace",
    }  # fmt: skip


def comment(node: dict[str, Any], chars: int | None = None) -> dict[str, Any]:
    """One comment; ``chars`` None keeps the whole body."""
    out: dict[str, Any] = {
        "id": node["id"], "parent_id": node.get("parentId"),
        "user": ref(node.get("user"), "id", "name"), "created_at": node.get("createdAt"),
        "updated_at": node.get("updatedAt"), "url": node.get("url"),
    }  # fmt: skip
    excerpt(out, "body", node.get("body"), chars)
    return out


def project(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": node["id"], "name": node["name"], "description": node.get("description") or "",
        "url": node.get("url"), "status": ref(node.get("status"), "name", "type"),
        "start_date": node.get("startDate"), "target_date": node.get("targetDate"),
        "progress": node.get("progress"), "teams": [team(t) for t in nodes(node.get("teams"))],
    }  # fmt: skip


__all__ = ["comment", "excerpt", "issue", "label", "nodes", "project", "ref", "team"]
