"""Ranking: how keyword and semantic results become one ordered list.

Hybrid search fuses the two ranked lists with reciprocal rank fusion (RRF): each list gives a
memory ``1 / (K + rank)``; the sum is the fused score. RRF needs no score calibration between
BM25 and cosine similarity, which live on different scales.
"""

from __future__ import annotations

from typing import Any

K = 60


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
        out.append((key, {"score": score, "keyword": kw.get(key), "semantic": sem.get(key)}))
    out.sort(key=lambda kv: (-kv[1]["score"], kv[0]))
    return out
