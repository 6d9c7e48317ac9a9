"""The fake Linear's data views and its Query and Mutation resolvers (see `tests.linear_fake`).

Views are dicts whose relations are callables, which graphql-core's default resolver calls with
the field's arguments; so only what a document asks for is built, and the schema checks it.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError

from tests import linear_fake_data as seed

NOW = "2026-05-29T10:00:00.000Z"


def error(message: str, code: str, presentable: str | None = None) -> GraphQLError:
    """A GraphQL error shaped like Linear's (``extensions.code``, ``userPresentableMessage``)."""
    ext: dict[str, Any] = {"code": code, "type": code.lower().replace("_", " ")}
    if presentable:
        ext["userPresentableMessage"] = presentable
    return GraphQLError(message, extensions=ext)


def not_found(kind: str) -> GraphQLError:
    return error(f"Entity not found: {kind}", "INPUT_ERROR", f"Could not find referenced {kind}.")


def connection(items: list[Any], first: int | None = None, after: str | None = None, **_: Any):
    """A Relay connection page over ``items`` (cursors are offsets)."""
    start = int(after) if after else 0
    page = items[start : start + (50 if first is None else first)]
    end = start + len(page)
    return {
        "nodes": page,
        "pageInfo": {
            "hasNextPage": end < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": str(start) if page else None,
            "endCursor": str(end) if page else None,
        },
    }


def _conn(items_fn: Any) -> Any:
    return lambda info, **args: connection(items_fn(), **args)


_COMPARATORS = {
    "eq": lambda v, c: v == c,
    "neq": lambda v, c: v != c,
    "in": lambda v, c: v in c,
    "nin": lambda v, c: v not in c,
    "contains": lambda v, c: c in (v or ""),
    "containsIgnoreCase": lambda v, c: c.lower() in (v or "").lower(),
    "eqIgnoreCase": lambda v, c: (v or "").lower() == c.lower(),
}


def matches(value: Any, flt: dict[str, Any]) -> bool:
    """Whether a plain filter view satisfies a Linear filter (the subset nxs sends)."""
    for key, cond in flt.items():
        if key == "and":
            ok = all(matches(value, f) for f in cond)
        elif key == "or":
            ok = any(matches(value, f) for f in cond)
        elif key in _COMPARATORS:
            ok = _COMPARATORS[key](value, cond)
        elif key == "some":
            ok = any(matches(v, cond) for v in value)
        elif key == "every":
            ok = all(matches(v, cond) for v in value)
        elif key == "null":
            ok = (value is None) == cond
        elif isinstance(value, dict) and key in value:
            sub = value[key]
            ok = matches(sub, cond) if sub is not None or "null" in cond else False
        else:
            raise error(f"fake Linear does not model filter field {key!r}", "INTERNAL_FAKE")
        if not ok:
            return False
    return True


class Org:
    """One organisation's data and its GraphQL views."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.d = data

    # -- lookups --------------------------------------------------------------------------------

    def get(self, table: str, kind: str, key: str) -> dict[str, Any]:
        found = self.d[table].get(key)
        if found is None and table == "issues":
            found = next((i for i in self.d["issues"].values() if i["identifier"] == key), None)
        if found is None:
            raise not_found(kind)
        return found

    def new_id(self, kind: str) -> str:
        self.d["counter"] += 1
        return seed.uid(self.d["label"], f"new-{kind}", str(self.d["counter"]))

    # -- views ----------------------------------------------------------------------------------

    def user(self, i: str | None) -> dict[str, Any] | None:
        if i is None:
            return None
        u = self.d["users"][i]
        org = self.organization()
        return {**u, "organization": lambda info: org, "url": f"https://linear.test/u/{i}"}

    def organization(self) -> dict[str, Any]:
        return {"id": self.d["id"], "name": self.d["name"], "urlKey": self.d["urlKey"]}

    def state(self, i: str) -> dict[str, Any]:
        s = self.d["states"][i]
        return {**s, "team": lambda info: self.team(s["team"])}

    def team(self, i: str | None) -> dict[str, Any] | None:
        if i is None:
            return None
        t = self.d["teams"][i]
        states = [s for s in self.d["states"].values() if s["team"] == i]
        return {
            **{k: t[k] for k in ("id", "key", "name", "description")},
            "issueCount": lambda info, **a: sum(
                1 for x in self.d["issues"].values() if x["team"] == i
            ),
            "members": _conn(lambda: [self.user(u) for u in t["members"]]),
            "states": _conn(lambda: [self.state(s["id"]) for s in states]),
            "labels": _conn(
                lambda: [self.label(lb) for lb, v in self.d["labels"].items() if v["team"] == i]
            ),
        }

    def label(self, i: str) -> dict[str, Any]:
        lb = self.d["labels"][i]
        return {
            **lb,
            "team": lambda info: self.team(lb["team"]),
            "parent": lambda info: self.label(lb["parent"]) if lb["parent"] else None,
        }

    def project(self, i: str | None) -> dict[str, Any] | None:
        if i is None:
            return None
        p = self.d["projects"][i]
        status_name, status_type = p["status"]
        return {
            **{k: p[k] for k in ("id", "name", "description", "startDate", "targetDate")},
            "progress": p["progress"],
            "url": f"https://linear.test/{self.d['urlKey']}/project/{i}",
            "status": {
                "id": seed.uid(self.d["label"], "pstatus", status_name),
                "name": status_name,
                "type": status_type,
            },  # fmt: skip
            "lead": lambda info: self.user(p["lead"]),
            "members": _conn(lambda: [self.user(u) for u in p["members"]]),
            "teams": _conn(lambda: [self.team(t) for t in p["teams"]]),
            "labels": _conn(lambda: [self.d["project_labels"][x] for x in p["labels"]]),
            "issues": _conn(
                lambda: [self.issue(x["id"]) for x in self._issues() if x["project"] == i]
            ),
        }

    def _issues(self) -> list[dict[str, Any]]:
        return sorted(
            self.d["issues"].values(), key=lambda x: (x["updatedAt"], x["identifier"]), reverse=True
        )

    def issue(self, i: str) -> dict[str, Any]:
        x = self.d["issues"][i]
        return {
            **{k: x[k] for k in ("id", "identifier", "title", "description", "createdAt")},
            "updatedAt": x["updatedAt"],
            "number": float(x["number"]),
            "priority": float(x["priority"]),
            "priorityLabel": seed.PRIORITY_LABELS[x["priority"]],
            "url": f"https://linear.test/{self.d['urlKey']}/issue/{x['identifier']}",
            "labelIds": list(x["labels"]),
            "previousIdentifiers": list(x["previousIdentifiers"]),
            "state": lambda info: self.state(x["state"]),
            "team": lambda info: self.team(x["team"]),
            "project": lambda info: self.project(x["project"]),
            "assignee": lambda info: self.user(x["assignee"]),
            "labels": _conn(lambda: [self.label(lb) for lb in x["labels"]]),
            "comments": _conn(lambda: self._comments(i)),
        }

    def _comments(self, issue: str) -> list[dict[str, Any]]:
        rows = sorted(
            (c for c in self.d["comments"].values() if c["issue"] == issue),
            key=lambda c: (c["createdAt"], c["id"]),
        )
        return [self.comment(c["id"]) for c in rows]

    def comment(self, i: str) -> dict[str, Any]:
        c = self.d["comments"][i]
        ident = self.d["issues"][c["issue"]]["identifier"]
        return {
            **{k: c[k] for k in ("id", "body", "createdAt", "updatedAt")},
            "parentId": c["parent"],
            "url": f"https://linear.test/{self.d['urlKey']}/issue/{ident}#comment-{i[:8]}",
            "user": lambda info: self.user(c["user"]),
            "issue": lambda info: self.issue(c["issue"]),
        }

    def filter_view(self, x: dict[str, Any]) -> dict[str, Any]:
        """The plain nested values an IssueFilter is evaluated against."""
        st, t = self.d["states"][x["state"]], self.d["teams"][x["team"]]
        return {
            "id": x["id"],
            "title": x["title"],
            "number": x["number"],
            "priority": x["priority"],
            "team": {"id": t["id"], "key": t["key"], "name": t["name"]},
            "state": {"id": st["id"], "name": st["name"], "type": st["type"]},
            "labels": [{"id": lb, "name": self.d["labels"][lb]["name"]} for lb in x["labels"]],
            "project": {"id": x["project"]} if x["project"] else None,
            "assignee": {"id": x["assignee"]} if x["assignee"] else None,
        }


class Roots:
    """The Query and Mutation fields nxs uses, over one organisation."""

    def __init__(self, org: Org) -> None:
        self.o = org
        self.d = org.d

    # -- queries --------------------------------------------------------------------------------

    def viewer(self, info: Any) -> dict[str, Any] | None:
        return self.o.user(self.d["viewer"])

    def organization(self, info: Any) -> dict[str, Any]:
        return self.o.organization()

    def teams(self, info: Any, **args: Any) -> dict[str, Any]:
        rows = sorted(self.d["teams"].values(), key=lambda t: t["key"])
        return connection([self.o.team(t["id"]) for t in rows], **args)

    def team(self, info: Any, id: str) -> dict[str, Any] | None:
        return self.o.team(self.o.get("teams", "Team", id)["id"])

    def projects(self, info: Any, **args: Any) -> dict[str, Any]:
        return connection([self.o.project(p) for p in self.d["projects"]], **args)

    def project(self, info: Any, id: str) -> dict[str, Any] | None:
        return self.o.project(self.o.get("projects", "Project", id)["id"])

    def issue(self, info: Any, id: str) -> dict[str, Any]:
        return self.o.issue(self.o.get("issues", "Issue", id)["id"])

    def issues(self, info: Any, filter: dict | None = None, **args: Any) -> dict[str, Any]:
        rows = [x for x in self.o._issues() if not filter or matches(self.o.filter_view(x), filter)]
        args.pop("orderBy", None)
        return connection([self.o.issue(x["id"]) for x in rows], **args)

    def issueLabels(self, info: Any, **args: Any) -> dict[str, Any]:  # noqa: N802 - schema name
        return connection([self.o.label(i) for i in self.d["labels"]], **args)

    def users(self, info: Any, **args: Any) -> dict[str, Any]:
        return connection([self.o.user(u) for u in self.d["users"]], **args)

    # -- mutations ------------------------------------------------------------------------------

    def _check_labels(self, label_ids: list[str], team: str) -> list[str]:
        for i in label_ids:
            label = self.d["labels"].get(i)
            if label is None:
                raise not_found("IssueLabel")
            if label["team"] and label["team"] != team:
                raise error(
                    "Label from another team",
                    "INPUT_ERROR",
                    f"The label {label['name']} belongs to another team and cannot be used here.",
                )
        return list(dict.fromkeys(label_ids))

    def _check_state(self, state: str, team: str) -> str:
        found = self.d["states"].get(state)
        if found is None:
            raise not_found("WorkflowState")
        if found["team"] != team:
            raise error(
                "State from another team",
                "INPUT_ERROR",
                "The workflow state does not belong to the issue's team.",
            )
        return state

    def _state_of_type(self, team: str, kind: str) -> str:
        return next(
            s["id"] for s in self.d["states"].values() if s["team"] == team and s["type"] == kind
        )

    def _apply(self, x: dict[str, Any], fields: dict[str, Any]) -> None:
        simple = {"title": "title", "description": "description", "priority": "priority",
                  "assigneeId": "assignee", "projectId": "project"}  # fmt: skip
        for key, value in fields.items():
            if key in simple:
                if key == "assigneeId" and value is not None:
                    self.o.get("users", "User", value)
                if key == "projectId" and value is not None:
                    self.o.get("projects", "Project", value)
                x[simple[key]] = value
            elif key == "stateId":
                x["state"] = self._check_state(value, x["team"])
            elif key == "labelIds":
                x["labels"] = self._check_labels(value, x["team"])
            elif key not in ("teamId", "id"):
                raise error(f"fake Linear does not model input field {key!r}", "INTERNAL_FAKE")

    def _new(self, table: str, kind: str, input: dict[str, Any]) -> str:
        """The id of a new entity: the caller's (refused when taken) or one made here."""
        i = input.get("id") or self.o.new_id(kind)
        if i in self.d[table]:
            raise error("Entity already exists", "INPUT_ERROR", f"That {kind} id is taken.")
        return i

    def _number(self, team: dict[str, Any]) -> int:
        number = team["next"]
        team["next"] += 1
        return number

    def issueCreate(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        team = self.o.get("teams", "Team", input["teamId"])
        if not (input.get("title") or "").strip():
            raise error("title required", "INPUT_ERROR", "An issue needs a title.")
        i = self._new("issues", "issue", input)
        number = self._number(team)
        x = {
            "id": i, "identifier": f"{team['key']}-{number}", "number": number, "title": "",
            "description": None, "priority": 0, "team": team["id"],
            "state": self._state_of_type(team["id"], "backlog"), "project": None,
            "assignee": None, "labels": [], "previousIdentifiers": [],
            "createdAt": NOW, "updatedAt": NOW,
        }  # fmt: skip
        self._apply(x, input)
        self.d["issues"][i] = x
        return {"success": True, "issue": self.o.issue(i), "lastSyncId": 1.0}

    def issueUpdate(self, info: Any, id: str, input: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        x = self.o.get("issues", "Issue", id)
        new_team = input.get("teamId")
        if new_team and new_team != x["team"]:
            team = self.o.get("teams", "Team", new_team)
            kind = self.d["states"][x["state"]]["type"]
            number = self._number(team)
            x["previousIdentifiers"].append(x["identifier"])
            x.update(identifier=f"{team['key']}-{number}", number=number, team=team["id"])
            x["state"] = self._state_of_type(team["id"], kind)
            x["labels"] = [
                lb for lb in x["labels"] if self.d["labels"][lb]["team"] in (None, team["id"])
            ]
        self._apply(x, input)
        x["updatedAt"] = NOW
        return {"success": True, "issue": self.o.issue(x["id"]), "lastSyncId": 2.0}

    def projectCreate(self, info: Any, input: dict[str, Any], **_: Any) -> dict[str, Any]:  # noqa: N802
        teams = input["teamIds"]
        if not teams:
            raise error("teamIds empty", "INPUT_ERROR", "A project needs at least one team.")
        for t in teams:
            self.o.get("teams", "Team", t)
        i = self._new("projects", "project", input)
        self.d["projects"][i] = {
            "id": i, "name": input["name"], "description": input.get("description") or "",
            "teams": list(teams), "members": [], "lead": None, "labels": [],
            "status": ("Backlog", "backlog"), "startDate": None, "targetDate": None,
            "progress": 0.0, "createdAt": NOW,
        }  # fmt: skip
        return {"success": True, "project": self.o.project(i), "lastSyncId": 3.0}

    def _check_name(self, name: str, team: str | None, skip: str | None = None) -> None:
        for i, label in self.d["labels"].items():
            if i != skip and label["name"] == name and label["team"] == team:
                raise error("Duplicate label name", "INPUT_ERROR", f"A label named {name} exists.")

    def issueLabelCreate(self, info: Any, input: dict[str, Any], **_: Any) -> dict[str, Any]:  # noqa: N802
        team = input.get("teamId")
        if team is not None:
            self.o.get("teams", "Team", team)
        self._check_name(input["name"], team)
        i = self._new("labels", "label", input)
        self.d["labels"][i] = {
            "id": i, "name": input["name"], "color": input.get("color") or "#95a2b3",
            "description": input.get("description"), "team": team, "parent": None,
            "isGroup": False, "createdAt": NOW,
        }  # fmt: skip
        return {"success": True, "issueLabel": self.o.label(i), "lastSyncId": 4.0}

    def issueLabelUpdate(  # noqa: N802
        self, info: Any, id: str, input: dict[str, Any], **_: Any
    ) -> dict[str, Any]:
        label = self.o.get("labels", "IssueLabel", id)
        if "name" in input:
            self._check_name(input["name"], label["team"], skip=id)
        for key in ("name", "color", "description"):
            if key in input:
                label[key] = input[key]
        return {"success": True, "issueLabel": self.o.label(id), "lastSyncId": 5.0}

    def commentCreate(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        if not input.get("issueId"):
            raise error("issueId required", "INPUT_ERROR", "A comment needs an issue.")
        issue = self.o.get("issues", "Issue", input["issueId"])
        if not (input.get("body") or "").strip():
            raise error("body required", "INPUT_ERROR", "A comment needs a body.")
        i = self._new("comments", "comment", input)
        self.d["comments"][i] = {
            "id": i, "body": input["body"], "issue": issue["id"], "user": self.d["viewer"],
            "parent": input.get("parentId"), "createdAt": NOW, "updatedAt": NOW,
        }  # fmt: skip
        return {"success": True, "comment": self.o.comment(i), "lastSyncId": 6.0}


__all__ = ["Org", "Roots", "connection", "error", "matches", "not_found"]
