"""Issue 23's rules (and issue 24's Linear URLs) through both seams, with the fake's request log.

Each call runs twice on the same state: the verb in-process through the console script's entry
point (``nxs linear query|mutate ... --json``), then the tool through the MCP seam's call path
(`Seam.call`, which answers ``tools/call``). Both reach the fake Linear over HTTP on 127.0.0.1;
the fake and the memory workspace are reset before each run, so the two answers must be the
same bytes, and the fake's request log says what each run sent (nothing, for a refusal).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxs.linear import connections, session
from nxs.linear.actions import MUTATE, QUERY
from tests import linear_fake_data as seed
from tests.conftest import make_workspace
from tests.linear_fake import FakeLinear, serve_fake_linear, shared_fake
from tests.linear_fake_data import uid
from tests.parity.state import ACTOR, NOW
from tests.test_parity import OPS, run_cli

AV_KEY, JL_KEY = "lin_api_av_test", "lin_api_jl_test"
NC, ENG = uid("AV", "team", "NC"), uid("AV", "team", "ENG")
JL_NC = uid("JL", "team", "NC")  # JL's own NC team (added by `jl_nc`): NC-103 in both orgs
BUG, BACKEND = uid("AV", "label", "ws/Bug"), uid("AV", "label", f"{NC}/Backend")


@dataclass
class Outcome:
    answer: dict[str, Any]
    error: bool
    sent: list[list[dict[str, Any]]]  # the fake's request log of the CLI run, then the MCP run
    sleeps: list[list[float]]

    @property
    def nothing_sent(self) -> bool:
        return self.sent == [[], []]


class Seams:
    """Runs one call on both seams against the shared fake; see the module docstring."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from nxs.workspace import init

        self.fake = shared_fake()
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("LINEAR_API_URL", serve_fake_linear())
        self.sleeps: list[float] = []
        monkeypatch.setattr(session, "backoff_sleep", self.sleeps.append)  # no real waiting
        self.launch = init(tmp_path / "launch", ["linear"])[0].root
        self.template = make_workspace(tmp_path / "template")
        self.root = tmp_path / "proj"
        self.setup: Callable[[FakeLinear], None] | None = None

    def service(self, root: Path | None = None) -> Any:
        from nxm.service import MemoryService
        from nxs.workspace import find

        return MemoryService(find(root or self.template))

    def _reset(self) -> None:
        self.fake.reset()
        if self.setup is not None:
            self.setup(self.fake)
        self.sleeps.clear()
        if self.root.exists():
            shutil.rmtree(self.root)
        shutil.copytree(self.template, self.root)

    def call(self, tool: str, workspace: str | None = None, **arguments: Any) -> Outcome:
        from nxs.mcp.server import Seam

        where = workspace if workspace is not None else str(self.root)
        outs, sent, sleeps = [], [], []
        self._reset()
        out, code = run_cli(OPS[tool], arguments, where, {})  # type: ignore[arg-type]
        outs.append((out, code != 0))
        sent.append(list(self.fake.requests))
        sleeps.append(list(self.sleeps))
        self._reset()
        text, failed = Seam(workspace=str(self.launch), groups="all").call(
            tool, {**arguments, "workspace": where, "now": NOW, "actor": ACTOR}
        )
        outs.append((text.encode(), failed))
        sent.append(list(self.fake.requests))
        sleeps.append(list(self.sleeps))
        assert outs[0][0] == outs[1][0], f"the seams differ:\n{outs[0][0]!r}\n{outs[1][0]!r}"
        assert outs[0][1] == outs[1][1]
        return Outcome(orjson.loads(outs[0][0]), outs[0][1], sent, sleeps)

    def query(self, **arguments: Any) -> Outcome:
        return self.call("linear_query", **arguments)

    def mutate(self, **arguments: Any) -> Outcome:
        return self.call("linear_mutate", **arguments)


@pytest.fixture
def seams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Seams:
    monkeypatch.chdir(tmp_path)
    return Seams(tmp_path, monkeypatch)


def two_orgs() -> None:
    connections.connect("AV", AV_KEY)
    connections.connect("JL", JL_KEY)


def jl_nc(fake: FakeLinear) -> None:
    """JL gets a team NC with its own NC-103, so identifiers collide across organisations."""
    org = fake.orgs["JL"].d
    team = seed._team(org, "NC", "Nexus Clone", [org["viewer"]])
    seed._issue(org, team, "JL's own NC-103", 5, number=103, state="In Progress")


def jl_nc_and_ops(fake: FakeLinear) -> None:
    """`jl_nc`, and a team OPS for JL's NC-103 to move to."""
    jl_nc(fake)
    seed._team(fake.orgs["JL"].d, "OPS", "Ops", [])


def refused(out: Outcome, code: str) -> None:
    assert out.error and out.answer["code"] == code, out.answer
    assert out.answer["suggestion"], out.answer
    assert out.nothing_sent, out.sent


def disambiguated(out: Outcome, labels: list[str]) -> None:
    assert not out.error and out.answer["disambiguation_required"] is True, out.answer
    assert out.answer["available_workspaces"] == labels and out.answer["suggestion"]
    assert out.nothing_sent, out.sent


# -- 1. one organisation: an absent org may use it, an unknown one never --------------------------


@pytest.mark.parametrize("how", ["LINEAR_API_KEY", "connected"])
def test_one_org_absent_label_uses_it_unknown_label_is_refused(seams: Seams, how: str) -> None:
    if how == "LINEAR_API_KEY":
        seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
        label = "default"
    else:
        connections.connect("AV", AV_KEY)
        label = "AV"
    for org in ("JL", "jl", "nonsense"):
        disambiguated(seams.query(action="get_linear_teams", org=org), [label])
        out = seams.mutate(action="create_linear_issue", org=org, title="x", team_id=NC)
        disambiguated(out, [label])
        assert out.answer["message"].startswith(f"No Linear workspace is labelled {org!r}.")
    read = seams.query(action="get_linear_teams")
    assert read.answer["org"] == label and read.answer["data"]["total"] == 3
    made = seams.mutate(action="create_linear_issue", title="x", team_id=NC, org=label.lower())
    assert made.answer["data"]["issue"]["identifier"] == "NC-106"
    assert {r["authorization"] for run in made.sent for r in run} == {AV_KEY}


# -- 2. links name the organisation and are read only within it ---------------------------------


def _legacy_link(service: Any, key: str, label: str, url_key: str, ident: str) -> None:
    """A link as nxs wrote it before links named the organisation: ``linear:<ID>`` + LINKED."""

    def apply(record: dict[str, Any], current: Any) -> tuple[str, dict[str, Any]]:
        record["refs"].append(f"linear:{ident}")
        url = f"https://linear.test/{url_key}/issue/{ident}"
        return "LINKED", {"org": label, "linear_issues": [{"id": "x", "identifier": ident,
                                                           "url": url}]}  # fmt: skip

    service._change(key, NOW, "old-nxs", apply)


def _memories(seams: Seams) -> dict[str, str]:
    service = seams.service()

    def add(name: str, refs: list[str]) -> str:
        return service.add(body=f"About {name}.", introduction=f"Memory {name}", refs=refs,
                           now=NOW, actor="tester")["memory"]["key"]  # fmt: skip

    keys = {
        "av": add("av", ["linear:acme/NC-103"]),
        "jl": add("jl", ["linear:jolly/NC-103"]),
        "old_av": add("old-av", []),
        "old_jl": add("old-jl", []),
        "bare": add("bare", ["NC-103"]),  # hand-typed: names no organisation
        "plain": add("plain", []),
    }
    _legacy_link(service, keys["old_av"], "AV", "acme", "NC-103")
    _legacy_link(service, keys["old_jl"], "JL", "jolly", "NC-103")
    return keys


def _related(out: Outcome) -> dict[str, list[str]]:
    return {m["key"]: m["linked_issues"] for m in out.answer["data"]["related_memories"]}


def test_project_context_reads_links_only_within_the_org(seams: Seams) -> None:
    two_orgs()
    seams.setup = jl_nc
    keys = _memories(seams)
    before = seams.service().list(status="all", page_size=50)
    av = seams.query(action="get_project_context", team_id=NC, org="AV")
    assert _related(av) == {keys["av"]: ["NC-103"], keys["old_av"]: ["NC-103"]}
    jl = seams.query(action="get_project_context", team_id=JL_NC, org="JL")
    assert _related(jl) == {keys["jl"]: ["NC-103"], keys["old_jl"]: ["NC-103"]}
    # a read never migrates: the store is as it was
    assert seams.service(seams.root).list(status="all", page_size=50) == before
    connections.disconnect("JL")  # one organisation: a ref naming none can mean only it
    only = seams.query(action="get_project_context", team_id=NC)
    assert _related(only) == {
        keys["av"]: ["NC-103"], keys["old_av"]: ["NC-103"], keys["bare"]: ["NC-103"],
    }  # fmt: skip


def test_move_warnings_name_only_the_orgs_memories(seams: Seams) -> None:
    two_orgs()
    seams.setup = jl_nc
    keys = _memories(seams)
    av = seams.mutate(action="save_linear_issue", issue_id="NC-103", team_id=ENG, org="AV")
    assert av.answer["data"]["moved"]["from"] == "NC-103"
    assert av.answer["data"]["memories_holding_old_identifier"] == sorted(
        [keys["av"], keys["old_av"]]
    )
    seams.setup = jl_nc_and_ops
    jl = seams.mutate(action="save_linear_issue", issue_id="NC-103",
                      team_id=uid("JL", "team", "OPS"), org="JL")  # fmt: skip
    assert jl.answer["data"]["memories_holding_old_identifier"] == sorted(
        [keys["jl"], keys["old_jl"]]
    )


def test_link_records_the_org_and_migrates_legacy_links(seams: Seams) -> None:
    two_orgs()
    seams.setup = jl_nc
    keys = _memories(seams)
    out = seams.mutate(action="link_memory_to_linear_issue", memory_id=keys["plain"],
                       issue_id="NC-103", org="JL")  # fmt: skip
    data = out.answer["data"]
    assert data["ref"] == "linear:jolly/NC-103" and data["memory"]["refs"] == [data["ref"]]
    assert sorted(data["migrated_links"]) == sorted([keys["old_av"], keys["old_jl"]])
    after = seams.service(seams.root)  # the state the MCP run left
    refs = {name: after.show(key=k)["memory"]["refs"] for name, k in keys.items()}
    assert refs == {
        "av": ["linear:acme/NC-103"], "jl": ["linear:jolly/NC-103"],
        "old_av": ["linear:acme/NC-103"], "old_jl": ["linear:jolly/NC-103"],
        "bare": ["NC-103"], "plain": ["linear:jolly/NC-103"],
    }  # fmt: skip
    history = after.history(key=keys["old_av"], limit=1)["events"][0]
    assert (history["type"], history["data"]) == (  # the migration keeps what it replaced
        "CLASSIFIED",
        {"fields": ["refs"], "before": {"refs": ["linear:NC-103"]}},
    )
    linked = after.history(key=keys["plain"], limit=1)["events"][0]
    assert linked["data"]["org"] == "JL" and linked["data"]["org_key"] == "jolly"


# -- 3. a suggestion on every refusal --------------------------------------------------------------

LOCAL_REFUSALS = [
    ("linear_query", {"action": "search_linear_issues"}, "VALIDATION_ERROR"),
    ("linear_query", {"action": "search_linear_issues", "team_id": NC,
                      "search_filters": {"assignee": "bob"}}, "UNSUPPORTED_FILTER"),
    ("linear_query", {"action": "search_linear_issues", "team_id": NC,
                      "search_filters": {"state": ""}}, "VALIDATION_ERROR"),
    ("linear_query", {"action": "search_linear_issues", "team_id": NC,
                      "search_filters": {"state": "finished"}}, "VALIDATION_ERROR"),
    ("linear_query", {"action": "get_linear_teams", "team_id": NC}, "UNUSED_PARAMETER"),
    ("linear_query", {"action": "list_linear_statuses"}, "VALIDATION_ERROR"),
    ("linear_query", {"action": "get_project_context", "team_id": NC, "project_id": "p"},
     "VALIDATION_ERROR"),
    ("linear_query", {"action": "delete_linear_issue"}, "VALIDATION_ERROR"),
    ("linear_query", {"action": "get_linear_teams", "org": "x" * 41}, "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_issue", "title": "x"}, "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_issue", "title": " ", "team_id": NC},
     "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_issue", "title": "x", "team_id": NC,
                       "priority": 9}, "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "save_linear_issue", "issue_id": "NC-1"}, "EMPTY_UPDATE"),
    ("linear_mutate", {"action": "save_linear_issue", "issue_id": "NC-1", "labels": [""]},
     "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_project", "name": "P", "team_ids": [NC, " "]},
     "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_label", "name": "x", "color": "green"},
     "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_label", "name": " "}, "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "update_linear_label", "id": BUG}, "EMPTY_UPDATE"),
    ("linear_mutate", {"action": "update_linear_label", "id": BUG, "name": " "},
     "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "create_linear_comment", "issue_id": "NC-1", "body": " "},
     "VALIDATION_ERROR"),
    ("linear_mutate", {"action": "update_ticket_from_memory", "issue_id": "NC-1",
                       "memory_id": "ffff"}, "NOT_FOUND"),
    ("linear_mutate", {"action": "update_ticket_from_memory", "issue_id": "NC-1",
                       "memory_id": "ffff", "update_type": "rewrite"}, "VALIDATION_ERROR"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "code"), LOCAL_REFUSALS)
def test_every_local_refusal_has_a_suggestion_and_sends_nothing(
    seams: Seams, tool: str, arguments: dict[str, Any], code: str
) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    refused(seams.call(tool, **arguments), code)


def test_upstream_refusals_have_a_suggestion_too(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    other_team = seams.mutate(action="create_linear_issue", title="x", team_id=ENG,
                              labels=[BACKEND])  # fmt: skip
    assert other_team.answer["code"] == "LINEAR_ERROR" and other_team.answer["suggestion"]
    missing = seams.query(action="get_linear_issue", issue_id="NC-999")
    assert missing.answer["code"] == "LINEAR_NOT_FOUND" and missing.answer["suggestion"]
    seams.monkeypatch.setenv("LINEAR_API_KEY", "lin_api_wrong")
    auth = seams.query(action="get_linear_teams")
    assert auth.answer["code"] == "LINEAR_AUTH" and auth.answer["suggestion"]
    assert "lin_api_wrong" not in str(auth.answer)


RAISED = ("ValidationError", "NotFoundError", "ConflictError", "UpstreamError", "NxsError")


def _linear_sources() -> list[Path]:
    return sorted((Path(__file__).parents[1] / "nxs" / "linear").glob("*.py"))


def test_every_refusal_raised_in_nxs_linear_passes_a_suggestion() -> None:
    import ast

    made = 0
    for path in _linear_sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in RAISED:
                made += 1
                names = {k.arg for k in node.keywords}
                assert "suggestion" in names, f"{path.name}:{node.lineno} has no suggestion"
    assert made > 40  # the walk found the refusals


def test_no_memory_workspace_is_refused_before_linear(seams: Seams, tmp_path: Path) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    out = seams.mutate(action="link_memory_to_linear_issue", memory_id="ab", issue_id="NC-1",
                       workspace=str(tmp_path / "nowhere"))  # fmt: skip
    refused(out, "NO_WORKSPACE")


# -- 4. an outage: a 5xx with a GraphQL errors body ------------------------------------------------


def test_503_with_graphql_errors_is_unavailable_and_reads_are_retried(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    seams.setup = lambda fake: fake.fail_next(3)
    down = seams.query(action="get_linear_teams")
    assert down.error and down.answer["code"] == "LINEAR_UNAVAILABLE"
    assert down.answer["message"] == (
        "Linear answered HTTP 503: Linear is temporarily unavailable. Please try again."
    )
    assert down.answer["details"] == {"http_status": 503, "linear_code": "SERVICE_UNAVAILABLE"}
    assert [len(run) for run in down.sent] == [3, 3] and down.sleeps == [[1.0, 2.0]] * 2
    seams.setup = lambda fake: fake.fail_next(1)
    back = seams.query(action="get_linear_teams")
    assert back.answer["data"]["total"] == 3 and down.answer["suggestion"]
    assert [len(run) for run in back.sent] == [2, 2] and back.sleeps == [[1.0]] * 2
    seams.setup = lambda fake: fake.fail_next(1, errors=False)
    html = seams.query(action="get_linear_teams")
    assert html.answer["data"]["total"] == 3


def test_503_on_a_write_is_never_sent_twice(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    seams.setup = lambda fake: fake.fail_next(1)
    out = seams.mutate(action="create_linear_issue", title="x", team_id=NC)
    assert out.answer["code"] == "LINEAR_UNAVAILABLE" and out.sleeps == [[], []]
    assert [[r["payload"]["operationName"] for r in run] for run in out.sent] == [
        ["IssueCreate"], ["IssueCreate"],
    ]  # fmt: skip
    assert out.answer["message"].endswith("the change may or may not have been applied")


def test_every_linear_code_is_in_the_docs_code_table() -> None:
    import re

    docs = (Path(__file__).parents[1] / "docs" / "linear.md").read_text()
    table = docs[docs.index("| code | kind | when |") :].split("\n\n")[0]
    documented = set(re.findall(r"`([A-Z_]+)`", table))
    raised = set()
    for path in _linear_sources():
        raised |= set(re.findall(r'code="([A-Z_]+)"', path.read_text()))
    assert {"LINEAR_BAD_RESPONSE", "LINEAR_UNAVAILABLE", "USE_ORG"} <= raised
    assert sorted(raised - documented) == []


# -- 5. blank labels, long queries, keys typed as arguments ----------------------------------------


def test_blank_label_ids_are_refused_not_a_silent_clear(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    for labels in ([""], [BUG, " "]):
        out = seams.mutate(action="save_linear_issue", issue_id="NC-1", labels=labels)
        refused(out, "VALIDATION_ERROR")
        assert out.answer["message"] == "labels holds an empty id"
    create = seams.mutate(action="create_linear_issue", title="x", team_id=NC, label_ids=[""])
    refused(create, "VALIDATION_ERROR")


def test_a_query_over_1000_characters_is_cut_to_the_first_100(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    term = "Lock " + "x" * 1500
    out = seams.query(action="search_linear_issues", query=term, description_chars=0)
    data = out.answer["data"]
    assert data["query"] == term[:100] and data["query_truncated"] is True
    for run in out.sent:
        assert run[-1]["payload"]["variables"]["filter"]["title"] == {
            "containsIgnoreCase": term[:100]
        }
    short = seams.query(action="search_linear_issues", query="lock", description_chars=0)
    assert short.answer["data"]["query_truncated"] is False


# -- 6. workspace: one rule on every Linear action ------------------------------------------------


def _minimal(spec: Any) -> dict[str, Any]:
    values = {"issue_id": "NC-1", "team_id": NC, "project_id": "p", "title": "t", "name": "n",
              "id": BUG, "body": "b", "memory_id": "ab"}  # fmt: skip
    return {"action": spec.name, **{p: values[p] for p in spec.requires}}


ACTIONS = [("linear_query", a) for a in QUERY.values()] + [
    ("linear_mutate", a) for a in MUTATE.values()
]


@pytest.mark.parametrize(("tool", "spec"), ACTIONS, ids=[a.name for _, a in ACTIONS])
def test_a_workspace_naming_an_org_is_use_org_on_every_action(
    seams: Seams, tool: str, spec: Any
) -> None:
    two_orgs()
    for workspace, org in (("AV", {}), ("jl", {}), ("AV", {"org": "AV"}), ("av", {"org": "JL"})):
        out = seams.call(tool, workspace=workspace, **org, **_minimal(spec))
        refused(out, "USE_ORG")
        assert "org" in out.answer["message"] and "org=" in out.answer["suggestion"]


def test_use_org_also_with_one_org_and_when_a_folder_of_that_name_is_a_workspace(
    seams: Seams, tmp_path: Path
) -> None:
    connections.connect("AV", AV_KEY)
    folder = make_workspace(tmp_path / "AV")  # cwd is tmp_path: "AV" is a real nxs workspace
    before = sorted(p.name for p in (folder / ".nxs").rglob("*"))
    out = seams.mutate(action="link_memory_to_linear_issue", workspace="AV", memory_id="ab",
                       issue_id="NC-1")  # fmt: skip
    refused(out, "USE_ORG")
    assert out.answer["suggestion"] == "pass org='AV' (alias linear_workspace) instead of workspace"
    assert sorted(p.name for p in (folder / ".nxs").rglob("*")) == before


def test_schema_lists_linear_workspace_and_descriptions_name_org() -> None:
    for tool in ("linear_query", "linear_mutate"):
        op = OPS[tool]
        props = op.input_schema()["properties"]
        assert props["linear_workspace"]["description"] == "Alias of org."
        assert props["linear_workspace"]["type"] == props["org"]["type"] == "string"
        assert "org" in op.summary.split() or "with org" in op.summary


# -- issue 24: only https to Linear's host (or loopback); malformed URLs are validation errors ----


def test_a_malformed_linear_api_url_is_a_validation_error_on_both_seams(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    seams.monkeypatch.setenv("LINEAR_API_URL", "http://[bad")
    refused(seams.query(action="get_linear_teams"), "BAD_LINEAR_URL")
    seams.monkeypatch.setenv("LINEAR_API_URL", "http://api.linear.app/graphql")
    refused(seams.query(action="get_linear_teams"), "INSECURE_LINEAR_URL")


def test_a_committed_url_other_than_https_linear_is_untrusted(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    seams.monkeypatch.delenv("LINEAR_API_URL")
    config = seams.template / ".nxs" / "config.toml"
    text = config.read_text()
    for url in ("https://api.linear.app:8443/graphql", "https://evil.example/graphql"):
        config.write_text(f'{text}\n[linear]\napi_url = "{url}"\n')
        refused(seams.query(action="get_linear_teams"), "UNTRUSTED_LINEAR_URL")


# -- issue 36: a write Linear applied is done, whatever errors its answer holds ----------------


def _ops(out: Outcome) -> list[list[str]]:
    return [[r["payload"]["operationName"] for r in run] for run in out.sent]


def test_a_write_answered_with_errors_beside_its_data_is_done_not_refused(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    seams.setup = lambda fake: fake.break_field("Issue.project")  # nullable: the issue is there
    out = seams.mutate(action="create_linear_issue", title="x", team_id=NC)
    assert not out.error and out.answer["data"]["issue"]["identifier"] == "NC-106"
    assert out.answer["data"]["linear_errors"] == ["Internal server error"]
    assert out.answer["message"].startswith("Linear issue NC-106 created; Linear reported")
    assert _ops(out) == [["IssueCreate"]] * 2
    seams.setup = lambda fake: fake.break_field("Issue.labels")  # non-null: the issue is null
    out = seams.mutate(action="create_linear_issue", title="x", team_id=NC)
    issue = out.answer["data"]["issue"]
    assert not out.error and issue["identifier"] == "NC-106"  # read back by the id we sent
    assert _ops(out) == [["IssueCreate", "Issue"]] * 2
    assert out.sent[0][1]["payload"]["variables"] == {"id": issue["id"]}
    seams.setup = lambda fake: fake.break_field("Comment.body")  # non-null up to data: null
    out = seams.mutate(action="create_linear_comment", issue_id="NC-2", body="b")
    assert out.error and out.answer["code"] == "LINEAR_INCOMPLETE"  # the error's path says so
    assert out.answer["message"].startswith("Linear applied CommentCreate (id ")
    assert out.answer["details"]["applied"] is True
    assert out.answer["suggestion"].startswith("it is done: do not send it again")
    assert _ops(out) == [["IssueRef", "CommentCreate"]] * 2


def test_a_key_given_as_org_or_workspace_is_never_echoed(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    key = "lin_api_Zq81SECRETSECRET0001"
    for arguments in ({"org": key}, {"workspace": key}, {"workspace": f"./{key}"}):
        out = seams.query(action="get_linear_teams", **arguments)
        assert "SECRETSECRET" not in orjson.dumps(out.answer).decode() and out.nothing_sent


def test_with_only_linear_api_key_a_bare_workspace_is_use_org_and_dot_slash_is_the_folder(
    seams: Seams, tmp_path: Path
) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)  # the org's label is "default" here
    folder = make_workspace(tmp_path / "AV")  # cwd is tmp_path: a decoy nxs workspace
    key = seams.service(folder).add(body="b", introduction="Decoy memory", now=NOW,
                                    actor="tester")["memory"]["key"]  # fmt: skip
    before = sorted(p.name for p in (folder / ".nxs").rglob("*"))
    link = {"action": "link_memory_to_linear_issue", "memory_id": key, "issue_id": "NC-1"}
    for workspace in ("AV", "JL"):  # a decoy folder, or none: both are refused naming org
        out = seams.mutate(workspace=workspace, **link)
        refused(out, "USE_ORG")
        assert "org" in out.answer["message"] and f"./{workspace}" in out.answer["suggestion"]
    assert sorted(p.name for p in (folder / ".nxs").rglob("*")) == before
    out = seams.query(action="get_linear_teams", workspace="./AV")  # a path is a path
    assert out.answer["success"] is True and out.answer["org"] == "default"


def test_labels_brackets_clear_an_issues_labels_on_both_seams(seams: Seams) -> None:
    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    out = seams.mutate(action="save_linear_issue", issue_id="NC-1", labels=["[]"])  # --labels '[]'
    assert out.answer["data"]["issue"]["labels"] == [] and out.answer["data"]["updated_fields"] == [
        "labels"
    ]
    assert [run[-1]["payload"]["variables"]["input"] for run in out.sent] == [{"labelIds": []}] * 2
    blank = seams.mutate(action="save_linear_issue", issue_id="NC-1", labels=[""])  # --labels ''
    refused(blank, "VALIDATION_ERROR")
    assert "--labels '[]'" in blank.answer["suggestion"]


def test_a_hanging_linear_is_cut_at_the_calls_timeout_and_says_so(seams: Seams) -> None:
    import time

    seams.monkeypatch.setenv("LINEAR_API_KEY", AV_KEY)
    config = seams.template / ".nxs" / "config.toml"
    config.write_text(f"{config.read_text()}\n[linear]\ntimeout = 1\n")
    seams.setup = lambda fake: setattr(fake, "hang", 4.0)
    start = time.monotonic()
    out = seams.query(action="get_linear_teams")
    took = time.monotonic() - start
    seams.setup = None
    assert out.error and out.answer["code"] == "LINEAR_UNREACHABLE"
    assert (
        "did not answer in time (one call may take 1 s: [linear] timeout)" in out.answer["message"]
    )
    assert [len(run) for run in out.sent] == [1, 1] and took < 3.5  # both seams, 1 s each
