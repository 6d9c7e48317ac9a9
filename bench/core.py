"""The benchmark harness: a registry of bench functions, the run's environment, and timing.

A bench is a function ``fn(env) -> list[Figure]`` registered with `@bench("name")` in any
``bench/bench_*.py`` module (the runner imports them all, so adding a file adds benches).
Every figure is a wall time (or a throughput) of a real process, and its ratio to the baseline
process ``python -c "import typer, orjson"`` measured in the same run.

    from bench.core import Env, Figure, bench

    @bench("prime", help="nxs prime on the 1,000-memory store")
    def prime(env: Env) -> list[Figure]:
        root, _ = env.workspace(1000)
        runs = env.time_runs(lambda _: [*env.program("nxs"), "prime", "--workspace", str(root)])
        return [env.figure("nxs prime (1,000 memories)", runs, target=5)]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ("-c", "import typer, orjson")


@dataclass
class Figure:
    """One measured figure.

    ``kind`` "time": ``value`` is a median wall time in seconds, ``ratio`` its multiple of the
    baseline, met when ``ratio <= target``. ``kind`` "throughput": ``value`` is items per second,
    ``ratio`` its fraction of ``reference``, met when ``ratio >= target``.
    """

    name: str
    value: float
    kind: str = "time"
    ratio: float | None = None
    target: float | None = None
    met: bool | None = None
    runs: list[float] = field(default_factory=list)
    reference: float | None = None  # time: the baseline median used; throughput: the reference
    note: str = ""
    baseline_runs: list[float] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        def rnd(v: Any) -> Any:
            if isinstance(v, float):
                return round(v, 4)
            return [rnd(x) for x in v] if isinstance(v, list) else v

        return {k: rnd(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Bench:
    name: str
    fn: Callable[[Env], list[Figure]]
    help: str
    heavy: bool  # scaled down by --quick


REGISTRY: dict[str, Bench] = {}


def bench(name: str, *, help: str = "", heavy: bool = False) -> Callable[..., Any]:
    """Register ``fn(env) -> list[Figure]`` under ``name`` (run order is registration order)."""

    def register(fn: Callable[[Env], list[Figure]]) -> Callable[[Env], list[Figure]]:
        if name in REGISTRY:
            raise ValueError(f"bench {name!r} registered twice")
        REGISTRY[name] = Bench(name, fn, help or (fn.__doc__ or "").strip(), heavy)
        return fn

    return register


class Runs(list[float]):
    """Wall times of a figure's runs, with the baseline runs interleaved with them."""

    def __init__(self) -> None:
        super().__init__()
        self.baseline: list[float] = []


class BenchError(RuntimeError):
    """A measured process failed: the figure would be meaningless."""


class Env:
    """What a bench gets: the interpreter, scratch space, shared stores, timing helpers."""

    def __init__(self, work: Path, *, quick: bool, repeat: int, log: Callable[[str], None]):
        self.work = work
        self.quick = quick
        self.repeat = repeat
        self.log = log
        self.python = sys.executable
        self.baseline: float = 0.0
        self.baseline_runs: list[float] = []
        self.facts: dict[str, Any] = {}  # extra measurements a bench wants in the JSON
        self._stores: dict[tuple[int, str, str], tuple[Path, float]] = {}
        self.env = {
            **os.environ,
            "NO_COLOR": "1",
            "HF_HUB_OFFLINE": "1",
            "NXS_ACTOR": "bench",
        }
        self.env.pop("NXS_WORKSPACE", None)
        # any value (even "0") stops Python writing .pyc files: every run would compile the
        # modules that have none (a fresh checkout's), which no installed package does
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    # -- commands ----------------------------------------------------------------------------

    def program(self, name: str) -> list[str]:
        """The console script beside this interpreter (not a pyenv/asdf shim, which adds ~0.3 s)."""
        script = Path(self.python).with_name(name)
        if script.exists():
            return [str(script)]
        found = shutil.which(name)
        if found is None:
            raise BenchError(f"{name} is not installed (pip install -e .)")
        return [found]

    def run(self, argv: list[str], *, stdin: bytes | None = None, cwd: Path | None = None) -> float:
        """Run a process once; its wall time in seconds. Raises BenchError when it fails."""
        start = time.perf_counter()
        done = subprocess.run(
            argv,
            input=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=cwd or self.work,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise BenchError(
                f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-800:]}"
            )
        return elapsed

    def output(self, argv: list[str], *, cwd: Path | None = None) -> bytes:
        """Run a process and return its stdout. Raises BenchError when it fails."""
        done = subprocess.run(
            argv, capture_output=True, env=self.env, cwd=cwd or self.work, check=False
        )
        if done.returncode != 0:
            raise BenchError(
                f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-800:]}"
            )
        return done.stdout

    def time_runs(
        self, make_argv: Callable[[int], list[str]], runs: int | None = None, warmup: int = 1
    ) -> Runs:
        """Wall times of ``runs`` processes (after ``warmup`` untimed ones to warm the OS cache).

        A baseline process runs just before each timed one, so a figure's ratio compares runs
        made under the same machine load (this machine is shared; load drifts over a long run).
        """
        runs = runs or self.repeat
        for i in range(warmup):
            self.run(make_argv(-1 - i))
        out = Runs()
        for i in range(runs):
            out.baseline.append(self.run([self.python, *BASELINE]))
            out.append(self.run(make_argv(i)))
        return out

    def measure_baseline(self) -> float:
        runs = max(self.repeat, 7)
        self.run([self.python, *BASELINE])
        self.baseline_runs = [self.run([self.python, *BASELINE]) for _ in range(runs)]
        self.baseline = statistics.median(self.baseline_runs)
        return self.baseline

    # -- figures -----------------------------------------------------------------------------

    def figure(
        self, name: str, runs: list[float], *, target: float | None, note: str = ""
    ) -> Figure:
        """A time figure from its runs: the median and its multiple of the baseline (the one
        interleaved with the runs when there is one, else the run's)."""
        value = statistics.median(runs)
        paired = getattr(runs, "baseline", None)
        reference = statistics.median(paired) if paired else self.baseline
        ratio = value / reference
        met = None if target is None else ratio <= target
        fig = Figure(name, value, "time", ratio, target, met, list(runs), reference, note)
        fig.baseline_runs = list(paired or [])
        return fig

    @staticmethod
    def throughput(
        name: str, value: float, reference: float, *, target: float | None, note: str = ""
    ) -> Figure:
        """A throughput figure (items/s) as a fraction of a reference throughput."""
        ratio = value / reference
        met = None if target is None else ratio >= target
        return Figure(name, value, "throughput", ratio, target, met, [], reference, note)

    # -- shared stores -----------------------------------------------------------------------

    def model_installed(self) -> bool:
        from nxm.embed.model import model_status

        return bool(model_status()["installed"])

    def workspace(
        self, n: int, label: str = "shared", model: str = "default"
    ) -> tuple[Path, float]:
        """A workspace holding ``n`` synthetic memories loaded by `nxm import` (built once per run).

        Returns its root and the wall time of the import. Benches that write to a store share
        the "shared" label; a bench that needs it untouched asks for its own label. ``model``
        "default" keeps the real model of a fresh workspace; any other value is written into its
        config (e.g. "hash", the test embedder).
        """
        key = (n, label, model)
        if key not in self._stores:
            from bench.corpus import jsonl

            root = self.work / f"ws-{n}-{label}-{model.replace('/', '_')}"
            data = self.work / f"memories-{n}.jsonl"
            if not data.exists():
                data.write_bytes(jsonl(n))
            self.run([*self.program("nxm"), "init", str(root)])
            if model != "default":
                cfg = root / ".nxs" / "config.toml"
                text = cfg.read_text()
                old = next(ln for ln in text.splitlines() if ln.startswith("model = "))
                cfg.write_text(text.replace(old, f'model = "{model}"'))
            self.log(
                f"  building the {label} {n:,}-memory store ({model} model) with nxm import ..."
            )
            took = self.run([*self.program("nxm"), "import", str(data), "--workspace", str(root)])
            self.log(f"  built in {took:.1f} s")
            self._stores[key] = (root, took)
        return self._stores[key]

    def keys(self, root: Path, count: int) -> list[str]:
        """The first ``count`` keys of a workspace's export (for show)."""
        import orjson

        out = self.output([*self.program("nxm"), "export", "--workspace", str(root)])
        return [orjson.loads(ln)["key"] for ln in out.splitlines()[:count]]
