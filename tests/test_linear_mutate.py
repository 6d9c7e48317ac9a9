"""linear_mutate: every write rule of seed 000's integration_mutate, and memory links."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nxs.linear.ops import MUTATE_ACTIONS
from tests.linear_fake import FakeLinear, run
from tests.linear_fake_data import uid

NC, ENG, JUN = (uid("AV", "team", k) for k in ("NC", "ENG", "JUN"))
BUG, FEATURE = uid("AV", "label", "ws/Bug"), uid("AV", "label", "ws/Feature")
BACKEND = uid("AV", "label", f"{NC}/Backend")
NOW = "2026-05-29T10:00:00.000Z"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLinear:
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_av_test")
    return FakeLinear()


def m(fake: FakeLinear, **arguments: Any) -> dict[str, Any]:
    return run("linear_mutate", fake, **arguments)


def q(fake: FakeLinear, **arguments: Any) -> dict[str, Any]:
    return run("linear_query", fake, **arguments)


def sent(fake: FakeLinear) -> list[str]:
    return [r["payload"]["operationName"] for r in fake.requests]


def test_create_issue_defaults_priority_to_3_and_legacy_alias(fake: FakeLinear) -> None:
    out = m(fake, action="create_linear_issue", title="  CORS error  ", team_id=NC, labels=[BUG])
    issue = out["data"]["issue"]
    assert out["message"] == "Linear issue NC-106 created"
    assert (issue["identifier"], issue["title"], issue["priority"]) == ("NC-106", "CORS error", 3)
    assert issue["labels"] == [{"id": BUG, "name": "Bug"}]
    assert fake.requests[-1]["payload"]["variables"]["input"] == {
        "title": "CORS error", "teamId": NC, "labelIds": [BUG], "priority": 3,
        "id": issue["id"],  # ours, so an answer without the issue still names it
    }  # fmt: skip
    legacy = m(fake, action="auto_create_linear_issue", title="Again", team_id=NC, priority=1)
    assert legacy["data"]["issue"]["identifier"] == "NC-107"
    assert legacy["data"]["issue"]["priority"] == 1
    saved = m(fake, action="save_linear_issue", title="Via save", team_id=ENG)
    assert saved["data"]["issue"]["identifier"] == "ENG-45" and saved["data"]["created"] is True


def test_create_refusals_send_nothing(fake: FakeLinear) -> None:
    assert m(fake, action="create_linear_issue", title="x")["message"] == (
        "create_linear_issue requires team_id"
    )
    with_id = m(fake, action="create_linear_issue", title="x", team_id=NC, issue_id="NC-1")
    assert with_id["code"] == "UNUSED_PARAMETER"
    assert m(fake, action="save_linear_issue", title="x")["message"] == (
        "creating an issue needs title and team_id"
    )
    assert m(fake, action="create_linear_issue", titel="x", team_id=NC)["message"] == (
        "unknown parameter 'titel' for linear_mutate"
    )
    assert m(fake, action="create_linear_issue", title=" ", team_id=NC)["message"] == (
        "title must not be empty"
    )
    assert fake.requests == []


def test_update_resolves_identifiers_and_refuses_an_empty_update(fake: FakeLinear) -> None:
    empty = m(fake, action="save_linear_issue", issue_id="NC-1")
    assert empty["code"] == "EMPTY_UPDATE" and fake.requests == []
    state = uid("AV", "state", "NC/Done")
    out = m(fake, action="save_linear_issue", issue_id="NC-1", state_id=state)
    assert out["message"] == "Linear issue NC-1 updated"
    assert out["data"]["updated_fields"] == ["state_id"]
    assert out["data"]["issue"]["state"] == {"id": state, "name": "Done", "type": "completed"}
    assert sent(fake) == ["IssueRef", "IssueUpdate"]
    update = fake.requests[-1]["payload"]["variables"]
    assert update == {"id": uid("AV", "issue", "NC-1"), "input": {"stateId": state}}
    missing = m(fake, action="save_linear_issue", issue_id="NC-404", title="x")
    assert missing["code"] == "LINEAR_NOT_FOUND"


def test_labels_replace_and_both_aliases_work(fake: FakeLinear) -> None:
    out = m(fake, action="save_linear_issue", issue_id="NC-1", labels=[FEATURE])
    assert out["data"]["issue"]["labels"] == [{"id": FEATURE, "name": "Feature"}]
    for alias in ("label_ids", "labelIds"):
        again = m(fake, action="save_linear_issue", issue_id="NC-1", **{alias: [BUG, FEATURE]})
        assert [lb["name"] for lb in again["data"]["issue"]["labels"]] == ["Bug", "Feature"]


def test_team_label_refused_on_another_teams_issue(fake: FakeLinear) -> None:
    out = m(fake, action="create_linear_issue", title="x", team_id=ENG, labels=[BACKEND])
    assert out["kind"] == "upstream"
    assert out["message"] == (
        "Linear: The label Backend belongs to another team and cannot be used here."
    )


def test_team_id_on_update_moves_the_issue(fake: FakeLinear, workspace: Path) -> None:
    from nxm.service import MemoryService
    from nxs.workspace import find

    holder = MemoryService(find(workspace)).add(
        body="Onboarding docs explain the writer lock.", introduction="Docs for the lock",
        refs=["linear:JUN-94"], now=NOW, actor="tester",
    )["memory"]["key"]  # fmt: skip
    out = m(fake, action="save_linear_issue", issue_id="JUN-94", team_id=NC, workspace=workspace)
    data = out["data"]
    assert out["message"] == "Linear issue JUN-94 moved and updated; it is now NC-106"
    assert data["moved"] == {"from": "JUN-94", "to": "NC-106",
                             "team": {"id": NC, "key": "NC", "name": "Nexus Core"}}  # fmt: skip
    assert data["warning"].startswith("JUN-94 moved to team NC and is now NC-106; the old")
    assert data["memories_holding_old_identifier"] == [holder]
    assert q(fake, action="get_linear_issue", issue_id="JUN-94")["code"] == "LINEAR_NOT_FOUND"
    assert q(fake, action="get_linear_issue", issue_id="NC-106")["data"]["issue"]["title"] == (
        "Onboarding docs for the lock"
    )
    same = m(fake, action="save_linear_issue", issue_id="NC-106", team_id=NC, priority=2)
    assert "moved" not in same["data"] and "warning" not in same["data"]


def test_create_project_takes_team_ids_or_team_id(fake: FakeLinear) -> None:
    out = m(fake, action="create_linear_project", name="Docs", team_ids=[NC], team_id=ENG)
    project = out["data"]["project"]
    assert [t["key"] for t in project["teams"]] == ["NC", "ENG"]
    assert out["message"] == "Linear project Docs created"
    assert m(fake, action="create_linear_project", name="Docs")["message"] == (
        "creating a project needs name and team_ids (or team_id)"
    )


def test_label_scope_is_read_back_and_update_preserves_the_id(fake: FakeLinear) -> None:
    ws = m(fake, action="create_linear_label", name="perf", color="#00FF00")["data"]["label"]
    team = m(fake, action="create_linear_label", name="perf", team_id=ENG)["data"]["label"]
    assert (ws["scope"], ws["team"], ws["color"]) == ("workspace", None, "#00FF00")
    assert (team["scope"], team["team"]["key"]) == ("team", "ENG")
    dup = m(fake, action="create_linear_label", name="perf")
    assert dup["message"] == "Linear: A label named perf exists."
    assert m(fake, action="create_linear_label", name="x", color="green")["message"] == (
        "color must be a hex colour like #ff5500, got 'green'"
    )
    renamed = m(fake, action="update_linear_label", label_id=ws["id"], name="Perf")
    assert renamed["data"]["label"]["id"] == ws["id"]
    assert renamed["data"]["updated_fields"] == ["name"]
    assert renamed["message"] == "Linear label Perf updated"
    empty = m(fake, action="update_linear_label", id=ws["id"])
    assert empty["code"] == "EMPTY_UPDATE"


def test_create_comment_resolves_the_identifier(fake: FakeLinear) -> None:
    out = m(fake, action="create_linear_comment", issue_id="NC-2", body="Repro attached.")
    assert out["message"] == "Comment added to NC-2"
    assert out["data"]["comment"]["body"] == "Repro attached."
    assert out["data"]["comment"]["user"]["name"] == "Alice Martin"
    variables = fake.requests[-1]["payload"]["variables"]
    assert variables == {
        "input": {"issueId": uid("AV", "issue", "NC-2"), "body": "Repro attached.",
                  "id": out["data"]["comment"]["id"]}
    }  # fmt: skip


def test_no_action_deletes_archives_or_trashes() -> None:
    assert not [a for a in MUTATE_ACTIONS if any(w in a for w in ("delete", "archive", "trash"))]


def _memory(workspace: Path, intro: str) -> str:
    from nxm.service import MemoryService
    from nxs.workspace import find

    return MemoryService(find(workspace)).add(
        body=f"{intro}. The dev proxy drops the Origin header.", introduction=intro, now=NOW,
        actor="tester",
    )["memory"]["key"]  # fmt: skip


def _show(workspace: Path, key: str) -> dict[str, Any]:
    from nxm.service import MemoryService
    from nxs.workspace import find

    return MemoryService(find(workspace)).show(key=key)["memory"]


def test_link_memory_stamps_refs_and_history(fake: FakeLinear, workspace: Path) -> None:
    key = _memory(workspace, "CORS error from localhost when the frontend calls the API")
    out = m(fake, action="link_memory_to_linear_issue", memory_id=key[:8], issue_id="NC-103")
    assert out["message"] == f"Memory {key} linked to NC-103"
    assert out["data"]["linked"] is True and out["data"]["ref"] == "linear:acme/NC-103"
    record = _show(workspace, key)
    assert record["refs"] == ["linear:acme/NC-103"]  # the organisation's urlKey
    assert record["events"][-1] == {
        "type": "LINKED", "at": NOW, "actor": "tester",
        "data": {"org": "default", "org_key": "acme", "linear_issues": [{
            "id": uid("AV", "issue", "NC-103"), "identifier": "NC-103",
            "url": "https://linear.test/acme/issue/NC-103"}]},
    }  # fmt: skip
    again = m(fake, action="link_memory_to_linear_issue", memory_id=key, issue_id="NC-103")
    assert again["data"]["linked"] is False
    assert len(_show(workspace, key)["events"]) == len(record["events"])


def test_memory_actions_refuse_before_reaching_linear(
    fake: FakeLinear, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = m(fake, action="link_memory_to_linear_issue", memory_id="abc", issue_id="NC-1")
    assert out["code"] == "NO_WORKSPACE"
    assert out["message"].endswith("(this Linear action reads or stamps memories)")
    assert fake.requests == []


def test_unknown_memory_is_not_found_before_any_request(fake: FakeLinear, workspace: Path) -> None:
    out = m(fake, action="update_ticket_from_memory", memory_id="ffff", issue_id="NC-1")
    assert out["kind"] == "not_found" and fake.requests == []


def test_cross_reference_links_issues_sharing_introduction_words(
    fake: FakeLinear, workspace: Path
) -> None:
    key = _memory(workspace, "CORS error from localhost when the frontend calls the API")
    out = m(fake, action="cross_reference_linear_memory", memory_id=key)
    data = out["data"]
    assert data["keywords"] == ["localhost", "frontend", "error", "calls", "cors"]
    assert [i["identifier"] for i in data["linked"]] == ["NC-1"]
    assert _show(workspace, key)["refs"] == ["linear:acme/NC-1"]
    again = m(fake, action="cross_reference_linear_memory", memory_id=key)
    assert again["data"]["linked"] == [] and again["data"]["already_linked"] == ["NC-1"]
    assert again["message"] == f"Memory {key} linked to 0 Linear issue(s)"


def test_update_ticket_from_memory(fake: FakeLinear, workspace: Path) -> None:
    key = _memory(workspace, "CORS error from localhost when the frontend calls the API")
    block = (
        f"**From nxs memory `{key}`**: CORS error from localhost when the frontend calls the "
        "API\n\nCORS error from localhost when the frontend calls the API. The dev proxy drops "
        "the Origin header."
    )
    comment = m(fake, action="update_ticket_from_memory", memory_id=key, issue_id="NC-1")
    assert comment["data"]["update_type"] == "add_comment"
    assert comment["data"]["comment"]["body"] == block
    described = m(fake, action="update_ticket_from_memory", memory_id=key, issue_id="NC-1",
                  update_type="update_description")  # fmt: skip
    assert described["data"]["issue"]["description"] == (
        "API returns a CORS failure when the frontend calls from localhost:3000.\n\n---\n\n" + block
    )
    twice = m(fake, action="update_ticket_from_memory", memory_id=key, issue_id="NC-1",
              update_type="update_description")  # fmt: skip
    assert twice["code"] == "NO_CHANGE"


def test_rate_limits_are_retried_then_reported(fake: FakeLinear) -> None:
    sleeps: list[float] = []
    fake.rate_limit_next(1, reset_in_ms=800)
    ok = run("linear_mutate", fake, sleep=sleeps.append, action="create_linear_comment",
             issue_id="NC-1", body="x")  # fmt: skip
    assert ok["success"] is True and len(sleeps) == 1 and 0 < sleeps[0] <= 0.8
    fake.rate_limit_next(5)
    out = run("linear_query", fake, sleep=sleeps.append, action="get_linear_teams")
    assert out["code"] == "RATE_LIMITED" and len(sleeps) == 3


def test_a_wrong_key_is_an_auth_error_without_the_key(fake: FakeLinear, monkeypatch) -> None:
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_wrong_secret")
    out = m(fake, action="create_linear_comment", issue_id="NC-1", body="x")
    assert out["code"] == "LINEAR_AUTH"
    assert "lin_api_wrong_secret" not in str(out)
    assert out["suggestion"] == "check LINEAR_API_KEY"
