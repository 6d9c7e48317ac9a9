"""The dashboard's server without a browser: the API answers the tools' bytes, and the guard.

The browser tests are in tests/test_ui_browser.py; `seed` here builds the workspace both use.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxs.context import Context
from nxs.registry import operations
from nxs.render import render, timestamp

SCRIPT_BODY = '<script>window.__nxsPwned = 1</script><img src=x onerror="window.__nxsPwned = 2">'
SEED = (
    # (days ago, body, introduction, extra arguments)
    (
        45,
        "Dana Kim owns the billing service. The billing service uses PostgreSQL and Stripe.",
        "Dana Kim owns billing; it runs on PostgreSQL and Stripe",
        {"category": "ownership", "priority": "HIGH", "user_id": "dana"},
    ),
    (
        40,
        "Releases are tagged vX.Y.Z from main after CI passes; never tag a branch.",
        "Release tags: vX.Y.Z from main only",
        {"category": "conventions", "agent_id": "claude-code"},
    ),
    (
        20,
        "Marco Rossi works at Larkspur and leads the search team. Search uses LanceDB.",
        "Marco Rossi leads search at Larkspur (LanceDB)",
        {"category": "people", "user_id": "marco"},
    ),
    (
        12,
        "Use tomllib, not toml: the project targets Python 3.11 and avoids the extra dependency.",
        "Read TOML with tomllib (Python 3.11), not toml",
        {"category": "conventions", "priority": "HIGH", "agent_id": "claude-code"},
    ),
    (
        6,
        "The nightly export job depends on the billing service and writes to S3 at 02:00 UTC.",
        "Nightly export depends on billing, writes to S3 at 02:00 UTC",
        {
            "category": "operations",
            "agent_id": "cursor",
            "refs": ["jobs/export.py"],
            "scope": "item",
        },
    ),
    (
        3,
        "Flaky test: test_sync times out on CI when the cache is cold; rerun once before digging.",
        "test_sync is flaky on a cold CI cache: rerun once",
        {"category": "gotchas", "priority": "LOW", "layer": "TASK", "ttl_days": 14.0},
    ),
    (
        1,
        SCRIPT_BODY,
        "A memory whose body is HTML: <script> and <img onerror>",
        {"category": "gotchas", "user_id": "dana"},
    ),
)


def _ago(days: float) -> str:
    return timestamp(datetime.now(UTC) - timedelta(days=days))


def seed(root: Path) -> dict[str, str]:
    """Fill a fresh workspace through the operations; return the keys by a short name."""
    ops = {op.tool: op for op in operations(["memory"])}

    def run(tool: str, days: float, **kw: Any) -> Any:
        ctx = Context(now=_ago(days), actor="tester", workspace_arg=str(root))
        return ops[tool].handler(ctx, **kw)

    names = ("billing", "release", "search", "tomllib", "export", "flaky", "script")
    keys = {}
    for name, (days, body, intro, extra) in zip(names, SEED, strict=True):
        keys[name] = run("memory_add", days, body=body, introduction=intro, **extra)["memory"][
            "key"
        ]
    run("memory_update", 30, key=keys["release"], introduction="Release tags: vX.Y.Z from main")
    run("memory_feedback", 10, key=keys["tomllib"], signal="POSITIVE", comment="saved a dep")
    run("memory_classify", 8, key=keys["search"], refs=["docs/search.md"])
    run("memory_feedback", 2, key=keys["flaky"], signal="NEGATIVE")
    run("memory_close", 2, key=keys["release"])
    run("memory_search", 1, query="billing")
    run("graph_add", 1, name="nightly export", type="THING", description="The 02:00 UTC job.")
    for source, relation, target in (
        ("nightly export", "DEPENDS_ON", "billing service"),
        ("nightly export", "USES", "S3"),
        ("search team", "USES", "LanceDB"),
    ):
        run("graph_relate", 1, source=source, relation=relation, target=target)
    return keys


@pytest.fixture
def seeded(workspace: Path) -> dict[str, str]:
    return seed(workspace)


PORT = 8766
CSRF = "test-csrf-token"


def client(
    root: Path, *, host: str = "127.0.0.1", token: str | None = None, peer: str = "127.0.0.1"
) -> Any:
    """A Starlette test client on the guarded app, as a browser on ``peer`` would reach it."""
    from starlette.testclient import TestClient

    from nxs.ui.server import build_app

    app = build_app(str(root), host=host, port=PORT, token=token, csrf=CSRF)
    base = f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{PORT}"
    return TestClient(app, base_url=base, client=(peer, 50000), follow_redirects=False)


def post(http: Any, path: str, body: Any = None, **headers: str) -> Any:
    sent = {"content-type": "application/json", "x-nxs-csrf": CSRF, **headers}
    return http.post(path, content=orjson.dumps(body if body is not None else {}), headers=sent)


def answer(root: Path, tool: str, args: dict[str, Any]) -> bytes:
    """What the tool answers for these arguments, called straight through the table."""
    from nxs.ops import validate

    op = next(op for op in operations(["memory"]) if op.tool == tool)
    ctx = Context(now=timestamp(), actor="tester", workspace_arg=str(root))
    try:
        return render(op.handler(ctx, **validate(op, args)))
    except Exception as err:  # noqa: BLE001 - the envelope is the answer
        return render(err)


def test_the_api_answers_the_tools_bytes(workspace: Path, seeded: dict[str, str]) -> None:
    http = client(workspace)
    cases = [
        ("memory_list", {"status": "all", "page_size": 3, "page": 2}),
        ("memory_show", {"key": seeded["billing"]}),
        ("memory_history", {"key": seeded["release"]}),
        ("memory_search", {"query": "billing", "mode": "keyword"}),
        ("memory_knowledge", {"category": "conventions"}),
        ("graph_traverse", {"entity": "billing service", "hops": 1}),
        ("memory_entities", {}),
    ]
    for tool, args in cases:
        got = post(http, f"/api/call/{tool}", args)
        assert got.status_code == 200, got.text
        assert got.content == answer(workspace, tool, args), tool
        assert got.headers["content-type"] == "application/json"


def test_refusals_are_the_tools_envelopes_with_a_status(
    workspace: Path, seeded: dict[str, str]
) -> None:
    http = client(workspace)
    for tool, args, status in (
        ("memory_show", {"key": "ffffffffffff"}, 404),
        ("memory_purge", {"key": seeded["billing"]}, 409),
        ("memory_list", {"page_size": "many"}, 400),
        ("memory_feedback", {"key": seeded["billing"], "signal": "MAYBE"}, 400),
    ):
        got = post(http, f"/api/call/{tool}", args)
        assert got.status_code == status, (tool, got.text)
        assert got.content == answer(workspace, tool, args)
        assert got.json()["error"] is True


def test_a_write_through_the_api_is_recorded(workspace: Path, seeded: dict[str, str]) -> None:
    http = client(workspace)
    key = seeded["billing"]
    assert (
        post(http, "/api/call/memory_forget", {"key": key}).json()["memory"]["status"]
        == "forgotten"
    )
    assert post(http, "/api/call/memory_restore", {"key": key}).json()["memory"]["status"] == "open"
    events = post(http, "/api/call/memory_history", {"key": key}).json()["events"]
    assert [e["type"] for e in events[:2]] == ["RESTORED", "FORGOTTEN"]
    assert events[0]["actor"] == "tester"  # USER, as the MCP server would record it


def test_only_the_dashboards_tools_and_no_seam_parameters(
    workspace: Path, seeded: dict[str, str]
) -> None:
    http = client(workspace)
    for tool in (
        "memory_facts_update",
        "memory_recall",
        "graph_add",
        "linear_query",
        "ui_list",
        "nope",
    ):
        got = post(http, f"/api/call/{tool}", {})
        assert (got.status_code, got.json()["code"]) == (404, "UNKNOWN_TOOL"), tool
    for name in ("memory_list", "list_", "nope"):
        got = post(http, f"/api/view/{name}", {})
        assert (got.status_code, got.json()["code"]) == (404, "UNKNOWN_VIEW"), name
    for seam in ("workspace", "now", "actor"):
        got = post(http, "/api/call/memory_list", {seam: "/"})
        assert got.status_code == 400 and seam in got.json()["message"]
    assert post(http, "/api/call/memory_list", [1, 2]).status_code == 400
    bad = http.post(
        "/api/call/memory_list",
        content=b"{",
        headers={"content-type": "application/json", "x-nxs-csrf": CSRF},
    )
    assert bad.status_code == 400


def test_the_graph_view_lists_every_entity_and_relation(
    workspace: Path, seeded: dict[str, str]
) -> None:
    graph = post(client(workspace), "/api/view/graph").json()
    names = {e["name"] for e in graph["entities"]}
    assert {"Dana Kim", "billing service", "nightly export", "Marco Rossi"} <= names
    assert graph["shown"] == graph["total"] == len(graph["entities"])
    triples = {
        (r["source"]["name"], r["relation"], r["target"]["name"]) for r in graph["relations"]
    }
    assert ("nightly export", "DEPENDS_ON", "billing service") in triples
    assert ("Dana Kim", "OWNS", "billing service") in triples


def test_the_page_carries_its_csrf_token_and_a_strict_policy(workspace: Path) -> None:
    http = client(workspace)
    page = http.get("/")
    assert page.status_code == 200
    assert f'<meta name="nxs-csrf" content="{CSRF}">' in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert http.get("/app.js").headers["content-type"].startswith("text/javascript")
    assert http.get("/style.css").headers["content-type"].startswith("text/css")
    assert http.get("/nope").status_code == 404


REFUSED = [
    ({"x-nxs-csrf": ""}, 403, "CROSS_SITE"),
    ({"x-nxs-csrf": "guess"}, 403, "CROSS_SITE"),
    ({"sec-fetch-site": "cross-site"}, 403, "CROSS_SITE"),
    ({"sec-fetch-site": "same-site"}, 403, "CROSS_SITE"),  # another port of localhost
    ({"origin": "http://evil.example"}, 403, "CROSS_SITE"),
    ({"origin": "null"}, 403, "CROSS_SITE"),
    ({"content-type": "text/plain"}, 403, "CROSS_SITE"),
    ({"host": "evil.example"}, 421, "BAD_HOST"),  # DNS rebinding
    ({"host": f"evil.example:{PORT}"}, 421, "BAD_HOST"),
]


def test_cross_site_and_rebound_requests_are_refused(
    workspace: Path, seeded: dict[str, str]
) -> None:
    http = client(workspace)
    key = seeded["billing"]
    for headers, status, code in REFUSED:
        got = post(http, "/api/call/memory_forget", {"key": key}, **headers)
        assert (got.status_code, got.json()["code"]) == (status, code), headers
    assert post(http, "/api/call/memory_show", {"key": key}).json()["memory"]["status"] == "open"
    assert [
        e["type"] for e in post(http, "/api/call/memory_history", {"key": key}).json()["events"]
    ] == ["CREATED"]


def test_same_origin_requests_pass(workspace: Path, seeded: dict[str, str]) -> None:
    http = client(workspace)
    for headers in (
        {"sec-fetch-site": "same-origin", "origin": f"http://127.0.0.1:{PORT}"},
        {"host": f"localhost:{PORT}", "origin": f"http://localhost:{PORT}"},
        {},  # curl and scripts send neither
    ):
        assert post(http, "/api/call/memory_list", {}, **headers).status_code == 200, headers
    assert http.get("/api/call/memory_list").status_code == 405
    assert http.put("/api/call/memory_list").status_code == 405


def test_user_facts_only_for_a_local_browser(workspace: Path) -> None:
    from nxm.session import facts

    facts.update({"editor": "helix"})
    local = client(workspace)
    assert post(local, "/api/info").json()["facts"] is True
    assert post(local, "/api/call/memory_facts").json()["facts"] == {"editor": "helix"}
    remote = client(workspace, host="0.0.0.0", token="s3cret", peer="10.1.2.3")
    auth = {"authorization": "Bearer s3cret"}
    info = post(remote, "/api/info", **auth).json()
    assert info["facts"] is False and "memory_facts" not in info["tools"]
    got = post(remote, "/api/call/memory_facts", **auth)
    assert (got.status_code, got.json()["code"]) == (403, "LOCAL_ONLY")
    assert "helix" not in got.text


def test_a_token_guards_every_request(workspace: Path) -> None:
    http = client(workspace, token="s3cret")
    assert http.get("/").status_code == 401
    assert http.get("/app.js").status_code == 401
    assert post(http, "/api/call/memory_list").status_code == 401
    assert post(http, "/api/call/memory_list", authorization="Bearer nope").status_code == 401
    assert http.get("/?token=nope").status_code == 401
    assert post(http, "/api/call/memory_list", authorization="Bearer s3cret").status_code == 200
    first = http.get("/?token=s3cret")  # the printed URL: sets the cookie, drops the token
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert (
        f"nxs_ui_{PORT}=s3cret" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    )
    http.cookies.set(f"nxs_ui_{PORT}", "s3cret")
    assert http.get("/").status_code == 200
    assert post(http, "/api/call/memory_list").status_code == 200


def test_beyond_loopback_needs_a_token(workspace: Path) -> None:
    from nxs.errors import ValidationError
    from nxs.ui.server import build_app

    with pytest.raises(ValidationError, match="without a token"):
        build_app(str(workspace), host="0.0.0.0", port=PORT)
    done = subprocess.run(
        [sys.executable, "-m", "nxs", "ui", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert b"without a token" in done.stderr and not done.stdout
    # With a token, any Host name is answered (the token, not the name, is the guard).
    remote = client(workspace, host="0.0.0.0", token="t")
    got = post(
        remote,
        "/api/call/memory_list",
        authorization="Bearer t",
        host="nas.local:8766",
        origin="http://nas.local:8766",
    )
    assert got.status_code == 200


def test_nxs_ui_needs_a_memory_workspace(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nxs", "ui", "--port", "0", "--workspace", str(tmp_path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3 and b"workspace" in done.stderr and not done.stdout


def test_nxs_ui_prints_its_url_and_serves(workspace: Path) -> None:
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "nxs", "ui", "--port", "0", "--workspace", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline().decode()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        # The URL is printed as the server starts; under load it may take a moment to accept.
        for _ in range(60):
            try:
                page = httpx.get(url.group(0), timeout=30)
                break
            except httpx.ConnectError:
                time.sleep(0.5)
        assert page.status_code == 200 and 'name="nxs-csrf"' in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_the_page_never_parses_data_as_html_and_loads_nothing_from_elsewhere() -> None:
    from importlib import resources

    from nxs.ui.server import SCRIPTS

    files = resources.files("nxs.ui")
    shipped = {p.name for p in files.iterdir() if p.name.endswith(".js")}
    assert shipped == set(SCRIPTS)  # every script is served, and none is left out
    for name in SCRIPTS:
        script = (files / name).read_text(encoding="utf-8")
        for sink in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "DOMParser",
            "createContextualFragment",
            'setAttribute("style"',
        ):
            assert sink not in script, (name, sink)
    for name in ("index.html", *SCRIPTS, "style.css"):
        text = (files / name).read_text(encoding="utf-8")
        urls = set(re.findall(r"https?://[^\s\"'`)]+", text)) - {"http://www.w3.org/2000/svg"}
        assert not urls, (name, urls)


def test_the_assets_ship_in_the_package() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[1]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["*"]
    from nxs.ui.server import SCRIPTS

    for name in ("index.html", *SCRIPTS, "style.css"):
        assert any(Path(name).match(p) for p in patterns), name
        assert (root / "nxs" / "ui" / name).is_file()


def test_the_cli_stays_light() -> None:
    code = (
        "import sys; import nxs.cli; nxs.cli.app; "
        "print(sorted(m for m in ('starlette', 'uvicorn', 'nxs.ui.server') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, timeout=60)
    assert done.stdout.strip() == b"[]"
