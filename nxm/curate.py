"""Curation at write time: what an added memory resembles, and replacing an old one with it.

`similar` compares a new memory's embedding with every open memory's stored vector (no search
index is opened): each it reports could be the same fact in other words (``duplicate``) or another
version of it (``similar``). The thresholds sit between a fact's versions, its rewordings and
unrelated memories for both models nxm sets up (docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nxm.record import event
from nxs.errors import ConflictError

SIMILAR = 0.6
DUPLICATE = 0.85
SHOWN = 3


def similar(
    vector: Any, stored: Callable[[], dict[str, bytes]], records: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The open memories most like ``vector`` (``stored``: every open memory's vector)."""
    from nxm.store.vectors import nearest

    if vector is None:
        return []
    return [
        {
            "key": key,
            "introduction": records[key]["introduction"],
            "similarity": round(sim, 4),
            "kind": "duplicate" if sim >= DUPLICATE else "similar",
        }
        for key, sim in nearest(vector, stored(), SIMILAR, SHOWN)
        if key in records
    ]


def note(found: list[dict[str, Any]]) -> str | None:
    """What the add's answer says about them."""
    if not found:
        return None
    first = found[0]["key"]
    if found[0]["kind"] == "duplicate":
        return (
            f"this looks like memory {first} in other words: if it says the same, forget one "
            f"(`nxm forget KEY`); if it replaces it, add it with supersedes={first} instead"
        )
    return (
        f"{len(found)} stored memor{'y is' if len(found) == 1 else 'ies are'} about the same "
        f"thing: if this replaces one, add it with supersedes=KEY (CLI --supersedes KEY), which "
        "closes the old one"
    )


def supersede(old: dict[str, Any], new_key: str, now: str, actor: str) -> dict[str, Any]:
    """A copy of ``old`` closed (if open) and linked to ``new_key`` by its history.

    Raises:
        ConflictError: ``old`` is forgotten (restore it first).
    """
    if old["status"] == "forgotten":
        raise ConflictError(
            f"memory {old['key']} is forgotten; only an open or closed memory can be superseded",
            suggestion=f"restore it first (`nxm restore {old['key']}`), or add without supersedes",
            code="BAD_STATE",
        )
    after = {**old, "refs": list(old["refs"]), "events": list(old["events"])}
    after["feedback"] = dict(old["feedback"])
    if old["status"] == "open":
        after["status"] = "closed"
        after["events"].append(
            event("CLOSED", now, actor, **{"from": "open", "to": "closed"}, superseded_by=new_key)
        )
    else:
        after["events"].append(event("LINKED", now, actor, superseded_by=new_key))
    after["updated"], after["actor"] = now, actor
    return after


def linked(record: Mapping[str, Any]) -> set[str]:
    """The keys ``record`` says it supersedes (from its history)."""
    return {
        e["data"]["supersedes"]
        for e in record.get("events") or ()
        if isinstance(e.get("data"), dict) and e["data"].get("supersedes")
    }
