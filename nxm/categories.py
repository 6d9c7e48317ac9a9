"""The category vocabulary: a deterministic keyword classifier, and the check that keeps one
spelling of each category (``gotcha`` beside ``gotchas`` is refused, with the one to use).

Each category of `VOCABULARY` (docs/lifecycle.md) has cue patterns; the most cues found win
(ties: the earlier category), none leaves it uncategorised. No model: the same text always gets
the same category. A caller's category always wins: add only calls this when none was given.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# category -> (strong cues (2 points), cues (1 point)); every cue is a regex matched whole-word,
# case-insensitively. Order matters only to break ties.
VOCABULARY: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "preferences": (
        (r"prefers?", r"preferred", r"preference", r"would rather"),
        (r"likes?", r"dislikes?", r"favou?rite", r"wants?", r"hates?", r"style of"),
    ),
    "decisions": (
        (r"decided", r"decision", r"we chose", r"chose", r"rejected", r"opted"),
        (r"instead of", r"trade-?off", r"because", r"went with", r"settled on", r"adr"),
    ),
    "gotchas": (
        (r"gotcha", r"pitfall", r"beware", r"flaky", r"flakes?", r"caveat", r"footgun"),
        (r"careful", r"breaks?", r"fails?", r"failing", r"bug", r"workaround", r"crash(?:es)?",
         r"timeouts?", r"surprising(?:ly)?", r"silently", r"watch out", r"trap", r"slow"),
    ),
    "conventions": (
        (r"convention", r"always", r"never", r"naming", r"style guide"),
        (r"must", r"should", r"do not", r"don't", r"format(?:ted)?", r"lint", r"rule",
         r"prefix(?:ed)?", r"camelcase", r"snake_case"),
    ),
    "owners": (
        (r"owns", r"owner", r"works at", r"works for", r"leads", r"maintainer",
         r"responsible for", r"reports to"),
        (r"ask", r"team", r"manager", r"reviewer", r"on call", r"on-call", r"contact", r"ping"),
    ),
    "processes": (
        (r"deploy(?:s|ed|ment)?", r"release(?:s|d)?", r"runbook", r"procedure", r"workflow"),
        (r"steps?", r"how to", r"pipeline", r"ci", r"run", r"merge", r"rollback"),
    ),
    "status": (
        (r"this week", r"in progress", r"currently", r"blocked", r"wip", r"until .* lands"),
        (r"today", r"for now", r"temporar(?:y|ily)", r"this sprint", r"pending"),
    ),
    "tech-stack": (
        (r"stack", r"built (?:with|on)", r"written in", r"framework"),
        (r"database", r"library", r"version", r"runs on", r"uses", r"dependency"),
    ),
}  # fmt: skip


@functools.cache
def _cues() -> dict[str, tuple[tuple[re.Pattern[str], int], ...]]:
    # compiled on first use: a read (list, show) never pays for them
    return {
        name: tuple(
            (re.compile(rf"(?<![\w-]){cue}(?![\w-])", re.IGNORECASE), points)
            for cues, points in ((strong, 2), (weak, 1))
            for cue in cues
        )
        for name, (strong, weak) in VOCABULARY.items()
    }


def scores(text: str) -> dict[str, int]:
    """Each category's score for ``text`` (only categories with a cue appear)."""
    out: dict[str, int] = {}
    for name, cues in _cues().items():
        points = sum(points for pattern, points in cues if pattern.search(text))
        if points:
            out[name] = points
    return out


def categorize(text: str) -> str | None:
    """A category for ``text`` from the documented vocabulary, or None when no cue occurs."""
    got = scores(text)
    if not got:
        return None
    order = list(VOCABULARY)
    return min(got, key=lambda name: (-got[name], order.index(name)))


def explain(text: str) -> dict[str, Any]:
    """The category chosen and every score that led to it (for docs and debugging)."""
    return {"category": categorize(text), "scores": scores(text)}


def near(category: str, known: set[str]) -> str | None:
    """The known category ``category`` is another spelling of (case, plural, a typo), or None."""
    import difflib

    if category in known:
        return None
    digits = re.findall(r"\d+", category)  # python2 and python3, cat-1 and cat-2: two kinds
    folded = {k.lower(): k for k in known if re.findall(r"\d+", k) == digits}
    hit = difflib.get_close_matches(category.lower(), list(folded), n=1, cutoff=0.85)
    return folded[hit[0]] if hit else None


__all__ = ["VOCABULARY", "categorize", "explain", "near", "scores"]
