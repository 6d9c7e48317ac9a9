"""The memory lifecycle beyond the core verbs: expiry, promotion, feedback, revert.

A TASK memory past its ``expires`` is left out of search, recall and prime (`is_expired`) but
stays stored, listed and promotable. `revert` reads the previous values every edit event keeps
(``data.before``). All refuse before writing anything.
"""

from __future__ import annotations

from typing import Any

from nxm.record import body_hash, event, normalise
from nxs.errors import ConflictError, NotFoundError, ValidationError
from nxs.render import parse_timestamp

# What revert restores (status, layer and expiry have their own verbs: reopen, restore, promote).
CONTENT = ("body", "introduction", "category", "scope", "refs", "priority")
EDITS = ("UPDATED", "CLASSIFIED", "REVERTED")  # the events whose ``before`` revert reads
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
                suggestion=f"see its layer with `nxm show {r['key']}`", code="ALREADY_PERMANENT",
            )  # fmt: skip
        expired = is_expired(r, now)
        data = {"from": "TASK", "to": "PERMANENT", "expires": r["expires"], "expired": expired}
        r["layer"], r["expires"] = "PERMANENT", None
        return "PROMOTED", data

    out = service._change(key, now, actor, apply)
    return {"layer": "PERMANENT", "promoted": True, **out}


def feedback(
    service: Any, *, key: str, signal: str, now: str, actor: str, comment: str | None = None
) -> dict[str, Any]:
    """Count a feedback signal on a memory, as an event; a reader's signal, not an edit, so the
    memory's ``updated`` and ``actor`` stay.

    Raises:
        NotFoundError: no such key.
    """
    comment = comment.strip() if comment and comment.strip() else None
    with service.store.writing() as current:
        before = service.resolve(current, key)
        counts = dict(before["feedback"])
        counts[signal] = int(counts.get(signal, 0)) + 1
        done = event("FEEDBACK_SUBMITTED", now, actor, signal=signal, comment=comment)
        after = {**before, "feedback": counts, "events": [*before["events"], done]}
        service.store.commit(current, [after])
    return {"feedback": counts, "key": after["key"], "recorded": True, "signal": signal}


def _restored(key: str, events: list[dict[str, Any]], target: int) -> dict[str, Any]:
    """The content fields as they were just after event ``target`` (1-based), read back from
    the ``before`` of every edit after it, newest first (so the oldest edit's value wins).

    Raises:
        ConflictError: an edit after it did not record what it replaced (an older store's).
    """
    out: dict[str, Any] = {}
    for n in range(len(events), target, -1):
        e = events[n - 1]
        data = e.get("data") or {}
        if e["type"] not in EDITS or not data.get("fields"):
            continue
        before = data.get("before")
        if not isinstance(before, dict):
            raise ConflictError(
                f"event {n} ({e['type']}) of memory {key} did not keep the values it replaced, "
                "so it cannot be reverted",
                suggestion=f"correct it by hand with `nxm update {key[:8]}` or `nxm classify`",
                code="NOT_REVERTIBLE",
            )
        out.update({f: v for f, v in before.items() if f in CONTENT})
    return out


def revert(service: Any, *, key: str, now: str, actor: str, to: int | None = None) -> dict:
    """Put a memory's content back as it was just after event ``to`` (default: before its
    latest edit), as one REVERTED event that keeps what it replaced (so it is revertible too).

    Raises:
        NotFoundError: no such key, or no such event.
        ConflictError: nothing to revert, an edit without its previous values, or another
            memory already has the body it would restore.
        ValidationError: the memory is already as it was then (NO_CHANGE).
    """

    def apply(r: dict[str, Any], current: Any) -> tuple[str, dict[str, Any]]:
        events = r["events"]
        target = to
        if target is None:
            edits = [n for n, e in enumerate(events, 1) if e["type"] in EDITS]
            edits = [n for n in edits if (events[n - 1].get("data") or {}).get("fields")]
            if not edits:
                raise ConflictError(
                    f"memory {r['key']} has no edit to revert",
                    suggestion=f"see what happened to it with `nxm history {r['key'][:8]}`",
                    code="NOTHING_TO_REVERT",
                )
            target = edits[-1] - 1
        elif target > len(events):
            raise NotFoundError(
                f"memory {r['key']} has {len(events)} events; there is no event {target}",
                suggestion=f"see its events with `nxm history {r['key'][:8]}`",
                code="NO_SUCH_EVENT",
            )
        changes = {f: v for f, v in _restored(r["key"], events, target).items() if r.get(f) != v}
        if "body" in changes:
            if normalise(changes["body"]) == normalise(r["body"]):
                del changes["body"]
            else:
                twins = current.with_body(body_hash(changes["body"]))
                if twin := next((k for k in twins if k != r["key"]), None):
                    raise ConflictError(
                        f"memory {twin} already has the body this revert would restore",
                        suggestion=f"forget one of them first: `nxm forget {twin}`",
                    )
        if not changes:
            raise ValidationError(
                f"memory {r['key']} is already as it was after event {target}",
                suggestion=f"name an earlier event: see `nxm history {r['key'][:8]}`",
                code="NO_CHANGE",
            )
        fields = [f for f in CONTENT if f in changes]
        before = {f: r[f] for f in fields}
        r.update({f: changes[f] for f in fields})
        return "REVERTED", {"fields": fields, "before": before, "to": target}

    out = service._change(key, now, actor, apply, embed=True)
    return {"reverted": True, **out}


__all__ = ["feedback", "is_expired", "live", "promote", "revert"]
