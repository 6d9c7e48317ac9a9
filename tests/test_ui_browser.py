"""The dashboard in headless Chromium, driven over the Chrome DevTools Protocol.

One dashboard (`nxs ui --port 0`, a subprocess) over a seeded workspace and one browser serve
every test here. The browser is Debian's ``chromium`` (scripts/test installs it where it can);
without it these tests skip and say why. The CDP client is the few lines below over the
``websockets`` package (a test dependency). Screenshots of the main pages are written to a
temporary directory, or to ``docs/ui-*.png`` when ``NXS_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REAL_CACHE, make_workspace
from tests.test_ui import SCRIPT_BODY, seed

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WAIT = 20.0  # seconds a condition may take before a test fails (not a timing assertion)


def find_browser() -> str | None:
    """The Chromium executable: $NXS_CHROMIUM, else the first of `BROWSERS` on PATH."""
    explicit = os.environ.get("NXS_CHROMIUM")
    if explicit:
        return explicit if shutil.which(explicit) else None
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


class Browser:
    """One headless Chromium and one page, spoken to over CDP (flattened sessions)."""

    def __init__(self, executable: str, profile: Path) -> None:
        from websockets.sync.client import connect

        self.proc = subprocess.Popen(
            [
                executable,
                "--headless",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--hide-scrollbars",
                "--force-color-profile=srgb",
                "--window-size=1280,860",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        url = self._devtools_url()
        self.ws = connect(url, max_size=None, open_timeout=WAIT)
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page.enable", "Runtime.enable"):
            self.send(domain, session=True)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=1280,
            height=860,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.send("Emulation.setEmulatedMedia", session=True, features=[
            {"name": "prefers-color-scheme", "value": "light"}
        ])  # fmt: skip

    def _devtools_url(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + WAIT
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline().decode(errors="replace")
            if not line and self.proc.poll() is not None:
                break
            seen.append(line)
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            if match:
                # Keep draining its log, so a chatty browser never blocks on a full pipe.
                threading.Thread(target=self._drain, daemon=True).start()
                return match.group(1)
        self.proc.kill()
        raise RuntimeError("chromium did not start:\n" + "".join(seen[-20:]))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in iter(self.proc.stderr.readline, b""):
            pass

    def send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """One CDP command; its result (events that arrive meanwhile are kept)."""
        msg_id = next(self.ids)
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv(timeout=WAIT))
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def js(self, expression: str) -> Any:
        """Evaluate in the page (promises awaited); the value, or an error with the exception."""
        result = self.send(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression: str, what: str) -> None:
        """Poll until the expression is truthy in the page."""
        deadline = time.monotonic() + WAIT
        while True:
            if self.js(f"Boolean({expression})"):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {expression}")
            time.sleep(0.05)

    def open(self, url: str) -> None:
        """Navigate and wait until the page has rendered its view."""
        self.send("Page.navigate", session=True, url=url)
        self.wait(
            "document.readyState === 'complete' && document.querySelector('#view') "
            "&& document.querySelector('#view').getAttribute('aria-busy') === 'false'",
            f"{url} to render",
        )

    def view(self, hash_: str) -> None:
        """Go to one of the dashboard's pages (``#/…``) and wait for it to render."""
        self.js(
            "window.__rendered = false; new Promise(r => { const v = document.querySelector('#view');"
            " const o = new MutationObserver(() => { if (v.getAttribute('aria-busy') === 'false')"
            " { o.disconnect(); r(); } }); o.observe(v, {attributes: true, childList: true}); "
            f" const h = {json.dumps(hash_)}; if (location.hash === h)"
            " window.dispatchEvent(new HashChangeEvent('hashchange')); else location.hash = h; })"
        )

    def click(self, selector: str) -> None:
        found = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
            "if (!e) return false; e.scrollIntoView({block: 'center'}); e.click(); return true; })()"
        )
        assert found, f"no element {selector}"

    def type(self, selector: str, value: str) -> None:
        """Set an input's value and fire its input event, as typing would."""
        self.js(
            f"(() => {{ const i = document.querySelector({json.dumps(selector)});"
            f" i.value = {json.dumps(value)}; i.dispatchEvent(new Event('input')); }})()"
        )

    def text(self, selector: str) -> str:
        return self.js(
            f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''"
        )

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - it may already be gone
            pass
        self.ws.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture(scope="module")
def chromium() -> str:
    """The browser to drive, or a skip that says how to get one (before any set-up is paid)."""
    executable = find_browser()
    if executable is None:
        pytest.skip(
            "no Chromium found (looked for chromium, chromium-browser, google-chrome and "
            "$NXS_CHROMIUM): `apt-get install chromium`, or run scripts/test as root, to run "
            "the dashboard's browser tests"
        )
    pytest.importorskip("websockets", reason="the CDP client needs `pip install websockets`")
    return executable


@pytest.fixture(scope="module")
def dashboard(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A seeded workspace served by `nxs ui` on a free port: its URL, keys and root."""
    base = tmp_path_factory.mktemp("ui")
    env = {
        **os.environ,
        "NXS_CONFIG_DIR": str(base / "home" / "config"),
        "NXS_DATA_DIR": str(base / "home" / "data"),
        "NXS_CACHE_DIR": REAL_CACHE,
        "HF_HUB_OFFLINE": "1",
        "USER": "tester",
    }
    for name in ("NXS_WORKSPACE", "NXS_ACTOR", "NXM_ACTOR", "NXF_ACTOR", "NXS_UI_TOKEN"):
        env.pop(name, None)
    with pytest.MonkeyPatch.context() as mp:
        for name in ("NXS_CONFIG_DIR", "NXS_DATA_DIR", "USER"):
            mp.setenv(name, env[name])
        root = make_workspace(base / "proj")
        keys = seed(root)
        from nxm import facts

        facts.update({"name": "Ada", "editor": "helix"})
    log = base / "ui.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nxs", "ui", "--port", "0", "--workspace", str(root)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=base,
        )
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline().decode()
        match = re.search(r"(http://\S+)", line)
        assert match, f"nxs ui printed {line!r}; stderr: {log.read_text()}"
        yield {"url": match.group(1), "keys": keys, "root": root}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="module")
def browser(chromium: str, dashboard: dict[str, Any]) -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="nxs-chromium-") as profile:
        b = Browser(chromium, Path(profile))
        try:
            b.open(dashboard["url"])
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: docs/ with NXS_UPDATE_SCREENSHOTS=1, else a temporary directory."""
    if os.environ.get("NXS_UPDATE_SCREENSHOTS") == "1":
        return ROOT / "docs"
    return tmp_path_factory.mktemp("screenshots")


def shoot(browser: Browser, shots: Path, name: str) -> None:
    path = shots / f"ui-{name}.png"
    browser.js("window.scrollTo(0, 0); document.getElementById('flash').hidden = true")
    browser.screenshot(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def mouse_click(browser: Browser, selector: str) -> None:
    """A real click (mouse pressed and released at the element's centre), not element.click()."""
    box = browser.js(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
        " const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"
    )
    assert box, f"no element {selector}"
    for kind in ("mousePressed", "mouseReleased"):
        browser.send(
            "Input.dispatchMouseEvent",
            session=True,
            type=kind,
            x=box["x"],
            y=box["y"],
            button="left",
            clickCount=1,
        )


def api(browser: Browser, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool the way the page does (same origin, CSRF header), from inside the page."""
    return browser.js(
        f"fetch('/api/call/{tool}', {{method: 'POST', headers: {{'content-type': "
        "'application/json', 'x-nxs-csrf': document.querySelector('meta[name=nxs-csrf]').content},"
        f" body: JSON.stringify({json.dumps(args)})}}).then(r => r.json())"
    )


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


def test_forget_then_restore_round_trips(
    browser: Browser, dashboard: dict[str, Any], shots: Path
) -> None:
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
    shoot(browser, shots, "memory")


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
    browser: Browser, dashboard: dict[str, Any], shots: Path
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
    shoot(browser, shots, "graph")


def test_a_script_body_renders_as_text(browser: Browser, dashboard: dict[str, Any]) -> None:
    browser.view(f"#/memory/{dashboard['keys']['script']}")
    assert browser.text("#memory-body") == SCRIPT_BODY
    assert browser.js("document.querySelectorAll('#view script, #view img').length") == 0
    browser.view("#/search?q=script+window&mode=keyword")
    browser.view("#/knowledge")
    assert "<script>" in browser.text("#knowledge-doc")
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
    shoot(browser, shots, "figures")


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


def test_no_page_raised_an_error(browser: Browser) -> None:
    browser.view("#/memories")  # collects the events still in flight
    errors = [
        e["params"]
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert not errors
