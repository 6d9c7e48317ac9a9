"""linear_query: every read rule of seed 000's integration_query, against the fake Linear."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import linear_fake_data as seed
from tests.linear_fake import FakeLinear, run
from tests.linear_fake_data import uid

NC, ENG = uid("AV", "team", "NC"), uid("AV", "team", "ENG")
LAUNCH = uid("AV", "project", "Launch")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLinear:
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_av_test")
    return FakeLinear()


def q(fake: FakeLinear, **arguments: Any) -> dict[str, Any]:
    return run("linear_query", fake, **arguments)


def idents(out: dict[str, Any]) -> list[str]:
    return sorted(i["identifier"] for i in out["data"]["issues"])


def sent_variables(fake: FakeLinear) -> dict[str, Any]:
    return fake.requests[-1]["payload"]["variables"]


def test_search_needs_query_or_team_id(fake: FakeLinear) -> None:
    out = q(fake, action="search_linear_issues", search_filters={"state": "open"})
    assert out["code"] == "VALIDATION_ERROR"
    assert out["message"] == "search_linear_issues needs query or team_id"
    assert fake.requests == []


def test_unsupported_filter_keys_are_refused_naming_the_supported_ones(fake: FakeLinear) -> None:
    out = q(fake, action="search_linear_issues", team_id=NC, search_filters={"assignee": "bob"})
    assert out == {
        "error": True,
        "kind": "validation",
        "code": "UNSUPPORTED_FILTER",
        "message": "search_filters does not support 'assignee'; the supported keys are: "
        "state, label, project",
        "suggestion": "a dropped filter would return the unfiltered set; narrow with state, "
        "label or project, or with query / team_id",
    }
    bad = q(fake, action="search_linear_issues", team_id=NC, search_filters={"state": "finished"})
    assert bad["message"] == "search_filters.state 'finished' is not a known state"
    assert fake.requests == []


def test_state_vocabulary_maps_to_linear_state_types(fake: FakeLinear) -> None:
    def state(value: str) -> list[str]:
        return idents(q(fake, action="search_linear_issues", team_id=NC,
                        search_filters={"state": value}))  # fmt: skip

    assert state("open") == ["NC-1", "NC-103", "NC-2"]
    assert state("closed") == ["NC-104", "NC-105"]
    assert state("cancelled") == state("canceled") == ["NC-105"]
    assert state("done") == state("completed") == ["NC-104"]
    assert state("in_progress") == state("active") == ["NC-1", "NC-103"]
    assert state("todo") == ["NC-2"]
    eng = q(fake, action="search_linear_issues", team_id=ENG, search_filters={"state": "Triage"})
    assert idents(eng) == ["ENG-44"]
    assert eng["data"]["applied_filters"] == {"state": "triage", "state_types": ["triage"]}


def test_label_is_exact_and_case_sensitive_project_by_uuid(fake: FakeLinear) -> None:
    hit = q(fake, action="search_linear_issues", team_id=NC,
            search_filters={"label": "launch-critical", "project": LAUNCH})  # fmt: skip
    assert idents(hit) == ["NC-1", "NC-103", "NC-104"]
    assert hit["data"]["applied_filters"] == {"label": "launch-critical", "project": LAUNCH}
    miss = q(fake, action="search_linear_issues", team_id=NC,
             search_filters={"label": "Launch-Critical"})  # fmt: skip
    assert miss["data"]["issues"] == [] and miss["data"]["returned_issues"] == 0


def test_query_matches_titles_only_case_insensitively_first_100_chars(fake: FakeLinear) -> None:
    out = q(fake, action="search_linear_issues", query="LOCK")
    # NC-103's description mentions the lock many times; its title does not.
    assert idents(out) == ["ENG-42", "ENG-44", "JUN-94"]
    assert out["data"]["query"] == "LOCK" and "team_id" not in out["data"]
    long = q(fake, action="search_linear_issues", query="a" * 120, team_id=NC)
    assert long["data"]["query"] == "a" * 100
    assert sent_variables(fake)["filter"]["title"] == {"containsIgnoreCase": "a" * 100}
    assert long["data"]["team_id"] == NC


def test_limit_default_max_and_may_be_truncated(fake: FakeLinear) -> None:
    q(fake, action="search_linear_issues", query="o")
    assert sent_variables(fake)["first"] == 25
    big = q(fake, action="search_linear_issues", query="o", limit=500)
    assert sent_variables(fake)["first"] == 100
    assert big["data"]["may_be_truncated"] is False
    one = q(fake, action="search_linear_issues", query="lock", limit=1)
    data = one["data"]
    assert (data["returned_issues"], data["total"], data["may_be_truncated"]) == (1, 1, True)


def test_description_excerpts(fake: FakeLinear) -> None:
    out = q(fake, action="search_linear_issues", team_id=NC)
    by = {i["identifier"]: i for i in out["data"]["issues"]}
    long = by["NC-103"]
    assert long["description"] == seed.LONG[:200]
    assert long["description_truncated"] is True
    assert long["description_chars_available"] == len(seed.LONG) == 2556
    assert by["NC-2"]["description"] == "" and by["NC-2"]["description_chars_available"] == 0
    assert by["NC-1"]["description_truncated"] is False
    assert out["data"]["detail_hint"].endswith("get_linear_issue with issue_id (e.g. NC-103)")
    wide = q(fake, action="search_linear_issues", team_id=NC, description_chars=99_999)
    assert {len(i.get("description", "")) for i in wide["data"]["issues"]} >= {2000}
    none = q(fake, action="search_linear_issues", team_id=NC, description_chars=0)
    issue = next(i for i in none["data"]["issues"] if i["identifier"] == "NC-103")
    assert "description" not in issue and issue["description_chars_available"] == 2556
    short = q(fake, action="search_linear_issues", query="CORS")
    assert "detail_hint" not in short["data"]


def test_get_linear_issue_by_identifier_never_excerpts(fake: FakeLinear) -> None:
    out = q(fake, action="get_linear_issue", issue_id="NC-103")
    issue = out["data"]["issue"]
    assert out["message"] == "Linear issue retrieved"
    assert issue["description"] == seed.LONG
    assert issue["labels"] == [
        {"id": uid("AV", "label", "ws/Bug"), "name": "Bug"},
        {"id": uid("AV", "label", "ws/launch-critical"), "name": "launch-critical"},
    ]
    assert (issue["priority"], issue["priority_label"]) == (1, "Urgent")
    missing = q(fake, action="get_linear_issue", issue_id="NC-999")
    assert missing["kind"] == "not_found" and missing["code"] == "LINEAR_NOT_FOUND"


def test_parameters_an_action_does_not_use_are_refused(fake: FakeLinear) -> None:
    out = q(fake, action="get_linear_teams", team_id=NC)
    assert out["code"] == "UNUSED_PARAMETER"
    assert out["message"] == (
        "get_linear_teams does not use team_id; it would be ignored, so the call is refused"
    )
    assert out["suggestion"] == "get_linear_teams takes: no parameters besides org"
    need = q(fake, action="list_linear_statuses")
    assert need["message"] == "list_linear_statuses requires team_id"
    assert fake.requests == []


def test_labels_are_organisation_wide_team_id_only_echoed(fake: FakeLinear) -> None:
    out = q(fake, action="list_linear_labels", team_id=ENG)
    data = out["data"]
    assert [(lb["name"], lb["scope"]) for lb in data["labels"]] == [
        ("Bug", "workspace"), ("Feature", "workspace"), ("launch-critical", "workspace"),
        ("Backend", "team"), ("Frontend", "team"),
    ]  # fmt: skip
    assert data["team_id"] == ENG and data["total"] == 5
    assert "team" not in str(sent_variables(fake))


def test_comments_excerpted_then_full_thread(fake: FakeLinear) -> None:
    listed = q(fake, action="list_linear_comments", issue_id="NC-103")["data"]
    assert listed["returned_comments"] == 4 and listed["may_be_truncated"] is False
    first = listed["comments"][0]
    assert len(first["body"]) == 200 and first["body_truncated"] is True
    assert first["body_chars_available"] == len("Seen again after the retry change. " * 12)
    assert "get_linear_comment_detail" in listed["detail_hint"]
    full = q(fake, action="get_linear_comment_detail", issue_id="NC-103")["data"]
    assert full["comments"][0]["body"] == "Seen again after the retry change. " * 12
    assert [c["parent_id"] for c in full["comments"]] == [
        None, first["id"], first["id"], None,
    ]  # fmt: skip
    assert full["issue"]["identifier"] == "NC-103" and full["total"] == 4


def test_details_statuses_users_project_labels(fake: FakeLinear) -> None:
    project = q(fake, action="get_linear_project_detail", project_id=LAUNCH)["data"]["project"]
    assert project["issue_count"] == 5 and project["issue_count_is_floor"] is False
    assert [t["key"] for t in project["teams"]] == ["NC", "ENG"]
    assert project["status"] == {"name": "In Progress", "type": "started"}
    team = q(fake, action="get_linear_team_detail", team_id=ENG)["data"]["team"]
    assert (team["key"], team["issue_count"], len(team["members"])) == ("ENG", 3, 3)
    assert [s["type"] for s in team["states"]] == [
        "triage", "backlog", "unstarted", "started", "completed", "canceled",
    ]  # fmt: skip
    statuses = q(fake, action="list_linear_statuses", team_id=NC)["data"]
    assert statuses["statuses"][4] == {
        "id": seed.state(fake.orgs["AV"].d, NC, "Done"), "name": "Done", "type": "completed",
        "color": "#555555",
    }  # fmt: skip
    users = q(fake, action="list_linear_users")["data"]
    assert [u["name"] for u in users["users"]] == ["Alice Martin", "Bob Chen", "Carol Diaz"]
    labels = q(fake, action="list_linear_project_labels", project_id=LAUNCH)["data"]
    assert [lb["name"] for lb in labels["labels"]] == ["Q3"]


def test_lists_follow_pages(fake: FakeLinear) -> None:
    org = fake.orgs["AV"].d
    for n in range(300):
        seed._user(org, f"User {n:03d}", f"u{n}@acme.test")
    users = q(fake, action="list_linear_users")["data"]
    assert users["total"] == 303 and users["may_be_truncated"] is False
    assert [r["payload"]["variables"]["after"] for r in fake.requests] == [None, "250"]


def _remember(workspace: Path, intro: str, refs: list[str], forget: bool = False) -> str:
    from nxm.service import MemoryService
    from nxs.workspace import find

    service = MemoryService(find(workspace))
    now = "2026-05-29T10:00:00.000Z"
    key = service.add(body=intro + " (body)", introduction=intro, refs=refs, now=now,
                      actor="tester")["memory"]["key"]  # fmt: skip
    if forget:
        service.forget(key=key, now=now, actor="tester")
    return key


def test_project_context_issues_memories_and_patterns(fake: FakeLinear, workspace: Path) -> None:
    linked = _remember(workspace, "Retries must skip mutations", ["linear:NC-103"])
    bare = _remember(workspace, "CORS comes from the dev proxy", ["nc-1", "src/proxy.ts"])
    _remember(workspace, "A forgotten note", ["linear:NC-2"], forget=True)
    _remember(workspace, "Closed issue note", ["linear:NC-104"])
    out = q(fake, action="get_project_context", project_id=LAUNCH)
    data = out["data"]
    assert data["scoped_by"] == "project" and data["project_id"] == LAUNCH
    assert idents(out) == ["NC-1", "NC-103", "NC-2"]  # closed ones left out by default
    assert data["returned_issues"] == 3 and data["issues_may_be_truncated"] is False
    assert {m["key"]: m["linked_issues"] for m in data["related_memories"]} == {
        linked: ["NC-103"], bare: ["NC-1"],
    }  # fmt: skip
    assert data["total_memories"] == 2
    assert data["patterns"] == {
        "by_state": {"In Progress": 2, "Todo": 1},
        "by_label": {"Bug": 3, "launch-critical": 2, "Backend": 1},
        "by_priority": {"High": 1, "Medium": 1, "Urgent": 1},
        "by_assignee": {"Alice Martin": 1, "Bob Chen": 1, "Unassigned": 1},
    }
    closed = q(fake, action="get_project_context", project_id=LAUNCH, include_closed=True)
    assert idents(closed) == ["NC-1", "NC-103", "NC-104", "NC-105", "NC-2"]
    assert closed["data"]["total_memories"] == 3


def test_project_context_caps_and_scoping(fake: FakeLinear, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no nxs workspace here
    org = fake.orgs["AV"].d
    for n in range(60):
        seed._issue(org, ENG, f"Bulk {n}", 12, description="x")
    out = q(fake, action="get_project_context", team_id=ENG, description_chars=0)
    data = out["data"]
    assert data["scoped_by"] == "team" and data["returned_issues"] == 50
    assert data["issues_may_be_truncated"] is True
    assert "description" not in data["issues"][0]
    assert data["related_memories"] == [] and data["total_memories"] == 0
    both = q(fake, action="get_project_context", team_id=ENG, project_id=LAUNCH)
    assert both["message"] == "get_project_context needs project_id or team_id (exactly one)"


def test_project_context_only_the_first_20_issues_count(fake: FakeLinear, workspace: Path) -> None:
    org = fake.orgs["AV"].d
    for n in range(30):
        seed._issue(org, ENG, f"Bulk {n}", 12)
    issues = q(fake, action="get_project_context", team_id=ENG)["data"]["issues"]
    early, late = issues[0]["identifier"], issues[25]["identifier"]
    near = _remember(workspace, "About an early issue", [early])
    _remember(workspace, "About a late issue", [f"linear:{late}"])
    data = q(fake, action="get_project_context", team_id=ENG)["data"]
    assert [m["key"] for m in data["related_memories"]] == [near]


def test_project_context_without_a_workspace_says_so(fake: FakeLinear, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = q(fake, action="get_project_context", project_id=LAUNCH)["data"]
    assert data["memory_note"] == (
        "no nxs memory workspace here, so no linked memories were looked up"
    )


class Pages:
    """A Linear whose ``teams`` pages are what ``page(after)`` says, for 10 requests (then a last
    page, so a client that would follow them forever stops); ``run`` takes it as a fake."""

    def __init__(self, page: Any) -> None:
        self.page, self.sent = page, 0

    def transport(self) -> Any:
        import httpx
        import orjson

        def handler(request: httpx.Request) -> httpx.Response:
            self.sent += 1
            after = orjson.loads(request.content)["variables"]["after"]
            last = {"nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}
            teams = self.page(after) if self.sent <= 10 else last
            return httpx.Response(200, content=orjson.dumps({"data": {"teams": teams}}))

        return httpx.MockTransport(handler)


TEAM = {"id": "t1", "key": "NC", "name": "Nexus", "description": None}


@pytest.mark.parametrize(
    ("page", "requests", "total"),
    [
        (lambda after: {"nodes": [TEAM], "pageInfo": {"hasNextPage": True, "endCursor": None}},
         1, 1),
        (lambda after: {"nodes": [TEAM], "pageInfo": {"hasNextPage": True, "endCursor": "c"}},
         2, 1),
        (lambda after: {"nodes": [], "pageInfo": {"hasNextPage": True, "endCursor": f"{after}+"}},
         1, 0),
    ],
    ids=["no-cursor", "same-cursor", "empty-pages"],
)  # fmt: skip
def test_pages_without_a_usable_cursor_end_said_as_more_never_loop(
    monkeypatch: pytest.MonkeyPatch, page: Any, requests: int, total: int
) -> None:
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_av_test")
    linear = Pages(page)
    data = run("linear_query", linear, action="get_linear_teams")["data"]  # type: ignore[arg-type]
    assert (linear.sent, data["total"], data["may_be_truncated"]) == (requests, total, True)
