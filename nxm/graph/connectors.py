"""The words that state a relation between two mentions, and the checks by type that refine it.

Adverbs in the gap are skipped ("is also owned by", "currently works at"); a negation matches no
connector, so "no longer owns" states nothing.
"""

from __future__ import annotations

import re
from typing import Any

from nxm.graph.lexicon import TEAM_HEADS

_ADVERB = re.compile(
    r"\b(?:also|now|currently|still|mostly|mainly|primarily|usually|only|always|really|"
    r"strongly|heavily|actually|both|all|already|officially|formally|just|recently|"
    r"directly|remotely|permanently|fully|jointly|day to day)\b ?"
)
_TITLE = (
    r"(?:[\w-]+ ){0,3}(?:vp|svp|evp|cto|ceo|cfo|coo|cpo|ciso|head|director|manager|engineer|"
    r"developer|designer|lead|architect|sre|contractor|consultant|freelancer|intern|pm|"
    r"analyst|scientist|founder|co-founder)(?: of [\w ]{1,30})?"
)


def _c(*patterns: str) -> re.Pattern[str]:
    return re.compile(rf"(?:{'|'.join(patterns)})(?: the| our| a| an| their)?")


# (relation, reversed, connecting-words pattern), tried in order; the first full match wins.
# fmt: off
CONNECTORS: tuple[tuple[str, bool, re.Pattern[str]], ...] = (
    ("REPORTS_TO", False, _c(r"reports? to", r"reported to", r"(?:is|was) managed by")),
    ("LOCATED_IN", False, _c(
        r"(?:is |are |was |were )?(?:based|located|headquartered) in", r"lives? in", r"lived in",
        r"works? from", r"sits? in", r", based in",
        r"'s (?:office|offices|hq|headquarters) (?:is|are) in",
        r"(?:has )?(?:moved|relocated) to", r"(?:is|are) moving to",
    )),
    ("LEADS", True, _c(r"(?:is|are|was|were)? ?(?:led|headed|managed) by",
                       r"'s (?:lead|head|manager|tech lead) is")),
    ("OWNS", True, _c(
        r"(?:is |are |was |were )?(?:owned|maintained|looked after|run) by", r"'s owner is",
        r"(?:is|are) the responsibility of", r"belongs? to",
    )),
    ("USES", True, _c(r"(?:is|are) used by")),
    ("LEADS", False, _c(
        r"(?:leads|lead|led|heads|headed|manages|managed|is leading|has led|runs)",
        r"(?:is|was) (?:the )?(?:[\w-]+ )?(?:lead|head|manager|director) (?:of|for|on)",
        r"took over (?:as )?(?:the )?(?:lead|head) of", r"took over",
    )),
    ("OWNS", False, _c(
        r"(?:owns|own|owned|maintains|maintain|maintained)",
        r"(?:is|are) (?:the )?(?:owners?|maintainers?) of", r"(?:is|are) responsible for",
        r"looks after", r"takes care of", r"is the (?:point of )?contact for",
    )),
    ("PREFERS", False, _c(
        r"(?:prefers|prefer|preferred|likes|loves|favou?rs)(?: using| to use)?",
        r"would rather use", r"(?:'s )?(?:preferred|favou?rite) [\w ]{1,20} (?:is|are)",
    )),
    ("DEPENDS_ON", False, _c(
        r"(?:depends|depend|depended|relies|rely|relied) on", r"is dependent on",
        r"requires|require|required|needs",
    )),
    ("USES", False, _c(
        r"uses|use|used|using|is using|are using", r"(?:is |are )?built (?:with|on)", r"runs? on",
        r"(?:is |are )?written in", r"(?:is |are )?(?:deployed|running) (?:on|to)", r"deploys to",
        r"(?:is )?hosted (?:on|at)", r"stores (?:its )?[\w ]{1,20} in", r"switched to",
        r"migrated to", r"adopted", r"talks to", r"(?:is |are )?backed by",
    )),
    ("MEMBER_OF", False, _c(
        r"(?:is|are|was|were) (?:on|in|part of|a member of|member of)", r"joined",
        rf"(?:is|was) (?:an?|the) {_TITLE} (?:in|on)",
    )),
    ("WORKS_AT", False, _c(
        r"(?:works?|worked|is working|has worked) (?:at|for)", r"(?:joined|is employed (?:at|by))",
        r"(?:(?:is|was) |, )(?:an?|the|our) [\w /-]{1,40}? (?:at|for|of)",
        rf"(?:is|was) (?:an? |the |our )?{_TITLE} (?:at|for|of|from|with)",
    )),
)
# Type votes a relation gives its ends: (source's, target's).
ROLE_VOTES: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "WORKS_AT": ({"PERSON": 2}, {"ORGANIZATION": 2}), "LEADS": ({"PERSON": 2}, {}),
    "OWNS": ({"PERSON": 1}, {}), "PREFERS": ({"PERSON": 2}, {}),
    "MEMBER_OF": ({"PERSON": 2}, {"ORGANIZATION": 2}), "LOCATED_IN": ({}, {"PLACE": 3}),
    "REPORTS_TO": ({"PERSON": 2}, {"PERSON": 2}), "USES": ({}, {"THING": 1}),
    "DEPENDS_ON": ({}, {"THING": 1}),
}
# fmt: on
# Forward connectors whose subject is a person (evidence that a sentence's first word is a name).
_PERSON_SUBJECT = tuple((r, p) for r, rev, p in CONNECTORS if ROLE_VOTES[r][0] and not rev)


def gap_words(between: str) -> str:
    """The words between two mentions as a connector is matched: lower case, adverbs out."""
    gap = " ".join(between.replace("`", " ").split()).lower()
    return " ".join(_ADVERB.sub("", gap).split())


def connect(between: str) -> tuple[str, bool] | None:
    """The relation the words between two mentions state, and whether it runs backwards."""
    gap = gap_words(between)
    return next(((rel, rev) for rel, rev, pattern in CONNECTORS if pattern.fullmatch(gap)), None)


def person_role(gap: str) -> str | None:
    """The relation of the first connector with a person as subject that ``gap`` starts with."""
    return next((r for r, p in _PERSON_SUBJECT if p.match(gap)), None)


def kind_of(mention: Any) -> str:
    """A mention's leading type by its votes so far."""
    votes = mention.votes
    return max(votes, key=lambda t: votes[t]) if votes else "THING"


def _team(mention: Any) -> bool:
    return mention.name.casefold().split()[-1] in TEAM_HEADS


def allowed(relation: str, source: Any, target: Any) -> str | None:
    """Refine or refuse a relation by what its ends are (a place is never used, only lived in)."""
    tkind, skind = kind_of(target), kind_of(source)
    if tkind == "PLACE" and relation in ("USES", "MEMBER_OF", "WORKS_AT"):
        return "LOCATED_IN"
    if relation == "LOCATED_IN" and tkind != "PLACE" and target.kind != "caps":
        return "MEMBER_OF" if _team(target) else None  # "moved to the growth team"
    if relation == "OWNS" and _team(target) and not _team(source):
        return "LEADS"  # a person runs a team; nobody owns one
    if relation == "LEADS" and tkind == "THING" and target.kind in ("dict", "kebab"):
        return "OWNS" if target.kind == "kebab" else None  # "took over route-planner"; not "Rust"
    if relation == "MEMBER_OF" and not _team(target):
        if tkind != "ORGANIZATION" and target.kind != "caps":
            return None
        relation = "WORKS_AT"
    if relation in ("WORKS_AT", "REPORTS_TO") and tkind == "THING":
        if target.kind in ("dict", "np", "kebab"):
            return None
    if relation in ("WORKS_AT", "LEADS", "PREFERS", "REPORTS_TO") and skind == "THING":
        if source.kind in ("dict", "kebab"):
            return None
    return relation


__all__ = ["CONNECTORS", "ROLE_VOTES", "allowed", "connect", "gap_words", "kind_of", "person_role"]
