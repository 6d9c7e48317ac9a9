"""Answering a question from the entity graph: extractive, cited, and refusing when unsure.

No model: the entities the question names (one the graph lacks means "I don't know"), its wording
read as relation steps (`nxm.graph.parse`), walked, and the sentences behind each relation quoted.
Where a relation has one current value (`SINGLE`), the memory created last wins: editing an old
memory does not make its fact newer. docs/graph.md, "Questions", has the detail.
"""

from __future__ import annotations

import re
from typing import Any

from nxm.graph import Graph, brief, view_relation
from nxm.graph.extract import question_mentions
from nxm.graph.names import fold, listed_spans, norm
from nxm.graph.parse import ANCHOR, IN, OUT, Plan, plan
from nxs.errors import ValidationError

INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((r, re.compile(p)) for r, p in (
    ("REPORTS_TO", r"\breport"),
    ("LOCATED_IN", r"\b(?:based|located|headquartered|lives?|living|which city|which country)\b|\bwork(?:s|ing)? from\b"),
    ("MEMBER_OF", r"\b(?:which|what) (?:team|group|guild|squad)\b|\bmember of\b|\bpart of\b"),
    ("LEADS", r"\b(?:leads?|led|leading|heads?|manages?|managing|in charge)\b|\btech lead\b"),
    ("OWNS", r"\b(?:owns?|owned|owner|maintains?|maintained|maintainer|responsible|contact for)\b"),
    ("PREFERS", r"\b(?:prefers?|preferred|likes?|favou?rite)\b"),
    ("DEPENDS_ON", r"\b(?:depends?|dependent|rel(?:y|ies)|requires?|needs?)\b"),
    ("USES", r"\b(?:uses?|using|built|written|runs? on|deployed|hosted|stack|talks? to|stores?)\b"),
    ("WORKS_AT", r"\bwork(?:s|ing)? (?:at|for)\b|\bemploy|\bcompany\b|\bwhere does .+ work\b"),
    ("LOCATED_IN", r"\bwhere (?:is|are)\b"),
))  # fmt: skip
DONT_KNOW = "I don't know: nothing in the graph matches this question."
UNREAD = "I don't know: I cannot read this question as relations between the entities it names."
MAX_SENTENCES = 6
# (relation, direction) with one current value: disagreeing memories are settled by recency
SINGLE = frozenset({
    ("LOCATED_IN", OUT), ("WORKS_AT", OUT), ("REPORTS_TO", OUT), ("LEADS", IN), ("OWNS", IN),
})  # fmt: skip
_YES_NO = re.compile(r"^(?:does|do|did|is|are|was|were|can|has|have)\b", re.IGNORECASE)
_QTOKEN = re.compile(r"@[\w.-]*\w|[^\W_]+(?:[.+#-][^\W_]+)*[+#]*")
_NOT_ANCHOR = frozenset(
    "who what which where whom when why how the a an is are of to in on at for by team service "
    "lead owner manager city company person".split()
)
Hit = tuple[dict[str, Any], str]  # (relation, the entity at its other end)
Trail = list[list[tuple[str, dict[str, Any], str]]]  # per step: (from, relation, to)
_BACK = {IN: OUT, OUT: IN}


def intent(question: str) -> str | None:
    """The relation type a question asks about, or None for an open question."""
    q = " ".join(question.casefold().split())
    return next((relation for relation, pattern in INTENTS if pattern.search(q)), None)


def _key(text: str) -> str:
    return " ".join(fold(m.group(0)) for m in _QTOKEN.finditer(text.replace("’", "'")))


def _index(graph: Graph) -> dict[str, str]:
    """Question-side name -> entity id: every name, accents aside; unique first names."""
    got = graph.index.get("question")
    if got is None:
        got = {}
        firsts: dict[str, set[str]] = {}
        for n, eid in graph.names.items():
            key = _key(n)
            if key and key not in _NOT_ANCHOR and len(key) > 1:
                got.setdefault(key, eid)
        for eid, e in graph.entities.items():
            words = _key(e["name"]).split()
            if e["type"] == "PERSON" and len(words) > 1 and not e["name"].startswith("@"):
                firsts.setdefault(words[0], set()).add(eid)
        for first, eids in firsts.items():
            if len(eids) == 1 and first not in got and first not in _NOT_ANCHOR:
                got[first] = next(iter(eids))
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


def ask(graph: Graph, *, question: str) -> dict[str, Any]:
    """Answer a question from the graph and its source memories (extractive, no model)."""
    if not question.strip():
        raise ValidationError(
            "question must not be empty", suggestion="ask about someone or something"
        )
    spans, unknown = mentioned(graph, question)
    found = list(dict.fromkeys(eid for eid, _, _ in spans))
    used = [brief(graph.entities[e]) for e in found]
    if unknown:
        names = ", ".join(unknown)
        return _answer(f"I don't know: the graph has no {names}.", 0.0, intent(question), used)
    if not found:
        return _answer(DONT_KNOW, 0.0, intent(question), [])
    if len(found) > 1 or _YES_NO.match(question.strip()):
        return _joined(graph, question, found, used)
    eid, start, end = spans[0]
    got = plan(f"{question[:start]} {ANCHOR} {question[end:]}")
    if got is None:
        return _answer(UNREAD, 0.0, intent(question), used)
    if got.describe:
        return _describe(graph, found, used)
    return _walked(graph, got, eid, used)


def _current(graph: Graph, hits: list[Hit]) -> list[Hit]:
    """Of values that should be one, those stated by the newest memory, per entity type."""

    def newest(rel: dict[str, Any]) -> str:  # an agent's statement is a deliberate correction
        stated = (graph.records[k]["created"] or "" for k in rel["sourceMemoryIds"])
        return "\uffff" if rel["authored"] else max(stated, default="")

    out = []
    for kind in dict.fromkeys(graph.entities[other]["type"] for _, other in hits):
        mine = [h for h in hits if graph.entities[h[1]]["type"] == kind]
        latest = max(newest(rel) for rel, _ in mine)
        out += [h for h in mine if newest(h[0]) == latest]
    return out


def _still(graph: Graph, other: str, relation: str, direction: str, eid: str) -> bool:
    """Whether ``eid`` is still ``other``'s one value (a newer memory may place it elsewhere)."""
    back = _BACK[direction]
    kind = graph.entities[eid]["type"]
    hits = [
        (rel, o) for rel, o, _ in graph.edges(other, back)
        if rel["relation"] == relation and graph.entities[o]["type"] == kind
    ]  # fmt: skip
    return any(o == eid for _, o in _current(graph, hits))


def _walked(graph: Graph, got: Plan, start: str, used: list[dict[str, Any]]) -> dict[str, Any]:
    frontier = [start]
    trail: Trail = []
    for n, step in enumerate(got.steps, 1):
        edges: list[tuple[str, dict[str, Any], str]] = []
        for eid in frontier:
            for relation, direction in step.readings:
                hits = [
                    (rel, other) for rel, other, _ in graph.edges(eid, direction)
                    if rel["relation"] == relation
                    and (step.types is None or graph.entities[other]["type"] in step.types)
                ]  # fmt: skip
                if hits and (relation, _BACK[direction]) in SINGLE:
                    hits = [h for h in hits if _still(graph, h[1], relation, direction, eid)]
                if hits:
                    if (relation, direction) in SINGLE:
                        hits = _current(graph, hits)
                    edges += [(eid, rel, other) for rel, other in hits]
                    break
        if not edges:
            names = " / ".join(graph.entities[e]["name"] for e in frontier)
            wanted = " or ".join(f"{r} {'from' if d == OUT else 'to'}" for r, d in step.readings)
            text = f"I don't know: no open memory states a {wanted} {names}."
            rels = [r for edges in trail for _, r, _ in edges]
            if n > 1:
                text += " " + " ".join(_sentences(graph, rels))
            path = _path(graph, got, trail)
            return _answer(text, 0.0, step.readings[0][0], used, [], rels, graph, path)
        trail.append(edges)
        frontier = list(dict.fromkeys(other for _, _, other in edges))
    keep = set(frontier)  # only the relations on a way to an answer are cited
    for i in range(len(trail) - 1, -1, -1):
        trail[i] = [e for e in trail[i] if e[2] in keep]
        keep = {e[0] for e in trail[i]}
    chosen = list({r["id"]: r for edges in trail for _, r, _ in edges}.values())
    evidence = [_evidence(list({r["id"]: r for _, r, _ in edges}.values())) for edges in trail]
    quoted = " ".join(_sentences(graph, chosen))
    names = [graph.entities[e]["name"] for e in frontier]
    if len(trail) > 1 or any(n.casefold() not in quoted.casefold() for n in names):
        quoted = f"{', '.join(names)}. {quoted}"  # the answer first when the quotes hide it
    return _answer(
        quoted.strip(), round(min(evidence), 2), got.steps[-1].readings[0][0], used,
        frontier, chosen, graph, _path(graph, got, trail),
    )  # fmt: skip


def _evidence(rels: list[dict[str, Any]]) -> float:
    """0.75 + 0.2 × the share of the relations stated by two or more memories or an agent."""
    strong = sum(1 for r in rels if len(r["sourceMemoryIds"]) + r["authored"] >= 2)
    return 0.75 + 0.2 * strong / len(rels)


def _path(graph: Graph, got: Plan, trail: Trail) -> list[dict[str, Any]]:
    return [{
        "relation": edges[0][1]["relation"] if edges else step.readings[0][0],
        "direction": next(
            (d for r, d in step.readings if edges and r == edges[0][1]["relation"]),
            step.readings[0][1],
        ),
        "reached": [brief(graph.entities[e]) for e in dict.fromkeys(o for _, _, o in edges)],
    } for step, edges in zip(got.steps, trail, strict=False)]  # fmt: skip


def _joined(graph: Graph, question: str, found: list[str], used: list[dict]) -> dict[str, Any]:
    """Two named entities or a yes/no question: relations of the asked type between them."""
    wanted = intent(question)
    touching = [r for r in _touching(graph, found) if wanted is None or r["relation"] == wanted]
    joining = [r for r in touching if r["source"] in found and r["target"] in found]
    chosen = _strongest(joining or touching)
    if not chosen:
        return _answer(DONT_KNOW if wanted is None else UNREAD, 0.0, wanted, used)
    evidence = _evidence(chosen) if wanted else 0.6
    ends = list(dict.fromkeys(e for r in chosen for e in (r["source"], r["target"])))
    answers = [e for e in ends if e not in found] or ends  # a relation joining two asked
    text = " ".join(_sentences(graph, chosen))
    return _answer(text, round(evidence, 2), wanted, used, answers, chosen, graph)


def _describe(graph: Graph, found: list[str], used: list[dict]) -> dict[str, Any]:
    """ "Tell me about X": X's relations, or its description."""
    chosen = _strongest(_touching(graph, found))
    if chosen:
        ends = list(dict.fromkeys(e for r in chosen for e in (r["source"], r["target"])))
        answers = [e for e in ends if e not in found]
        return _answer(" ".join(_sentences(graph, chosen)), 0.6, None, used, answers, chosen, graph)
    e = graph.entities[found[0]]
    if not e["description"]:
        return _answer(DONT_KNOW, 0.0, None, used)
    return _answer(f"{e['name']}: {e['description']}", 0.15, None, used, [], [], graph, None,
                   e["sourceMemoryIds"][:1])  # fmt: skip


def _touching(graph: Graph, found: list[str]) -> list[dict[str, Any]]:
    return [r for r in graph.relations.values() if r["source"] in found or r["target"] in found]


def _strongest(rels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The relations stated by the most memories (an agent's counts one), at most MAX_SENTENCES."""
    rels = sorted(rels, key=lambda r: (-len(r["sourceMemoryIds"]) - r["authored"], r["id"]))
    return rels[:MAX_SENTENCES]


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
    text: str, confidence: float, wanted: str | None, used: list[dict[str, Any]],
    answers: list[str] | None = None, relations: list[dict[str, Any]] | None = None,
    graph: Graph | None = None, path: list[dict[str, Any]] | None = None,
    sources: list[str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    relations = relations or []
    if sources is None:
        sources = list(dict.fromkeys(k for r in relations for k in r["sourceMemoryIds"]))
    return {
        "answer": text,
        "answers": [brief(graph.entities[e]) for e in answers or []] if graph else [],
        "confidence": confidence, "entitiesUsed": used, "intent": wanted, "method": "extractive",
        "path": path or [],
        "relations": [view_relation(graph, r) for r in relations] if graph else [],
        "sourceMemoryIds": sources,
    }  # fmt: skip


__all__ = ["DONT_KNOW", "INTENTS", "SINGLE", "UNREAD", "ask", "intent", "mentioned"]
