"""The Figures page's time series: memories and events over time, and who did what.

Read from the memories' own histories, as `memory_stats` is, so the two agree. Buckets are UTC
days (weeks beyond 92 days), the last one today's; purged memories count nowhere.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from datetime import timedelta
from typing import Any

from nxm.insights import norm_time
from nxs.render import parse_timestamp, timestamp

# Event types drawn together (stacked bars), in the legend's order.
GROUPS = {
    "created": ("CREATED", "IMPORTED"),
    "edited": ("UPDATED", "CLASSIFIED", "PROMOTED", "LINKED", "REVERTED"),
    "closed": ("CLOSED", "FORGOTTEN"),
    "restored": ("REOPENED", "RESTORED"),
    "feedback": ("FEEDBACK_SUBMITTED",),
}
GROUP_OF = {kind: group for group, kinds in GROUPS.items() for kind in kinds}
DIMENSIONS = {"actors": None, "agents": "agent_id", "tools": "program_tool", "users": "user_id"}
TOP = 20  # rows a dimension's table shows


def buckets(now: str, days: int) -> tuple[list[str], int]:
    """The buckets' start times (ISO) and their length in days, ending with today's."""
    size = 1 if days <= 92 else 7
    count = max(1, math.ceil(days / size))
    last = parse_timestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    first = last - timedelta(days=size * (count - 1))
    return [timestamp(first + timedelta(days=size * i)) for i in range(count)], size


def _status_changes(record: dict[str, Any]) -> list[tuple[str, int]]:
    """(time, +1 or -1) whenever the record became open or stopped being open."""
    out = []
    status = None
    born = record.get("created")
    for e in record["events"]:
        at = norm_time(e["at"])
        if status is None:
            status = "open"
            out.append((norm_time(born) if born and e["type"] not in GROUPS["created"] else at, 1))
        to = (e.get("data") or {}).get("to")
        if isinstance(to, str) and to != status:
            out.append((at, 1 if to == "open" else -1 if status == "open" else 0))
            status = to
    if status is None and born:
        out.append((norm_time(born), 1))
    return [c for c in out if c[1]]


def activity(ctx: Any, *, days: int = 30) -> dict[str, Any]:
    """Memories and events per time bucket, and per actor, agent, tool and user in the window."""
    records = ctx.memory.store.records()
    starts, size = buckets(ctx.now, days)
    ends = [*starts[1:], timestamp(parse_timestamp(starts[-1]) + timedelta(days=size))]
    now = norm_time(ctx.now)
    first = starts[0]
    n = len(starts)

    def index(at: str) -> int | None:  # the last start at or before `at`
        return bisect_right(starts, at) - 1 if first <= at <= now else None

    stored = [0] * n
    opened = [0] * n
    events = {group: [0] * n for group in GROUPS}
    rows: dict[str, dict[str, dict[str, Any]]] = {dim: {} for dim in DIMENSIONS}
    for r in records.values():
        evs = r["events"]
        born = norm_time(r["created"] or (evs[0]["at"] if evs else now))
        for i, end in enumerate(ends):
            if born < end:
                stored[i] += 1
        for at, change in _status_changes(r):
            for i, end in enumerate(ends):
                if at < end:
                    opened[i] += change
        for e in evs:
            at = norm_time(e["at"])
            i = index(at)
            for dim, field in DIMENSIONS.items():
                who = e.get("actor") if field is None else r.get(field)
                if not who:
                    continue
                row = rows[dim].setdefault(
                    who, {"name": who, "events": 0, "created": 0, "keys": set(), "last": "", "series": [0] * n}
                )  # fmt: skip
                row["last"] = max(row["last"], at)
                if i is None:
                    continue
                row["events"] += 1
                row["series"][i] += 1
                row["keys"].add(r["key"])
                row["created"] += e["type"] in GROUPS["created"]
            group = GROUP_OF.get(e["type"])
            if i is not None and group:
                events[group][i] += 1
    tables = {}
    for dim, found in rows.items():
        ranked = sorted(found.values(), key=lambda x: (-x["events"], -len(x["keys"]), x["name"]))
        tables[dim] = [
            {**{k: v for k, v in row.items() if k != "keys"}, "memories": len(row["keys"])}
            for row in ranked[:TOP]
        ]
        tables[f"{dim}Total"] = len(ranked)
    return {
        "bucketDays": size, "buckets": starts, "days": days, "events": events, "from": first,
        "method": "from the memories' histories (UTC buckets); purged memories are not counted",
        "open": opened, "stored": stored, "to": now, **tables,
    }  # fmt: skip


__all__ = ["GROUPS", "activity", "buckets"]
