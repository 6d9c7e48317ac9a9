"""memory_knowledge at 10,000 memories: the whole `nxm knowledge` process, and its parts in one.

    python -m bench.bench_knowledge                      # 10,000 memories in a scratch store
    python -m bench.bench_knowledge --n 3000 --store DIR # build (or reuse) the store in DIR
    python bench/run.py --only knowledge                 # the same figure through the runner

The store holds the synthetic corpus (`bench.corpus`, the one every store bench uses) loaded
by `nxm import` with the test embedder (``model = "hash"``: knowledge reads no vectors, and
the real model would only make the import slow). Prints one JSON line: the median wall time
of ``--runs`` `nxm knowledge --json` processes after one warm-up, the same for ``--no-merged``,
for `nxm knowledge --json` on an empty workspace (what any such process costs before it reads
a memory) and for `python -c "import typer, orjson"`; then, in one process with the store
open, the best of 5 CPU times of the `memory_knowledge` operation as a running MCP server
makes it (read the records, compute, render), of reading the records alone, of
`nxm.knowledge.knowledge` (merged and not) and of rendering; and the size of the answer,
entries and statements. The target (issue 21) is 1 s for memory_knowledge at 10,000.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # last: PYTHONPATH may name another checkout's code to time
    sys.path.append(str(ROOT))

NOW = "2027-01-01T00:00:00.000Z"


def _nxm() -> list[str]:
    script = Path(sys.executable).with_name("nxm")
    return [str(script)] if script.exists() else [sys.executable, "-m", "nxm"]


def build(root: Path, n: int) -> None:
    """A workspace at ``root`` holding ``n`` synthetic memories (kept when it already has)."""
    from bench.corpus import jsonl

    marker = root / ".nxs" / f"bench-knowledge-{n}"
    if marker.exists():
        return
    subprocess.run([*_nxm(), "init", str(root)], check=True, capture_output=True)
    cfg = root / ".nxs" / "config.toml"
    text = cfg.read_text()
    old = next(ln for ln in text.splitlines() if ln.startswith("model = "))
    cfg.write_text(text.replace(old, 'model = "hash"'))
    data = root / "memories.jsonl"
    data.write_bytes(jsonl(n))
    subprocess.run(
        [*_nxm(), "import", str(data), "--workspace", str(root)], check=True, capture_output=True
    )
    marker.write_text("")


def empty(root: Path) -> Path:
    """An empty workspace beside ``root`` (made once)."""
    there = root.with_name(root.name + "-empty")
    if not (there / ".nxs").exists():
        subprocess.run([*_nxm(), "init", str(there)], check=True, capture_output=True)
    return there


def _wall(argv: list[str], runs: int) -> float:
    subprocess.run(argv, check=True, capture_output=True)  # warm the OS cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3)


def _cpu(work: Any, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return round(best * 1000, 1)


def measure(root: Path, runs: int) -> dict[str, Any]:
    """Every figure for the store at ``root``."""
    from nxm.knowledge import knowledge
    from nxm.ops.lifecycle import OPERATIONS
    from nxs.context import Context
    from nxs.render import render

    ws = ["--workspace", str(root)]
    out: dict[str, Any] = {
        "nxm knowledge --json (s)": _wall([*_nxm(), "knowledge", "--json", *ws], runs),
        "nxm knowledge --no-merged --json (s)": _wall(
            [*_nxm(), "knowledge", "--no-merged", "--json", *ws], runs
        ),
        "nxm knowledge --json, empty workspace (s)": _wall(
            [*_nxm(), "knowledge", "--json", "--workspace", str(empty(root))], runs
        ),
        "baseline process (s)": _wall([sys.executable, "-c", "import typer, orjson"], runs),
    }
    ctx = Context(now=NOW, actor="bench", workspace_arg=str(root))
    store = ctx.memory.store
    records = store.records()
    op = next(o for o in OPERATIONS if o.tool == "memory_knowledge")
    merged = knowledge(records, now=NOW)
    full = knowledge(records, now=NOW, merged=False)
    out.update({
        "memory_knowledge in a running server (ms cpu)": _cpu(
            lambda: render(op.handler(ctx, entry=None, category=None, user_id=None, merged=True))
        ),
        "read the records (ms cpu)": _cpu(store.records),
        "knowledge, merged (ms cpu)": _cpu(lambda: knowledge(records, now=NOW)),
        "knowledge, entries (ms cpu)": _cpu(lambda: knowledge(records, now=NOW, merged=False)),
        "render the merged answer (ms cpu)": _cpu(lambda: render(merged)),
        "memories": len(records),
        "entries": merged["total"],
        "statements": sum(len(e["statements"]) for e in full["entries"]),
        "largest entry (memories)": max(len(e["sourceMemoryIds"]) for e in full["entries"]),
        "merged answer (KB)": round(len(render(merged)) / 1024),
        "load average": [round(x, 2) for x in os.getloadavg()],
    })  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_knowledge")
    parser.add_argument("--n", type=int, default=10_000, help="memories in the store")
    parser.add_argument("--store", type=Path, help="build or reuse the store here")
    parser.add_argument("--runs", type=int, default=5, help="timed processes per figure")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = args.store or Path(scratch) / f"knowledge-{args.n}"
        build(root, args.n)
        print(json.dumps({"n": args.n, **measure(root, args.runs)}))
    return 0


try:  # registered with bench/run.py when its runner is importable
    from bench.core import Env, Figure, bench

    @bench("knowledge", help="nxm knowledge --json on 10,000 memories (issue 21: <= 1 s)")
    def knowledge_bench(env: Env) -> list[Figure]:
        n = 1000 if env.quick else 10_000
        root, _ = env.workspace(n, "knowledge", "hash")
        runs = env.time_runs(
            lambda _: [*env.program("nxm"), "knowledge", "--json", "--workspace", str(root)]
        )
        return [env.figure(f"nxm knowledge --json ({n:,} memories)", runs, target=None,
                           note="issue 21's target is 1 s of wall time")]  # fmt: skip

except ImportError:  # pragma: no cover - the runner is part of the repository
    pass


if __name__ == "__main__":
    sys.exit(main())
