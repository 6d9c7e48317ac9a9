"""Connecting organisations: keys owner-only and never shown; choosing one per call."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from nxs.cli import app
from nxs.linear import connections
from tests.linear_fake import FakeLinear, run, serve_fake_linear, shared_fake

AV, JL = "lin_api_av_test", "lin_api_jl_test"


def nxs(*args: str, input: str | None = None, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), input=input, env=env)


def test_connect_reads_stdin_and_stores_the_key_owner_only(workspace: Path) -> None:
    done = nxs("linear", "connect", "AV", "--json", input=AV + "\n")
    assert done.exit_code == 0, done.output
    path = connections.path()
    assert orjson.loads(done.stdout) == {
        "connected": "AV", "replaced": False, "oauth": False, "workspaces": ["AV"],
        "stored_in": str(path),
    }  # fmt: skip
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert orjson.loads(path.read_bytes())["workspaces"] == {"AV": {"key": AV, "oauth": False}}
    assert AV not in done.output
    for file in (workspace / ".nxs").rglob("*"):
        if file.is_file():
            assert AV.encode() not in file.read_bytes(), file


def test_connect_says_how_the_linear_tools_get_served(workspace: Path) -> None:
    from nxs.workspace import init

    done = nxs("linear", "connect", "AV", input=AV + "\n")
    assert done.exit_code == 0, done.output
    assert "run `nxs init --module linear` there" in done.stdout
    init(workspace, ["linear"])
    again = nxs("linear", "connect", "AV", input=AV + "\n")
    assert "now lists linear_query and linear_mutate" in again.stdout


def test_connect_from_env_oauth_replace_and_list_labels_only(monkeypatch) -> None:
    monkeypatch.setenv("MY_LINEAR", "lin_oauth_av_test")
    assert nxs("linear", "connect", "av", "--from-env", "MY_LINEAR", "--oauth").exit_code == 0
    done = nxs("linear", "connect", "AV", "--json", input="lin_api_av_test")
    assert orjson.loads(done.stdout)["replaced"] is True  # labels match case-insensitively
    nxs("linear", "connect", "JL", input=JL)
    listed = nxs("linear", "workspaces", "--json")
    assert orjson.loads(listed.stdout) == {
        "workspaces": ["AV", "JL"], "total": 2, "from_environment": False,
    }  # fmt: skip
    human = nxs("linear", "workspaces")
    assert human.stdout == "AV\nJL\n"
    assert "lin_" not in listed.output + human.output


def test_connect_refusals_store_nothing(monkeypatch) -> None:
    assert nxs("linear", "connect", "bad label!", input=AV).exit_code == 2
    assert nxs("linear", "connect", "AV", input="two words").exit_code == 2
    assert nxs("linear", "connect", "AV", "--from-env", "UNSET_VAR_X").exit_code == 2
    assert not connections.path().exists()
    nxs("linear", "connect", "AV", input=AV)
    done = nxs("linear", "connect", "Other", "--json", input=AV)
    assert done.exit_code == 4
    assert orjson.loads(done.stdout)["code"] == "KEY_ALREADY_CONNECTED"
    assert AV not in done.output
    assert connections.labels() == ["AV"]


def test_disconnect(monkeypatch) -> None:
    nxs("linear", "connect", "AV", input=AV)
    done = nxs("linear", "disconnect", "av", "--json")
    assert orjson.loads(done.stdout) == {"disconnected": "AV", "workspaces": []}
    again = nxs("linear", "disconnect", "AV", "--json")
    assert again.exit_code == 3
    assert orjson.loads(again.stdout)["code"] == "UNKNOWN_LINEAR_WORKSPACE"


def test_environment_key_counts_as_default_only_when_nothing_is_stored(monkeypatch) -> None:
    monkeypatch.setenv("LINEAR_API_KEY", AV)
    assert [c.label for c in connections.load()] == ["default"]
    assert orjson.loads(nxs("linear", "workspaces", "--json").stdout)["from_environment"] is True
    connections.connect("JL", JL)
    assert [(c.label, c.key) for c in connections.load()] == [("JL", JL)]


def test_nothing_connected_is_a_clear_refusal() -> None:
    out = run("linear_query", FakeLinear(), action="get_linear_teams")
    assert out["code"] == "LINEAR_NOT_CONNECTED"
    assert out["suggestion"] == (
        "run `nxs linear connect LABEL` (key on stdin) or set LINEAR_API_KEY"
    )


def test_two_organisations_need_a_label_and_never_use_another_key() -> None:
    connections.connect("AV", AV)
    connections.connect("JL", JL)
    fake = FakeLinear()
    missing = run("linear_query", fake, action="get_linear_teams")
    assert missing == {
        "success": True,
        "disambiguation_required": True,
        "available_workspaces": ["AV", "JL"],
        "message": "2 Linear workspaces are connected. Pass org with one of: AV, JL.",
        "suggestion": "pass org (alias linear_workspace) with one of: AV, JL",
    }
    unknown = run("linear_mutate", fake, action="create_linear_comment", issue_id="NC-1",
                  body="x", org="XX")  # fmt: skip
    assert unknown["disambiguation_required"] is True
    assert (
        unknown["message"] == "No Linear workspace is labelled 'XX'. Pass org with one of: AV, JL."
    )
    assert fake.requests == []  # nothing was sent, nothing written
    jl = run("linear_query", fake, action="get_linear_teams", linear_workspace="jl")
    assert jl["org"] == "JL"
    assert [t["key"] for t in jl["data"]["teams"]] == ["JL"]
    assert {r["authorization"] for r in fake.requests} == {JL}
    refused = run("linear_query", fake, action="get_linear_teams", search_filters={"x": 1})
    assert refused["code"] == "UNUSED_PARAMETER"  # a malformed call is refused, not disambiguated


def test_one_organisation_may_be_left_out_but_an_unknown_label_is_refused() -> None:
    connections.connect("AV", AV)
    fake = FakeLinear()
    unknown = run("linear_query", fake, action="get_linear_teams", org="nonsense")
    assert unknown == {
        "success": True,
        "disambiguation_required": True,
        "available_workspaces": ["AV"],
        "message": "No Linear workspace is labelled 'nonsense'. Pass org with one of: AV. "
        "Or leave org out: only one is connected.",
        "suggestion": "pass org with one of: AV; to add that organisation, "
        "`nxs linear connect nonsense` (key on stdin)",
    }
    assert fake.requests == []
    out = run("linear_query", fake, action="get_linear_teams")
    assert out["org"] == "AV" and out["data"]["total"] == 3


def test_seed_style_workspace_label_gets_a_pointer_to_org(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    connections.connect("AV", AV)
    connections.connect("JL", JL)
    out = run("linear_query", FakeLinear(), action="get_linear_teams", workspace="av", org="AV")
    assert out["code"] == "USE_ORG"
    assert out["suggestion"] == "pass org='AV' (alias linear_workspace) instead of workspace"


def test_connect_check_asks_linear_and_stores_nothing_on_failure(monkeypatch) -> None:
    monkeypatch.setenv("LINEAR_API_URL", serve_fake_linear())
    shared_fake().reset()
    bad = nxs("linear", "connect", "AV", "--check", "--json", input="lin_api_wrong")
    assert bad.exit_code == 5
    assert orjson.loads(bad.stdout)["code"] == "LINEAR_AUTH"
    assert "lin_api_wrong" not in bad.output
    assert not connections.path().exists()
    good = nxs("linear", "connect", "AV", "--check", "--json", input=AV)
    assert orjson.loads(good.stdout)["verified"] == {
        "organization": "Acme Ventures", "url_key": "acme", "user": "Alice Martin",
    }  # fmt: skip
    oauth = nxs("linear", "connect", "AVO", "--check", "--oauth", input="lin_oauth_av_test")
    assert oauth.exit_code == 0, oauth.output
    assert [r["authorization"] for r in shared_fake().requests][-1] == "Bearer lin_oauth_av_test"
    assert os.environ.get("LINEAR_API_KEY") is None


SECRET = "lin_api_SECRET0123456789abcdefSECRET0123456789"


@pytest.mark.parametrize(
    "args",
    [
        ["AV", SECRET],
        ["AV", "--check", SECRET],
        [SECRET],
        ["AV", f"--key={SECRET}"],
        ["AV", "--from-env", SECRET],
        ["AV", "--json", "--", SECRET],
    ],
)
def test_a_key_typed_as_an_argument_is_refused_never_echoed(args: list[str], monkeypatch) -> None:
    monkeypatch.setenv("LINEAR_API_URL", serve_fake_linear())
    shared_fake().reset()
    for as_json in ([], ["--json"]):
        done = nxs("linear", "connect", *args, *as_json, input=AV)
        assert done.exit_code == 2, done.output
        assert SECRET not in done.output and SECRET[8:20] not in done.output
        if as_json:
            assert orjson.loads(done.stdout)["code"] == "KEY_AS_ARGUMENT"
    assert not connections.path().exists()
    assert shared_fake().requests == []  # --check sent nothing either


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://[bad", "BAD_LINEAR_URL"),
        ("http://127.0.0.1:99999/graphql", "BAD_LINEAR_URL"),
        ("not a url", "BAD_LINEAR_URL"),
        ("http://10.0.0.5/graphql", "INSECURE_LINEAR_URL"),
    ],
)
def test_connect_api_url_is_checked_before_anything_is_stored(url: str, code: str) -> None:
    done = nxs("linear", "connect", "AV", "--api-url", url, "--json", input=AV)
    assert done.exit_code == 2, done.output
    assert orjson.loads(done.stdout)["code"] == code
    assert not connections.path().exists()
    ok = nxs("linear", "connect", "AV", "--api-url", "https://proxy.example/graphql", input=AV)
    assert ok.exit_code == 0
    assert connections.load()[0].api_url == "https://proxy.example/graphql"


@pytest.mark.parametrize(
    "args",
    [
        ["linear", "connect", f"AV {SECRET}"],
        ["linear", "connect", f"AV={SECRET}"],
        ["linear", "connect", f"AV:{SECRET}"],
        ["linear", "connect", "AV", "--api-url", SECRET],
        ["linear", "connect", "AV", "--from-env", f"X{SECRET}"],
        ["linear", "disconnect", SECRET],
        ["linear", "disconnect", "AV", SECRET],
        ["linear", "workspaces", SECRET],
        ["linear", "query", "get_linear_teams", SECRET],
        ["linear", "mutate", "create_linear_issue", SECRET],
        ["linear", "query", "get_linear_teams", "--org", SECRET],
        ["linear", "query", "get_linear_teams", "--org", SECRET[:30]],  # a label's length
    ],
)
def test_a_key_in_any_argument_shape_is_never_printed(args: list[str], monkeypatch) -> None:
    from tests.reliability.common import run_cli

    monkeypatch.setenv("LINEAR_API_KEY", AV)
    monkeypatch.setenv("LINEAR_API_URL", serve_fake_linear())
    for as_json in ([], ["--json"]):
        code, out, err = run_cli("nxs", [*args, *as_json])
        assert SECRET[8:20].encode() not in out + err, (args, out, err)
    assert not connections.path().exists()
