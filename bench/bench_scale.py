"""Scale: ingest, warm search through the MCP server, cold CLI search, disk, server memory.

    python -m bench.bench_scale --n 10000             # one store size (real model)
    python -m bench.bench_scale --n 10000 --n 100000  # both sizes of issue 7
    python -m bench.bench_scale --n 1000 --writes 200 # a quick look
    python -m bench.bench_scale --n 10000 --keep      # ...keeping the scratch workspaces, then
    python -m bench.bench_scale --n 10000 --reuse DIR # copy DIR's imported store, do not import
    python bench/run.py --only scale [--quick]        # 10,000 (1,000 with --quick) as figures

For each size: seeded synthetic memories (`bench.corpus`, realistic project knowledge) are loaded
with `nxm import` (wall time, memories/s); the store's disk size is measured; a real MCP client
starts `nxs mcp serve` over stdio and calls ``memory_search`` (hybrid, limit 10) with rotating
queries (warm p50/p95 after 3 untimed calls); the server's peak RSS is its ``VmHWM``. Then
``--writes`` single ``memory_add`` calls go through the same server, with 10 searches timed after
every eighth of them and the table's fragment count (the store compacts itself every
`nxm.store.index.COMPACT_EVERY` fragments, so search must not slow down), and search is timed again. Cold ``nxm search`` is a fresh process each time. Results go to bench/out/scale-*.json.
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
SEARCHES_DURING = 10  # searches timed after every eighth of the writes
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


def _children_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's children: the server.

    On a loaded machine wall time counts waiting for a core; CPU time does not."""
    total = 0.0
    me, tick = os.getpid(), os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == me:
                total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


async def _serve(root: Path, searches: int, writes: int, log: Any) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from nxm.store import Store
    from nxs.workspace import find

    store = Store(find(str(root)))

    def fragments() -> int:
        table = store.index.table()
        table.checkout_latest()
        return int(table.stats()["fragment_stats"]["num_fragments"])

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
            cpu = _children_cpu()
            warm = [await search(i) for i in range(searches)]
            out["warm_cpu_ms"] = 1000 * (_children_cpu() - cpu) / searches
            out["warm_p50_ms"] = 1000 * statistics.median(warm)
            out["warm_p95_ms"] = 1000 * _pct(warm, 0.95)
            out["warm_load"] = os.getloadavg()[0]  # 1-minute load average: 2 cores here
            out["server_peak_rss_warm_mb"] = max(_children_hwm().values(), default=0) / 1024
            log(
                f"  warm search p50 {out['warm_p50_ms']:.1f} ms, p95 {out['warm_p95_ms']:.1f} ms, "
                f"server CPU {out['warm_cpu_ms']:.1f} ms a search"
            )
            if writes:
                each: list[float] = []
                during = []  # (writes so far, fragments, search p50 ms, server peak RSS MB)
                step = max(1, writes // 8)
                for i in range(writes):
                    t0 = time.perf_counter()
                    got = await client.call_tool(
                        "memory_add",
                        {
                            "body": f"Scale note {i}: the nightly export of shard {i % 97} "
                            f"finished in {i % 53 + 4} minutes after the {i % 7}th retry.",
                            "introduction": f"Nightly export of shard {i % 97}, note {i}",
                        },
                    )
                    each.append(time.perf_counter() - t0)
                    if got.is_error:
                        raise BenchError(f"memory_add failed: {got.content}")
                    if (i + 1) % step == 0 or i + 1 == writes:
                        ts = [await search(j) for j in range(SEARCHES_DURING)]
                        p50 = round(1000 * statistics.median(ts), 1)
                        peak = round(max(_children_hwm().values(), default=0) / 1024)
                        during.append([i + 1, fragments(), p50, peak])
                        log(
                            f"  after {i + 1} adds ({1000 * statistics.median(each):.0f} ms "
                            f"each): {during[-1][1]} fragments, search p50 {p50} ms, "
                            f"server peak RSS {peak} MB"
                        )
                out["writes"] = writes
                out["write_each_ms"] = 1000 * statistics.mean(each)
                out["write_p50_ms"] = 1000 * statistics.median(each)
                out["write_p95_ms"] = 1000 * _pct(each, 0.95)
                out["search_during_writes"] = during
                after = [await search(i) for i in range(searches)]
                out["after_writes_p50_ms"] = 1000 * statistics.median(after)
                out["after_writes_p95_ms"] = 1000 * _pct(after, 0.95)
                log(
                    f"  {writes} single adds ({out['write_each_ms']:.0f} ms each), then search "
                    f"p50 {out['after_writes_p50_ms']:.1f} ms, p95 {out['after_writes_p95_ms']:.1f}"
                )
            out["server_peak_rss_mb"] = max(_children_hwm().values(), default=0) / 1024
    return out


def _import(n: int, root: Path, work: Path, log: Any, model: str | None) -> dict[str, Any]:
    """A fresh workspace at ``root`` with ``n`` memories loaded by `nxm import`: its figures."""
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
    got.update(ingest_s=took, ingest_per_s=n / took, import_load=os.getloadavg()[0])
    log(f"  nxm import: {took:.1f} s ({n / took:.0f}/s)")
    got["disk_mb"] = (_du(root / ".nxs" / "memories") + _du(root / ".nxs" / "history")) / 1e6
    got["cache_mb"] = _du(root / ".nxs" / "index") / 1e6  # the local index and record cache
    return got


def measure(
    n: int,
    work: Path,
    log: Any,
    writes: int = WRITES,
    model: str | None = None,
    source: Path | None = None,
) -> dict[str, Any]:
    """Every figure for one store size (from a copy of ``source``'s import, when given)."""
    import anyio
    import orjson

    from nxm.store import Store
    from nxs.workspace import find

    root = work / f"scale-{n}"
    kept = source / f"scale-{n}" if source else None
    if kept and (kept / "ingest.json").exists():
        shutil.copytree(kept, root)
        got = orjson.loads((root / "ingest.json").read_bytes())
        if got["model"] != (model or "default"):
            raise BenchError(f"{kept} was imported with model {got['model']}, not {model}")
        log(f"[{n:,}] copied {kept} (imported in {got['ingest_s']:.1f} s by an earlier run)")
    else:
        got = _import(n, root, work, log, model)
        (root / "ingest.json").write_bytes(orjson.dumps(got))
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
    table = Store(find(str(root))).index.table()
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
    parser.add_argument(
        "--reuse",
        type=Path,
        help="scratch directory of an earlier --keep run: copy its imported stores, not import",
    )
    args = parser.parse_args(argv)
    import orjson

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    work = Path(tempfile.mkdtemp(prefix="nxs-scale-"))
    if args.keep:
        log(f"scratch workspaces kept in {work}")
    results = []
    try:
        for n in args.n or [10_000]:
            results.append(measure(n, work, log, args.writes, args.model, args.reuse))
            results[-1]["load_end"] = round(os.getloadavg()[0], 2)
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
