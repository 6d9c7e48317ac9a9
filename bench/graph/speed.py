"""`graph_query` speed on a 10,000-memory workspace, warm (issue 34's target: p50 <= 100 ms).

    python -m bench.graph.speed [--n 10000] [--keep DIR]

The workspace is made by `nxm init` and `nxm import` (the test embedder "hash": the graph does
not read vectors): the tuning half's memories and bench/project_memory's 319, then
bench/corpus.py's synthetic project notes up to ``--n``. Each question of the tuning half is then
asked in one process the way the `graph_query` operation asks it (`graph.current` then `ask`):
once first (extracting every memory the record cache lacks), then warm, and again with the kept
graph dropped before every question (the assembly each question paid before it was kept), and
questions that name no entity, where a plain word stands in for one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import memories as synthetic
from bench.graph.realistic import STORE
from nxm import graph
from nxm.graph.query import ask
from nxm.record import new_record
from nxm.service import MemoryService
from nxs.render import line
from nxs.workspace import find

HERE = Path(__file__).parent
PLAIN = ("Who should I ask about the exporter?", "Which team looks after the scheduler?",
         "What does the importer run on?", "Who maintains the dashboards?",
         "Where is the warehouse?", "Which database does the ledger use?")  # fmt: skip
NOW = "2026-06-01T10:00:00.000Z"


def _nxm(*args: str) -> None:
    env = {**os.environ, "NXS_ACTOR": "bench", "HF_HUB_OFFLINE": "1"}
    code = "import sys; from nxm.cli import main; sys.exit(main())"
    subprocess.run([sys.executable, "-c", code, *args], check=True, env=env, capture_output=True)


def workspace(root: Path, n: int) -> None:
    """``root``: a workspace of ``n`` memories (labelled, realistic, then synthetic)."""
    tune = json.loads((HERE / "tune.json").read_text(encoding="utf-8"))["memories"]
    real = [json.loads(x) for p in sorted(STORE.glob("*.jsonl"))
            for x in p.read_text(encoding="utf-8").splitlines()]  # fmt: skip
    records = [new_record(key=f"{i:016x}", introduction=m["introduction"], body=m["body"],
                          user_id=m.get("user_id"), created=NOW, updated=NOW)
               for i, m in enumerate(tune + real)]  # fmt: skip
    records += synthetic(n - len(records))
    data = root.parent / "memories.jsonl"
    data.write_bytes(b"".join(line(r) for r in sorted(records, key=lambda r: r["key"])))
    _nxm("init", str(root))
    cfg = root / ".nxs" / "config.toml"
    text = cfg.read_text()
    old = next(x for x in text.splitlines() if x.startswith("model = "))
    cfg.write_text(text.replace(old, 'model = "hash"'))
    _nxm("import", str(data), "--workspace", str(root))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.graph.speed")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build the workspace here (or reuse it)")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="graph-speed-"))
    root = work / "ws"
    if not (root / ".nxs").exists():
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        workspace(root, args.n)
        print(f"{args.n:,} memories imported in {time.perf_counter() - t0:.0f} s ({root})")
    svc = MemoryService(find(root))
    questions = [q["q"] for q in json.loads((HERE / "tune.json").read_text())["questions"]]

    def timed(q: str, fresh: bool = False) -> float:
        if fresh:
            svc.__dict__.pop("_graph", None)
        t0 = time.perf_counter()
        ask(graph.current(svc, NOW), question=q)
        return 1000 * (time.perf_counter() - t0)

    cold = timed(questions[0])
    for q in questions[:3]:
        timed(q)
    warm = [timed(q) for q in questions]
    fresh = [timed(q, fresh=True) for q in questions[:15]]
    first_plain = timed(PLAIN[0])  # builds the graph's word index once
    plain = [timed(q) for q in PLAIN]
    g = graph.current(svc, NOW)
    print(f"graph: {len(g.entities):,} entities, {len(g.relations):,} relations")
    print(f"graph_query: first question of the process {cold:.0f} ms; warm p50 "
          f"{statistics.median(warm):.1f} ms, p95 {sorted(warm)[int(0.95 * len(warm))]:.1f} ms "
          f"over {len(warm)} questions; assembling the graph again for each: p50 "
          f"{statistics.median(fresh):.0f} ms")  # fmt: skip
    print(f"naming no entity (a plain word anchors): first {first_plain:.0f} ms, then p50 "
          f"{statistics.median(plain):.1f} ms over {len(plain)} questions")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
