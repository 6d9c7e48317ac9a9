"""Reading the entity graph: search, traverse, and (from `nxm.graph.answer`) questions.

Search matches names first; descriptions count only when no name matches, so "ledger" finds
ledger-svc, not every technology whose first sentence mentions the ledger.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from nxm.graph import Graph, brief
from nxm.graph.answer import DONT_KNOW, ask
from nxm.graph.extract import fold
from nxs.errors import NotFoundError, ValidationError

_WORD = re.compile(r"[^\W_]+")
_QUERY_STOP = frozenset("a an the of and or to in on at for with by is are who what".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(fold(text)) if w not in _QUERY_STOP}


def match_score(entity: dict[str, Any], query: str, *, names_only: bool = False) -> float:
    """1 for the name (case and accents aside), 0.8 when it contains the query, up to 0.7 for
    the share of the query's words in it, else up to 0.4 in the description (not ``names_only``)."""
    q, name = fold(query), fold(entity["name"])
    if q == name:
        return 1.0
    if q and q in name:
        return 0.8
    words = _words(query)
    if not words:
        return 0.0
    in_name = len(words & _words(entity["name"])) / len(words)
    if in_name or names_only:
        return 0.7 * in_name
    return 0.4 * len(words & _words(entity["description"])) / len(words)


def search(
    graph: Graph, *, query: str, type: str | None = None, user_id: str | None = None,  # noqa: A002
    limit: int = 10,
) -> dict[str, Any]:  # fmt: skip
    """Entities whose name matches ``query`` (else whose description does), best first."""
    if not query.strip():
        raise ValidationError("query must not be empty", suggestion="give a name or a word")
    pool = [
        e for e in graph.entities.values()
        if (not type or e["type"] == type) and (not user_id or user_id in e["userIds"])
    ]  # fmt: skip
    hits = [(s, e) for e in pool if (s := match_score(e, query, names_only=True)) > 0]
    if not hits:  # descriptions only when no name matches
        hits = [(s, e) for e in pool if (s := match_score(e, query)) > 0]
    hits.sort(
        key=lambda h: (-h[0], -len(h[1]["sourceMemoryIds"]), h[1]["name"].casefold(), h[1]["id"])
    )
    degree = Counter(e for rel in graph.relations.values() for e in (rel["source"], rel["target"]))
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
            f"no entity with id or name {ref.strip()!r}", code="ENTITY_NOT_FOUND",
            suggestion=f'find it with `nxm graph search "{ref.strip()}"`',
        )  # fmt: skip
    return entity


def traverse(graph: Graph, *, entity: str, direction: str = "both", hops: int = 2) -> dict:
    """Breadth-first paths from an entity, each entity reached once, at its least depth."""
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
                    "entity": brief(graph.entities[other]), "relationship": rel["relation"],
                    "direction": way, "from": brief(graph.entities[eid]), "depth": depth,
                    "sourceMemoryIds": rel["sourceMemoryIds"], "authored": rel["authored"],
                })  # fmt: skip
        frontier = reached
    return {"direction": direction, "hops": hops, "paths": paths, "startEntity": brief(start),
            "total": len(paths)}  # fmt: skip


__all__ = ["DONT_KNOW", "ask", "match_score", "resolve", "search", "traverse"]
