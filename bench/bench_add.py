"""Single adds in one long-lived process, as the MCP server makes them: where a write's time goes.

    python -m bench.bench_add --store /tmp/sc/reuse/scale-10000 --adds 60
    PYTHONPATH=OTHER_CHECKOUT python bench/bench_add.py --store ... # time another commit's code

The store (a workspace made by `bench.bench_scale --keep`) is copied to a scratch directory, a
`MemoryService` is opened once (model loaded, index open, one search), then ``--adds`` single
`add` calls are timed, each split into its parts: embedding, the memory files (journal, log,
Markdown: `Files.write`), the record cache (`Cache.put`), the index (`Index.write`: the LanceDB
merge_insert and upkeep), NEXUS_MEMORY.md (`Store.project`), following the files before the
write (`Store.sync`) and the rest (lock, duplicate check). Prints one JSON line: medians, p95
and max per part in milliseconds, and the 1-minute load average at the start and end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # last: PYTHONPATH may name another checkout's code to time
    sys.path.append(str(ROOT))


def _wrap(owner: Any, name: str, label: str, spent: dict[str, float]) -> None:
    """Add the time of ``owner.name`` calls to ``spent[label]`` (absent: nothing happens)."""
    real = getattr(owner, name, None) if owner is not None else None
    if real is None:
        return

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0

    setattr(owner, name, timed)


def run(store: Path, adds: int) -> dict[str, Any]:
    import nxm.service
    import nxm.store
    import nxm.store.cache
    import nxm.store.files
    import nxm.store.index
    from nxs.workspace import find

    work = Path(tempfile.mkdtemp(prefix="nxs-add-"))
    try:
        root = work / "ws"
        shutil.copytree(store, root)
        load_start = os.getloadavg()[0]
        svc = nxm.service.MemoryService(find(str(root)))
        svc.embedder()
        svc.store.index.table(create=True)
        now = "2030-01-01T00:00:00.000Z"
        svc.search(query="nightly export", limit=10, now=now)
        spent: dict[str, float] = {}
        _wrap(nxm.service.MemoryService, "_vectors", "embed", spent)
        _wrap(nxm.store.Store, "commit", "commit", spent)
        _wrap(nxm.store.Store, "sync", "sync", spent)
        _wrap(nxm.store.files.Files, "write", "files", spent)
        _wrap(nxm.store.cache.Cache, "put", "cache", spent)
        _wrap(nxm.store.index.Index, "write", "index", spent)
        _wrap(nxm.store.Store, "project", "projection", spent)
        parts: dict[str, list[float]] = {}
        for i in range(adds):
            spent.clear()
            t0 = time.perf_counter()
            svc.add(
                body=f"Scale note {i}: the nightly export of shard {i % 97} "
                f"finished in {i % 53 + 4} minutes after the {i % 7}th retry.",
                introduction=f"Nightly export of shard {i % 97}, note {i}",
                now=now,
                actor="bench",
            )
            total = time.perf_counter() - t0
            commit = spent.pop("commit", 0.0)
            inside = ("files", "cache", "index", "projection")
            spent["commit_other"] = commit - sum(spent.get(k, 0.0) for k in inside)
            spent["rest"] = total - commit - spent.get("embed", 0.0) - spent.get("sync", 0.0)
            spent["total"] = total
            for k, v in spent.items():
                parts.setdefault(k, []).append(v)

        def figures(values: list[float]) -> dict[str, float]:
            ordered = sorted(values)
            p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
            ms = [1000 * statistics.median(values), 1000 * p95, 1000 * max(values)]
            return dict(zip(("p50", "p95", "max"), (round(x, 1) for x in ms), strict=True))

        return {
            "store": str(store),
            "adds": adds,
            "ms": {k: figures(v) for k, v in parts.items()},
            "load_start": round(load_start, 2),
            "load_end": round(os.getloadavg()[0], 2),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a workspace to copy")
    parser.add_argument("--adds", type=int, default=60, help="single adds to time")
    args = parser.parse_args(argv)
    import orjson

    print(orjson.dumps(run(args.store, args.adds)).decode(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
