"""Issue 20's targets: every cold seam call as a ratio to its baseline process in the same run.

    python bench/run.py --only speed              # a 10,000-memory store built by `nxm import`
    python bench/run.py --only speed --quick      # 1,000 memories
    python -m bench.bench_speed --reuse WS        # an existing store (copied first: add writes)

CLI figures are whole processes against ``python -c "import typer, orjson"`` (one baseline run
before each timed run); MCP ``initialize`` is against ``python -c "import mcp"`` the same way;
the first ``memory_search`` right after ``initialized`` is an absolute target (2 s). The peer
row runs basic-memory's ``bm tool search-notes`` when ``NXS_BENCH_BM`` names its ``bm`` (its own
Python 3.12 venv; notes in ``HOME`` of ``NXS_BENCH_BM_HOME``): its store is not ours, so its
row says what it searched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench.core import BenchError, Env, Figure, Runs, bench  # noqa: E402
from bench.corpus import QUERIES, add_argv  # noqa: E402

BIG = 10_000
QUICK = 1000
INIT = (
    orjson.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }) + b"\n"
)  # fmt: skip


def _spawn(env: Env, root: Path) -> tuple[subprocess.Popen[bytes], float]:
    """`nxs mcp serve` for ``root`` spawned and sent `initialize`, and the seconds to its result."""
    argv = [env.python, "-m", "nxs", "mcp", "serve", "--workspace", str(root)]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env.env, cwd=root,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INIT)
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = time.perf_counter() - start
    if b'"result"' not in line:
        proc.kill()
        raise BenchError(f"initialize got {line[:300]!r}")
    return proc, took


def _initialize(env: Env, root: Path) -> float:
    """Spawn `nxs mcp serve` and time it to the `initialize` result."""
    proc, took = _spawn(env, root)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=60)
    return took


def measure(env: Env, root: Path, n: int) -> list[Figure]:
    """Every figure of the issue on the store at ``root`` (``n`` memories; add writes to it)."""
    nxm, nxs = env.program("nxm"), env.program("nxs")
    ws = ["--workspace", str(root)]
    qs = list(QUERIES)
    keys = env.keys(root, env.repeat + 2)
    answer = orjson.loads(env.output([*nxm, "search", qs[0], "--json", *ws]))
    if answer.get("note") or not answer["results"]:
        raise BenchError(f"hybrid search did not run fully: {answer}")
    figs = [env.figure("nxm --help", env.time_runs(lambda _: [*nxm, "--help"]), target=2)]
    runs = env.time_runs(lambda _: [*nxm, "list", "--json", *ws])
    figs.append(env.figure(f"nxm list --json ({n:,} memories)", runs, target=2.5))
    runs = env.time_runs(lambda i: [*nxm, "show", keys[i][:8], "--json", *ws])
    figs.append(env.figure(f"nxm show --json ({n:,})", runs, target=2.5))
    runs = env.time_runs(lambda _: [*nxs, "prime", *ws])
    figs.append(env.figure(f"nxs prime ({n:,})", runs, target=1.5))
    runs = env.time_runs(lambda i: [*nxm, "search", qs[i % len(qs)], "--json", *ws])
    figs.append(env.figure(f"cold nxm search, hybrid ({n:,})", runs, target=6))
    runs = env.time_runs(
        lambda i: [*nxm, "search", qs[i % len(qs)], "--mode", "keyword", "--json", *ws]
    )
    figs.append(env.figure(f"cold nxm search --mode keyword ({n:,})", runs, target=4))
    runs = env.time_runs(lambda i: [*nxm, "recall", qs[i % len(qs)], "--json", *ws])
    figs.append(env.figure(f"cold nxm recall ({n:,})", runs, target=6))

    runs = env.time_runs(lambda i: add_argv(nxm, root, i, "speed"))
    done = orjson.loads(env.output(add_argv(nxm, root, 999, "speed")))
    if done["memory"]["processing"] != "READY":
        raise BenchError("nxm add left the memory PENDING: the model did not load")
    figs.append(env.figure(f"cold nxm add, embedded, READY ({n:,})", runs, target=6))
    # the searches after those adds index them first: a search's cost after a write
    runs = env.time_runs(lambda i: [*nxm, "search", qs[i % len(qs)], "--json", *ws], warmup=0)
    figs.append(
        env.figure(
            f"cold nxm search, hybrid, right after 6 adds ({n:,})", runs, target=None,
            note="informational: the first indexes the adds",
        )
    )  # fmt: skip
    init = Runs()
    _initialize(env, root)
    for _ in range(env.repeat):
        init.baseline.append(env.run([env.python, "-c", "import mcp"]))
        init.append(_initialize(env, root))
    fig = env.figure("MCP spawn -> initialize result (vs python -c 'import mcp')", init, target=1.2)
    figs.append(fig)
    figs.append(_first_search(env, root, n))
    peer = _peer(env)
    if peer is not None:
        figs.append(peer)
    return figs


def _first_search(env: Env, root: Path, n: int) -> Figure:
    from bench.bench_first import measure as first

    got = first(root, 3 if env.quick else 5, env.log, ("first",))["first"]
    value = statistics.median(got)
    return Figure(
        f"first MCP memory_search right after initialized ({n:,}), target 2 s idle",
        value, runs=got, met=value <= 2.0, note="absolute target: 2 s on an idle machine",
    )  # fmt: skip


def _peer(env: Env) -> Figure | None:
    bm = os.environ.get("NXS_BENCH_BM")
    if not bm:
        env.log("  peer: NXS_BENCH_BM not set (basic-memory's bm), no peer row")
        return None
    home = os.environ.get("NXS_BENCH_BM_HOME", "")
    notes = len(list(Path(home, "basic-memory").glob("*.md"))) if home else 0
    peer_env = {**env.env, "HOME": home} if home else env.env
    saved, env.env = env.env, peer_env
    try:
        runs = env.time_runs(lambda i: [bm, "tool", "search-notes", QUERIES[i % 6], "--json"])
    finally:
        env.env = saved
    return env.figure(
        f"peer: basic-memory `bm tool search-notes` ({notes:,} notes, keyword)", runs,
        target=None, note="basic-memory 0.24 (Python 3.12 venv); its semantic search "
        "needs a download, so keyword-only",
    )  # fmt: skip


@bench("speed", heavy=True, help="issue 20: every cold seam call against its baseline")
def speed(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("the embedding model is not installed: run `nxm model setup`")
    n = QUICK if env.quick else BIG
    root, _ = env.workspace(n, "speed")
    return measure(env, root, n)


def main(argv: list[str] | None = None) -> int:
    """Run `speed` on a copy of an existing store; print the table (bench/run.py's format)."""
    from bench.run import machine, markdown

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reuse", type=Path, required=True, help="a workspace to copy")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="3 first searches, not 5")
    args = parser.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    work = Path(tempfile.mkdtemp(prefix="nxs-speed-"))
    root = work / "ws"
    shutil.copytree(args.reuse, root, symlinks=True)
    env = Env(work, quick=args.quick, repeat=max(args.repeat, 5), log=log)
    n = orjson.loads(env.output([*env.program("nxm"), "list", "--json", "--workspace", str(root)]))[
        "total"
    ]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    env.measure_baseline()
    try:
        figs = measure(env, root, n)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results = {
        "command": "python -m bench.bench_speed" + "".join(f" {a}" for a in (argv or sys.argv[1:])),
        "started": started, "machine": machine(), "load_start": load_start,
        "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "baseline": env.baseline, "baseline_runs": env.baseline_runs,
        "figures": [f.row() for f in figs], "errors": {},
    }  # fmt: skip
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "speed-latest.json").write_text(json.dumps(results, indent=2))
    (out / "speed-latest.md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
