"""`nxm log`: the memory events of the whole store, newest first, each with the commit that
brought it (like `git log`, for knowledge).

The events come from the memories' own histories (the record cache). Only the events shown are
looked up in git: those the working tree adds to HEAD are uncommitted (one `git diff`), the
others are found by walking `git log -p` over the history files, newest commit first, until
each is found: a short log of recent events reads only recent commits.
"""

from __future__ import annotations

from typing import Any

import orjson

from nxm.review import key_of, repository
from nxm.store.text import event_line
from nxs.errors import ValidationError

_COMMIT = b"\x01"
_HIDDEN = ("before",)  # an edit's old values: `nxm history` and `nxm diff` show them


def _moment(text: str) -> str:
    from nxm.insights import norm_time

    try:
        return norm_time(text)
    except (ValueError, OverflowError):
        raise ValidationError(
            f"since {text!r} is not a date", suggestion="pass a date or an ISO-8601 time, "
            "e.g. 2026-05-01 or 2026-05-01T09:00:00Z",
        ) from None  # fmt: skip


def log(
    service: Any, *, now: str, limit: int = 20, key: str | None = None, by: str | None = None,
    since: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The store's events (filtered), newest first, with the commit of each shown."""
    from nxm.insights import norm_time

    cut = _moment(since) if since is not None else None
    records = service.store.records()
    pool = [service.resolve(records, key)] if key is not None else records.values()
    rows = []
    for r in pool:
        for n, e in enumerate(r["events"], 1):
            at = norm_time(e["at"])
            if (by is None or e.get("actor") == by) and (cut is None or at >= cut):
                rows.append((at, r["key"], n, e, r["introduction"]))
    rows.sort(reverse=True)
    shown = rows[:limit]
    found = None if service.store.remote else repository(service.ws.dir)
    commits: dict[tuple[str, bytes], Any] = {}
    if found is not None:
        keys = {k for _, k, *_ in shown} if key is not None else None
        commits = _commits(*found, {(k, event_line(e)) for _, k, _, e, _ in shown}, keys)
    events = []
    for _, k, n, e, intro in shown:
        data = {f: v for f, v in (e.get("data") or {}).items() if f not in _HIDDEN}
        commit = commits.get((k, event_line(e)))
        events.append({
            "at": e["at"], "actor": e.get("actor"), "type": e["type"], "key": k, "n": n,
            "introduction": intro, "data": data, "uncommitted": commit == "uncommitted",
            "commit": commit if isinstance(commit, dict) else None,
        })  # fmt: skip
    return {"events": events, "total": len(rows), "git": found is not None}


def _added(raw: bytes, rel: str) -> dict[tuple[str, bytes], None]:
    """The event lines a `git diff -U0` adds, by (key, canonical line)."""
    out: dict[tuple[str, bytes], None] = {}
    key = None
    for line in raw.split(b"\n"):
        if line.startswith(b"+++ "):
            path = line[4:].decode(errors="replace").strip('"')
            key = key_of(path.removeprefix("b/"), rel)
        elif line.startswith(b"+") and key:
            got = _canonical(line[1:])
            if got:
                out[(key, got)] = None
    return out


def _canonical(line: bytes) -> bytes | None:
    try:
        e = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return event_line(e) if isinstance(e, dict) else None


def _commits(git: Any, rel: str, wanted: set[tuple[str, bytes]], keys: set[str] | None) -> dict:
    """Each wanted (key, event line)'s commit (sha, author, date, subject), or "uncommitted"."""
    paths = (
        ["--", *(f"{rel}/history/{k}.jsonl" for k in keys)] if keys else ["--", f"{rel}/history"]
    )
    out: dict[tuple[str, bytes], Any] = {}
    if not wanted:
        return out
    head = git("rev-parse", "-q", "--verify", "HEAD", ok=False)
    if head:
        raw = git("diff", "HEAD", "-U0", "--no-color", "--no-ext-diff", "--no-renames", *paths)
        out.update(dict.fromkeys(_added(raw or b"", rel).keys() & wanted, "uncommitted"))
    others = git("ls-files", "-z", "--others", "--exclude-standard", *paths) or b""
    for path in filter(None, others.decode().split("\0")):
        out.update({w: "uncommitted" for w in wanted if path.endswith(f"/{w[0]}.jsonl")})
    left = wanted - out.keys()
    if not left or not head:
        return out
    proc = git.stream("log", "--format=%x01%H%x00%an%x00%aI%x00%s", "-p", "-U0", "--no-color",
                      "--no-ext-diff", "--no-renames", "--diff-filter=AM", *paths)  # fmt: skip
    assert proc.stdout is not None
    commit: dict[str, str] = {}
    key = None
    try:
        for line in proc.stdout:
            if line.startswith(_COMMIT):
                sha, author, date, subject = (
                    line[1:].rstrip(b"\n").decode(errors="replace").split("\0", 3)
                )
                commit = {"sha": sha, "author": author, "date": date, "subject": subject}
            elif line.startswith(b"+++ "):
                path = line[4:].rstrip(b"\n").decode(errors="replace").strip('"')
                key = key_of(path.removeprefix("b/"), rel)
            elif line.startswith(b"+") and key:
                got = _canonical(line[1:])
                if got and (key, got) in left:
                    out[(key, got)] = commit
                    left.discard((key, got))
                    if not left:
                        break
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    return out
