"""Reading the entity graph: search, traverse, and answering a question from it.

`ask` answers a natural-language question without a model, extractively:

1. **Entities.** Names of graph entities found in the question (whole words, longest first),
   plus known technology names in any spelling. None found: "I don't know", confidence 0.
2. **Intent.** The first of `INTENTS` whose cue words occur ("who leads" → LEADS, "where is …
   based" → LOCATED_IN, "what does … use" → USES …), or none.
3. **Evidence.** With an intent, the relations of that type that touch the entities found
   (those joining two of them first); their other ends are the ``answers``, and the answer text
   is the sentences of the memories that state them (a relation an agent stated reads as
   "A RELATION B (stated by an agent)"). Without an intent, the entities' own relations and
   descriptions. With an intent but no such relation, the sentences that mention the entity.
4. **Confidence** = coverage × evidence, where coverage is the share of the names in the
   question that are graph entities, and evidence is 0.75-0.95 for relations of the asked type
   (0.75 + 0.2 × the share of them supported by two or more memories or an agent), 0.6 for an
   open question about an entity, 0.3 for mention sentences only, 0.15 for a description only.
   docs/graph.md reports how often answers at each level were right on the labelled set.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from nxm.extract import candidate_names, canonical_names, norm
from nxm.graph import Graph, brief, view_relation
from nxs.errors import NotFoundError, ValidationError

_WORD = re.compile(r"[^\W_]+")
_QUERY_STOP = frozenset("a an the of and or to in on at for with by is are who what".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _QUERY_STOP}


def match_score(entity: dict[str, Any], query: str) -> float:
    """How well an entity matches a search: 1 exact name, 0.8 name contains it, then overlap.

    Word overlap with the name scores up to 0.7 and with the description up to 0.4 (the share
    of the query's words found); the best of these is the score, 0 means no match.
    """
    q, name = norm(query), norm(entity["name"])
    if q == name:
        return 1.0
    if q and q in name:
        return 0.8
    words = _words(query)
    if not words:
        return 0.0
    in_name = len(words & _words(entity["name"])) / len(words)
    in_description = len(words & _words(entity["description"])) / len(words)
    return max(0.7 * in_name, 0.4 * in_description)


def search(
    graph: Graph,
    *,
    query: str,
    type: str | None = None,
    user_id: str | None = None,
    limit: int = 10,
) -> dict[str, Any]:  # noqa: A002
    """Entities whose name or description matches ``query``, best first."""
    if not query.strip():
        raise ValidationError("query must not be empty", suggestion="give a name or a word")
    hits = []
    for entity in graph.entities.values():
        if type and entity["type"] != type:
            continue
        if user_id and user_id not in entity["userIds"]:
            continue
        score = match_score(entity, query)
        if score > 0:
            hits.append((score, entity))
    hits.sort(
        key=lambda h: (-h[0], -len(h[1]["sourceMemoryIds"]), h[1]["name"].casefold(), h[1]["id"])
    )
    degree = Counter()
    for rel in graph.relations.values():
        degree[rel["source"]] += 1
        degree[rel["target"]] += 1
    out = [{**e, "relationCount": degree[e["id"]], "score": round(s, 4)} for s, e in hits[:limit]]
    return {"entities": out, "query": query, "total": len(hits)}


def resolve(graph: Graph, ref: str) -> dict[str, Any]:
    """The entity an id or exact name names.

    Raises:
        NotFoundError: nothing by that id or name.
    """
    entity = graph.find(ref)
    if entity is None:
        raise NotFoundError(
            f"no entity with id or name {ref.strip()!r}",
            suggestion=f'find it with `nxm graph search "{ref.strip()}"`',
            code="ENTITY_NOT_FOUND",
        )
    return entity


def traverse(
    graph: Graph, *, entity: str, direction: str = "both", hops: int = 2
) -> dict[str, Any]:
    """Breadth-first paths from an entity: each entity reached once, at its least depth.

    Every relation that first reaches an entity at depth d is listed (with the entity it came
    from), so a path can be read back to the start; relations between entities already reached
    are not repeated.
    """
    start = resolve(graph, entity)
    seen = {start["id"]: 0}
    frontier = [start["id"]]
    paths = []
    for depth in range(1, hops + 1):
        reached: list[str] = []
        for eid in frontier:
            for rel, other, way in graph.edges(eid, direction):
                if other in seen and seen[other] < depth:
                    continue
                if other not in seen:
                    seen[other] = depth
                    reached.append(other)
                paths.append({
                    "entity": brief(graph.entities[other]),
                    "relationship": rel["relation"],
                    "direction": way,
                    "from": brief(graph.entities[eid]),
                    "depth": depth,
                    "sourceMemoryIds": rel["sourceMemoryIds"],
                    "authored": rel["authored"],
                })  # fmt: skip
        frontier = reached
    return {
        "direction": direction,
        "hops": hops,
        "paths": paths,
        "startEntity": brief(start),
        "total": len(paths),
    }


# -- questions -----------------------------------------------------------------------------------

INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (relation, re.compile(pattern))
    for relation, pattern in (
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
    )
)  # fmt: skip
DONT_KNOW = "I don't know: nothing in the graph matches this question."
MAX_SENTENCES = 5


def intent(question: str) -> str | None:
    """The relation type a question asks about, or None for an open question."""
    q = " ".join(question.casefold().split())
    return next((relation for relation, pattern in INTENTS if pattern.search(q)), None)


def _mentioned(graph: Graph, question: str) -> tuple[list[str], int]:
    """Entity ids named in the question (longest names first), and how many names it has."""
    q = (
        " "
        + " ".join(re.findall(r"[^\W_]+(?:[.+#'’-][^\W_]+)*[+#]*|@\w+", question.casefold()))
        + " "
    )
    spans: list[tuple[int, int]] = []
    found: list[str] = []
    names = set(graph.names) | {norm(n) for n in canonical_names(question)}
    for n in sorted(names, key=lambda x: (-len(x), x)):
        if n not in graph.names or len(n) < 2:
            continue
        at = q.find(f" {n} ")
        while at >= 0 and any(s <= at + 1 < e for s, e in spans):
            at = q.find(f" {n} ", at + 1)
        if at < 0:
            continue
        spans.append((at + 1, at + 1 + len(n)))
        eid = graph.names[n]
        if eid not in found:
            found.append(eid)
    unknown = [c for c in candidate_names(question) if norm(c) not in graph.names]
    unknown = [
        c
        for c in unknown
        if not any(norm(c) in graph.entities[e]["name"].casefold() for e in found)
    ]
    return found, len(found) + len(unknown)


def ask(graph: Graph, *, question: str) -> dict[str, Any]:
    """Answer a question from the graph and its source memories (extractive, no model)."""
    if not question.strip():
        raise ValidationError(
            "question must not be empty", suggestion="ask about someone or something"
        )
    wanted = intent(question)
    found, named = _mentioned(graph, question)
    if not found:
        return _answer(DONT_KNOW, 0.0, wanted, [], [], [], [])
    coverage = len(found) / max(named, 1)
    chosen: list[dict[str, Any]] = []
    if wanted:
        touching = [
            r for r in graph.relations.values()
            if r["relation"] == wanted and (r["source"] in found or r["target"] in found)
        ]  # fmt: skip
        joining = [r for r in touching if r["source"] in found and r["target"] in found]
        chosen = joining or touching
    else:
        chosen = [
            r for r in graph.relations.values() if r["source"] in found or r["target"] in found
        ]
    chosen.sort(key=lambda r: (-len(r["sourceMemoryIds"]) - r["authored"], r["id"]))
    chosen = chosen[:MAX_SENTENCES]
    if chosen:
        strong = sum(1 for r in chosen if len(r["sourceMemoryIds"]) + r["authored"] >= 2)
        evidence = 0.75 + 0.2 * strong / len(chosen) if wanted else 0.6
        texts = _relation_sentences(graph, chosen)
        ends = list(dict.fromkeys(e for r in chosen for e in (r["source"], r["target"])))
        answers = [e for e in ends if e not in found] or ends  # a relation joining two asked
        sources = list(dict.fromkeys(k for r in chosen for k in r["sourceMemoryIds"]))
    else:
        texts, sources = _mention_sentences(graph, found, wanted)
        evidence = 0.3 if texts else 0.15
        if not texts:
            texts = [
                f"{graph.entities[e]['name']}: {graph.entities[e]['description']}"
                for e in found
                if graph.entities[e]["description"]
            ]
        if not texts:
            return _answer(DONT_KNOW, 0.0, wanted, [], [], [], [])
        answers = []
    confidence = round(coverage * evidence, 2)
    used = [brief(graph.entities[e]) for e in found]
    return _answer(
        " ".join(texts[:MAX_SENTENCES]),
        confidence,
        wanted,
        used,
        [brief(graph.entities[e]) for e in answers],
        [view_relation(graph, r) for r in chosen],
        sources,
    )


def _relation_sentences(graph: Graph, chosen: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in chosen:
        for ev in r["evidence"]:
            text = graph.sentence(ev["memory"], ev["sentence"])
            if text and text not in out:
                out.append(text)
        if r["authored"]:
            a, b = graph.entities[r["source"]]["name"], graph.entities[r["target"]]["name"]
            out.append(f"{a} {r['relation']} {b} (stated by an agent).")
    return out


def _mention_sentences(
    graph: Graph, found: list[str], wanted: str | None
) -> tuple[list[str], list[str]]:
    """Sentences of supporting memories that name one of the entities."""
    out: list[str] = []
    keys: list[str] = []
    for eid in found:
        entity = graph.entities[eid]
        pattern = re.compile(rf"(?<![\w@]){re.escape(entity['name'])}(?!\w)", re.IGNORECASE)
        for key in entity["sourceMemoryIds"]:
            for i in range(len(graph.sentences.get(key) or []) or 64):
                text = graph.sentence(key, i)
                if not text:
                    break
                if pattern.search(text) and text not in out:
                    out.append(text)
                    if key not in keys:
                        keys.append(key)
    return out[:MAX_SENTENCES], keys


def _answer(
    text: str,
    confidence: float,
    wanted: str | None,
    used: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    relations: list[dict[str, Any]],
    sources: list[str],
) -> dict[str, Any]:
    return {
        "answer": text,
        "answers": answers,
        "confidence": confidence,
        "entitiesUsed": used,
        "intent": wanted,
        "method": "extractive",
        "relations": relations,
        "sourceMemoryIds": sources,
    }


__all__ = ["DONT_KNOW", "INTENTS", "ask", "intent", "match_score", "resolve", "search", "traverse"]
