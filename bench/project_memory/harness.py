"""Load the set into a fresh workspace, rank every query with each system, score the lists."""

from __future__ import annotations

import inspect
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.project_memory import HALVES, NOW, metrics

MODES = ("hybrid", "semantic", "keyword")
BM25 = "bm25s"
DENSE = "dense MiniLM"
ACTOR = "bench"

Ranked = list[tuple[str, float]]  # (memory id, score), best first


class HarnessError(RuntimeError):
    """The run cannot produce meaningful figures (no model, a memory not stored)."""


def service_for(root: Path, model: str) -> Any:
    """A MemoryService on a fresh workspace at ``root`` using embedding model ``model``."""
    from nxm.service import MemoryService
    from nxs.workspace import init

    ws, _ = init(root, ["memory"])
    cfg = ws.dir / "config.toml"
    text = cfg.read_text()
    old = next(ln for ln in text.splitlines() if ln.startswith("model = "))
    cfg.write_text(text.replace(old, f'model = "{model}"'))
    ws, _ = init(root, ["memory"])
    service = MemoryService(ws)
    if service.embedder() is None:
        raise HarnessError(f"the embedding model {model} cannot be loaded")
    return service


def ingest(service: Any, mems: list[dict[str, Any]]) -> tuple[dict[str, str], bool]:
    """Add every memory in time order at its own created time, then close those with
    ``closed``; memory id -> key, and whether ``supersedes`` was passed to the service."""
    takes_supersedes = "supersedes" in inspect.signature(service.add).parameters
    keys: dict[str, str] = {}
    for m in sorted(mems, key=lambda m: (m["created"], m["id"])):
        extra: dict[str, Any] = {}
        if m.get("session"):
            extra["session_id"] = m["session"]
        if takes_supersedes and m.get("supersedes"):
            extra["supersedes"] = keys[m["supersedes"]]
        got = service.add(
            body=m["body"], introduction=m["introduction"], category=m["category"],
            now=m["created"], actor=ACTOR, **extra,
        )  # fmt: skip
        if not got["created"]:
            raise HarnessError(f"memory {m['id']} was not stored (same body as another)")
        keys[m["id"]] = got["memory"]["key"]
    for m in sorted((m for m in mems if m.get("closed")), key=lambda m: m["closed"]):
        if service.show(key=keys[m["id"]])["memory"]["status"] == "open":  # supersedes may have
            service.close(key=keys[m["id"]], now=m["closed"], actor=ACTOR)
    return keys, takes_supersedes


def search_all(
    service: Any, qs: list[dict[str, Any]], mode: str, ids: Mapping[str, str]
) -> tuple[dict[str, Ranked], list[float]]:
    """Each query's first ten through `MemoryService.search`, and the latencies in seconds."""
    out: dict[str, Ranked] = {}
    took = []
    for q in qs:
        t = time.perf_counter()
        got = service.search(query=q["query"], mode=mode, limit=metrics.K, now=NOW)
        took.append(time.perf_counter() - t)
        out[q["id"]] = [(ids[h["key"]], float(h["score"])) for h in got["results"]]
    return out, took


def _text(m: Mapping[str, Any]) -> str:
    return f"{m['introduction']}\n{m['body']}"


def bm25_all(mems: list[dict[str, Any]], qs: list[dict[str, Any]]) -> dict[str, Ranked]:
    """bm25s (English stop words, no stemming) over introduction + body; a memory matching no
    query term is not returned."""
    import bm25s

    index = bm25s.BM25()
    index.index(
        bm25s.tokenize([_text(m) for m in mems], stopwords="en", show_progress=False),
        show_progress=False,
    )
    out: dict[str, Ranked] = {}
    for q in qs:
        tokens = bm25s.tokenize([q["query"]], stopwords="en", show_progress=False)
        if not tokens.vocab:
            out[q["id"]] = []
            continue
        docs, scores = index.retrieve(tokens, k=min(metrics.K, len(mems)), show_progress=False)
        hits = [(mems[int(i)]["id"], float(s)) for i, s in zip(docs[0], scores[0], strict=True)]
        out[q["id"]] = [(k, s) for k, s in hits if s > 0]
    return out


def dense_all(
    embedder: Any, mems: list[dict[str, Any]], qs: list[dict[str, Any]]
) -> dict[str, Ranked]:
    """Cosine similarity of the query's embedding to each memory's (introduction + body), by
    brute force with the service's own embedder; the first ten."""
    docs = embedder.embed([_text(m) for m in mems])
    vecs = embedder.embed([q["query"] for q in qs])
    out: dict[str, Ranked] = {}
    for q, v in zip(qs, vecs, strict=True):
        sims = docs @ v
        ranked = sorted(zip((m["id"] for m in mems), map(float, sims), strict=True),
                        key=lambda t: (-t[1], t[0]))  # fmt: skip
        out[q["id"]] = ranked[: metrics.K]
    return out


def figures(
    qs: list[dict[str, Any]], runs: Mapping[str, Ranked], floor: float | None
) -> dict[str, Any]:
    """One system's figures for one half: metrics by kind, and the negatives' emptiness."""
    rows = []
    neg_tops: list[float | None] = []
    ans_tops: list[float | None] = []
    for q in qs:
        hits = [(k, s) for k, s in runs[q["id"]] if floor is None or s >= floor]
        top = hits[0][1] if hits else None
        if q["kind"] == metrics.NEGATIVE:
            neg_tops.append(top)
            continue
        ans_tops.append(top)
        rows.append((q["kind"], metrics.score(q, [k for k, _ in hits])))
    out = metrics.by_kind(rows)
    out["negative"] = metrics.negatives(neg_tops, ans_tops, floor)
    return out


def top_scores(
    qs: list[dict[str, Any]], runs: Mapping[str, Ranked], answerable: bool
) -> list[float]:
    return [
        runs[q["id"]][0][1] for q in qs
        if runs[q["id"]] and (q["kind"] != metrics.NEGATIVE) == answerable
    ]  # fmt: skip


def evaluate(
    mems: list[dict[str, Any]],
    qs: list[dict[str, Any]],
    root: Path,
    model: str,
    *,
    floors: Mapping[str, float] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The whole run: ingest, every system over every query, figures per half and system.

    ``floors`` (system -> score) drops a system's hits scoring below it before anything is
    measured. Without one, each system also reports ``floor@5%``: the floor, found on the tuning
    half, that would empty at most 5 % of the answerable lists, and what it does to both halves.
    """
    floors = dict(floors or {})
    service = service_for(root, model)
    t0 = time.perf_counter()
    keys, superseded = ingest(service, mems)
    ingest_s = time.perf_counter() - t0
    log(f"  {len(mems)} memories added in {ingest_s:.1f} s (supersedes passed: {superseded})")
    ids = {key: mid for mid, key in keys.items()}
    runs: dict[str, dict[str, Ranked]] = {}
    latency: dict[str, float] = {}
    for mode in MODES:
        runs[f"nxs {mode}"], took = search_all(service, qs, mode, ids)
        latency[f"nxs {mode}"] = round(1000 * statistics.median(took), 1)
        log(f"  nxs {mode}: {len(qs)} queries, p50 {latency[f'nxs {mode}']} ms")
    runs[BM25] = bm25_all(mems, qs)
    runs[DENSE] = dense_all(service.embedder(), mems, qs)
    halves = {h: [q for q in qs if q["half"] == h] for h in HALVES}
    halves["all"] = qs
    results: dict[str, dict[str, Any]] = {h: {} for h in halves}
    for system, got in runs.items():
        floor = floors.get(system)
        tuned = None
        if floor is None:
            tuned = metrics.floor_at(top_scores(halves["tune"], got, answerable=True))
        for half, sel in halves.items():
            fig = figures(sel, got, floor)
            if tuned is not None:
                fig["floor@5%"] = figures(sel, got, tuned)["negative"]
            results[half][system] = fig
    return {
        "memories": len(mems),
        "queries": len(qs),
        "model": model,
        "now": NOW,
        "supersedes_passed": superseded,
        "ingest_s": round(ingest_s, 1),
        "query_p50_ms": latency,
        "floors": floors,
        "results": results,
        "ranked": {
            s: {q: [[k, round(v, 4)] for k, v in r] for q, r in got.items()}
            for s, got in runs.items()
        },  # fmt: skip
    }
