"""Deterministic entity and relation extraction: patterns and word lists, no model, no network.

Each mention carries type votes that the graph sums over every memory naming the entity, so one
memory's guess can be outvoted; code and job titles name no one. docs/graph.md gives the rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import nxm.graph.lexicon as lex
from nxm.graph.connectors import (
    FAMILY,
    ROLE_VOTES,
    allowed,
    connect,
    gap_words,
    is_team,
    kind_of,
    person_role,
    stem,
)
from nxm.graph.given import bare_names, defined
from nxm.graph.lines import ASIDE, FIELD, FIELDS, NAMED, ROW, RULE, Pair, keyed, listed_from, row
from nxm.graph.names import fold, listed_spans, norm, sentences

EXTRACTOR_VERSION = 6
ENTITY_TYPES = ("PERSON", "ORGANIZATION", "PLACE", "THING")

_WORDS = re.compile(r"[a-z]+")
_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z0-9][\w-]*(?![\w.-]*\.\w)")
_CODE = re.compile(r"`([^`]*)`")
_KEBAB = re.compile(r"(?<![\w@#./:-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-]|\.\w)")
_IDENT = re.compile(  # whole words only (the scan starts where a word starts: it is hot)
    r"(?<!\S)(?:[^\s_=\\{}\[\]<>/]*[_=\\{}\[\]<>/]"  # snake_case, ENV_VARS, KEY=VALUE, paths
    r"|[^\s:(]*(?:::|\(\))"  # Class::method, call()
    r"|\(?[a-z][a-z0-9]*[A-Z]"  # camelCase
    r"|\(?[a-z][\w-]*\.[a-z])\S*"  # dotted names: group.id, app.json
    r"|(?<![\w&])#[\w-]+|(?<!\S)--?[a-z][\w-]*"  # channels, flags
)
_TITLES = re.compile(
    r"\b(?:VP|SVP|EVP|CTO|CEO|CFO|COO|CPO|CISO|Head|Director|Chief \w+ Officer)"
    r"(?: of [A-Z][a-z]+(?: [A-Z][a-z]+)?)?\b"
)
_UP = f"[A-ZÀ-ÖØ-Þ{''.join(c for c in map(chr, range(256, 592)) if c.isupper())}]"  # Ł, Ś, Ž
_WORD = rf"{_UP}[^\W_]*(?:[-'’.][^\W_]+)*"
_CAPS = re.compile(
    rf"(?<![\w@./-]){_WORD}(?:\s+(?:(?:da|de|do|dos|das|van|von|der|den|del|la|le|di)\s+)?{_WORD})*"
)
_HEADS = "|".join(sorted(lex.TEAM_HEADS | lex.THING_HEADS, key=len, reverse=True))
_NP = re.compile(
    rf"\b(?:the|our|their|its|his|her|my|your)\s+((?:(?!the\b)[A-Za-z][\w.-]*\s+){{0,2}}(?:{_HEADS})s?)\b",
    re.IGNORECASE,
)
_CAP_TEAM = re.compile(  # "Risk team", "Research Software Engineering group"
    rf"(?<![\w-])((?:[A-Z][\w&-]* ){{0,3}}[A-Z][a-z][\w&-]*) (?:{'|'.join(lex.TEAM_HEADS)})\b"
)
_NP_DROP = frozenset(
    "new old current main entire whole same other existing legacy shared internal standard".split()
)
_ARTICLES = ("a", "an", "this", "that")
_NOT_NAME = re.compile(r"^(?:[A-Z0-9]{2,}|[A-Z][A-Z0-9]*-?\d+)$")  # acronyms, issue ids, codes
_SELF = re.compile(r"^(?:the user|user|i|i'm|i've|my)\b", re.IGNORECASE)
_PRONOUN = re.compile(r"(?:^|(?<=;)\s+|(?<=:)\s+)(he|she|it|they)\b", re.IGNORECASE)
_OBJECT = re.compile(r"\b(?:owns|maintains|runs|leads|manages|uses|replaced|looks after)\s+(it)\b")
_PERSON_BEFORE = re.compile(
    r"(?:\bask|\basking|\bping|\btalk to|\bcheck with|\bchecked with|\bcc|\bemail|\bmessage|"
    r"\bthanks to|\bassigned to|\baccording to|\bcontact|\breach out to|\bescalate to|"
    r"\bhand (?:it )?over to|\bwith)\s+$",
    re.IGNORECASE,
)
_PLACE_SUBJECT = re.compile(r"(?:is|are) (?:based|located|headquartered) in\b")
_RELATIVE = re.compile(r"^\s*(?:,\s*)?(?:which|who|that)\s+(.*)$", re.DOTALL)
_SWAP = re.compile(
    r"(?:\b(?:moved|migrated|switched|went|moving|migrating|switching)\b[\w\s-]{0,30}\bfrom"
    r"|\b(?:replaced|replacing|swapped|swapping|dropped|dropping))\s+(?:the\s+|our\s+)?$",
    re.IGNORECASE,
)
_NAME_LIST = re.compile(rf"\s*(?:,|and|&)\s+{_UP}")
_AND = re.compile(r"(?:,\s*)?\band\s+")
_LIST_SEP = re.compile(r"(?:,|, and|and|or|, or|/|&)")
_PREPOSITION = frozenset("on to in with at for".split())
_CODE_HINT = re.compile(r"[_=/\\{}\[\]<>#]|::|\(\)|--|[a-z][A-Z]|[a-z]\.[a-z]")
_TITLE_HINT = re.compile(r"\b(?:VP|SVP|EVP|CTO|CEO|CFO|COO|CPO|CISO|Head|Director|Chief)\b")


def _caps_shape(words: list[str]) -> dict[str, int]:
    if words[-1].rstrip(".") in lex.ORG_SUFFIXES or words[-1].casefold() in lex.TEAM_HEADS:
        return {"ORGANIZATION": 3}  # "Acme Corp.", "Platform Team"
    if any(w in lex.THING_WORDS or not w.isalpha() for w in words):
        return {"THING": 2}
    if any(w.isupper() for w in words):
        return {"THING": 1}  # an acronym in it: not a person's name
    if words[0] in lex.FIRST_NAMES:
        return {"PERSON": 2}
    if 2 <= len(words) <= 3:
        return {"PERSON": 1}
    return {"THING": 1}


class _Mention:
    __slots__ = ("end", "kind", "name", "start", "votes")

    def __init__(self, start: int, end: int, name: str, kind: str, votes: dict[str, int]) -> None:
        self.start, self.end, self.name, self.kind, self.votes = start, end, name, kind, votes

    def vote(self, votes: dict[str, int]) -> None:
        for t, n in votes.items():
            self.votes[t] = self.votes.get(t, 0) + n


def component(word: str) -> bool:
    """Whether a kebab-case word names a component by its last part ("ledger-svc")."""
    return word.rsplit("-", 1)[-1] in lex.COMPONENT_SUFFIXES


def _unquote(m: re.Match[str]) -> str:
    inner = m.group(1)
    if _KEBAB.fullmatch(inner) and component(inner):
        return f" {inner} "  # `ledger-svc` names the service; other code names no one
    return " " * len(m.group(0))


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def prose(sentence: str) -> str:
    """The sentence with code, identifiers and job titles blanked out (same length)."""
    text = _CODE.sub(_unquote, sentence) if "`" in sentence else sentence
    if _CODE_HINT.search(text):  # most sentences have no code: skip the slower scan
        text = _IDENT.sub(_blank, text)
    return _TITLES.sub(_blank, text) if _TITLE_HINT.search(text) else text


def _sentence_start(text: str, start: int) -> bool:
    return not text[:start].strip(" \"'(*[-–—")


def _caps(text: str, words: list[str], start: int, end: int, later: set[str]) -> _Mention | None:
    """A capitalised run as a mention, or None when it is no name."""
    if all(w.isupper() for w in words):
        return None  # "ACCESS EXCLUSIVE", "LEDGER": emphasis, SQL, constants
    if _sentence_start(text, start):
        first = words[0]
        verb = first in lex.SENTENCE_VERBS or (
            first.endswith(("ed", "ing")) and first not in lex.FIRST_NAMES and first not in later
        )
        if len(words) > 1 and (verb or any(w.isupper() for w in words[1:])):
            start = text.index(words[1], start + len(first))
            words = words[1:]  # "Traced ERR…", "Token TTL": the first word is the sentence's
        elif len(words) == 1:
            tail = text[end:]
            gap = gap_words(_lead(tail))
            evidence = (
                first in later or first in lex.FIRST_NAMES or tail.startswith(("'s", "’s"))
                or _NAME_LIST.match(tail) is not None
                or (gap != "" and person_role(gap) is not None)
                or (not first.endswith("s") and _PLACE_SUBJECT.match(gap) is not None)
            )  # fmt: skip
            if not evidence:
                return None
    name = " ".join(words)
    if len(words) == 1 and (len(name) == 1 or _NOT_NAME.match(name)):
        return None
    return _Mention(start, start + len(name), name, "caps", _caps_shape(words))


def _find(
    sentence: str, later_caps: set[str], plain: str | None = None,
    names: Mapping[str, Sequence[str]] | None = None,
) -> list[_Mention]:  # fmt: skip
    """Mentions in one sentence (``plain``: its `prose`), overlaps resolved (word lists first)."""
    text = sentence.replace("`", " ")
    plain = prose(sentence) if plain is None else plain
    found: list[_Mention] = []
    for start, end, kind, canonical in listed_spans(text):
        if canonical == "Golang" and _sentence_start(text, start):
            continue  # "Go to ..." at a sentence start is a verb
        found.append(_Mention(start, end, canonical, "dict", {kind: 5}))
    found.extend(
        _Mention(m.start(), m.end(), m.group(0), "handle", {"PERSON": 3})
        for m in _HANDLE.finditer(plain)
    )
    for m in _KEBAB.finditer(plain):
        votes = {"THING": 2 if component(m.group(0)) else 1}
        found.append(_Mention(m.start(), m.end(), m.group(0), "kebab", votes))
    for m in _NP.finditer(plain):
        words = m.group(1).split()
        while len(words) > 1 and words[0].casefold() in _NP_DROP:
            words.pop(0)
        head = words[-1].casefold()
        if (len(words) < 2 and head not in lex.SOLO_HEADS) or words[0].casefold() in _ARTICLES:
            continue
        head = head if head in lex.TEAM_HEADS | lex.THING_HEADS else head[:-1]
        kind = "ORGANIZATION" if head in lex.TEAM_HEADS else "THING"
        name = " ".join(words)
        start = m.end(1) - len(name)
        found.append(_Mention(start, m.end(1), name, "np", {kind: 3}))
    for m in _CAP_TEAM.finditer(plain):  # "Risk team is now led by …": names before a team word
        words, start = m.group(1).split(), m.start()
        while words and words[0] in lex.STOP:
            start += len(words.pop(0)) + 1
        if words:
            found.append(
                _Mention(start, m.end(), plain[start : m.end()], "np", {"ORGANIZATION": 3})
            )
    for m in _CAPS.finditer(plain):
        words = m.group(0).split()
        start = m.start()
        while words and (words[0] in lex.STOP or words[0].rstrip("'’s") in lex.STOP):
            start = plain.index(words[1], start + len(words[0])) if len(words) > 1 else m.end()
            words.pop(0)
        while words and words[-1] in lex.STOP:
            words.pop()
        if not words:
            continue
        if words[-1].endswith(("'s", "’s")):
            words[-1] = words[-1][:-2]
        end = start + len(" ".join(words))
        if got := _caps(plain, words, start, end, later_caps):
            found.append(got)
    for surface, (name, kind) in (names or {}).items():  # names the memory or the store gave
        found.extend(
            _Mention(m.start(), m.end(), name, "bare", {kind: 2})
            for m in re.finditer(rf"(?<![\w@./-]){re.escape(surface)}(?![\w/-])", plain)
            if not (plain[: m.start()].endswith("(") and plain[m.end() :].startswith(")"))
        )  # "(RSE)" where it is defined is the name's own aside
    rank = {"dict": 0, "handle": 1, "kebab": 2, "np": 3, "bare": 3, "caps": 4}
    found.sort(key=lambda m: (rank[m.kind], m.start, -(m.end - m.start)))
    kept: list[_Mention] = []
    for m in found:
        if all(m.end <= k.start or m.start >= k.end for k in kept):
            kept.append(m)
    kept.sort(key=lambda m: m.start)
    return [
        m for i, m in enumerate(kept)
        if not (m.kind == "kebab" and not component(m.name) and i + 1 < len(kept)
                and not plain[m.end : kept[i + 1].start].strip())
    ]  # fmt: skip  # "a read-only MySQL replica": a kebab word before a name is a modifier


def _lead(text: str) -> str:
    """The first few words of ``text`` (up to the next capital), for a connector."""
    words = text.split()[:8]
    end = next((i for i, w in enumerate(words) if w[:1].isupper() or w.startswith("@")), len(words))
    return " ".join(words[:end])


def _pronouns(
    sent: str, found: list[_Mention], last_person: str | None, last_thing: str | None
) -> None:
    """Mentions for "he", "she", "it", "they" opening the sentence or a clause (after ; or :)."""
    for m in _PRONOUN.finditer(sent):
        start, end = m.span(1)
        if any(k.start < end and start < k.end for k in found):
            continue
        before = [k for k in found if k.end <= start]
        person = m.group(1).lower() in ("he", "she")
        here = next((k for k in before if (kind_of(k) == "PERSON") == person), None)
        name = here.name if here is not None else (last_person if person else last_thing)
        if name:
            found.append(_Mention(start, end, name, "coref", {}))
    for m in _OBJECT.finditer(sent):  # "the data team maintains it": the last sentence's subject
        if last_thing and found and m.start() > found[0].end and m.start(1) > 0:
            if all(k.name != last_thing and not k.start < m.end() <= k.end for k in found):
                found.append(_Mention(m.start(1), m.end(1), last_thing, "coref", {}))
    found.sort(key=lambda k: k.start)


_POSSESSED = re.compile(r"\s*(['’]s\s+)?(?:[\w-]+\s+)?(lead|head|manager|owner|maintainer)\b")
_OWNED_NOUN = re.compile(rf"\s*['’]s\s+(?:[\w-]+\s+)?(?:{'|'.join(lex.THING_HEADS)})\b")
_ASK_BEFORE = re.compile(r"\b(?:ask|contact|ping|talk to|reach out to)\s+$", re.IGNORECASE)
_HEAD_AFTER = re.compile(
    rf"\s+(?:[\w-]+\s+)?(?:{'|'.join(lex.THING_HEADS | lex.COMPONENT_SUFFIXES)})\b"
)


def _said(sent: str, gap: str, a: _Mention, b: _Mention, first: bool) -> tuple | None:
    """Relations stated around a pair rather than between it: "A is B's lead", "A (Berlin)",
    "A is a Go service"."""
    m = _POSSESSED.match(sent, b.end)  # "A is B's lead", "A is the B team lead"
    if m and (gap == "is the" or (m.group(1) and gap in ("is", ",", ", the"))):
        role = m.group(2)
        if role in ("owner", "maintainer"):
            return (a, "OWNS", b)
        if role == "manager" and kind_of(b) == "PERSON":
            return (b, "REPORTS_TO", a)
        return (a, "LEADS", b) if kind_of(a) == "PERSON" else None
    if gap == "is the" and (m := _OWNED_NOUN.match(sent, b.end)) and kind_of(a) == "THING":
        return (b, "OWNS", a)  # "route-planner is the routing team's service"
    if gap in ("about", "for") and _ASK_BEFORE.search(sent[: a.start]) and kind_of(a) == "PERSON":
        return (a, "OWNS", b)  # "ask Beatriz Santos about route-planner": its contact
    if (
        b.kind == "dict"
        and kind_of(b) == "PLACE"
        and kind_of(a) != "PLACE"
        and (gap in ("(", ",") or (gap == "in" and first))
    ):
        return (a, "LOCATED_IN", b)  # "the platform team in Berlin", "Dana Kim (Lisbon)"
    if gap == "(" and is_team(a) and b.votes.get("PERSON", 0) >= 2:
        return (b, "MEMBER_OF", a)  # "the platform team (Marco Ferri)"
    if b.kind == "dict" and kind_of(b) == "THING" and gap in ("is a", "is an", ", a", ", an"):
        if _HEAD_AFTER.match(sent, b.end) and kind_of(a) == "THING":
            return (a, "USES", b)  # "route-planner is a Rust service"
    return None


def _pairs(sent: str, found: list[_Mention]) -> list[Pair]:
    """(source, relation, target, words) for each neighbouring pair of mentions whose gap states
    one."""
    pairs: list[Pair] = []
    subject = found[0] if found else None
    aside: _Mention | None = None  # the noun an apposition ("A, led by B, owns C") is about
    bare = False  # an aside without punctuation: "the team in Berlin owns", "the team under B"
    for a, b in zip(found, found[1:], strict=False):
        between = ASIDE.sub("", sent[a.end : b.start])  # "X (RSE) is led by Y"
        source = a
        if aside is not None and bare:
            source, aside = aside, None  # "the platform team in Berlin owns …": an aside
            between = between.lstrip(" ,)")
        elif aside is not None and between.lstrip()[:1] in ",)":
            source, aside = aside, None  # the apposition closes: the clause is about its noun
            between = between.lstrip()[1:]
        elif between.lstrip()[:1] in ",:" and pairs and subject in (pairs[-1][0], pairs[-1][2]):
            if (got := connect(between.lstrip()[1:])) is not None and not got[1]:
                source, between = subject, between.lstrip()[1:]  # "X: owned by Y, written in Z"
        got = connect(between.lstrip(" :—–"))  # "X: owned by Y", "X — owned by Y"
        gap = gap_words(between)
        if got is None and (said := _said(sent, gap, a, b, a is found[0])) is not None:
            pairs.append((*said, between))
            if said[1] == "LOCATED_IN":
                aside, bare = a, gap == "in"
            continue
        if got is not None and (between.lstrip()[:1] in ",(" or gap == "under"):
            aside, bare = a, gap == "under"
        if got is None and _SWAP.search(sent[: a.start]):  # "moved from A (on X) to B",
            gap = re.sub(r" (?:the|our|a|an)$", "", gap_words(between))  # "replaced A with B",
            # "dropped A for the B": B replaces A
            if gap in ("to", "with", "for") or (gap.endswith(" to") and len(gap.split()) <= 4):
                who = found[0]
                if is_team(a) and who is not a and kind_of(who) == "PERSON":  # a person who
                    pairs.append((who, "MEMBER_OF", b, "moved"))  # moved teams: the new one
                else:
                    pairs.append((b, "REPLACES", a, sent[: a.start][-30:]))
                continue
        if got is None and (rel := _RELATIVE.match(between)):
            got = connect(rel.group(1))  # "recon-etl, which runs on Airflow"
            subject = a  # "…, which are written in Python and use dbt": the clause's subject
        if got is None:
            # "X works at Y and uses Z", "X is built with Y and owned by Z": the clause after
            # the last "and" continues the sentence's subject
            i = found.index(a)
            if (
                gap_words(between) in _PREPOSITION
                and i > 0
                and pairs
                and (
                    pairs[-1][2] is found[i - 1]
                    and gap_words(sent[found[i - 1].end : a.start]) in (",", ", the", "; the", ";")
                )
            ):
                pairs.append(
                    (a, pairs[-1][1], b, pairs[-1][3])
                )  # "A is based in B, the C team in D"
                continue
            parts = _AND.split(between)
            if len(parts) < 2:
                continue
            rest = gap_words(parts[-1])
            if (
                (rest in _PREPOSITION or (not rest and a.kind == b.kind))
                and pairs
                and (pairs[-1][2] is a)
            ):  # "on A for x and on B", "uses Redis for caching and Postgres for storage"
                pairs.append((*pairs[-1][:2], b, pairs[-1][3]))  # "on A for x and on B"
                continue
            if (got := connect(parts[-1])) is None:
                continue
            source = subject  # type: ignore[assignment]
        relation, reverse = got
        source, target = (b, source) if reverse else (source, b)
        if source is target:
            continue
        ok = allowed(relation, source, target)
        if ok in ("LEADS", "OWNS") and target.votes.get("PERSON", 0) >= 2:  # surely a person
            if ok == "LEADS" and kind_of(source) == "PERSON":  # a person led by one reports to them
                source, target, ok = target, source, "REPORTS_TO"
            elif ok == "OWNS" and is_team(source):  # "Omar belongs to the platform team"
                source, target, ok = target, source, "MEMBER_OF"
        if (
            ok == "MEMBER_OF"
            and source.kind in ("np", "kebab", "dict")
            and kind_of(source) == "THING"
        ):
            source, target, ok = target, source, "OWNS"  # "the models moved to the data team"
        if ok is not None:
            pairs.append((source, ok, target, between))
    # lists: "A uses B, C and D" / "A and B work at C" / "A, B and C are owned by D"
    gaps = (" ".join(sent[a.end : b.start].split()) for a, b in zip(found, found[1:], strict=False))
    listed = [_LIST_SEP.fullmatch(gap) is not None for gap in gaps]  # found[i] and [i + 1] in one
    for source, relation, target, words in list(pairs):
        ends = [p[0] for p in pairs] + [p[2] for p in pairs]
        first, last = sorted((source, target), key=lambda m: m.start)
        for end, step in ((last, 1), (first, -1)):
            idx = found.index(end)
            while 0 <= idx + step < len(found) and listed[min(idx, idx + step)]:
                idx += step
                if any(found[idx] is e for e in ends):
                    break
                other = found[idx]
                if other.kind == "kebab" and not component(other.name) and end.kind != "kebab":
                    break  # "Avalara and rate-limits us": a verb, not a list
                pairs.append((other, relation, target, words) if end is source
                             else (source, relation, other, words))  # fmt: skip
    return pairs


def extract(
    text: str, user_id: str | None = None, names: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Any]:
    """Mentions (name, type votes, sentence index, span in it), relations (source, relation,
    target, s), the names pronouns stand for (name, s, start, end), and the names this text
    gives: lowercase words (`bare_names`) and acronyms it defines ("… group (RSE)"), each
    {word: (name, type)}; ``names``: those other memories give that this text uses."""
    sents = sentences(text)
    plains = [prose(s) for s in sents]
    caps_mid: set[str] = set()
    for plain in plains:
        for m in _CAPS.finditer(plain):
            if not _sentence_start(plain, m.start()):
                caps_mid.update(m.group(0).split())
    mentions: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    corefs: list[tuple[str, int, int, int]] = []  # (name, sentence, start, end) of a pronoun
    last_person: str | None = None
    last_thing: str | None = None
    topic: str | None = None
    columns: list[str] = []  # the header of the Markdown table being read
    given = {w: (w, "THING") for w in bare_names(sents)}
    known = {**(names or {}), **given}
    for i, (sent, plain) in enumerate(zip(sents, plains, strict=True)):
        found = _find(sent, caps_mid, plain, known)
        for short, m in defined(sent, found):  # from here on "RSE" names the group
            if kind_of(m) == "PERSON":
                m.vote({"ORGANIZATION": 2})  # people have initials, not acronyms
            given[short] = known[short] = (m.name, kind_of(m))
        head = _SELF.match(sent)
        if head and user_id:
            found.insert(0, _Mention(0, head.end(), user_id, "self", {"PERSON": 3}))
        before = sent.replace("`", " ")
        for m in found:
            if m.kind != "caps":
                continue
            if _PERSON_BEFORE.search(before[: m.start]):
                m.vote({"PERSON": 2})
            after = gap_words(_lead(before[m.end :]))
            if after and (role := person_role(after)):
                m.vote(ROLE_VOTES[role][0])
        _pronouns(sent, found, last_person, last_thing)
        pairs = _pairs(sent, found)
        field = FIELD.match(sent)
        if not field:
            pairs += keyed(sent, found)
        if ROW.match(sent) and not RULE.match(sent):
            if i + 1 < len(sents) and RULE.match(sents[i + 1]):
                columns = [c.strip().lower() for c in sent.strip("|").split("|")]
            else:
                pairs += row(sent, found, columns)
        elif not RULE.match(sent):
            columns = []
        if (named := NAMED.match(sent)) and found and found[0].start == named.end():
            topic = found[0].name
        about, rest = topic, found  # "Owner: X" is about the memory, "Risk team lead: X" the team
        if (
            field
            and field.group(1)
            and found
            and found[0].kind != "caps"
            and (found[0].end <= field.start(2))
        ):
            if not sent[found[0].end : field.start(2)].strip():
                about, rest = found[0].name, found[1:]
        # a name in the key ("Decision owner:") makes the line about something else
        about_topic = field and rest and rest[0].start >= field.end()
        values = listed_from(sent, rest, field.end()) if about_topic else []
        if field and about and values and values[0].name != about:
            relation, reverse = FIELDS[field.group(2).lower()]
            it = _Mention(0, 0, about, "coref", {})
            for value in values:
                if not reverse:
                    pairs.append((it, relation, value, field.group(2)))
                elif kind_of(value) != "THING":  # an owner or a lead is a person or a team
                    pairs.append((value, relation, it, field.group(2)))
        related: set[int] = set()
        seen = set()
        for source, relation, target, words in pairs:
            if norm(source.name) == norm(target.name):
                continue
            related.update((id(source), id(target)))
            src_votes, tgt_votes = ROLE_VOTES[relation]
            if source.kind in ("caps", "self", "handle"):
                source.vote(src_votes)
            if target.kind in ("caps", "np"):
                target.vote(tgt_votes)
            triple = (source.name, relation, target.name)
            if triple not in seen:
                seen.add(triple)
                said = sorted(
                    {st for w in _WORDS.findall(words.lower()) if (st := stem(w)) in FAMILY}
                )
                relations.append({"source": source.name, "relation": relation,
                                  "target": target.name, "s": i, "w": said})  # fmt: skip
        subject = next((m.name for m in found if m.kind == "coref"), None)
        for m in found:
            if m.kind == "coref":
                corefs.append((m.name, i, m.start, m.end))
                continue
            if m.kind == "kebab" and not component(m.name) and id(m) not in related:
                continue  # "long-lived", "warm-up": a kebab word names nothing on its own
            mentions.append({"name": m.name, "votes": dict(sorted(m.votes.items())), "s": i,
                             "at": [m.start, m.end]})  # fmt: skip
            if subject is None and kind_of(m) == "PERSON" and m.votes:
                subject = m.name
        last_person = subject or last_person
        if (
            i == 0
            and found
            and kind_of(found[0]) != "PERSON"
            and found[0].kind != "self"
            and (sent[: found[0].start].strip().lower() in ("", "the", "our"))
        ):
            topic = found[0].name  # what the memory is about: the subject of its first line
        if found and found[0].kind != "coref":  # "It" in the next sentence: this one's subject
            first = found[0]
            last_thing = first.name if first.kind != "self" and kind_of(first) != "PERSON" else None
    _alias_first_names(mentions, relations)
    got = {"mentions": mentions, "relations": relations, "corefs": corefs,
           "gives": {w: list(v) for w, v in sorted(given.items())}}  # fmt: skip
    return got | ({"names": {w: list(v) for w, v in sorted(names.items())}} if names else {})


def _alias_first_names(mentions: list[dict[str, Any]], relations: list[dict[str, Any]]) -> None:
    """Within one memory, "Dana" names the one "Dana Kim" (accents aside), when unambiguous."""
    full: dict[str, set[str]] = {}
    for m in mentions:
        words = m["name"].split()
        if len(words) > 1 and m["votes"].get("PERSON"):
            full.setdefault(fold(words[0]), set()).add(m["name"])
    alias = {}
    for m in mentions:
        names = full.get(fold(m["name"]))
        if " " not in m["name"] and names and len(names) == 1:
            alias[m["name"]] = next(iter(names))
    for m in mentions:
        m["name"] = alias.get(m["name"], m["name"])
    for r in relations:
        r["source"] = alias.get(r["source"], r["source"])
        r["target"] = alias.get(r["target"], r["target"])


def question_mentions(text: str) -> list[tuple[str, str, int, int]]:
    """(name, kind: dict, handle, kebab, np or caps, start, end) of each name in a question."""
    return [
        (m.name, m.kind, m.start, m.end)
        for m in _find(text, set())
        if m.kind != "kebab" or component(m.name)
    ]


__all__ = ["ENTITY_TYPES", "EXTRACTOR_VERSION", "component", "extract", "fold", "norm", "prose",
           "question_mentions", "sentences"]  # fmt: skip
