"""Snippets: a short excerpt of a hit's body around what the query matched.

The sentence holding most of the query's content words is the centre (the body's start for a
hit found by meaning); the sentences after it, then before it, are added while they fit.
"""

from __future__ import annotations

import re

from nxm.search.terms import content_words

SNIPPET_CHARS = 240
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def _hits(sentence: str, asked: set[str]) -> int:
    return len(content_words(sentence) & asked)


def _cut(text: str, asked: set[str], limit: int) -> str:
    """``text`` cut at word boundaries to ``limit`` characters around its first matched word."""
    words = text.split()
    first = next((i for i, w in enumerate(words) if _hits(w, asked)), 0)
    start = max(0, first - 3)  # a little before the first match
    out: list[str] = []
    size = 0
    for w in words[start:]:
        if size + len(w) + 1 > limit - 2:
            break
        out.append(w)
        size += len(w) + 1
    lead = "…" if start > 0 else ""
    tail = "…" if start + len(out) < len(words) else ""
    return f"{lead}{' '.join(out)}{tail}"


def snippet(body: str, asked: set[str], limit: int = SNIPPET_CHARS) -> tuple[str, bool]:
    """The excerpt of ``body`` for the query words ``asked``, and whether it is cut."""
    whole = " ".join(body.split())
    if len(whole) <= limit:
        return whole, False
    sentences = [" ".join(s.split()) for s in _SENTENCE.split(body) if s.strip()]
    scores = [_hits(s, asked) for s in sentences]
    centre = max(range(len(sentences)), key=lambda i: (scores[i], -i)) if sentences else 0
    if not sentences:
        return _cut(whole, asked, limit), True
    if len(sentences[centre]) > limit:
        return _cut(sentences[centre], asked, limit), True
    lo = hi = centre
    size = len(sentences[centre])
    while True:
        if hi + 1 < len(sentences) and size + 1 + len(sentences[hi + 1]) <= limit - 2:
            hi += 1
            size += 1 + len(sentences[hi])
        elif lo > 0 and size + 1 + len(sentences[lo - 1]) <= limit - 2:
            lo -= 1
            size += 1 + len(sentences[lo])
        else:
            break
    text = " ".join(sentences[lo : hi + 1])
    return ("…" if lo > 0 else "") + text + ("…" if hi + 1 < len(sentences) else ""), True
