"""Ranking: how keyword and semantic results become one ordered list, and what feedback does.

Hybrid search fuses the candidate lists by their z-scores, the keyword side weighted by how far
its matches can be believed for this query (`keyword_evidence`); session neighbours lend a share
of their scores (`context`), a time the query names lifts what was written then (`period`), and
feedback scales the result by at most 15 %. docs/retrieval.md gives the formulas and why min-max
scaling and reciprocal rank fusion lost on LoCoMo.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

WEIGHT = 0.15
POOL = 80  # candidates taken from each of the keyword and semantic lists, at least
REF = 200  # keyword matches the BM25 scores are standardized over
ALPHA = 0.5
# With session context: (own text, context, semantic); the keyword side keeps its ALPHA share.
WEIGHTS = (ALPHA / 2, ALPHA / 2, 1 - ALPHA)
WINDOW = 2  # neighbours on each side that lend a memory their score
SHARE = 0.4  # a neighbour at distance d lends SHARE ** d of its fused score
PERIOD_LIFT = 0.2  # of the best score, for a candidate written in the period the query names
EVIDENCE_HITS = 5  # keyword matches whose words are compared with the query's
EVIDENCE_WORDS = 5  # a match holding this many of the query's content words is full evidence


# The cosine a semantic hit needs to be returned, by embedding model (cosines are not comparable
# across models; the two models' scales meet here: docs/retrieval.md); the test embedder's set
# by hand; another model has none.
SEMANTIC_FLOORS = {
    "sentence-transformers/all-MiniLM-L6-v2": 0.28,
    "sentence-transformers/all-mpnet-base-v2": 0.28,
    "hash": 0.1,
}
SEMANTIC_FLOOR = SEMANTIC_FLOORS["sentence-transformers/all-MiniLM-L6-v2"]
WORDS_FLOOR = 0.4  # share of the query's content words (`matched`) a keyword hit needs


def matched(asked: set[str], text: str) -> float:
    """How much of the query words ``asked`` ``text`` holds: their share or count/EVIDENCE_WORDS."""
    from nxm.search.terms import content_words

    if not asked:
        return 1.0
    held = len(asked & content_words(text))
    return min(1.0, max(held / len(asked), held / EVIDENCE_WORDS))


def relevant(mode: str, semantic: float | None, words: float, floor: float = 0.0) -> bool:
    """Whether a hit clears its mode's relevance floor (cosine ``floor``, `WORDS_FLOOR`, either)."""
    close = semantic is not None and semantic >= floor
    if mode == "semantic":
        return close
    if mode == "keyword":
        return words >= WORDS_FLOOR
    return close or words >= WORDS_FLOOR


def through(scores: Mapping[str, Any]) -> bool:
    """Whether a hybrid hit is relevant through its session context or period (not a lent score:
    every neighbour of anything found has one)."""
    return any(scores.get(k) for k in ("context_keyword", "period"))


def keyword_evidence(query: str, texts: list[str]) -> float:
    """How far the keyword matches can be believed, in [0, 1]: the most of the query one of the
    first matches holds (a long request is answered by several memories, a few words each)."""
    from nxm.search.terms import content_words

    asked = content_words(query)
    if not asked or not texts:
        return 0.0
    return max(matched(asked, text) for text in texts[:EVIDENCE_HITS])


def shares(evidence: float | None) -> tuple[float, float]:
    """The (keyword, semantic) weights for that keyword evidence; half and half without one."""
    if evidence is None:
        return ALPHA, 1 - ALPHA
    kw = ALPHA * evidence**2
    return kw, 1 - kw


def feedback_factor(record: Mapping[str, Any]) -> float:
    """The factor a memory's feedback counts multiply its score by: in (0.85, 1.15)."""
    counts = record.get("feedback") or {}
    net = int(counts.get("POSITIVE", 0)) - int(counts.get("NEGATIVE", 0))
    return 1.0 + WEIGHT * math.tanh(net / 2) if net else 1.0


def neighbours(records: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, int]]]:
    """For each memory in a session: its session's memories within `WINDOW` places, by distance."""
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


MIN_COS_STD = 0.05  # similarities spread less than this are not stretched (a store of a few)
MIN_KW_STD = 0.25  # nor BM25 scores spread less than this share of their mean,
MIN_KW_N = 20  # when fewer than this many memories matched (more: their spread is measured)


def standardize(
    hits: list[tuple[str, float]], spread: tuple[float, float] | None = None, keyword: bool = False
) -> dict[str, float]:
    """Each hit's score in standard deviations above the mean of ``spread`` or its own (0 at or
    below it); the floor on the spread keeps a handful of near-equal scores from standing apart."""
    if spread is None:
        scores = [s for _, s in hits]
        mean = math.fsum(scores) / len(scores) if scores else 0.0
        std = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores)) if scores else 0.0
    else:
        mean, std = spread
    if std > 1e-9 and (not keyword or len(hits) < MIN_KW_N):
        std = max(std, MIN_KW_STD * abs(mean) if keyword else MIN_COS_STD)
    if not std > 1e-9:
        return {key: 1.0 for key, _ in hits}
    return {key: max(0.0, (s - mean) / std) for key, s in hits}


def fuse(
    keyword: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
    records: Mapping[str, Mapping[str, Any]],
    mode: str,
    near: dict[str, list[tuple[str, int]]] | None = None,
    context: list[tuple[str, float]] = (),  # type: ignore[assignment]
    limit: int | None = None,
    spread: tuple[float, float] | None = None,
    pool: int = POOL,
    period: tuple[str, str] | None = None,
    written: Mapping[str, dict[str, Any]] | None = None,
    allowed: Callable[[set[str]], set[str]] | None = None,
    evidence: float | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Merge the ranked lists into (key, scores) pairs, best first, ties broken by key; of
    ``keyword`` and ``context`` all set the spread, the first ``pool`` are candidates."""
    kw = dict(keyword)
    sem = dict(semantic)
    ctx = dict(context) if mode == "hybrid" else {}
    fused: dict[str, float] = {}
    lists = (keyword, list(context) if ctx else [], semantic)
    kw_w, sem_w = shares(evidence)
    # own text and session context share the keyword weight (the evidence is measured over
    # matches outside a session; matches that are all turns have none: half and half)
    weights = (kw_w / 2, kw_w / 2, sem_w) if ctx else (kw_w, 0.0, sem_w)
    for hits, w, given in zip(lists, weights, (None, None, spread), strict=True):
        if not hits:
            continue
        scaled = standardize(hits, given, keyword=hits is not semantic)
        for key, _ in hits[:pool]:
            fused[key] = fused.get(key, 0.0) + w * scaled[key]
    lent: dict[str, float] = {}
    if near and mode == "hybrid":  # neighbours are mutual: each lends to those around it
        for key, score in fused.items():
            for n, d in near.get(key, ()) if score else ():
                lent[n] = lent.get(n, 0.0) + SHARE**d * score
        brought = lent.keys() - fused.keys()  # neither list found them: filters not yet applied
        if brought and allowed is not None:
            barred = brought - allowed(brought)
            lent = {k: v for k, v in lent.items() if k not in barred}
    own = {"keyword": kw, "semantic": sem}.get(mode)
    base = {
        key: own[key] if own is not None else fused.get(key, 0.0) + lent.get(key, 0.0)
        for key in fused.keys() | lent.keys()
        if key in records
    }
    lifted: dict[str, float] = {}
    if period and mode == "hybrid" and base:  # the query names a time: what was written then
        first, after = period
        best = max(base.values())
        whole = records if written is None else written
        for key in base:
            if first <= (whole[key].get("created") or "")[:10] < after:
                lifted[key] = PERIOD_LIFT * best
    ranked = []
    for key, score in base.items():
        factor = feedback_factor(records[key])
        ranked.append(((score + lifted.get(key, 0.0)) * factor, key, factor))
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
        if key in lifted:
            scores["period"] = lifted[key]
        out.append((key, scores))
    return out


# what a query names exactly: snake_case and ENV_NAMES, letters with digits (PAY-421, eu-west-2),
# paths and dotted names, camelCase (not a hyphenated word: on-call, keep-alive)
NAMED = re.compile(
    r"\b\w*_\w+\b|\b(?=[\w./:-]*\d)(?=[\w./:-]*[A-Za-z])\w[\w./:-]*\w\b|\b\w+(?:[./:]\w+)+\b"
    r"|\b[a-z]+[A-Z][a-z0-9]\w*\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}\b"
)
_AMOUNT = re.compile(r"\d+[a-z]{1,3}", re.I)  # 30th, 10am, 200ms: values, not names


def exact(
    hits: list[tuple[str, dict[str, Any]]], texts: Mapping[str, str], query: str
) -> list[tuple[str, dict[str, Any]]]:
    """Hits holding an identifier the query names, as a whole token, lifted above every hit
    holding none (one lift for all keeps their order; ``exact`` records it): an ordinary word
    beside the identifier must not bring a namesake first."""
    found = {n for n in NAMED.findall(query) if len(n) >= 4 and not _AMOUNT.fullmatch(n)}
    names = sorted(found, key=len, reverse=True)
    if not names:
        return hits
    token = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in names), re.I)
    holds = {k for k, _ in hits if token.search(texts[k])}
    others = [sc["score"] for k, sc in hits if k not in holds]
    if not holds or not others:
        return hits
    lift = max(others) - min(sc["score"] for k, sc in hits if k in holds)
    if lift < 0:
        return hits
    lifted = [(k, {**sc, "score": sc["score"] + lift + 1e-3, "exact": lift + 1e-3})
              if k in holds else (k, sc) for k, sc in hits]  # fmt: skip
    return sorted(lifted, key=lambda h: (-h[1]["score"], h[0]))
