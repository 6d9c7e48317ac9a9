"""The memory service: every memory operation's behaviour, whichever seam calls it.

Seams validate arguments against the operation table, then call one method here with plain
keyword arguments plus ``now`` and ``actor``. Methods return JSON-able dicts; refusals raise from
`nxs.errors` before anything is written.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from nxm import curate, secrets, stale
from nxm.categories import VOCABULARY, categorize, near
from nxm.record import (
    CONTROL,
    INTRO_MAX,
    body_hash,
    embedded_text,
    event,
    identifiers,
    key_for,
    new_record,
    normalise,
    ref_matches,
    summary,
)
from nxm.search import currency, rank
from nxm.search.snippet import snippet
from nxm.search.terms import content_words
from nxm.search.when import period
from nxm.store import Records, background, open_store, unreadable
from nxs.errors import ConflictError, NotFoundError, UpstreamError, ValidationError
from nxs.render import parse_timestamp, timestamp
from nxs.workspace import Workspace

if TYPE_CHECKING:
    import numpy as np

_VERBS = {"CLOSED": "close", "REOPENED": "reopen", "FORGOTTEN": "forget", "RESTORED": "restore"}
LIST_FILTERS = (
    "status", "category", "scope", "ref", "user_id", "agent_id", "session_id", "layer", "priority",
)  # fmt: skip


def _intro(text: str) -> str:
    text = text.strip()
    if not text:
        raise ValidationError(
            "introduction must not be empty",
            suggestion="write one line that states the memory's point (at most 200 characters)",
        )
    if "\n" in text or "\r" in text:
        raise ValidationError(
            "introduction must be one line", suggestion="put the detail in the body"
        )
    if CONTROL.search(text):
        raise ValidationError(
            "introduction must not hold control characters (escapes, line separators)",
            suggestion="write it as plain text",
        )
    if len(text) > INTRO_MAX:
        raise ValidationError(f"introduction is {len(text)} characters; at most {INTRO_MAX}")
    return text


def _category(text: str | None) -> str | None:
    if text and CONTROL.search(text):  # it heads prime's and NEXUS_MEMORY.md's groups
        raise ValidationError(
            "category must be a plain word: no control characters (escapes, line breaks)",
            suggestion="e.g. conventions, decisions, gotchas",
        )
    return text


def _body(text: str) -> str:
    if not text.strip():
        raise ValidationError("body must not be empty", suggestion="say what should be remembered")
    return text.strip("\n")


def _refs(scope: str | None, refs: list[str] | None) -> list[str] | None:
    if refs is not None:
        refs = list(dict.fromkeys(r.strip() for r in refs if r.strip()))
    if scope == "item" and not refs:
        raise ValidationError(
            "scope 'item' needs the item in refs",
            suggestion="pass --ref ITEM (an issue id, a file path, a board item)",
        )
    return refs


class MemoryService:
    """Memory operations over one workspace's store."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.config = ws.section("memory")
        self.model_name: str = self.config["model"]
        self._embedder: Any = None
        self._embed_error: str | None = None
        self.store = open_store(ws)
        self._near: tuple[Any, dict[str, Any]] | None = None

    def release(self) -> None:
        """Close the files the store holds open (a later call opens them again)."""
        self.store.close()

    def warm(self) -> Iterator[None]:
        """Load lancedb, the model and the index, a step at a time (each while no call runs)."""
        from nxm.store import import_lancedb

        yield
        import_lancedb()
        yield
        self.embedder()
        yield
        self.store.index.table()

    _said = False  # the missing model said on stderr (once)

    def embedder(self, quiet: bool = False) -> Any:
        """The embedder, or None (with the reason kept) when the model cannot be loaded; the
        reason is said once, by a caller not ``quiet`` (a read need not, a search's note does)."""
        if self._embedder is None and self._embed_error is None:
            try:
                from nxm.embed import load_embedder  # deferred: fastembed is heavy

                self._embedder = load_embedder(self.model_name)
                self.store.dim = self._embedder.dim
            except Exception as exc:  # a missing or broken model must never block a write
                self._embed_error = getattr(exc, "message", None) or str(exc)
        if self._embed_error and not quiet and not self._said:
            self._said = True
            print(f"nxs: semantic search unavailable: {self._embed_error}", file=sys.stderr)
        return self._embedder

    def _setup_command(self) -> str:
        """The command that installs this workspace's model."""
        from nxm.embed.models import find

        own = find(self.model_name)
        return own.setup_command if own else "nxm model setup"

    def _vectors(self, records: list[dict[str, Any]]) -> dict[str, np.ndarray]:
        """The records' vectors by key; each record embedded is marked READY."""
        emb = self.embedder()
        if emb is None or not records:
            return {}
        vecs = emb.embed([embedded_text(r) for r in records])
        for r in records:
            r["processing"], r["model"] = "READY", self.model_name
        return {r["key"]: v for r, v in zip(records, vecs, strict=True)}

    @staticmethod
    def resolve(records: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
        """The record a key or an unambiguous key prefix names.

        Raises:
            NotFoundError: no key starts with it.
            ConflictError: several do.
        """
        key = key.strip().lower()
        if key in records:
            return records[key]
        hits: list[str] = []
        if key:
            starting = getattr(records, "starting", None)  # Records: from the key index
            hits = starting(key) if starting else [k for k in records if k.startswith(key)]
        broken = [(k, why) for k, why in records.cache.problems() if k.startswith(key)] if (
            isinstance(records, Records) and key and not hits
        ) else []  # fmt: skip
        if len(broken) == 1:
            raise unreadable(*broken[0])
        if not hits:
            raise NotFoundError(
                f"no memory with key {key!r}",
                suggestion="find keys with `nxm list` or `nxm search`",
            )
        if len(hits) > 1:
            shown = ", ".join(sorted(hits)[:5])
            raise ConflictError(
                f"key prefix {key!r} matches {len(hits)} memories: {shown}",
                suggestion="give more characters of the key",
                code="AMBIGUOUS_KEY",
            )
        return records[hits[0]]

    @staticmethod
    def _out(record: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if k != "events"}

    def add(
        self, *, body: str, introduction: str, now: str, actor: str, category: str | None = None,
        scope: str | None = None, refs: list[str] | None = None, priority: str | None = None,
        layer: str | None = None, ttl_days: float | None = None, allow_secret: bool = False,
        supersedes: str | None = None, **provenance: Any,
    ) -> dict[str, Any]:  # fmt: skip
        """Add a memory under its content-hash key (the same body again: the stored one), with
        the open memories it resembles; ``supersedes`` links and closes the old one. Credentials
        are refused before this runs, by the operation's scan of every field (`nxm.ops`)."""
        body, introduction = _body(body), _intro(introduction)
        if provenance.get("user_id") is None:  # one person's store: theirs (docs/concepts.md)
            provenance["user_id"] = actor
        refs = _refs(scope, refs) or []
        layer = layer or "PERMANENT"
        if ttl_days is not None and layer != "TASK":
            raise ValidationError(
                "ttl_days applies to TASK memories", suggestion="add --layer TASK"
            )
        expires = None
        if layer == "TASK":
            days = ttl_days if ttl_days is not None else float(self.config["task_ttl_days"])
            expires = timestamp(parse_timestamp(now) + timedelta(days=days))
        record = new_record(
            body=body,
            introduction=introduction,
            category=self._one_spelling(category)
            if category
            else categorize(f"{introduction}\n{body}"),
            scope=scope or "project",
            refs=refs,
            priority=priority or "MEDIUM",
            layer=layer,
            expires=expires,
            actor=actor,
            created=now,
            updated=now,
            **{k: v for k, v in provenance.items() if v is not None},
        )
        record["key"] = key_for(body)
        commit = stale.head(self.ws.root)  # the code it is written against (nxm.stale)
        vector = self._vectors([record]).get(record["key"])
        with self.store.writing(adds=True) as current:
            same = current.with_body(body_hash(body))
            old = self.resolve(current, supersedes) if supersedes is not None else None
            if same:  # the add the similar-memory note invites: link the stored one instead
                stored = current[same[0]]
                if old is not None:
                    stored = self._link(current, stored, old, now, actor)
                out = {"created": False, "memory": self._out(stored), "similar": []}
                return {**out, "superseded": old["key"] if old is not None else None}
            salt = 0
            while record["key"] in current:
                salt += 1
                record["key"] = key_for(body, salt)
            changed = [record]
            if old is not None:
                changed.append(curate.supersede(old, record["key"], now, actor))
            link = {"supersedes": old["key"]} if old is not None else {}
            record["events"] = [event("CREATED", now, actor, commit=commit, **link)]
            found = curate.similar(vector, self.store.open_vectors, current)
            found = [f for f in found if old is None or f["key"] != old["key"]]
            vectors = {record["key"]: vector} if vector is not None else {}
            self.store.commit(current, changed, vectors)
        answer: dict[str, Any] = {"created": True, "memory": self._out(record), "similar": found}
        answer["superseded"] = old["key"] if old is not None else None
        hint = curate.note(found)
        if hint:
            answer["note"] = hint
        return self._suggest(answer, f"{introduction}\n{body}", refs)

    def _suggest(self, answer: dict[str, Any], text: str, refs: list[str]) -> dict[str, Any]:
        """``answer`` with the refs ``text`` names that exist in the repository, if any."""
        found = stale.suggested(self.ws.root, text, refs)
        if found:
            answer["suggested_refs"] = found
        return answer

    def _link(
        self, current: Any, stored: dict[str, Any], old: dict[str, Any], now: str, actor: str
    ) -> dict[str, Any]:
        """``stored`` supersedes ``old``: both histories say so and ``old`` is closed."""
        if stored["key"] == old["key"]:
            raise ConflictError(
                f"memory {old['key']} has this body: a memory cannot supersede itself",
                suggestion="give the new text as the body, or update the memory in place",
                code="ALREADY_STORED",
            )
        if old["key"] in curate.linked(stored):
            return stored
        link = event("LINKED", now, actor, supersedes=old["key"])
        after = {**stored, "events": [*stored["events"], link], "updated": now, "actor": actor}
        self.store.commit(current, [after, curate.supersede(old, stored["key"], now, actor)])
        return after

    def _change(
        self, key: str, now: str, actor: str, apply: Any, *, embed: bool = False
    ) -> dict[str, Any]:
        """Read-modify-write one record under the lock: ``apply`` mutates a copy and returns the
        event's (type, data); ``embed`` loads the model before the lock."""
        if embed:
            self.embedder()
        with self.store.writing() as current:
            before = self.resolve(current, key)
            after = {**before, "refs": list(before["refs"]), "events": list(before["events"])}
            after["feedback"] = dict(before["feedback"])
            kind, data = apply(after, current)
            after["updated"], after["actor"] = now, actor
            after["events"].append(event(kind, now, actor, **data))
            vectors = None
            if embedded_text(after) != embedded_text(before):
                after["processing"] = "PENDING"
                vectors = self._vectors([after])
            self.store.commit(current, [after], vectors)
        return {"memory": self._out(after)}

    def update(
        self, *, key: str, now: str, actor: str, introduction: str | None = None,
        body: str | None = None, priority: str | None = None, allow_secret: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Change body, introduction or priority; the event keeps the old values for revert."""
        if introduction is None and body is None and priority is None:
            raise ValidationError(
                "update needs a body, an introduction or a priority",
                suggestion="pass what changes (--body, --introduction, --priority); "
                "the rest is kept",
            )
        introduction = _intro(introduction) if introduction is not None else None
        body = _body(body) if body is not None else None

        def apply(r: dict[str, Any], current: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            before: dict[str, Any] = {}
            if body is not None and normalise(body) != normalise(r["body"]):
                twin = next((k for k in current.with_body(body_hash(body)) if k != r["key"]), None)
                if twin:
                    raise ConflictError(
                        f"memory {twin} already has that body",
                        suggestion=f"forget one of them: `nxm forget {twin}`",
                    )
                before["body"] = r["body"]
            if introduction is not None and introduction != r["introduction"]:
                before["introduction"] = r["introduction"]
            if priority is not None and priority != r["priority"]:
                before["priority"] = r["priority"]
            if not before:
                raise ValidationError(
                    f"update of {r['key']} changes nothing",
                    suggestion="pass a different body, introduction or priority",
                    code="NO_CHANGE",
                )
            new = {"body": body, "introduction": introduction, "priority": priority}
            r.update({f: new[f] for f in before})
            if not allow_secret:  # a credential it takes out leaves the committed history too
                before, r["events"] = secrets.redact(before), secrets.redact(r["events"])
            return "UPDATED", {"fields": list(before), "before": before, "commit": commit}

        commit = stale.head(self.ws.root)  # an update says the memory holds at this commit
        answer = self._change(key, now, actor, apply, embed=True)
        if body is None:
            return answer
        m = answer["memory"]
        return self._suggest(answer, f"{m['introduction']}\n{m['body']}", m["refs"])

    def _one_spelling(self, category: str) -> str:
        """``category``, a plain word that is not another spelling of one in use, in the
        vocabulary or in the config's ``categories`` (which keep a near spelling on purpose)."""
        _category(category)
        known = {*VOCABULARY, *self.config.get("categories", ()), *self.store.cache.categories()}
        same = near(category, known)
        if same:
            raise ValidationError(
                f"category {category!r} looks like {same!r}, which is in use",
                suggestion=f"pass category {same!r}; to keep {category!r} as a category of "
                f'its own, list it in .nxs/config.toml: [memory] categories = ["{category}"]',
                code="SIMILAR_CATEGORY",
            )
        return category

    def classify(
        self, *, key: str, now: str, actor: str, category: str | None = None,
        scope: str | None = None, refs: list[str] | None = None, introduction: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Set category, scope, refs or introduction; a call that changes nothing is refused."""
        introduction = _intro(introduction) if introduction is not None else None
        category = self._one_spelling(category) if category else category

        def apply(r: dict[str, Any], current: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            new = {"category": category, "scope": scope, "refs": refs, "introduction": introduction}
            if new["category"] == "":
                new["category"] = None  # an empty category clears it
            changed = {
                k: v for k, v in new.items()
                if (v is not None or (k == "category" and category == "")) and v != r[k]
            }  # fmt: skip
            final_refs = _refs(changed.get("scope", r["scope"]), changed.get("refs", r["refs"]))
            if "refs" in changed:
                changed["refs"] = final_refs
                if changed["refs"] == r["refs"]:
                    del changed["refs"]
            if not changed:
                raise ValidationError(
                    f"classify of {r['key']} changes nothing",
                    suggestion="pass a different category, scope, refs or introduction",
                    code="NO_CHANGE",
                )
            before = {k: r[k] for k in sorted(changed)}
            r.update(changed)
            commit = stale.head(self.ws.root) if "refs" in changed else None
            return "CLASSIFIED", {"fields": sorted(changed), "before": before, "commit": commit}

        return self._change(key, now, actor, apply, embed=True)

    def _transition(
        self, key: str, now: str, actor: str, kind: str, allowed: dict[str, str]
    ) -> dict[str, Any]:
        def apply(r: dict[str, Any], current: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            status = r["status"]
            if status not in allowed:
                raise ConflictError(
                    f"memory {r['key']} is {status}; cannot {_VERBS[kind]} it",
                    suggestion=f"see its state with `nxm show {r['key']}`",
                    code="BAD_STATE",
                )
            target = allowed[status]
            if target == "*":  # restore: back to the status it was forgotten from
                forgot = [e for e in r["events"] if e["type"] == "FORGOTTEN"]
                target = forgot[-1].get("data", {}).get("from", "open") if forgot else "open"
            r["status"] = target
            return kind, {"from": status, "to": target}

        return self._change(key, now, actor, apply)

    def close(self, *, key: str, now: str, actor: str) -> dict[str, Any]:
        """Close an open memory (reversible with reopen)."""
        return self._transition(key, now, actor, "CLOSED", {"open": "closed"})

    def reopen(self, *, key: str, now: str, actor: str) -> dict[str, Any]:
        """Reopen a closed memory."""
        return self._transition(key, now, actor, "REOPENED", {"closed": "open"})

    def forget(self, *, key: str, now: str, actor: str) -> dict[str, Any]:
        """Forget a memory: hidden from list, search and prime; reversible with restore."""
        return self._transition(
            key, now, actor, "FORGOTTEN", {"open": "forgotten", "closed": "forgotten"}
        )

    def restore(self, *, key: str, now: str, actor: str) -> dict[str, Any]:
        """Restore a forgotten memory to the status it had."""
        return self._transition(key, now, actor, "RESTORED", {"forgotten": "*"})

    def purge(self, *, key: str, now: str, actor: str) -> dict[str, Any]:
        """Delete a forgotten memory for good."""
        with self.store.writing() as current:
            r = self.resolve(current, key)
            if r["status"] != "forgotten":
                raise ConflictError(
                    f"memory {r['key']} is {r['status']}; only forgotten memories can be purged",
                    suggestion=f"forget it first: `nxm forget {r['key']}`",
                    code="BAD_STATE",
                )
            self.store.commit(current, [], deletes=[r["key"]])
        return {"purged": True, "key": r["key"]}

    def show(self, *, key: str) -> dict[str, Any]:
        """One memory, untruncated, with its history (and why it may be stale, if it may)."""
        record = self.resolve(self.store.records(), key)
        flag = stale.flags(self.store).get(record["key"])
        return {"memory": record, **({"stale": flag} if flag else {})}

    def history(self, *, key: str, limit: int = 20, order: str = "newest") -> dict[str, Any]:
        """The event timeline of a memory."""
        r = self.resolve(self.store.records(), key)
        events = [{**e, "n": i} for i, e in enumerate(r["events"], 1)]
        if order == "newest":
            events.reverse()
        return {"key": r["key"], "events": events[:limit], "order": order, "total": len(events)}

    def _select(self, records: Any, filters: dict[str, Any]) -> list[dict[str, Any]]:
        status = filters.get("status") or "open"
        ref = filters.get("ref")
        # the filters given, looked up once: this loop sees every memory of the store
        wanted = [(f, filters[f]) for f in LIST_FILTERS
                  if f not in ("status", "ref") and filters.get(f) is not None]  # fmt: skip
        return [
            r for r in records
            if (status == "all" or r["status"] == status)
            and (ref is None or any(ref_matches(x, ref) for x in r["refs"]))
            and not (wanted and any(r[f] != v for f, v in wanted))
        ]  # fmt: skip

    def list(self, *, page: int = 1, page_size: int = 20, **filters: Any) -> dict[str, Any]:
        """Memories in reading order, filtered and paginated, with totals."""
        records, start = self.store.records(), (page - 1) * page_size
        if any(filters.get(f) is not None for f in LIST_FILTERS if f != "status"):
            chosen = self._select(records.heads(ordered=True), filters)
            total, shown = len(chosen), chosen[start : start + page_size]
        else:  # by status alone (the usual list): one page read, not every record
            shown, total = records.cache.page(filters.get("status") or "open", start, page_size)
        shown = [summary(r) for r in shown]
        stale.mark(self, shown)
        return self.noted({
            "memories": shown,
            "page": page,
            "page_size": page_size,
            "total": total,
            "total_pages": math.ceil(total / page_size) if total else 0,
        })  # fmt: skip

    def noted(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A read's answer, with the files it could not read (``problems``) when there are any."""
        if self.store.problems:
            answer["problems"] = self.store.problems
        return answer

    def _neighbours(self) -> dict[str, Any]:
        """`rank.neighbours` of the memories in sessions, kept while the store is unchanged."""
        seen = self.store.generation()
        if self._near is None or self._near[0] != seen:
            members = {
                k: {"session_id": s, "created": c} for k, s, c in self.store.cache.sessions()
            }
            self._near = (seen, rank.neighbours(members))
        return self._near[1]

    def _semantic(
        self, query: str, mode: str, filters: dict[str, Any], pool: int
    ) -> tuple[list[tuple[str, float]], tuple[float, float] | None, str | None]:
        """The semantic hits, their spread (`Store.semantic`), a note when the model is missing."""
        if mode == "keyword":
            return [], None, None
        emb = self.embedder(quiet=True)
        if emb is not None:
            return *self.store.semantic(emb.embed([query])[0], filters, pool), None
        if mode == "semantic":
            raise UpstreamError(
                f"semantic search needs the embedding model: {self._embed_error}",
                suggestion=f"run `{self._setup_command()}`, or search with --mode keyword",
                code="MODEL_UNAVAILABLE",
            )
        return [], None, "semantic search unavailable (no embedding model); keyword results only"

    def search(
        self, *, query: str, mode: str = "hybrid", limit: int = 5, now: str,
        user_query_full: str | None = None, use_full_query: bool | None = None,
        conversation_id: str | None = None, **filters: Any,
    ) -> dict[str, Any]:  # fmt: skip
        """Hybrid, semantic or keyword search with the list filters; ``conversation_id`` only
        labels the search."""
        if user_query_full and user_query_full.strip() and use_full_query is not False:
            query = user_query_full
        if not query.strip():
            raise ValidationError("query must not be empty", suggestion="say what to look for")
        status = filters.pop("status", None) or "open"
        lance_filters = {k: v for k, v in filters.items() if v is not None}
        if "ref" in lance_filters:  # a path takes what lies under it: the refs it stands for
            wanted = lance_filters.pop("ref")
            heads = self.store.records().heads()
            refs = {x for r in heads for x in r["refs"] if ref_matches(x, wanted)}
            lance_filters["ref_in"] = sorted(refs) or [wanted]
        if status != "all":
            lance_filters["status"] = status
        lance_filters["not_expired"] = now
        pool = max(limit * 4, rank.POOL)
        records = self.store.records()  # a record is parsed only for ranking and the answer
        self.refresh(semantic=mode != "keyword")
        near = self._neighbours()
        columns: tuple[str, ...] = ("text",) if mode != "semantic" else ()
        if mode == "hybrid" and near:  # else every memory's context is its own text
            columns = ("text", "context")
        with self.store.pinned():  # one table version for the reads below
            # the query is embedded and the vectors searched while the full-text search runs (a
            # task of the background threads never waits for another: searches cannot deadlock)
            later = background().submit(self._semantic, query, mode, lance_filters, pool)
            # hybrid standardizes BM25 scores over the query's best `REF` matches
            texts = self.store.keywords(
                query, lance_filters, max(pool, rank.REF) if mode == "hybrid" else pool, columns
            )
            semantic, spread, note = later.result()
            # context: matches in a memory's text followed by what was said just before it
            keyword, context = texts.get("text", []), texts.get("context", [])
            # what ranking reads of the candidates and their session neighbours, in one query
            found = {k for hits in (keyword, context, semantic) for k, _ in hits}
            brief = records.cache.many(
                found | {n for k in found for n, _ in near.get(k, ())}, "head"
            )
            evidence = None
            if mode == "hybrid" and semantic:  # how far the keyword matches hold the query
                top = records.cache.many(k for k, _ in keyword[: rank.EVIDENCE_HITS])
                # a conversation's turns answer each other: their own words are no measure
                texts = [f"{r['introduction']}\n{r['body']}" for r in top.values()
                         if not r.get("session_id")]  # fmt: skip
                evidence = rank.keyword_evidence(query, texts) if texts or not top else None
            depth = max(limit, currency.DEPTH)  # a newer version just below the cut is lifted
            hits = rank.fuse(
                keyword, semantic, brief, mode, near, context, depth, spread, pool,
                period(query, now), brief, lambda keys: self.store.passing(keys, lance_filters),
                evidence,
            )  # fmt: skip
            full = records.cache.many(k for k, _ in hits)
            asked = content_words(query)
            words = {k: rank.matched(asked, f"{full[k]['introduction']}\n{full[k]['body']}")
                     for k, _ in hits}  # fmt: skip
            named = words if identifiers(query) else None  # twins: ERR_X vs ERR_X_EXPIRED
            hits = currency.order(hits, full, self.store.vectors(list(full)), named)
            if mode == "hybrid":
                texts = {k: f"{r['introduction']}\n{r['body']}\n{' '.join(r['refs'])}"
                         for k, r in full.items()}  # fmt: skip
                hits = rank.exact(hits, texts, query)
            # the relevance floor: below it a hit is not returned (docs/retrieval.md)
            shown = len(hits)
            floor = rank.SEMANTIC_FLOORS.get(self.model_name, 0.0)
            hits = [
                (k, sc) for k, sc in hits
                if rank.relevant(mode, sc["semantic"], words[k], floor) or rank.through(sc)
            ]  # fmt: skip
            dropped = shown - len(hits)
            hits = hits[:limit]
        from nxm.insights import log_search  # one appended line per search, for `nxm stats`

        log_search(self.ws, now, mode)
        results = []
        for k, scores in hits:
            text, cut = snippet(full[k]["body"], asked)
            extra = {"matched": round(words[k], 4), "snippet": text, "snippet_truncated": cut}
            results.append({**summary(brief[k]), **scores, **extra})
        stale.mark(self, results)
        out: dict[str, Any] = {"mode": mode, "query": query, "results": results}
        out["total"] = len(hits)
        if not hits:
            sim = f"similarity {rank.SEMANTIC_FLOORS.get(self.model_name, 0.0)}"
            share = f"{rank.WORDS_FLOOR:.0%} of the query's words"
            bar = {"semantic": sim, "keyword": share, "hybrid": f"{sim} or {share}"}[mode]
            seen = f"; {dropped} scored below it" if dropped else ""
            empty = (
                f"nothing relevant is stored: no memory reaches the relevance floor ({bar}{seen})"
            )
            note = f"{note}; {empty}" if note else empty
        if note:
            out["note"] = note
        return self.noted(out)

    def refresh(self, *, semantic: bool = True) -> None:
        """Bring the search index up to date, embedding what has no vector (``semantic``)."""
        embed = self._vectors if semantic and self.embedder(quiet=True) is not None else None
        try:
            self.store.refresh(embed)
        except UpstreamError as exc:  # a full disk: search what the index holds, and say so
            if exc.code != "STORE_WRITE_FAILED":
                raise
            print(f"nxs: the search index is not up to date: {exc.message}", file=sys.stderr)

    def embed_pending(self, *, all: bool = False) -> dict[str, Any]:
        """Embed every memory without a vector (every memory with ``all``) and index them."""
        if self.embedder(quiet=True) is None:
            raise UpstreamError(
                f"cannot embed: {self._embed_error}",
                suggestion=f"run `{self._setup_command()}`",
                code="MODEL_UNAVAILABLE",
            )
        self.store.sync()
        done = self.store.embed(self._vectors, everything=all)
        self.store.refresh()
        pending = len(self.store.cache.unready())
        return {"embedded": done, "model": self.model_name, "pending": pending}
