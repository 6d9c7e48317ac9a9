"""The store in git: a write's cost against the store's size, a search after a checkout, a clone.

    python -m bench.run --only git-add,git-checkout,git-clone
    NXS_BENCH_GIT_SIZES=100,10000 python -m bench.run --only git-add
    NXS_BENCH_GIT_SIZES=100,100000 NXS_BENCH_GIT_MODEL=hash python -m bench.run --only git-add

- ``git-add``: cold ``nxm add`` (the real model, READY on return) at 100 memories and at the
  larger sizes; each ratio is to the 100-memory figure of the same run (targets: 1.2 at
  10,000, 1.5 at 100,000). ``NXS_BENCH_GIT_MODEL=hash`` builds the stores with the test
  embedder (a 100,000-memory store with the real model takes hours to embed here); an add's
  own embedding costs the same at every size, so the ratio still says how a write grows.
- ``git-checkout``: a store committed on two branches that differ by 50 memories; cold
  ``nxm search`` right after each ``git checkout`` (the next command reads the changed files,
  writes them into the index and embeds what its vector cache lacks) against the same search
  with nothing changed (target 2x).
- ``git-clone``: ``git clone`` of a repository holding 1,000 memories, then the first
  ``nxm search`` end to end (it reads the files and embeds all of them); its embedding rate
  against fastembed's own batch rate on the same texts in the same run (target >= 0.8).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import orjson

from bench.core import BenchError, Env, Figure, bench
from bench.corpus import add_argv, jsonl

SMALL = 100
QUERY = "how does the export worker retry uploads"


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)
    if done.returncode:
        raise BenchError(f"git {' '.join(args)}: {done.stderr.decode()[-400:]}")


def _sizes(env: Env) -> list[int]:
    given = os.environ.get("NXS_BENCH_GIT_SIZES")
    if given:
        return [int(x) for x in given.split(",")]
    return [SMALL, 1000] if env.quick else [SMALL, 10_000]


@bench("git-add", heavy=True, help="cold nxm add at 100 and 10,000 memories (ratio <= 1.2)")
def git_add(env: Env) -> list[Figure]:
    """The sizes' adds are interleaved, so each ratio compares runs made under the same load."""
    model = os.environ.get("NXS_BENCH_GIT_MODEL", "default")
    if model == "default" and not env.model_installed():
        raise BenchError("needs the model: nxm model setup")
    sizes = _sizes(env)
    roots = {n: env.workspace(n, "git-add", model)[0] for n in sizes}
    for n, root in roots.items():  # warm: the first command after an import reads every file
        answer = orjson.loads(
            env.output(add_argv(env.program("nxm"), root, n * 10 + 999, "git bench"))
        )
        if answer["memory"]["processing"] != "READY":
            raise BenchError("nxm add did not embed: the model did not load")
    runs: dict[int, list[float]] = {n: [] for n in sizes}
    for i in range(env.repeat):
        for n, root in roots.items():
            runs[n].append(env.run(add_argv(env.program("nxm"), root, n * 10 + i, "git bench")))
    small = statistics.median(runs[sizes[0]])
    figures = []
    for n in sizes:
        what = "" if model == "default" else f", {model} embedder"
        fig = env.figure(f"nxm add, embedded ({n:,} memories{what})", runs[n], target=None)
        if n != sizes[0]:
            fig.ratio = fig.value / small
            fig.target = 1.2 if n <= 10_000 else 1.5
            fig.met = fig.ratio <= fig.target
            fig.note = f"ratio to the {sizes[0]}-memory add, interleaved in this run"
        figures.append(fig)
    return figures


@bench("git-checkout", heavy=True, help="search right after a checkout (50 memories differ)")
def git_checkout(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("needs the model: nxm model setup")
    n = 1000 if env.quick else 10_000
    base, _ = env.workspace(n, "git-checkout")
    root = env.work / f"repo-checkout-{n}"
    if not root.exists():
        shutil.copytree(base, root)
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "base")
        _git(root, "checkout", "-qb", "other")
        data = env.work / "other-50.jsonl"
        data.write_bytes(jsonl(50, seed=99))
        env.run([*env.program("nxm"), "import", str(data), "--workspace", str(root)])
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "50 more")
    search = [*env.program("nxm"), "search", QUERY, "--json", "--workspace", str(root)]
    env.run(search)  # both branches' vectors are now in this machine's cache
    branches = ["main", "other"]

    warm, switched = [], []
    for i in range(env.repeat):  # interleaved: both under the same load
        warm.append(env.run(search))
        _git(root, "checkout", "-q", branches[i % 2])
        switched.append(env.run(search))
    fig = env.figure(f"nxm search after git checkout ({n:,} memories, 50 differ)", switched,
                     target=None)  # fmt: skip
    warm_fig = env.figure(f"nxm search, nothing changed ({n:,} memories)", warm, target=None)
    fig.ratio = fig.value / warm_fig.value
    fig.target, fig.met = 2.0, fig.ratio <= 2.0
    fig.note = "ratio to the same search with nothing changed (vectors cached: nothing embedded)"
    return [warm_fig, fig]


@bench("git-clone", heavy=True, help="fresh clone of 1,000 memories: first nxm search end to end")
def git_clone(env: Env) -> list[Figure]:
    if not env.model_installed():
        raise BenchError("needs the model: nxm model setup")
    n = 1000
    base, _ = env.workspace(n, "git-clone")
    origin = env.work / "repo-origin-1000"
    if not origin.exists():
        shutil.copytree(base, origin, ignore=shutil.ignore_patterns("index", "cache"))
        _git(origin, "init", "-q", "-b", "main")
        _git(origin, "add", "-A")
        _git(origin, "commit", "-qm", "a thousand memories")
    runs: list[float] = []
    for i in range(max(1, env.repeat // 2)):
        clone = env.work / f"clone-{i}"
        shutil.rmtree(clone, ignore_errors=True)
        start = time.perf_counter()
        _git(env.work, "clone", "-q", str(origin), str(clone))
        env.run([*env.program("nxm"), "search", QUERY, "--json", "--workspace", str(clone)])
        runs.append(time.perf_counter() - start)
    total = statistics.median(runs)
    rate = n / total
    reference = _fastembed_rate(origin)
    return [
        env.figure(
            f"git clone + first nxm search ({n:,} memories, all embedded)",
            runs,
            target=None,
            note="end to end: clone, read the files, embed, index, search",
        ),  # fmt: skip
        env.throughput(
            f"memories through the first search after a clone ({n:,})",
            rate,
            reference,
            target=0.8,
            note="memories/s of the whole first search against fastembed's batch "
            "embedding rate of the same texts",
        ),  # fmt: skip
    ]


def _fastembed_rate(root: Path) -> float:
    """fastembed's own batch rate (texts/s) on the indexed texts of a workspace's memories."""
    from nxm.embed import load_embedder
    from nxm.record import embedded_text
    from nxm.service import MemoryService
    from nxs.workspace import find

    service = MemoryService(find(str(root)))
    texts = [embedded_text(r) for r in service.store.records().values()]
    service.store.close()
    embedder = load_embedder(service.model_name)
    embedder.embed(texts[:32])  # warm
    start = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - start)
