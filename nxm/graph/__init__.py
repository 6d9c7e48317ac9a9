"""The entity graph: what memories say about people, organisations, places and things.

Two sources, kept apart. Extractions (`nxm.graph.extract`) are derived and machine-local: kept in
the record cache with a fingerprint of their text, and only names, types and sentence numbers,
nothing private. What an agent adds or relates is appended to ``.nxs/graph.jsonl`` (committed,
merged by git's union driver); extraction never touches it, so it survives re-extraction,
forgetting and purging. `build` reads only open, unexpired memories, so forgetting one drops what
only it supported. docs/graph.md describes the whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from nxm.graph.aliases import aliases
from nxm.graph.extract import ENTITY_TYPES, EXTRACTOR_VERSION, extract, fold, norm, sentences
from nxm.lifecycle import is_expired, live
from nxm.record import reading_order
from nxs.errors import ConflictError, NotFoundError, ValidationError
from nxs.workspace import Workspace

_TYPE_ORDER = {t: i for i, t in enumerate(ENTITY_TYPES)}  # ties: PERSON > ORG > PLACE > THING
_RELATION_NAME = re.compile(r"^[A-Z][A-Z0-9_]{1,39}$")
AGENT_LOG = "graph.jsonl"
OLD_AGENT_FILE = "graph-agent.json"  # the earlier layout's (`migrate`)
_AUTHORED = ("name", "type", "description", "user_id", "actor")  # an entity statement's fields
Records = dict[str, dict[str, Any]]
Edge = tuple[dict[str, Any], str, str]  # (relation, other entity id, "outgoing"|"incoming")


def text_of(record: dict[str, Any]) -> str:
    """The text a memory's entities are extracted from: its introduction and body."""
    return f"{record['introduction']}\n{record['body']}"


def fingerprint(record: dict[str, Any]) -> str:
    """What an extraction depends on: extractor version, user id and text."""
    raw = f"{EXTRACTOR_VERSION}\x00{record.get('user_id') or ''}\x00{text_of(record)}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def entity_id(name: str) -> str:
    """The stable id of an entity: a hash of its normalised name."""
    return "ent-" + hashlib.sha256(norm(name).encode()).hexdigest()[:12]


def relation_id(source: str, relation: str, target: str) -> str:
    """The stable id of a relation: a hash of its two entity ids and its type."""
    return "rel-" + hashlib.sha256(f"{source}\x00{relation}\x00{target}".encode()).hexdigest()[:12]


def _extraction(record: dict[str, Any], names: dict[str, Any] | None = None) -> dict[str, Any]:
    got = extract(text_of(record), record.get("user_id"), names)
    return {"fingerprint": fingerprint(record), **got}


def complete(records: list[dict[str, Any]], extracted: Records) -> Records:
    """Bring ``extracted`` up to date for ``records`` and return what was made. A name one
    memory gives ("tiler is a Go service", "… group (RSE)") is read in the others using it."""
    made = {}
    for r in records:
        got = extracted.get(r["key"])
        if got is None or got.get("fingerprint") != fingerprint(r):
            made[r["key"]] = extracted[r["key"]] = _extraction(r)
    gives: dict[str, list[str]] = {}
    for r in reading_order(records):  # the first memory to give a name decides what it means
        for w, v in extracted[r["key"]].get("gives", {}).items():
            gives.setdefault(w, v)
    words = sorted(gives, key=len, reverse=True)
    used = re.compile(rf"(?<![\w@./-])(?:{'|'.join(map(re.escape, words))})(?![\w/-])")
    for r in records:
        got, text = extracted[r["key"]], text_of(r)
        names = {}
        if words and any(w in text for w in words):  # a substring test first: most texts have none
            own = got.get("gives", {})
            names = {w: gives[w] for w in sorted(set(used.findall(text))) if w not in own}
        if names != got.get("names", {}):
            made[r["key"]] = extracted[r["key"]] = _extraction(r, names)
    return made


def extractions(service: Any, records: list[dict[str, Any]]) -> Records:
    """Each record's extraction: the cached one while its fingerprint holds, else made and kept."""
    cache = service.store.cache
    stored = cache.extractions()
    made = complete(records, stored)
    if made:
        with contextlib.suppress(Exception):  # a read-only cache: made again next time
            cache.store_extractions(made)
    return stored


def load_agent(ws: Workspace) -> dict[str, Any]:
    """The agent-authored entities and relations, the log replayed in time order (a union
    merge interleaves two branches' statements)."""
    entities: dict[str, dict[str, Any]] = {}
    relations: dict[tuple[str, str, str], dict[str, Any]] = {}
    for line in _statements(ws):
        try:
            if line.get("op") == "entity":
                entity = {k: v for k, v in line.items() if k not in ("op", "at")}
                n = norm(entity["name"])
                old = entities.get(n)
                entity["created"] = old["created"] if old else line["at"]
                entity["updated"] = line["at"]
                entities[n] = entity
            elif line.get("op") == "relation":
                triple = _triple(line)
                if triple not in relations:
                    relations[triple] = {
                        "source": line["source"], "relation": line["relation"],
                        "target": line["target"], "actor": line.get("actor"), "created": line["at"],
                    }  # fmt: skip
            elif line.get("op") == "remove_relation":
                relations.pop(_triple(line), None)
            elif line.get("op") == "remove_entity":
                n = norm(line["name"])
                entities.pop(n, None)
                for triple in [t for t in relations if n in (t[0], t[2])]:
                    del relations[triple]
        except (KeyError, TypeError, AttributeError):  # a hand-edited line without its fields
            continue
    return {"entities": entities, "relations": list(relations.values())}


def _triple(line: dict[str, Any]) -> tuple[str, str, str]:
    return norm(line["source"]["name"]), line["relation"], norm(line["target"]["name"])


def _statements(ws: Workspace) -> list[dict[str, Any]]:
    try:
        raw = (ws.dir / AGENT_LOG).read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in raw.split(b"\n")[:-1]:  # a last line without its newline was cut short
        with contextlib.suppress(orjson.JSONDecodeError):
            got = orjson.loads(line)
            if isinstance(got, dict) and isinstance(got.get("at"), str):
                out.append(got)
    out.sort(key=lambda x: x["at"])
    return out


def _state(ws: Workspace, statement: dict[str, Any]) -> None:
    """Append one statement to the agent's log (call under the store's write lock)."""
    path = ws.dir / AGENT_LOG
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "ab", buffering=0) as fh:
        fh.write(orjson.dumps(statement, option=orjson.OPT_SORT_KEYS) + b"\n")
        os.fsync(fd)


def migrate(ws: Workspace) -> None:
    """Move the earlier layout's agent file (one JSON document) into the log."""
    old = ws.dir / OLD_AGENT_FILE
    try:
        data = orjson.loads(old.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return
    entities = (data.get("entities") or {}).values()
    for entity in sorted(entities, key=lambda e: e.get("created") or ""):
        at = entity.get("updated") or entity.get("created") or ""
        _state(ws, {"op": "entity", "at": at, **{k: entity.get(k) for k in _AUTHORED}})
    for rel in data.get("relations") or []:
        _state(ws, {"op": "relation", "at": rel.get("created") or "", "actor": rel.get("actor"),
                    "source": rel["source"], "relation": rel["relation"], "target": rel["target"]})  # fmt: skip
    old.unlink()


@dataclass
class Graph:
    """Entities and relations at one moment, with the memories behind them."""

    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # normalised name -> entity id
    sentences: dict[str, list[str]] = field(default_factory=dict)  # memory key -> sentences
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # supporting memories
    # (memory, sentence) -> (start, end, entity id) of each name in it (a pronoun's too), in order
    mentions: dict[tuple[str, int], list[tuple[int, int, str]]] = field(default_factory=dict)
    _folded: dict[str, str] | None = field(default=None, repr=False)
    _adjacent: dict[str, list[Edge]] | None = field(default=None, repr=False)
    index: dict[str, Any] = field(default_factory=dict, repr=False)  # caches for readers

    def find(self, ref: str) -> dict[str, Any] | None:
        """The entity with this id, or this name (case and accents aside)."""
        ref = ref.strip()
        if ref in self.entities:
            return self.entities[ref]
        eid = self.names.get(norm(ref)) or self.folded().get(fold(ref))
        return self.entities.get(eid) if eid else None

    def folded(self) -> dict[str, str]:
        """Accent-free name -> entity id, for names no two entities share."""
        if self._folded is None:
            seen: dict[str, set[str]] = {}
            for n, eid in self.names.items():
                seen.setdefault(fold(n), set()).add(eid)
            self._folded = {f: next(iter(e)) for f, e in seen.items() if len(e) == 1}
        return self._folded

    def edges(self, eid: str, direction: str = "both") -> list[Edge]:
        """(relation, other entity id, "outgoing"|"incoming") for one entity, in a stable order."""
        if self._adjacent is None:
            adjacent: dict[str, list[Edge]] = {}
            for rel in self.relations.values():
                adjacent.setdefault(rel["source"], []).append((rel, rel["target"], "outgoing"))
                adjacent.setdefault(rel["target"], []).append((rel, rel["source"], "incoming"))
            ent = self.entities
            for edges in adjacent.values():
                edges.sort(key=lambda x: (x[0]["relation"], ent[x[1]]["name"].casefold(), *x[1:]))
            self._adjacent = adjacent
        return [e for e in self._adjacent.get(eid, ()) if direction in ("both", e[2])]

    def sentence(self, key: str, index: int) -> str:
        """Sentence ``index`` of a supporting memory ('' when out of range)."""
        sents = self.sentences.get(key)
        if sents is None:
            sents = self.sentences[key] = sentences(text_of(self.records[key]))
        return sents[index] if 0 <= index < len(sents) else ""


def _type_of(votes: Counter[str]) -> str:
    if not votes:
        return "THING"
    return min(votes, key=lambda t: (-votes[t], _TYPE_ORDER[t]))


def build(records: Records, extracted: Records, agent: dict[str, Any], now: str) -> Graph:
    """The graph supported by the open, unexpired memories plus the agent-authored facts."""
    support = reading_order(live(records, now))
    graph = Graph(records={r["key"]: r for r in support})
    order = {r["key"]: i for i, r in enumerate(support)}
    votes: dict[str, Counter[str]] = {}
    surfaces: dict[str, Counter[str]] = {}
    sources: dict[str, list[str]] = {}
    users: dict[str, set[str]] = {}
    first: dict[str, tuple[str, int]] = {}
    rels: list[tuple[str, str, str, str, int, Any]] = []
    named: list[tuple[str, int, str, int, int]] = []  # (memory, sentence, name, start, end)
    if any(extracted.get(r["key"], {}).get("fingerprint") != fingerprint(r) for r in support):
        complete(support, extracted)  # `extractions` has done it for a service's graph
    for r in support:
        got = extracted[r["key"]]
        key, user = r["key"], r.get("user_id")
        for m in got["mentions"]:
            name = m["name"]
            n = norm(name)
            if n not in votes:
                votes[n], surfaces[n], sources[n], users[n] = Counter(), Counter(), [], set()
                first[n] = (key, m["s"])
            votes[n].update(m["votes"])
            surfaces[n][name] += 1
            if sources[n][-1:] != [key]:  # a memory's mentions arrive together
                sources[n].append(key)
            if user:
                users[n].add(user)
        named.extend((key, s, name, a, b) for name, s, a, b in got.get("corefs", ()))
        named.extend((key, m["s"], m["name"], *m.get("at", (0, 0))) for m in got["mentions"])
        rels.extend(
            (key, x["source"], x["relation"], x["target"], x["s"], x.get("w", ()))
            for x in got["relations"]
        )
    authored = agent["entities"]
    for n, a in authored.items():
        surfaces.setdefault(n, Counter())[a["name"]] += 1_000_000  # an agent's spelling wins
        votes.setdefault(n, Counter())
        sources.setdefault(n, [])
    for rel in agent["relations"]:
        for end in (rel["source"], rel["target"]):
            n = norm(end["name"])
            if n not in surfaces:
                surfaces[n] = Counter({end["name"]: 1})
                votes[n] = Counter({end["type"]: 1})
                sources[n] = []
    types = {n: authored[n]["type"] if n in authored else _type_of(votes[n]) for n in surfaces}
    alias = aliases(types, votes, authored)
    for short, full in alias.items():
        for key in sources.pop(short):
            if key not in sources[full]:
                sources[full].append(key)
        users.setdefault(full, set()).update(users.pop(short, set()))
        if short in first and (full not in first or first[short] < first[full]):
            first[full] = first[short]
        if types[short] == types[full]:
            votes[full].update(votes[short])
        del surfaces[short]
    for full in set(alias.values()):
        sources[full].sort(key=order.__getitem__)  # reading order, as unaliased names have
    for n, counts in surfaces.items():
        name = min(counts, key=lambda s: (-counts[s], s))
        eid = entity_id(n)
        a = authored.get(n)
        description, described_by = "", None
        if a and a.get("description"):
            description, described_by = a["description"], "agent"
        elif n in first:
            key, s = first[n]
            description, described_by = _clip(graph.sentence(key, s), 200), "extracted"
        user_ids = users.get(n, set()) | ({a["user_id"]} if a and a.get("user_id") else set())
        graph.entities[eid] = {
            "id": eid, "name": name, "type": types[n], "description": description,
            "descriptionSource": described_by, "sourceMemoryIds": sources[n],
            "userIds": sorted(user_ids), "authored": a is not None,
        }  # fmt: skip
        graph.names[n] = eid
    graph.names.update({short: graph.names[full] for short, full in alias.items()})
    triples: dict[tuple[str, str, str], dict[str, Any]] = {}
    ids: dict[str, str | None] = {}  # surface name -> id (norm() is a large graph's hot spot)
    for key, s, name, start, end in named:
        if name not in ids:
            ids[name] = graph.names.get(norm(name))
        if eid := ids[name]:
            graph.mentions.setdefault((key, s), []).append((start, end, eid))
    for spans in graph.mentions.values():
        spans.sort()
    for key, src, relation, tgt, s, said in rels:
        for name in (src, tgt):
            if name not in ids:
                ids[name] = graph.names.get(norm(name))
        a, b = ids[src], ids[tgt]
        if a and b and a != b:
            rel = _relation(triples, a, relation, b)
            rel["said"].update(said)  # the relation's own words ("written", "runs"), for questions
            if rel["sourceMemoryIds"][-1:] != [key]:
                rel["sourceMemoryIds"].append(key)
                rel["evidence"].append({"memory": key, "sentence": s})
    for x in agent["relations"]:
        a, b = graph.names[norm(x["source"]["name"])], graph.names[norm(x["target"]["name"])]
        if a != b:
            _relation(triples, a, x["relation"], b)["authored"] = True
    graph.relations = dict(sorted((r["id"], r) for r in triples.values()))
    graph.entities = dict(sorted(graph.entities.items()))
    return graph


def _relation(triples: dict[tuple, Any], a: str, relation: str, b: str) -> dict[str, Any]:
    rel = triples.get((a, relation, b))
    if rel is None:
        rel = triples[a, relation, b] = {
            "id": relation_id(a, relation, b), "source": a, "relation": relation, "target": b,
            "sourceMemoryIds": [], "evidence": [], "authored": False, "said": set(),
        }  # fmt: skip
    return rel


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def current(service: Any, now: str) -> Graph:
    """The graph of a memory service's workspace at ``now``: kept by the service while no
    process changed the store or the agent log and no memory expired, so a warm server's
    questions neither assemble it again nor read every record (and reuse its indexes)."""
    records = service.store.records()  # brings the cache up to date with the files
    try:
        log = (service.ws.dir / AGENT_LOG).stat()
        stamp: Any = (service.store.generation(), log.st_mtime_ns, log.st_size)
    except FileNotFoundError:
        stamp = (service.store.generation(), None)
    kept = getattr(service, "_graph", None)
    if kept is not None and kept[0] == stamp and not any(is_expired(r, now) for r in kept[1]):
        return kept[2]  # type: ignore[no-any-return]
    support = live(records, now)
    got = build(records, extractions(service, support), load_agent(service.ws), now)
    service._graph = (stamp, [r for r in support if r.get("expires")], got)  # until one expires
    return got


def _entity(graph: Graph, ref: str, suggestion: str) -> dict[str, Any]:
    found = graph.find(ref)
    if found is None:
        raise NotFoundError(f"no entity named {ref.strip()!r} in the graph",
                            suggestion=suggestion, code="ENTITY_NOT_FOUND")  # fmt: skip
    return found


def add(
    service: Any, *, name: str, now: str, actor: str, type: str | None = None,  # noqa: A002
    description: str | None = None, user_id: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Add an entity, or correct an existing one's type or description (agent-authored)."""
    name = " ".join(name.split())
    if not name:
        raise ValidationError("name must not be empty", suggestion="give the entity's name")
    n = norm(name)
    description = " ".join(description.split()) if description is not None else None
    with service.store.locked():
        agent = load_agent(service.ws)
        graph = current(service, now)
        known = graph.find(name)
        old = agent["entities"].get(n)
        shown = known["name"] if known else name  # a correction keeps the entity's spelling
        entry = dict(old) if old else {"name": shown, "created": now, "actor": actor}
        entry["type"] = type or (old or {}).get("type") or (known["type"] if known else "THING")
        entry["description"] = entry.get("description", "") if description is None else description
        entry["user_id"] = entry.get("user_id") if user_id is None else user_id
        changed = entry != old
        if changed:
            entry["actor"] = actor
            _state(service.ws, {"op": "entity", "at": now, **{k: entry.get(k) for k in _AUTHORED}})
    entity = current(service, now).find(name)
    return {"changed": changed, "created": known is None, "entity": entity}


def relate(service: Any, *, source: str, relation: str, target: str, now: str, actor: str) -> dict:
    """State a relation between two known entities (agent-authored); idempotent.

    Raises:
        ValidationError: a relation name that is not WORDS_LIKE_THIS.
        NotFoundError: an entity that is not in the graph (add it with graph add first).
    """
    relation = re.sub(r"[\s-]+", "_", relation.strip()).upper()
    if not _RELATION_NAME.match(relation):
        raise ValidationError(
            f"relation must be a word like WORKS_AT or DEPENDS_ON, got {relation!r}",
            suggestion="letters, digits and underscores, 2 to 40 characters",
        )
    with service.store.locked():
        agent = load_agent(service.ws)
        graph = current(service, now)
        hint = 'add it first: `nxm graph add "{}" --type PERSON|ORGANIZATION|PLACE|THING`'
        ends = [_entity(graph, ref, hint.format(ref.strip())) for ref in (source, target)]
        if ends[0]["id"] == ends[1]["id"]:
            raise ValidationError("a relation needs two different entities")
        src, tgt = ({"name": e["name"], "type": e["type"]} for e in ends)
        stated = {"source": src, "relation": relation, "target": tgt}
        triple = (norm(src["name"]), relation, norm(tgt["name"]))
        same = [x for x in agent["relations"] if _triple(x) == triple]
        if not same:
            _state(service.ws, {"op": "relation", "at": now, "actor": actor, **stated})
    rid = relation_id(ends[0]["id"], relation, ends[1]["id"])
    after = current(service, now)
    return {"created": not same, "relation": view_relation(after, after.relations[rid])}


def remove(
    service: Any, *, entity: str, now: str, actor: str, relation: str | None = None,
    target: str | None = None, reason: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Remove what an agent wrote (an entity and its relations, or one relation) by a statement.

    Raises:
        ValidationError: a relation without its target, or a target without a relation.
        NotFoundError: no such entity in the graph.
        ConflictError: it was only extracted from memories (NOT_AUTHORED): change those.
    """
    if (relation is None) != (target is None):
        raise ValidationError(
            "a relation is removed with both --relation and --target",
            suggestion="name both, or neither to remove the entity",
        )
    reason = " ".join((reason or "").split()) or None
    with service.store.locked():
        agent = load_agent(service.ws)
        graph = current(service, now)
        found = _entity(graph, entity, "find it with `nxm graph search`")
        n = norm(found["name"])
        if relation is None:
            stated = [r for r in agent["relations"]
                      if n in (norm(r["source"]["name"]), norm(r["target"]["name"]))]  # fmt: skip
            removed_entities = [brief(found)] if n in agent["entities"] else []
            if not removed_entities and not stated:
                raise _not_authored(found)
            statement = {"op": "remove_entity", "name": found["name"]}
        else:
            rel = re.sub(r"[\s-]+", "_", relation.strip()).upper()
            other = _entity(graph, target or "", "find it with `nxm graph search`")
            stated = [r for r in agent["relations"]
                      if _triple(r) == (n, rel, norm(other["name"]))]  # fmt: skip
            if not stated:
                raise _not_authored(found, rel, other)
            removed_entities = []
            statement = {"op": "remove_relation", "relation": rel,
                         "source": {"name": found["name"]}, "target": {"name": other["name"]}}  # fmt: skip
        rels = _authored(graph, stated)
        _state(service.ws, {**statement, "at": now, "actor": actor, "reason": reason})
    removed = {"entities": removed_entities, "relations": [view_relation(graph, r) for r in rels]}
    return {"changed": True, "removed": removed, "entity": current(service, now).find(entity)}


def _authored(graph: Graph, stated: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The graph's relations the agent's statements ``stated`` make."""
    ends = [(graph.find(r["source"]["name"]), r, graph.find(r["target"]["name"])) for r in stated]
    rids = [relation_id(a["id"], r["relation"], b["id"]) for a, r, b in ends if a and b]
    return [graph.relations[rid] for rid in rids if rid in graph.relations]


def _not_authored(entity: dict[str, Any], relation: str | None = None,
                  other: dict[str, Any] | None = None) -> ConflictError:  # fmt: skip
    what = f"{entity['name']} {relation} {other['name']}" if other else entity["name"]
    keys = ", ".join(entity["sourceMemoryIds"][:5]) or "none"
    return ConflictError(
        f"{what} was not written by an agent: it is extracted from memories ({keys})",
        suggestion="correct or forget those memories (`nxm update KEY` / `nxm forget KEY`)",
        code="NOT_AUTHORED",
    )


def brief(entity: dict[str, Any]) -> dict[str, Any]:
    """The short form of an entity: id, name, type."""
    return {"id": entity["id"], "name": entity["name"], "type": entity["type"]}


def view_relation(graph: Graph, rel: dict[str, Any]) -> dict[str, Any]:
    """A relation with both ends in short form."""
    return {
        "id": rel["id"], "source": brief(graph.entities[rel["source"]]),
        "relation": rel["relation"], "target": brief(graph.entities[rel["target"]]),
        "sourceMemoryIds": rel["sourceMemoryIds"], "authored": rel["authored"],
    }  # fmt: skip


__all__ = ["AGENT_LOG", "Graph", "add", "brief", "build", "current", "entity_id", "extractions",
           "fingerprint", "load_agent", "migrate", "relate", "relation_id", "remove", "text_of",
           "view_relation"]  # fmt: skip
