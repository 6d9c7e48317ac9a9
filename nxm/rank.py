"""Ranking: how keyword and semantic results become one ordered list, and what feedback does.

Hybrid search fuses the two candidate lists (`POOL` each) by their scores, each list min-max
scaled to [0, 1] within the pool, half weight each (``FUSION = "minmax"``, ``ALPHA = 0.5``)::

    fused = ALPHA * (bm25 - min) / (max - min) + (1 - ALPHA) * (cos - min) / (max - min)

A memory missing from a list gets 0 from it. Scaling keeps how far apart the scores are, which
reciprocal rank fusion (``FUSION = "rrf"``, ``1 / (K + rank)`` per list) throws away: measured
on LoCoMo it is the better fusion (docs/retrieval.md).

Memories of one session are context for each other, twice:

- **In the index.** Each memory's row also holds its session context (`nxm.record.contexts`):
  its own text, then the bodies of the `CONTEXT` memories said just before it. A third list,
  BM25 over that text (``context_keyword`` in the answer), shares the keyword weight with the
  own-text list (`WEIGHTS`: ALPHA / 2 each). For a memory without a session the context is its
  own text, so a store without sessions ranks exactly as with the two lists alone.
- **At query time.** A hybrid score gets ``context``, a share of the fused scores of its
  session neighbours (same ``session_id``, within `WINDOW` places in ``created`` order;
  ``SHARE ** distance`` of each), and those neighbours become candidates even when neither
  list found them.

A short reply ("Yes, last Tuesday!") is found through the question before it, and the memory
itself is what is returned.

Feedback then scales that score by a bounded factor (docs/lifecycle.md)::

    factor = 1 + WEIGHT * tanh((positive - negative) / 2)        WEIGHT = 0.15

One vote moves a memory by about 7 % (tanh(0.5) = 0.46), two by 11 %, and no number of votes
moves it by more than 15 %, so feedback reorders near-ties but never buries a strong match.
NEUTRAL votes do not count. The answer keeps the raw ``keyword`` and ``semantic`` scores, the
raw ``context_keyword`` (memories in a session), the ``context`` lent by neighbours (when any)
and the ``feedback`` factor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

K = 60
WEIGHT = 0.15
POOL = 40  # candidates taken from each of the keyword and semantic lists, at least
FUSION = "minmax"
ALPHA = 0.5
# With session context: (own text, context, semantic); the keyword side keeps its ALPHA share.
WEIGHTS = (ALPHA / 2, ALPHA / 2, 1 - ALPHA)
WINDOW = 2  # neighbours on each side that lend a memory their score
SHARE = 0.4  # a neighbour at distance d lends SHARE ** d of its fused score


def feedback_factor(record: Mapping[str, Any]) -> float:
    """The factor a memory's feedback counts multiply its score by: in (0.85, 1.15)."""
    counts = record.get("feedback") or {}
    net = int(counts.get("POSITIVE", 0)) - int(counts.get("NEGATIVE", 0))
    return 1.0 + WEIGHT * math.tanh(net / 2) if net else 1.0


def neighbours(records: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, int]]]:
    """For each memory with a ``session_id``: the memories of its session within `WINDOW`
    places of it in time order, with their distance."""
    sessions: dict[str, list[tuple[str, str]]] = {}
    for key, r in records.items():
        if r.get("session_id"):
            sessions.setdefault(r["session_id"], []).append((r.get("created") or "", key))
    out: dict[str, list[tuple[str, int]]] = {}
    for members in sessions.values():
        if len(members) < 2:
            continue
        members.sort()
        keys = [k for _, k in members]
        for i, key in enumerate(keys):
            lo, hi = max(0, i - WINDOW), min(len(keys), i + WINDOW + 1)
            out[key] = [(keys[j], abs(j - i)) for j in range(lo, hi) if j != i]
    return out


def fuse(
    keyword: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
    records: Mapping[str, Mapping[str, Any]],
    mode: str,
    near: dict[str, list[tuple[str, int]]] | None = None,
    context: list[tuple[str, float]] = (),  # type: ignore[assignment]
    limit: int | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Merge the ranked lists into (key, scores) pairs, best first, ties broken by key (the
    first ``limit`` of them). Of ``records`` (the known memories by key) only ``feedback`` and
    ``session_id`` are read: a `nxm.store.Snapshot`'s ``brief`` holds just these.

    ``context`` are BM25 matches of the query in the memories' session context (the memories
    said just before them: `nxm.record.contexts`); in hybrid mode, when there are any, the
    keyword weight is shared between a memory's own text and its context (`WEIGHTS`). With
    ``near`` (from `neighbours`), a hybrid score also gets a share of its session neighbours'
    fused scores (``context`` in the answer), and those neighbours become candidates too.
    """
    kw = dict(keyword)
    sem = dict(semantic)
    ctx = dict(context) if mode == "hybrid" else {}
    fused: dict[str, float] = {}
    if FUSION == "rrf":
        for hits in (keyword, semantic):
            for rank, (key, _) in enumerate(hits, 1):
                fused[key] = fused.get(key, 0.0) + 1.0 / (K + rank)
    else:
        weights = WEIGHTS if ctx else (ALPHA, 0.0, 1 - ALPHA)
        for hits, w in zip((keyword, list(ctx.items()), semantic), weights, strict=True):
            if not hits:
                continue
            top = max(s for _, s in hits)
            low = min(s for _, s in hits) if FUSION == "minmax" else 0.0
            for key, s in hits:
                scaled = (s - low) / (top - low) if top > low else 1.0
                fused[key] = fused.get(key, 0.0) + w * scaled
    lent: dict[str, float] = {}
    if near and mode == "hybrid":  # neighbours are mutual: each lends to those around it
        for key, score in fused.items():
            for n, d in near.get(key, ()) if score else ():
                lent[n] = lent.get(n, 0.0) + SHARE**d * score
    ranked = []
    for key in fused.keys() | lent.keys():
        record = records.get(key)
        if record is None:
            continue
        if mode == "keyword":
            score = kw[key]
        elif mode == "semantic":
            score = sem[key]
        else:
            score = fused.get(key, 0.0)
        factor = feedback_factor(record)
        ranked.append(((score + lent.get(key, 0.0)) * factor, key, factor))
    ranked.sort(key=lambda t: (-t[0], t[1]))
    out = []
    for score, key, factor in ranked[:limit]:
        in_session = bool(records[key].get("session_id"))  # else its context is its own text
        scores = {"score": score, "keyword": kw.get(key), "semantic": sem.get(key)}
        scores["feedback"] = factor
        if key in lent:
            scores["context"] = lent[key]
        if key in ctx and in_session:
            scores["context_keyword"] = ctx[key]
        out.append((key, scores))
    return out
