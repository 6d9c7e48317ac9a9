"""Which memory files changed, told by the kernel, for a process that lives long (the server).

A command looks at every memory file's identity to notice a checkout, a merge or a hand edit
(`Store.sync`); at 10,000 memories that is ~60 ms here, more than a warm search. A long-lived
process asks Linux's inotify instead: the names changed in the two folders since its last
look, so a search after nothing changed looks at nothing. Where inotify is missing (not
Linux), its queue overflowed, or a folder was removed or replaced (a checkout of a branch
without memories), `changed` says it does not know and the caller looks at every file.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys
import weakref
from pathlib import Path

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip
LOST = IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW | IN_IGNORED
_EVENT = struct.Struct("iIII")


class Watch:
    """Changes to the files of some folders since the last call of `changed`."""

    def __init__(self, folders: list[Path]) -> None:
        self.fd: int | None = None
        self.folders: dict[int, Path] = {}
        if not sys.platform.startswith("linux") or not all(f.is_dir() for f in folders):
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd < 0:
                return
            for folder in folders:
                wd = libc.inotify_add_watch(fd, os.fsencode(folder), MASK)
                if wd < 0:
                    os.close(fd)
                    return
                self.folders[wd] = folder
            self.fd = fd
            weakref.finalize(self, _close, fd)
        except (OSError, AttributeError):
            return

    def changed(self) -> dict[Path, set[str]] | None:
        """The names changed in each folder since the last call; None when that is not known
        (the caller must look at every file, and should make a new watch)."""
        if self.fd is None:
            return None
        out: dict[Path, set[str]] = {f: set() for f in self.folders.values()}
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return out
            except OSError:
                self.close()
                return None
            at = 0
            while at < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
                at += _EVENT.size + size
                if mask & LOST or wd not in self.folders:
                    self.close()
                    return None
                out[self.folders[wd]].add(os.fsdecode(name))

    def close(self) -> None:
        if self.fd is not None:
            _close(self.fd)
            self.fd = None


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
