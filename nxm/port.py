"""Export and import: JSON Lines, one memory per line in key order, with its history.

The file is stable bytes (sorted keys, key order, no vectors), so it diffs and merges well in
git. Import is idempotent by key, checks every line before writing anything, embeds in batches
and commits in chunks: it is the fast way to load many memories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from nxm import secrets
from nxm.record import FIELDS, body_hash, complete, event, field_problem, key_for
from nxm.service import _body, _intro
from nxm.store.text import KEY, LOCAL, reconciled
from nxs.context import CLI_ACTOR_ENV, resolve_actor, resolve_now
from nxs.errors import ValidationError
from nxs.render import line, parse_timestamp

CHUNK = 2048  # records per embedding batch and commit
SALTS = 16  # salted keys recognised as minted (add salts only when a key is already taken)


def _shape_problem(record: dict[str, Any]) -> str | None:
    """What would make a record break the reads: a wrong type, a timestamp that does not parse."""
    for name, default in FIELDS.items():
        value = record[name]
        if isinstance(default, bool | list | dict):
            ok = isinstance(value, type(default))
        else:  # text, or null
            ok = value is None or isinstance(value, str)
        if not ok:
            return f"a wrong type for {name}"
    if not all(isinstance(r, str) for r in record["refs"]):
        return "refs that are not strings"
    if not all(type(v) is int and v >= 0 for v in record["feedback"].values()):
        return "feedback counts that are not whole numbers"
    if b"\\u0000" in orjson.dumps(record):
        return "a NUL character"
    times = [record[n] for n in ("created", "updated", "expires") if record[n] is not None]
    for e in record["events"]:
        if not isinstance(e, dict) or not all(isinstance(e.get(f), str) for f in ("type", "at")):
            return "a malformed event"
        times.append(e["at"])
    for text in times:
        try:
            parse_timestamp(text)
        except (ValueError, OverflowError):
            return f"a timestamp that does not parse ({text[:40]!r})"
    return None


def _rule_problem(record: dict[str, Any]) -> str | None:
    """What add would refuse in a record (an import must not add a line to prime add could not)."""
    key = record["key"]
    if key is not None and (not isinstance(key, str) or not KEY.match(key)):
        return (
            f"a key that is not a memory key ({str(key)[:40]!r}: 16 lowercase hex digits); "
            "leave it out to have one minted"
        )
    try:
        _intro(record["introduction"])
    except ValidationError as exc:
        return f"an introduction that add refuses: {exc.message}"
    return field_problem(record)


def _key_of(record: dict[str, Any], current: Any, taken: set[str]) -> tuple[str, bool]:
    """The key a record is imported under (its own if a content hash of it), and whether new."""
    body, key = record["body"], record["key"]
    edited = any(
        e.get("type") == "UPDATED" and "body" in ((e.get("data") or {}).get("fields") or ())
        for e in record["events"]
    )
    if key is not None and (edited or key in {key_for(body, salt) for salt in range(SALTS)}):
        return key, False
    salt, minted = 0, key_for(body)
    while (minted in current and body_hash(current[minted]["body"]) != body_hash(body)) or (
        minted in taken
    ):
        salt += 1
        minted = key_for(body, salt)
    return minted, key is not None


def _committed(record: dict[str, Any]) -> dict[str, Any]:
    """A record without this machine's fields and IMPORTED events (a load, not a change)."""
    out = {k: v for k, v in record.items() if k not in LOCAL}
    out["events"] = [e for e in record["events"] if e.get("type") != "IMPORTED"]
    return out


def export_lines(records: dict[str, dict[str, Any]]) -> Iterable[bytes]:
    """Each record as one JSON line, in key order: the same bytes on any machine."""
    for key in sorted(records):
        yield line({k: v for k, v in records[key].items() if k not in LOCAL})


def _limits(n: int, record: dict[str, Any]) -> None:
    """Refuse what add or store-context would: a body over 200,000 characters, 51 refs, …"""
    from nxm.ops import OPERATIONS, session
    from nxs.ops import validate

    required = {"summary": "-", "context": "-", "conversation_id": "-"}  # store-context's
    for op in (o for o in OPERATIONS + session.OPERATIONS if o.name in ("add", "store_context")):
        given = {p.name: record[p.name] for p in op.params if record.get(p.name) is not None}
        try:
            validate(op, given if op.name == "add" else {**given, **required})
        except ValidationError as exc:
            raise _refused(n, f"has what add refuses: {exc.message}") from None


def _refused(n: int, what: str) -> ValidationError:
    return ValidationError(f"line {n} {what}", suggestion="nothing was imported")


def parse_lines(data: bytes, allow_secrets: bool = False) -> list[dict[str, Any]]:
    """Parse and check an export; refuse the whole file on the first bad line (one holding a
    credential-shaped string too, unless ``allow_secrets``).

    Raises:
        ValidationError: a line that is not a memory record.
    """
    out = []
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise _refused(n, f"is not valid JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise _refused(n, "is not a JSON object")
        missing = [
            f for f in ("body", "introduction") if not isinstance(obj.get(f), str) or not obj[f].strip()
        ]  # fmt: skip
        if missing:
            raise _refused(n, f"lacks {', '.join(missing)}")
        unknown = sorted(set(obj) - set(FIELDS))
        if unknown:
            raise _refused(n, f"has unknown fields: {', '.join(unknown)}")
        record = complete(obj)
        problem = _shape_problem(record) or _rule_problem(record)
        if problem:
            raise _refused(n, f"has {problem}")
        _limits(n, record)
        record["introduction"] = record["introduction"].strip()
        record["body"] = _body(record["body"])
        try:
            secrets.refuse(allow_secrets, **record)  # every field: all of it is committed
        except ValidationError as exc:
            raise ValidationError(
                f"line {n}: {exc.message}",
                suggestion="nothing was imported; remove it, or pass --allow-secret",
                code=exc.code,
            ) from None
        record["processing"] = "PENDING"
        out.append(record)
    return out


def import_records(
    service: Any, records: list[dict[str, Any]], *, replace: bool = False,
    progress: Callable[[int], None] | None = None, record: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """Write parsed records (an existing key or body skipped, or replaced), each with an
    IMPORTED event unless ``record`` is false (a fixture that stands for its own events)."""
    now, actor = resolve_now(None), resolve_actor(None, CLI_ACTOR_ENV)
    counts = {"imported": 0, "replaced": 0, "skipped": 0, "reminted": 0}
    tick = progress or (lambda n: None)
    service.embedder()  # load the model before taking the lock
    with service.store.writing() as current:
        todo: list[dict[str, Any]] = []
        taken: set[str] = set()
        seen: set[str] = set()
        for r in records:
            r["key"], reminted = _key_of(r, current, taken)
            digest = body_hash(r["body"])
            twin = [k for k in current.with_body(digest) if k != r["key"]]
            if twin or digest in seen:  # the same body under another key: add returns that one
                counts["skipped"] += 1
                tick(1)
                continue
            seen.add(digest)
            taken.add(r["key"])
            counts["reminted"] += reminted
            r["created"] = r["created"] or now
            r["actor"] = r["actor"] or actor
            r["events"] = reconciled(r)  # what the files tell again: created, updated, feedback
            if r["key"] in current:
                same = _committed(current[r["key"]]) == _committed(r)
                if not replace or same:
                    counts["skipped"] += 1
                    tick(1)
                    continue
                counts["replaced"] += 1
            else:
                counts["imported"] += 1
            if record:
                r["events"].append(event("IMPORTED", now, actor))
            todo.append(r)
        for start in range(0, len(todo), CHUNK):
            batch = todo[start : start + CHUNK]
            vectors = service._vectors(batch)
            service.store.commit(current, batch, vectors)
            tick(len(batch))
    counts["total"] = len(records)
    return counts
