"""The content words of a text, as the full-text index roughly sees them.

A content word is a run of letters and digits that is not an English function word, reduced to
its Snowball English stem (the algorithm of LanceDB's English stemmer), so "deploys" and
"deployment" are one word. Ranking reads them to judge how much of a query the keyword matches
really contain (`nxm.search.rank.keyword_evidence`); snippets to find where a body answers the query.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

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
def _stem() -> object:
    try:  # comes with fastembed; without it words are compared unstemmed
        from py_rust_stemmers import SnowballStemmer
    except ImportError:
        return lambda word: word
    return SnowballStemmer("english").stem_word


@lru_cache(maxsize=8192)  # a server ranks the same memories' texts again and again
def content_words(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words."""
    fn = _stem()
    return frozenset(fn(t) for t in TOKEN.findall(text.lower()) if t not in STOPWORDS)  # type: ignore[operator]
