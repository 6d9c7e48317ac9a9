"""Linear connections: one key per organisation, under a label, kept owner-only.

Keys live in ``config_dir()/linear.json`` (0600), never in `.nxs/` (which people commit) nor in
any output. With none stored, ``LINEAR_API_KEY`` counts as one organisation labelled ``default``.
A label that names no connected organisation gets the disambiguation answer, never another
organisation's key (SPEC section 9).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from nxs.errors import ConflictError, NotFoundError, ValidationError, redact
from nxs.paths import atomic_write, config_dir

FILENAME = "linear.json"
ENV_KEY = "LINEAR_API_KEY"
ENV_LABEL = "default"
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
OAUTH_PREFIX = "lin_oauth_"
KEY_PREFIXES = ("lin_api_", OAUTH_PREFIX)


def looks_like_key(text: str) -> bool:
    """Whether a value someone typed is probably a Linear credential (never echo it)."""
    text = text.strip().lower()
    return text.startswith(KEY_PREFIXES) or text.startswith("bearer ")


@dataclass(frozen=True)
class Connection:
    """One connected organisation: its label and credential (the key is never shown)."""

    label: str
    key: str = field(repr=False)
    oauth: bool = False
    api_url: str | None = None
    source: str = "config"  # or "env"


class Disambiguation(Exception):
    """Raised when a call must name an organisation; carries the answer to return."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["message"])
        self.answer = answer


def path() -> Path:
    return config_dir() / FILENAME


def _read() -> dict[str, Any]:
    try:
        data = orjson.loads(path().read_bytes())
    except FileNotFoundError:
        return {"version": 1, "workspaces": {}}
    except orjson.JSONDecodeError:
        data, problem = None, "is not valid JSON"
    else:
        problem = "has an unexpected shape"
    if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
        raise ValidationError(
            f"{path()} {problem}",
            suggestion="delete it and connect again with `nxs linear connect LABEL`",
            code="BAD_LINEAR_CONFIG",
        )
    return data


def _write(data: dict[str, Any]) -> None:
    atomic_write(path(), orjson.dumps(data, option=orjson.OPT_INDENT_2), private=True)


def load() -> list[Connection]:
    """The connected organisations, in label order (``LINEAR_API_KEY`` when none is stored)."""
    stored = _read()["workspaces"]
    out = [
        Connection(label, entry["key"], bool(entry.get("oauth")), entry.get("api_url"))
        for label, entry in stored.items()
        if isinstance(entry, dict) and isinstance(entry.get("key"), str) and entry["key"]
    ]
    key = os.environ.get(ENV_KEY, "").strip()
    if not out and key:
        out.append(Connection(ENV_LABEL, key, key.startswith(OAUTH_PREFIX), source="env"))
    return sorted(out, key=lambda c: c.label.lower())


def connected() -> bool:
    """Whether any organisation is connected (a damaged file counts as none). Never raises."""
    try:
        return bool(load())
    except Exception:  # noqa: BLE001 - asked at server start, which must not fail on it
        return False


def labels() -> list[str]:
    """The labels of the connected organisations (never their keys)."""
    return [c.label for c in load()]


def check_label(label: str) -> str:
    """A valid label, stripped: 1-40 letters, digits, ``_.-``, and not a key (else refused)."""
    label = label.strip()
    if looks_like_key(label):
        raise ValidationError(
            "the label looks like a Linear key (not shown); keys are never taken as arguments",
            suggestion="name the organisation (e.g. AV) and pass the key on stdin: "
            "`pass show linear/av | nxs linear connect AV`; revoke the key if it reached "
            "your shell history",
            code="KEY_AS_ARGUMENT",
        )
    if not LABEL_RE.match(label):
        raise ValidationError(
            f"invalid label {label!r}",
            suggestion="use 1-40 letters, digits, '_', '.' or '-', e.g. AV",
        )
    return label


def check_key(key: str) -> str:
    """A plausible credential, stripped; refused when empty, spaced or absurdly long (its value
    never appears in the error)."""
    key = key.strip()
    if key.lower().startswith("bearer "):
        key = key[7:].strip()
    if not key or any(ch.isspace() for ch in key) or len(key) > 1024:
        raise ValidationError(
            "that does not look like a Linear API key or OAuth token",
            suggestion="pass the key alone on stdin (e.g. from your password manager)",
        )
    return key


def connect(label: str, key: str, *, oauth: bool = False, api_url: str | None = None) -> dict:
    """Store (or replace) the key of one organisation under its label (ConflictError when
    another label holds the same key)."""
    label, key = check_label(label), check_key(key)
    data = _read()
    stored: dict[str, Any] = data["workspaces"]
    same = next((k for k in stored if k.lower() == label.lower()), None)
    for other, entry in stored.items():
        if other != same and isinstance(entry, dict) and entry.get("key") == key:
            raise ConflictError(
                f"that key is already connected as {other!r}",
                suggestion=f"one key per organisation: `nxs linear disconnect {other}` first",
                code="KEY_ALREADY_CONNECTED",
            )
    if same is not None:
        del stored[same]
    entry: dict[str, Any] = {"key": key, "oauth": oauth or key.startswith(OAUTH_PREFIX)}
    if api_url:
        entry["api_url"] = api_url
    stored[label] = entry
    data["version"] = 1
    _write(data)
    return {
        "connected": label, "replaced": same is not None, "oauth": entry["oauth"],
        "workspaces": labels(), "stored_in": str(path()),
    }  # fmt: skip


def disconnect(label: str) -> dict:
    """Forget the key stored under a label, case-insensitive (NotFoundError: none has it)."""
    data = _read()
    stored: dict[str, Any] = data["workspaces"]
    match = next((k for k in stored if k.lower() == label.strip().lower()), None)
    if match is None:
        raise NotFoundError(
            f"no Linear workspace labelled {label!r} is connected",
            suggestion="list them with `nxs linear workspaces`",
            code="UNKNOWN_LINEAR_WORKSPACE",
        )
    del stored[match]
    _write(data)
    return {"disconnected": match, "workspaces": labels()}


def _match(conns: list[Connection], name: str) -> Connection | None:
    return next((c for c in conns if c.label.lower() == name.strip().lower()), None)


def select(org: str | None) -> Connection:
    """The organisation a call uses.

    Raises:
        NotFoundError: nothing is connected.
        Disambiguation: ``org`` names no connected organisation (whatever the number
            connected), or is missing while two or more are connected.
    """
    conns = load()
    if not conns:
        raise NotFoundError(
            "no Linear workspace is connected",
            suggestion="run `nxs linear connect LABEL` (key on stdin) or set LINEAR_API_KEY",
            code="LINEAR_NOT_CONNECTED",
        )
    if org is None and len(conns) == 1:
        return conns[0]
    available = [c.label for c in conns]
    names = ", ".join(available)
    if org is not None:
        if match := _match(conns, org):
            return match
        message = f"No Linear workspace is labelled {org!r}. Pass org with one of: {names}."
        if len(conns) == 1:
            message += " Or leave org out: only one is connected."
        shown = org.strip() if LABEL_RE.match(org.strip()) and not looks_like_key(org) else "LABEL"
        suggestion = (
            f"pass org with one of: {names}; to add that organisation, "
            f"`nxs linear connect {shown}` (key on stdin)"
        )
    else:
        message = f"{len(conns)} Linear workspaces are connected. Pass org with one of: {names}."
        suggestion = f"pass org (alias linear_workspace) with one of: {names}"
    answer = {"success": True, "disambiguation_required": True, "available_workspaces": available}
    raise Disambiguation({**answer, "message": redact(message), "suggestion": redact(suggestion)})


def check_workspace(workspace: str | None) -> None:
    """Refuse a bare word as ``workspace`` (seed 000's spelling of the organisation).

    In nxs ``workspace`` is the workspace path (SPEC section 2). On a Linear action a bare word
    (a label's shape) may be an organisation's name, connected or not (with ``LINEAR_API_KEY``
    its label is unknown): it is refused, never used as a path, even where a directory of that
    name is an nxs workspace; ``./AV`` names the folder."""
    name = (workspace or "").strip()
    if not LABEL_RE.match(name):
        return
    conns = load()
    match, orgs = _match(conns, name), ", ".join(c.label for c in conns) or "none connected yet"
    raise ValidationError(
        f"workspace {name!r} "
        + ("names a connected" if match else "is a bare name that may mean a")
        + " Linear organisation, but in nxs workspace is the nxs workspace path; the Linear "
        "organisation is chosen with org",
        suggestion=f"pass org={match.label!r} (alias linear_workspace) instead of workspace"
        if match
        else f"pass org for the organisation (connected: {orgs}); for a folder of that name "
        f"pass ./{name}",
        code="USE_ORG",
    )


__all__ = [
    "Connection", "Disambiguation", "check_key", "check_label", "check_workspace", "connect",
    "disconnect", "labels", "load", "looks_like_key", "path", "select",
]  # fmt: skip
