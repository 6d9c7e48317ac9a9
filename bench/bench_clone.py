"""A fresh clone, on a fresh machine and on one that has the store already (issue 31).

    python bench/run.py --only clone           # 2,000 memories (~8 min: it embeds twice)
    python bench/run.py --only clone --quick   # 500

Each "machine" is a cache directory of its own (``NXS_CACHE_DIR``, the model linked in), so
the first clone starts with nothing derived and nothing embedded, as on a teammate's laptop.

- the first ``nxm list``, ``nxs prime`` and ``nxm search --mode keyword`` in a fresh clone
  (each in a clone of its own: they read the files, the keyword search builds the index
  without vectors) against the same command run again (target 2x);
- the first hybrid search there, which embeds every memory: its rate (memories/s, whole
  process) against the model's own batch rate on the same texts (target 0.8);
- a second clone (or worktree) on that machine: its first hybrid search, which embeds
  nothing, against a warm one; and the first search after pulling 50 memories made elsewhere
  (no target: it loads the model and embeds the 50).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.bench_git import QUERY, _fastembed_rate, _git
from bench.core import BenchError, Env, Figure, Runs, bench
from bench.corpus import jsonl

FULL, QUICK = 2000, 500


def _machine(env: Env, name: str) -> dict[str, str]:
    """The environment of a new machine: its own cache, the installed model linked in."""
    from nxm.embed.model import cache_root

    cache = env.work / f"machine-{name}"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    (cache / "models").symlink_to(cache_root() / "models")
    return {**env.env, "NXS_CACHE_DIR": str(cache)}


def _clone(env: Env, origin: Path, name: str) -> Path:
    clone = env.work / f"clone-{name}"
    shutil.rmtree(clone, ignore_errors=True)
    _git(env.work, "clone", "-q", str(origin), str(clone))
    return clone


def _timed(env: Env, argv: list[str], machine: dict[str, str]) -> float:
    saved, env.env = env.env, machine
    try:
        return env.run(argv)
    finally:
        env.env = saved


def _first_and_again(
    env: Env, origin: Path, name: str, argv: list[str], runs: int
) -> tuple[Runs, list[float]]:
    """``argv`` as the first command of a fresh clone on a fresh machine, then run again."""
    first, again = Runs(), []
    for i in range(runs):
        machine = _machine(env, f"{name}-{i}")
        clone = _clone(env, origin, f"{name}-{i}")
        args = [*argv, "--workspace", str(clone)]
        first.append(_timed(env, args, machine))
        again.append(_timed(env, args, machine))
        first.baseline.append(again[-1])  # the ratio's reference: the same command warm
    return first, again


@bench("clone", heavy=True, help="a fresh clone: first list, prime, searches; a second clone")
def clone(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("needs the model: nxm model setup")
    n = QUICK if env.quick else FULL
    nxm, nxs = env.program("nxm"), env.program("nxs")
    origin = env.work / f"origin-{n}"
    if not origin.exists():
        data = env.work / f"clone-{n}.jsonl"
        data.write_bytes(jsonl(n, seed=7))
        maker = _machine(env, "maker")
        _timed(env, [*nxm, "init", str(origin)], maker)
        _timed(env, [*nxm, "import", str(data), "--workspace", str(origin)], maker)
        _git(origin, "init", "-q", "-b", "main")
        _git(origin, "add", "-A")
        _git(origin, "commit", "-qm", f"{n} memories")
    runs = max(3, env.repeat // 2)
    figs = []
    for label, argv in (
        ("nxm list --json", [*nxm, "list", "--json"]),
        ("nxs prime", [*nxs, "prime"]),
        ("nxm search --mode keyword", [*nxm, "search", QUERY, "--mode", "keyword", "--json"]),
    ):
        first, _ = _first_and_again(env, origin, label.split()[1], argv, runs)
        figs.append(env.figure(
            f"fresh clone of {n:,}: first {label} (vs the same command again)", first, target=2,
            note="ratio to the same command run again in that clone",
        ))  # fmt: skip

    search = [*nxm, "search", QUERY, "--json"]
    machine = _machine(env, "laptop")
    one = _clone(env, origin, "laptop-1")
    took = _timed(env, [*search, "--workspace", str(one)], machine)
    rate = n / took
    figs.append(env.throughput(
        f"fresh clone of {n:,} on a fresh machine: the first hybrid search, memories/s",
        rate, _fastembed_rate(origin), target=0.8,
        note=f"{took:.1f} s end to end (reads, embeds every memory, indexes, searches) against "
        "the model's own batch rate on the same texts",
    ))  # fmt: skip
    warm = Runs()
    for _ in range(runs):
        warm.append(_timed(env, [*search, "--workspace", str(one)], machine))
    second = Runs()
    for i in range(runs):  # a second clone or worktree of that machine: nothing to embed
        other = _clone(env, origin, f"laptop-{i + 2}")
        second.append(_timed(env, [*search, "--workspace", str(other)], machine))
        second.baseline.append(warm[i])
    figs.append(env.figure(
        f"a second clone of {n:,} on that machine: its first hybrid search (vs a warm one)",
        second, target=2, note="reads the files and indexes them; every vector is the machine's",
    ))  # fmt: skip

    pulled = _pull_fifty(env, origin, one, machine, runs, search)
    figs.append(env.figure(
        f"the first hybrid search after pulling 50 memories made elsewhere ({n + 50:,})",
        pulled, target=None, note="loads the model, embeds the 50 and writes their index rows; "
        "vs a warm search",
    ))  # fmt: skip
    return figs


def _pull_fifty(
    env: Env, origin: Path, clone: Path, machine: dict[str, str], runs: int, search: list[str]
) -> Runs:
    """Pull 50 memories another machine added; the first search after each pull, timed."""
    nxm = env.program("nxm")
    elsewhere = _machine(env, "elsewhere")
    out = Runs()
    for i in range(runs):
        data = env.work / f"fifty-{i}.jsonl"
        data.write_bytes(jsonl(50, seed=100 + i))
        _timed(env, [*nxm, "import", str(data), "--workspace", str(origin)], elsewhere)
        _git(origin, "add", "-A")
        _git(origin, "commit", "-qm", f"fifty more ({i})")
        _git(clone, "pull", "-q", "origin", "main")
        out.append(_timed(env, [*search, "--workspace", str(clone)], machine))
        out.baseline.append(_timed(env, [*search, "--workspace", str(clone)], machine))
    return out


__all__ = ["clone"]
