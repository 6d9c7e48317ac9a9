"""The canned data of the fake Linear: two organisations, built fresh on every call.

AV ("Acme Ventures") has three teams (NC, ENG, JUN), workspace and team-scoped labels, two
projects, issues across every state type (one with a 2,556-character description, one with a
comment thread) and ENG-42, which memory 5 of the parity seed names in its refs. JL ("Jolly
Labs") is a second, smaller organisation, so a key can be shown to reach only its own.
Ids are UUIDv5 of a readable name, so tests can compute them with `uid`.
"""

from __future__ import annotations

import uuid
from typing import Any

NS = uuid.UUID("6f1c2a3e-8d4b-4e6f-9a1b-2c3d4e5f6a7b")
BASE = "2026-05-"

# The credentials the fake accepts, and the organisation each reaches.
KEYS = {"lin_api_av_test": "AV", "lin_api_jl_test": "JL", "lin_api_test": "AV"}
OAUTH = {"lin_oauth_av_test": "AV"}

STATE_TYPES = (
    ("Triage", "triage"),
    ("Backlog", "backlog"),
    ("Todo", "unstarted"),
    ("In Progress", "started"),
    ("Done", "completed"),
    ("Canceled", "canceled"),
)
PRIORITY_LABELS = {0: "No priority", 1: "Urgent", 2: "High", 3: "Medium", 4: "Low"}
LONG = (
    "The LanceDB lock is taken per process; a second writer waits on it. "
    "Under load the wait exceeds the default timeout and the write is retried. "
) * 18  # 2,556 characters


def uid(org: str, kind: str, name: str) -> str:
    """The fixed id of a seeded entity, e.g. ``uid("AV", "team", "NC")``."""
    return str(uuid.uuid5(NS, f"{org}/{kind}/{name}"))


def at(day: int, hour: int = 9) -> str:
    return f"{BASE}{day:02d}T{hour:02d}:00:00.000Z"


def _org(label: str, name: str, url_key: str) -> dict[str, Any]:
    return {
        "label": label,
        "id": uid(label, "org", label),
        "name": name,
        "urlKey": url_key,
        "users": {},
        "teams": {},
        "states": {},
        "labels": {},
        "projects": {},
        "project_labels": {},
        "issues": {},
        "comments": {},
        "viewer": None,
        "counter": 0,
    }


def _user(org: dict, name: str, email: str) -> str:
    i = uid(org["label"], "user", name)
    org["users"][i] = {
        "id": i,
        "name": name,
        "displayName": name.split()[0].lower(),
        "email": email,
        "active": True,
        "createdAt": at(1),
    }
    org["viewer"] = org["viewer"] or i
    return i


def _team(org: dict, key: str, name: str, members: list[str]) -> str:
    i = uid(org["label"], "team", key)
    org["teams"][i] = {
        "id": i,
        "key": key,
        "name": name,
        "description": f"The {name} team.",
        "members": members,
        "next": 1,
        "createdAt": at(1),
    }
    for pos, (state, kind) in enumerate(STATE_TYPES):
        s = uid(org["label"], "state", f"{key}/{state}")
        org["states"][s] = {
            "id": s,
            "name": state,
            "type": kind,
            "position": float(pos),
            "color": f"#{pos + 1}{pos + 1}{pos + 1}{pos + 1}{pos + 1}{pos + 1}",
            "team": i,
        }
    return i


def _label(org: dict, name: str, team: str | None = None, color: str = "#bb0000") -> str:
    i = uid(org["label"], "label", f"{team or 'ws'}/{name}")
    org["labels"][i] = {
        "id": i,
        "name": name,
        "color": color,
        "description": None,
        "team": team,
        "parent": None,
        "isGroup": False,
        "createdAt": at(1),
    }
    return i


def state(org: dict, team: str, name: str) -> str:
    """The id of a team's state by name."""
    key = org["teams"][team]["key"]
    return uid(org["label"], "state", f"{key}/{name}")


def _issue(org: dict, team: str, title: str, day: int, **fields: Any) -> str:
    t = org["teams"][team]
    number = fields.pop("number", t["next"])
    ident = f"{t['key']}-{number}"
    i = uid(org["label"], "issue", ident)
    org["issues"][i] = {
        "id": i,
        "identifier": ident,
        "number": number,
        "title": title,
        "description": fields.get("description"),
        "priority": fields.get("priority", 0),
        "team": team,
        "state": state(org, team, fields.get("state", "Todo")),
        "project": fields.get("project"),
        "assignee": fields.get("assignee"),
        "labels": list(fields.get("labels", [])),
        "previousIdentifiers": [],
        "createdAt": at(day),
        "updatedAt": at(day, 10 + len(org["issues"]) % 10),
    }
    t["next"] = max(t["next"], number + 1)
    return i


def _comment(org: dict, issue: str, user: str, body: str, day: int, parent: str | None = None):
    n = len(org["comments"]) + 1
    i = uid(org["label"], "comment", str(n))
    org["comments"][i] = {
        "id": i,
        "body": body,
        "issue": issue,
        "user": user,
        "parent": parent,
        "createdAt": at(day, 9 + n % 8),
        "updatedAt": at(day, 9 + n % 8),
    }
    return i


def _av() -> dict[str, Any]:
    org = _org("AV", "Acme Ventures", "acme")
    alice = _user(org, "Alice Martin", "alice@acme.test")
    bob = _user(org, "Bob Chen", "bob@acme.test")
    carol = _user(org, "Carol Diaz", "carol@acme.test")
    nc = _team(org, "NC", "Nexus Core", [alice, bob])
    eng = _team(org, "ENG", "Engineering", [alice, bob, carol])
    jun = _team(org, "JUN", "Junior Squad", [carol])
    bug = _label(org, "Bug", color="#eb5757")
    feature = _label(org, "Feature", color="#5e6ad2")
    critical = _label(org, "launch-critical", color="#f2c94c")
    backend = _label(org, "Backend", team=nc, color="#26b5ce")
    frontend = _label(org, "Frontend", team=eng, color="#4cb782")
    q3 = uid("AV", "project-label", "Q3")
    infra = uid("AV", "project-label", "Infra")
    for i, name in ((q3, "Q3"), (infra, "Infra")):
        org["project_labels"][i] = {"id": i, "name": name, "color": "#95a2b3", "description": None}
    launch = uid("AV", "project", "Launch")
    core = uid("AV", "project", "Memory Core")
    org["projects"][launch] = {
        "id": launch,
        "name": "Launch",
        "description": "Everything needed for the public launch.",
        "teams": [nc, eng],
        "members": [alice, bob],
        "lead": alice,
        "labels": [q3],
        "status": ("In Progress", "started"),
        "startDate": "2026-05-01",
        "targetDate": "2026-07-01",
        "progress": 0.4,
        "createdAt": at(1),
    }
    org["projects"][core] = {
        "id": core,
        "name": "Memory Core",
        "description": "The store, the lock and the projection.",
        "teams": [eng],
        "members": [carol],
        "lead": None,
        "labels": [infra, q3],
        "status": ("Planned", "planned"),
        "startDate": None,
        "targetDate": None,
        "progress": 0.0,
        "createdAt": at(2),
    }
    _issue(org, nc, "CORS error from localhost", 3, priority=2, state="In Progress",
           project=launch, assignee=alice, labels=[bug, critical],
           description="API returns a CORS failure when the frontend calls from localhost:3000.")  # fmt: skip
    _issue(org, nc, "Login page flickers on load", 4, priority=3, state="Todo", project=launch,
           labels=[bug, backend], description="")  # fmt: skip
    n103 = _issue(org, nc, "Rate limit retries double-send comments", 5, number=103,
                  priority=1, state="In Progress", project=launch, assignee=bob,
                  labels=[bug, critical], description=LONG)  # fmt: skip
    _issue(org, nc, "Launch checklist", 6, number=104, priority=2, state="Done",
           project=launch, assignee=alice, labels=[critical],
           description="Ship it.")  # fmt: skip
    _issue(org, nc, "Old export format", 7, number=105, priority=4, state="Canceled",
           project=launch, description="Superseded by JSON Lines.")  # fmt: skip
    _issue(org, eng, "Lock timeout under concurrent writers", 8, number=42, priority=2,
           state="Todo", project=core, assignee=carol, labels=[frontend],
           description="Two MCP servers writing at once time out on the LanceDB lock.")  # fmt: skip
    _issue(org, eng, "Projection is rewritten on every read", 9, number=43, priority=3,
           state="Backlog", project=core, labels=[feature], description=None)  # fmt: skip
    _issue(org, eng, "Triage: flaky lock test", 10, number=44, priority=0, state="Triage",
           description="Seen twice on CI.")  # fmt: skip
    _issue(org, jun, "Onboarding docs for the lock", 11, number=94, priority=3, state="Todo",
           assignee=carol, description="Explain the writer lock to new contributors.")  # fmt: skip
    first = _comment(org, n103, alice, "Seen again after the retry change. " * 12, 6)
    _comment(org, n103, bob, "Retries now skip mutations.", 7, parent=first)
    _comment(org, n103, alice, "Confirmed fixed on staging.", 8, parent=first)
    _comment(org, n103, carol, "Should we add a test?", 9)
    return org


def _jl() -> dict[str, Any]:
    org = _org("JL", "Jolly Labs", "jolly")
    dana = _user(org, "Dana Park", "dana@jolly.test")
    jl = _team(org, "JL", "Jolly", [dana])
    bug = _label(org, "Bug", color="#eb5757")
    _issue(org, jl, "Payment webhook retries", 3, priority=2, state="In Progress",
           assignee=dana, labels=[bug], description="Stripe retries arrive out of order.")  # fmt: skip
    _issue(org, jl, "CORS error on the admin app", 4, priority=3, state="Todo",
           description="Same symptom as AV's, different cause.")  # fmt: skip
    return org


def seed_orgs() -> dict[str, dict[str, Any]]:
    """Both organisations, freshly built (callers may mutate them)."""
    return {"AV": _av(), "JL": _jl()}


__all__ = ["KEYS", "OAUTH", "PRIORITY_LABELS", "at", "seed_orgs", "state", "uid"]
