"""Run the benchmarks: each figure and its ratio to a baseline process measured in the same run.

    python bench/run.py                 # every bench, full size (10,000-memory stores)
    python bench/run.py --quick         # heavy benches at 1,000 memories
    python bench/run.py --only search   # one bench (repeat --only, or comma-separate)
    python bench/run.py --list          # the registered benches

Benches live in ``bench/bench_*.py`` (see `bench.core`). Results go to ``bench/out/``
(git-ignored): ``results-<time>.json``, ``latest.json`` and ``latest.md``, the Markdown table
that docs/benchmarks.md quotes.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.core import REGISTRY, BenchError, Env, Figure  # noqa: E402

OUT = ROOT / "bench" / "out"


def load_benches() -> None:
    """Import every bench module: the memory core's figures first, then the others by name."""
    names = sorted(p.stem for p in (ROOT / "bench").glob("bench_*.py"))
    for name in sorted(names, key=lambda n: (n != "bench_memory", n)):
        importlib.import_module(f"bench.{name}")


def machine() -> dict[str, object]:
    cpu = "unknown"
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for pkg in ("typer", "lancedb", "fastembed", "onnxruntime", "orjson"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": commit,
        "versions": versions,
    }


def _fmt_value(f: Figure) -> str:
    if f.kind == "throughput":
        return f"{f.value:,.0f}/s"
    return f"{f.value:.3f} s"


def _fmt_ratio(f: Figure) -> str:
    if f.ratio is None:
        return "-"
    return f"{f.ratio:.2f}" if f.kind == "throughput" else f"{f.ratio:.2f}×"


def _fmt_target(f: Figure) -> str:
    if f.target is None:
        return "-"
    return f"≥ {f.target:g} of fastembed" if f.kind == "throughput" else f"≤ {f.target:g}×"


def _verdict(f: Figure) -> str:
    if f.met is None:
        return "info"
    return "met" if f.met else "NOT MET"


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = [
        f"Command: `{results['command']}` · {results['started']} · commit {m['commit']}  ",
        f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']}, {m['platform']}  ",
        f"Load average at start/end: {results['load_start']} / {results['load_end']}  ",
        f'Baseline `python -c "import typer, orjson"`: median {results["baseline"]:.3f} s '
        f"of {len(results['baseline_runs'])} runs at the start; each timed figure is compared "
        "with baseline runs interleaved with its own (column *baseline*)",
        "",
        "| figure | median | baseline | ratio | target | verdict |",
        "|---|---:|---:|---:|---|---|",
    ]
    for f in results["figures"]:
        fig = Figure(**f)
        base = "-"
        if fig.reference:
            base = f"{fig.reference:.3f} s" if fig.kind == "time" else f"{fig.reference:,.0f}/s"
        lines.append(
            f"| {fig.name} | {_fmt_value(fig)} | {base} | {_fmt_ratio(fig)} "
            f"| {_fmt_target(fig)} | {_verdict(fig)} |"
        )
    for name, error in results["errors"].items():
        lines.append(f"| {name} | - | - | - | - | not run: {error.splitlines()[0][:120]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="heavy benches at 1,000 memories")
    parser.add_argument("--only", action="append", default=[], help="run only these benches")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (>= 5)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch workspaces")
    parser.add_argument("--list", action="store_true", help="list the benches and exit")
    args = parser.parse_args(argv)

    load_benches()
    if args.list:
        for b in REGISTRY.values():
            print(f"{b.name:10} {'(heavy) ' if b.heavy else ''}{b.help}")
        return 0
    only = [n for item in args.only for n in item.split(",") if n]
    unknown = [n for n in only if n not in REGISTRY]
    if unknown:
        print(f"unknown bench: {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    chosen = [b for b in REGISTRY.values() if not only or b.name in only]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    work = Path(tempfile.mkdtemp(prefix="nxs-bench-"))
    env = Env(work, quick=args.quick, repeat=max(args.repeat, 5), log=log)
    started = datetime.now(UTC)
    command = "python bench/run.py" + "".join(f" {a}" for a in (argv or sys.argv[1:]))
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    info = machine()
    log(f"{info['nproc']} cores, {info['cpu']}; scratch {work}")
    env.measure_baseline()
    log(f"baseline python -c 'import typer, orjson': {env.baseline:.3f} s (median)")
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    timings: dict[str, float] = {}
    try:
        for b in chosen:
            log(f"[{b.name}] {b.help}")
            t0 = time.perf_counter()
            try:
                got = b.fn(env)
            except BenchError as exc:
                errors[b.name] = str(exc)
                log(f"  not run: {exc}")
                continue
            finally:
                timings[b.name] = round(time.perf_counter() - t0, 1)
            for f in got:
                figures.append(f)
                target = f" target {_fmt_target(f)}: {_verdict(f)}" if f.target is not None else ""
                print(f"{f.name:62} {_fmt_value(f):>10}  {_fmt_ratio(f):>7}{target}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results = {
        "command": command,
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quick": args.quick,
        "machine": info,
        "load_start": load_start,
        "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "baseline": env.baseline,
        "baseline_runs": env.baseline_runs,
        "baseline_spread": statistics.pstdev(env.baseline_runs),
        "figures": [f.row() for f in figures],
        "errors": errors,
        "bench_seconds": timings,
        "facts": env.facts,
    }
    import orjson

    OUT.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(results, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    stamp = started.strftime("%Y%m%d-%H%M%S")
    (OUT / f"results-{stamp}.json").write_bytes(data)
    (OUT / "latest.json").write_bytes(data)
    (OUT / "latest.md").write_text(markdown(results), encoding="utf-8")
    log(f"wrote {OUT / f'results-{stamp}.json'} and {OUT / 'latest.md'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
