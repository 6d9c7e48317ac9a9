"""Session memory: recall at session start, store context at session end.

`recall` runs the one core search (`MemoryService.search`, hybrid) and shapes what a session
start needs: short summaries with ids, a persona hint, and the user's facts once per conversation.
A broad request fans out into one focused search per topic (`plan`) instead of a single blurred
one. `store_context` saves a session as one memory of scope ``session`` (kept out of `nxs prime`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import orjson

from nxm.record import INTRO_MAX
from nxm.session import facts, personas
from nxs.errors import UpstreamError, ValidationError
from nxs.paths import atomic_write, data_dir

FANOUT_MIN_CHARS = 200
LONG_QUERY_CHARS = 600
MAX_TOPICS = 5
TOPIC_MAX_WORDS = 10
PER_TOPIC = {1: 10, 2: 8, 3: 7, 4: 6, 5: 6}  # branches -> results per branch (seed 000's table)
SUMMARY_MAX_CHARS = 1200
SUMMARY_TARGET_TOKENS = (50, 75)
SUMMARY_MAX_TOKENS = 150
TOKENS_PER_WORD = 4 / 3  # ~0.75 English words per token, as tokenizers commonly average
CATEGORY = "session-context"
CONVERSATIONS_FILE = "conversations.json"
CONVERSATIONS_KEPT = 2000  # most recent conversation ids remembered for facts injection

STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each else even ever
    few for from further get got had has have having he her here hers him his how i if in into
    is it its itself just let like me might more most much must my need no nor not now of off
    on once only or other our ours out over own please same she should so some such than that
    the their theirs them then there these they this those through to too under until up us
    use used using very want was we were what when where which while who whom why will with
    would yes yet you your yours""".split()
)
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_./-]*[a-z0-9]|[a-z0-9]")


def parse_topics(topics: str | None) -> list[str]:
    """Comma-separated topics: trimmed, at most `TOPIC_MAX_WORDS` words each, distinct, in order."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in (topics or "").split(","):
        words = raw.split()[:TOPIC_MAX_WORDS]
        topic = " ".join(words)
        if topic and topic.lower() not in seen:
            seen.add(topic.lower())
            out.append(topic)
    return out


def _content_words(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS]


def _topic_of(words: list[str]) -> str:
    """The group's `TOPIC_MAX_WORDS` most frequent words (ties: first seen), in text order."""
    counts = Counter(words)
    first = {w: i for i, w in reversed(list(enumerate(words)))}
    top = sorted(counts, key=lambda w: (-counts[w], first[w]))[:TOPIC_MAX_WORDS]
    return " ".join(sorted(top, key=first.__getitem__))


def derive_topics(text: str, count: int = MAX_TOPICS) -> list[str]:
    """Up to ``count`` topics for a long text: the most frequent content words of each of
    ``count`` runs of consecutive sentences (of words, for a text of one sentence)."""
    sentences = [w for w in (_content_words(s) for s in _SENTENCE.split(text)) if w]
    if len(sentences) >= 2:
        k = min(count, len(sentences))
        n = len(sentences)
        groups = [sum(sentences[i * n // k : (i + 1) * n // k], []) for i in range(k)]
    else:
        words = sentences[0] if sentences else []
        k = min(count, math.ceil(len(words) / TOPIC_MAX_WORDS))
        groups = [words[i * len(words) // k : (i + 1) * len(words) // k] for i in range(k)]
    return parse_topics(",".join(_topic_of(g) for g in groups if g))


def plan(text: str, topics: str | None) -> tuple[list[str], bool]:
    """The topics to fan out over (empty: one search) and whether they were derived."""
    given = parse_topics(topics)
    if len(text) < FANOUT_MIN_CHARS:
        return [], False
    if len(given) >= 2:
        return given[:MAX_TOPICS], False
    if len(text) > LONG_QUERY_CHARS:
        derived = derive_topics(text, MAX_TOPICS - len(given))
        chosen = parse_topics(",".join(given + derived))[:MAX_TOPICS]
        if len(chosen) >= 2:
            return chosen, True
    return [], False


def summarize(record: dict[str, Any]) -> tuple[str, bool]:
    """A memory's recall summary (a stored session's own summary, else introduction and body,
    at most `SUMMARY_MAX_CHARS`) and whether it shows less than all."""
    meta = record.get("metadata") or {}
    if record.get("category") == CATEGORY and isinstance(meta.get("summary"), str):
        text, more = meta["summary"], True
    else:
        intro, body = record["introduction"], record["body"]
        text = body if body.startswith(intro) else f"{intro}\n\n{body}"
        more = False
    if len(text) > SUMMARY_MAX_CHARS:
        text, more = text[: SUMMARY_MAX_CHARS - 1] + "…", True
    return text, more


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _confidences(service: Any, text: str, results: list[dict[str, Any]]) -> dict[str, float | None]:
    """Each result's cosine similarity to the text, clamped to 0..1 (None without a model);
    keyword-only hits are scored here against their stored vectors."""
    out: dict[str, float | None] = {r["key"]: r.get("semantic") for r in results}
    missing = [k for k, v in out.items() if v is None]
    if missing:
        emb = service.embedder()
        if emb is not None:
            query = [float(x) for x in emb.embed([text])[0]]
            for key, vec in service.store.vectors(missing).items():
                out[key] = _cosine(query, [float(x) for x in vec])
    return {k: None if v is None else round(min(1.0, max(0.0, v)), 4) for k, v in out.items()}


def _search(
    service: Any, text: str, limit: int, now: str, excerpts: dict[str, Any]
) -> tuple[list[str], dict, str | None]:
    """The keys found, their confidences and the search's note; snippets (and why a memory may
    be stale, `nxm.stale`) go to ``excerpts``."""
    found = service.search(query=text, mode="hybrid", limit=limit, now=now)
    results = found["results"]
    for r in results:
        excerpts.setdefault(r["key"], (r["snippet"], r["snippet_truncated"], r.get("stale")))
    return [r["key"] for r in results], _confidences(service, text, results), found.get("note")


def _first_recall(conversation_id: str, program_tool: str | None, now: str) -> bool:
    """Record the conversation as seen; True the first time (kept in the user's data dir)."""
    path = data_dir() / CONVERSATIONS_FILE
    with facts.locked():
        try:
            seen = orjson.loads(path.read_bytes()).get("conversations", {})
        except (FileNotFoundError, orjson.JSONDecodeError, AttributeError):
            seen = {}
        if conversation_id in seen:
            return False
        seen[conversation_id] = {"first_recall": now, "program_tool": program_tool}
        if len(seen) > CONVERSATIONS_KEPT:
            newest = sorted(seen.items(), key=lambda kv: (kv[1]["first_recall"], kv[0]))
            seen = dict(newest[-CONVERSATIONS_KEPT:])
        body = orjson.dumps({"conversations": seen}, option=orjson.OPT_SORT_KEYS)
        atomic_write(path, body, private=True)
    return True


def recall(
    service: Any, *, query: str, now: str, user_query_full: str | None = None,
    use_full_query: bool = True, topics: str | None = None, conversation_id: str | None = None,
    program_tool: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Session-start recall: summaries and ids, fan-out for broad requests, hint, facts.

    Raises:
        ValidationError: nothing to search on.
    """
    full = (user_query_full or "").strip()
    use_full = bool(full) and use_full_query is not False
    text = full if use_full else query.strip()
    if not text:
        raise ValidationError(
            "query must not be empty",
            suggestion="pass short keywords for what the request is about",
        )
    chosen, derived = plan(text, topics)
    per = PER_TOPIC[len(chosen) or 1]
    notes: set[str] = set()
    excerpts: dict[str, tuple[str, bool, str | None]] = {}
    conf: dict[str, float | None] = {}
    groups: list[tuple[str, list[str]]] = []
    for topic in chosen or [text]:  # no topics: one search of the whole text
        keys, scores, note = _search(service, topic, per, now, excerpts)
        notes.update([note] if note else [])
        groups.append((topic, keys))
        for k, v in scores.items():
            if k not in conf or (v is not None and (conf[k] is None or v > conf[k])):
                conf[k] = v
    # the search's order (currency, weights, feedback), round-robin over the branches so each
    # topic's best hits stay near the top; never re-sorted by the cosine shown as confidence
    order = list(dict.fromkeys(ks[i] for i in range(per) for _, ks in groups if i < len(ks)))
    records = service.store.records()
    memories = []
    for key in order:
        shown, more = summarize(records[key])
        excerpt, cut, stale = excerpts[key]
        memories.append({
            "confidence": conf.get(key), "memory_id": key, "snippet": excerpt,
            "snippet_truncated": cut, "summary": shown, "truncated": more,
            **({"stale": stale} if stale else {}),
        })  # fmt: skip
    out: dict[str, Any] = {
        "fanned_out": bool(chosen), "memories": memories,
        "searched": "user_query_full" if use_full else "query", "total": len(memories),
    }  # fmt: skip
    if chosen:
        out["topic_count"] = len(chosen)
        out["topic_groups"] = [{"memory_ids": ks, "topic": t} for t, ks in groups]
        out["topics_derived"] = derived
    known = personas.load(service.ws.dir, strict=False)
    picked = personas.hint(known, text, [records[k].get("persona") for k in order])
    if picked is not None:
        out["persona_hint"], out["persona_reason"] = picked["name"], picked["reason"]
    try:
        doc = facts.load()
    except UpstreamError as err:
        doc = {}
        notes.add(f"user facts not loaded: {err.message}")
    first = conversation_id is None or _first_recall(conversation_id, program_tool, now)
    if first and doc:
        out["user_facts"] = doc
    if notes:
        out["note"] = "; ".join(sorted(notes))
    return service.noted(out)


def estimate_tokens(text: str) -> int:
    """Tokens a summary costs, estimated: whitespace-separated words x 4/3, rounded up."""
    return math.ceil(len(text.split()) * TOKENS_PER_WORD)


def _introduction(summary: str) -> str:
    line = " ".join(next(ln for ln in summary.splitlines() if ln.strip()).split())
    return line if len(line) <= INTRO_MAX else line[: INTRO_MAX - 1] + "…"


def store_context(
    service: Any, *, summary: str, context: str, conversation_id: str, now: str, actor: str,
    **provenance: Any,
) -> dict[str, Any]:  # fmt: skip
    """Save a session's summary and full context as one session-scoped memory.

    Raises:
        ValidationError: an empty summary or context, a summary over `SUMMARY_MAX_TOKENS`, or an
            empty conversation id (nothing is written).
    """
    summary = summary.strip()
    if not summary:
        raise ValidationError(
            "summary must not be empty", suggestion="say in 50-75 tokens what was asked and decided"
        )
    tokens = estimate_tokens(summary)
    if tokens > SUMMARY_MAX_TOKENS:
        raise ValidationError(
            f"summary is about {tokens} tokens ({len(summary.split())} words x 4/3); a summary "
            f"is {SUMMARY_TARGET_TOKENS[0]}-{SUMMARY_TARGET_TOKENS[1]} tokens, at most "
            f"{SUMMARY_MAX_TOKENS}",
            suggestion="keep what was asked and decided in the summary; put the detail in context",
            code="SUMMARY_TOO_LONG",
        )
    if not context.strip():
        raise ValidationError(
            "context must not be empty",
            suggestion="give the full technical detail: errors, paths and commands verbatim",
        )
    if not conversation_id.strip():
        raise ValidationError(
            "conversation_id must not be empty",
            suggestion="reuse the id passed to recall this session, e.g. nc-ecommerce-db-20260529",
        )
    result = service.add(
        body=f"{summary}\n\n{context}", introduction=_introduction(summary), now=now, actor=actor,
        category=CATEGORY, scope="session", session_id=conversation_id.strip(),
        metadata={"summary": summary}, **{k: v for k, v in provenance.items() if v is not None},
    )  # fmt: skip
    memory = result["memory"]
    return {
        "context_chars": len(context), "conversation_id": memory["session_id"],
        "created": result["created"], "introduction": memory["introduction"],
        "memory_id": memory["key"], "summary_tokens": tokens,
    }  # fmt: skip


__all__ = [
    "FANOUT_MIN_CHARS", "LONG_QUERY_CHARS", "MAX_TOPICS", "PER_TOPIC", "SUMMARY_MAX_CHARS",
    "SUMMARY_MAX_TOKENS", "derive_topics", "estimate_tokens", "parse_topics", "plan", "recall",
    "store_context", "summarize",
]  # fmt: skip
