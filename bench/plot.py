"""Plot warm search latency against store size from the scale runs' results.

    python -m bench.plot                       # newest bench/out/scale-*.json per size
    python -m bench.plot --out docs/scale.png  # where the PNG goes (this is the default)

Reads every ``bench/out/scale-*.json`` (written by ``python -m bench.bench_scale``), keeps the
newest run of each store size, and draws warm ``memory_search`` p50 and p95 through the MCP
server, with the issue's targets, on log-scaled store sizes. Needs matplotlib
(``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
TARGETS = {10_000: 30.0, 100_000: 80.0}  # warm p50, ms (issue 7)


def newest_per_size(paths: list[Path]) -> dict[int, dict]:
    """The newest run of each store size (files are named by time, so sorted is oldest first)."""
    runs: dict[int, dict] = {}
    for path in sorted(paths):
        for run in json.loads(path.read_text()):
            if run.get("warm_p50_ms") is not None:
                runs[run["n"]] = {**run, "file": path.name}
    return dict(sorted(runs.items()))


def plot(runs: dict[int, dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(runs)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    ax.plot(sizes, [runs[n]["warm_p50_ms"] for n in sizes], "o-", label="warm p50")
    ax.plot(sizes, [runs[n]["warm_p95_ms"] for n in sizes], "s--", label="warm p95")
    ax.scatter(
        list(TARGETS), list(TARGETS.values()), marker="_", s=400, c="red", label="target p50"
    )
    for n in sizes:
        ax.annotate(f"{runs[n]['warm_p50_ms']:.0f} ms", (n, runs[n]["warm_p50_ms"]),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parents[1]
    parser.add_argument("--out", type=Path, default=root / "docs" / "scale.png")
    args = parser.parse_args()
    runs = newest_per_size(list(OUT.glob("scale-*.json")))
    if not runs:
        raise SystemExit("no scale results in bench/out/: run `python -m bench.bench_scale` first")
    plot(runs, args.out)
    for n, run in runs.items():
        print(
            f"{n:>7,}: p50 {run['warm_p50_ms']:.1f} ms, p95 {run['warm_p95_ms']:.1f} ms ({run['file']})"
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
