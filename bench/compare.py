"""Two versions of nxs on the same store, interleaved run by run with the baseline process.

    python -m bench.compare --old OLD_TREE --old-ws WS_OLD --new-ws WS_NEW [--rounds 9]

OLD_TREE is an older checkout (``git archive REV | tar -x -C DIR``), run through ``PYTHONPATH``;
WS_OLD and WS_NEW hold the same memory files, each already searched once by its version (so
each has its own derived index). Each round runs ``python -c "import typer, orjson"``, then the
old command, then the new one, so both see the same load; the table gives each version's
median and its ratio to the median baseline, and new / old.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.corpus import QUERIES


def _run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--old-ws", type=Path, required=True)
    parser.add_argument("--new-ws", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    nxm, nxs = str(bindir / "nxm"), str(bindir / "nxs")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env = {"old": {**base, "PYTHONPATH": str(args.old)}, "new": base}
    ws = {"old": str(args.old_ws), "new": str(args.new_ws)}
    figures = {
        "nxm list --json": lambda w, i: [nxm, "list", "--json", "-w", w],
        "nxs prime": lambda w, i: [nxs, "prime", "-w", w],
        "nxm search, hybrid": lambda w, i: [nxm, "search", QUERIES[i % 6], "--json", "-w", w],
        "nxm search --mode keyword": lambda w, i: [nxm, "search", QUERIES[i % 6], "--mode",
                                                   "keyword", "--json", "-w", w],
        "nxm recall": lambda w, i: [nxm, "recall", QUERIES[i % 6], "--json", "-w", w],
        "nxm add, embedded": lambda w, i: [nxm, "add", f"Compare round {i}: {time.time_ns()}",
                                           "--introduction", f"round {i}", "--json", "-w", w],
    }  # fmt: skip
    print("| figure | old | old ratio | new | new ratio | new / old |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, make in figures.items():
        times: dict[str, list[float]] = {"base": [], "old": [], "new": []}
        for version in ("old", "new"):  # one untimed run each: the OS cache
            _run(make(ws[version], -1), env[version])
        for i in range(args.rounds):
            times["base"].append(_run([sys.executable, "-c", "import typer, orjson"], base))
            for version in ("old", "new") if i % 2 == 0 else ("new", "old"):
                times[version].append(_run(make(ws[version], i), env[version]))
        b, o, n = (statistics.median(times[k]) for k in ("base", "old", "new"))
        print(f"| {name} | {o:.3f} s | {o / b:.2f}× | {n:.3f} s | {n / b:.2f}× | {n / o:.2f} |",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
