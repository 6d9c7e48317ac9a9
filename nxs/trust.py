"""What a cloned repository may decide, and what needs the user's own word (docs/reliability.md).

Anyone with access commits a workspace's files, so two of their decisions are checked first:
every path nxs writes must resolve inside the workspace (`check_paths`: a committed symlink
from ``.nxs/memories`` to ``~/.ssh`` is refused), and a committed store URI and its options,
which would receive the user's cloud credentials, are used only once `nxs trust` recorded a
fingerprint of both (a later change needs it again), or when the environment names the store.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import orjson

from nxs.errors import ValidationError
from nxs.paths import atomic_write, config_dir

ENV_STORE = "NXS_STORE"
ENV_OPTIONS = "NXS_STORAGE_OPTIONS"
TRUST_FILE = "trusted.json"

# What nxs writes in a workspace (relative to its root): each must resolve inside it. (Files
# only `init` writes, config.toml and the git files, are replaced whole: a link there is
# replaced, never written through.)
WRITES = (
    ".nxs", ".nxs/journal", ".nxs/memories", ".nxs/history", ".nxs/graph.jsonl",
    ".nxs/graph.json", ".nxs/memory", "NEXUS_MEMORY.md",
)  # fmt: skip


def read_limited(path: Path, limit: int = 1 << 20) -> bytes:
    """A committed file's bytes (config.toml, a persona) read with a bound; raises OSError for
    a link to ``/dev/zero`` or a FIFO, or a file over ``limit``, never reading until memory
    runs out (and for a missing or unreadable one)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not block
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a link to a device or a pipe?)")
        data = b""
        while len(data) <= limit and (piece := os.read(fd, 1 << 16)):
            data += piece
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
        return data
    finally:
        os.close(fd)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_paths(root: Path) -> None:
    """Refuse a workspace where a path nxs writes resolves outside it (a committed symlink),
    naming the link and where it points."""
    real = os.path.realpath(root)
    for name in WRITES:
        path = os.path.join(root, name)
        target = os.path.realpath(path)
        if not _inside(target, real):  # name the part that is the link
            link = next((p for p in _prefixes(root, name) if os.path.islink(p)), path)
            raise ValidationError(
                f"{link} is a symlink to {os.path.realpath(link)}, outside the workspace "
                f"{root}: nxs writes there, so it refuses to run here",
                suggestion=f"remove the link (`rm {link}`); nxs makes what it needs inside "
                "the workspace",
                code="UNSAFE_PATH",
            )


def _prefixes(root: Path, name: str) -> list[str]:
    parts = Path(name).parts
    return [os.path.join(root, *parts[: n + 1]) for n in range(len(parts))]


def _fingerprint(root: Path, store: str, options: dict[str, Any]) -> str:
    import hashlib  # here: it loads OpenSSL, and most commands name no team store

    state = {"root": os.path.realpath(root), "store": store, "options": options}
    return hashlib.sha256(orjson.dumps(state, option=orjson.OPT_SORT_KEYS)).hexdigest()


def endpoint(options: dict[str, Any]) -> str | None:
    """The endpoint a store's options name (``aws_endpoint``, ``azure_storage_endpoint``, …)."""
    return next((str(v) for k, v in sorted(options.items()) if "endpoint" in k.lower() and v), None)


# What a team store can be (docs/team-store.md): ``memory://`` keeps nothing past the process.
SCHEMES = ("s3", "s3+ddb", "gs", "az", "file")


def _remote(store: str, where: str) -> bool:
    """Whether ``store`` names a team store; a URI of another kind is refused (BAD_CONFIG)."""
    scheme = store.partition("://")[0].lower() if "://" in store else None
    if scheme is not None and scheme not in SCHEMES:
        raise ValidationError(
            f"{where} names {store[:200]!r}, which is not a store nxs can keep memories in "
            f"(an acknowledged write would be lost): a team store is {', '.join(SCHEMES)}://…",
            suggestion=f"fix or remove {where}; without it the workspace's own files are the store",
            code="BAD_CONFIG",
        )
    return scheme is not None


def _trusted() -> dict[str, Any]:
    try:
        got = orjson.loads((config_dir() / TRUST_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return got if isinstance(got, dict) else {}


def _env_options() -> dict[str, Any]:
    raw = os.environ.get(ENV_OPTIONS, "").strip()
    try:
        got = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        got = None
    if not isinstance(got, dict) or not all(isinstance(v, str) for v in got.values()):
        raise ValidationError(
            f"{ENV_OPTIONS} must be a JSON object of strings",
            suggestion='e.g. {"aws_region": "eu-west-1"}',
            code="BAD_STORAGE_OPTIONS",
        )
    return got


def store_settings(root: Path, section: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The store URI to use (None: the workspace's own files, also for a plain path) and its
    options: the environment's, else a committed one `trust` confirmed as it is now (a store
    nobody confirmed is refused)."""
    env = os.environ.get(ENV_STORE, "").strip()
    if env:
        return (env, _env_options()) if _remote(env, ENV_STORE) else (None, {})
    store = str(section.get("store") or "")
    options = dict(section.get("storage_options") or {})
    if not _remote(store, f"memory.store in {root}/.nxs/config.toml"):
        return None, options
    entry = _trusted().get(os.path.realpath(root)) or {}
    if entry.get("fingerprint") != _fingerprint(root, store, options):
        where = endpoint(options)
        raise ValidationError(
            f"memory.store in {root}/.nxs/config.toml names {store!r}"
            + (f" at {where}" if where else "")
            + ", which would receive your own cloud credentials; a cloned repository's "
            "settings are not used until you confirm them",
            suggestion="check memory.store and memory.storage_options in .nxs/config.toml, then "
            f"run `nxs trust` in the workspace (or set {ENV_STORE} yourself)",
            code="UNTRUSTED_STORE",
        )
    return store, options


def trust(root: Path, section: dict[str, Any]) -> dict[str, Any]:
    """Record the user's confirmation of the workspace's committed store as it is now; returns
    what was trusted."""
    store = str(section.get("store") or "")
    options = dict(section.get("storage_options") or {})
    path = config_dir() / TRUST_FILE
    entries = _trusted()
    key = os.path.realpath(root)
    if not _remote(store, f"memory.store in {root}/.nxs/config.toml"):
        entries.pop(key, None)
    else:  # the options may hold keys: only their fingerprint is kept
        fingerprint = _fingerprint(root, store, options)
        entries[key] = {"fingerprint": fingerprint, "store": store, "endpoint": endpoint(options)}
    atomic_write(path, orjson.dumps(entries, option=orjson.OPT_SORT_KEYS), private=True)
    return {"workspace": str(root), "store": store or None, "endpoint": endpoint(options)}


__all__ = [
    "ENV_OPTIONS", "ENV_STORE", "check_paths", "endpoint", "read_limited", "store_settings",
    "trust",
]  # fmt: skip
