"""Consolidated knowledge: the open, unexpired memories as one profile, by category and subject.

Computed from the records on every read, so no stored copy can go stale. An entry's id hashes its
category and source keys, so it changes when a memory joins or leaves. docs/lifecycle.md,
"Knowledge", has the rules.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import Any

from nxm.knowledge.subjects import subjects
from nxm.lifecycle import live
from nxm.record import PRIORITIES
from nxs.errors import NotFoundError

THRESHOLD = 0.6
SHOWN = 5
KEYS_SHOWN = 3
GENERAL = "general"
_WORD = re.compile(r"[^\W_]{2,}")
_STOP = frozenset(
    "the and for are but not you all any can has have had was were this that with from into "
    "our out its it's they them then than too very just also only when what which who will "
    "would should could been being does did doing there here about over under after before".split()
)
_PRIORITY = {p: i for i, p in enumerate(PRIORITIES)}
_NAIVE = 32


def words(text: str) -> frozenset[str]:
    """The word set near-duplicate detection compares."""
    return frozenset(w for w in _WORD.findall(text.casefold()) if w not in _STOP)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    both = len(a & b)
    union = len(a) + len(b) - both
    return both / union if union else 0.0


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


def _statement(record: dict[str, Any]) -> str:
    text = " ".join((record["introduction"] or record["body"]).split())
    return text if len(text) <= 200 else text[:199].rstrip() + "…"


def _prefix(mine: frozenset[str], df: Counter[str]) -> list[str]:
    """The rarest words of a set, as many as a set it is similar to must share one of."""
    keep = len(mine) - math.ceil(THRESHOLD * len(mine)) + 1
    return sorted(mine, key=lambda w: (df[w], w))[:keep]


def _statements(group: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Near-duplicate groups of an entry's memories (in order), compared with each group's
    first memory only, so a chain of small differences never gathers unrelated memories.

    Prefix filtering (AllPairs): two sets with Jaccard ≥ t share one of the first
    |a| - ceil(t·|a|) + 1 words of each, rarest first; candidates are then checked exactly.
    """
    texts = [_statement(r) for r in group]
    seen: dict[str, int] = {}  # a statement's text -> its group (the same text is no question)
    sets = {text: words(text) for text in dict.fromkeys(texts)}
    df = Counter(w for mine in sets.values() for w in mine)
    out: list[list[dict[str, Any]]] = []
    firsts: list[frozenset[str]] = []
    index: dict[str, list[int]] = {}
    for r, text in zip(group, texts, strict=True):
        home = seen.get(text)
        if home is None:
            mine = sets[text]
            if len(firsts) <= _NAIVE:  # few statements yet: comparing them all is cheaper
                candidates: Any = range(len(firsts))
            else:
                candidates = sorted({o for w in _prefix(mine, df) for o in index.get(w, ())})
            size = len(mine)
            home = next(
                (o for o in candidates
                 if (both := len(mine & firsts[o])) >= THRESHOLD * (size + len(firsts[o]) - both)),
                None,
            )  # fmt: skip  # jaccard ≥ THRESHOLD, without a call per pair
            if home is None:
                home = len(out)
                for w in _prefix(mine, df):
                    index.setdefault(w, []).append(home)
                out.append([])
                firsts.append(mine)
            seen[text] = home
        out[home].append(r)
    return out


def entries(
    records: dict[str, dict[str, Any]], now: str, category: str | None = None,
    user_id: str | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Every entry: by category (``general`` last), then in their first memory's reading order."""
    current = live(records, now)
    about = subjects(current)  # over every open memory: a filter does not change an entry
    pool = ordered([
        r for r in current
        if (user_id is None or r.get("user_id") == user_id)
        and (category is None or (r.get("category") or GENERAL) == category)
    ])  # fmt: skip
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for r in pool:
        groups.setdefault((r.get("category") or GENERAL, about[r["key"]]), []).append(r)
    out = []
    for (cat, subject), group in groups.items():
        same = _statements(group)
        # a subject's memories make one entry; memories with none, one entry per statement
        for members in [same] if subject is not None else [[s] for s in same]:
            statements = [{"text": _statement(m[0]), "sourceMemoryIds": [r["key"] for r in m]}
                          for m in members]  # fmt: skip
            rs = [r for m in members for r in m]
            keys = [r["key"] for r in rs]
            out.append({
                "id": entry_id(cat, keys), "category": cat, "subject": subject,
                "content": "\n".join(s["text"] for s in statements), "statements": statements,
                "introduction": statements[0]["text"], "priority": rs[0]["priority"],
                "sourceMemoryIds": keys,
                "userIds": sorted({r["user_id"] for r in rs if r.get("user_id")}),
                "createdAt": min(r["created"] or "" for r in rs) or None,
                "updatedAt": max(r["updated"] or "" for r in rs) or None,
            })  # fmt: skip
    # within a category: the entries in their first memory's reading order
    rank = {r["key"]: i for i, r in enumerate(pool)}
    out.sort(key=lambda e: (e["category"] == GENERAL, e["category"], rank[e["sourceMemoryIds"][0]]))
    return out


def title(category: str) -> str:
    """A category as a section title: ``tech-stack`` → ``Tech Stack``."""
    return " ".join(w.capitalize() for w in re.split(r"[-_\s]+", category) if w)


def _cited(statement: dict[str, Any]) -> str:
    keys = statement["sourceMemoryIds"]
    shown = ", ".join(f"`{k}`" for k in keys[:KEYS_SHOWN])
    more = f" and {len(keys) - KEYS_SHOWN} more" if len(keys) > KEYS_SHOWN else ""
    return f"{statement['text']} _(memories: {shown}{more})_"


def markdown(items: list[dict[str, Any]]) -> str:
    """One Markdown document: a section per category, a bullet per entry, statements cited."""
    out: list[str] = []
    section = None
    for e in items:
        if e["category"] != section:
            section = e["category"]
            out.append(("\n" if out else "") + f"## {title(section)}\n\n")
        shown, rest = e["statements"][:SHOWN], e["statements"][SHOWN:]
        head = f"**{e['subject']}**" if e["subject"] else ""
        if len(shown) == 1 and not rest:
            out.append(f"- {head + ': ' if head else ''}{_cited(shown[0])}\n")
            continue
        lines = [f"  - {_cited(s)}" for s in shown]
        if rest:
            more = sum(len(s["sourceMemoryIds"]) for s in rest)
            lines.append(f"  - … {len(rest)} more statements from {more} memories: "
                         f"`nxm knowledge --entry {e['id']}`")  # fmt: skip
        out.append(f"- {head}\n" + "\n".join(lines) + "\n")
    return "".join(out)


def knowledge(
    records: dict[str, dict[str, Any]], *, now: str, entry: str | None = None,
    category: str | None = None, user_id: str | None = None, merged: bool = True,
) -> dict[str, Any]:  # fmt: skip
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
    base = {
        "categories": sorted({e["category"] for e in items}, key=lambda c: (c == GENERAL, c)),
        "mergedAt": max((e["updatedAt"] or "" for e in items), default="") or None,
        "memories": sum(len(e["sourceMemoryIds"]) for e in items),
        "total": len(items),
    }
    if merged:
        slim = [{"category": e["category"], "id": e["id"], "subject": e["subject"]} for e in items]
        return {"content": markdown(items), "entries": slim, **base}
    return {"entries": items, **base}


__all__ = ["SHOWN", "THRESHOLD", "entries", "entry_id", "jaccard", "knowledge", "markdown",
           "ordered", "title", "words"]  # fmt: skip
