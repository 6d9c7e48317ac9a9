"""The dashboard in headless Chromium: browsing, search, the lifecycle actions, the guard.

The harness (one `nxs ui` and one browser for the session, the CDP client) is
tests/ui_harness.py; the curation paths (add, edit, bulk, export, graph at scale, figures,
live refresh, narrow and dark) are in tests/test_ui_curate.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import make_workspace
from tests.test_ui import SCRIPT_BODY
from tests.ui_harness import Browser, api, mouse_click, serve_ui, shoot


def test_memory_list_filters_and_pages(browser: Browser, shots: Path) -> None:
    browser.view("#/memories")
    rows = browser.js("document.querySelectorAll('#memory-table tbody tr').length")
    assert rows == 6  # seven seeded, one closed
    shoot(browser, shots, "memories")
    browser.view("#/memories?priority=HIGH")
    assert browser.js("document.querySelectorAll('#memory-table tbody tr').length") == 2
    browser.view("#/memories?status=all&page_size=5&page=2")
    assert "Page 2 of 2 · 7 memories" in browser.text("#pager")
    browser.view("#/memories?status=closed")
    assert "Release tags" in browser.text("#memory-table")
    browser.view("#/memories?agent_id=claude-code&status=all")
    assert browser.js("document.querySelectorAll('#memory-table tbody tr').length") == 2


def test_search_finds_a_memory_and_opening_it_shows_its_history(
    browser: Browser, dashboard: dict[str, Any], shots: Path
) -> None:
    key = dashboard["keys"]["billing"]
    browser.view("#/search")
    browser.js(
        "document.querySelector('#search-input').value = 'PostgreSQL Stripe';"
        "document.querySelector('input[name=mode][value=keyword]').checked = true;"
        "document.querySelector('#search-form').requestSubmit()"
    )
    browser.wait(f"document.querySelector('#search-results li[data-key=\"{key}\"]')", "a hit")
    snippet = browser.text(f'#search-results li[data-key="{key}"] .snippet')
    assert "Dana Kim owns the billing service" in snippet  # the body's words, not only the line
    assert browser.js("location.hash").startswith("#/search?q=PostgreSQL")
    for mode in ("semantic", "hybrid"):
        browser.view(f"#/search?q=who+owns+billing&mode={mode}")
        assert browser.js("document.querySelectorAll('#search-results li').length") >= 1
    shoot(browser, shots, "search")
    browser.view("#/search?q=PostgreSQL+Stripe&mode=keyword")
    browser.click(f'#search-results li[data-key="{key}"] a')
    browser.wait(
        "document.querySelector('#history') && location.hash.startsWith('#/memory/')", "the memory"
    )
    assert browser.text("#memory-key") == key
    assert "Dana Kim owns the billing service" in browser.text("#memory-body")
    types = browser.js("[...document.querySelectorAll('#history li')].map(li => li.dataset.type)")
    assert types == ["CREATED"]
    browser.view(f"#/memory/{dashboard['keys']['release']}")
    types = browser.js("[...document.querySelectorAll('#history li')].map(li => li.dataset.type)")
    assert types == ["CLOSED", "UPDATED", "CREATED"]  # newest first
    browser.view(f"#/memory/{dashboard['keys']['tomllib']}")
    assert "saved a dep" in browser.text("#history")


def test_forget_then_restore_round_trips(browser: Browser, dashboard: dict[str, Any]) -> None:
    key = dashboard["keys"]["search"]
    browser.view(f"#/memory/{key}")
    browser.click("#act-forget")
    browser.wait("document.querySelector('#act-restore')", "the forgotten state")
    assert api(browser, "memory_show", {"key": key})["memory"]["status"] == "forgotten"
    assert browser.js("document.querySelector('#history li').dataset.type") == "FORGOTTEN"
    browser.click("#act-restore")
    browser.wait("document.querySelector('#act-forget')", "the restored state")
    assert api(browser, "memory_show", {"key": key})["memory"]["status"] == "open"
    types = browser.js("[...document.querySelectorAll('#history li')].map(li => li.dataset.type)")
    assert types == ["RESTORED", "FORGOTTEN", "CLASSIFIED", "CREATED"]


def test_purge_needs_confirmation(browser: Browser, dashboard: dict[str, Any]) -> None:
    key = dashboard["keys"]["flaky"]
    browser.view(f"#/memory/{key}")
    assert not browser.js("document.querySelector('#act-purge')")  # only forgotten ones
    browser.click("#act-forget")
    browser.wait("document.querySelector('#act-purge')", "the purge button")
    browser.click("#act-purge")
    assert browser.js("!document.querySelector('#purge-box').hidden")
    assert browser.js("document.querySelector('#purge-confirm').disabled")
    assert api(browser, "memory_show", {"key": key})["memory"]["status"] == "forgotten"
    browser.type("#purge-input", "nope")
    assert browser.js("document.querySelector('#purge-confirm').disabled")
    browser.type("#purge-input", key[:6])
    assert not browser.js("document.querySelector('#purge-confirm').disabled")
    browser.click("#purge-confirm")
    browser.wait("location.hash.startsWith('#/memories')", "the list after purging")
    assert api(browser, "memory_show", {"key": key})["kind"] == "not_found"


def test_graph_draws_known_entities_and_explains_one(
    browser: Browser, dashboard: dict[str, Any]
) -> None:
    browser.view("#/graph")
    names = set(
        browser.js("[...document.querySelectorAll('#graph-svg g.node')].map(n => n.dataset.name)")
    )
    assert {"Dana Kim", "billing service", "Marco Rossi", "Larkspur", "nightly export"} <= names
    assert browser.js("document.querySelectorAll('#graph-svg line.edge').length") >= 5
    mouse_click(browser, '#graph-svg g.node[data-name="billing service"] circle')
    browser.wait("document.querySelector('#entity-sources li')", "the entity panel")
    assert browser.text("#entity-name") == "billing service"
    relations = browser.text("#entity-relations")
    assert "OWNS" in relations and "Dana Kim" in relations and "DEPENDS_ON" in relations
    sources = browser.js("[...document.querySelectorAll('#entity-sources a')].map(a => a.hash)")
    assert f"#/memory/{dashboard['keys']['billing']}" in sources


def test_a_script_body_renders_as_text(browser: Browser, dashboard: dict[str, Any]) -> None:
    browser.view(f"#/memory/{dashboard['keys']['script']}")
    assert browser.text("#memory-body") == SCRIPT_BODY
    assert browser.js("document.querySelectorAll('#view script, #view img').length") == 0
    browser.view("#/search?q=script+window&mode=keyword")
    browser.view("#/knowledge")
    assert dashboard["keys"]["script"][:8] in browser.text("#knowledge-doc")  # listed, inert
    assert browser.js("document.querySelectorAll('#view script, #view img').length") == 0
    assert browser.js("typeof window.__nxsPwned") == "undefined"


def test_knowledge_and_figures(browser: Browser, shots: Path) -> None:
    browser.view("#/knowledge")
    headings = browser.js(
        "[...document.querySelectorAll('#knowledge-doc h2')].map(h => h.textContent)"
    )
    assert "Ownership" in headings and "Conventions" in headings
    shoot(browser, shots, "knowledge")
    browser.view("#/figures?days=30")
    assert browser.js("document.querySelectorAll('#chart-memories rect.bar').length") >= 18
    assert browser.text("#totals")


def test_user_facts_load_only_when_asked(browser: Browser) -> None:
    browser.view("#/memories")
    assert "helix" not in browser.js("document.body.textContent")
    browser.click("#facts-button")
    browser.wait("document.querySelector('#facts-body')", "the facts")
    assert '"editor": "helix"' in browser.text("#facts-body")
    browser.click("#facts-button")
    assert "helix" not in browser.js("document.body.textContent")


def test_a_cross_site_post_is_refused(browser: Browser, dashboard: dict[str, Any]) -> None:
    from urllib.parse import quote

    key = dashboard["keys"]["billing"]
    target = dashboard["url"] + "api/call/memory_forget"
    # A classic CSRF: another site's page posts a form (text/plain, so no preflight) to the
    # dashboard. The browser sends it; the server refuses it, and the page shows the refusal.
    attack = (
        f'<form method="POST" action="{target}" enctype="text/plain">'
        f'<input name=\'{{"key": "{key}", "x": "\' value=\'"}}\'></form>'
        "<script>document.forms[0].submit()</script>"
    )
    browser.send("Page.navigate", session=True, url="data:text/html," + quote(attack))
    browser.wait("document.body && document.body.textContent.includes('CROSS_SITE')", "refusal")
    # From another origin of the same server (localhost vs 127.0.0.1), a fetch that would
    # carry the header dies at the preflight, which gets no CORS answer.
    browser.open(dashboard["url"].replace("127.0.0.1", "localhost"))
    outcome = browser.js(
        f"fetch({json.dumps(target)}, {{method: 'POST', headers: {{'content-type': "
        "'application/json', 'x-nxs-csrf': document.querySelector('meta[name=nxs-csrf]').content},"
        f" body: JSON.stringify({{key: '{key}'}})}}).then(r => 'status ' + r.status, e => 'blocked')"
    )
    assert outcome == "blocked"
    browser.open(dashboard["url"])
    assert api(browser, "memory_show", {"key": key})["memory"]["status"] == "open"


def test_an_empty_page_says_why_and_offers_the_way_on(
    browser: Browser, dashboard: dict[str, Any], tmp_path: Path, shots: Path
) -> None:
    browser.view("#/memories?category=no-such-category")
    assert "No memories match these filters" in browser.text("#empty-list")
    assert browser.js("document.querySelector('#empty-list a').hash") == "#/memories"
    assert not browser.js("document.querySelector('#pager')")  # no Previous/Next beside 0
    browser.view("#/memory/ffff0000")
    assert "no memory with key 'ffff0000'" in browser.text("#not-found")
    assert browser.js("document.querySelector('#not-found a').hash") == "#/memories"
    # A workspace with nothing in it yet invites a first memory, or an agent to keep them.
    empty = make_workspace(tmp_path / "empty")
    with serve_ui(empty, dashboard["env"]) as url:
        browser.open(url)
        text = browser.text("#empty-list")
        assert "No memories yet" in text and "nxs mcp install" in text
        shoot(browser, shots, "empty")
        assert "match these filters" not in text and not browser.js(
            "document.querySelector('#pager')"
        )
        browser.click("#add-first")
        assert browser.js("!document.querySelector('#add-form').hidden")
    browser.open(dashboard["url"])


def test_no_page_raised_an_error(browser: Browser) -> None:
    browser.view("#/memories")  # collects the events still in flight
    errors = [
        e["params"]
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert not errors
