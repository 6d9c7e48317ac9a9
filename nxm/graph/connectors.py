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
_TENSE = re.compile(r"\b(?:has been|have been|had been|will be|is being|was|were)\b")
_TITLE = (
    r"(?:[\w-]+ ){0,3}(?:vp|svp|evp|cto|ceo|cfo|coo|cpo|ciso|head|director|manager|engineer|"
    r"developer|designer|lead|architect|sre|contractor|consultant|freelancer|intern|pm|"
    r"analyst|scientist|founder|co-founder)(?: of [\w ]{1,30})?"
)


_FILL = r"(?: (?!(?:of|from|in|on|at|to|for|with|by|and|or|not|no)\b)[a-z][\w-]*){0,2}"


def _c(*patterns: str) -> re.Pattern[str]:
    """Connecting words, then a determiner and up to two modifiers ("runs on a single")."""
    return re.compile(rf"(?:{'|'.join(patterns)})(?: (?:the|our|a|an|their){_FILL})?")


# (relation, reversed, connecting-words pattern), tried in order; the first full match wins.
# Tense is folded first ("was" -> "is", "has been" -> "is"); "(" and "," open an apposition.
# fmt: off
CONNECTORS: tuple[tuple[str, bool, re.Pattern[str]], ...] = (
    ("REPORTS_TO", False, _c(r"reports? (?:in|up )?to", r"reported to", r"is managed by",
                             r"works? under")),
    ("LOCATED_IN", False, _c(
        r"[(,]? ?(?:is |are )?(?:based|located|headquartered|hosted|deployed|running|run) "
        r"(?:in|out of)",
        r"lives? in",
        r"lived in", r"works? (?:from|out of)", r"operates? (?:from|out of)", r"sits? in",
        r"(?:sits?|lives?|runs?|is|are) (?:within|inside)",
        r", based in", r"'s (?:office|offices|hq|headquarters) (?:is|are) in", r"runs in",
        r"(?:has )?(?:moved|relocated) to", r"(?:is|are) moving to",
    )),
    ("LEADS", True, _c(r"(?:,|\(|is|are)? ?(?:led|headed|managed) by", r"(?:,|\(|is|are)? ?under",
                       r"'s (?:lead|head|manager|tech lead) is",
                       r"[(,] ?(?:lead|head|manager|tech lead)[:,]?")),
    ("OWNS", True, _c(
        r"(?:is |are |, |\()?(?:owned|maintained|looked after|run|operated) by",
        r"'s (?:owners?|maintainers?) (?:is|are)", r"(?:is|are) the responsibility of",
        r"belongs? to", r"(?:is |are )?(?:developed|built|written) by",
        r"\( ?(?:owner|maintainer|owned by)[:,]?", r"(?:sits|lies|rests) with",
    )),
    ("USES", True, _c(r"(?:is|are) used by")),
    ("REPLACES", True, _c(r"(?:is |are )?(?:replaced|superseded|succeeded) by")),
    ("PART_OF", True, _c(r"(?:includes|include|contains|contain|consists of)")),
    ("LEADS", False, _c(
        r"(?:leads|lead|led|heads|headed|manages|managed|is leading|has led|runs|is running)",
        r"(?:oversees|oversaw|supervises|heads up|is heading)",
        r"(?:is|,|, is) (?:the )?(?:[\w-]+ )?(?:lead|head|manager|director) (?:of|for|on)",
        r"took over (?:as )?(?:the )?(?:lead|head) of", r"took over", r"is in charge of",
    )),
    ("OWNS", False, _c(
        r"(?:owns|own|owned|maintains|maintain|maintained)",
        r"(?:is|are|,|, is|, are) (?:the )?(?:owners?|maintainers?) of", r"(?:is|are) responsible for",
        r"looks after", r"look after", r"takes care of", r"handles", r"(?:is|are) accountable for",
        r"is (?:the|our) (?:main |primary )?(?:point of )?contact for",
        r"(?:is|are) on the hook for", r"(?:is|are) on call for", r"(?:is|are) the go-to(?: person| contact)? for",
        r"(?:is|are) the (?:point person|expert|dri|contact person) (?:for|on)",
    )),
    ("PREFERS", False, _c(
        r"(?:prefers|prefer|preferred|likes|loves|favou?rs)(?: using| to use)?",
        r"would rather use", r"(?:'s )?(?:preferred|favou?rite) [\w ]{1,20} (?:is|are)",
    )),
    ("REPLACES", False, _c(r"replaced|replaces|supersedes|superseded", r"(?:is |are )?instead of", r"rather than",
                           r"(?:is |are )?(?:the )?(?:replacement|successor) (?:for|of|to)")),
    ("PART_OF", False, _c(r"(?:is |are )?(?:a |an |the )?(?:part|component|piece|module) of",
                          r"(?:is |are )?included in")),
    ("DEPENDS_ON", False, _c(
        r"(?:depends|depend|depended|relies|rely|relied) on", r"is dependent on",
        r"requires|require|required|needs",
    )),
    ("USES", False, _c(
        r"uses|use|used|using|is using|are using", r"(?:is |are )?built (?:with|on|in)",
        r"runs? on", r"(?:is |are )?written in", r"(?:is |are )?(?:deployed|running) (?:on|to)",
        r"deploys to", r"(?:is )?hosted (?:on|at)", r"stores (?:its )?[\w ]{1,20} in",
        r"switched to", r"(?:is )?migrated to", r"adopted", r"talks to", r"(?:is |are )?backed by",
        r"(?:is |are )?powered by", r"(?:is |are )?implemented (?:in|with)", r"(?:sits|runs) on top of",
        r"leverages",
        r"'s (?:[\w-]+ ){0,2}(?:database|db|datastore|stack|language|framework|queue|cache|store|"
        r"storage|runtime|backend|broker) (?:is|are)",
    )),
    ("MEMBER_OF", False, _c(
        r"(?:is|are) (?:on|in|part of|a member of|member of)", r"joined", r"works? (?:on|in)",
        r", (?:a |an )?(?:member|part) of", r"sits? (?:on|with)",
        rf"(?:is|, ) ?(?:an?|the) {_TITLE} (?:in|on)",
    )),
    ("WORKS_AT", False, _c(
        r"(?:works?|worked|is working|has worked) (?:at|for)", r"(?:joined|is employed (?:at|by))",
        r"(?:is |, )(?:an?|the|our) [\w /-]{1,40}? (?:at|for|of)",
        rf"is (?:an? |the |our )?{_TITLE} (?:at|for|of|from|with)",
    )),
)
# The words that name a relation in a question or a sentence. A plain word is a verb (its subject
# is the relation's source); "word+" a noun for the source ("the owner of X"), "word-" a noun for
# the target ("X's dependencies"), "word~" a verb whose subject is the target ("X employs Y").
RELATION_WORDS: dict[str, str] = {
    "OWNS": "own owner+ owning maintain maintainer+ responsible responsibility look care contact+ "
            "ask charge belong~ run behind+ dri+ hook point+ accountable",
    "LEADS": "lead leader+ head manage manager+ run charge director+ direct boss+",
    "REPORTS_TO": "report manager- boss- supervisor- manage~ supervise~ answer",
    "WORKS_AT": "work employ~ employer- employee+ staff+ company- job join hire~ firm-",
    "MEMBER_OF": "member+ team- squad- group- part join belong sit",
    "LOCATED_IN": "base located location- live sit city- country- region- office- headquarter "
                  "host place- where-",
    "USES": "use built build written write implement run stack- tool- language- database- db- "
            "framework- store host deploy talk backed library- technology- tech-",
    "DEPENDS_ON": "depend dependency- dependencies- rely require need call read pull fetch query",
    "PREFERS": "prefer like favourite favorite love",
    "REPLACES": "replace replacement+ migrate move switch instead previous- old- predecessor- "
                "successor+ retire",
    "PART_OF": "part component+ belong inside contain~ include~",
}
# fmt: on


def stem(word: str) -> str:
    """A light stem: "maintainers", "maintained", "maintaining" -> "maintain"."""
    w = word.casefold()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    for suffix in ("ing", "ers", "er", "ed", "es", "s"):
        if len(w) - len(suffix) >= 3 and w.endswith(suffix) and not w.endswith("ss"):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":
                w = w[:-1]  # "running" -> "run"
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


# stem -> [(relation, role)]: role "" a verb, "+" / "-" a noun for the source / the target,
# "~" a verb whose subject is the target
FAMILY: dict[str, list[tuple[str, str]]] = {}
for rel_, words_ in RELATION_WORDS.items():
    for w_ in words_.split():
        role_ = w_[-1] if w_[-1] in "+-~" else ""
        FAMILY.setdefault(stem(w_.rstrip("+-~")), []).append((rel_, role_))


# fmt: off
# Type votes a relation gives its ends: (source's, target's).
ROLE_VOTES: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "WORKS_AT": ({"PERSON": 2}, {"ORGANIZATION": 2}), "LEADS": ({"PERSON": 2}, {}),
    "OWNS": ({"PERSON": 1}, {}), "PREFERS": ({"PERSON": 2}, {}),
    "MEMBER_OF": ({"PERSON": 2}, {"ORGANIZATION": 2}), "LOCATED_IN": ({}, {"PLACE": 3}),
    "REPORTS_TO": ({"PERSON": 2}, {"PERSON": 2}), "USES": ({}, {"THING": 1}),
    "DEPENDS_ON": ({}, {"THING": 1}), "REPLACES": ({}, {}), "PART_OF": ({}, {}),
}
# fmt: on
# Forward connectors whose subject is a person (evidence that a sentence's first word is a name).
_PERSON_SUBJECT = tuple((r, p) for r, rev, p in CONNECTORS if ROLE_VOTES[r][0] and not rev)


def gap_words(between: str) -> str:
    """The words between two mentions as a connector is matched: lower case, adverbs out, tense
    folded ("was built with" reads as "is built with")."""
    gap = " ".join(between.replace("`", " ").split()).lower()
    gap = _TENSE.sub(lambda m: "are" if m.group(0) == "were" else "is", _ADVERB.sub("", gap))
    return " ".join(gap.split())


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


def is_team(mention: Any) -> bool:
    return mention.name.casefold().split()[-1] in TEAM_HEADS


def allowed(relation: str, source: Any, target: Any) -> str | None:
    """Refine or refuse a relation by what its ends are (a place is never used, only lived in)."""
    tkind, skind = kind_of(target), kind_of(source)
    if tkind == "PLACE" and relation in ("USES", "MEMBER_OF", "WORKS_AT"):
        return "LOCATED_IN"
    if relation == "LOCATED_IN" and tkind == skind == "THING" and target.kind in ("kebab", "np"):
        return "PART_OF"  # "geo-cache sits within route-planner"
    if relation == "LOCATED_IN" and tkind != "PLACE" and target.kind != "caps":
        return "MEMBER_OF" if is_team(target) else None  # "moved to the growth team"
    if relation == "OWNS" and source.kind == "dict" and skind == "THING":
        return None  # a technology owns nothing: "Kafka handles ledger-svc events"
    if (
        relation == "OWNS"
        and not is_team(source)
        and (is_team(target) or (tkind == "ORGANIZATION" and skind == "PERSON"))
    ):
        return "LEADS"  # a person runs a team or a company; nobody owns one
    if relation == "LEADS" and is_team(source) and tkind == "THING" and not is_team(target):
        return "OWNS"  # "the payments team runs billing-api", "billing-api is under the team"
    if relation == "LEADS" and skind != "PERSON" and source.kind in ("dict", "kebab", "np"):
        return None  # people lead; "moved under the platform team" names no lead
    if relation == "LEADS" and tkind == "THING" and target.kind in ("dict", "kebab"):
        return "OWNS" if target.kind == "kebab" else None  # "took over route-planner"; not "Rust"
    if relation == "MEMBER_OF" and not is_team(target):
        if tkind != "ORGANIZATION" and target.kind != "caps":
            return None
        relation = "WORKS_AT"
    if relation == "REPORTS_TO" and is_team(target):
        return "MEMBER_OF"  # "works under the platform team"
    if relation in ("WORKS_AT", "REPORTS_TO") and tkind == "THING":
        if target.kind in ("dict", "np", "kebab"):
            return None
    if relation in ("WORKS_AT", "LEADS", "PREFERS", "REPORTS_TO") and skind == "THING":
        if source.kind in ("dict", "kebab"):
            return None
    return relation


__all__ = ["CONNECTORS", "FAMILY", "RELATION_WORDS", "ROLE_VOTES", "allowed", "connect",
           "gap_words", "is_team", "kind_of", "person_role", "stem"]  # fmt: skip
