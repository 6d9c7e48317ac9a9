"""The store's write lock: one writer at a time, a bounded wait, and who holds it.

An exclusive `flock` on ``.nxs/index/lock``. The holder writes its pid, command and start time
into the file, so a writer that waited `WAIT_S` in vain can say who is in the way (a stopped
``nxm import``, a hung server) instead of waiting forever. The kernel drops the lock when its
holder dies, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson

from nxs.errors import ConflictError, UpstreamError

WAIT_S = float(os.environ.get("NXS_LOCK_WAIT_S") or 30)  # docs/reliability.md


def _holder(fd: int) -> str:
    try:
        got = orjson.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {got['pid']} ({got['command']}) since {got['since']}"
    except (orjson.JSONDecodeError, KeyError, TypeError, OSError):
        return "another process"


@contextlib.contextmanager
def locked(path: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the write lock at ``path`` (waiting at most ``wait`` seconds, default `WAIT_S`).

    Raises:
        ConflictError: another process held it all that time (code STORE_BUSY).
        UpstreamError: the lock file cannot be made (a read-only .nxs/: code STORE_READONLY).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise UpstreamError(
            f"cannot take the write lock {path}: {exc.strerror}",
            suggestion="check that the workspace's .nxs/ directory is writable",
            code="STORE_READONLY",
        ) from None
    try:
        deadline = time.monotonic() + (WAIT_S if wait is None else wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ConflictError(
                        f"the memory store is busy: {_holder(fd)} holds its write lock",
                        suggestion="wait for it to finish, or stop it (a stopped job: `fg`); "
                        "nothing was written",
                        code="STORE_BUSY",
                    ) from None
                time.sleep(0.02)
        holder = {
            "pid": os.getpid(),
            "command": " ".join(os.path.basename(a) for a in sys.argv[:3])[:200],
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, orjson.dumps(holder), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def free(path: Path) -> bool:
    """Whether nobody holds the lock now (False also when it cannot be looked at)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return not path.exists()
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
