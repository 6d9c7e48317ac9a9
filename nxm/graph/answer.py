"""Answering a question from the entity graph by type and path: extractive, cited, refusing when
unsure.

No model and no question patterns: the entities the question names (one the graph lacks means
"I don't know"), the type of answer it wants ("who": a person or a team, "where": a place, "which
tool": a thing), and its other words. Candidates of that type 1-3 hops from the named entities
are ranked by how well each hop is explained by a distinct question word: a word of the
relation's family (`RELATION_WORDS`: "maintains", "owner", "responsible" all name OWNS) or a word
of the sentence that states it. Where a relation has one current value (`SINGLE`), the memory
created last wins. docs/graph.md, "Questions", has the detail.
"""

from __future__ import annotations

import re
from itertools import combinations, permutations
from typing import Any

from nxm.graph import Graph, brief, view_relation
from nxm.graph.connectors import FAMILY as _FAMILY
from nxm.graph.connectors import ROLE_VOTES, connect, stem
from nxm.graph.extract import question_mentions
from nxm.graph.lexicon import TEAM_HEADS
from nxm.graph.names import fold, listed_spans, norm
from nxs.errors import ValidationError

IN, OUT = "incoming", "outgoing"
WITH = "MENTIONED_WITH"  # named in one sentence that no pattern read: weaker than a relation
DONT_KNOW = "I don't know: nothing in the graph matches this question."
MAX_SENTENCES = 6
MAX_HOPS = 3
WEAK = 0.5  # below this share of the question's words explained, the best candidate is refused
# (relation, direction) with one current value: disagreeing memories are settled by recency
SINGLE = frozenset({
    ("LOCATED_IN", OUT), ("WORKS_AT", OUT), ("REPORTS_TO", OUT), ("LEADS", IN), ("OWNS", IN),
    ("MEMBER_OF", OUT),
})  # fmt: skip
# fmt: off
# Nouns that set the type of answer wanted ("which city", "what language").
TYPE_WORDS: dict[str, str] = {
    **dict.fromkeys("person people someone engineer developer designer".split(), "PERSON"),
    **dict.fromkeys("team squad group guild department org company organisation organization "
                    "employer agency vendor firm contractor customer client".split(), "ORGANIZATION"),
    **dict.fromkeys("city country place office location town region".split(), "PLACE"),
    **dict.fromkeys("service api app application system component tool database db datastore "
                    "store framework language library technology tech thing platform project "
                    "repo repository cluster queue pipeline job worker dashboard stack product "
                    "module package backend frontend".split(), "THING"),
}
_WHO = frozenset({"PERSON", "ORGANIZATION"})
_CODE = frozenset(stem(w) for w in ("written", "write", "implemented", "coded"))
_KINDS = {_WHO: "a person or team", frozenset({"PLACE"}): "a place", frozenset({"THING"}): "a thing",
          frozenset({"ORGANIZATION"}): "an organisation", frozenset({"PERSON"}): "a person"}
_WHERE = {"WORKS_AT": "ORGANIZATION", "MEMBER_OF": "ORGANIZATION", "USES": "THING"}
_WH = {"who": _WHO, "whom": _WHO, "where": frozenset({"PLACE"}), "what": frozenset({"THING"}),
       "which": None}
_STOP = frozenset("""a an the of and or to in on at for with by is are was were be been do does
did has have had who whom whose what which where when why how that this these those it its their
our my me i we you your they them he she his her there here s now currently today still please
also actually exactly right moment nowadays days tell know name list give show find identify
about should could would can will may might any some all after over up out into under off down
across through via per than""".split())
_ASIDE = frozenset("our the their its his her a an my".split())  # "X, our Y", "X (Y)", "X: Y"
_AT = re.compile(r"\b(?:in|from|out of|at)\s*$", re.IGNORECASE)  # before a place: where it is
_PRONOUN = re.compile(r"\b(?:he|she|it|they)\b", re.IGNORECASE)
_ASK_FIRST = frozenset("name list give show find identify".split())
# relations whose two ends are of one type: only the order says which is which
_ORDERED = frozenset({"REPORTS_TO", "DEPENDS_ON", "REPLACES", "PART_OF"})
_YES_NO = re.compile(r"^(?:does|do|did|is|are|was|were|can|has|have)\b", re.IGNORECASE)
_QTOKEN = re.compile(r"@[\w.-]*\w|[^\W_]+(?:[.+#-][^\W_]+)*[+#]*")
_WORD = re.compile(r"[^\W\d_]+")
_SERVICE = re.compile(r"^(\w+)[ -](?:svc|service)$")
_NOT_ANCHOR = frozenset(
    "who what which where whom when why how the a an is are of to in on at for by team service "
    "lead owner manager city company person".split()
)
# fmt: on


def _type_of(word: str) -> str | None:
    """The type a noun stands for, singular or plural ("cities", "tools")."""
    forms = [word]
    if word.endswith("s"):
        forms += [word[:-1], word[:-2] if word.endswith("es") else "", word[:-3] + "y"]
    for form in forms:
        if form in TYPE_WORDS:
            return TYPE_WORDS[form]
    return None


def _key(text: str) -> str:
    return " ".join(fold(m.group(0)) for m in _QTOKEN.finditer(text.replace("’", "'")))


def _index(graph: Graph) -> dict[str, str]:
    """Question-side name -> entity id: every name, accents aside; the short forms no two
    entities share: a person's first name, a team's bare name ("payments" and "team payments"
    for the payments team), a service's ("ledger service" for ledger-svc)."""
    got = graph.index.get("question")
    if got is None:
        got = {}
        for n, eid in graph.names.items():
            key = _key(n)
            if key and key not in _NOT_ANCHOR and len(key) > 1:
                got.setdefault(key, eid)
        short: dict[str, set[str]] = {}
        for eid, e in graph.entities.items():
            words = _key(e["name"]).split()
            forms = []
            if e["type"] == "PERSON" and len(words) > 1 and not e["name"].startswith("@"):
                forms.append(words[0])
            if len(words) > 1 and words[-1] in TEAM_HEADS:
                forms += [" ".join(words[:-1]), f"{words[-1]} {' '.join(words[:-1])}"]
            if e["type"] == "THING" and (m := _SERVICE.match(" ".join(words))):
                forms += [f"{m.group(1)} service", f"{m.group(1)}-svc"]
            for form in forms:
                short.setdefault(form, set()).add(eid)
        for form, eids in short.items():
            if len(eids) == 1 and form not in got and form not in _NOT_ANCHOR:
                got[form] = next(iter(eids))
        graph.index["question"] = got
    return got


def mentioned(graph: Graph, question: str) -> tuple[list[tuple[str, int, int]], list[str]]:
    """The entities a question names, (id, start, end) in order, and the names the graph lacks."""
    index = _index(graph)
    longest = max((k.count(" ") + 1 for k in index), default=1)
    toks = list(_QTOKEN.finditer(question.replace("’", "'")))
    spans = [(eid, s, e) for s, e, _, name in listed_spans(question)
             if (eid := graph.names.get(norm(name)))]  # fmt: skip
    i = 0
    while i < len(toks):
        for n in range(min(longest, len(toks) - i), 0, -1):
            key = " ".join(fold(t.group(0)) for t in toks[i : i + n])
            eid = index.get(key)
            start, end = toks[i].start(), toks[i + n - 1].end()
            if eid and not any(s < end and start < e for _, s, e in spans):
                spans.append((eid, start, end))
                i += n - 1
                break
        i += 1
    spans.sort(key=lambda x: x[1])
    unknown = [
        name for name, kind, start, end in question_mentions(question)
        if not any(s < end and start < e for _, s, e in spans) and (kind != "np" or not spans)
    ]  # fmt: skip
    return spans, unknown


class _Question:
    """What a question asks: the types wanted, and its words with their positions."""

    def __init__(self, question: str, spans: list[tuple[str, int, int]]) -> None:
        text = question.replace("’", "'")
        for _, s, e in reversed(spans):
            text = f"{text[:s]}{' ' * (e - s)}{text[e:]}"  # keep positions
        toks = [(m.start(), m.group(0).casefold()) for m in _WORD.finditer(text)]
        toks = [(p, w) for p, w in toks if w != "s"]
        self.raw = dict(toks)  # position -> the word as written: "manager" is no "manages"
        self.anchors = {eid: s for eid, s, _ in spans}
        self.words: list[tuple[int, str, bool]] = []  # (position, stem, passive: "by" follows)
        self.optional: list[tuple[int, str, bool]] = []  # type nouns: may explain, need not
        self.kinds: dict[str, str] = {}  # a type noun's stem -> its type
        self.type_word = next((w for _, w in toks if w in _WH), "")
        toks_words = [w for _, w in toks]
        self.types = _WH.get(self.type_word)
        for i, (pos, w) in enumerate(toks):
            st = stem(w)
            passive = i + 1 < len(toks) and toks[i + 1][1] == "by"
            kind = _type_of(w)
            after_wh = i > 0 and toks[i - 1][1] in ("which", "what")
            asked = after_wh or (toks[0][1] in _ASK_FIRST and self.type_word in ("", "what"))
            if kind and asked and self.type_word in ("", "what", "which"):
                self.types, self.type_word = frozenset({kind}), w  # "which city", "list …"
            if w == "where":
                self.optional.append((pos, "where", False))
            if w in _STOP:
                continue
            if all(st != x[1] for x in self.words + self.optional):  # "day-to-day": one "day"
                (self.optional if kind else self.words).append((pos, st, passive))
                if kind:
                    self.kinds[st] = kind
        self.via = [_type_of(w) for w in toks_words if w != self.type_word and _type_of(w)]
        if self.type_word == "where":  # "where does X work": a company; "deployed": a platform
            rels = {r for _, st, _ in self.words for r, _ in _FAMILY.get(st, ())}
            self.types = frozenset({"PLACE"} | {t for r, t in _WHERE.items() if r in rels})


def _words_of(graph: Graph, rel: dict[str, Any]) -> set[str]:
    """The stems of the sentences that state a relation (cached on the graph)."""
    cache = graph.index.setdefault("stems", {})
    got = cache.get(rel["id"])
    if got is None:
        texts = [graph.sentence(ev["memory"], ev["sentence"]) for ev in rel["evidence"]]
        if rel["relation"] == WITH:  # the words between the two names
            texts = [_PRONOUN.split(texts[0][slice(*rel["gap"])])[0]]  # "…; she's in Z": not Y
        got = cache[rel["id"]] = {stem(w) for w in _WORD.findall(" ".join(texts))} - {"s"}
        if rel["relation"] == WITH:
            cache[rel["id"], "bare"] = (
                not rel["crowded"] and set(_WORD.findall(texts[0].casefold())) <= _ASIDE
            )
            got -= rel["read"]
            ends = sorted(
                (rel["source"], rel["target"]), key=lambda e: graph.entities[e]["type"] == "PLACE"
            )
            if graph.entities[ends[1]]["type"] == "PLACE" and ends[0] == rel["subject"]:
                if _AT.search(texts[0]) and ends[1] not in rel["read"]:
                    got.add("locat")  # "Ana heads Revenue from Lagos": where the subject is
    return got


def _together(graph: Graph) -> dict[str, list[tuple[dict[str, Any], str, str]]]:
    """Entity id -> its `WITH` edges: one per sentence naming two entities together that no
    pattern relates (a pronoun counts as the name it stands for; cached). Each keeps what the
    patterns read in that sentence ("read": words and ends), which explains nothing else."""
    got = graph.index.get("together")
    if got is None:
        got = {}
        related: dict[frozenset[str], list[dict[str, Any]]] = {}
        for r in graph.relations.values():
            related.setdefault(frozenset((r["source"], r["target"])), []).append(r)
        for (key, s), spans in graph.mentions.items():
            pairs = list(combinations(sorted({eid for *_, eid in spans}), 2))
            read = {x for a, b in pairs for r in related.get(frozenset((a, b)), ())
                    if key in r["sourceMemoryIds"] for x in (*r["said"], a, b)}  # fmt: skip
            for a, b in pairs:
                if frozenset((a, b)) in related:
                    continue
                # the nearest two mentions of a and b (and whether another name is between)
                i, j = min(((i, j) for i, x in enumerate(spans) for j, y in enumerate(spans)
                            if i < j and {x[2], y[2]} == {a, b}), key=lambda p: p[1] - p[0])  # fmt: skip
                rel = _co_mention(f"with-{a[4:]}-{b[4:]}-{key}-{s}", a, b, key, s, spans, i, j)
                rel["read"] = read
                got.setdefault(a, []).append((rel, b, OUT))
                got.setdefault(b, []).append((rel, a, IN))
        graph.index["together"] = got
    return got


def _co_mention(
    rid: str, source: str, target: str, key: str, s: int, spans: list[tuple[int, int, str]],
    i: int, j: int,
) -> dict[str, Any]:  # fmt: skip
    """A `WITH` edge between the names at ``spans[i]`` and ``spans[j]`` (i < j) of sentence
    ``s`` of memory ``key``: the words between them explain it (`_loosely`)."""
    return {"id": rid, "source": source, "target": target, "relation": WITH,
            "sourceMemoryIds": [key], "authored": False, "said": set(), "read": set(),
            "gap": (spans[i][1], spans[j][0]), "crowded": j > i + 1, "subject": spans[0][2],
            "first": spans[i][2], "evidence": [{"memory": key, "sentence": s}]}  # fmt: skip


def _fits(relation: str, source: str, target: str) -> bool:
    """Whether a relation's ends can be entities of these types (`ROLE_VOTES`)."""
    return all(not w or k in w for w, k in zip(ROLE_VOTES[relation], (source, target), strict=True))


def _loosely(graph: Graph, q: _Question, rel: dict[str, Any], way: str, from_anchor: bool):
    """How question words explain a `WITH` hop: a word of the sentence, or of a relation family
    the sentence has a word of ("maintainer" for "owns"); past the first hop or between names
    side by side, a noun of the type the hop reaches ("which city": a place); between names side
    by side, a relation word whose ends' types they are."""
    words = _words_of(graph, rel)  # less the words of relations a pattern read there
    said = _families(words)
    near, far = (rel["source"], rel["target"]) if way == OUT else (rel["target"], rel["source"])
    kinds = graph.entities[near]["type"], graph.entities[far]["type"]
    bare = graph.index["stems"][rel["id"], "bare"]  # "X, our Y", "X: Y": side by side
    out: dict[int, tuple[float, int]] = {}
    for i, (pos, st, passive) in enumerate(q.words + q.optional):
        family = {r for r, _ in _FAMILY.get(st, ())} if i < len(q.words) else set()
        if (
            from_anchor
            and near in q.anchors
            and not _ordered(q, st, pos, passive, near, rel, words)
        ):
            continue  # the sentence says it the other way round
        if (i < len(q.words) and st in words) or family & said:
            out[i] = (0.4, 0)
        elif (bare or not from_anchor) and q.kinds.get(st) == kinds[1]:
            out[i] = (0.25, 0)
        elif bare and any(_fits(r, *kinds) or _fits(r, *kinds[::-1]) for r in family):
            out[i] = (0.25, 0)
    return out


_NOUN = re.compile(r"(?:er|or|ee|ent)s?$")  # "manager", "supervisors", "employee"


def _roles(st: str, relation: str, word: str) -> list[str]:
    """The roles a word of ``relation``'s family plays (`RELATION_WORDS`), a noun's when the
    word as written looks like one ("manager" names the target, "manages" is a verb)."""
    roles = [role for r, role in _FAMILY.get(st, ()) if r == relation]
    noun = bool(_NOUN.search(word))
    return [x for x in roles if (x in ("+", "-")) == noun] or roles


def _ordered(q: _Question, st: str, pos: int, passive: bool, near: str, rel: dict[str, Any],
             words: set[str]) -> bool:  # fmt: skip
    """Whether a co-mention can be walked from ``near`` the way question word ``st`` asks, for a
    relation whose ends are of one type (`_ORDERED`): the question's named entity is the
    relation's source when it is the verb's subject (or the possessor of a noun for the target:
    "X's manager"); the sentence's first name is, unless its own word of that relation runs the
    other way ("manages") or "by" turns it."""
    asks = [r for r, _ in _FAMILY.get(st, ()) if r in _ORDERED]
    if not asks:
        return True
    role = _roles(st, asks[0], q.raw.get(pos, ""))[0]
    says = [x for w in words for x in _roles(w, asks[0], "") if x in ("", "~")] or [""]
    if role in ("+", "-"):  # a noun for the target ("X's manager"): X is the source
        source = role == "-"
    else:  # a verb: its subject is the source, unless it runs the other way ("manages")
        source = (q.anchors[near] < pos) ^ passive ^ (role == "~")
    first = (rel.get("first") == near) ^ ("by" in words) ^ (says[0] == "~")
    return source == first


def _explain(graph: Graph, q: _Question, rel: dict[str, Any], way: str, from_anchor: bool):
    """{word index: (strength, direction agreement)} of the question words that explain a hop."""
    label = rel["relation"]
    if label == WITH:
        return _loosely(graph, q, rel, way, from_anchor)
    label_words = {stem(w) for w in label.split("_")}
    sentence = None
    out: dict[int, tuple[float, int]] = {}
    for i, (pos, st, passive) in enumerate(q.words + q.optional):
        roles = _roles(st, label, q.raw.get(pos, ""))
        if not roles and {r for r, _ in _FAMILY.get(st, ())} & _families(rel["said"], True):
            roles = [""]  # "part of" asks what "is a member of" says, whatever its label
        if st in _CODE and rel["said"] and not rel["said"] & _CODE:
            continue  # "written in" asks for a language: not what a thing "runs on"
        if roles or st in label_words or st in rel["said"]:
            role = roles[0] if roles else ""
            if role in ("+", "-"):  # a noun: "+" names the source, so the hop is walked backwards
                agree = 1 if (way == IN) == (role == "+") else -1
            elif from_anchor:  # a verb next to the named entity: its side says the direction
                anchor_first = q.anchors.get(rel["source"] if way == OUT else rel["target"], -1)
                subject = (anchor_first < pos) ^ passive ^ (role == "~")  # not a != b != c
                agree = 1 if subject == (way == OUT) else -1
            else:  # a verb further on: the path so far is its subject ("the lead … reports to")
                agree = 1 if (way == OUT) != (role == "~") else -1
            if agree < 0 and label in _ORDERED and (from_anchor or role in ("+", "-")):
                continue  # "who does X report to" is not answered by who reports to X
            out[i] = (1.0 if st in rel["said"] else 0.8, agree)
            continue
        if sentence is None:
            sentence = _words_of(graph, rel)
        if st in sentence and i < len(q.words) and st not in _FAMILY:  # a relation's word only
            # names that relation; a type noun in a sentence explains nothing
            out[i] = (0.5, 0)
    return out


def _families(stems: set[str], plain: bool = False) -> set[str]:
    """The relations words name (``plain``: only the words naming one, not "run")."""
    return {r for w in stems for r, _ in _FAMILY.get(w, ()) if not plain or len(_FAMILY[w]) == 1}


def _stale(graph: Graph) -> set[str]:
    """Relations that lost to a newer memory where only one value can hold (`SINGLE`)."""
    got = graph.index.get("stale")
    if got is not None:
        return got

    def newest(rel: dict[str, Any]) -> str:  # an agent's statement is a deliberate correction
        stated = (graph.records[k]["created"] or "" for k in rel["sourceMemoryIds"])
        return "\uffff" if rel["authored"] else max(stated, default="")

    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for rel in graph.relations.values():
        for way, here, other in ((OUT, rel["source"], rel["target"]),
                                 (IN, rel["target"], rel["source"])):  # fmt: skip
            if (rel["relation"], way) in SINGLE:
                kind = graph.entities[other]["type"]
                if rel["relation"] == "MEMBER_OF":  # one team at a time, but a guild as well
                    kind += graph.entities[other]["name"].rsplit(None, 1)[-1].casefold()
                groups.setdefault((here, rel["relation"], way, kind), []).append(rel)
    got = set()
    for rels in groups.values():
        latest = max(newest(r) for r in rels)
        got.update(r["id"] for r in rels if newest(r) != latest)
    graph.index["stale"] = got
    return got


def _assign(hops: list[dict[int, tuple[float, int]]], needed: set[int]) -> tuple | None:
    """The best way to give each hop a distinct explaining word: (strength, agreement, words),
    giving every ``needed`` word (one that names a relation) a hop of its own, or None."""
    best = None
    for pick in permutations(sorted({i for h in hops for i in h}), len(hops)):
        if all(i in h for i, h in zip(pick, hops, strict=True)) and needed <= set(pick):
            got = (sum(h[i][0] for i, h in zip(pick, hops, strict=True)) / len(hops),
                   sum(h[i][1] for i, h in zip(pick, hops, strict=True)))  # fmt: skip
            if best is None or got > best[:2]:
                best = (*got, set(pick))
    return best


def _kinds(graph: Graph, q: _Question, hops: list) -> int:
    """How many of the kinds the question names on the way ("the team that owns X") the path's
    middle entities are."""
    middle = [graph.entities[h[2]]["type"] for h in hops[:-1]]
    got = 0
    for kind in q.via:
        if kind in middle:
            middle.remove(kind)
            got += 1
    return got


def _paths(graph: Graph, q: _Question, start: str) -> dict[str, tuple[tuple, list]]:
    """The best-explained path to each candidate of the wanted type: {id: (key, hops)}."""
    stale = _stale(graph)
    best: dict[str, tuple[tuple, list]] = {}
    n_words = len(q.words)
    words = q.words + q.optional
    needed = {i for i, w in enumerate(q.words) if w[1] in _FAMILY}
    weight = [1.0 if i in needed else 0.5 for i in range(n_words)]  # a relation's word counts
    total = sum(weight)  # double: "day-to-day" left unexplained weakens less than "owns"

    together = _together(graph)

    def walk(eid: str, trail: list, expl: list, seen: set[str]) -> None:
        loose = any(r["relation"] == WITH for _, r, _ in trail)
        for rel, other, way in graph.edges(eid) + ([] if loose else together.get(eid, [])):
            if other in seen or rel["id"] in stale:
                continue  # one `WITH` hop a path at most: two are a guess
            got = _explain(graph, q, rel, way, not trail)
            if not got and (words or trail):
                continue
            hops, explained = [*trail, (eid, rel, other)], [*expl, got]
            if q.types is None or graph.entities[other]["type"] in q.types:
                fit = _assign(explained, needed) if words else (1.0, 0, set())
                covered = {i for h in explained for i in h if i < n_words}
                share = sum(weight[i] for i in covered) / total if total else 1.0
                if fit is None:  # a word that names a relation this path does not have
                    fit, share = (0.0, 0, set()), 0.0
                key = (share, _kinds(graph, q, hops), fit[0], fit[1], -len(hops))
                if loose or rel["relation"] == WITH:  # a weak hop: every kind named must fit
                    share = share if key[1] == len(q.via) else 0.0
                    key = (share, *key[1:])
                if other not in best or key > best[other][0]:
                    best[other] = (key, hops)
            if len(hops) < MAX_HOPS and (words or not hops):
                walk(other, hops, explained, seen | {other})

    walk(start, [], [], {start})
    return best


def ask(graph: Graph, *, question: str) -> dict[str, Any]:
    """Answer a question from the graph and its source memories (extractive, no model)."""
    if not question.strip():
        raise ValidationError(
            "question must not be empty", suggestion="ask about someone or something"
        )
    spans, unknown = mentioned(graph, question)
    if spans or unknown:
        return _ask(graph, question, spans, unknown)
    words, missing = _plain_words(graph, question)
    if not words:
        return _answer(f"I don't know: no memory mentions {', '.join(w for w, _, _ in missing)}."
                       if missing else DONT_KNOW, 0.0, [])  # fmt: skip
    _, w, start, end, where = words[0]  # the rarest: the likeliest to be a name
    beside = [x for x, a, b in missing if not question[min(b, end) : max(a, start)].strip()]
    if beside:  # "the warehouse robots" when no memory says "robots": not what they hold
        return _answer(f"I don't know: no memory mentions {', '.join(beside)}.", 0.0, [])
    pid = _anchor(graph, w, where)
    try:  # a plain word stands in for an entity the extractor did not find
        return _ask(graph, question, [(pid, start, end)], [])
    finally:
        _drop_anchor(graph, pid)


def _ask(graph: Graph, question: str, spans: list, unknown: list[str]) -> dict[str, Any]:
    found = list(dict.fromkeys(eid for eid, _, _ in spans))
    used = [brief(graph.entities[e]) for e in found if not e.startswith("word:")]  # real ones
    if unknown:
        return _answer(f"I don't know: the graph has no {', '.join(unknown)}.", 0.0, used)
    if not found:
        return _answer(DONT_KNOW, 0.0, [])
    q = _Question(question, spans)
    joined = bool(_YES_NO.match(question.strip())) and len(found) > 1  # "Does Dana work at X?"
    if joined:
        q.types = None  # the answer is a path to the other named entity
    elif not q.words and not q.optional and q.type_word in ("", "who", "what"):
        return _describe(graph, found, used)  # "who is X", "tell me about X"
    scored: dict[str, tuple[tuple, list]] = {}
    reach: dict[str, int] = {}  # how many of the named entities reach a candidate
    for anchor in found[:1] if joined else found:
        for eid, (key, hops) in _paths(graph, q, anchor).items():
            if (eid in found) == joined:
                reach[eid] = reach.get(eid, 0) + 1
                if eid not in scored or key > scored[eid][0][1:]:
                    scored[eid] = ((0, *key), hops)
    scored = {e: ((reach[e], *k[1:]), hops) for e, (k, hops) in scored.items()}
    wanted = _KINDS.get(frozenset(q.types or ()), "an answer")
    names = " / ".join(graph.entities[e]["name"] for e in found)
    if not scored:
        return _answer(f"I don't know: no open memory links {names} to {wanted} in the way the "
                       "question asks.", 0.0, used)  # fmt: skip
    top = max(k for k, _ in scored.values())
    if top[1] < WEAK:
        return _answer(f"I don't know: nothing linked to {names} fits the question well enough.",
                       0.0, used)  # fmt: skip
    winners = sorted((e for e, (k, _) in scored.items() if k == top),
                     key=lambda e: graph.entities[e]["name"].casefold())  # fmt: skip
    trails = [scored[e][1] for e in winners]
    chosen = list({r["id"]: r for hops in trails for _, r, _ in hops}.values())
    quoted = " ".join(_sentences(graph, chosen))
    shown = [graph.entities[e]["name"] for e in winners]
    if len(trails[0]) > 1 or any(n.casefold() not in quoted.casefold() for n in shown):
        quoted = f"{', '.join(shown)}. {quoted}"  # the answer first when the quotes hide it
    strong = sum(1 for r in chosen if len(r["sourceMemoryIds"]) + r["authored"] >= 2)
    weak = 0.8 if any(r["relation"] == WITH for r in chosen) else 1.0  # a co-mention: a guess
    confidence = max(0.5, round((0.75 + 0.2 * strong / len(chosen)) * top[1] * weak, 2))
    path = [{
        "relation": hop[1]["relation"], "direction": OUT if hop[1]["source"] == hop[0] else IN,
        "reached": [brief(graph.entities[e]) for e in dict.fromkeys(t[i][2] for t in trails)],
    } for i, hop in enumerate(trails[0])]  # fmt: skip
    answers = [found[0], *winners] if joined else winners
    return _answer(quoted.strip(), confidence, used, answers, chosen, graph, path)


ANCHOR_SENTENCES = 12  # a word in more sentences (or 1 % of a large store's) names no one thing


def _plain_words(graph: Graph, question: str) -> tuple[list[tuple], list[tuple[str, int, int]]]:
    """The question's plain content words that sentences naming entities use, rarest first,
    each (sentences, word, start, end, where it is used); and those no such sentence uses."""
    words = graph.index.get("words")
    if words is None:  # stem -> where sentences naming entities use it, built once a graph
        words = graph.index["words"] = {}
        for place in graph.mentions:
            for m in _WORD.finditer(graph.sentence(*place)):
                words.setdefault(stem(m.group(0).casefold()), []).append((place, *m.span()))
    cap = max(ANCHOR_SENTENCES, len(graph.mentions) // 100)
    used, missing = [], []
    for m in _WORD.finditer(question.replace("’", "'")):
        w = m.group(0).casefold()
        st = stem(w)
        if len(w) < 3 or w in _STOP or w in _WH or st in _FAMILY or _type_of(w):
            continue
        where = words.get(st, [])
        count = len({place for place, _, _ in where})
        if not where:
            missing.append((m.group(0), m.start(), m.end()))
        elif count <= cap:
            used.append((count, w, m.start(), m.end(), where))
    used.sort(key=lambda u: (u[0], -u[2]))  # a tie: the later word, where a question's object is
    return used, missing


_ITEM = r"(?:the\s+)?[\w-]+"
_LISTED_AFTER = re.compile(rf"^(?:\s*,\s*{_ITEM})*\s*,?\s*(?:and|or|&)\s+{_ITEM}(?=\s)")
_LISTED_BEFORE = re.compile(
    rf"(?<=\s){_ITEM}(?:\s*,\s*{_ITEM})*\s*,?\s*(?:and|or|&)\s*(?:the\s*)?$"
)


def _anchor(graph: Graph, w: str, where: list[tuple[tuple[str, int], int, int]]) -> str:
    """A stand-in entity for a plain word (a component written as a word: "the exporter"),
    linked to every name in the sentences using it, as a co-mention is, or by the relation the
    words between state when they are next to each other ("the indexer belongs to X"); its id."""
    pid = f"word:{w}"
    graph.entities[pid] = {"id": pid, "name": w, "type": "THING", "aliases": [],
                           "description": "", "sourceMemoryIds": []}  # fmt: skip
    edges = _together(graph).setdefault(pid, [])
    for (key, s), a, b in where:
        spans = sorted([*graph.mentions[key, s], (a, b, pid)])
        i = spans.index((a, b, pid))
        linked = set()
        for j in sorted(range(len(spans)), key=lambda j: abs(j - i)):
            eid = spans[j][2]
            if eid == pid or eid in linked:
                continue  # one edge a sentence, to the name's nearest mention
            linked.add(eid)
            lo, hi = min(i, j), max(i, j)
            rel = _co_mention(f"{pid}-{eid}-{key}-{s}", pid, eid, key, s, spans, lo, hi)
            between = graph.sentence(key, s)[spans[lo][1] : spans[hi][0]]
            if i == lo:  # "the indexer and the crawler belong to X": the list's other words out
                between = _LISTED_AFTER.sub("", between)
            else:  # "X owns the crawler and the indexer"
                between = _LISTED_BEFORE.sub("", between)
            if hi == lo + 1 and (got := connect(between.strip(" :—–"))) is not None:
                # the words between say a relation, as the extractor reads between two names
                ends = (spans[lo][2], spans[hi][2])[:: -1 if got[1] else 1]
                rel |= {"relation": got[0], "source": ends[0], "target": ends[1],
                        "said": {st for x in _WORD.findall(between.casefold())
                                 if (st := stem(x)) in _FAMILY}}  # fmt: skip
            edges.append((rel, eid, OUT if rel["source"] == pid else IN))
    return pid


def _drop_anchor(graph: Graph, pid: str) -> None:
    graph.entities.pop(pid, None)
    for rel, _, _ in graph.index.get("together", {}).pop(pid, []):
        graph.index.get("stems", {}).pop(rel["id"], None)
        graph.index.get("stems", {}).pop((rel["id"], "bare"), None)


def _describe(graph: Graph, found: list[str], used: list[dict]) -> dict[str, Any]:
    """ "Tell me about X": X's relations, or its description."""
    rels = [r for r in graph.relations.values() if r["source"] in found or r["target"] in found]
    chosen = sorted(rels, key=lambda r: (-len(r["sourceMemoryIds"]) - r["authored"], r["id"]))
    chosen = chosen[:MAX_SENTENCES]
    if chosen:
        ends = list(dict.fromkeys(e for r in chosen for e in (r["source"], r["target"])))
        answers = [e for e in ends if e not in found]
        return _answer(" ".join(_sentences(graph, chosen)), 0.6, used, answers, chosen, graph)
    e = graph.entities[found[0]]
    if not e["description"]:
        return _answer(DONT_KNOW, 0.0, used)
    return _answer(f"{e['name']}: {e['description']}", 0.15, used, [], [], graph, None,
                   e["sourceMemoryIds"][:1])  # fmt: skip


def _sentences(graph: Graph, chosen: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in chosen:
        for ev in r["evidence"]:
            text = graph.sentence(ev["memory"], ev["sentence"])
            if text and text not in out:
                out.append(text)
        if r["authored"]:
            a, b = graph.entities[r["source"]]["name"], graph.entities[r["target"]]["name"]
            out.append(f"{a} {r['relation']} {b} (stated by an agent).")
    return out[:MAX_SENTENCES]


def _answer(
    text: str, confidence: float, used: list[dict[str, Any]], answers: list[str] | None = None,
    relations: list[dict[str, Any]] | None = None, graph: Graph | None = None,
    path: list[dict[str, Any]] | None = None, sources: list[str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    relations = relations or []
    if sources is None:
        sources = list(dict.fromkeys(k for r in relations for k in r["sourceMemoryIds"]))
    return {
        "answer": text,
        "answers": [brief(graph.entities[e]) for e in answers or []] if graph else [],
        "confidence": confidence, "entitiesUsed": used,
        "intent": path[-1]["relation"] if path else None, "method": "extractive",
        "path": path or [],
        "relations": [view_relation(graph, r) for r in relations] if graph else [],
        "sourceMemoryIds": sources,
    }  # fmt: skip


__all__ = ["DONT_KNOW", "IN", "OUT", "SINGLE", "ask", "mentioned"]
