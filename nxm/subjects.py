"""What a memory is about, for grouping knowledge: its subject, found cheaply in its introduction.

`subjects(records)` gives each record the first of these its introduction names (leaving out
code: paths, ``ENV_VARS``, ``key=value``), preferring one that other memories name too:

1. a **name**: a word-list name (PostgreSQL, in any spelling), a kebab-case component
   (``ledger-svc``), a team or component phrase ("payments team", "billing service"), a
   capitalised name mid-sentence or a known first name ("Dana Kim"), an ``@handle``; a
   kebab-case word that is no component ("forward-only") only when another memory uses it;
2. else a **topic word**: the content word of the introduction that the most other memories
   use, among those not used by more than one memory in twenty ("migrations");
3. else none.

One regular-expression scan per distinct introduction, stopping at the first name, and a
few dictionary look-ups (docs/benchmarks.md, "Knowledge at 10,000 memories").
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from nxm.extract import LISTED_FIRST, component, fold, listed
from nxm.lexicon import FIRST_NAMES, SENTENCE_VERBS, STOP, TEAM_HEADS, THING_HEADS

_HEADS = TEAM_HEADS | THING_HEADS
_LOWER_LISTED = sorted((w for w in LISTED_FIRST if w[:1].islower()), key=len, reverse=True)
# the tokens a subject can start at, in one pass: code (skipped), an @handle, a kebab-case
# word, a capitalised run, a lower-case word-list name, "<word> team" / "<word> service"
_SCAN = re.compile(
    r"(?<![\w./-])(?=[\w@])(?:"  # only where a word starts: the scan is the hot loop
    r"(?P<code>(?<!\S)[^\s/=_\\`]*[/=_\\`]\S*)"
    r"|(?P<handle>(?<![\w@])@[\w.-]*\w)"
    r"|(?P<kebab>(?<![\w./-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-]))"
    r"|(?P<caps>(?<![\w./-])[A-ZÀ-ÖØ-Þ][^\W_]*(?:['’.+#-][^\W_]+)*(?![\w/=])"
    r"(?: (?:(?:da|de|do|dos|das|van|von|der|den|del|la|le|di) )?"
    r"[A-ZÀ-ÖØ-Þ][^\W_]*(?:['’.+#-][^\W_]+)*(?![\w/=]))*)"
    rf"|(?P<listed>(?<![\w./-])(?:{'|'.join(map(re.escape, _LOWER_LISTED))})(?![\w/-]))"
    rf"|(?P<head>(?<![\w./-])[a-z][a-z0-9]+ (?:{'|'.join(sorted(_HEADS, key=len, reverse=True))})s?\b)"
    r")"
)
_WORDS = re.compile(r"(?<![\w/.-])[a-z]{4,}(?![\w/-])")
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
        if words[0] in _STOP:
            return None
        return text, text, True
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
    """Names (key, shown, strong) in the order the text gives them, up to the first strong
    one; and, when there is none, its topic words."""
    names: list[tuple[str, str, bool]] = []
    for m in _SCAN.finditer(text):
        kind = m.lastgroup
        if kind == "code" or kind is None:
            continue
        got = _name(kind, m.group(), m.start())
        if got is None:
            continue
        names.append(got)
        if got[2]:
            return names, []  # the first name decides; topic words are for memories with none
    found = _WORDS.findall(_SCAN_CODE.sub(" ", text).casefold())
    return names, [w for w in dict.fromkeys(found) if w not in _STOP]


_SCAN_CODE = re.compile(r"[^\s/=_\\`]*[/=_\\`]\S*")


_SELF = re.compile(
    r"^(?:the user|user|i|i'm|i've|my|prefers|likes|loves|wants|dislikes|hates|uses)\b",
    re.IGNORECASE,
)  # a user's memory about themselves: "The user prefers …", "Prefers short answers"


def subjects(records: list[dict[str, Any]]) -> dict[str, str | None]:
    """Each record's subject (shown form), or None, keyed by record key."""
    read: dict[str, tuple[list[tuple[str, str, bool]], list[str]]] = {}  # each text once
    uses: Counter[tuple[str, str | None]] = Counter()
    per: list[tuple[str, tuple[str, str | None]]] = []
    for r in records:
        text = r["introduction"] or r["body"][:200]
        if text not in read:
            read[text] = _candidates(text)
        user = r.get("user_id")
        about = (text, user if user and _SELF.match(text) else None)  # "The user prefers …"
        uses[about] += 1
        per.append((r["key"], about))
    df: Counter[str] = Counter()
    for (text, user), n in uses.items():
        names, words = read[text]
        if user:
            df[_key(user)] += n
        for name in names:
            df[name[0]] += n
        for word in words:
            df[word] += n
    ceiling = max(3, len(records) // 20)
    picked: dict[tuple[str, str | None], tuple[str, str] | None] = {}
    for about in uses:
        text, user = about
        names, words = read[text]
        if user:
            picked[about] = (_key(user), user)
            continue
        pick = next((x for x in names if x[2] or df[x[0]] > 1), None)  # the first name
        if pick is not None:
            picked[about] = pick[:2]
            continue
        topical = [w for w in words if 1 < df[w] <= ceiling]
        best = max(topical, key=lambda w: df[w]) if topical else None
        picked[about] = (best, best) if best else None
    # "Dana" is the subject "Dana Kim" when one subject of several words starts with it
    full: dict[str, set[str]] = {}
    shown: dict[str, Counter[str]] = {}
    for about, got in picked.items():
        if got:
            if " " in got[0]:
                full.setdefault(got[0].split()[0], set()).add(got[0])
            shown.setdefault(got[0], Counter())[got[1]] += uses[about]
    final: dict[tuple[str, str | None], str | None] = {}
    for about, got in picked.items():
        if got is None:
            final[about] = None
            continue
        k = got[0]
        if " " not in k and len(full.get(k, ())) == 1:
            k = next(iter(full[k]))
        counts = shown[k]
        final[about] = min(counts, key=lambda s: (-counts[s], s))  # its most used spelling
    return {key: final[about] for key, about in per}


__all__ = ["subjects"]
