"""The dashboard's browser harness: headless Chromium over the Chrome DevTools Protocol.

One dashboard (`nxs ui --port 0`, a subprocess) over a seeded workspace and one browser serve
every browser test of the session (tests/test_ui_browser.py, tests/test_ui_curate.py). The
browser is Debian's ``chromium`` (scripts/test installs it where it can); without it those
tests skip and say why. The CDP client is the few lines below over the ``websockets`` package
(a test dependency). Screenshots go to a temporary directory, or to ``docs/ui-*.png`` when
``NXS_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import base64
import contextlib
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

from tests.conftest import make_workspace, private_cache
from tests.test_ui import seed

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
                "--window-size=1400,900",
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
            width=1400,
            height=900,
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
        """Focus an input, set its value and fire its (bubbling) input event, as typing would."""
        self.js(
            f"(() => {{ const i = document.querySelector({json.dumps(selector)}); i.focus();"
            f" i.value = {json.dumps(value)}; i.dispatchEvent(new Event('input', {{bubbles: true}})); }})()"
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


@pytest.fixture(scope="session")
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


@contextlib.contextmanager
def serve_ui(root: Path, env: dict[str, str], log: Path | None = None) -> Iterator[str]:
    """`nxs ui --port 0` over ``root`` (a subprocess); its URL while it runs."""
    with (log or root.parent / "ui.log").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nxs", "ui", "--port", "0", "--workspace", str(root)],
            env=env, stdout=subprocess.PIPE, stderr=err, cwd=root.parent,
        )  # fmt: skip
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline().decode()
        match = re.search(r"(http://\S+)", line)
        assert match, (
            f"nxs ui printed {line!r}; stderr: {(log or root.parent / 'ui.log').read_text()}"
        )
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="session")
def dashboard(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A seeded workspace served by `nxs ui` on a free port: its URL, keys and root."""
    base = tmp_path_factory.mktemp("ui")
    env = {
        **os.environ,
        "NXS_CONFIG_DIR": str(base / "home" / "config"),
        "NXS_DATA_DIR": str(base / "home" / "data"),
        "NXS_CACHE_DIR": str(private_cache(base / "home")),
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
        from nxm.session import facts

        facts.update({"name": "Ada", "editor": "helix"})
    with serve_ui(root, env, base / "ui.log") as url:
        yield {"url": url, "keys": keys, "root": root, "env": env}


@pytest.fixture(scope="session")
def browser(chromium: str, dashboard: dict[str, Any]) -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="nxs-chromium-") as profile:
        b = Browser(chromium, Path(profile))
        try:
            b.open(dashboard["url"])
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
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


@contextlib.contextmanager
def as_teammate(dashboard: dict[str, Any]) -> Iterator[Any]:
    """Run operations in this process on the dashboard's workspace, as another program would:
    yields ``write(tool, **arguments)``."""
    from nxs.context import Context
    from nxs.registry import operations
    from nxs.render import timestamp

    ops = {op.tool: op for op in operations(["memory"])}
    with pytest.MonkeyPatch.context() as mp:
        for name in ("NXS_CONFIG_DIR", "NXS_DATA_DIR"):
            mp.setenv(name, dashboard["env"][name])
        services: dict[Any, Any] = {}

        def write(tool: str, **arguments: Any) -> Any:
            ctx = Context(
                now=timestamp(),
                actor="teammate",
                workspace_arg=str(dashboard["root"]),
                services=services,
            )
            return ops[tool].handler(ctx, **arguments)

        try:
            yield write
        finally:
            Context(now="", actor="", services=services).release()


def set_viewport(browser: Browser, width: int, height: int = 900) -> None:
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        session=True,
        width=width,
        height=height,
        deviceScaleFactor=1,
        mobile=False,
    )
