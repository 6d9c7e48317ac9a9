"""Currency: when memories state two versions of one fact, the current one ranks first.

Search results are re-ordered after fusion from what the records know, with no language model:
a memory that links an older one (``supersedes``), or a later one on the same subject scoring
near it, trades places and scores with it (``currency``, ``newer``). Turns of one session
are compared only through a link: a later "now" there is a reply, not a new version.
docs/retrieval.md, "Currency", gives the thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nxm.curate import linked

SAME = 0.6
NEAR = 0.7
DEPTH = 20  # results looked at: a newer version ranked below this is not lifted


def _cosine(a: Any, b: Any) -> float:
    import numpy as np

    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b)) / (na * nb) if na and nb else 0.0


def replaces(new: Mapping[str, Any], old: Mapping[str, Any], vectors: Mapping[str, Any]) -> bool:
    """Whether ``new`` reads as the current version of ``old`` (the rules above, score aside)."""
    if old["key"] in linked(new):
        return True
    if new.get("session_id") or old.get("session_id"):
        return False  # lines of a conversation answer each other; they are not versions
    if (new.get("created") or "") <= (old.get("created") or ""):
        return False  # whoever wrote the later one need not have said "now" or "replaced"
    a, b = vectors.get(new["key"]), vectors.get(old["key"])
    return a is not None and b is not None and _cosine(a, b) >= SAME


def order(
    hits: list[tuple[str, dict[str, Any]]], records: Mapping[str, Mapping[str, Any]],
    vectors: Mapping[str, Any], words: Mapping[str, float] | None = None,
) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    """``hits`` (best first) with each current version in the place of what it replaces."""
    words = words or {}
    if len(hits) < 2:
        return hits
    scores = dict(hits)
    for _ in range(2):  # a chain of three versions settles in two passes
        moved = False
        for old in sorted(scores, key=lambda k: (-scores[k]["score"], k)):
            for new in scores:
                low, high = scores[new]["score"], scores[old]["score"]
                if new == old or low >= high:
                    continue
                fewer = words.get(new, 0.0) < 1.0 <= words.get(old, 0.0)  # old: all of it
                if old not in linked(records[new]) and (low < NEAR * high or fewer):
                    continue
                if not replaces(records[new], records[old], vectors):
                    continue
                # the two trade places: what ranked between them keeps its rank
                scores[new] = {**scores[new], "score": high}
                scores[new]["currency"] = scores[new].get("currency", 0.0) + high - low
                scores[old] = {**scores[old], "score": low, "newer": new}
                scores[old]["currency"] = scores[old].get("currency", 0.0) + low - high
                moved = True
        if not moved:
            break
    return sorted(scores.items(), key=lambda kv: (-kv[1]["score"], kv[0]))
