"""Parity cases for the Linear operations (nxs/linear/ops.py): linear_query and linear_mutate.

Both seams reach the fake Linear of `tests.linear_fake` over HTTP on 127.0.0.1, at its
``/fresh/graphql`` URL, where every request is answered from fresh seed data: a write made by
the verb's run is not seen by the tool's run, so creates and moves give the same bytes twice.
``ENV`` is a lazy mapping: the fake starts (a thread of the test process) when a case first
reads it. Memory-touching cases use the seeded workspace (memory 5 names ENG-42, an issue of
the fake's ENG team).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.linear_fake_data import uid
from tests.parity.state import KEYS

CONVENTION, DECISION, GOTCHA, CLOSED, FORGOTTEN, ITEM, TASK = KEYS
NC, ENG, JUN = (uid("AV", "team", k) for k in ("NC", "ENG", "JUN"))
LAUNCH = uid("AV", "project", "Launch")
BUG, CRITICAL = uid("AV", "label", "ws/Bug"), uid("AV", "label", "ws/launch-critical")


class LazyEnv(Mapping[str, str]):
    """The cases' environment, computed (and the fake started) on first read."""

    def __init__(self) -> None:
        self._env: dict[str, str] | None = None

    def _get(self) -> dict[str, str]:
        if self._env is None:
            from tests.linear_fake import fresh_url

            self._env = {"LINEAR_API_URL": fresh_url(), "LINEAR_API_KEY": "lin_api_av_test"}
        return self._env

    def __getitem__(self, key: str) -> str:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


ENV = LazyEnv()


def two_orgs(root: Path) -> None:
    """Connect AV and JL in the case's user config (calls must then name one)."""
    from nxs.linear import connections

    connections.connect("AV", "lin_api_av_test")
    connections.connect("JL", "lin_api_jl_test")


def _case(case_id: str, tool: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"linear-{case_id}", "tool": tool, "arguments": arguments, "env": ENV}


def query(case_id: str, **arguments: Any) -> dict[str, Any]:
    return _case(case_id, "linear_query", **arguments)


def mutate(case_id: str, **arguments: Any) -> dict[str, Any]:
    return _case(case_id, "linear_mutate", **arguments)


CASES = [
    # -- reads ------------------------------------------------------------------------------
    query("teams", action="get_linear_teams"),
    query("projects", action="get_linear_projects"),
    query("issue-by-identifier", action="get_linear_issue", issue_id="NC-103"),
    query("issue-not-found", action="get_linear_issue", issue_id="NC-999"),
    query(
        "search-filtered",
        action="search_linear_issues",
        team_id=NC,
        search_filters={"state": "open", "label": "launch-critical"},
        description_chars=50,
        limit=2,
    ),
    query("search-title", action="search_linear_issues", query="lock", description_chars=0),
    query(
        "search-bad-filter",
        action="search_linear_issues",
        team_id=NC,
        search_filters={"assignee": "bob"},
    ),
    query("search-needs-scope", action="search_linear_issues", search_filters={"state": "open"}),
    query("unused-parameter", action="get_linear_teams", team_id=NC),
    query("project-detail", action="get_linear_project_detail", project_id=LAUNCH),
    query("team-detail", action="get_linear_team_detail", team_id=ENG),
    query("labels", action="list_linear_labels", team_id=ENG),
    query("project-labels", action="list_linear_project_labels", project_id=LAUNCH),
    query("statuses", action="list_linear_statuses", team_id=NC),
    query("users", action="list_linear_users"),
    query("comments", action="list_linear_comments", issue_id="NC-103"),
    query("comment-detail", action="get_linear_comment_detail", issue_id="NC-103"),
    query("project-context-team", action="get_project_context", team_id=ENG, include_closed=True),
    query("project-context-project", action="get_project_context", project_id=LAUNCH),
    {**query("disambiguation", action="get_linear_teams"), "setup": two_orgs},
    {**query("org-selected", action="get_linear_teams", org="jl"), "setup": two_orgs},
    query("org-unknown-one-org", action="get_linear_teams", org="JL"),  # never the only key
    query("search-query-cut", action="search_linear_issues", query="Lock " + "x" * 1200),
    # -- writes -----------------------------------------------------------------------------
    mutate(
        "create-issue",
        action="create_linear_issue",
        title="CORS error from localhost",
        description="API returns CORS failure when the frontend calls from localhost:3000",
        team_id=NC,
        priority=2,
        labels=[BUG],
    ),
    mutate("auto-create-issue", action="auto_create_linear_issue", title="Legacy", team_id=ENG),
    mutate("save-move", action="save_linear_issue", issue_id="JUN-94", team_id=NC),
    mutate("save-empty-update", action="save_linear_issue", issue_id="NC-1"),
    mutate("save-labels-replace", action="save_linear_issue", issue_id="NC-1", labelIds=[CRITICAL]),
    mutate("save-labels-blank", action="save_linear_issue", issue_id="NC-1", labels=[""]),
    mutate(
        "create-org-unknown-one-org", action="create_linear_issue", org="JL", title="x", team_id=NC
    ),  # fmt: skip
    mutate("create-project", action="create_linear_project", name="Docs", team_ids=[NC, ENG]),
    mutate("create-label-team", action="create_linear_label", name="perf", team_id=ENG),
    mutate("update-label", action="update_linear_label", id=BUG, name="Bug report"),
    mutate("create-comment", action="create_linear_comment", issue_id="NC-2", body="Repro added."),
    mutate(
        "link-memory", action="link_memory_to_linear_issue", memory_id=GOTCHA, issue_id="NC-103"
    ),
    {
        **mutate(
            "link-memory-org",
            action="link_memory_to_linear_issue",
            memory_id=GOTCHA,
            issue_id="JL-1",
            org="JL",
        ),
        "setup": two_orgs,
    },  # fmt: skip
    mutate(
        "link-memory-missing",
        action="link_memory_to_linear_issue",
        memory_id="ffff0000",
        issue_id="NC-103",
    ),  # fmt: skip
    mutate("cross-reference", action="cross_reference_linear_memory", memory_id=ITEM),
    mutate(
        "update-ticket-comment",
        action="update_ticket_from_memory",
        memory_id=CONVENTION,
        issue_id="ENG-42",
    ),  # fmt: skip
    mutate(
        "update-ticket-description",
        action="update_ticket_from_memory",
        memory_id=ITEM,
        issue_id="ENG-42",
        update_type="update_description",
    ),  # fmt: skip
]
