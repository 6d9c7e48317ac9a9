"""Where nxs keeps things outside a workspace, and how private files are written.

Private things (Linear keys, user facts) live in the user's own directories with owner-only
permissions, never in `.nxs/`, which people commit. Each directory can be moved with an
environment variable (tests point them at a temporary directory).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _base(env: str, xdg: str, default: str) -> Path:
    if os.environ.get(env):
        return Path(os.environ[env])
    return Path(os.environ.get(xdg) or Path.home() / default) / "nxs"


def config_dir() -> Path:
    """User configuration (Linear keys): ``$NXS_CONFIG_DIR`` or ``$XDG_CONFIG_HOME/nxs``."""
    return _base("NXS_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")


def data_dir() -> Path:
    """User data (user facts): ``$NXS_DATA_DIR`` or ``$XDG_DATA_HOME/nxs``."""
    return _base("NXS_DATA_DIR", "XDG_DATA_HOME", ".local/share")


def cache_dir() -> Path:
    """Caches (the embedding model): ``$NXS_CACHE_DIR`` or ``$XDG_CACHE_HOME/nxs``."""
    return _base("NXS_CACHE_DIR", "XDG_CACHE_HOME", ".cache")


def atomic_write(
    path: Path, data: bytes | Iterable[bytes], *, private: bool = False, durable: bool = True,
    mode: int | None = None,
) -> None:  # fmt: skip
    """Write a file so a reader sees the old or the new bytes, never half.

    ``data``: bytes, or pieces written one after another (a large file is never held whole).
    ``private``: 0600 in a 0700 directory; else ``mode`` (default: the replaced file's, else
    0644: an export over a 0600 file stays 0600). Not ``durable``: no fsync (for a file
    checked before it is used, and made again when wrong).
    """
    if mode is None and not private:
        with contextlib.suppress(OSError):
            mode = os.stat(path).st_mode & 0o777
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o777)
    if private:
        os.chmod(path.parent, 0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600 if private else 0o644 if mode is None else mode)
        with os.fdopen(fd, "wb", buffering=1 << 20) as fh:
            for piece in (data,) if isinstance(data, bytes | bytearray | memoryview) else data:
                fh.write(piece)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["atomic_write", "cache_dir", "config_dir", "data_dir"]
