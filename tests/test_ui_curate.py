"""Curating memory in the dashboard, in headless Chromium (the harness: tests/ui_harness.py).

Every write path goes through the page as a person would use it, and each has a refused case
that must leave every committed file as it was (`committed`). These run after
tests/test_ui_browser.py on the same dashboard, so they make the memories they need.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import committed
from tests.ui_harness import WAIT, Browser, api, as_teammate, set_viewport, shoot


def choose(browser: Browser, selector: str, value: str) -> None:
    """Pick a value in a select (or set a checkbox) and fire its change event."""
    browser.js(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
        f"if (e.type === 'checkbox') e.checked = {json.dumps(value)} === 'on'; "
        f"else e.value = {json.dumps(value)}; e.dispatchEvent(new Event('change')); }})()"
    )


def rows(browser: Browser) -> list[str]:
    return browser.js(
        "[...document.querySelectorAll('#memory-table tbody tr')].map(r => r.dataset.key)"
    )


def refusal(browser: Browser, form: str) -> str:
    browser.wait(f"document.querySelector('{form} .form-error')", f"the refusal in {form}")
    return browser.text(f"{form} .form-error .message")


def wait_text(browser: Browser, selector: str, contains: str) -> None:
    browser.wait(
        f"((document.querySelector({json.dumps(selector)}) || {{}}).textContent || '')"
        f".includes({json.dumps(contains)})",
        f"{selector} to say {contains!r}",
    )


def flash_text(browser: Browser, contains: str) -> str:
    browser.wait(
        f"!document.getElementById('flash').hidden && "
        f"document.getElementById('flash').textContent.includes({json.dumps(contains)})",
        f"a notice saying {contains!r}",
    )
    return browser.text("#flash")


MARKDOWN_BODY = """# Deploying

Run **make deploy** from `main`, *never* from a branch; see [the runbook](https://runbook.example/deploy)
and https://ci.example/jobs?id=7.

- never [click this](javascript:window.__nxsPwned=5)
- raw HTML stays text: <img src=x onerror="window.__nxsPwned=3"> <a href="javascript:window.__nxsPwned=4">x</a>
- [a data link](data:text/html,hi) is not a link either

```sh
make deploy ENV=prod <script>window.__nxsPwned=6</script>
```

> Billing is owned elsewhere: {billing}
"""


def test_adding_a_memory_refuses_inline_and_writes_nothing(
    browser: Browser, dashboard: dict[str, Any], shots: Path
) -> None:
    root = dashboard["root"]
    browser.view("#/memories")
    browser.click("#add-open")
    assert browser.js("!document.querySelector('#add-form').hidden")
    body = "Deploys go out from the deploy branch after the canary has run for an hour."
    browser.type("#add-body", body)
    before = committed(root)
    # No introduction: the service's own refusal, shown in the form, on the field it names.
    browser.click("#add-submit")
    message = refusal(browser, "#add-form")
    expected = api(browser, "memory_add", {"body": body, "introduction": "", "scope": "project",
                                           "priority": "MEDIUM", "layer": "PERMANENT"})  # fmt: skip
    assert expected["error"] is True and message == expected["message"]
    assert message == "introduction must not be empty"
    assert (
        browser.js("document.querySelector('#add-introduction').getAttribute('aria-invalid')")
        == "true"
    )
    assert committed(root) == before
    # Scope item without the item: refused too, and the form keeps what was typed.
    browser.type("#add-introduction", "Deploys wait an hour of canary")
    choose(browser, "#add-scope", "item")
    browser.click("#add-submit")
    wait_text(browser, "#add-form .form-error .message", "refs")
    assert browser.text("#add-form .form-error .message") == "scope 'item' needs the item in refs"
    assert browser.js("document.querySelector('#add-body').value") == body
    assert committed(root) == before
    shoot(browser, shots, "add")
    # Given the item, it is added and the page opens it.
    browser.type("#add-refs", "deploy/canary.yml, NC-7")
    browser.type("#add-category", "operations")
    browser.click("#add-submit")
    browser.wait(
        "location.hash.startsWith('#/memory/') && document.querySelector('#history')",
        "the new memory",
    )
    key = browser.text("#memory-key")
    shown = api(browser, "memory_show", {"key": key})["memory"]
    assert (shown["body"], shown["scope"], shown["refs"]) == (
        body,
        "item",
        ["deploy/canary.yml", "NC-7"],
    )
    assert shown["actor"] == "tester"
    assert f".nxs/memories/{key}.md" in committed(root)
    refs = browser.js("[...document.querySelectorAll('#memory-refs a')].map(a => a.hash)")
    assert refs == [
        "#/memories?ref=deploy%2Fcanary.yml&status=all",
        "#/memories?ref=NC-7&status=all",
    ]


def test_a_similar_memory_added_here_is_named_with_the_supersede_one_click_away(
    browser: Browser, dashboard: dict[str, Any]
) -> None:
    """The CLI's similar-memory note in the dashboard, and its advice followed from the notice:
    the old memory is closed and linked to the new one, nothing else is written."""
    old_body = "Dana Kim owns the billing service and its on-call rota."
    old = api(browser, "memory_add", {"body": old_body, "introduction": "Dana owns billing"})
    browser.view("#/memories")
    browser.click("#add-open")
    browser.type("#add-body", "Priya Raman owns the billing service and its on-call rota now.")
    browser.type("#add-introduction", "Priya owns billing")
    browser.click("#add-submit")
    key = old["memory"]["key"]
    text = flash_text(browser, key[:8])
    assert "Dana owns billing" in text and f"It replaces {key[:8]}" in text
    browser.wait(
        "location.hash.startsWith('#/memory/') && document.querySelector('#history')",
        "the new memory",
    )
    new = browser.text("#memory-key")
    browser.click("#flash button")
    flash_text(browser, f"{key[:8]} is closed, replaced by this one.")
    closed = api(browser, "memory_show", {"key": key})["memory"]
    assert closed["status"] == "closed" and closed["events"][-1]["data"]["superseded_by"] == new
    linked = api(browser, "memory_show", {"key": new})["memory"]["events"]
    assert [e["type"] for e in linked] == ["CREATED", "LINKED"]


def test_editing_text_and_classification_refuses_inline(
    browser: Browser, dashboard: dict[str, Any]
) -> None:
    root = dashboard["root"]
    key = dashboard["keys"]["export"]
    other = api(browser, "memory_show", {"key": dashboard["keys"]["tomllib"]})["memory"]["body"]
    browser.view(f"#/memory/{key}")
    browser.click("#act-edit")
    assert browser.js("!document.querySelector('#edit-form').hidden")
    before = committed(root)
    # An empty introduction, then another memory's body: both refused, nothing written.
    browser.type("#edit-introduction", "  ")
    browser.click("#edit-save")
    assert refusal(browser, "#edit-form") == "introduction must not be empty"
    browser.type("#edit-introduction", "Nightly export needs billing; S3 at 02:00 UTC")
    browser.type("#edit-body", other)
    browser.click("#edit-save")
    wait_text(browser, "#edit-form .form-error .message", "already has that body")
    assert committed(root) == before
    # A real edit: saved, and the history says so.
    new_body = (
        "The nightly export job depends on the billing service.\nIt writes to S3 at 02:00 UTC."
    )
    browser.type("#edit-body", new_body)
    browser.click("#edit-save")
    browser.wait("document.querySelector('#history li').dataset.type === 'UPDATED'", "the update")
    assert api(browser, "memory_show", {"key": key})["memory"]["body"] == new_body
    diffs = browser.js(
        "[...document.querySelectorAll('#history li')[0].querySelectorAll('.change')].map(c => c.dataset.field)"
    )
    assert diffs == ["body", "introduction"]  # the edit kept what it replaced: a diff of each
    assert browser.text("#memory-title") == "Nightly export needs billing; S3 at 02:00 UTC"
    # Classification: an item scope with no refs is refused; a new category is filed.
    browser.js("document.querySelector('#classify-panel').open = true")
    before = committed(root)
    browser.type("#classify-refs", "")
    browser.click("#classify-save")
    assert refusal(browser, "#classify-form") == "scope 'item' needs the item in refs"
    assert committed(root) == before
    browser.type("#classify-refs", "jobs/export.py")
    browser.type("#classify-category", "jobs")
    browser.click("#classify-save")
    browser.wait(
        "document.querySelector('#history li').dataset.type === 'CLASSIFIED'", "the classification"
    )
    assert api(browser, "memory_show", {"key": key})["memory"]["category"] == "jobs"


def test_bulk_actions_and_one_confirmation_for_purge(
    browser: Browser, dashboard: dict[str, Any], shots: Path
) -> None:
    root = dashboard["root"]
    keys = [
        api(browser, "memory_add", {"body": f"Bulk memory {i}: the queue drains in batches of {i * 100}.",
                                    "introduction": f"Queue batch size {i * 100}", "category": "bulk"})["memory"]["key"]
        for i in (1, 2, 3)
    ]  # fmt: skip
    browser.view("#/memories?category=bulk")
    assert sorted(rows(browser)) == sorted(keys)
    assert browser.js("document.querySelector('#bulk').hidden")
    browser.click("#select-page")
    assert browser.text("#bulk-count") == "3 selected"
    browser.click("#bulk-close")
    flash_text(browser, "Closed 3 memories.")
    assert {api(browser, "memory_show", {"key": k})["memory"]["status"] for k in keys} == {"closed"}
    # Restore applies to forgotten memories only: each is refused, and nothing is written.
    before = committed(root)
    browser.click("#bulk-restore")
    assert "3 refused" in flash_text(browser, "refused")
    assert committed(root) == before
    browser.type("#bulk-category", "bulk-filed")
    browser.click("#bulk-classify-go")
    flash_text(browser, "Classified 3 memories.")
    browser.click("#bulk-forget")
    flash_text(browser, "Forgot 3 memories.")
    api(browser, "memory_restore", {"key": keys[0]})  # another hand restores one meanwhile
    browser.view("#/memories?category=bulk-filed&status=all")
    assert sorted(rows(browser)) == sorted(keys) and browser.text("#bulk-count") == "3 selected"
    # One confirmation, stating how many go; it wants that number typed.
    browser.click("#bulk-purge")
    text = browser.text("#bulk-purge-text")
    assert "Purge 2 forgotten memories for good?" in text
    assert "1 selected memory is not forgotten" in text
    assert browser.text("#bulk-purge-confirm") == "Purge 2 memories"
    assert browser.js("document.querySelector('#bulk-purge-confirm').disabled")
    shoot(browser, shots, "bulk")
    browser.type("#bulk-purge-input", "3")
    assert browser.js("document.querySelector('#bulk-purge-confirm').disabled")
    before = committed(root)
    browser.click("#bulk-purge-cancel")
    assert (
        browser.js("document.querySelector('#bulk-purge-box').hidden") and committed(root) == before
    )
    browser.click("#bulk-purge")
    browser.type("#bulk-purge-input", "2")
    browser.click("#bulk-purge-confirm")
    flash_text(browser, "Purged 2 memories.")
    assert [api(browser, "memory_show", {"key": k}).get("kind") for k in keys[1:]] == [
        "not_found"
    ] * 2
    assert api(browser, "memory_show", {"key": keys[0]})["memory"]["status"] == "closed"
    assert f".nxs/memories/{keys[1]}.md" not in committed(root)
    browser.click("#bulk-clear")
    assert browser.js("document.querySelector('#bulk').hidden")


def test_sorting_and_exporting_the_filter(
    browser: Browser, dashboard: dict[str, Any], tmp_path: Path
) -> None:
    every = api(browser, "memory_list", {"status": "all", "page_size": 200})["memories"]
    # Sorting is stable over reading order (what memory_list returns), either way.
    by_created = [m["key"] for m in sorted(every, key=lambda m: m["created"])]
    newest = [m["key"] for m in sorted(every, key=lambda m: m["created"], reverse=True)]
    browser.view("#/memories?status=all&page_size=100&sort=created&order=asc")
    assert rows(browser) == by_created
    browser.click("#sort-order")
    browser.wait("location.hash.includes('order=desc')", "the order flipped")
    browser.view(browser.js("location.hash"))
    assert rows(browser) == newest
    choose(browser, "#sort", "priority")
    browser.wait("location.hash.includes('sort=priority')", "the priority sort")
    browser.view(browser.js("location.hash"))
    ranks = [{"HIGH": 0, "MEDIUM": 1, "LOW": 2}[m] for m in browser.js(
        "[...document.querySelectorAll('#memory-table tbody .c-priority')].map(td => td.textContent)")]  # fmt: skip
    assert ranks == sorted(ranks) and ranks[0] == 0
    # Export: the file the browser saves is the bytes `nxm export` writes for the same set.
    browser.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(tmp_path))
    browser.view("#/memories?status=all")
    browser.click("#export")
    deadline = time.monotonic() + WAIT
    while not (files := [p for p in tmp_path.glob("memories-*.jsonl") if p.stat().st_size]):
        assert time.monotonic() < deadline, "no export was downloaded"
        time.sleep(0.05)
    time.sleep(0.2)  # the download is written in one go; let it finish
    done = subprocess.run(
        [sys.executable, "-c", "from nxm.cli import main; main()", "export", "--status", "all",
         "--workspace", str(dashboard["root"])],
        capture_output=True, check=True, timeout=120, env=dashboard["env"],
    )  # fmt: skip
    assert files[0].read_bytes() == done.stdout and done.stdout.count(b"\n") == len(every)
    # A narrower filter exports only what it matches.
    got = browser.js(
        "fetch('/api/view/export', {method: 'POST', headers: {'content-type': 'application/json', "
        "'x-nxs-csrf': document.querySelector('meta[name=nxs-csrf]').content}, "
        "body: JSON.stringify({category: 'conventions', status: 'all'})}).then(r => r.json())"
    )
    lines = [orjson.loads(x) for x in got["jsonl"].splitlines()]
    assert got["count"] == len(lines) == 2 and {x["category"] for x in lines} == {"conventions"}


def test_markdown_is_drawn_safely_with_links(browser: Browser, dashboard: dict[str, Any]) -> None:
    billing = dashboard["keys"]["billing"]
    body = MARKDOWN_BODY.format(billing=billing)
    key = api(browser, "memory_add", {"body": body, "introduction": "Deploy with make deploy, from main",
                                      "category": "operations", "refs": ["https://runbook.example/deploy", "javascript:alert(1)"],
                                      "scope": "item"})["memory"]["key"]  # fmt: skip
    dashboard["keys"]["markdown"] = key
    browser.view(f"#/memory/{key}")
    md = "#memory-rendered"
    assert browser.text(f"{md} h2") == "Deploying"
    assert browser.text(f"{md} strong") == "make deploy" and browser.text(f"{md} em") == "never"
    links = browser.js(
        f"[...document.querySelectorAll('{md} a')].map(a => [a.getAttribute('href'), a.textContent])"
    )
    assert ["https://runbook.example/deploy", "the runbook"] in links
    assert ["https://ci.example/jobs?id=7", "https://ci.example/jobs?id=7"] in links
    assert [f"#/memory/{billing}", billing] in links
    assert all(href.startswith(("https://", "#/")) for href, _ in links), links
    text = browser.text(md)
    assert "[click this](javascript:window.__nxsPwned=5)" in text
    assert '<img src=x onerror="window.__nxsPwned=3">' in text
    assert "<script>window.__nxsPwned=6</script>" in browser.text(f"{md} pre.code")
    assert (
        browser.js("document.querySelectorAll('#view script, #view img, #view iframe').length") == 0
    )
    refs = browser.js(
        "[...document.querySelectorAll('#memory-refs a')].map(a => a.getAttribute('href'))"
    )
    assert refs == [
        "https://runbook.example/deploy",
        "#/memories?ref=javascript%3Aalert%281%29&status=all",
    ]
    browser.click("#body-source")
    assert browser.text("#memory-body") == body.strip("\n") and browser.js(
        "document.querySelector('#memory-rendered').hidden"
    )
    browser.click("#body-source")
    assert browser.js("typeof window.__nxsPwned") == "undefined"


def test_history_shows_a_diff_when_the_event_keeps_previous_values(
    browser: Browser, dashboard: dict[str, Any], shots: Path
) -> None:
    key = dashboard["keys"]["markdown"]
    now = api(browser, "memory_show", {"key": key})["memory"]
    old_body = (
        now["body"]
        .replace("from `main`", "from `release`")
        .replace("*never* from a branch", "or a branch")
    )
    # A newer core records the previous values with an edit; a teammate's commit brings one.
    event = {"actor": "teammate", "at": "2026-01-02T03:04:05.000Z", "type": "UPDATED",
             "data": {"fields": ["body", "introduction"],
                      "before": {"body": old_body, "introduction": "Deploy with make deploy"}}}  # fmt: skip
    log = dashboard["root"] / ".nxs" / "history" / f"{key}.jsonl"
    with log.open("ab") as f:
        f.write(orjson.dumps(event, option=orjson.OPT_SORT_KEYS) + b"\n")
    browser.view(f"#/memory/{key}")
    browser.wait("document.querySelector('#history li[data-type=UPDATED] .change')", "the diff")
    body = '#history li[data-type=UPDATED] .change[data-field="body"]'
    deleted = browser.js(f"[...document.querySelectorAll('{body} del')].map(x => x.textContent)")
    added = browser.js(f"[...document.querySelectorAll('{body} ins')].map(x => x.textContent)")
    assert any("`release`" in d for d in deleted) and any("`main`" in a for a in added)
    assert len(deleted) == len(added) == 1  # one line changed, the rest shown as it was
    intro = '#history li[data-type=UPDATED] .change[data-field="introduction"]'
    added = browser.js(
        f"[...document.querySelectorAll('{intro} ins')].map(x => x.textContent).join('')"
    )
    assert "from" in added and "main" in added
    # An edit whose event has no previous values (an older release wrote it) says which
    # fields changed.
    older = {"actor": "teammate", "at": "2026-01-03T03:04:05.000Z", "type": "UPDATED",
             "data": {"fields": ["priority"]}}  # fmt: skip
    with log.open("ab") as f:
        f.write(orjson.dumps(older, option=orjson.OPT_SORT_KEYS) + b"\n")
    browser.view(f"#/memory/{key}")
    assert "changed priority" in browser.text('#history li[data-type="UPDATED"]')
    # A one-line text rewritten more than kept: the line before, then the line after.
    rewrite = {"actor": "teammate", "at": "2026-01-04T03:04:05.000Z", "type": "UPDATED",
               "data": {"fields": ["introduction"], "before": {"introduction": "Ship it Fridays"}}}  # fmt: skip
    with log.open("ab") as f:
        f.write(orjson.dumps(rewrite, option=orjson.OPT_SORT_KEYS) + b"\n")
    browser.view(f"#/memory/{key}")
    lines = browser.js(
        f"[...document.querySelector('{intro}').querySelectorAll('pre.lines > *')].map(x => x.textContent)"
    )
    assert lines == ["- Ship it Fridays\n", f"+ {now['introduction']}\n"], lines
    browser.view(f"#/memory/{key}")
    shoot(browser, shots, "memory")


def test_reverting_from_the_history_and_a_refused_revert_writes_nothing(
    browser: Browser, dashboard: dict[str, Any]
) -> None:
    root = dashboard["root"]
    first = "Staging deploys run from the deploy-staging job; it needs the VPN."
    key = api(browser, "memory_add", {"body": first, "introduction": "Staging deploys need VPN"})[
        "memory"
    ]["key"]
    api(browser, "memory_update", {"key": key, "body": "Staging deploys run from anywhere."})
    api(browser, "memory_update", {"key": key, "priority": "HIGH"})
    api(browser, "memory_feedback", {"key": key, "signal": "POSITIVE"})  # not an edit
    browser.view(f"#/memory/{key}")
    # only events an edit came after offer a revert: not the latest edit, not the feedback
    offered = browser.js(
        "[...document.querySelectorAll('#history li')].filter(li => li.querySelector('.revert'))"
        ".map(li => Number(li.dataset.n))"
    )
    assert offered == [2, 1]
    browser.click('#history li[data-n="1"] .revert')  # back to the memory as it was added
    flash_text(browser, "Reverted to event 1.")
    browser.wait("document.querySelector('#history li').dataset.type === 'REVERTED'", "the revert")
    m = api(browser, "memory_show", {"key": key})["memory"]
    assert (m["body"], m["priority"]) == (first, "MEDIUM")
    assert browser.text("#memory-body") == first
    # the revert's own diff: what it replaced
    fields = browser.js(
        "[...document.querySelectorAll('#history li[data-type=REVERTED] .change')]"
        ".map(c => c.dataset.field)"
    )
    assert fields == ["body", "priority"]
    # An edit an older release wrote (no previous values) cannot be reverted: refused, shown,
    # nothing written.
    older = {"actor": "teammate", "at": "2999-01-01T00:00:00.000Z", "type": "UPDATED",
             "data": {"fields": ["body"]}}  # fmt: skip
    with (root / ".nxs" / "history" / f"{key}.jsonl").open("ab") as f:
        f.write(orjson.dumps(older, option=orjson.OPT_SORT_KEYS) + b"\n")
    browser.view(f"#/memory/{key}")
    before = committed(root)
    browser.click('#history li[data-n="1"] .revert')
    assert "did not keep the values it replaced" in flash_text(browser, "cannot be reverted")
    assert committed(root) == before
    assert api(browser, "memory_show", {"key": key})["memory"]["body"] == first


def test_live_refresh_when_another_process_writes(
    browser: Browser, dashboard: dict[str, Any]
) -> None:
    browser.view("#/memories?category=live")
    assert rows(browser) == []
    browser.js("window.__same_page = true")
    with as_teammate(dashboard) as write:
        first = write("memory_add", body="Live one: the cache warms at boot.", introduction="Cache warms at boot",
                      category="live")["memory"]["key"]  # fmt: skip
        browser.wait(
            f"document.querySelector('#memory-table tr[data-key=\"{first}\"]')", "the new row"
        )
        assert browser.js("window.__same_page === true")  # drawn again in place, not reloaded
        # Someone typing keeps the page: a notice offers the change instead.
        browser.js("document.querySelector('#filters input[name=category]').focus()")
        second = write("memory_add", body="Live two: the cache is cold after a deploy.", introduction="Cache is cold after deploys",
                       category="live")["memory"]["key"]  # fmt: skip
    browser.wait("!document.getElementById('stale').hidden", "the stale notice")
    assert second not in rows(browser)
    browser.click("#stale-reload")
    browser.wait(
        f"document.querySelector('#memory-table tr[data-key=\"{second}\"]')", "the second row"
    )
    assert browser.js("document.getElementById('stale').hidden")


def test_what_a_session_sees(browser: Browser, dashboard: dict[str, Any], shots: Path) -> None:
    from nxs.mcp.server import Seam

    with as_teammate(dashboard):
        seam = Seam(workspace=str(dashboard["root"]))
        instructions = seam.instructions()
        tools = seam.tools()
    browser.view("#/session")
    assert browser.text("#prime-text") == instructions
    names = browser.js(
        "[...document.querySelectorAll('#session-tools tbody tr')].map(r => r.dataset.tool)"
    )
    assert names == [t.name for t in tools]
    sizes = browser.js(
        "[...document.querySelectorAll('#session-tools td.num')].map(td => Number(td.textContent))"
    )
    assert sizes == [
        len(t.model_dump_json(by_alias=True, exclude_unset=True).encode()) for t in tools
    ]
    assert f"{len(instructions.encode())} bytes" in browser.text("#session-sizes")
    shoot(browser, shots, "session")


def test_figures_over_time_and_by_whom(browser: Browser, shots: Path) -> None:
    browser.view("#/figures?days=30")
    act = browser.js(
        "fetch('/api/view/activity', {method: 'POST', headers: {'content-type': 'application/json', "
        "'x-nxs-csrf': document.querySelector('meta[name=nxs-csrf]').content}, "
        "body: JSON.stringify({days: 30})}).then(r => r.json())"
    )
    assert len(act["buckets"]) == 30
    searches = browser.text("#totals .card:nth-child(6)")
    assert "vs" not in searches and ("than the" in searches or "same as before" in searches)
    assert browser.js("document.querySelectorAll('#chart-growth polyline').length") == 2
    assert browser.js("document.querySelectorAll('#chart-growth circle').length") == 60
    stored = browser.js(
        "[...document.querySelectorAll('#chart-growth circle')].map(c => c.textContent)"
    )
    assert stored[29].endswith(f": {act['stored'][-1]} stored")
    bars = browser.js(
        "[...document.querySelectorAll('#chart-events rect.bar')].map(r => Number(r.textContent.split(': ')[1].split(' ')[0]))"
    )
    assert sum(bars) == sum(sum(v) for v in act["events"].values()) > 0
    actors = browser.js(
        "[...document.querySelectorAll('#by-actor tbody tr')].map(r => r.dataset.name)"
    )
    assert "tester" in actors and "teammate" in actors
    assert (
        browser.js("document.querySelectorAll('#by-agent tbody tr').length")
        == len(act["agents"])
        > 0
    )
    shoot(browser, shots, "figures")


def big_graph(root: Path, count: int = 200) -> int:
    """Append `count` entities in communities of ten, and links between them, to the graph
    log (as a teammate's commit would bring them); returns the number of relations."""
    types = ("PERSON", "ORGANIZATION", "PLACE", "THING")
    words = ("ledger", "billing", "search", "export", "auth", "queue", "cache", "index",
             "gateway", "report", "sync", "mail", "audit", "quota", "deploy", "metrics")  # fmt: skip
    names = []
    for i in range(count):
        kind = types[i % 4] if i % 3 else "THING"
        name = {
            "PERSON": f"{words[(i * 7) % 16].title()} Person {i}",
            "ORGANIZATION": f"{words[i % 16]} team {i}",
            "PLACE": f"region {words[(i * 3) % 16]}-{i}",
        }.get(kind, f"{words[i % 16]}-{words[(i * 5 + 3) % 16]} service {i}")
        names.append((name, kind))
    at = "2026-01-01T00:00:00.000Z"
    lines = [{"op": "entity", "at": at, "name": n, "type": t, "description": "", "user_id": None, "actor": "teammate"}
             for n, t in names]  # fmt: skip
    pairs = set()
    for c in range(0, count, 10):
        for i in range(c, min(c + 10, count)):
            pairs.add((i, c + (i - c + 1) % 10))  # a ring
            if i % 4 == 1:
                pairs.add((c, i))  # and its hub
    pairs |= {((i * 37) % count, (i * 91 + 13) % count) for i in range(count // 2)}
    pairs = {(a, b) for a, b in pairs if a != b and b < count}
    relations = ("DEPENDS_ON", "USES", "OWNS", "WORKS_AT", "PART_OF")
    for a, b in sorted(pairs):
        (na, ta), (nb, tb) = names[a], names[b]
        lines.append({"op": "relation", "at": at, "actor": "teammate", "relation": relations[(a + b) % 5],
                      "source": {"name": na, "type": ta}, "target": {"name": nb, "type": tb}})  # fmt: skip
    with (root / ".nxs" / "graph.jsonl").open("ab") as f:
        f.writelines(orjson.dumps(x, option=orjson.OPT_SORT_KEYS) + b"\n" for x in lines)
    return len(pairs)


DRAWN = "[...document.querySelectorAll('#graph-svg g.node[data-drawn=\"1\"]')]"
LABELS = (
    "[...document.querySelectorAll('#graph-svg g.node[data-drawn=\"1\"] text:not(.hidden-label)')]"
)


def test_the_graph_stays_readable_at_200_entities(
    browser: Browser, dashboard: dict[str, Any], shots: Path
) -> None:
    big_graph(dashboard["root"])
    browser.view("#/graph")
    total = browser.js(f"{DRAWN}.length")
    assert total >= 212
    # No two labels shown overlap, and the best-supported ones are named.
    boxes = browser.js(
        f"{LABELS}.map(t => {{ const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }})"
    )
    assert len(boxes) >= 12
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    shoot(browser, shots, "graph")
    # Zoom in: more names fit; pan with the keyboard moves the picture.
    shown = len(boxes)
    for _ in range(3):
        browser.click("#zoom-in")
    browser.wait(f"{LABELS}.length > {shown}", "more labels when zoomed in")
    x = browser.js("document.querySelector('#graph-svg g.node').getAttribute('transform')")
    browser.js("document.querySelector('#graph-svg').focus()")
    browser.send(
        "Input.dispatchKeyEvent",
        session=True,
        type="keyDown",
        key="ArrowLeft",
        code="ArrowLeft",
        windowsVirtualKeyCode=37,
    )
    browser.send(
        "Input.dispatchKeyEvent",
        session=True,
        type="keyUp",
        key="ArrowLeft",
        code="ArrowLeft",
        windowsVirtualKeyCode=37,
    )
    browser.wait(
        f"document.querySelector('#graph-svg g.node').getAttribute('transform') !== {json.dumps(x)}",
        "the pan",
    )
    # Type filters hide a type and its edges.
    choose(browser, '#graph-types input[data-type="PERSON"]', "off")
    browser.wait(f"{DRAWN}.every(n => n.dataset.type !== 'PERSON')", "no person drawn")
    choose(browser, '#graph-types input[data-type="PERSON"]', "on")
    # Search, then the neighbourhood of what was found: only it and its neighbours drawn.
    browser.type("#graph-search", "billing team 1")
    browser.wait("document.querySelector('#graph-hits button')", "the hits")
    name = browser.text("#graph-hits button")
    assert name.startswith("billing team 1")
    browser.click("#graph-hits button")
    browser.wait("!document.querySelector('#graph-all').hidden", "the neighbourhood")
    near = api(browser, "graph_traverse", {"entity": name, "hops": 1})
    expected = {name} | {p["entity"]["name"] for p in near["paths"]}
    browser.wait(f"{DRAWN}.length === {len(expected)}", "only the neighbourhood drawn")
    drawn = set(browser.js(f"{DRAWN}.map(n => n.dataset.name)"))
    assert drawn == expected
    browser.wait("document.querySelector('#entity-relations')", "the entity panel")
    assert browser.text("#entity-name") == name
    choose(browser, "#graph-hops", "2")
    browser.wait(f"{DRAWN}.length > {len(expected)}", "two hops")
    browser.click("#graph-all")
    browser.wait(f"{DRAWN}.length === {total}", "the whole graph again")


def test_narrow_dark_and_keyboard(browser: Browser, dashboard: dict[str, Any], shots: Path) -> None:
    pages = ("#/memories", f"#/memory/{dashboard['keys']['markdown']}", "#/search?q=billing&mode=keyword",
             "#/knowledge", "#/graph", "#/figures", "#/session")  # fmt: skip
    set_viewport(browser, 800)
    try:
        for page in pages:
            browser.view(page)
            width = browser.js("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1] == 800, (page, width)
        browser.view(pages[2])
        box = browser.js("document.querySelector('#search-input').getBoundingClientRect().width")
        assert box > 600, box  # the search box keeps the page's width, not ~220 px
        for page, name in (
            ("#/memories", "memories-800"),
            (pages[1], "memory-800"),
            ("#/graph", "graph-800"),
            ("#/figures", "figures-800"),
        ):
            browser.view(page)
            shoot(browser, shots, name)
        browser.send(
            "Emulation.setEmulatedMedia",
            session=True,
            features=[{"name": "prefers-color-scheme", "value": "dark"}],
        )
        browser.view(pages[1])
        shade = browser.js("getComputedStyle(document.body).backgroundColor")
        assert sum(int(x) for x in shade[shade.index("(") + 1 : -1].split(",")[:3]) < 3 * 60, shade
        shoot(browser, shots, "dark-800")
    finally:
        browser.send(
            "Emulation.setEmulatedMedia",
            session=True,
            features=[{"name": "prefers-color-scheme", "value": "light"}],
        )
        set_viewport(browser, 1400)
    # Keys: "/" finds, "n" adds, Escape closes; every control is reachable with Tab.
    browser.view("#/memories")

    def key(k: str) -> None:
        for kind in ("keyDown", "keyUp"):
            browser.send(
                "Input.dispatchKeyEvent",
                session=True,
                type=kind,
                key=k,
                text=k if kind == "keyDown" and len(k) == 1 else "",
            )

    browser.js("document.activeElement && document.activeElement.blur()")
    key("n")
    browser.wait(
        "document.activeElement && document.activeElement.id === 'add-body'", "the add form focused"
    )
    key("Escape")
    browser.wait("document.querySelector('#add-form').hidden", "the add form closed")
    browser.js("document.activeElement.blur()")
    key("/")
    browser.wait(
        "location.hash.startsWith('#/search') && document.activeElement.id === 'search-input'",
        "the search box",
    )
    unreachable = browser.js(
        "[...document.querySelectorAll('#view button, #view a[href], #view input, #view select')]"
        ".filter(e => !e.disabled && e.offsetParent !== null && e.tabIndex < 0).length"
    )
    assert unreachable == 0


def test_the_curation_pages_raised_no_error(browser: Browser) -> None:
    browser.view("#/memories")
    errors = [
        e["params"]
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert not errors
