"""The memory record (SPEC section 4) and the rules that mint and order it.

A record is a plain dict with exactly the keys of `FIELDS`, so that it serializes the same way
on every seam and round-trips through export/import unchanged. `new_record` makes one,
`key_for` mints its content-hash key, `reading_order` sorts records the way list and prime read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from nxs.render import parse_timestamp

STATUSES = ("open", "closed", "forgotten")
SCOPES = ("project", "item", "user", "session")  # user: one person's; session: one conversation's
PRIORITIES = ("HIGH", "MEDIUM", "LOW")
LAYERS = ("PERMANENT", "TASK")
CHOICES = {"status": STATUSES, "priority": PRIORITIES, "scope": SCOPES, "layer": LAYERS}
SIGNALS = ("POSITIVE", "NEGATIVE", "NEUTRAL")
INTRO_MAX = 200
# Control characters (C0 but tab, DEL, C1), bidi overrides and line/paragraph separators: an
# introduction is one plain line in prime and NEXUS_MEMORY.md.
CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
KEY_LEN = 16

FIELDS: dict[str, Any] = {
    "key": None, "introduction": "", "body": "",
    "category": None, "scope": "project", "refs": [], "status": "open", "processing": "PENDING",
    "priority": "MEDIUM", "layer": "PERMANENT", "expires": None,
    "actor": None, "created": None, "updated": None,
    "user_id": None, "agent_id": None, "session_id": None, "persona": None, "program_tool": None,
    "user_query": None, "billable": False, "company_client": None, "client_project": None,
    "artifact_url": None, "metadata": {}, "model": None,
    "feedback": {"POSITIVE": 0, "NEGATIVE": 0, "NEUTRAL": 0}, "events": [],
}  # fmt: skip

_SPACE = re.compile(r"\s+")


def normalise(body: str) -> str:
    """The form a body is hashed in: NFC, whitespace runs folded, ends trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", body)).strip()


def body_hash(body: str) -> str:
    """Full sha256 hex of the normalised body (a write finds a memory with the same body by it)."""
    import hashlib  # here: reads (list, show, prime) hash nothing, and OpenSSL is slow to load

    return hashlib.sha256(normalise(body).encode("utf-8")).hexdigest()


def key_for(body: str, salt: int = 0) -> str:
    """The content-hash key of a body (salted only when the plain key is already taken)."""
    import hashlib

    if salt == 0:
        return body_hash(body)[:KEY_LEN]
    return hashlib.sha256(f"{salt}\x00{normalise(body)}".encode()).hexdigest()[:KEY_LEN]


def field_problem(record: dict[str, Any]) -> str | None:
    """What a record's own values break, as a file or an import line says them: an unknown
    status, priority, scope or layer (such a memory could not be closed), a category that is
    not a short plain word (it would print escapes or forge a line), a time that does not
    parse (stats would fail)."""
    for name, allowed in CHOICES.items():  # a hand edit's case is forgiven: priority: high
        value = str(record.get(name)).lower()
        record[name] = next((a for a in allowed if a.lower() == value), record.get(name))
        if record[name] not in allowed:
            return f"an unknown {name} ({str(record.get(name))[:40]!r}; {', '.join(allowed)})"
    category = record.get("category")
    if category is not None and (len(category) > 64 or CONTROL.search(category)):
        return "a category that is not a short plain word (no control characters, at most 64)"
    times = [record.get("expires"), *(e.get("at") for e in record.get("events") or [])]
    for text in (t for t in times if t is not None):
        try:
            parse_timestamp(text)
        except (ValueError, OverflowError, TypeError, AttributeError):
            return f"a time that does not parse ({str(text)[:40]!r})"
    return None


def new_record(**values: Any) -> dict[str, Any]:
    """A record with every field, defaults filled in (mutable defaults copied)."""
    record = {k: (v.copy() if isinstance(v, dict | list) else v) for k, v in FIELDS.items()}
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise KeyError(f"unknown record fields: {sorted(unknown)}")
    record.update(values)
    return record


def complete(record: dict[str, Any]) -> dict[str, Any]:
    """A stored or imported record with any missing fields defaulted and unknown ones dropped."""
    return new_record(**{k: v for k, v in record.items() if k in FIELDS})


def event(kind: str, at: str, actor: str, **data: Any) -> dict[str, Any]:
    """One history event."""
    out: dict[str, Any] = {"type": kind, "at": at, "actor": actor}
    data = {k: v for k, v in data.items() if v is not None}
    if data:
        out["data"] = data
    return out


_PRIORITY_RANK = {p: i for i, p in enumerate(PRIORITIES)}


def reading_sort_key(record: dict[str, Any]) -> tuple[Any, ...]:
    """Reading order: priority (HIGH first), category (uncategorised last), oldest first, key."""
    category = record.get("category")
    return (
        _PRIORITY_RANK.get(record.get("priority", "MEDIUM"), 1),
        category is None,
        category or "",
        record.get("created") or "",
        record["key"],
    )


def order_bytes(record: dict[str, Any]) -> bytes:
    """`reading_sort_key` as bytes that sort the same (the record cache orders by them):
    each string escaped (NUL as NUL 1) and ended by NUL NUL, which sorts below any character."""
    rank, uncategorised, *texts = reading_sort_key(record)
    return f"{rank}{uncategorised:d}".encode() + b"".join(
        t.encode().replace(b"\0", b"\0\1") + b"\0\0" for t in texts
    )


def ref_matches(ref: str, wanted: str) -> bool:
    """Whether a ref filter takes this ref: the same ref, or a path under it."""
    if ref == wanted:
        return True
    base = wanted.rstrip("/")
    return bool(base) and (ref.rstrip("/") == base or ref.startswith(base + "/"))


def reading_order(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records sorted in reading order (a total order: ties end at the key)."""
    return sorted(records, key=reading_sort_key)


SUMMARY_FIELDS = (
    "key", "introduction", "category", "scope", "refs", "status", "priority", "layer",
    "processing", "expires", "created", "updated",
)  # fmt: skip


def summary(record: dict[str, Any]) -> dict[str, Any]:
    """The short form list and search return (show returns the whole record)."""
    return {k: record[k] for k in SUMMARY_FIELDS}


_IDENTIFIER = re.compile(r"\b\w+(?:[-./:]\w+)+\b|\b\w*_\w+\b|\b[a-z]+[A-Z]\w*\b")


def identifiers(text: str) -> list[str]:
    """Identifiers in ``text`` joined into one token each (``errledgerlocked``), so an exact one
    outranks its namesakes the full-text tokenizer splits into the same common words."""
    joined = (re.sub(r"[\W_]+", "", m).lower() for m in _IDENTIFIER.findall(text))
    return list(dict.fromkeys(j for j in joined if len(j) >= 4))


def indexed_text(record: dict[str, Any]) -> str:
    """The text keyword and semantic search see for a record."""
    parts = [record["introduction"], record["body"]]
    if record.get("category"):
        parts.append(f"category: {record['category']}")
    if record.get("refs"):
        parts.append("refs: " + " ".join(record["refs"]))
    if record.get("user_query"):
        parts.append(record["user_query"])
    ids = identifiers("\n".join(parts))
    if ids:
        parts.append("identifiers: " + " ".join(ids))
    return "\n".join(p for p in parts if p)


def embedded_text(record: dict[str, Any]) -> str:
    """The text a record's vector is made from: what it says, without the labels
    `indexed_text` adds for keyword search (they pull every vector toward each other)."""
    parts = [record["introduction"], record["body"], record.get("user_query")]
    return "\n".join(p for p in parts if p)


CONTEXT = 2  # memories said just before a session memory whose bodies are its keyword context


def _session_orders(records: dict[str, dict[str, Any]], sessions: set[str]) -> list[list[str]]:
    """The keys of each of ``sessions``' memories in time order (forgotten ones left out)."""
    members: dict[str, list[tuple[str, str]]] = {}
    among = getattr(records, "in_sessions", None)  # `nxm.store.Records` finds them by an index
    for r in (among(sessions) if among else records.values()) if sessions else ():
        if r.get("session_id") in sessions and r.get("status") != "forgotten":
            members.setdefault(r["session_id"], []).append((r.get("created") or "", r["key"]))
    return [[k for _, k in sorted(m)] for m in members.values()]


def contexts(records: dict[str, dict[str, Any]], keys: Iterable[str]) -> dict[str, str]:
    """Each key's `indexed_text` and the bodies of the memories just before it in its session,
    so that a reply ("Yes, in Paris") is found by the words of what it answers."""
    out = {k: indexed_text(records[k]) for k in keys}
    sessions = {records[k]["session_id"] for k in out if records[k].get("session_id")}
    for order in _session_orders(records, sessions):
        for i, key in enumerate(order):
            if key in out and i:
                before = order[max(0, i - CONTEXT) : i][::-1]
                out[key] = "\n".join([out[key], *(records[k]["body"] for k in before)])
    return out


def memories(n: int, word: str = "") -> str:
    """``1 open memory``, ``2 open memories``."""
    return f"{n}{word and ' ' + word} memor{'y' if n == 1 else 'ies'}"
