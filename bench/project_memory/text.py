"""Content words of a text, for the paraphrase check: a query of kind "paraphrase" may share no
content word with the memories that answer it.

A content word is a token (a run of letters and digits; ``ledger-svc`` is two) that is not in
`STOPWORDS`, reduced to its Snowball English stem (the algorithm of the full-text index's
English stemmer), so "deploys" and "deployment" count as the same word.
"""

from __future__ import annotations

import re
from functools import cache

# English function words (NLTK's list, with the question words a query starts with).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just let ll me more most
    mustn my myself no nor not now of off on once only or other ought our ours ourselves out
    over own re s same shan she should shouldn so some such t than that the their theirs them
    themselves then there these they this those through to too under until up ve very was
    wasn we were weren what when where which while who whom why will with won would wouldn
    you your yours yourself yourselves d m o y ain ma shall may might must also whether
    """.split()
)
TOKEN = re.compile(r"[a-z0-9]+")


@cache
def _stemmer():  # py_rust_stemmers comes with fastembed
    from py_rust_stemmers import SnowballStemmer

    return SnowballStemmer("english")


def content_words(text: str) -> set[str]:
    """The stems of ``text``'s content words."""
    stem = _stemmer().stem_word
    return {stem(t) for t in TOKEN.findall(text.lower()) if t not in STOPWORDS}


def shared_words(query: str, answer: str) -> set[str]:
    """The content words ``query`` shares with ``answer`` (empty for a true paraphrase)."""
    return content_words(query) & content_words(answer)
