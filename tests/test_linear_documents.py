"""Every GraphQL document (and every variable shape) nxs can send is valid for Linear's schema."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from graphql import OperationDefinitionNode, parse, validate
from graphql.execution.values import get_variable_values

from nxs.linear.actions import MUTATE, QUERY
from nxs.linear.documents import DOCUMENTS, MUTATIONS
from nxs.linear.ops import MUTATE_ACTIONS, OPERATIONS, QUERY_ACTIONS
from nxs.linear.reads import STATE_TYPES
from nxs.linear.writes import ISSUE_FIELDS
from tests.linear_fake import COMPLEXITY_LIMIT, SCHEMA_PATH, FakeLinear, complexity, run, schema
from tests.linear_fake_data import uid

DESTRUCTIVE = re.compile(r"delete|archive|trash|remove", re.IGNORECASE)


def _operation(name: str) -> OperationDefinitionNode:
    ops = [d for d in parse(DOCUMENTS[name]).definitions if isinstance(d, OperationDefinitionNode)]
    assert len(ops) == 1
    return ops[0]


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_document_is_valid_against_linears_schema(name: str) -> None:
    errors = validate(schema(), parse(DOCUMENTS[name]))
    assert [e.message for e in errors] == []
    assert _operation(name).name.value == name
    assert (_operation(name).operation.value == "mutation") == (name in MUTATIONS)


def test_the_schema_is_vendored_so_a_bare_clone_runs_every_linear_test() -> None:
    assert SCHEMA_PATH.is_relative_to(Path(__file__).parents[1]) and SCHEMA_PATH.is_file()
    assert "type IssuePayload" in SCHEMA_PATH.read_text()


def test_no_document_deletes_archives_or_trashes_anything() -> None:
    for name, doc in DOCUMENTS.items():
        assert not DESTRUCTIVE.search(doc), f"{name} contains a destructive word"
    assert MUTATIONS == {
        "IssueCreate", "IssueUpdate", "ProjectCreate", "LabelCreate", "LabelUpdate",
        "CommentCreate",
    }  # fmt: skip


def test_issue_inputs_are_an_allow_list_of_real_fields() -> None:
    fields = set(ISSUE_FIELDS.values())
    for input_type in ("IssueCreateInput", "IssueUpdateInput"):
        assert fields <= set(schema().type_map[input_type].fields)  # type: ignore[attr-defined]
    assert not any(DESTRUCTIVE.search(f) for f in fields)
    assert "trashed" not in fields and "labelIds" in fields  # labelIds replaces


def test_action_tables_match_the_declared_choices() -> None:
    assert tuple(QUERY) == QUERY_ACTIONS
    assert tuple(MUTATE) == MUTATE_ACTIONS
    for op, table in zip(OPERATIONS, (QUERY, MUTATE), strict=True):
        names = {p.name for p in op.params}
        assert op.param("action").choices == tuple(table)
        for action in table.values():
            assert set(action.uses) <= names, action.name
            assert set(action.requires) <= set(action.uses), action.name


def _check_sent(fake: FakeLinear) -> int:
    """Coerce every recorded request's variables against its document; return the count."""
    for request in fake.requests:
        payload = request["payload"]
        op = _operation(payload["operationName"])
        assert payload["query"] == DOCUMENTS[payload["operationName"]]
        coerced = get_variable_values(schema(), op.variable_definitions, payload["variables"])
        assert not isinstance(coerced, list), [e.message for e in coerced]  # errors, any version
    return len(fake.requests)


def test_every_search_filter_combination_is_schema_valid(monkeypatch) -> None:
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_av_test")
    fake = FakeLinear()
    team = uid("AV", "team", "NC")
    project = uid("AV", "project", "Launch")
    scopes = ({"query": "lock"}, {"team_id": team}, {"query": "lock", "team_id": team})
    extras = {"state": "open", "label": "Bug", "project": project}
    for scope, n in itertools.product(scopes, range(4)):
        for keys in itertools.combinations(extras, n):
            filters = {k: extras[k] for k in keys}
            out = run(
                "linear_query", fake, action="search_linear_issues", search_filters=filters, **scope
            )
            assert out["success"] is True, out
    for state in STATE_TYPES:
        out = run("linear_query", fake, action="search_linear_issues", query="a",
                  search_filters={"state": state})  # fmt: skip
        assert out["data"]["applied_filters"]["state_types"] == list(STATE_TYPES[state])
    assert _check_sent(fake) == 3 * 8 + len(STATE_TYPES)


def test_every_other_builder_shape_is_schema_valid(workspace, monkeypatch) -> None:
    from nxm.service import MemoryService
    from nxs.workspace import find

    fake = FakeLinear()
    key = MemoryService(find(workspace)).add(
        body="CORS failures from localhost:3000 come from the dev proxy.",
        introduction="CORS error from localhost when the frontend calls the API",
        now="2026-05-29T10:00:00.000Z",
        actor="tester",
    )["memory"]["key"]
    team, project = uid("AV", "team", "NC"), uid("AV", "project", "Launch")
    calls = [
        ("linear_query", {"action": a})
        for a in ("get_linear_teams", "get_linear_projects", "list_linear_labels",
                  "list_linear_users")
    ] + [
        ("linear_query", {"action": "get_linear_issue", "issue_id": "NC-103"}),
        ("linear_query", {"action": "get_linear_project_detail", "project_id": project}),
        ("linear_query", {"action": "get_linear_team_detail", "team_id": team}),
        ("linear_query", {"action": "list_linear_project_labels", "project_id": project}),
        ("linear_query", {"action": "list_linear_statuses", "team_id": team}),
        ("linear_query", {"action": "list_linear_comments", "issue_id": "NC-103"}),
        ("linear_query", {"action": "get_linear_comment_detail", "issue_id": "NC-103"}),
        ("linear_query", {"action": "get_project_context", "project_id": project}),
        ("linear_query", {"action": "get_project_context", "team_id": team,
                          "include_closed": True}),
        ("linear_mutate", {"action": "create_linear_issue", "title": "T", "team_id": team,
                           "labels": [uid("AV", "label", "ws/Bug")], "project_id": project}),
        ("linear_mutate", {"action": "save_linear_issue", "issue_id": "NC-1", "priority": 1,
                           "team_id": uid("AV", "team", "ENG")}),
        ("linear_mutate", {"action": "create_linear_project", "name": "P", "team_ids": [team]}),
        ("linear_mutate", {"action": "create_linear_label", "name": "New", "team_id": team,
                           "color": "#123456"}),
        ("linear_mutate", {"action": "update_linear_label", "id": uid("AV", "label", "ws/Bug"),
                           "description": "Broken"}),
        ("linear_mutate", {"action": "create_linear_comment", "issue_id": "NC-2", "body": "b"}),
        ("linear_mutate", {"action": "link_memory_to_linear_issue", "memory_id": key,
                           "issue_id": "NC-2"}),
        ("linear_mutate", {"action": "cross_reference_linear_memory", "memory_id": key,
                           "team_id": team}),
        ("linear_mutate", {"action": "update_ticket_from_memory", "memory_id": key,
                           "issue_id": "NC-2", "update_type": "update_description"}),
        ("linear_mutate", {"action": "update_ticket_from_memory", "memory_id": key,
                           "issue_id": "NC-2"}),
    ]  # fmt: skip
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_av_test")
    for tool, arguments in calls:
        out = run(tool, fake, workspace=workspace, **arguments)
        assert out.get("success") is True, (arguments, out)
    assert {r["payload"]["operationName"] for r in fake.requests} == set(DOCUMENTS) - {"Viewer"}
    _check_sent(fake)


def test_every_document_stays_within_linears_complexity_limit(monkeypatch) -> None:
    """Linear refuses a query its published estimate puts over 10,000 points; each document is
    scored as sent with the largest pages nxs asks for (the rest have fixed pages)."""
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_av_test")
    fake = FakeLinear()
    team, project = uid("AV", "team", "NC"), uid("AV", "project", "Launch")
    for arguments in (
        {"action": "get_linear_teams"}, {"action": "get_linear_projects"},
        {"action": "list_linear_labels"}, {"action": "list_linear_users"},
        {"action": "search_linear_issues", "team_id": team, "limit": 100},
        {"action": "get_linear_comment_detail", "issue_id": "NC-103"},
        {"action": "get_project_context", "project_id": project},
    ):  # fmt: skip
        assert run("linear_query", fake, **arguments)["success"] is True
    scores = {name: complexity(doc) for name, doc in DOCUMENTS.items()}
    for request in fake.requests:
        name = request["payload"]["operationName"]
        scores[name] = max(scores[name], request["complexity"])
    assert {n: s for n, s in scores.items() if s > COMPLEXITY_LIMIT} == {}, scores
    assert complexity(DOCUMENTS["Projects"], {"first": 250}) > COMPLEXITY_LIMIT  # the old page


def test_help_loads_neither_httpx_nor_graphql() -> None:
    code = (
        "import sys, nxs.cli, nxs.linear.ops, nxs.linear.cli; nxs.cli.app; "
        "print(sorted(m for m in ('httpx', 'graphql') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert done.stdout == b"[]\n"
