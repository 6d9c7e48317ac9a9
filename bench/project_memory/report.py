"""Markdown tables of a run's figures."""

from __future__ import annotations

from typing import Any

from bench.project_memory.metrics import KINDS

COLUMNS = (*KINDS, "overall")


def _num(v: Any) -> str:
    return "–" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def metric_table(results: dict[str, dict[str, Any]], metric: str) -> str:
    """One row per (half, system): ``metric`` by kind; a row of query counts opens each half."""
    lines = [
        "| half | system | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---:|" * len(COLUMNS),
    ]
    for half, systems in results.items():
        first = next(iter(systems.values()))
        counts = " | ".join(str(first.get(c, {}).get("n", 0)) for c in COLUMNS)
        lines.append(f"| {half} | *queries* | {counts} |")
        for system, fig in systems.items():
            vals = " | ".join(_num(fig.get(c, {}).get(metric)) for c in COLUMNS)
            lines.append(f"| {half} | {system} | {vals} |")
    return "\n".join(lines) + "\n"


def currency_table(results: dict[str, dict[str, Any]]) -> str:
    """Answer above its distractors (temporal: the current version above the superseded one;
    identifier: above its twin), and what the negatives got."""
    lines = [
        "| half | system | temporal ahead | identifier ahead | negatives empty | answerable"
        " empty | negatives' top score (median / max) | floor@5% | negatives below it |"
        " answerable below it |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for half, systems in results.items():
        for system, fig in systems.items():
            neg = fig["negative"]
            tuned = fig.get("floor@5%") or {}
            row = [
                _num(fig.get("temporal", {}).get("ahead")),
                _num(fig.get("identifier", {}).get("ahead")),
                _num(neg["empty"]),
                _num(neg["answerable_empty"]),
                f"{_num(neg['top_median'])} / {_num(neg['top_max'])}",
                _num(tuned.get("floor")),
                _num(tuned.get("empty")),
                _num(tuned.get("answerable_empty")),
            ]
            lines.append(f"| {half} | {system} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def markdown(got: dict[str, Any]) -> str:
    """Every table of a run, headed."""
    res = got["results"]
    floors = ", ".join(f"{k} {v}" for k, v in got["floors"].items()) or "none"
    parts = [
        f"{got['memories']} memories, {got['queries']} queries, model {got['model']}, "
        f"supersedes passed: {got['supersedes_passed']}, floors: {floors}\n",
        "nDCG@10\n",
        metric_table(res, "ndcg@10"),
        "recall@5\n",
        metric_table(res, "recall@5"),
        "MRR@10\n",
        metric_table(res, "mrr@10"),
        "currency and negatives\n",
        currency_table(res),
    ]
    return "\n".join(parts)
