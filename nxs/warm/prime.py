"""`nxs prime` answered by this workspace's warm server (`nxs.warm`), before anything else loads.

Session-start hooks run `nxs prime` in every session. When the arguments are the plain forms
`prime_arguments` reads (those `nxs.prime.fast_main` takes too) and this workspace's `nxs mcp serve` answers, its text is printed;
anything else (no server, help, a bad value) goes on as before (`nxs.cli.main`).
"""

from __future__ import annotations

import sys
from typing import Any

_NAMES = {
    "--budget": "budget",
    "--format": "format_",
    "--workspace": "workspace",
    "-w": "workspace",
}
_NAMES |= {"--now": "now", "--seam": "seam", "--tools": "tools"}


def prime_arguments(argv: list[str]) -> dict[str, Any] | None:
    """`nxs prime`'s plain arguments as `nxs.prime.output`'s, or None for anything else
    (help, a bad value: the full CLI words those)."""
    values: dict[str, Any] = {}
    args = list(argv)
    while args:
        name, eq, value = args.pop(0).partition("=")
        if name == "--quiet-outside" and not eq:
            values["quiet_outside"] = True
            continue
        if name not in _NAMES or (not eq and not args):
            return None
        values[_NAMES[name]] = value if eq else args.pop(0)
    if values.get("format_", "text") not in ("text", "claude-code"):  # nxs.prime's FORMATS
        return None
    if values.get("seam", "cli") not in ("cli", "mcp"):  # and SEAMS (not imported: it is lean)
        return None
    if "budget" in values:
        if not values["budget"].isdigit():
            return None
        values["budget"] = int(values["budget"])
    return values


def warm_prime(argv: list[str]) -> bool:
    """Print `nxs prime ARGV` as the workspace's warm server answers it; False when it does not."""
    from nxs import warm

    values = prime_arguments(argv)
    if values is None or not warm.enabled():
        return False
    from nxs.workspace import find

    try:
        ws = find(values.pop("workspace", None))
    except Exception:  # noqa: BLE001 - prime in process says what is wrong
        return False
    if "memory" not in ws.modules:
        return False
    request = {"op": "prime", "kwargs": values, "now": values.pop("now", None), "actor": ""}
    try:
        frame = warm.ask(ws.root, request, writes=False)
        text = None if frame is None or "result" not in frame else warm.replay(frame)
    except Exception:  # noqa: BLE001 - prime never fails: in process then
        return False
    if not isinstance(text, str):
        return False
    sys.stdout.buffer.write(text.encode())
    sys.stdout.buffer.flush()
    return True
