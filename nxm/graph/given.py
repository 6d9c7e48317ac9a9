"""Names a memory gives that no word list knows: lowercase words it names things by ("tiler is a
Go service") and acronyms it defines ("the Research Software Engineering group (RSE)"). The
graph reads them in every memory using them (`nxm.graph.complete`). docs/graph.md, step 2.
"""

from __future__ import annotations

import re
from typing import Any

import nxm.graph.lexicon as lex
from nxm.graph.connectors import FAMILY, stem
from nxm.graph.lines import NAMED, ROW, RULE

_BARE_SUBJECT = re.compile(  # a sentence opening with a lowercase word and a verb or a list
    r"^[\"'(*\[–— -]*([a-z][a-z0-9]{2,})(?:['’]s)?(?:\s+(?:is|are|was|has|had|can(?:['’]t|not)?"
    r"|will|won['’]t|does|doesn['’]t|did|didn['’]t|should|must|[a-z]{2,}s)\b|:|,| and )"
)
_BARE_OWNER = re.compile(r"(?<![\w@./-])([a-z][a-z0-9]{2,})['’]s\b")
_DETERMINER = re.compile(
    r"\b(?:a|an|the|this|that|these|those|our|your|their|its|his|her|my|each|every|any|some|no"
    r"|one|another|which|whose)\s+$"
)
_NOT_BARE = frozenset(
    """fyi btw imo tbh note also please pls the this that there here each every everything
    nothing someone anyone everyone nobody one who what which when where why how our your their
    its his her she they it we you and but for not now then today tomorrow yesterday prod staging
    dev main master year week month day night morning other last next nobody somebody everybody
    anything something another both either neither none all any some most more less few many
    much such same own""".split()
)


def bare_names(sents: list[str]) -> set[str]:
    """Lowercase words a memory names things by: an owner with no article ("tiler reads
    gridder's output"), and where its writer capitalises sentences, one opening a sentence
    ("tiler is a Go service", "almanac, the portal, …")."""
    capitalised = any(s[:1].isupper() for s in sents)
    out = set()
    for sent, after in zip(sents, [*sents[1:], ""], strict=True):
        first = None
        if ROW.match(sent) and not RULE.match(sent) and not RULE.match(after):
            first = sent.strip("|").split("|")[0].strip()  # a table row's own name
        elif named := NAMED.match(sent):
            first = sent[named.end() :].strip()  # "name: courier"
        if first and re.fullmatch(r"[a-z][a-z0-9]{2,}", first) and first not in _NOT_BARE:
            out.add(first)
        hits = [m for m in _BARE_OWNER.finditer(sent) if not _DETERMINER.search(sent[: m.start()])]
        if capitalised and (m := _BARE_SUBJECT.match(sent)):
            hits.append(m)
        for m in hits:
            w = m.group(1)
            if w.endswith("s") or w in _NOT_BARE or w.capitalize() in lex.STOP:
                continue
            if w in lex.TEAM_HEADS or w in lex.THING_HEADS or stem(w) in FAMILY:
                continue
            out.add(w)
    return out


_ACRONYM = r"[A-Z][A-Z0-9&]{1,7}"
_ACRONYM_AFTER = re.compile(rf"\s*\(({_ACRONYM})\)")  # "the … group (RSE)"
_ACRONYM_BEFORE = re.compile(rf"\b({_ACRONYM})\s*\($")  # "TRC (Thornbury Research Computing)"


def _initials(name: str) -> set[str]:
    """ "Payments Platform group" -> {"PP", "PPG"}: its capitals' initials, or its words'."""
    words = [w for w in re.split(r"[\s-]+", name) if w not in ("of", "for", "and", "the", "&")]
    return {"".join(w[0] for w in words if w[:1].isupper()), "".join(w[0] for w in words).upper()}


def defined(sent: str, found: list[Any]) -> list[tuple[str, Any]]:
    """Acronyms the sentence defines beside a name: "the Research Software Engineering group
    (RSE)", "TRC (Thornbury Research Computing)", when the letters are the name's initials."""
    out: list[tuple[str, Any]] = []
    if "(" not in sent:
        return out  # most sentences: nothing to look at
    for m in found:
        after = _ACRONYM_AFTER.match(sent, m.end)
        before = _ACRONYM_BEFORE.search(sent[: m.start])
        short = after or (before if sent[m.end : m.end + 1] == ")" else None)
        if short and m.kind in ("caps", "np", "dict") and short.group(1) in _initials(m.name):
            out.append((short.group(1), m))
    return out
