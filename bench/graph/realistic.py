"""Relations on a realistic store, and their precision on a hand-annotated sample (issue 34).

    python -m bench.graph.realistic                # relations per memory + the sample's precision
    python -m bench.graph.realistic --write-sample # (re)write precision_sample.json for annotating

The store is bench/project_memory's 319 project memories (four made-up companies, written for
retrieval, never tuned on by the graph). A relation is counted once per memory that states it.
``precision_sample.json`` holds up to 100 of them (all, when fewer), each with the sentence that
states it and a hand judgement ``right``; the score is the share judged right among those the
current extractor still finds, so an entry that disappears stops counting.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from pathlib import Path
from typing import Any

from nxm import graph
from nxm.record import new_record

HERE = Path(__file__).parent
STORE = HERE.parent / "project_memory" / "data" / "memories"
SAMPLE = HERE / "precision_sample.json"
NOW = "2026-06-01T10:00:00.000Z"


def extracted() -> tuple[int, int, list[dict[str, Any]]]:
    """(memories, memories naming two or more entities, relations with their sentences)."""
    records = {}
    for path in sorted(glob.glob(str(STORE / "*.jsonl"))):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            m = json.loads(line)
            when = m.get("created", NOW)
            records[m["id"]] = new_record(key=m["id"], introduction=m["introduction"],
                                          body=m["body"], created=when, updated=when)  # fmt: skip
    g = graph.build(records, {}, {"entities": {}, "relations": []}, NOW)
    named: dict[str, int] = {}
    for e in g.entities.values():
        for key in e["sourceMemoryIds"]:
            named[key] = named.get(key, 0) + 1
    rels = [{
        "memory": ev["memory"], "source": g.entities[r["source"]]["name"],
        "relation": r["relation"], "target": g.entities[r["target"]]["name"],
        "sentence": g.sentence(ev["memory"], ev["sentence"]),
    } for r in g.relations.values() for ev in r["evidence"]]  # fmt: skip
    rels.sort(key=lambda x: (x["memory"], x["source"], x["relation"], x["target"]))
    return len(records), sum(1 for n in named.values() if n >= 2), rels


def _key(x: dict[str, Any]) -> tuple[str, ...]:
    return (x["memory"], x["source"], x["relation"], x["target"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.graph.realistic")
    parser.add_argument("--write-sample", action="store_true", help="rewrite the sample file")
    args = parser.parse_args(argv)
    memories, two, rels = extracted()
    print(f"{memories} memories, {two} name two or more entities, {len(rels)} relations: "
          f"{len(rels) / two:.2f} per such memory (1 per {two / max(len(rels), 1):.1f})")  # fmt: skip
    judged = {_key(x): x for x in json.loads(SAMPLE.read_text(encoding="utf-8"))} if (
        SAMPLE.exists()) else {}  # fmt: skip
    if args.write_sample:
        pool = rels if len(rels) <= 100 else random.Random(34).sample(rels, 100)
        out = [{**x, "right": None, **{k: v for k, v in judged.get(_key(x), {}).items()
                                        if k in ("right", "why")}} for x in pool]  # fmt: skip
        SAMPLE.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {len(out)} relations to {SAMPLE.name}; judge each 'right' by hand")
        return 0
    found = {_key(x) for x in rels}
    scored = [x for k, x in judged.items() if k in found and x["right"] is not None]
    right = sum(1 for x in scored if x["right"])
    print(f"precision on the annotated sample: {right}/{len(scored)} = "
          f"{right / max(len(scored), 1):.2f} ({len(judged) - len(scored)} sample entries no "
          "longer extracted or not judged)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
