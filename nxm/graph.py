"""The entity graph: what memories say about people, organisations, places and things.

Two sources, kept apart:

- **extracted** — `nxm.extract` runs on every memory when it is written (`refresh`, called by
  `nxm.derive.on_write` under the write lock) and the result is kept per memory in
  ``.nxs/cache/graph.json`` with a fingerprint of the text it came from. It is derived and
  machine-local: deleting it loses nothing (reads extract whatever is missing or stale, the
  next write rewrites it).
- **agent-authored** — `add` and `relate` write ``.nxs/graph-agent.json``: entities an agent
  added or corrected (name, type, description) and relations it stated. Extraction never
  touches that file, so they survive re-extraction, forgetting and purging.

`build` assembles the graph for one moment: only open, unexpired memories support extracted
entities and relations, so forgetting or purging a memory drops what only it supported. Types
are decided by summing each mention's votes (an agent's type always wins); a lone first name is
folded into the one full name that starts with it ("Dana" → "Dana Kim"). Nothing here needs a
model or the network, and nothing private is stored: only names, types and sentence numbers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from nxm.aliases import aliases
from nxm.extract import ENTITY_TYPES, EXTRACTOR_VERSION, extract, fold, norm, sentences
from nxm.lifecycle import live
from nxm.lines import Lines, built, framed, identity, keep, kept, laid, reopened, write
from nxm.record import reading_order
from nxs.errors import NotFoundError, ValidationError
from nxs.paths import atomic_write
from nxs.workspace import Workspace

GRAPH_FILE = "cache/graph.json"  # derived and machine-local: cache/ is git-ignored
AGENT_FILE = "graph-agent.json"
_TYPE_ORDER = {t: i for i, t in enumerate(ENTITY_TYPES)}  # ties: PERSON > ORG > PLACE > THING
_RELATION_NAME = re.compile(r"^[A-Z][A-Z0-9_]{1,39}$")


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


# -- storage -------------------------------------------------------------------------------------


def _load(path: Any) -> dict[str, Any]:
    try:
        data = orjson.loads(path.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _dump(data: dict[str, Any], *, pretty: bool = False) -> bytes:
    indent = orjson.OPT_INDENT_2 if pretty else 0  # the agent's file is committed: diffable
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | indent) + b"\n"


def load_extracted(ws: Workspace) -> dict[str, dict[str, Any]]:
    """The stored extraction per memory key (empty when absent or from another extractor)."""
    data = _load(ws.dir / GRAPH_FILE)
    if data.get("extractor") != EXTRACTOR_VERSION:
        return {}
    return data.get("memories") or {}


def _extraction(record: dict[str, Any]) -> dict[str, Any]:
    got = extract(text_of(record), record.get("user_id"))
    return {"fingerprint": fingerprint(record), **got}


# The graph file as this process last wrote it: path -> (its identity, its memories' `Lines`,
# the read cache's identity it is current for), so a long-lived writer (the MCP server)
# rewrites only what a write changed (`nxm.lines`); KEPT_FILE holds the same for the next
# process (`nxm.lines.keep`).
_WRITTEN: dict[Any, tuple[Any, Lines, Any]] = {}
KEPT_FILE = "cache/graph.lines"
_SEP = b",\n"
_TAIL = b'},"version":1}\n'


def _head() -> bytes:
    return b'{"extractor":' + orjson.dumps(EXTRACTOR_VERSION) + b',"memories":{\n'


def _entry(key: str, extraction: dict[str, Any]) -> bytes:
    return orjson.dumps(key) + b":" + orjson.dumps(extraction, option=orjson.OPT_SORT_KEYS)


def _parse(entry: bytes) -> tuple[str, dict[str, Any]]:
    ((key, got),) = orjson.loads(b"{" + entry + b"}").items()
    return key, got


def _stored(path: Any) -> Iterator[tuple[str, bytes, dict[str, Any]]]:
    """The graph file's memories in key order: key, its entry's bytes, its extraction.

    The file is one JSON document with one memory a line (`refresh`), read a line at a time;
    a file in another layout (an older one) is parsed whole; a damaged line ends the reading
    (what is missing is extracted again), as does another extractor's file.
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed below, also when the caller stops early)
    except FileNotFoundError:
        return
    with fh:
        first = fh.readline()
        if first != _head():
            with contextlib.suppress(orjson.JSONDecodeError):
                data = orjson.loads(first + fh.read())
                if isinstance(data, dict) and data.get("extractor") == EXTRACTOR_VERSION:
                    for key, got in sorted((data.get("memories") or {}).items()):
                        yield key, _entry(key, got), got
            return
        for line in fh:
            entry = line.removesuffix(b"\n").removesuffix(b",")
            try:
                key, got = _parse(entry)
            except (orjson.JSONDecodeError, ValueError):
                return
            yield key, entry, got


def refresh(ws: Workspace, current: Any, changed: list[str]) -> None:
    """Bring ``.nxs/cache/graph.json`` up to date with ``current`` (`nxm.store.Records`, the
    records after a write that changed the ``changed`` keys; call under the write lock).

    The file is one JSON document, one memory a line in key order. When this process (or, by
    KEPT_FILE, the last writer) wrote it for the records this write started from
    (``current.base.sig``, `nxm.store.Records`), only the changed memories' lines are made
    again and the others are copied. Otherwise every memory is looked at, one at a time: a
    stored extraction whose fingerprint still matches is kept, any other is made again; so the
    file always ends equal to what extracting every memory makes.
    """
    path, kept_path = ws.dir / GRAPH_FILE, ws.dir / KEPT_FILE
    last = _WRITTEN.pop(path, None)
    then = identity(path)
    if (last is None or last[2] != current.base.sig) and then and current.base.sig:
        # the last writer's file is current for these records: its lines are read from it
        scanned = _scanned(path) if kept(kept_path, (then, current.base.sig)) else None
        last = (then, scanned, current.base.sig) if scanned is not None else last
    head = _head()
    with reopened(path, last and last[0], bool(last) and last[2] == current.base.sig) as fd:
        lines = None
        if fd is not None and last:
            with contextlib.suppress(KeyError, ValueError):  # not the file it should be: all
                lines, pieces = _changed(fd, last[1], current, changed, len(head))
                atomic_write(path, framed(head, write(fd, pieces), _TAIL, bool(lines.keys)))
    if lines is None:
        keys: list[str] = []
        spans: list[int] = []
        body = laid(_every(path, current), len(head), _SEP, keys, spans)
        atomic_write(path, framed(head, body, _TAIL, bool(current)))
        lines = built(keys, spans, _SEP)
    now = identity(path)
    if now is not None and current.written is not None:
        _WRITTEN[path] = (now, lines, current.written)
        keep(kept_path, (now, current.written), [])  # the lines are in the file


def _scanned(path: Any) -> Lines | None:
    """The `Lines` of a graph file of this layout, read from it (None: another layout)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    head = _head()
    if not data.startswith(head) or not data.endswith(_TAIL):
        return None
    body = data[len(head) : len(data) - len(_TAIL)].removesuffix(b"\n")
    keys: list[str] = []
    spans: list[int] = []
    at = len(head)
    for entry in body.split(_SEP) if body else []:
        try:
            keys.append(orjson.loads(entry[: entry.index(b'":') + 1]))
        except ValueError:
            return None
        spans += (at, at + len(entry))
        at += len(entry) + len(_SEP)
    return built(keys, spans, _SEP) if keys == sorted(set(keys)) else None


def _changed(
    fd: int, lines: Lines, current: Any, changed: list[str], at: int
) -> tuple[Lines, list[Any]]:
    """The changed memories' lines made again; the others' spans, to copy (`Lines.merge`)."""
    drop, add = [], []
    for key in sorted(set(changed)):
        old = None
        i = lines.find(key)
        if i is not None:
            drop.append(key)
            old = os.pread(fd, lines.ends[i] - lines.starts[i], lines.starts[i])
        record = current.get(key)
        if record is None:
            continue
        if old is not None and _parse(old)[1].get("fingerprint") == fingerprint(record):
            add.append((key, old))
        else:
            add.append((key, _entry(key, _extraction(record))))
    return lines.merge(drop, add, at)


def _every(path: Any, current: Any) -> Iterator[tuple[str, bytes]]:
    """Every memory's line in key order: the stored one while its fingerprint matches."""
    stored = _stored(path)
    old = next(stored, None)
    for key in sorted(current):
        while old is not None and old[0] < key:
            old = next(stored, None)
        record = current[key]
        if old is not None and old[0] == key and old[2].get("fingerprint") == fingerprint(record):
            yield key, old[1]
        else:
            yield key, _entry(key, _extraction(record))
    stored.close()


def load_agent(ws: Workspace) -> dict[str, Any]:
    """The agent-authored entities (by normalised name) and relations."""
    data = _load(ws.dir / AGENT_FILE)
    return {"entities": data.get("entities") or {}, "relations": data.get("relations") or []}


@contextlib.contextmanager
def _agent_lock(ws: Workspace) -> Iterator[dict[str, Any]]:
    ws.dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(ws.dir / "graph.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield load_agent(ws)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _save_agent(ws: Workspace, agent: dict[str, Any]) -> None:
    body = {"entities": agent["entities"], "relations": agent["relations"], "version": 1}
    atomic_write(ws.dir / AGENT_FILE, _dump(body, pretty=True))


# -- the assembled graph -------------------------------------------------------------------------


@dataclass
class Graph:
    """Entities and relations at one moment, with the memories behind them."""

    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # normalised name -> entity id
    sentences: dict[str, list[str]] = field(default_factory=dict)  # memory key -> sentences
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # supporting memories
    _folded: dict[str, str] | None = field(default=None, repr=False)
    _adjacent: dict[str, list[tuple[dict[str, Any], str, str]]] | None = field(
        default=None, repr=False
    )
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

    def edges(self, eid: str, direction: str = "both") -> list[tuple[dict[str, Any], str, str]]:
        """(relation, other entity id, "outgoing"|"incoming") for one entity, in a stable order."""
        if self._adjacent is None:
            adjacent: dict[str, list[tuple[dict[str, Any], str, str]]] = {}
            for rel in self.relations.values():
                adjacent.setdefault(rel["source"], []).append((rel, rel["target"], "outgoing"))
                adjacent.setdefault(rel["target"], []).append((rel, rel["source"], "incoming"))
            for edges in adjacent.values():
                edges.sort(
                    key=lambda x: (
                        x[0]["relation"], self.entities[x[1]]["name"].casefold(), x[1], x[2],
                    )
                )  # fmt: skip
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


def build(
    records: dict[str, dict[str, Any]],
    extracted: dict[str, dict[str, Any]],
    agent: dict[str, Any],
    now: str,
) -> Graph:
    """The graph supported by the open, unexpired memories plus the agent-authored facts."""
    support = reading_order(live(records, now))
    graph = Graph(records={r["key"]: r for r in support})
    order = {r["key"]: i for i, r in enumerate(support)}
    votes: dict[str, Counter[str]] = {}
    surfaces: dict[str, Counter[str]] = {}
    sources: dict[str, list[str]] = {}
    users: dict[str, set[str]] = {}
    first: dict[str, tuple[str, int]] = {}
    rels: list[tuple[str, str, str, str, int]] = []
    for r in support:
        got = extracted.get(r["key"])
        if got is None or got.get("fingerprint") != fingerprint(r):
            got = _extraction(r)
        key, user = r["key"], r.get("user_id")
        for m in got["mentions"]:
            name = m["name"]
            n = norm(name)
            if n not in votes:
                votes[n], surfaces[n], sources[n], users[n] = Counter(), Counter(), [], set()
                first[n] = (key, m["s"])
            tally = votes[n]
            for t, k in m["votes"].items():
                tally[t] += k
            surfaces[n][name] += 1
            if sources[n][-1:] != [key]:  # a memory's mentions arrive together
                sources[n].append(key)
            if user:
                users[n].add(user)
        rels.extend(
            (r["key"], x["source"], x["relation"], x["target"], x["s"]) for x in got["relations"]
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
        graph.entities[eid] = {
            "id": eid,
            "name": name,
            "type": types[n],
            "description": description,
            "descriptionSource": described_by,
            "sourceMemoryIds": sources[n],
            "userIds": sorted(
                users.get(n, set()) | ({a["user_id"]} if a and a.get("user_id") else set())
            ),
            "authored": a is not None,
        }
        graph.names[n] = eid
    for short, full in alias.items():
        graph.names[short] = graph.names[full]
    triples: dict[tuple[str, str, str], dict[str, Any]] = {}
    ids = {}  # surface name -> entity id (norm() is the hot spot of a large graph)
    for key, src, relation, tgt, s in rels:
        for name in (src, tgt):
            if name not in ids:
                ids[name] = graph.names.get(norm(name))
        a, b = ids[src], ids[tgt]
        if a and b and a != b:
            rel = _relation(triples, a, relation, b)
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


def _relation(
    triples: dict[tuple[str, str, str], dict[str, Any]], a: str, relation: str, b: str
) -> dict[str, Any]:
    rel = triples.get((a, relation, b))
    if rel is None:
        rel = triples[a, relation, b] = {
            "id": relation_id(a, relation, b), "source": a, "relation": relation, "target": b,
            "sourceMemoryIds": [], "evidence": [], "authored": False,
        }  # fmt: skip
    return rel


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def current(service: Any, now: str) -> Graph:
    """The graph of a memory service's workspace at ``now`` (reads only; never writes)."""
    ws = service.ws
    return build(service.store.records(), load_extracted(ws), load_agent(ws), now)


# -- agent-authored writes -----------------------------------------------------------------------


def _name(value: str, what: str) -> str:
    value = " ".join(value.split())
    if not value:
        raise ValidationError(f"{what} must not be empty", suggestion="give the entity's name")
    return value


def add(
    service: Any,
    *,
    name: str,
    now: str,
    actor: str,
    type: str | None = None,  # noqa: A002 - the public parameter name
    description: str | None = None,
    user_id: str | None = None,
) -> dict[str, Any]:
    """Add an entity, or correct an existing one's type or description (agent-authored)."""
    name = _name(name, "name")
    n = norm(name)
    description = " ".join(description.split()) if description is not None else None
    with _agent_lock(service.ws) as agent:
        graph = current(service, now)
        known = graph.find(name)
        old = agent["entities"].get(n)
        shown = known["name"] if known else name  # a correction keeps the entity's spelling
        entry = dict(old) if old else {"name": shown, "created": now, "actor": actor}
        entry["type"] = type or (old or {}).get("type") or (known["type"] if known else "THING")
        if description is not None:
            entry["description"] = description
        entry.setdefault("description", "")
        if user_id is not None:
            entry["user_id"] = user_id
        entry.setdefault("user_id", None)
        changed = entry != old
        if changed:
            entry["updated"], entry["actor"] = now, actor
            agent["entities"][n] = entry
            _save_agent(service.ws, agent)
    entity = current(service, now).find(name)
    return {"changed": changed, "created": known is None, "entity": entity}


def relate(
    service: Any, *, source: str, relation: str, target: str, now: str, actor: str
) -> dict[str, Any]:
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
    with _agent_lock(service.ws) as agent:
        graph = current(service, now)
        ends = []
        for ref in (source, target):
            entity = graph.find(ref)
            if entity is None:
                raise NotFoundError(
                    f"no entity named {ref.strip()!r} in the graph",
                    suggestion=f'add it first: `nxm graph add "{ref.strip()}" --type PERSON|ORGANIZATION|PLACE|THING`',
                    code="ENTITY_NOT_FOUND",
                )
            ends.append(entity)
        if ends[0]["id"] == ends[1]["id"]:
            raise ValidationError("a relation needs two different entities")
        stated = {
            "source": {"name": ends[0]["name"], "type": ends[0]["type"]},
            "relation": relation,
            "target": {"name": ends[1]["name"], "type": ends[1]["type"]},
        }
        same = [
            x for x in agent["relations"]
            if norm(x["source"]["name"]) == norm(ends[0]["name"])
            and x["relation"] == relation
            and norm(x["target"]["name"]) == norm(ends[1]["name"])
        ]  # fmt: skip
        if not same:
            agent["relations"].append({**stated, "actor": actor, "created": now})
            _save_agent(service.ws, agent)
    rid = relation_id(ends[0]["id"], relation, ends[1]["id"])
    after = current(service, now)
    return {"created": not same, "relation": view_relation(after, after.relations[rid])}


# -- views ---------------------------------------------------------------------------------------


def brief(entity: dict[str, Any]) -> dict[str, Any]:
    """The short form of an entity: id, name, type."""
    return {"id": entity["id"], "name": entity["name"], "type": entity["type"]}


def view_relation(graph: Graph, rel: dict[str, Any]) -> dict[str, Any]:
    """A relation with both ends in short form."""
    return {
        "id": rel["id"],
        "source": brief(graph.entities[rel["source"]]),
        "relation": rel["relation"],
        "target": brief(graph.entities[rel["target"]]),
        "sourceMemoryIds": rel["sourceMemoryIds"],
        "authored": rel["authored"],
    }


__all__ = [
    "AGENT_FILE", "GRAPH_FILE", "Graph", "add", "brief", "build", "current", "entity_id",
    "fingerprint", "load_agent", "load_extracted", "refresh", "relate", "relation_id", "text_of",
    "view_relation",
]  # fmt: skip
