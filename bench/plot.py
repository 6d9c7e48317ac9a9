"""Plot warm search latency against store size from the scale runs' results.

    python -m bench.plot                                 # every bench/out/scale-*.json
    python -m bench.plot --since 20261130-062300         # runs from that time on (file names)
    python -m bench.plot --out docs/scale.png            # where the PNG goes (the default)

Reads the ``bench/out/scale-*.json`` files (written by ``python -m bench.bench_scale``) and draws
warm ``memory_search`` latency through the MCP server against store size (log scale): each run's
p50 as a dot, the median over the runs of each size as the line (p50 and p95), and the issue's
targets. Needs matplotlib (``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
TARGETS = {10_000: 30.0, 100_000: 80.0}  # warm p50, ms (issue 7)


def runs_by_size(paths: list[Path]) -> dict[int, list[dict]]:
    """Every run with a warm search, by store size."""
    runs: dict[int, list[dict]] = {}
    for path in sorted(paths):
        for run in json.loads(path.read_text()):
            if run.get("warm_p50_ms") is not None:
                runs.setdefault(run["n"], []).append(run)
    return dict(sorted(runs.items()))


def plot(runs: dict[int, list[dict]], out: Path) -> dict[int, tuple[float, float]]:
    """Draw the PNG; returns each size's median (p50, p95)."""
    import statistics

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(runs)
    medians = {
        n: (statistics.median(r["warm_p50_ms"] for r in rs),
            statistics.median(r["warm_p95_ms"] for r in rs))
        for n, rs in runs.items()
    }  # fmt: skip
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for n, rs in runs.items():
        ax.scatter([n] * len(rs), [r["warm_p50_ms"] for r in rs], s=12, c="tab:blue", alpha=0.35)
    ax.plot(sizes, [medians[n][0] for n in sizes], "o-", c="tab:blue", label="warm p50 (median)")
    ax.plot(sizes, [medians[n][1] for n in sizes], "s--", c="tab:orange", label="warm p95 (median)")
    ax.scatter(
        list(TARGETS), list(TARGETS.values()), marker="_", s=400, c="red", label="target p50"
    )
    for n in sizes:
        ax.annotate(f"{medians[n][0]:.0f} ms ({len(runs[n])} run{'s' if len(runs[n]) > 1 else ''})", (n, medians[n][0]),
                    textcoords="offset points", xytext=(6, -12), fontsize=8)  # fmt: skip
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.set_xlabel("memories in the store")
    ax.set_ylabel("memory_search, ms (MCP, hybrid, limit 10)")
    ax.set_ylim(bottom=0)
    ax.set_title("Warm search latency against store size (2 cores)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out)
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parents[1]
    parser.add_argument("--out", type=Path, default=root / "docs" / "scale.png")
    parser.add_argument("--since", default="", help="only files named scale-<this or later>")
    args = parser.parse_args()
    paths = [p for p in OUT.glob("scale-*.json") if p.stem >= f"scale-{args.since}"]
    runs = runs_by_size(paths)
    if not runs:
        raise SystemExit("no scale results in bench/out/: run `python -m bench.bench_scale` first")
    for n, (p50, p95) in plot(runs, args.out).items():
        each = ", ".join(f"{r['warm_p50_ms']:.1f}" for r in runs[n])
        print(f"{n:>7,}: median p50 {p50:.1f} ms, p95 {p95:.1f} ms (runs' p50: {each})")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
