"""User facts: one private JSON document of durable truths about the user (seed 000).

The document lives at ``<data dir>/facts.json``, private, never in a workspace: a workspace may
be committed or shared, facts never are. It is changed only by a JSON merge patch (RFC 7396) and
must fit in `MAX_BYTES` (an oversize patch changes nothing). Messages never quote fact values.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from nxs.errors import UpstreamError, ValidationError
from nxs.paths import atomic_write, data_dir

MAX_BYTES = 4096
FILENAME = "facts.json"


def path() -> Path:
    """Where the facts document is kept."""
    return data_dir() / FILENAME


def size(doc: dict[str, Any]) -> int:
    """The document's size as the cap counts it: compact JSON, sorted keys, UTF-8 bytes."""
    return len(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS))


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: apply ``patch`` to ``target`` and return the result (inputs are not changed)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = merge_patch(out.get(name), value)
    return out


def load() -> dict[str, Any]:
    """The current document (empty when there is none yet).

    Raises:
        UpstreamError: the file exists but cannot be read or is not a JSON object.
    """
    try:
        data = orjson.loads(path().read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, orjson.JSONDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not valid JSON"
        raise UpstreamError(
            f"cannot read the user facts document {path()}: {reason}",
            suggestion="fix or remove the file; `nxm facts update` then starts a new one",
            code="FACTS_UNREADABLE",
        ) from None
    if not isinstance(data, dict):
        raise UpstreamError(
            f"the user facts document {path()} is not a JSON object",
            suggestion="fix or remove the file",
            code="FACTS_UNREADABLE",
        )
    return data


def answer(doc: dict[str, Any]) -> dict[str, Any]:
    """What `nxm facts` and `nxm facts update` print."""
    return {"bytes": size(doc), "facts": doc, "max_bytes": MAX_BYTES}


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Hold the user data directory's lock (facts and the conversations recall has seen)."""
    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _check_patch(patch: dict[str, Any], where: str = "facts_patch") -> None:
    for name, value in patch.items():
        if not name.strip():
            raise ValidationError(
                f"{where} has an empty key", suggestion="name every path, e.g. {'editor': 'vim'}"
            )
        if isinstance(value, dict):
            _check_patch(value, f"{where}.{name}")


def update(patch: dict[str, Any]) -> dict[str, Any]:
    """Apply a merge patch to the document and save it; return the merged document.

    Raises:
        ValidationError: the patch is empty, has an empty key, or the result is over the cap
            (nothing is written).
    """
    if not patch:
        raise ValidationError(
            "facts_patch is empty: nothing to change",
            suggestion='set paths to values and null to delete, e.g. {"editor": "vim", "old": null}',
        )
    _check_patch(patch)
    with locked():
        merged = merge_patch(load(), patch)
        n = size(merged)
        if n > MAX_BYTES:
            raise ValidationError(
                f"the merged facts document would be {n} bytes; the cap is {MAX_BYTES} bytes",
                suggestion="prune stale or situational paths first (set them to null in the "
                "patch), then write again; nothing was changed",
                code="FACTS_TOO_LARGE",
            )
        atomic_write(path(), orjson.dumps(merged, option=orjson.OPT_SORT_KEYS), private=True)
    return answer(merged)


__all__ = ["MAX_BYTES", "answer", "load", "locked", "merge_patch", "path", "size", "update"]
