"""Dashboard figures, user profiles and the list of users and agents, read from the records.

Counted from the memories' own history (``events``), so they need no bookkeeping and agree with
`nxm history`; purged memories no longer count. Searches come from this machine's usage log (a
log that cannot be written never fails a search), tokens are an estimate (no tokenizer is loaded
for a dashboard): the answer's ``methods`` says so.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections import Counter
from datetime import timedelta
from typing import Any

import orjson

from nxm.lifecycle import live
from nxm.record import SIGNALS, reading_order
from nxm.store.local import Local
from nxs.errors import NotFoundError
from nxs.render import parse_timestamp, timestamp
from nxs.workspace import Workspace

TOKENS_METHOD = "estimate: ceil(characters / 4) of the bodies of memories created in the window"
SEARCHES_METHOD = "searches run on this machine (its usage log)"
_EVENTS = "CREATED UPDATED CLASSIFIED CLOSED REOPENED FORGOTTEN RESTORED PROMOTED IMPORTED REVERTED"
EVENT_FIGURES = {t: t.lower() for t in _EVENTS.split()}  # event type -> its figure's name
_TERM = re.compile(r"[^\W\d_][\w.+#-]*[\w+#]|[^\W\d_]")
_STOP = frozenset(
    """the and for are but not you all any can has have had was were this that with from into our
    out its they them then than too very just also only when what which who will would should
    could been being does did there here about over under after before use uses used using must
    never always keep make run runs each every other some such more most less one two new old
    because so if or of in on at to by as is be it an we us do don't doesn't via per than ask
    while until once still both same first last next need needs like get set see how why where
    he she her his him hers they their them you your i me my mine user users""".split()
)
SUMMARY_MEMORIES = 3
TOPICS = 8


def log_search(ws: Workspace, now: str, mode: str) -> None:
    """Append one search to the machine-local usage log; never raises."""
    path = Local(ws.root).usage
    line = orjson.dumps({"at": now, "mode": mode, "op": "search"}) + b"\n"
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "ab", buffering=0) as fh:
            fh.write(line)  # one small O_APPEND write: lines from several processes never mix


def _search_times(ws: Workspace) -> list[str]:
    try:
        raw = Local(ws.root).usage.read_bytes()
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        with contextlib.suppress(ValueError):  # a torn last line after a crash, a bad time
            entry = orjson.loads(line)
            if isinstance(entry, dict) and entry.get("op") == "search":
                out.append(norm_time(str(entry.get("at"))))
    return out


def norm_time(text: str) -> str:
    """A timestamp in the one form `nxs.render.timestamp` writes (string order is time order)."""
    return text if len(text) == 24 and text.endswith("Z") else timestamp(parse_timestamp(text))


def _window(records: dict[str, dict[str, Any]], searches: list[str], start: str, end: str) -> dict:
    """Figures for events with start < at <= end."""
    events = Counter()
    feedback = Counter(dict.fromkeys(SIGNALS, 0))
    tokens = 0
    for r in records.values():
        for e in r["events"]:
            at = norm_time(e["at"])
            if not start < at <= end:
                continue
            if e["type"] == "FEEDBACK_SUBMITTED":
                feedback[(e.get("data") or {}).get("signal", "NEUTRAL")] += 1
            elif e["type"] in EVENT_FIGURES:
                events[EVENT_FIGURES[e["type"]]] += 1
                if e["type"] == "CREATED":
                    tokens += math.ceil(len(r["body"]) / 4)
    return {
        "feedback": dict(sorted(feedback.items())), "from": start,
        "memories": {name: events[name] for name in sorted(EVENT_FIGURES.values())},
        "searches": sum(1 for at in searches if start < at <= end), "to": end, "tokens": tokens,
    }  # fmt: skip


def stats(ws: Workspace, records: dict[str, dict[str, Any]], *, now: str, days: int = 30) -> dict:
    """Figures over the last ``days`` days, and the same figures for the window before it."""
    end = parse_timestamp(now)
    start = end - timedelta(days=days)
    before = start - timedelta(days=days)
    searches = _search_times(ws)
    current = _window(records, searches, timestamp(start), timestamp(end))
    previous = _window(records, searches, timestamp(before), timestamp(start))
    by_status = Counter(r["status"] for r in records.values())
    total = len(live(records, now))
    return {
        **current, "comparisonPeriod": previous, "days": days,
        "methods": {"searches": SEARCHES_METHOD, "tokens": TOKENS_METHOD}, "totalMemories": total,
        "totals": {
            "closed": by_status["closed"], "expired": by_status["open"] - total,
            "forgotten": by_status["forgotten"], "open": by_status["open"], "stored": len(records),
        },
    }  # fmt: skip


def profile(
    records: dict[str, dict[str, Any]], graph_entities: list[dict[str, Any]], *, user: str, now: str
) -> dict[str, Any]:
    """A user's profile: extractive summary, top topics, categories, entity count.

    Raises:
        NotFoundError: the user has no memories.
    """
    theirs = [r for r in records.values() if r.get("user_id") == user]
    if not theirs:
        raise NotFoundError(f"no memories for user {user!r}", code="USER_NOT_FOUND",
                            suggestion="see who has memories with `nxm entities`")  # fmt: skip
    current = reading_order([r for r in live(records, now) if r.get("user_id") == user])
    summary = " ".join(r["introduction"].rstrip(".") + "." for r in current[:SUMMARY_MEMORIES])
    mine = [e for e in graph_entities if user in e["userIds"]]
    categories = Counter(r.get("category") or "general" for r in current)
    return {
        "categories": dict(sorted(categories.items())), "entityCount": len(mine),
        "lastActivityAt": max(_last_activity(r) for r in theirs), "memoryCount": len(current),
        "summary": summary,
        "summaryMethod": "extractive: introductions of the user's first "
        f"{SUMMARY_MEMORIES} open memories in reading order (priority first)",
        "topicsMethod": "entity names in the user's memories (most memories first), then words "
        "used in two or more of them",
        "topics": _topics(current, mine), "userId": user,
    }  # fmt: skip


def _topics(current: list[dict[str, Any]], entities: list[dict[str, Any]]) -> list[str]:
    """Entity names from the user's memories (most memories first), then words in two or more."""
    keys = {r["key"] for r in current}
    named = [(len(keys.intersection(e["sourceMemoryIds"])), e["name"].casefold()) for e in entities]
    out = [name for count, name in sorted(named, key=lambda x: (-x[0], x[1])) if count]
    df: Counter[str] = Counter()
    for r in current:
        df.update(_terms(f"{r['introduction']}\n{r['body']}"))
    words = sorted((w for w, n in df.items() if n >= 2), key=lambda w: (-df[w], w))
    out += [w for w in words if w not in out]
    return out[:TOPICS]


def _terms(text: str) -> set[str]:
    words = (w.casefold().strip(".-") for w in _TERM.findall(text))
    return {w for w in words if len(w) >= 3 and w not in _STOP and not w.isdigit()}


def _last_activity(r: dict[str, Any]) -> str:
    times = [r.get("updated") or ""] + [e["at"] for e in r["events"]]
    return max(norm_time(t) for t in times if t)


def entities(records: dict[str, dict[str, Any]], *, now: str) -> dict[str, Any]:
    """Users, then agents, with their open memory counts and last activity."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    current = {r["key"] for r in live(records, now)}
    for r in records.values():
        for kind, field in (("user", "user_id"), ("agent", "agent_id")):
            who = r.get(field)
            if not who:
                continue
            row = rows.setdefault(
                (kind, who),
                {"kind": kind, f"{kind}Id": who, "memoryCount": 0, "storedCount": 0,
                 "lastActivityAt": ""},
            )  # fmt: skip
            row["storedCount"] += 1
            row["memoryCount"] += r["key"] in current
            row["lastActivityAt"] = max(row["lastActivityAt"], _last_activity(r))
    out = [rows[k] for k in sorted(rows, key=lambda k: (k[0] != "user", k[1]))]
    return {"entities": out, "total": len(out)}


__all__ = ["entities", "log_search", "norm_time", "profile", "stats"]
