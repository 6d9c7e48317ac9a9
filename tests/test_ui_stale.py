"""The dashboard marks a memory whose code moved (docs/concepts.md, "Memory and code"): a badge
in the memory list and on search results, and on the memory's page the reason, the commits that
moved the code and a button that confirms it (screenshots ui-stale-list.png, ui-stale-memory.png).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import make_workspace
from tests.test_stale import FEES, commit, edit, git, nxm
from tests.ui_harness import Browser, serve_ui, shoot


def _moved(root: Path) -> dict[str, str]:
    """A billing codebase, four memories about it, then commits that move two of them."""
    (root / "services" / "billing").mkdir(parents=True)
    (root / "services" / "billing" / "fees.py").write_text(FEES)
    (root / "services" / "billing" / "rates.py").write_text("RATE = 3\n")
    git(root, "init", "-q", "-b", "main")
    commit(root, "billing service")
    said = {
        "fee": ("services/billing/fees.py:compute_fee",
                "The card fee is 2.5% of the amount: `compute_fee` takes 25 per mille."),
        "refund": ("services/billing/fees.py:refund_fee", "Refunds carry no fee."),
        "rates": ("services/billing/rates.py", "Exchange rates live in services/billing/rates.py."),
        "owner": ("services/billing", "Priya owns services/billing; changes need her review."),
    }  # fmt: skip
    keys = {}
    for name, (ref, body) in said.items():
        got = nxm(root, "add", body, "--introduction", body.split(":")[0][:90], "--ref", ref,
                  "--category", "billing")  # fmt: skip
        keys[name] = got["memory"]["key"]
    commit(root, "what the team knows about billing")
    edit(root, "services/billing/fees.py", "amount * 25 // 1000", "amount * 29 // 1000")
    commit(root, "LSP-88: card fee to 2.9%")
    git(root, "mv", "services/billing/rates.py", "services/billing/fx.py")
    commit(root, "LSP-91: rates.py becomes fx.py")
    return keys


def test_the_stale_badge_and_the_confirm_button(
    browser: Browser, dashboard: dict[str, Any], tmp_path: Path, shots: Path
) -> None:
    root = make_workspace(tmp_path / "billing")
    keys = _moved(root)
    with serve_ui(root, dashboard["env"]) as url:
        browser.open(url)
        browser.view("#/memories")
        badges = browser.js(
            "[...document.querySelectorAll('#memory-table tbody tr')].map(r => "
            "[r.dataset.key, r.querySelector('.badge.stale')?.title || null])"
        )
        assert dict(badges) == {
            keys["fee"]: "compute_fee changed: 25 no longer in it",
            keys["rates"]: "services/billing/rates.py renamed to services/billing/fx.py",
            keys["owner"]: "services/billing/rates.py renamed to services/billing/fx.py",
            keys["refund"]: None,
        }
        shoot(browser, shots, "stale-list")
        browser.view(f"#/memory/{keys['fee']}")
        box = browser.text("#memory-stale")
        assert "compute_fee changed: 25 no longer in it" in box
        assert "LSP-88: card fee to 2.9%" in box and "LSP-91" not in box
        shoot(browser, shots, "stale-memory")
        browser.click("#act-confirm")
        browser.wait("!document.querySelector('#memory-stale')", "the stale box to go")
        browser.view("#/search?q=card+fee")
        browser.wait("document.querySelector('#search-results')", "the results")
        assert not browser.js("document.querySelector('#search-results .badge.stale')")
    browser.open(dashboard["url"])
