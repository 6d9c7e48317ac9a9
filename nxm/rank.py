"""Ranking: how keyword and semantic results become one ordered list, and what feedback does.

Hybrid search fuses the two ranked lists with reciprocal rank fusion (RRF): each list gives a
memory ``1 / (K + rank)``; the sum is the fused score. RRF needs no score calibration between
BM25 and cosine similarity, which live on different scales. Keyword and semantic modes use the
list's own score.

Feedback then scales that score by a bounded factor (docs/lifecycle.md)::

    factor = 1 + WEIGHT * tanh((positive - negative) / 2)        WEIGHT = 0.15

One vote moves a memory by about 7 % (tanh(0.5) = 0.46), two by 11 %, and no number of votes
moves it by more than 15 %, so feedback reorders near-ties but never buries a strong match.
NEUTRAL votes do not count. The answer keeps the raw ``keyword`` and ``semantic`` scores and
reports the ``feedback`` factor, so every score can be recomputed by hand.
"""

from __future__ import annotations

import math
from typing import Any

K = 60
WEIGHT = 0.15


def feedback_factor(record: dict[str, Any]) -> float:
    """The factor a memory's feedback counts multiply its score by: in (0.85, 1.15)."""
    counts = record.get("feedback") or {}
    net = int(counts.get("POSITIVE", 0)) - int(counts.get("NEGATIVE", 0))
    return 1.0 + WEIGHT * math.tanh(net / 2)


def fuse(
    keyword: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
    records: dict[str, dict[str, Any]],
    mode: str,
) -> list[tuple[str, dict[str, Any]]]:
    """Merge the ranked lists into (key, scores) pairs, best first, ties broken by key."""
    kw = dict(keyword)
    sem = dict(semantic)
    fused: dict[str, float] = {}
    for hits in (keyword, semantic):
        for rank, (key, _) in enumerate(hits, 1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (K + rank)
    out = []
    for key, score in fused.items():
        if key not in records:
            continue
        if mode == "keyword":
            score = kw[key]
        elif mode == "semantic":
            score = sem[key]
        factor = feedback_factor(records[key])
        out.append(
            (
                key,
                {
                    "score": score * factor,
                    "keyword": kw.get(key),
                    "semantic": sem.get(key),
                    "feedback": factor,
                },
            )
        )
    out.sort(key=lambda kv: (-kv[1]["score"], kv[0]))
    return out
