"""The first `memory_search` a host sends right after `initialized`, against a warm one.

    python -m bench.bench_first                    # 1,000 memories, 5 servers per variant
    python -m bench.bench_first --n 1000 --runs 5  # the same, spelled out
    python -m bench.bench_first --against ../main  # and `first` with another checkout's server
    python bench/run.py --only first               # as figures

Each run starts a fresh `nxs mcp serve` over stdio with a real SDK client, sends
``initialize`` and ``initialized``, and at once calls ``memory_search`` (hybrid, limit 10):
the time from the call to its answer. Variants, interleaved run by run so the machine's load
falls on each alike:

- ``first``: the server as shipped (warm-up in the background once initialized);
- ``no-warm``: the same with ``NXS_MCP_WARM=0``, so the call loads everything itself: what a
  first call costs when nothing helps it and nothing is in its way;
- ``warm``: a search sent once the warm-up is over (the server's stderr says when), the cost
  of every search after the first.

A first search must not cost more than ``no-warm`` (the warm-up never holds a call back).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.core import BenchError, Env, Figure, bench  # noqa: E402

QUERY = "why does the billing-api retry webhooks twice"
VARIANTS = ("first", "no-warm", "warm")


async def _one(root: Path, variant: str, log_path: Path) -> float:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NXS_ACTOR": "bench"}
    env.pop("NXS_WORKSPACE", None)
    variant, _, code = variant.partition("@")  # first@DIR: the server's code from DIR
    if code:
        env["PYTHONPATH"] = code
    if variant == "warm":
        env["NXS_DEBUG"] = "1"  # the debug log says when the warm-up is done
    if variant == "no-warm":
        env["NXS_MCP_WARM"] = "0"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nxs", "mcp", "serve", "--workspace", str(root)],
        env=env,
        cwd=str(root),
    )
    with log_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            if variant == "warm":  # wait for the warm-up to say it is done
                deadline = time.monotonic() + 120
                while "warm-up done" not in log_path.read_text():
                    if time.monotonic() > deadline:
                        raise BenchError(f"no warm-up in 120 s: {log_path.read_text()[-800:]}")
                    await anyio.sleep(0.05)
            t0 = time.perf_counter()
            got = await client.call_tool("memory_search", {"query": QUERY, "limit": 10})
            took = time.perf_counter() - t0
            if got.is_error or '"note"' in got.content[0].text:
                raise BenchError(f"memory_search failed or ran without the model: {got.content}")
    return took


def measure(
    root: Path, runs: int, log: Any, variants: tuple[str, ...] = VARIANTS
) -> dict[str, list[float]]:
    """Seconds of each variant's first search, ``runs`` servers each (after one untimed round)."""
    import anyio

    out: dict[str, list[float]] = {v: [] for v in variants}
    scratch = Path(tempfile.mkdtemp(prefix="nxs-first-"))
    for i in range(runs + 1):
        for variant in variants:
            log_name = variant.replace("/", "_")  # first@DIR names a directory
            took = anyio.run(_one, root, variant, scratch / f"{log_name}-{i}.log")
            if i:  # the first round warms the OS file cache
                out[variant].append(took)
                log(f"  run {i} {variant}: {1000 * took:.0f} ms (load {os.getloadavg()[0]:.1f})")
    return out


@bench("first", heavy=True, help="first MCP memory_search right after initialized vs warm")
def first(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("the embedding model is not installed: run `nxm model setup`")
    n = 1000
    root, _ = env.workspace(n, label="first")
    got = measure(root, 3 if env.quick else 5, env.log)
    env.facts["first_search"] = got
    names = {
        "first": f"first MCP memory_search right after initialized ({n:,} memories)",
        "no-warm": "the same first search with the warm-up off (NXS_MCP_WARM=0)",
        "warm": "a memory_search once the warm-up is done",
    }
    return [Figure(names[v], statistics.median(got[v]), runs=got[v]) for v in VARIANTS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="store size")
    parser.add_argument("--runs", type=int, default=5, help="servers per variant")
    parser.add_argument("--reuse", type=Path, help="an existing workspace to search instead")
    parser.add_argument(
        "--variant", action="append", choices=VARIANTS, help="only these (repeatable)"
    )
    parser.add_argument(
        "--against", type=Path, help="also run `first` with the server's code from this checkout"
    )
    args = parser.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.reuse:
        root = args.reuse
    else:
        env = Env(Path(tempfile.mkdtemp(prefix="nxs-first-")), quick=False, repeat=1, log=log)
        root, _ = env.workspace(args.n, label="first")
    log(f"workspace {root} · load {os.getloadavg()}")
    variants = tuple(args.variant or VARIANTS)
    if args.against:
        variants = (f"first@{args.against.resolve()}", *variants)
    got = measure(root, args.runs, log, variants)
    for variant, runs in got.items():
        ms = sorted(round(1000 * t) for t in runs)
        print(f"{variant:8} median {1000 * statistics.median(runs):.0f} ms  runs {ms}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
