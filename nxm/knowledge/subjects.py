"""What a memory is about, for grouping knowledge: its subject, found cheaply in its introduction.

The first name it gives (code left out), else the topic word the most other memories use, else
none (docs/lifecycle.md, "Knowledge"). One regular-expression scan per distinct introduction,
stopping at the first name: knowledge reads every memory on every call.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from nxm.graph.extract import component
from nxm.graph.lexicon import FIRST_NAMES, SENTENCE_VERBS, STOP, TEAM_HEADS, THING_HEADS
from nxm.graph.names import LISTED_FIRST, fold, listed

_HEADS = TEAM_HEADS | THING_HEADS


def _trie(words: list[str]) -> str:
    """One regular expression matching any of ``words``, branching on each next character
    (Python's ``re`` tries every branch of a flat alternation at every word start)."""
    tree: dict[str, Any] = {}
    for w in words:
        node = tree
        for c in w:
            node = node.setdefault(c, {})
        node[""] = {}

    def walk(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(c) + walk(sub) for c, sub in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if ends else body

    return walk(tree)


_LOWER_LISTED = _trie([w for w in LISTED_FIRST if w[:1].islower()])
# the tokens a subject can start at, in one pass: code (skipped), an @handle, a kebab-case
# word, a capitalised run, a lower-case word-list name, "<word> team" / "<word> service"
_SCAN = re.compile(
    r"(?<![\w./=-])(?=[\w@])(?:"  # only where a word starts (the scan is the hot loop), and
    # never inside code: each kind is bounded so that a path or an identifier matches none
    r"(?P<handle>(?<![\w@])@[\w.-]*\w)"
    r"|(?P<kebab>(?<![\w./-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-]))"
    r"|(?P<caps>(?<![\w./-])[A-ZÀ-ÖØ-Þ][^\W_]*(?:['’.+#-][^\W_]+)*(?![\w/=])"
    r"(?: (?:(?:da|de|do|dos|das|van|von|der|den|del|la|le|di) )?"
    r"[A-ZÀ-ÖØ-Þ][^\W_]*(?:['’.+#-][^\W_]+)*(?![\w/=]))*)"
    rf"|(?P<listed>(?<![\w./-]){_LOWER_LISTED}(?![\w/-]))"
    rf"|(?P<head>(?<![\w./-])[a-z][a-z0-9]+ {_trie(sorted(_HEADS))}s?\b)"
    r")"
)
_WORDS = re.compile(r"(?<![\w/.=-])[a-z]{4,}(?![\w/=.-])")
_COMMON = frozenset(
    """about above after again against also always another anything around because been before
    being below between both cannot could does doing done down during each either else every
    first from have having here into just keep later like make many more most must need never
    next none only other over same should since some still such than that their them then there
    these they this those through under until very were what when where which while will with
    within without would your using used uses instead rather everything nothing something
    thing things time times needs want wants going makes made take takes work works worked
    check please note one two three four five several""".split()
)
_STOP = frozenset(w.casefold() for w in STOP) | _COMMON


def _key(name: str) -> str:
    return name.casefold() if name.isascii() else fold(name)


def _verb(word: str) -> bool:
    """A sentence's first word that is a verb ("Traced", "Ping"), not a name's first word."""
    return word in SENTENCE_VERBS or (word.endswith(("ed", "ing")) and word not in FIRST_NAMES)


def _name(kind: str, text: str, start: int) -> tuple[str, str, bool] | None:
    """A scanned token as a candidate name (key, shown, strong), or None."""
    if kind == "handle":
        return text.casefold(), text, True
    if kind == "kebab":
        return text, text, component(text)
    words = text.split()
    if kind == "head":
        return None if words[0] in _STOP else (text, text, True)
    hit = listed(words, 0)
    if hit is not None:
        return _key(hit[2]), hit[2], True
    if kind == "listed":
        return None
    while words and (
        words[0] in STOP or words[0].rstrip("'’s") in STOP or (start == 0 and _verb(words[0]))
    ):
        words.pop(0)
        start = -1  # what is left is not the sentence's first word
    while words and words[-1] in STOP:
        words.pop()
    words = [w.removesuffix("'s").removesuffix("’s").rstrip(".'’-") for w in words]
    if not words or (len(words) == 1 and (words[0].isupper() or len(words[0]) < 2)):
        return None
    if start == 0 and len(words) == 1 and words[0] not in FIRST_NAMES:
        return None  # a sentence's capitalised first word ("Timeouts in …") names nothing
    if all(w.isupper() for w in words):
        return None
    shown = " ".join(words)
    hit = listed(words, 0)
    if hit is not None and hit[0] == len(words):
        return _key(hit[2]), hit[2], True
    return _key(shown), shown, True


def _candidates(text: str) -> tuple[list[tuple[str, str, bool]], list[str]]:
    """Names (key, shown, strong) in text order up to the first strong one, else topic words."""
    names: list[tuple[str, str, bool]] = []
    for m in _SCAN.finditer(text):
        got = _name(m.lastgroup, m.group(), m.start())  # type: ignore[arg-type]
        if got is None:
            continue
        names.append(got)
        if got[2]:
            return names, []  # the first name decides; topic words are for memories with none
    return names, [w for w in dict.fromkeys(_WORDS.findall(text.casefold())) if w not in _STOP]


_SELF = re.compile(
    r"^(?:the user|user|i|i'm|i've|my|prefers|likes|loves|wants|dislikes|hates|uses)\b",
    re.IGNORECASE,
)  # a user's memory about themselves: "The user prefers …", "Prefers short answers"


def _pick(names: list[tuple[str, str, bool]], words: list[str], df: Counter[str], ceiling: int):
    """(key, shown) of a memory's subject, or None."""
    for name in names:  # the first name (a weak one only when another memory uses it too)
        if name[2] or df[name[0]] > 1:
            return name[0], name[1]
    best, most = None, 1
    for w in words:
        if most < df[w] <= ceiling:
            best, most = w, df[w]
    return (best, best) if best else None


def subjects(records: list[dict[str, Any]]) -> dict[str, str | None]:
    """Each record's subject (shown form), or None, keyed by record key."""
    read: dict[str, tuple[list[tuple[str, str, bool]], list[str]]] = {}  # each text once
    rows: list[tuple[str, str, str | None]] = []
    df: Counter[str] = Counter()
    for r in records:
        text = r["introduction"] or r["body"][:200]
        got = read.get(text)
        if got is None:
            got = read[text] = _candidates(text)
            df.update([name[0] for name in got[0]] + got[1])
        user = r.get("user_id")
        if user and _SELF.match(text):  # "The user prefers …": the user is the subject
            df[_key(user)] += 1
        else:
            user = None
        rows.append((r["key"], text, user))
    ceiling = max(3, len(records) // 20)
    picked: dict[str, tuple[str, str] | None] = {
        text: _pick(names, words, df, ceiling) for text, (names, words) in read.items()
    }
    # "Dana" is the subject "Dana Kim" when one subject of several words starts with it
    full: dict[str, set[str]] = {}
    shown: dict[str, Counter[str]] = {}
    mine: list[tuple[str, tuple[str, str] | None]] = []
    for key, text, user in rows:
        got = (_key(user), user) if user else picked[text]
        mine.append((key, got))
        if got:
            if " " in got[0]:
                full.setdefault(got[0].split(" ", 1)[0], set()).add(got[0])
            shown.setdefault(got[0], Counter())[got[1]] += 1
    spelling: dict[str, str] = {}
    for k in shown:
        target = next(iter(full[k])) if " " not in k and len(full.get(k, ())) == 1 else k
        counts = shown[target]
        spelling[k] = min(counts, key=lambda s: (-counts[s], s))  # its most used spelling
    return {key: spelling[got[0]] if got else None for key, got in mine}


__all__ = ["subjects"]
