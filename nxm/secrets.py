"""Credential-shaped strings in memory text: found before a write, refused unless allowed.

Memories are committed with the project and sent to every session, so a key pasted into a body
leaks to everyone who clones the repository. A write holding one is refused unless the caller
says it is not a secret (``allow_secret``); the error names the kind and where, never the text.
Patterns are the well-known shapes and ``name = value`` assignments of a long mixed value to a
secret-sounding name; placeholders (``<password>``, ``${TOKEN}``, ``****``) are not secrets.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from nxs.errors import ValidationError

_SHAPES: tuple[tuple[str, str], ...] = (
    ("an AWS access key ID", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b"),
    ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("a Stripe key", r"\b[sr]k_live_[A-Za-z0-9]{16,}"),
    ("an OpenAI or Anthropic key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("a Linear API key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
    ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ("a webhook URL", r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{20,}|"
     r"\bdiscord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    ("a SendGrid key", r"\bSG\.[\w-]{16,}\.[\w-]{30,}"),
    ("a Twilio key", r"\bSK[0-9a-f]{32}\b"),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("an Azure key", r"(?i)\b(?:AccountKey|SharedAccessKey|sig)=[A-Za-z0-9+/%]{20,}"),
    ("a bearer token", r"(?i)\bBearer\s+[A-Za-z0-9._~+/-]{20,}"),
)  # fmt: skip
# What hides a shape from a pattern but not from a reader: zero-width and format characters.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
# user:password@ in a URL (the password group is checked against PLACEHOLDER)
_URL_PASSWORD = r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:([^\s/@]+)@[^\s/@]"
# secret_key = "…", "password": "…", AWS_SECRET_ACCESS_KEY=…
_ASSIGNED = (
    r"(?i)\b[\w.-]*(?:(secret|passw(?:or)?d|pwd)[\w.-]*|(?:api|access|private)[_-]?key[\w.-]*|"
    r"token)[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{6,})"
)
_PLACEHOLDER = (
    r"(?i)^(?:<[^>]*>|\$\{?[\w.-]+\}?|\{\{.*\}\}|[*x.•]+|(?:my|your|the)?[-_]?"
    r"(?:password|passwd|pass|secret|token|key|changeme|example|redacted|placeholder|dummy|test)"
    r"[-_\w]*)$"
)


@functools.cache
def _compiled() -> Any:
    """The patterns, compiled on first use (~2 ms that a read never pays)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        PATTERNS=tuple((kind, re.compile(pattern)) for kind, pattern in _SHAPES),
        URL_PASSWORD=re.compile(_URL_PASSWORD),
        ASSIGNED=re.compile(_ASSIGNED),
        PLACEHOLDER=re.compile(_PLACEHOLDER),
    )


def _mixed(value: str) -> bool:
    """A value that looks generated: letters and digits, not a word or a path of words."""
    return bool(re.search(r"[A-Za-z]", value) and re.search(r"\d", value)) and not (
        _compiled().PLACEHOLDER.match(value)
    )


def find(text: str) -> list[tuple[str, int]]:
    """The credential-shaped strings in ``text``: (what kind, character offset), in order;
    invisible characters are read past (an offset counts the visible ones)."""
    c = _compiled()
    text = _INVISIBLE.sub("", text)
    found = [(kind, m.start()) for kind, rx in c.PATTERNS for m in rx.finditer(text)]
    found += [
        ("a password in a URL", m.start())
        for m in c.URL_PASSWORD.finditer(text)
        if not c.PLACEHOLDER.match(m.group(1))
    ]
    found += [  # a password may be short (hunter2); a key or token is long and generated
        ("a secret assigned to a name", m.start(2))
        for m in c.ASSIGNED.finditer(text)
        if _mixed(m.group(2)) and (m.group(1) or len(m.group(2)) >= 12)
    ]
    return sorted(set(found), key=lambda f: f[1])


REMOVED = "[removed: it held what looks like a credential]"


def redact(value: Any, each: Any = None) -> Any:
    """``value`` (a string, or lists and objects of them) with each string that holds a
    credential replaced by `REMOVED` (``each``: a function of each string instead)."""
    if isinstance(value, str):
        return each(value) if each else REMOVED if find(value) else value
    if isinstance(value, dict):
        return {redact(k, each): redact(v, each) for k, v in value.items()}
    return [redact(v, each) for v in value] if isinstance(value, list | tuple) else value


def refuse(allow: bool = False, **fields: Any) -> None:
    """Refuse any text that holds a credential, unless ``allow``: each field a string, or a
    list or object of them (refs, metadata).

    Raises:
        ValidationError: ``SECRET_REFUSED`` naming the field, the kind and the offset (never
            the text).
    """
    if allow:
        return
    for name, value in fields.items():
        texts: list[str] = []
        redact(value, texts.append)  # every string in it: refs, metadata's keys and values
        hits = next((h for text in texts if (h := find(text))), [])
        if hits:
            kind, at = hits[0]
            more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
            raise ValidationError(
                f"the {name} holds what looks like {kind} at character {at}{more}; memories "
                "are committed with the project and read by every session, so nothing was "
                "written",
                suggestion="remove it (keep credentials in a secret manager or the "
                "environment), or pass allow_secret (--allow-secret) if it is not a secret",
                code="SECRET_REFUSED",
            )


__all__ = ["REMOVED", "find", "redact", "refuse"]
