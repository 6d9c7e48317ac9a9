"""Retrieval quality on LoCoMo: does the product's own search bring back the evidence turns?

    python -m bench.bench_locomo                 # all 10 conversations, real model
    python -m bench.bench_locomo --quick         # the first 2 conversations
    python -m bench.bench_locomo --model hash    # the test embedder (no model needed)
    python bench/run.py --only locomo [--quick]  # the same, as figures of the bench runner

Each dialog turn becomes one memory, loaded through the bulk import path (`nxm.port`): body
``"<speaker>: <text>"`` (plus ``[image: <caption>]`` when the turn shares a photo), introduction
``"<speaker>, <session date>"``, created at the session date plus one second per turn (so the
turns of a session keep their order), ``user_id`` the conversation, ``session_id``
``<conversation>/session_<n>``. Every question is then searched with `MemoryService.search`
(hybrid, limit 10, filtered to its conversation's ``user_id``). Questions whose evidence ids all
fail to resolve are skipped (the data's README lists the defects). The same run scores a plain
BM25 baseline: bm25s (English stop words) over the same bodies, one index per conversation.

Metrics: recall_any@k (an evidence turn in the top k), recall_all@10 (every evidence turn in the
top 10), MRR@10 (1 / rank of the first evidence turn, 0 past 10), overall and per category
(1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.core import BenchError, Env, Figure, bench  # noqa: E402

DATA = ROOT.parent / "shared" / "bench" / "locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
QUICK_CONVERSATIONS = 2
K = 10
NOW = "2030-01-01T00:00:00.000Z"


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The conversations of locomo10.json. Raises FileNotFoundError when it is absent."""
    import orjson

    return orjson.loads(path.read_bytes())


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turns(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Every dialog turn of a conversation with its session number and time."""
    c = conv["conversation"]
    out = []
    n = 1
    while f"session_{n}" in c:
        start = session_time(c[f"session_{n}_date_time"])
        for i, t in enumerate(c[f"session_{n}"]):
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [image: {t['blip_caption']}]"
            out.append(
                {
                    "dia_id": t["dia_id"],
                    "speaker": t["speaker"],
                    "body": f"{t['speaker']}: {text}",
                    "session": n,
                    "date": c[f"session_{n}_date_time"],
                    "at": start + timedelta(seconds=i),
                }
            )
        n += 1
    return out


def records(conv: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The memory records of a conversation's turns, and dia_id -> memory key."""
    from nxm.record import event, key_for, new_record
    from nxs.render import timestamp

    cid = conv["sample_id"]
    out: list[dict[str, Any]] = []
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for t in turns(conv):
        at = timestamp(t["at"])
        salt = 0
        key = key_for(t["body"])
        while key in taken:  # the same words twice ("Thanks!") are two turns, two memories
            salt += 1
            key = key_for(t["body"] + f"\x00{cid}", salt)
        taken.add(key)
        keys[t["dia_id"]] = key
        r = new_record(
            key=key,
            introduction=f"{t['speaker']}, {t['date']}"[:200],
            body=t["body"],
            scope="session",
            actor="locomo",
            created=at,
            updated=at,
            user_id=cid,
            session_id=f"{cid}/session_{t['session']}",
            metadata={"dia_id": t["dia_id"]},
        )
        r["events"] = [event("IMPORTED", at, "locomo")]
        out.append(r)
    return out, keys


def questions(conv: dict[str, Any], keys: dict[str, str]) -> list[dict[str, Any]]:
    """The QA items whose evidence resolves to at least one turn (with those keys)."""
    out = []
    for qa in conv["qa"]:
        ev = [keys[e.strip()] for e in qa.get("evidence", []) if e.strip() in keys]
        if ev:
            out.append({"question": qa["question"], "category": qa["category"], "evidence": ev})
    return out


def score(ranked: list[str], evidence: list[str]) -> dict[str, float]:
    """The per-question metrics of one ranked key list."""
    ev = set(evidence)
    first = next((i for i, k in enumerate(ranked[:K], 1) if k in ev), None)
    out = {f"recall_any@{k}": float(bool(ev & set(ranked[:k]))) for k in (1, 5, 10)}
    out["recall_all@10"] = float(ev <= set(ranked[:K]))
    out["mrr@10"] = 1.0 / first if first else 0.0
    return out


def summarise(rows: list[tuple[int, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean of each metric, overall and per category, with question counts."""

    def mean(sel: list[dict[str, float]]) -> dict[str, float]:
        out = {m: round(statistics.fmean(r[m] for r in sel), 4) for m in sel[0]}
        out["n"] = len(sel)
        return out

    out = {"overall": mean([r for _, r in rows])}
    for cat, name in CATEGORIES.items():
        sel = [r for c, r in rows if c == cat]
        if sel:
            out[f"{cat} {name}"] = mean(sel)
    return out


def bm25_baseline(convs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Plain BM25 (bm25s, English stop words) over the same bodies, one index per conversation."""
    import bm25s

    rows = []
    for conv in convs:
        recs, keys = records(conv)
        corpus = [r["body"] for r in recs]
        index = bm25s.BM25()
        index.index(
            bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
        )
        for q in questions(conv, keys):
            tokens = bm25s.tokenize([q["question"]], stopwords="en", show_progress=False)
            if not tokens.vocab:
                rows.append((q["category"], score([], q["evidence"])))
                continue
            docs, _ = index.retrieve(tokens, k=min(K, len(corpus)), show_progress=False)
            ranked = [recs[i]["key"] for i in docs[0]]
            rows.append((q["category"], score(ranked, q["evidence"])))
    return summarise(rows)


def product(
    convs: list[dict[str, Any]],
    root: Path,
    model: str,
    *,
    log: Callable[[str], None] = lambda _: None,
    mode: str = "hybrid",
) -> dict[str, Any]:
    """Load every turn through the bulk import, search every question; metrics and timings."""
    from nxm.port import import_records
    from nxm.service import MemoryService
    from nxs.workspace import init

    ws, _ = init(root, ["memory"])
    cfg = ws.dir / "config.toml"
    text = cfg.read_text()
    old = next(ln for ln in text.splitlines() if ln.startswith("model = "))
    cfg.write_text(text.replace(old, f'model = "{model}"'))
    ws, _ = init(root, ["memory"])
    service = MemoryService(ws)
    if service.embedder() is None and mode != "keyword":
        raise BenchError(f"the embedding model {model} cannot be loaded")
    loaded = [records(c) for c in convs]
    t0 = time.perf_counter()
    for recs, _ in loaded:
        import_records(service, [dict(r) for r in recs])
    ingest = time.perf_counter() - t0
    n_turns = sum(len(r) for r, _ in loaded)
    log(f"  ingested {n_turns:,} turns in {ingest:.1f} s")
    return {"turns": n_turns, "ingest_s": round(ingest, 2), **ask(service, convs, loaded, mode)}


def ask(
    service: Any,
    convs: list[dict[str, Any]],
    loaded: list[tuple[list[dict[str, Any]], dict[str, str]]],
    mode: str = "hybrid",
) -> dict[str, Any]:
    """Search every question of the loaded conversations; metrics and latencies."""
    rows = []
    latencies = []
    for conv, (_, keys) in zip(convs, loaded, strict=True):
        for q in questions(conv, keys):
            t = time.perf_counter()
            got = service.search(
                query=q["question"], mode=mode, limit=K, now=NOW, user_id=conv["sample_id"]
            )
            latencies.append(time.perf_counter() - t)
            rows.append((q["category"], score([h["key"] for h in got["results"]], q["evidence"])))
    latencies.sort()
    return {
        "metrics": summarise(rows),
        "query_p50_ms": round(1000 * latencies[len(latencies) // 2], 1),
        "query_p95_ms": round(1000 * latencies[int(len(latencies) * 0.95)], 1),
    }


METRICS = ("recall_any@1", "recall_any@5", "recall_any@10", "recall_all@10", "mrr@10")


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """A Markdown table: one row per (system, slice)."""
    lines = [
        "| system | slice | n | " + " | ".join(METRICS) + " |",
        "|---|---|---:|" + "---:|" * len(METRICS),
    ]
    for system, metrics in results.items():
        for name, m in metrics.items():
            vals = " | ".join(f"{m[k]:.3f}" for k in METRICS)
            lines.append(f"| {system} | {name} | {m['n']} | {vals} |")
    return "\n".join(lines) + "\n"


def evaluate(
    quick: bool, model: str, work: Path, log: Callable[[str], None], mode: str = "hybrid"
) -> dict[str, Any]:
    """The whole run: the product's search and the BM25 baseline over the same conversations."""
    try:
        data = load()
    except FileNotFoundError:
        raise BenchError(f"{DATA} is absent") from None
    convs = data[:QUICK_CONVERSATIONS] if quick else data
    log(f"locomo: {len(convs)} conversations, model {model}")
    got = product(convs, work / "locomo", model, log=log, mode=mode)
    base = bm25_baseline(convs)
    return {
        **got,
        "conversations": len(convs),
        "model": model,
        "baseline": base,
        "table": table({f"nxm search ({mode})": got["metrics"], "bm25s baseline": base}),
    }


@bench("locomo", heavy=True, help="LoCoMo retrieval: recall@k / MRR@10 vs plain BM25")
def locomo(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("the embedding model is not installed: run `nxm model setup`")
    from nxm.embed.model import MODEL_NAME

    got = evaluate(env.quick, MODEL_NAME, env.work, env.log)
    env.facts["locomo"] = {k: v for k, v in got.items() if k != "table"}
    env.log(got["table"])
    m = got["metrics"]["overall"]
    note = (
        f"recall_any@10 {m['recall_any@10']:.3f} (bm25s "
        f"{got['baseline']['overall']['recall_any@10']:.3f}), MRR@10 {m['mrr@10']:.3f} "
        f"(bm25s {got['baseline']['overall']['mrr@10']:.3f}) over {m['n']} questions"
    )
    return [
        Figure(f"LoCoMo ingest of {got['turns']:,} turns", got["ingest_s"], note=note),
        Figure("LoCoMo query latency p50 (in process)", got["query_p50_ms"] / 1000),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 2 conversations only")
    parser.add_argument("--model", default=None, help="embedding model (default: the real one)")
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "keyword", "semantic"))
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    from nxm.embed.model import MODEL_NAME

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="nxs-locomo-") as tmp:
        got = evaluate(args.quick, args.model or MODEL_NAME, Path(tmp), log, args.mode)
    print(got["table"])
    print(
        f"turns {got['turns']:,}; ingest {got['ingest_s']} s; query p50 {got['query_p50_ms']} ms,"
        f" p95 {got['query_p95_ms']} ms (in process)"
    )
    if args.json:
        import orjson

        args.json.write_bytes(orjson.dumps(got, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
