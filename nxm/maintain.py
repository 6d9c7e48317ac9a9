"""Compaction of a large memory table in a detached child process, like `git gc --auto`.

At 100,000 memories LanceDB's `optimize()` rewrites the whole table: ~5 s, and the MCP server's
peak RSS rose from ~564 to ~860 MB when it ran there. So a writer that finds a large table due
(`nxm.store.index.Upkeep.due`) starts ``python -m nxm.maintain ROOT`` (`spawn`) and returns; the child
takes the store's write lock, so writes wait for it rather than conflict with it, and exits.
Only one maintainer runs at a time (`.nxs/index/maintain.lock`). It prints nothing unless it fails:
then one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from pathlib import Path

LOCK = "maintain.lock"


def spawn(root: Path) -> subprocess.Popen[bytes]:
    """Start a maintainer for the workspace at ``root``, detached: its own session (a signal to
    the writer's group does not stop it), no stdin, and never the writer's stdout (the MCP
    server speaks JSON-RPC there); stderr is the writer's, for its one-line failure. The
    child imports this very copy of the code (first on its PYTHONPATH), whichever way the
    writer found it."""
    code = str(Path(__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (code, os.environ.get("PYTHONPATH")) if p)
    return subprocess.Popen(
        [sys.executable, "-m", "nxm.maintain", str(root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env={**os.environ, "PYTHONPATH": path},
    )


def run(root: str) -> bool:
    """Optimize the store of the workspace at ``root`` if it needs it; False when another
    maintainer is at it or there was nothing to do.

    Raises:
        NxsError: no workspace or no memory store there, or the store refused.
        OSError: the lock file cannot be made.
    """
    from nxm.store import Store
    from nxs.errors import NotFoundError
    from nxs.workspace import find

    ws = find(root)
    store = Store(ws)
    if not store.index.exists():
        raise NotFoundError(f"no memory index at {store.index.uri}", code="STORE_MISSING")
    fd = os.open(ws.dir / "index" / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # another maintainer holds it: it will see this write's fragments too
        table = store.index.table()  # opened outside the lock: importing lancedb takes seconds
        if table is None:
            raise NotFoundError(f"no memory index at {store.index.uri}", code="STORE_MISSING")
        with store.locked():
            table.checkout_latest()
            return store.index.upkeep()  # re-checked: the writer's view may be old by now
    finally:
        os.close(fd)  # releases the lock


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m nxm.maintain WORKSPACE_ROOT", file=sys.stderr)
        return 2
    from nxs.errors import NxsError

    with contextlib.suppress(OSError):  # background work: searches come first on a busy CPU
        os.nice(10)
    try:
        run(args[0])
    except NxsError as exc:
        print(f"nxm.maintain: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except (OSError, RuntimeError) as exc:  # lance reports I/O errors as RuntimeError
        line = (str(exc).strip().splitlines() or [repr(exc)])[0]
        print(f"nxm.maintain: cannot compact the store at {args[0]}: {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
