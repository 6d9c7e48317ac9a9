"""The memory lifecycle beyond the core verbs: expiry, promotion, feedback.

TASK memories carry an ``expires`` timestamp (set by add from ``ttl_days`` or the config's
``memory.task_ttl_days``). At and after that instant a memory is expired: search, recall and
prime leave it out (`is_expired`), but it stays stored, listed, and promotable. `promote` makes
a TASK memory PERMANENT (no expiry, a PROMOTED event). `feedback` counts a POSITIVE, NEGATIVE or
NEUTRAL signal on a memory and records a FEEDBACK_SUBMITTED event; ranking reads the counts
(`nxm.rank.feedback_factor`). Both refuse before writing anything.
"""

from __future__ import annotations

from typing import Any

from nxm.record import event
from nxs.errors import ConflictError
from nxs.render import parse_timestamp

_ISO_MS = 24  # len("2026-05-29T10:00:00.000Z"): the form `nxs.render.timestamp` writes


def is_expired(record: dict[str, Any], now: str) -> bool:
    """True when the record has an expiry at or before ``now`` (an ISO-8601 timestamp)."""
    expires = record.get("expires")
    if not expires:
        return False
    if len(expires) == len(now) == _ISO_MS and expires.endswith("Z") and now.endswith("Z"):
        return expires <= now  # same fixed-width UTC form: string order is time order
    return parse_timestamp(expires) <= parse_timestamp(now)


def live(records: dict[str, dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """The open, unexpired records: what search, knowledge and the graph read."""
    return [r for r in records.values() if r["status"] == "open" and not is_expired(r, now)]


def promote(service: Any, *, key: str, now: str, actor: str) -> dict[str, Any]:
    """Make a TASK memory permanent: no expiry, a PROMOTED event.

    Raises:
        NotFoundError: no such key.
        ConflictError: the memory is already permanent.
    """

    def apply(r: dict[str, Any], current: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if r["layer"] != "TASK":
            raise ConflictError(
                f"memory {r['key']} is already {r['layer']}; only TASK memories can be promoted",
                suggestion=f"see its layer with `nxm show {r['key']}`",
                code="ALREADY_PERMANENT",
            )
        expired = is_expired(r, now)
        data = {"from": "TASK", "to": "PERMANENT", "expires": r["expires"], "expired": expired}
        r["layer"], r["expires"] = "PERMANENT", None
        return "PROMOTED", data

    out = service._change(key, now, actor, apply)
    return {"layer": "PERMANENT", "promoted": True, **out}


def feedback(
    service: Any, *, key: str, signal: str, now: str, actor: str, comment: str | None = None
) -> dict[str, Any]:
    """Count a feedback signal on a memory and record it as an event.

    Feedback is a reader's signal, not an edit: the memory's ``updated`` and ``actor`` stay.

    Raises:
        NotFoundError: no such key.
    """
    comment = comment.strip() if comment and comment.strip() else None
    with service.store.writing() as current:
        before = service.resolve(current, key)
        after = {**before, "events": list(before["events"])}
        counts = dict(before["feedback"])
        counts[signal] = int(counts.get(signal, 0)) + 1
        after["feedback"] = counts
        after["events"].append(
            event("FEEDBACK_SUBMITTED", now, actor, signal=signal, comment=comment)
        )
        service._write(current, [after])
    return {"feedback": counts, "key": after["key"], "recorded": True, "signal": signal}


__all__ = ["feedback", "is_expired", "live", "promote"]
