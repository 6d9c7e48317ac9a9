"""The memory core's figures (issue 2's targets): help, reads, add, cold search, bulk import."""

from __future__ import annotations

from pathlib import Path

import orjson

from bench.core import ROOT, BenchError, Env, Figure, bench
from bench.corpus import QUERIES, add_argv

READ_STORE = 1000
BIG_STORE = 10_000
QUICK_STORE = 1000

# fastembed on its own: load the installed model, embed the same texts the import embeds.
FASTEMBED_SCRIPT = """
import sys, time, json
sys.path.insert(0, {root!r})
from bench.corpus import memories
from nxm.embed.model import MODEL_NAME, model_dir
from nxm.record import embedded_text
texts = [embedded_text(r) for r in sorted(memories({n}), key=lambda r: r["key"])]
t0 = time.perf_counter()
from fastembed import TextEmbedding
model = TextEmbedding(model_name=MODEL_NAME, specific_model_path=str(model_dir()))
t1 = time.perf_counter()
vectors = list(model.embed(texts, batch_size=256))
t2 = time.perf_counter()
assert len(vectors) == len(texts) and len(vectors[0]) == 384
print(json.dumps({{"load_s": t1 - t0, "embed_s": t2 - t1, "n": len(texts)}}))
"""


def _need_model(env: Env) -> None:
    if not env.model_installed():
        raise BenchError("the embedding model is not installed: run `nxm model setup`")


@bench("help", help="nxm --help (target <= 2x baseline)")
def help_(env: Env) -> list[Figure]:
    nxm = env.program("nxm")
    runs = env.time_runs(lambda _: [*nxm, "--help"])
    return [env.figure("nxm --help", runs, target=2)]


@bench("read", help="nxm show --json and nxm list --json on 1,000 memories (target <= 5x)")
def read(env: Env) -> list[Figure]:
    nxm = env.program("nxm")
    root, _ = env.workspace(READ_STORE)
    ws = ["--workspace", str(root)]
    keys = env.keys(root, env.repeat + 2)
    show = env.time_runs(lambda i: [*nxm, "show", keys[i][:6], "--json", *ws])
    listing = env.time_runs(lambda _: [*nxm, "list", "--json", *ws])
    # Informational: the first read after the record cache is gone reads every memory file.
    cold = []
    for i in range(3):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{root / '.nxs' / 'index' / 'cache.db'}{suffix}").unlink(missing_ok=True)
        cold.append(env.run([*nxm, "show", keys[i][:6], "--json", *ws]))
    return [
        env.figure("nxm show --json (1,000 memories)", show, target=5),
        env.figure("nxm list --json (1,000 memories)", listing, target=5),
        env.figure(
            "nxm show --json, record cache missing (read from the files)",
            cold,
            target=None,
            note="informational: as after a fresh clone",
        ),
    ]


@bench("add", help="nxm add with the real model on 1,000 memories (target <= 15x)")
def add(env: Env) -> list[Figure]:
    _need_model(env)
    nxm = env.program("nxm")
    root, _ = env.workspace(READ_STORE)
    runs = env.time_runs(lambda i: add_argv(nxm, root, i, "bench"))
    answer = orjson.loads(env.output(add_argv(nxm, root, 999, "bench")))
    processing = answer["memory"]["processing"]
    if processing != "READY":
        raise BenchError(f"nxm add left the memory {processing}: the model did not load")
    return [env.figure("nxm add, embedded (1,000 memories)", runs, target=15)]


@bench("search", heavy=True, help="cold nxm search on 10,000 memories (target <= 18x)")
def search(env: Env) -> list[Figure]:
    _need_model(env)
    nxm = env.program("nxm")
    n = QUICK_STORE if env.quick else BIG_STORE
    root, _ = env.workspace(n, "bulk")
    ws = ["--workspace", str(root)]
    qs = list(QUERIES)
    answer = orjson.loads(env.output([*nxm, "search", qs[0], "--json", *ws]))
    if answer.get("note") or not answer["results"]:
        raise BenchError(f"hybrid search did not run fully: {answer}")
    hybrid = env.time_runs(lambda i: [*nxm, "search", qs[i % len(qs)], "--json", *ws])
    keyword = env.time_runs(
        lambda i: [*nxm, "search", qs[i % len(qs)], "--mode", "keyword", "--json", *ws]
    )
    return [
        env.figure(f"cold nxm search, hybrid ({n:,} memories)", hybrid, target=18),
        env.figure(
            f"cold nxm search --mode keyword ({n:,} memories)",
            keyword,
            target=None,
            note="informational: no model load",
        ),
    ]


@bench("import", heavy=True, help="bulk add of 10,000 via nxm import vs fastembed (target >= 0.8)")
def import_(env: Env) -> list[Figure]:
    _need_model(env)
    n = QUICK_STORE if env.quick else BIG_STORE
    root, took = env.workspace(n, "bulk")
    answer = orjson.loads(
        env.output([*env.program("nxm"), "list", "--json", "--workspace", str(root)])
    )
    if answer["total"] != n:
        raise BenchError(f"import left {answer['total']} memories, expected {n}")
    pending = orjson.loads(
        env.output(
            [*env.program("nxm"), "embed", "--json", "--workspace", str(root)]
        )  # embeds nothing when the import embedded everything
    )
    if pending["embedded"]:
        raise BenchError(f"import left {pending['embedded']} memories PENDING")
    script = FASTEMBED_SCRIPT.format(root=str(ROOT), n=n)
    ref = orjson.loads(env.output([env.python, "-c", script]))
    env.facts["fastembed"] = ref
    env.facts["import_wall_s"] = took
    fast = ref["n"] / ref["embed_s"]
    ours = n / took
    return [
        env.throughput(
            f"nxm import of {n:,} memories, memories/s (wall time of the whole process)",
            ours,
            fast,
            target=0.8,
            note=(
                f"import {took:.1f} s wall; fastembed alone: embed {ref['embed_s']:.1f} s "
                f"(+ {ref['load_s']:.1f} s model load, not counted) = {fast:.0f} texts/s"
            ),
        )
    ]
