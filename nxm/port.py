"""Export and import: JSON Lines, one memory per line in key order, with its history.

The file is stable bytes (sorted keys, key order, no vectors), so it diffs and merges well in
git. Import is idempotent by key, checks every line before writing anything, embeds in batches
and commits in chunks: it is the fast way to load many memories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from nxm.record import FIELDS, PRIORITIES, STATUSES, complete
from nxm.store.text import LOCAL, reconciled
from nxs.errors import ValidationError
from nxs.render import line, parse_timestamp

CHUNK = 2048  # records per embedding batch and commit


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
    if not all(type(v) is int for v in record["feedback"].values()):
        return "feedback counts that are not integers"
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


def _committed(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what is this machine's own (whether it has a vector)."""
    return {k: v for k, v in record.items() if k not in LOCAL}


def export_lines(records: dict[str, dict[str, Any]]) -> Iterable[bytes]:
    """Each record as one JSON line, in key order."""
    for key in sorted(records):
        yield line(records[key])


def parse_lines(data: bytes) -> list[dict[str, Any]]:
    """Parse and check an export; refuse the whole file on the first bad line.

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
            raise ValidationError(
                f"line {n} is not valid JSON: {exc}", suggestion="nothing was imported"
            ) from None
        if not isinstance(obj, dict):
            raise ValidationError(
                f"line {n} is not a JSON object", suggestion="nothing was imported"
            )
        missing = [
            f
            for f in ("key", "body", "introduction")
            if not isinstance(obj.get(f), str) or not obj[f].strip()
        ]
        if missing:
            raise ValidationError(
                f"line {n} lacks {', '.join(missing)}", suggestion="nothing was imported"
            )
        unknown = sorted(set(obj) - set(FIELDS))
        if unknown:
            raise ValidationError(
                f"line {n} has unknown fields: {', '.join(unknown)}",
                suggestion="nothing was imported",
            )
        record = complete(obj)
        if record["status"] not in STATUSES or record["priority"] not in PRIORITIES:
            raise ValidationError(
                f"line {n} has an unknown status or priority", suggestion="nothing was imported"
            )
        problem = _shape_problem(record)
        if problem:
            raise ValidationError(f"line {n} has {problem}", suggestion="nothing was imported")
        record["processing"] = "PENDING"
        out.append(record)
    return out


def import_records(
    service: Any,
    records: list[dict[str, Any]],
    *,
    replace: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Write parsed records: new keys are added, existing keys skipped (or replaced)."""
    counts = {"imported": 0, "replaced": 0, "skipped": 0}
    service.embedder()  # load the model before taking the lock
    with service.store.writing() as current:
        todo = []
        for r in records:
            r["events"] = reconciled(r)  # what the files tell again: created, updated, feedback
            if r["key"] in current:
                same = _committed(current[r["key"]]) == _committed(r)
                if not replace or same:
                    counts["skipped"] += 1
                    if progress:
                        progress(1)
                    continue
                counts["replaced"] += 1
            else:
                counts["imported"] += 1
            todo.append(r)
        for start in range(0, len(todo), CHUNK):
            batch = todo[start : start + CHUNK]
            vectors = service._vectors(batch)
            service._ready(batch, vectors)
            service._write(current, batch, vectors)
            if progress:
                progress(len(batch))
    counts["total"] = len(records)
    return counts
