"""Names as the word lists know them (`nxm.graph.lexicon`), found in text, and the forms names
are compared in: `norm` (what an entity's id hashes) and `fold` (`norm` without accents).
"""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise

from nxm.graph.lexicon import ORGS, PLACES, STOP, TECH

_ABBREV = ("e.g.", "i.e.", "etc.", "vs.", "Dr.", "Mr.", "Ms.", "Mrs.", "St.", "approx.", "cf.")
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[^\s\w]*[\w@])|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def sentences(text: str) -> list[str]:
    """Split text into sentences (lines and sentence ends; abbreviations kept whole)."""
    out: list[str] = []
    for piece in _SENT_SPLIT.split(text):
        piece = _BULLET.sub("", piece or "").strip()
        if not piece:
            continue
        if out and out[-1].endswith(_ABBREV):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def norm(name: str) -> str:
    """The form an entity name is compared and identified in: casefolded, spaces folded."""
    name = " ".join(name.split()).casefold()
    return name[4:] if name.startswith("the ") else name


def fold(name: str) -> str:
    """`norm` without accents: the form two spellings of one name share ("Chloé", "Chloe")."""
    decomposed = unicodedata.normalize("NFKD", norm(name))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_LISTS = (("THING", TECH), ("ORGANIZATION", ORGS), ("PLACE", PLACES))
_KEYS = {tuple(w.split()): (kind, c) for kind, names in _LISTS for w, c in names.items()}
_TOKEN = re.compile(r"[^\W_][\w.+#'’-]*")
_NAME_AFTER = re.compile(r" [A-Z][a-z]")
_BEFORE, _AFTER = ("/", "@", ".", "-", "_"), ("/", "_", "-")  # a name never follows / precedes
_FIRST: dict[str, int] = {}  # first word of a name -> the most words a name starting so has
for _key in _KEYS:
    _FIRST[_key[0]] = max(_FIRST.get(_key[0], 0), len(_key))
LISTED_FIRST = frozenset(_FIRST)  # the first words of word-list names


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Words with their spans; trailing dots, dashes and possessives are not part of a word."""
    out = []
    for m in _TOKEN.finditer(text):
        word, end = m.group(0), m.end()
        if word.endswith(("'s", "’s")):
            word, end = word[:-2], end - 2
        stripped = word.rstrip(".-'’")
        out.append((stripped, m.start(), end - (len(word) - len(stripped))))
    return out


def listed_spans(text: str) -> list[tuple[int, int, str, str]]:
    """Word-list names in ``text``, longest first at each word: (start, end, type, canonical)."""
    toks = _tokens(text)
    out = []
    i = 0
    while i < len(toks):
        for n in range(min(_FIRST.get(toks[i][0], 0), len(toks) - i), 0, -1):
            seq = toks[i : i + n]
            hit = _KEYS.get(tuple(t[0] for t in seq))
            if hit is None or any(text[x[2] : y[1]] != " " for x, y in pairwise(seq)):
                continue  # not a name, or its words are not one space apart
            start, end = seq[0][1], seq[-1][2]
            if text[start - 1 : start] in _BEFORE or text[end : end + 1] in _AFTER:
                continue  # part of a path, an address, an identifier or a longer word
            if hit[0] == "PLACE" and _NAME_AFTER.match(text, end) and toks[i + n][0] not in STOP:
                continue  # "Austin Miller" is a person, not the city
            out.append((start, end, *hit))
            i += n - 1
            break
        i += 1
    return out


def listed(words: list[str], i: int) -> tuple[int, str, str] | None:
    """The longest word-list name at ``words[i]``: (length in words, type, canonical), or None."""
    for n in range(min(_FIRST.get(words[i], 0), len(words) - i), 0, -1):
        hit = _KEYS.get(tuple(words[i : i + n]))
        if hit is not None:
            return n, hit[0], hit[1]
    return None


__all__ = ["LISTED_FIRST", "fold", "listed", "listed_spans", "norm", "sentences"]
