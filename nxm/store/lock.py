"""The store's write lock: one writer at a time, a bounded wait, and who holds it.

An exclusive `flock` on the workspace's ``.nxs`` directory itself: no file for git to see, the
same lock for every process whatever its environment, and dropped by the kernel when its holder
dies. A writer that waited `WAIT_S` in vain names the holder (``/proc/locks``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from nxs.errors import ConflictError, UpstreamError

WAIT_S = float(os.environ.get("NXS_LOCK_WAIT_S") or 30)  # docs/reliability.md


def _holder(fd: int) -> str:
    """Who holds the flock on ``fd``'s inode: its pid and command, when the system says."""
    st = os.fstat(fd)
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/locks").read_text().splitlines():
            parts = line.split()
            if parts[1] == "FLOCK" and parts[3] == "WRITE" and parts[5] == inode:
                pid = parts[4]
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                words = [os.path.basename(w) for w in command.decode(errors="replace").split()]
                return f"pid {pid} ({' '.join(words[:3])[:200]})"
    return "another process"


@contextlib.contextmanager
def locked(folder: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the write lock of ``folder`` (a ``.nxs``), waiting at most ``wait`` (`WAIT_S`) s.

    Raises:
        ConflictError: another process held it all that time (code STORE_BUSY).
        UpstreamError: the folder cannot be opened (code STORE_READONLY).
    """
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise UpstreamError(
            f"cannot take the write lock on {folder}: {exc.strerror}",
            suggestion="check that the workspace's .nxs/ directory exists and is readable",
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
        yield
    finally:
        os.close(fd)  # releases the lock


def free(folder: Path) -> bool:
    """Whether nobody holds the lock now (False also when it cannot be looked at)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
