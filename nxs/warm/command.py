"""`nxs warm`: a process kept warm for the workspace's CLI calls, for shells without an MCP host.

It is the listener of `nxs mcp serve` (`nxs.warm.server`) without the MCP server: it loads
lancedb, the model and the table at once, answers the workspace's CLI calls on its socket, and
exits 0 on SIGINT or SIGTERM, or once no call has finished for ``--idle``. Nothing needs it:
every call runs in its own process when it is not there. It refuses at once, without loading
anything, when reuse is off, the workspace has no memory module, or a live server already
answers this workspace.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
import time

from nxs.errors import ConflictError, NotFoundError, NxsError

SIGNALS = (signal.SIGINT, signal.SIGTERM)
UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_idle(text: str) -> float | None:
    """Seconds of ``--idle`` (None: never stop).

    Raises:
        ValueError: not ``0`` nor a whole number with a unit (a bare ``30`` is refused: seconds
            or minutes would be a guess).
    """
    value = text.strip().lower()
    if value == "0":
        return None
    match = re.fullmatch(r"(\d{1,7})([smh])", value)
    if match is None:
        raise ValueError(f"{text!r} is not a duration: use a number and s, m or h (90s, 30m, 2h)")
    seconds = int(match[1]) * UNITS[match[2]]
    return float(seconds) if seconds else None


def keep(workspace: str | None, idle: float | None) -> None:
    """Serve the workspace's CLI calls until a signal or ``idle`` seconds without a call.

    Raises:
        NxsError: reuse is off, no memory workspace, or another live server answers it.
    """
    from nxs import warm
    from nxs.mcp.server import Seam
    from nxs.warm.server import Listener
    from nxs.workspace import find

    if not warm.enabled():
        raise NxsError(f"reuse is off ({warm.OFF_ENV} or NXS_DEBUG is set): nothing to serve")
    try:
        ws = find(workspace)
    except NxsError as err:  # one line: no hint of the MCP server's kind
        raise type(err)(f"no workspace to serve: {err.message}", code=err.code) from None
    if "memory" not in ws.modules:
        raise NotFoundError(
            f"the workspace at {ws.root} has no memory module: nothing to serve",
            code="NO_MEMORY_MODULE",
        )
    seam = Seam(workspace=str(ws.root), groups=())  # no MCP tools: only the CLI's socket
    listener = Listener(seam)
    stop = threading.Event()

    def stopped(*_: object) -> None:
        stop.set()
        for sig in SIGNALS:  # a second one stops at once (the socket file is then left)
            default = signal.SIG_DFL if sig == signal.SIGTERM else signal.default_int_handler
            signal.signal(sig, default)

    previous = {sig: signal.signal(sig, stopped) for sig in SIGNALS}  # before the socket is made
    try:
        if not listener.start():
            raise ConflictError(
                f"cannot listen at {listener.path}: {listener.why}", code="CANNOT_LISTEN"
            )
        seam.warm(always=True)
        listener.last = time.monotonic()  # idle time counts from ready
        print(f"nxs warm: answering CLI calls of {seam.workspace} at {listener.path} "
              f"({_until(idle)})", file=sys.stderr, flush=True)  # fmt: skip
        while not stop.is_set():
            quiet = listener.idle()  # None while a connection is served
            if idle is not None and quiet is not None and quiet >= idle:
                break
            left = 60.0 if idle is None else 1.0 if quiet is None else idle - quiet
            stop.wait(min(max(left, 0.05), 60.0))
    finally:
        listener.close()  # no new call; the one under way finishes and is answered
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _until(idle: float | None) -> str:
    if idle is None:
        return "until Ctrl-C or SIGTERM"
    for unit, size in (("h", 3600), ("m", 60)):
        if idle % size == 0:
            return f"stops after {int(idle // size)}{unit} without a call"
    return f"stops after {int(idle)}s without a call"


__all__ = ["keep", "parse_idle"]
