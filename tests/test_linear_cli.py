"""The `nxs linear` verbs as a person runs them: a subprocess against the fake over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.linear_fake import serve_fake_linear, shared_fake
from tests.linear_fake_data import uid

KEY = "lin_api_av_test"


def nxs(*args: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "LINEAR_API_URL": serve_fake_linear()}
    return subprocess.run(
        [sys.executable, "-c", "from nxs.cli import main; main()", *args],
        input=stdin, capture_output=True, cwd=cwd, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_connect_then_write_and_read_back_over_http(tmp_path: Path) -> None:
    fake = shared_fake()
    fake.reset()
    done = nxs("linear", "connect", "AV", "--check", cwd=tmp_path, stdin=KEY.encode())
    assert done.returncode == 0, done.stderr
    assert KEY.encode() not in done.stdout + done.stderr
    nc = uid("AV", "team", "NC")
    made = nxs("linear", "mutate", "create_linear_issue", "--title", "From the CLI",
               "--team-id", nc, "--json", cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert orjson.loads(made.stdout)["data"]["issue"]["identifier"] == "NC-106"
    found = nxs("linear", "query", "search_linear_issues", "--query", "from the cli", "--json",
                cwd=tmp_path)  # fmt: skip
    assert [i["identifier"] for i in orjson.loads(found.stdout)["data"]["issues"]] == ["NC-106"]
    assert {r["authorization"] for r in fake.requests} == {KEY}


def test_refusal_exit_code_and_envelope(tmp_path: Path) -> None:
    done = nxs("linear", "query", "search_linear_issues", "--query", "x",
               "--search-filters", '{"assignee": "bob"}', "--json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert orjson.loads(done.stdout)["code"] == "UNSUPPORTED_FILTER"
    bad = nxs("linear", "query", "delete_linear_issue", "--json", cwd=tmp_path)
    assert bad.returncode == 2
    assert orjson.loads(bad.stdout)["message"].startswith("action must be one of get_linear_teams")
