"""The committed form of a memory: a Markdown file and an event log, both text git merges.

``.nxs/memories/<key>.md`` holds what a memory says: front matter with its classification and
lifecycle fields, then the body as Markdown::

    ---
    introduction: Release tags come from main only
    priority: HIGH
    ---

    Release tags are cut from main only; CI refuses others.

``.nxs/history/<key>.jsonl`` holds what happened to it, one event a line, merged by event
(`nxm.store.merge`; git's ``union`` driver where that is not configured, `GITATTRIBUTES`), so
two branches that act on one memory keep both events. What the events tell (``created``,
``updated``, ``actor``, the feedback counts) is not written twice, so a body edit on one branch
and a vote on another touch different files. ``processing`` and ``model`` (`LOCAL`) are this
machine's: never committed.

Front matter is a strict subset of YAML that `render` writes and a person can edit: one
``name: value`` a line; a value is plain text, or JSON; block lists (``- item``) and single
quotes are read too. A body line that looks like a conflict marker (``=======``) is written
with one more backslash in front (`render`) and read without it (`parse`), so a file is in
conflict only when git's markers make a conflict's shape (`conflicted`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import orjson

from nxm.record import FIELDS, KEY_LEN, field_problem

# Front matter fields in the order they are written; those in ALWAYS even when default.
COMMITTED = (
    "introduction", "category", "scope", "status", "priority", "layer", "expires", "refs",
    "user_id", "agent_id", "session_id", "persona", "program_tool", "user_query", "billable",
    "company_client", "client_project", "artifact_url", "metadata",
)  # fmt: skip
ALWAYS = ("introduction", "scope", "status", "priority")
LOCAL = ("processing", "model")  # this machine's index
NOT_EDITS = ("FEEDBACK_SUBMITTED", "EMBEDDED", "IMPORTED")  # a reader's signal, a load
KEY = re.compile(rf"^[0-9a-f]{{{KEY_LEN}}}$")
CONFLICT = re.compile(rb"^(<{7}|={7}|>{7})(\s|$)", re.M)  # a line that may be a marker
_ESCAPE = re.compile(r"^(?=\\*(<{7}|={7}|>{7}|\|{7}))", re.M)
_UNESCAPE = re.compile(r"^\\(?=\\*(<{7}|={7}|>{7}|\|{7}))", re.M)

GITIGNORE = b"""\
# nxs: a write in progress (and what earlier versions derived here)
journal
index/
cache/
"""
# The committed fallbacks: each clone routes these files to nxs's driver (`nxm.store.gitconfig`).
GITATTRIBUTES = b"""\
# nxs: a memory's history is an append-only log; a merge keeps both sides' events
history/*.jsonl text eol=lf merge=union
memories/*.md text eol=lf
graph.jsonl text eol=lf merge=union
"""


class FileProblem(ValueError):
    """A memory's files do not make a record (the message says where and why)."""


_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "~", ""}
_UNSAFE = re.compile(r"^[-?:,\[\]{}#&*!|>'\"%@`\s]|: |\s#|:$|\s$|[\x00-\x1f\x7f\u2028\u2029\ufeff]")
_NUMBER = re.compile(r"^[-+]?(\.?\d|\.inf|\.nan)", re.I)


def _value(value: Any) -> str:
    if isinstance(value, str):
        plain = value.lower() not in _RESERVED and not _UNSAFE.search(value)
        return value if plain and not _NUMBER.match(value) else orjson.dumps(value).decode()
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def render(record: dict[str, Any]) -> bytes:
    """The Markdown file of a record (its committed fields and body)."""
    lines = ["---"]
    for name in COMMITTED:
        value = record.get(name, FIELDS[name])
        if name in ALWAYS or value != FIELDS[name]:
            lines.append(f"{name}: {_value(value)}")
    lines += ["---", "", _ESCAPE.sub("\\\\", record["body"].strip("\n")), ""]
    return "\n".join(lines).encode("utf-8")


def _scalar(text: str, where: str) -> Any:
    text = text.strip()
    if text[:1] in ('"', "[", "{") or text in ("null", "true", "false") or _NUMBER.match(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            if text[:1] == "[" and text.endswith("]"):  # a YAML flow list of plain words
                return [_scalar(p, where) for p in text[1:-1].split(",") if p.strip()]
            raise FileProblem(f"{where}: cannot read the value {text[:60]!r}") from None
    if text[:1] == "'":
        if len(text) < 2 or not text.endswith("'"):
            raise FileProblem(f"{where}: an unclosed quote")
        return text[1:-1].replace("''", "'")
    if text == "~":
        return None
    return re.sub(r"\s+#.*$", "", text)  # a YAML comment after a plain value


def parse(raw: bytes, where: str) -> dict[str, Any]:
    """The committed fields and body of a Markdown memory file.

    Raises:
        FileProblem: not UTF-8, no front matter, an unknown field, a value that does not read,
            or merge conflict markers left in it.
    """
    if conflicted(raw):
        raise FileProblem(f"{where} has unresolved merge conflict markers")
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise FileProblem(f"{where} is not UTF-8 text") from None
    head, sep, body = text.removeprefix("---\n").partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        if text.startswith("---\n") and head.endswith("\n---"):  # no body at all
            head, body = head[:-4], ""
        else:
            raise FileProblem(f"{where} has no front matter (--- lines around name: value lines)")
    out: dict[str, Any] = {}
    name = None
    for n, line in enumerate(head.split("\n"), 2):
        spot = f"{where} line {n}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t", "-")) and line.lstrip().startswith("- ") and name:
            if not isinstance(out[name], list):
                raise FileProblem(f"{spot}: a list item under {name}, which is not a list")
            out[name].append(_scalar(line.lstrip()[2:], spot))
            continue
        got = re.match(r"^([a-z_]+):(?:\s+(.*))?$", line)
        if not got:
            raise FileProblem(f"{spot}: expected `name: value`, got {line[:60]!r}")
        name, value = got.group(1), got.group(2)
        if name not in COMMITTED:
            raise FileProblem(f"{spot}: unknown field {name!r}")
        out[name] = _scalar(value, spot) if value and value.strip() else []
        if not (value and value.strip()) and not isinstance(FIELDS[name], list):
            out[name] = None  # an empty value is null, unless a block list follows
    if "introduction" not in out:
        raise FileProblem(f"{where} has no introduction")
    out["body"] = _UNESCAPE.sub("", body.strip("\n"))
    return out


def _lines(raw: bytes) -> list[bytes]:
    """The lines of a file, each with its newline (git's markers are lines ended by \\n)."""
    parts = raw.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _marker(line: bytes, char: bytes) -> bytes | None:
    """The label of a conflict marker line of ``char`` ('' when it has none), or None."""
    line = line.rstrip(b"\r\n")
    if not line.startswith(char * 7):
        return None
    rest = line[7:]
    if char == b"=":
        return b"" if not rest else None
    return rest[1:] if not rest or rest[:1] == b" " else None


def _hunks(raw: bytes) -> list[tuple[str, bytes]] | None:
    """The file as ("both" | "ours" | "base" | "theirs" | "<" | ">", line) pairs, its conflicts'
    markers tagged "<" and ">" (with their labels), or None when it holds no whole conflict."""
    lines = _lines(raw)
    out: list[tuple[str, bytes]] = []
    i, found = 0, False
    while i < len(lines):
        start = _marker(lines[i], b"<")
        end = None
        if start is not None:  # a conflict: <<<, [|||], ===, >>> in this order
            j, middle, base = i + 1, None, None
            while j < len(lines) and middle is None:
                if _marker(lines[j], b"<") is not None or _marker(lines[j], b">") is not None:
                    break
                if base is None and _marker(lines[j], b"|") is not None:
                    base = j
                elif _marker(lines[j], b"=") is not None:
                    middle = j
                j += 1
            while middle is not None and j < len(lines) and end is None:
                if _marker(lines[j], b"<") is not None:
                    break
                if _marker(lines[j], b">") is not None:
                    end = j
                j += 1
        if end is None:
            out.append(("both", lines[i]))
            i += 1
            continue
        found = True
        stop = base if base is not None else middle
        out.append(("<", start))
        out += [("ours", ln) for ln in lines[i + 1 : stop]]
        out += [("base", ln) for ln in lines[stop + 1 : middle]] if base is not None else []
        out += [("theirs", ln) for ln in lines[middle + 1 : end]]
        out.append((">", _marker(lines[end], b">") or b""))
        i = end + 1
    return out if found else None


def conflicted(raw: bytes) -> bool:
    """Whether git left a conflict in this file: a ``<<<<<<<`` line, later ``=======`` (after
    an optional ``|||||||`` base section), later ``>>>>>>>`` (a lone ``=======`` is a heading)."""
    return CONFLICT.search(raw) is not None and _hunks(raw) is not None


def sides(raw: bytes) -> tuple[bytes, bytes, str, str]:
    """The two texts a conflicted file was merged from, and its first conflict's labels."""
    hunks = _hunks(raw) or [("both", ln) for ln in _lines(raw)]
    ours = b"".join(ln for tag, ln in hunks if tag in ("both", "ours"))
    theirs = b"".join(ln for tag, ln in hunks if tag in ("both", "theirs"))
    labels = [ln.decode("utf-8", "replace") for tag, ln in hunks if tag in ("<", ">")]
    return ours, theirs, (labels[0] if labels else ""), (labels[1] if labels else "")


def event_line(event: dict[str, Any]) -> bytes:
    """One event as a log line (sorted keys, one line)."""
    return orjson.dumps(event, option=orjson.OPT_SORT_KEYS) + b"\n"


def parse_log(raw: bytes, where: str) -> list[dict[str, Any]]:
    """The events of a log, in the order written; a last line cut short is left out.

    Raises:
        FileProblem: a line that is not an event, or merge conflict markers.
    """
    if conflicted(raw):
        raise FileProblem(f"{where} has unresolved merge conflict markers")
    lines = raw.split(b"\n")
    events = []
    for n, line in enumerate(lines[:-1], 1):  # the part after the last newline is cut short
        if not line.strip():
            continue
        try:
            e = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise FileProblem(f"{where} line {n} is not JSON") from None
        if not isinstance(e, dict) or not all(isinstance(e.get(f), str) for f in ("type", "at")):
            raise FileProblem(f"{where} line {n} is not an event (type, at, actor)")
        events.append(e)
    return events


def derived(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the events tell of a record: created, updated and actor, and the feedback counts."""
    edits = [e for e in events if e["type"] not in NOT_EDITS] or events
    last = max(reversed(edits), key=lambda e: e["at"]) if edits else {}
    votes = Counter(
        (e.get("data") or {}).get("signal") for e in events if e["type"] == "FEEDBACK_SUBMITTED"
    )
    return {
        "created": min(e["at"] for e in events) if events else None, "updated": last.get("at"),
        "actor": last.get("actor"), "feedback": {s: votes.get(s, 0) for s in FIELDS["feedback"]},
    }  # fmt: skip


def record_of(key: str, md: bytes, log: bytes | None, where: str) -> dict[str, Any]:
    """The record a memory's two files make (``processing``/``model`` left at their defaults).

    Raises:
        FileProblem: either file does not read.
    """
    fields = parse(md, f"{where}/memories/{key}.md")
    events = parse_log(log, f"{where}/history/{key}.jsonl") if log is not None else []
    record = {k: (v.copy() if isinstance(v, dict | list) else v) for k, v in FIELDS.items()}
    record.update(fields, key=key, events=events, **derived(events))
    for name, default in FIELDS.items():
        value, what = record[name], None
        if isinstance(default, list):
            if not isinstance(value, list):
                record[name] = [value] if value is not None else []
        elif isinstance(default, bool):
            what = None if isinstance(value, bool) else "true or false"
        elif isinstance(default, dict):
            what = None if isinstance(value, dict) else "an object"
        elif value is not None and not isinstance(value, str):
            if isinstance(value, int | float):  # `category: 2024` reads as a number
                record[name] = str(value)
            else:
                what = "text"
        if what:
            raise FileProblem(f"{where}/memories/{key}.md: {name} must be {what}")
    record["refs"] = [str(r) for r in record["refs"]]
    if why := field_problem(record):  # what the repository says is data: checked on read
        raise FileProblem(f"{where}/memories/{key}.md or its history has {why}")
    return record


def reconciled(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's events, with what `derived` needs to tell its fields added (an import)."""
    from nxm.record import event

    events = list(record.get("events") or [])
    created, updated = record.get("created"), record.get("updated")
    actor = record.get("actor") or "nxs"
    if created and (not events or created < min(e["at"] for e in events)):
        events.insert(0, event("CREATED", created, actor))
    have = derived(events)
    if updated and (have["updated"], have["actor"]) != (updated, actor):
        events.append(event("UPDATED", updated, actor, fields=[]))
    counts = derived(events)["feedback"]
    for signal, want in (record.get("feedback") or {}).items():
        for _ in range(int(want) - counts.get(signal, 0)):
            at = max(e["at"] for e in events)
            events.append(event("FEEDBACK_SUBMITTED", at, actor, signal=signal))
    return events
