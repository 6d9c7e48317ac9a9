"""A single user's store answers `profile` and `entities` (user_id defaults to the actor), and
ref filters match path prefixes, on list and on every search mode."""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from nxm.cli import app
from nxm.record import ref_matches
from nxs.context import Context

NOW = "2026-05-29T10:00:00.000Z"


def nxm(*args: str, env: dict[str, str] | None = None) -> dict:
    result = CliRunner().invoke(app, [*args, "--json", "--now", NOW], env=env)
    assert result.exit_code == 0, result.stdout
    return orjson.loads(result.stdout_bytes)


@pytest.mark.usefixtures("workspace")
def test_user_id_defaults_to_the_actor_so_profile_and_entities_answer() -> None:
    env = {"NXM_ACTOR": "alice"}
    made = nxm("add", "Deploys need two approvals.", "--introduction", "Two approvals", env=env)
    assert made["memory"]["user_id"] == made["memory"]["actor"] == "alice"
    given = nxm("add", "Bob's note.", "--introduction", "Bob", "--user-id", "bob", env=env)
    assert given["memory"]["user_id"] == "bob"  # an explicit one wins
    profile = nxm("profile", "alice")
    assert profile["summary"] and "Two approvals" in orjson.dumps(profile).decode()
    users = orjson.dumps(nxm("entities")).decode()
    assert "alice" in users and "bob" in users


def test_ref_filters_match_path_prefixes() -> None:
    assert ref_matches("tests/integration/", "tests/integration")
    assert ref_matches("tests/integration/test_api.py", "tests/integration")
    assert ref_matches("tests/integration", "tests/integration/")
    assert ref_matches("NC-1", "NC-1")
    assert not ref_matches("NC-10", "NC-1")
    assert not ref_matches("tests/integration_old", "tests/integration")
    assert not ref_matches("anything", "/")


def test_list_and_search_take_a_path_and_what_lies_under_it(ctx: Context) -> None:
    svc = ctx.memory
    for body, refs in (
        ("Integration tests need the docker daemon running.", ["tests/integration/"]),
        ("The API integration test seeds its own tenant.", ["tests/integration/test_api.py"]),
        ("Old integration fixtures are kept for docker replays.", ["tests/integration_old"]),
        ("Ticket NC-10 tracks the docker flake.", ["NC-10"]),
    ):
        svc.add(body=body, introduction=body[:40], refs=refs, now=NOW, actor="t")
    listed = svc.list(ref="tests/integration")["memories"]
    assert sorted(m["refs"][0] for m in listed) == [
        "tests/integration/",
        "tests/integration/test_api.py",
    ]
    assert [m["refs"] for m in svc.list(ref="NC-1")["memories"]] == []
    for mode in ("keyword", "hybrid", "semantic"):
        found = svc.search(query="docker integration", mode=mode, ref="tests/integration", now=NOW)
        refs = sorted(m["refs"][0] for m in found["results"])
        assert refs and set(refs) <= {"tests/integration/", "tests/integration/test_api.py"}, mode
    nothing = svc.search(query="docker", mode="keyword", ref="src/nowhere", now=NOW)
    assert nothing["results"] == []
