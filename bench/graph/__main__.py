"""Score the entity graph on the labelled halves: entities, relations, questions by hops.

    python -m bench.graph                  # both halves, one Markdown table
    python -m bench.graph --details        # and what the tuning half got wrong
    python -m bench.graph --json           # the figures as JSON

Scoring is per memory and on the built graph, the way a reader meets it: an entity counts
for a memory when the graph lists that memory among its sources (so a folded alias counts
as its full name), a relation when one of its evidence sentences is in that memory. Names are
compared case-folded after the half's aliases. Extraction is scored over every memory (a
closed one too); questions are asked of the graph the open memories make, as `graph query`
does. A question is right when it is answered (confidence ≥ 0.5, some answer) with every
expected name and nothing outside the expected and the acceptable ones (``also``); an
unanswerable one is right when it is refused (confidence < 0.5 or no answer).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from nxm import graph  # noqa: E402
from nxm.graph.extract import norm  # noqa: E402
from nxm.graph.query import ask  # noqa: E402
from nxm.record import new_record  # noqa: E402

HERE = Path(__file__).parent
HALVES = (
    ("tune", "tuning"),
    ("heldout", "held-out"),
    ("heldout2", "held-out 2 (new wordings)"),
    ("heldout3", "held-out 3 (seen since 2026-12-07 15:15)"),
    ("heldout4", "held-out 4 (unseen)"),
    ("heldout5", "held-out 5 (seen since 2026-12-07 17:17)"),
    ("heldout6", "held-out 6 (unseen)"),
    ("heldout7", "held-out 7 (seen since 2026-12-07 18:42)"),
    ("heldout8", "held-out 8 (seen since 2026-12-07 18:58)"),
    ("heldout9", "held-out 9 (unseen)"),
)
NOW = "2026-06-01T10:00:00.000Z"
UPDATED = "2026-03-01T09:00:00.000Z"
NO_AGENT: dict[str, Any] = {"entities": {}, "relations": []}


def load(half: str) -> dict[str, Any]:
    return json.loads((HERE / f"{half}.json").read_text(encoding="utf-8"))


def records(data: dict[str, Any], *, everything: bool = False) -> dict[str, dict[str, Any]]:
    """The half's memories as records (``everything``: all open, to score extraction)."""
    out = {}
    for m in data["memories"]:
        when = m.get("updated", UPDATED)
        out[m["id"]] = new_record(
            key=m["id"], introduction=m["introduction"], body=m["body"], user_id=m.get("user_id"),
            status="open" if everything else m.get("status", "open"), created=when, updated=when,
        )  # fmt: skip
    return out


def _canon(data: dict[str, Any], name: str) -> str:
    return norm(data["aliases"].get(name, name))


def extraction(data: dict[str, Any]) -> tuple[dict[str, Counter[str]], dict[str, list[str]]]:
    """Counts (tp/fp/fn) for entities by name, by name and type, and relations; and the errors."""
    built = graph.build(records(data, everything=True), {}, NO_AGENT, NOW)
    got: dict[str, set[Any]] = {"entities": set(), "typed": set(), "relations": set()}
    for e in built.entities.values():
        for key in e["sourceMemoryIds"]:
            got["entities"].add((key, norm(e["name"])))
            got["typed"].add((key, norm(e["name"]), e["type"]))
    for r in built.relations.values():
        src, tgt = built.entities[r["source"]]["name"], built.entities[r["target"]]["name"]
        for key in r["sourceMemoryIds"]:
            got["relations"].add((key, norm(src), r["relation"], norm(tgt)))
    gold: dict[str, set[Any]] = {"entities": set(), "typed": set(), "relations": set()}
    for m in data["memories"]:
        for name, kind in m["entities"]:
            gold["entities"].add((m["id"], _canon(data, name)))
            gold["typed"].add((m["id"], _canon(data, name), kind))
        for a, rel, b in m["relations"]:
            gold["relations"].add((m["id"], _canon(data, a), rel, _canon(data, b)))
    counts, errors = {}, {}
    for measure in got:
        mine, truth = got[measure], gold[measure]
        counts[measure] = Counter(tp=len(mine & truth), fp=len(mine - truth), fn=len(truth - mine))
        errors[measure] = [f"+ {x}" for x in sorted(mine - truth)] + [
            f"- {x}" for x in sorted(truth - mine)
        ]
    return counts, errors


def questions(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each question with what the graph answered and whether that was right."""
    built = graph.build(records(data), {}, NO_AGENT, NOW)
    out = []
    for q in data["questions"]:
        got = ask(built, question=q["q"])
        names = {_canon(data, a["name"]) for a in got["answers"]}  # the set's aliases too
        refused = got["confidence"] < 0.5 or not names
        if q["answers"] is None:
            right = refused
        else:
            want = {_canon(data, n) for n in q["answers"]}
            ok = want | {_canon(data, n) for n in q.get("also", [])}
            right = not refused and want <= names and names <= ok
        out.append({
            "q": q["q"], "hops": q["hops"], "expected": q["answers"], "right": right,
            "answers": [a["name"] for a in got["answers"]], "confidence": got["confidence"],
            "answer": got["answer"],
        })  # fmt: skip
    return out


def _pr(c: Counter[str]) -> tuple[float, float]:
    p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
    r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
    return round(p, 2), round(r, 2)


def score(half: str) -> dict[str, Any]:
    """Every figure of one half."""
    data = load(half)
    counts, errors = extraction(data)
    answered = questions(data)
    by_hops = {}
    for hops in (1, 2, 3, 0):
        mine = [a for a in answered if a["hops"] == hops]
        by_hops[hops] = (sum(a["right"] for a in mine), len(mine))
    figures = {
        measure: {"precision": _pr(c)[0], "recall": _pr(c)[1], **c} for measure, c in counts.items()
    }
    return {
        "half": half,
        "memories": len(data["memories"]),
        "extraction": figures,
        "questions": {
            "right": sum(a["right"] for a in answered),
            "total": len(answered),
            "byHops": {str(h): {"right": r, "total": n} for h, (r, n) in by_hops.items()},
        },
        "errors": errors,
        "answers": answered,
    }


def table(results: list[dict[str, Any]]) -> str:
    """The Markdown tables docs/benchmarks.md quotes."""
    out = [
        "| half | memories | entities P / R | entities + type P / R | relations P / R |",
        "|---|---:|---|---|---|",
    ]
    for res in results:
        x = res["extraction"]
        cells = [
            f"{x[m]['precision']:.2f} / {x[m]['recall']:.2f}"
            for m in ("entities", "typed", "relations")
        ]
        out.append(
            f"| {dict(HALVES)[res['half']]} | {res['memories']} | " + " | ".join(cells) + " |"
        )
    out += [
        "",
        "| half | questions right | 1 hop | 2 hops | 3 hops | unanswerable refused |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for res in results:
        q = res["questions"]
        hops = [
            f"{q['byHops'][h]['right']}/{q['byHops'][h]['total']}" for h in ("1", "2", "3", "0")
        ]
        out.append(
            f"| {dict(HALVES)[res['half']]} | {q['right']}/{q['total']} "
            f"({q['right'] / q['total']:.2f}) | " + " | ".join(hops) + " |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.graph", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--half", choices=(*dict(HALVES), "both"), default="both")
    parser.add_argument("--details", action="store_true", help="the tuning half's errors")
    parser.add_argument(
        "--details-heldout", action="store_true",
        help="the held-out half's errors too (look only once a change is final)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    halves = [h for h, _ in HALVES if args.half in (h, "both")]
    results = [score(h) for h in halves]
    if args.json:
        slim = [{k: v for k, v in r.items() if k not in ("errors", "answers")} for r in results]
        print(json.dumps(slim, indent=1, ensure_ascii=False))
    else:
        print(table(results), end="")
    for res in results:
        if not (args.details and res["half"] == "tune") and not args.details_heldout:
            continue
        print(f"\n## {res['half']}: extraction errors (+ extra, - missed)")
        for measure in ("typed", "relations"):
            for line in res["errors"][measure]:
                print(f"{measure}: {line}")
        print(f"\n## {res['half']}: questions answered wrongly")
        for a in res["answers"]:
            if not a["right"]:
                print(
                    f"[{a['hops']}] {a['q']}\n    expected {a['expected']}, got {a['answers']} "
                    f"at {a['confidence']}: {a['answer'][:160]}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
