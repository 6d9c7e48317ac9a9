"""The metrics of one ranked list against a query's grades, and their means by kind.

A query grades memories 2 (answers it), 1 (related, helps) or 0 (listed on purpose: a stale
version or an identifier twin); a memory it does not grade is 0. ``distractors`` are graded
memories that must not outrank the answer (the superseded decision, the twin identifier).

- nDCG@10: linear gains (the grade), discount log2(rank + 1), divided by the ideal ordering of
  the query's grades (trec_eval's convention).
- recall@5: the share of the grade-2 memories in the first five.
- MRR@10: 1 / rank of the first grade-2 memory, 0 when none is in the first ten.
- ahead: for a query with distractors, 1 when a grade-2 memory is in the first ten and ranks
  above every distractor (one absent from the list ranks below it), else 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

K = 10
KINDS = ("identifier", "plain", "paraphrase", "multi", "temporal")  # answerable kinds
NEGATIVE = "negative"


def dcg(gains: Iterable[float]) -> float:
    return math.fsum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg(ranked: Sequence[str], grades: Mapping[str, int], k: int = K) -> float:
    """nDCG@k of ``ranked`` (ids, best first) against ``grades``; 0 for a query grading none."""
    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg(grades.get(key, 0) for key in ranked[:k]) / ideal


def recall(ranked: Sequence[str], grades: Mapping[str, int], k: int = 5) -> float:
    """The share of the grade-2 memories among the first ``k``."""
    answers = {key for key, g in grades.items() if g == 2}
    return len(answers & set(ranked[:k])) / len(answers) if answers else 0.0


def mrr(ranked: Sequence[str], grades: Mapping[str, int], k: int = K) -> float:
    """1 / rank of the first grade-2 memory within the first ``k``, else 0."""
    return next((1.0 / i for i, key in enumerate(ranked[:k], 1) if grades.get(key) == 2), 0.0)


def ahead(
    ranked: Sequence[str], grades: Mapping[str, int], distractors: Sequence[str], k: int = K
) -> float:
    """1.0 when a grade-2 memory in the first ``k`` outranks every distractor, else 0.0."""
    top = list(ranked[:k])
    first = next((i for i, key in enumerate(top) if grades.get(key) == 2), None)
    if first is None:
        return 0.0
    return float(all(d not in top[:first] for d in distractors))


def score(query: Mapping[str, Any], ranked: Sequence[str]) -> dict[str, float]:
    """The metrics of one answerable query's ranked ids."""
    grades = query["grades"]
    out = {
        "ndcg@10": ndcg(ranked, grades),
        "recall@5": recall(ranked, grades),
        "mrr@10": mrr(ranked, grades),
    }
    if query.get("distractors"):
        out["ahead"] = ahead(ranked, grades, query["distractors"])
    return out


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    """Each metric's mean over the rows that have it, with the row count ``n``."""
    out: dict[str, float] = {"n": len(rows)}
    for metric in ("ndcg@10", "recall@5", "mrr@10", "ahead"):
        vals = [r[metric] for r in rows if metric in r]
        if vals:
            out[metric] = round(statistics.fmean(vals), 4)
            if metric == "ahead":
                out["ahead_n"] = len(vals)
    return out


def by_kind(rows: list[tuple[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Means per answerable kind and over all of them ("overall")."""
    out = {kind: mean([m for k, m in rows if k == kind]) for kind in KINDS}
    out = {kind: m for kind, m in out.items() if m["n"]}
    out["overall"] = mean([m for k, m in rows if k in KINDS])
    return out


def floor_at(tops: list[float], miss: float = 0.05) -> float | None:
    """The highest floor below which at most ``miss`` of these top scores fall (the answerable
    queries' best scores): a floor there empties at most that share of the answerable lists."""
    if not tops:
        return None
    ordered = sorted(tops)
    return ordered[math.floor(miss * len(ordered))]


def negatives(
    neg_tops: list[float | None], ans_tops: list[float | None], floor: float | None
) -> dict[str, Any]:
    """What the negative queries got: how many came back empty (nothing at all, or nothing at
    or above ``floor``), their top scores, and the same emptiness for answerable queries."""

    def empty(tops: list[float | None]) -> float:
        gone = [t is None or (floor is not None and t < floor) for t in tops]
        return round(statistics.fmean(gone), 4) if gone else 0.0

    scored = sorted(t for t in neg_tops if t is not None)
    return {
        "n": len(neg_tops),
        "floor": floor,
        "empty": empty(neg_tops),
        "answerable_empty": empty(ans_tops),
        "top_median": round(statistics.median(scored), 4) if scored else None,
        "top_max": round(scored[-1], 4) if scored else None,
    }
