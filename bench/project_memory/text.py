"""Content words of a text, for the paraphrase check: a query of kind "paraphrase" may share no
content word with the memories that answer it. The words are those ranking reads
(`nxm.search.terms`): tokens that are not function words, Snowball-stemmed.
"""

from __future__ import annotations

from nxm.search.terms import content_words

__all__ = ["content_words", "shared_words"]


def shared_words(query: str, answer: str) -> set[str]:
    """The content words ``query`` shares with ``answer`` (empty for a true paraphrase)."""
    return set(content_words(query) & content_words(answer))
