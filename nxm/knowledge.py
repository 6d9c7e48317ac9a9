"""Consolidated knowledge: the open, unexpired memories as one profile, by category.

Computed from the records on every read (no stored copy can go stale: an update, a close, a
forget or an expiry shows at once). For each category (uncategorised memories under
``general``):

1. memories in priority order (HIGH first), newest ``updated`` first, then key;
2. near-duplicates merged: a memory joins the first entry holding a memory whose word set has a
   Jaccard similarity ≥ `THRESHOLD` with its own (words: lower-cased letters and digits, two
   characters or more, minus a short stop list); the entry's first memory is its
   representative;
3. each entry gets a stable id, ``kn-`` + 12 hex of sha256(category, sorted source keys): the
   same memories give the same id, and it changes when a memory joins or leaves the entry.

Content is the representative's body, cut at a sentence end near `CONTENT_MAX` characters.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from nxm.lifecycle import live
from nxm.record import PRIORITIES
from nxs.errors import NotFoundError

THRESHOLD = 0.6
CONTENT_MAX = 1200
GENERAL = "general"
_WORD = re.compile(r"[^\W_]{2,}")
_STOP = frozenset(
    "the and for are but not you all any can has have had was were this that with from into "
    "our out its it's they them then than too very just also only when what which who will "
    "would should could been being does did doing there here about over under after before".split()
)
_PRIORITY = {p: i for i, p in enumerate(PRIORITIES)}


def words(text: str) -> frozenset[str]:
    """The word set near-duplicate detection compares."""
    return frozenset(w for w in _WORD.findall(text.casefold()) if w not in _STOP)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def entry_id(category: str, keys: list[str]) -> str:
    """The stable id of an entry: a hash of its category and its sorted source keys."""
    raw = category + "\x00" + "\x00".join(sorted(keys))
    return "kn-" + hashlib.sha256(raw.encode()).hexdigest()[:12]


def ordered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Priority (HIGH first), then newest ``updated`` first, then key."""
    out = sorted(records, key=lambda r: r["key"])
    out.sort(key=lambda r: r.get("updated") or "", reverse=True)  # stable sorts compose
    out.sort(key=lambda r: _PRIORITY.get(r["priority"], 1))
    return out


def _clip(text: str) -> str:
    text = text.strip()
    if len(text) <= CONTENT_MAX:
        return text
    cut = text[:CONTENT_MAX]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    return (cut[: end + 1] if end > CONTENT_MAX // 2 else cut.rstrip()) + " …"


def _clusters(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Near-duplicate groups, in the order of their representatives.

    Prefix filtering (the AllPairs set-similarity join): with each word set sorted rarest
    first, two sets with Jaccard ≥ t share a word among the first |a| - ceil(t·|a|) + 1 of
    each, so only those prefixes are indexed and probed; candidates are then checked exactly.
    """
    todo = ordered(records)
    sets = [words(f"{r['introduction']}\n{r['body']}") for r in todo]
    df: dict[str, int] = {}
    for ws in sets:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    groups: list[list[dict[str, Any]]] = []
    home_of: list[int] = []
    index: dict[str, list[int]] = {}
    for i, (r, mine) in enumerate(zip(todo, sets, strict=True)):
        prefix = sorted(mine, key=lambda w: (df[w], w))[
            : len(mine) - math.ceil(THRESHOLD * len(mine)) + 1
        ]
        candidates = {o for w in prefix for o in index.get(w, ())}
        near = [home_of[o] for o in candidates if jaccard(mine, sets[o]) >= THRESHOLD]
        if near:
            home = min(near)
        else:
            home = len(groups)
            groups.append([])
        groups[home].append(r)
        home_of.append(home)
        for w in prefix:
            index.setdefault(w, []).append(i)
    return groups


def entries(
    records: dict[str, dict[str, Any]],
    now: str,
    category: str | None = None,
    user_id: str | None = None,
) -> list[dict[str, Any]]:
    """Every knowledge entry, categories in name order (``general`` last)."""
    by_category: dict[str, list[dict[str, Any]]] = {}
    for r in live(records, now):
        if user_id is not None and r.get("user_id") != user_id:
            continue
        cat = r.get("category") or GENERAL
        if category is not None and cat != category:
            continue
        by_category.setdefault(cat, []).append(r)
    out = []
    for cat in sorted(by_category, key=lambda c: (c == GENERAL, c)):
        for group in _clusters(by_category[cat]):
            rep = group[0]
            keys = [r["key"] for r in group]
            out.append(
                {
                    "id": entry_id(cat, keys),
                    "category": cat,
                    "content": _clip(rep["body"]),
                    "introduction": rep["introduction"],
                    "priority": rep["priority"],
                    "sourceMemoryIds": keys,
                    "userIds": sorted({r["user_id"] for r in group if r.get("user_id")}),
                    "createdAt": min(r["created"] or "" for r in group) or None,
                    "updatedAt": max(r["updated"] or "" for r in group) or None,
                }
            )
    return out


def title(category: str) -> str:
    """A category as a section title: ``tech-stack`` → ``Tech Stack``."""
    return " ".join(w.capitalize() for w in re.split(r"[-_\s]+", category) if w)


def markdown(items: list[dict[str, Any]]) -> str:
    """One Markdown document: a section per category, a bullet per entry with its sources."""
    out: list[str] = []
    section = None
    for e in items:
        if e["category"] != section:
            section = e["category"]
            out.append(("\n" if out else "") + f"## {title(section)}\n\n")
        text = "\n  ".join(line.rstrip() for line in e["content"].splitlines() if line.strip())
        keys = ", ".join(f"`{k}`" for k in e["sourceMemoryIds"])
        out.append(f"- {text} _(memories: {keys})_\n")
    return "".join(out)


def knowledge(
    records: dict[str, dict[str, Any]],
    *,
    now: str,
    entry: str | None = None,
    category: str | None = None,
    user_id: str | None = None,
    merged: bool = True,
) -> dict[str, Any]:
    """The knowledge profile: one Markdown document (merged), every entry, or one entry.

    Raises:
        NotFoundError: ``entry`` names no current entry.
    """
    items = entries(records, now, category, user_id)
    if entry is not None:
        wanted = entry.strip()
        hit = next((e for e in items if e["id"] == wanted), None)
        if hit is None:
            raise NotFoundError(
                f"no knowledge entry {wanted!r}",
                suggestion="list entries with `nxm knowledge --no-merged`; an id changes when "
                "a memory joins or leaves the entry",
                code="ENTRY_NOT_FOUND",
            )
        return {"entry": hit}
    merged_at = max((e["updatedAt"] or "" for e in items), default="") or None
    base = {
        "categories": sorted({e["category"] for e in items}, key=lambda c: (c == GENERAL, c)),
        "mergedAt": merged_at,
        "memories": sum(len(e["sourceMemoryIds"]) for e in items),
        "total": len(items),
    }
    if merged:
        slim = [{"category": e["category"], "id": e["id"]} for e in items]
        return {"content": markdown(items), "entries": slim, **base}
    return {"entries": items, **base}


__all__ = [
    "THRESHOLD",
    "entries",
    "entry_id",
    "jaccard",
    "knowledge",
    "markdown",
    "ordered",
    "words",
]
