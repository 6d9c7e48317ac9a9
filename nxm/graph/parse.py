"""Reading a question as a chain of relations from the entity it names (no model).

`plan` folds the noun phrases around ``§`` (the named entity) into steps, innermost first
(`_REDUCE`), until a whole question form is left (`_MAIN`). Wording it cannot place gives None:
the caller refuses instead of guessing. docs/graph.md, "Questions", lists the forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ANCHOR = "§"
IN, OUT = "incoming", "outgoing"

_PERSON, _ORG = frozenset({"PERSON"}), frozenset({"ORGANIZATION"})
_PLACE, _THING = frozenset({"PLACE"}), frozenset({"THING"})
# fmt: off
# relation: (active phrases, passive phrases); a phrase is a regex fragment over lower case.
_VERBS: dict[str, tuple[str, str]] = {
    "OWNS": (
        r"owns|own|owned|owning|maintains|maintain|maintained|maintaining|looks after|look after|"
        r"looking after|(?:is |are )?responsible for|takes care of|take care of|taking care of",
        r"(?:owned|maintained|looked after) by|belongs? to|belonging to"),
    "LEADS": (
        r"leads|lead|led|leading|heads up|head up|heading up|heads|head|headed|heading|manages|"
        r"manage|managed|managing|runs|run|running|(?:is |are )?in charge of",
        r"(?:led|headed|managed|run) by"),
    "REPORTS_TO": (
        r"reports to|report to|reported to|reporting to|answers? to",
        r"manages|manage|managed|managing|supervises|supervise|supervised"),  # "who manages §"
    "WORKS_AT": (
        r"works? at|worked at|working at|works? for|worked for|working for|employed by|"
        r"employed at|joined",
        r"employs|employ|employed|hired|hires"),  # "which company employs §"
    "MEMBER_OF": (
        r"(?:is |are )?on|(?:is |are )?in|(?:is |are )?(?:a )?(?:part|member) of|belongs? to|"
        r"sits? on|works? on|joined", r""),
    "LOCATED_IN": (
        r"(?:based|located|headquartered)(?: in)?|lives? in|living in|lives?|works? from|"
        r"working from|sits? in|(?:is |are )?from", r""),
    "USES": (
        r"uses|use|used|using|built (?:with|on|in)|builds? with|written in|writes? in|runs? on|"
        r"running on|deployed(?: to| on)?|hosted(?: on| at)?|talks? to|backed by|"
        r"stores? (?:its )?(?:\w+ )?(?:data )?in",
        r"used by"),
    "DEPENDS_ON": (
        r"depends on|depend on|depending on|relies on|rely on|relying on|requires|require|"
        r"requiring|needs|need|calls|call",
        r"required by|needed by|called by"),
    "PREFERS": (r"prefers|prefer|preferred|likes|like|favou?rs", r"preferred by|liked by"),
}
# role nouns: "the N of §" / "§'s N" is the entity reached by these readings from §.
_ROLES: dict[str, tuple[tuple[str, str], ...]] = {
    r"owners?|maintainers?|owning team|(?:point of )?contacts?": (("OWNS", IN),),
    r"(?:tech |team )?leads?|leaders?|heads?|directors?": (("LEADS", IN),),
    r"managers?": (("REPORTS_TO", OUT), ("LEADS", IN)),
    r"boss|supervisor|line manager": (("REPORTS_TO", OUT),),
    r"(?:direct )?reports": (("REPORTS_TO", IN),),
    r"employer": (("WORKS_AT", OUT),),
    r"employees|staff": (("WORKS_AT", IN),),
    r"members": (("MEMBER_OF", IN),),
    r"team": (("MEMBER_OF", OUT), ("LEADS", OUT)),
    r"location|office|base|hometown": (("LOCATED_IN", OUT),),
    r"dependenc(?:y|ies)": (("DEPENDS_ON", OUT),),
    r"dependents|consumers|callers|clients": (("DEPENDS_ON", IN),),
    r"(?:tech )?stack|tools|databases?|dbs?|datastores?|languages?|frameworks?": (
        ("USES", OUT), ("DEPENDS_ON", OUT)),
}
# head nouns and the entity types they stand for
_TYPES: dict[str, frozenset[str]] = {
    r"person|people|one|someone|engineers?|developers?|designers?": _PERSON,
    r"teams?|squads?|groups?|guilds?|departments?|orgs?": _ORG,
    r"compan(?:y|ies)|organi[sz]ations?|employers?|agenc(?:y|ies)|vendors?|firms?|"
    r"contractors?|customers?|clients?": _ORG,
    r"cit(?:y|ies)|countr(?:y|ies)|places?|offices?|locations?|towns?|regions?": _PLACE,
    r"services?|apis?|apps?|applications?|systems?|components?|tools?|databases?|dbs?|"
    r"datastores?|stores?|frameworks?|languages?|librar(?:y|ies)|technolog(?:y|ies)|tech|"
    r"things?|platforms?|projects?|repos?|repositor(?:y|ies)|clusters?|queues?|pipelines?|"
    r"jobs?|workers?|dashboards?|stacks?|products?|modules?|packages?|backends?|frontends?": _THING,
}
# fmt: on
_WHO = frozenset({"PERSON", "ORGANIZATION"})
_FUNCTION = (
    r"is|are|was|were|does|do|did|has|have|the|a|an|that|which|who|whom|what|where|of|to|in|"
    r"on|by|for|with|at|from|'s"
)


def _alt(patterns: object) -> str:
    return "|".join(f"(?:{p})" for p in sorted(patterns, key=len, reverse=True) if p)  # type: ignore[attr-defined]


_ACTIVE = {rel: re.compile(rf"(?:{a})") for rel, (a, _) in _VERBS.items()}
_PASSIVE = {rel: re.compile(rf"(?:{p})") for rel, (_, p) in _VERBS.items() if p}
_CUE = _alt([a for a, _ in _VERBS.values()] + [p for _, p in _VERBS.values()])
_ROLE = _alt(_ROLES)
_TYPE = _alt(_TYPES)
_MOD = rf"(?:(?!(?:{_FUNCTION})\b)[\w-]+ )"
_DET = r"(?:the |a |an |our |their |its )?"
_AUX = r"(?:is |are |was |were |does |do |did |has |have )?"
_WH = rf"(?:(?:in|at|from|for|with|by|to|on) )?(?P<wh>which|what|who|whom|where)(?: {_MOD}{{0,2}}?(?P<whtype>{_TYPE}))?"

_NOT_WH = r"(?<!which )(?<!what )(?<!whose )"  # "which team owns §" is the question itself
_WH_BARE = _WH.replace("(?:(?:in|at|from|for|with|by|to|on) )?", "")

# fmt: off
_REDUCE = (
    # §'s lead (first: "the manager of §'s lead" is the manager of the lead)
    ("role", re.compile(rf"{ANCHOR} 's {_MOD}{{0,1}}?(?P<role>{_ROLE})\b")),
    # the lead of § / the current owner of § / the engineering manager for §
    ("role", re.compile(rf"\b{_DET}{_MOD}{{0,1}}?(?P<role>{_ROLE}) (?:of|for|on) {ANCHOR}")),
    # the team that owns § / the team owning § / the service owned by §
    ("subject", re.compile(
        rf"\b{_NOT_WH}{_DET}{_MOD}{{0,2}}?(?P<type>{_TYPE}) (?:that |which |who |whom )?"
        rf"(?:is |are |was |were )?(?P<cue>{_CUE}) (?:the )?{ANCHOR}")),
    # the service § depends on / the person that § reports to / the team § is owned by
    ("object", re.compile(
        rf"\b{_NOT_WH}{_DET}{_MOD}{{0,2}}?(?P<type>{_TYPE}) (?:that |which |who |whom )?{ANCHOR} "
        rf"{_AUX}(?P<cue>{_CUE})\b")),
)
_TAIL = r"(?: (?:for|in|at|on|with|to|during) [\w' -]{1,40})?"  # "… use for transfers"
_MAIN = (
    ("subject", re.compile(rf"^{_WH} {_AUX}(?P<cue>{_CUE}) (?:the )?{ANCHOR}$")),
    ("object", re.compile(rf"^{_WH} {_AUX}{ANCHOR} {_AUX}(?P<cue>{_CUE}){_TAIL}$")),
    ("object", re.compile(rf"^{ANCHOR} {_AUX}(?P<cue>{_CUE}) {_WH_BARE}$")),  # "§ reports to whom"
    ("ask", re.compile(
        rf"^who (?:should|do|can|could|would) (?:i|we|you) (?:ask|talk to|speak to|contact|"
        rf"ping|go to|reach out to)(?: about| for| regarding)? {ANCHOR}$")),
    ("result", re.compile(rf"^(?:name|list|give me|show me|show|find|identify) {ANCHOR}$")),
    ("where", re.compile(rf"^where (?:is|are|was|were) {ANCHOR}$")),
    ("work", re.compile(rf"^where (?:does|do|did) {ANCHOR} work$")),
    ("copula", re.compile(rf"^{_WH} (?:is|are|was|were) {ANCHOR}$")),
    ("describe", re.compile(
        rf"^(?:(?:tell me|what do (?:we|you) know|what is known) about|who is|what is|"
        rf"who are|what are|describe) {ANCHOR}$")),
)
# fmt: on
# question forms that are one step of their own: (readings, types wanted)
_FIXED = {
    "where": ((("LOCATED_IN", OUT),), _PLACE),
    "ask": ((("OWNS", IN), ("LEADS", IN)), _WHO),
    "work": ((("WORKS_AT", OUT), ("LOCATED_IN", OUT)), frozenset({"ORGANIZATION", "PLACE"})),
}
_ASKING = re.compile(
    r"^(?:(?:can|could|would) you )?(?:please )?(?:tell me|show me|find out|find|do you know|"
    r"i want to know|i'd like to know|i wonder|any idea)(?: please)? (?=(?:in |at |for )?"
    r"(?:who|whom|what|where|which)\b)"
)
_FILLER = re.compile(
    r"\b(?:now|currently|today|these days|right now|actually|exactly|still|please|again|"
    r"at the moment|nowadays)\b"
)


@dataclass
class Step:
    """One hop: readings (relation, direction from the entity so far), and the types wanted."""

    readings: tuple[tuple[str, str], ...]
    types: frozenset[str] | None = None


@dataclass
class Plan:
    """The steps from the named entity to the answer, or an entity to describe."""

    steps: list[Step] = field(default_factory=list)
    describe: bool = False


def _type_of(word: str | None) -> frozenset[str] | None:
    if not word:
        return None
    return next((types for p, types in _TYPES.items() if re.fullmatch(p, word)), None)


def _readings(cue: str, gap: str) -> tuple[tuple[str, str], ...]:
    """What a verb phrase means for the entity so far: ``gap`` is "subject" when the answer is
    the verb's subject ("who owns §") and "object" when § is ("what does § use")."""
    out = []
    for rel in _VERBS:
        for voice, table in (("active", _ACTIVE), ("passive", _PASSIVE)):
            pattern = table.get(rel)
            if pattern is None or not pattern.fullmatch(cue):
                continue
            forward = (gap == "object") == (voice == "active")
            if rel in ("OWNS", "MEMBER_OF") and cue.startswith("belong"):
                forward = rel == "MEMBER_OF"  # "§ belongs to": its team, or its owner
            out.append((rel, OUT if forward else IN))
    return tuple(dict.fromkeys(out))


def _wh_types(m: re.Match[str], readings: tuple[tuple[str, str], ...]) -> frozenset[str] | None:
    wh, noun = m.group("wh"), m.group("whtype")
    if noun:
        return _type_of(noun)
    if wh in ("who", "whom"):
        return _WHO
    if wh != "where":
        return None
    rels = {r for r, _ in readings}
    if "USES" in rels:
        return frozenset({"THING", "PLACE"})
    return frozenset({"ORGANIZATION", "PLACE"}) if "WORKS_AT" in rels else _PLACE


def normalise(question: str) -> str:
    """Lower case, possessives split off, punctuation and time fillers dropped."""
    q = question.replace("’", "'").casefold()
    q = re.sub(r"\b(who|what|where|which|that)'s\b", r"\1 is", q)
    q = re.sub(r"'s\b", " 's", q)
    q = re.sub(r"[?!.,;:]+(?=\s|$)", " ", q)
    q = _ASKING.sub("", _FILLER.sub(" ", q))
    return re.sub(rf"\b(?:the|our|their) {ANCHOR}", ANCHOR, " ".join(q.split()))


def plan(question: str) -> Plan | None:
    """The steps a question asks for from ``§`` (its named entity), or None."""
    q = normalise(question)
    steps: list[Step] = []
    for _ in range(6):
        for kind, pattern in _REDUCE:
            m = pattern.search(q)
            if m is None:
                continue
            if kind == "role":
                role = m.group("role")
                step = Step(next(r for p, r in _ROLES.items() if re.fullmatch(p, role)))
            else:
                readings = _readings(m.group("cue"), kind)
                if not readings:
                    continue
                step = Step(readings, _type_of(m.group("type")))
            steps.append(step)
            q = f"{q[: m.start()]}{ANCHOR}{q[m.end() :]}"
            break
        else:
            break
    for kind, pattern in _MAIN:
        m = pattern.match(q)
        if m is None:
            continue
        if kind in ("subject", "object"):
            readings = _readings(m.group("cue"), kind)
            if not readings:
                continue
            steps.append(Step(readings, _wh_types(m, readings)))
        elif kind in _FIXED:
            steps.append(Step(*_FIXED[kind]))
        elif kind == "result":
            if not steps:
                return None
        elif kind == "copula":
            if not steps:
                return Plan(describe=True)
            types = _wh_types(m, ())
            if types is not None:
                steps[-1].types = (steps[-1].types or types) & types or steps[-1].types
        elif kind == "describe":
            return Plan(steps) if steps else Plan(describe=True)
        return Plan(steps)
    return None


__all__ = ["ANCHOR", "IN", "OUT", "Plan", "Step", "normalise", "plan"]
