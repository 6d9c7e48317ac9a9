"""Scale: ingest, warm search through the MCP server, cold CLI search, disk, server memory.

    python -m bench.bench_scale --n 10000             # one store size (real model)
    python -m bench.bench_scale --n 10000 --n 100000  # both sizes of issue 7
    python -m bench.bench_scale --n 1000 --writes 200 # a quick look
    python bench/run.py --only scale [--quick]        # 10,000 (1,000 with --quick) as figures

For each size: seeded synthetic memories (`bench.corpus`, realistic project knowledge) are loaded
with `nxm import` (wall time, memories/s); the store's disk size is measured; a real MCP client
starts `nxs mcp serve` over stdio and calls ``memory_search`` (hybrid, limit 10) with rotating
queries (warm p50/p95 after 3 untimed calls); the server's peak RSS is its ``VmHWM``. Then
``--writes`` single ``memory_add`` calls go through the same server, and search is timed again
(the store compacts itself every `nxm.store.COMPACT_EVERY` fragments, so it must not slow
down). Cold ``nxm search`` is a fresh process each time. Results go to bench/out/scale-*.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.core import BenchError, Env, Figure, bench  # noqa: E402
from bench.corpus import QUERIES, jsonl  # noqa: E402

SEARCHES = 60
WRITES = 2000


def _program(name: str) -> str:
    script = Path(sys.executable).with_name(name)
    return str(script) if script.exists() else (shutil.which(name) or name)


def _env() -> dict[str, str]:
    env = {**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1", "NXS_ACTOR": "bench"}
    env.pop("NXS_WORKSPACE", None)
    return env


def _run(argv: list[str]) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=_env(), check=False)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-800:]!r}")
    return took, done.stdout


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _children_hwm() -> dict[int, int]:
    """VmHWM (kB) of this process's children: the server is one of them."""
    out = {}
    me = os.getpid()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid != me:
                continue
            for ln in (proc / "status").read_text().splitlines():
                if ln.startswith("VmHWM:"):
                    out[int(proc.name)] = int(ln.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return out


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


async def _serve(root: Path, searches: int, writes: int, log: Any) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nxs", "mcp", "serve", "--workspace", str(root)],
        env=_env(),
        cwd=str(root),
    )
    qs = list(QUERIES)
    out: dict[str, Any] = {}
    with open(root / "server.log", "w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=600
        ) as client:

            async def search(i: int) -> float:
                t0 = time.perf_counter()
                got = await client.call_tool(
                    "memory_search", {"query": qs[i % len(qs)], "limit": 10}
                )
                took = time.perf_counter() - t0
                if got.is_error:
                    raise BenchError(f"memory_search failed: {got.content}")
                return took

            for i in range(3):
                await search(-1 - i)
            warm = [await search(i) for i in range(searches)]
            out["warm_p50_ms"] = 1000 * statistics.median(warm)
            out["warm_p95_ms"] = 1000 * _pct(warm, 0.95)
            log(f"  warm search p50 {out['warm_p50_ms']:.1f} ms, p95 {out['warm_p95_ms']:.1f} ms")
            if writes:
                t0 = time.perf_counter()
                for i in range(writes):
                    got = await client.call_tool(
                        "memory_add",
                        {
                            "body": f"Scale note {i}: the nightly export of shard {i % 97} "
                            f"finished in {i % 53 + 4} minutes after the {i % 7}th retry.",
                            "introduction": f"Nightly export of shard {i % 97}, note {i}",
                        },
                    )
                    if got.is_error:
                        raise BenchError(f"memory_add failed: {got.content}")
                out["writes"] = writes
                out["write_each_ms"] = 1000 * (time.perf_counter() - t0) / writes
                after = [await search(i) for i in range(searches)]
                out["after_writes_p50_ms"] = 1000 * statistics.median(after)
                out["after_writes_p95_ms"] = 1000 * _pct(after, 0.95)
                log(
                    f"  {writes} single adds ({out['write_each_ms']:.0f} ms each), then search "
                    f"p50 {out['after_writes_p50_ms']:.1f} ms, p95 {out['after_writes_p95_ms']:.1f}"
                )
            out["server_peak_rss_mb"] = max(_children_hwm().values(), default=0) / 1024
    return out


def measure(
    n: int, work: Path, log: Any, writes: int = WRITES, model: str | None = None
) -> dict[str, Any]:
    """Every figure for one store size."""
    import anyio
    import orjson

    from nxm.store import Store
    from nxs.workspace import find

    root = work / f"scale-{n}"
    data = work / f"memories-{n}.jsonl"
    t0 = time.perf_counter()
    data.write_bytes(jsonl(n))
    log(f"[{n:,}] generated {n:,} memories in {time.perf_counter() - t0:.1f} s")
    _run([_program("nxm"), "init", str(root)])
    if model:  # e.g. "hash": the test embedder, to time the store without the model's cost
        cfg = root / ".nxs" / "config.toml"
        text = cfg.read_text()
        old = next(ln for ln in text.splitlines() if ln.startswith("model = "))
        cfg.write_text(text.replace(old, f'model = "{model}"'))
    took, _ = _run([_program("nxm"), "import", str(data), "--workspace", str(root)])
    got: dict[str, Any] = {"n": n, "model": model or "default"}
    got.update(ingest_s=took, ingest_per_s=n / took)
    log(f"  nxm import: {took:.1f} s ({n / took:.0f}/s)")
    got["disk_mb"] = _du(root / ".nxs" / "memory") / 1e6
    got["cache_mb"] = _du(root / ".nxs" / "cache") / 1e6
    qs = list(QUERIES)
    cold = []
    for i in range(5):
        t, out = _run(
            [_program("nxm"), "search", qs[i], "--json", "--limit", "10", "--workspace", str(root)]
        )
        if orjson.loads(out).get("note"):
            raise BenchError("cold search ran without the model")
        cold.append(t)
    got["cold_cli_p50_s"] = statistics.median(cold)
    log(f"  cold nxm search median {got['cold_cli_p50_s']:.2f} s; disk {got['disk_mb']:.0f} MB")
    got.update(anyio.run(_serve, root, SEARCHES, writes, log))
    table = Store(find(str(root))).table()
    got["fragments_end"] = table.stats()["fragment_stats"]["num_fragments"]
    got["disk_mb_end"] = _du(root / ".nxs" / "memory") / 1e6
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in got.items()}


@bench("scale", heavy=True, help="10,000 memories: warm MCP search p50/p95, RSS, writes, cold CLI")
def scale(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("the embedding model is not installed: run `nxm model setup`")
    n = 1000 if env.quick else 10_000
    got = measure(n, env.work, env.log, writes=200 if env.quick else WRITES)
    env.facts[f"scale_{n}"] = got
    return [
        Figure(f"warm MCP memory_search p50 ({n:,} memories)", got["warm_p50_ms"] / 1000),
        Figure(
            f"warm MCP memory_search p50 after {got['writes']:,} single adds",
            got["after_writes_p50_ms"] / 1000,
        ),
        Figure(
            f"nxm import of {n:,} (memories/s)",
            got["ingest_per_s"],
            "throughput",
            note=f"server peak RSS {got['server_peak_rss_mb']:.0f} MB, disk {got['disk_mb']:.0f} MB",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, action="append", help="store size (repeatable)")
    parser.add_argument("--writes", type=int, default=WRITES, help="single adds before re-search")
    parser.add_argument("--model", default=None, help='embedding model (e.g. "hash")')
    parser.add_argument("--keep", action="store_true", help="keep the scratch workspaces")
    args = parser.parse_args(argv)
    import orjson

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    work = Path(tempfile.mkdtemp(prefix="nxs-scale-"))
    results = []
    try:
        for n in args.n or [10_000]:
            results.append(measure(n, work, log, args.writes, args.model))
            print(orjson.dumps(results[-1]).decode(), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (out / f"scale-{stamp}.json").write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
