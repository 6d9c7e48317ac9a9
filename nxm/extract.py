"""Deterministic entity and relation extraction: patterns and word lists, no model, no network.

`extract(text, user_id)` finds, sentence by sentence:

- **mentions**: ``@handles`` (PERSON); names from the word lists below (`TECH` things,
  `ORGS`, `PLACES`), with their aliases folded to one canonical name; noun phrases after a
  determiner that end in a component word ("the billing service", "the platform team");
  capitalised word runs ("João Silva", "Acme Corp"); and "the user" / "I" as the memory's
  ``user_id``. Sentence-initial capitalised words are kept only with more evidence (a relation
  follows, a possessive, or the same word mid-sentence elsewhere), so "Deploy to staging" is
  not an entity.
- **relations** between adjacent mentions whose connecting words match a pattern ("works at",
  "is a backend engineer at", "leads", "is led by", "uses", "depends on", "prefers", "owns",
  "is on the", "is based in", "reports to"), continued over lists ("uses A, B and C").

Every mention carries type votes (a word list is strong evidence, a role in a relation is
good evidence, the shape of a name is weak); the graph sums them over every memory that
mentions the entity, so one memory's guess can be outvoted. docs/graph.md gives the guidelines
and the measured precision and recall.
"""

from __future__ import annotations

import re
from typing import Any

from nxm.lexicon import (
    FIRST_NAMES,
    ORG_SUFFIXES,
    ORGS,
    PLACES,
    SOLO_HEADS,
    STOP,
    TEAM_HEADS,
    TECH,
    THING_HEADS,
    THING_WORDS,
)

EXTRACTOR_VERSION = 1
ENTITY_TYPES = ("PERSON", "ORGANIZATION", "PLACE", "THING")
RELATIONS = (
    "WORKS_AT", "LEADS", "USES", "DEPENDS_ON", "PREFERS", "OWNS", "MEMBER_OF", "LOCATED_IN",
    "REPORTS_TO",
)  # fmt: skip


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


_DICT = {**{w: ("THING", c) for w, c in TECH.items()}}
_DICT.update({w: ("ORGANIZATION", c) for w, c in ORGS.items()})
_DICT.update({w: ("PLACE", c) for w, c in PLACES.items()})
_TOKEN = re.compile(r"[^\W_][\w.+#'’-]*")
_KEYS = {tuple(w.split()): hit for w, hit in _DICT.items()}
_FIRST: dict[str, int] = {}  # first word of a name -> the most words a name starting so has
for _key in _KEYS:
    _FIRST[_key[0]] = max(_FIRST.get(_key[0], 0), len(_key))


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


def _known(text: str) -> list[tuple[int, int, str, str]]:
    """Word-list names in ``text``, longest first at each word: (start, end, type, canonical)."""
    toks = _tokens(text)
    out = []
    i = 0
    while i < len(toks):
        longest = _FIRST.get(toks[i][0])
        if longest is None:
            i += 1
            continue
        for n in range(min(longest, len(toks) - i), 0, -1):
            seq = toks[i : i + n]
            hit = _KEYS.get(tuple(t[0] for t in seq))
            if hit is None:
                continue
            if any(text[x[2] : y[1]] != " " for x, y in zip(seq, seq[1:], strict=False)):
                continue
            start, end = seq[0][1], seq[-1][2]
            if text[start - 1 : start] in ("/", "@", ".", "-") or text[end : end + 1] == "/":
                continue  # part of a path, an address or a longer word
            out.append((start, end, *hit))
            i += n - 1
            break
        i += 1
    return out


_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z0-9][\w-]*(?![\w.-]*\.\w)")
_CODE = re.compile(r"`[^`]*`")
_UP = r"[A-ZÀ-ÖØ-Þ]"
_WORD = rf"{_UP}[^\W_]*(?:[-'’.][^\W_]+)*"
_CAPS = re.compile(
    rf"(?<![\w@./-]){_WORD}(?:\s+(?:(?:da|de|do|dos|das|van|von|der|den|del|la|le|di)\s+)?{_WORD})*"
)
_HEADS = "|".join(sorted(TEAM_HEADS | THING_HEADS, key=len, reverse=True))
_NP = re.compile(
    rf"\b(?:the|our|their|its|his|her|my|your)\s+((?:(?!the\b)[A-Za-z][\w.-]*\s+){{0,2}}(?:{_HEADS})s?)\b",
    re.IGNORECASE,
)
_NP_DROP = frozenset(
    "new old current main entire whole same other existing legacy shared internal standard".split()
)
_NOT_NAME = re.compile(r"^(?:[A-Z]{2,5}|[A-Z][A-Z0-9]*-?\d+)$")  # acronyms, issue ids, codes
_SELF = re.compile(r"^(?:the user|user|i|i'm|i've|my)\b", re.IGNORECASE)
_COREF = re.compile(r"^(?:he|she)\b", re.IGNORECASE)
_PERSON_BEFORE = re.compile(
    r"(?:\bask|\basking|\bping|\btalk to|\bcheck with|\bcc|\bemail|\bmessage|\bthanks to|"
    r"\bassigned to|\baccording to|\bcontact|\breach out to|\bhand (?:it )?over to)\s+$",
    re.IGNORECASE,
)
_ADVERBS = (
    r"(?:(?:also|now|currently|still|mostly|mainly|primarily|usually|only|always|really|"
    r"strongly|heavily|actually|both|all|already|officially|formally|just|recently|mostly) )*"
)


def _c(*patterns: str) -> re.Pattern[str]:
    return re.compile(rf"{_ADVERBS}(?:{'|'.join(patterns)})(?: the| our| a| an)?")


# (relation, reversed, connecting-words pattern), tried in order; the first full match wins.
CONNECTORS: tuple[tuple[str, bool, re.Pattern[str]], ...] = (
    ("REPORTS_TO", False, _c(r"reports? (?:directly )?to", r"reported to")),
    (
        "LOCATED_IN",
        False,
        _c(
            r"(?:is |are |was |were )?(?:based|located|headquartered) in",
            r"lives? in",
            r"works? from",
            r", based in",
        ),
    ),  # fmt: skip
    (
        "LEADS",
        True,
        _c(
            r"(?:is|are|was|were) (?:led|headed|run|managed) by",
            r", led by",
            r"'s (?:lead|head|manager|tech lead) is",
        ),
    ),  # fmt: skip
    (
        "OWNS",
        True,
        _c(
            r"(?:is|are|was|were) (?:owned|maintained) by",
            r", owned by",
            r"'s owner is",
            r"(?:is|are) the responsibility of",
        ),
    ),  # fmt: skip
    ("USES", True, _c(r"(?:is|are) used by")),
    (
        "LEADS",
        False,
        _c(
            r"(?:leads|lead|led|heads|headed|manages|managed|is leading|has led)",
            r"(?:is|was) (?:the )?(?:[\w-]+ )?(?:lead|head|manager|director) (?:of|for|on)",
        ),
    ),  # fmt: skip
    (
        "OWNS",
        False,
        _c(
            r"(?:owns|own|owned|maintains|maintain|maintained)",
            r"(?:is|are) (?:the )?(?:owners?|maintainers?) of",
            r"(?:is|are) responsible for",
            r"looks after",
            r"takes care of",
            r"is the (?:point of )?contact for",
        ),
    ),  # fmt: skip
    (
        "PREFERS",
        False,
        _c(
            r"(?:prefers|prefer|preferred|likes|loves|favou?rs)(?: using| to use)?",
            r"would rather use",
            r"(?:'s )?(?:preferred|favou?rite) [\w ]{1,20} (?:is|are)",
        ),
    ),  # fmt: skip
    (
        "DEPENDS_ON",
        False,
        _c(
            r"(?:depends|depend|depended|relies|rely|relied) on",
            r"is dependent on",
            r"requires|require|required|needs",
        ),
    ),  # fmt: skip
    (
        "USES",
        False,
        _c(
            r"uses|use|used|using|is using|are using",
            r"(?:is |are )?built (?:with|on)",
            r"runs? on",
            r"(?:is )?written in",
            r"(?:is |are )?deployed (?:on|to)",
            r"deploys to",
            r"(?:is )?hosted (?:on|at)",
            r"stores (?:its )?[\w ]{1,20} in",
            r"switched to",
            r"migrated to",
            r"adopted",
            r"talks to",
            r"(?:is |are )?backed by",
        ),
    ),  # fmt: skip
    (
        "MEMBER_OF",
        False,
        _c(r"(?:is|are|was|were) (?:on|in|part of|a member of|member of)", r"joined"),
    ),  # fmt: skip
    (
        "WORKS_AT",
        False,
        _c(
            r"(?:works?|worked|is working|has worked) (?:at|for)",
            r"(?:joined|is employed (?:at|by))",
            r"(?:(?:is|was) |, )(?:an?|the|our) [\w /-]{1,40}? (?:at|for|of)",
        ),
    ),  # fmt: skip
)
_NAME_LIST = re.compile(rf"\s*(?:,|and|&)\s+{_UP}")
_AND = re.compile(r"(?:,\s*)?\band\s+")
_LIST_SEP = re.compile(r"(?:,|, and|and|or|, or|/|&)")
# Type votes a relation gives its ends.
ROLE_VOTES: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "WORKS_AT": ({"PERSON": 2}, {"ORGANIZATION": 2}),
    "LEADS": ({"PERSON": 2}, {}),
    "OWNS": ({"PERSON": 1}, {}),
    "PREFERS": ({"PERSON": 2}, {}),
    "MEMBER_OF": ({"PERSON": 2}, {"ORGANIZATION": 2}),
    "LOCATED_IN": ({}, {"PLACE": 3}),
    "REPORTS_TO": ({"PERSON": 2}, {"PERSON": 2}),
    "USES": ({}, {"THING": 1}),
    "DEPENDS_ON": ({}, {"THING": 1}),
}


def norm(name: str) -> str:
    """The form an entity name is compared and identified in: casefolded, spaces folded."""
    name = " ".join(name.split()).casefold()
    return name[4:] if name.startswith("the ") else name


def tech_names(text: str) -> list[str]:
    """Canonical names of the known technologies mentioned in ``text``."""
    return sorted({name for _, _, kind, name in _known(text) if kind == "THING"})


class _Mention:
    __slots__ = ("end", "kind", "name", "start", "votes")

    def __init__(self, start: int, end: int, name: str, kind: str, votes: dict[str, int]) -> None:
        self.start, self.end, self.name, self.kind, self.votes = start, end, name, kind, votes

    def vote(self, votes: dict[str, int]) -> None:
        for t, n in votes.items():
            self.votes[t] = self.votes.get(t, 0) + n


def _caps_shape(words: list[str]) -> dict[str, int]:
    if words[-1] in ORG_SUFFIXES or words[-1].rstrip(".") in ORG_SUFFIXES:
        return {"ORGANIZATION": 3}
    if words[-1].casefold() in TEAM_HEADS:
        return {"ORGANIZATION": 3}
    if any(w in THING_WORDS for w in words) or any(not w.isalpha() for w in words):
        return {"THING": 2}
    if words[0] in FIRST_NAMES:
        return {"PERSON": 2}
    if 2 <= len([w for w in words if w[:1].isupper()]) <= 3:
        return {"PERSON": 1}
    return {"THING": 1}


def _find(sentence: str, later_caps: set[str]) -> list[_Mention]:
    """Candidate mentions in one sentence, overlaps resolved (word lists first)."""
    text = sentence.replace("`", " ")
    prose = _CODE.sub(lambda m: " " * len(m.group(0)), sentence)  # code spans name no one
    found: list[_Mention] = []
    for start, end, kind, canonical in _known(text):
        if canonical == "Golang" and start == 0:
            continue  # "Go to ..." at a sentence start is a verb
        found.append(_Mention(start, end, canonical, "dict", {kind: 5}))
    found.extend(
        _Mention(m.start(), m.end(), m.group(0), "handle", {"PERSON": 3})
        for m in _HANDLE.finditer(prose)
    )
    for m in _NP.finditer(prose):
        words = m.group(1).split()
        while len(words) > 1 and words[0].casefold() in _NP_DROP:
            words.pop(0)
        head = words[-1].casefold()
        if len(words) < 2 and head not in SOLO_HEADS:
            continue
        if words[0].casefold() in ("a", "an", "this", "that"):
            continue
        head = head if head in TEAM_HEADS | THING_HEADS else head[:-1]
        kind = "ORGANIZATION" if head in TEAM_HEADS else "THING"
        found.append(_Mention(m.start(1), m.end(1), " ".join(words), "np", {kind: 3}))
    for m in _CAPS.finditer(prose):
        words = m.group(0).split()
        start = m.start()
        while words and (words[0] in STOP or words[0].rstrip("'’s") in STOP):
            start = prose.index(words[1], start + len(words[0])) if len(words) > 1 else m.end()
            words.pop(0)
        while words and words[-1] in STOP:
            words.pop()
        if not words:
            continue
        name = " ".join(words)
        if name.endswith(("'s", "’s")):
            name = name[:-2]
        end = start + len(name)
        if not name or (len(words) == 1 and (len(name) == 1 or _NOT_NAME.match(name))):
            continue
        if start == 0 and len(words) == 1:
            tail = text[end:]
            gap = _gap(tail)
            evidence = (
                name in later_caps
                or name in FIRST_NAMES
                or tail.startswith(("'s", "’s"))
                or _NAME_LIST.match(tail) is not None
                or (gap != "" and any(p.match(gap) for r, _, p in CONNECTORS if ROLE_VOTES[r][0]))
            )
            if not evidence:
                continue
        found.append(_Mention(start, end, name, "caps", _caps_shape(words)))
    rank = {"dict": 0, "handle": 1, "np": 2, "caps": 3}
    found.sort(key=lambda m: (rank[m.kind], m.start, -(m.end - m.start)))
    kept: list[_Mention] = []
    for m in found:
        if all(m.end <= k.start or m.start >= k.end for k in kept):
            kept.append(m)
    kept.sort(key=lambda m: m.start)
    return kept


def _gap(text: str) -> str:
    """The first few words of ``text`` (up to the next capital), normalised for a connector."""
    words = []
    for w in text.split()[:8]:
        if w[:1].isupper() or w.startswith("@"):
            break
        words.append(w)
    return " ".join(words).lower()


def _connect(between: str) -> tuple[str, bool] | None:
    gap = " ".join(between.replace("`", " ").split()).lower()
    for relation, reverse, pattern in CONNECTORS:
        if pattern.fullmatch(gap):
            return relation, reverse
    return None


def _allowed(relation: str, source: _Mention, target: _Mention) -> tuple[str, bool] | None:
    """Refine or refuse a relation by what its ends are (a place is never used, only lived in)."""
    tkind = max(target.votes, key=lambda t: target.votes[t]) if target.votes else "THING"
    skind = max(source.votes, key=lambda t: source.votes[t]) if source.votes else "THING"
    if tkind == "PLACE" and relation in ("USES", "MEMBER_OF", "WORKS_AT"):
        return "LOCATED_IN", True
    if relation == "LOCATED_IN" and tkind != "PLACE" and target.kind != "caps":
        return None
    if relation == "MEMBER_OF" and target.name.casefold().split()[-1] not in TEAM_HEADS:
        if tkind != "ORGANIZATION" and target.kind != "caps":
            return None
        relation = "WORKS_AT"
    if (
        relation in ("WORKS_AT", "REPORTS_TO")
        and target.kind in ("dict", "np")
        and tkind == "THING"
    ):
        return None
    if (
        relation in ("WORKS_AT", "LEADS", "PREFERS", "REPORTS_TO")
        and source.kind == "dict"
        and skind == "THING"
    ):
        return None
    if relation == "LEADS" and target.kind == "dict" and tkind == "THING":
        return None  # people lead teams and projects, not technologies
    return relation, True


def extract(text: str, user_id: str | None = None) -> dict[str, Any]:
    """Mentions (name, type votes, sentence index) and relations (source, relation, target, s)."""
    sents = sentences(text)
    caps_mid: set[str] = set()
    for s in sents:
        for m in _CAPS.finditer(s.replace("`", " ")):
            if m.start() > 0:
                caps_mid.update(m.group(0).split())
    mentions: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    last_person: str | None = None
    for i, sent in enumerate(sents):
        found = _find(sent, caps_mid)
        head = _SELF.match(sent)
        if head and user_id:
            found.insert(0, _Mention(0, head.end(), user_id, "self", {"PERSON": 3}))
        elif _COREF.match(sent) and last_person:
            found.insert(0, _Mention(0, _COREF.match(sent).end(), last_person, "coref", {}))  # type: ignore[union-attr]
        before = sent.replace("`", " ")
        for m in found:
            if m.kind != "caps":
                continue
            if _PERSON_BEFORE.search(before[: m.start]):
                m.vote({"PERSON": 2})
            after = _gap(before[m.end :])
            role = next((r for r, rev, p in CONNECTORS if not rev and p.match(after)), None)
            if role and after:
                m.vote(ROLE_VOTES[role][0])
        pairs: list[tuple[_Mention, str, _Mention]] = []
        for a, b in zip(found, found[1:], strict=False):
            between = sent[a.end : b.start]
            got = _connect(between)
            source = a
            if got is None:
                # "X works at Y and uses Z", "X is our designer and works from Z": the clause
                # after the last "and" continues the sentence's subject
                parts = _AND.split(between)
                if len(parts) < 2 or (got := _connect(parts[-1])) is None or got[1]:
                    continue
                source = found[0]
            relation, reverse = got
            source, target = (b, a) if reverse else (source, b)
            ok = _allowed(relation, source, target)
            if ok is None:
                continue
            relation = ok[0]
            pairs.append((source, relation, target))
        # lists: "A uses B, C and D" / "A and B work at C"
        for source, relation, target in list(pairs):
            sources = [s for s, _, _ in pairs]
            idx = found.index(target)
            while idx + 1 < len(found) and _LIST_SEP.fullmatch(
                " ".join(sent[found[idx].end : found[idx + 1].start].split())
            ):
                idx += 1
                if any(found[idx] is s for s in sources):
                    break
                pairs.append((source, relation, found[idx]))
            idx = found.index(source)
            while idx > 0 and _LIST_SEP.fullmatch(
                " ".join(sent[found[idx - 1].end : found[idx].start].split())
            ):
                idx -= 1
                if any(t is found[idx] for _, _, t in pairs):
                    break
                pairs.append((found[idx], relation, target))
        seen = set()
        for source, relation, target in pairs:
            if norm(source.name) == norm(target.name):
                continue
            src_votes, tgt_votes = ROLE_VOTES[relation]
            if source.kind in ("caps", "self", "handle"):
                source.vote(src_votes)
            if target.kind in ("caps", "np"):
                target.vote(tgt_votes)
            triple = (source.name, relation, target.name)
            if triple not in seen:
                seen.add(triple)
                relations.append(
                    {"source": source.name, "relation": relation, "target": target.name, "s": i}
                )
        subject = next((m.name for m in found if m.kind == "coref"), None)
        for m in found:
            if m.kind == "coref":
                continue
            mentions.append({"name": m.name, "votes": dict(sorted(m.votes.items())), "s": i})
            if subject is None and max(m.votes, key=lambda t: m.votes[t], default="") == "PERSON":
                subject = m.name
        last_person = subject or last_person
    _alias_first_names(mentions, relations)
    return {"mentions": mentions, "relations": relations}


def _alias_first_names(mentions: list[dict[str, Any]], relations: list[dict[str, Any]]) -> None:
    """Within one memory, "Dana" names the same person as "Dana Kim" when that is unambiguous."""
    full: dict[str, set[str]] = {}
    for m in mentions:
        words = m["name"].split()
        if len(words) > 1 and m["votes"].get("PERSON"):
            full.setdefault(words[0], set()).add(m["name"])
    alias = {first: next(iter(names)) for first, names in full.items() if len(names) == 1}
    for m in mentions:
        if m["name"] in alias:
            m["name"] = alias[m["name"]]
    for r in relations:
        r["source"] = alias.get(r["source"], r["source"])
        r["target"] = alias.get(r["target"], r["target"])


def canonical_names(text: str) -> list[str]:
    """Canonical names of every word-list entry (technology, organisation, place) in ``text``."""
    return sorted({name for _, _, _, name in _known(text)})


def candidate_names(text: str) -> list[str]:
    """The names a question mentions: every mention the extractor finds, wherever it stands."""
    names = []
    for m in _find(text, set()):
        if m.name not in names:
            names.append(m.name)
    return names


__all__ = [
    "CONNECTORS", "ENTITY_TYPES", "EXTRACTOR_VERSION", "RELATIONS",
    "canonical_names", "candidate_names", "extract", "norm", "sentences", "tech_names",
]  # fmt: skip
