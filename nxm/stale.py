"""Memories whose code moved (docs/concepts.md, "Memory and code"), from git plumbing only.

A memory's CREATED, UPDATED, CONFIRMED and refs-changing CLASSIFIED events record the commit it
was written against (``data.commit``, HEAD then). Its baseline is the newest of those, or the
last commit that wrote its file when that is later (the memory was committed with the code) or
the recorded one is not in this clone (rebased away). Between the baseline and HEAD a file ref
that was renamed or deleted, a folder ref with something under it renamed or deleted, a
``path:NAME`` ref whose definition is gone or changed (`nxm.code.check`), or a file ref whose
values the memory states are gone, makes it *possibly stale*.

Verdicts are kept per memory in ``stale.db`` beside the record cache (never in the repository):
a memory is judged again when its files change, or when HEAD moved and the paths it names (or
its file) are among those that changed. Outside a git repository nothing is flagged.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import sqlite3
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from nxm import code

BASED = ("CREATED", "UPDATED", "CLASSIFIED", "CONFIRMED")  # the events that record a commit
WHOLE_LOG = 400  # paths past which a log reads every path rather than a pathspec this long
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS flags(key TEXT PRIMARY KEY, ident TEXT NOT NULL, head TEXT NOT NULL,
    paths TEXT NOT NULL, verdict TEXT) WITHOUT ROWID;
"""


ENV = {"GIT_LITERAL_PATHSPECS": "1", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}  # reads only


def run(root: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess | None:
    """git run in ``root`` (paths literal, output unquoted, no lock taken); None: no git."""
    try:
        return subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=root, input=data,
                              capture_output=True, env={**os.environ, **ENV}, check=False)  # fmt: skip
    except OSError:
        return None


def git(root: Path, *args: str, data: bytes | None = None) -> bytes | None:
    """A git command's output in ``root``, or None when it fails (not a repository, no git)."""
    done = run(root, *args, data=data)
    return done.stdout if done is not None and done.returncode == 0 else None


def here(root: Path) -> tuple[str, str, Path] | None:
    """The workspace's folder in its repository ('' or 'sub/'), HEAD, and the repository's
    top (where paths are read from); None outside git."""
    out = git(root, "rev-parse", "--show-prefix", "HEAD", "--show-toplevel")
    lines = out.decode().split("\n") if out else []
    ok = len(lines) >= 3 and len(lines[1]) >= 40
    return (lines[0], lines[1], Path(lines[2])) if ok else None


def head(root: Path) -> str | None:
    """HEAD's commit, or None outside git (what a write records)."""
    at = here(root)
    return at[1] if at else None


def objects(root: Path, names: list[str]) -> dict[str, tuple[str, bytes] | None]:
    """``git cat-file --batch`` of ``names`` (``REV:path``, commits): (type, content) or None."""
    names = [n for n in dict.fromkeys(names) if "\n" not in n]
    out = git(root, "cat-file", "--batch", data="".join(f"{n}\n" for n in names).encode())
    got: dict[str, tuple[str, bytes] | None] = dict.fromkeys(names)
    pos = 0
    for name in names if out else ():
        end = out.index(b"\n", pos)  # type: ignore[union-attr]
        head_ = out[pos:end].split(b" ")  # type: ignore[index]
        pos = end + 1
        if len(head_) == 3 and head_[2].isdigit():
            size = int(head_[2])
            got[name] = (head_[1].decode(), out[pos : pos + size])  # type: ignore[index]
            pos += size + 1
    return got


def _text(obj: tuple[str, bytes] | None) -> str | None:
    return obj[1].decode("utf-8", "replace") if obj and obj[0] == "blob" else None


def _log(root: Path, base: str, tip: str, paths: list[str]) -> list[dict[str, Any]]:
    """The commits of base..tip touching ``paths``, oldest first, with every change of each
    (``--full-diff``, so a file renamed out of the paths is seen as a rename)."""
    spec = ["--", *paths] if len(paths) <= WHOLE_LOG else []
    out = git(root, "log", "--format=%x01%H%x00%ct%x00%s", "--name-status", "-M", "--full-diff",
              f"{base}..{tip}", *spec)  # fmt: skip
    commits = []
    for chunk in (out or b"").decode("utf-8", "replace").split("\x01")[1:]:
        top, _, rest = chunk.partition("\n")
        sha, stamp, subject = (top.split("\x00", 2) + ["", ""])[:3]
        changes = [ln.split("\t") for ln in rest.splitlines() if "\t" in ln]
        commits.append({"sha": sha, "at": int(stamp or 0), "subject": subject,
                        "changes": [(c[0][:1], c[1], c[-1]) for c in changes]})  # fmt: skip
    return commits[::-1]


def _said(commit: dict[str, Any]) -> dict[str, str]:
    from datetime import UTC, datetime

    at = datetime.fromtimestamp(commit["at"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"commit": commit["sha"][:10], "subject": commit["subject"], "date": at}


def code_refs(record: dict[str, Any], prefix: str) -> list[tuple[str, str, str]]:
    """(ref, repository path, symbol) of each ref that can name code (a relative path)."""
    out = []
    for ref in record.get("refs") or ():
        path, _, symbol = ref.partition(":")
        path = posixpath.normpath(path.strip()).strip("/") if path.strip() else ""
        if (
            path not in ("", ".")
            and "://" not in ref
            and ".." not in path.split("/")
            and "\n" not in ref
        ):
            out.append((ref, prefix + path, symbol.strip()))
    return out


def recorded(record: dict[str, Any]) -> list[str]:
    """The commits its events record (two branches' confirmations both, after a merge)."""
    got = [(e.get("data") or {}).get("commit") for e in record.get("events") or ()
           if e.get("type") in BASED]  # fmt: skip
    return [c for c in dict.fromkeys(got) if isinstance(c, str) and c]


def _ref_verdict(
    text: str, ref: tuple[str, str, str], base: str, tip: str, commits: list[dict[str, Any]],
    got: dict[str, Any],
) -> tuple[str, list[dict[str, Any]]] | None:  # fmt: skip
    """Why one ref's code moved between ``base`` and ``tip``, and the commits that moved it."""
    _, path, symbol = ref
    was = got.get(f"{base}:{path}")
    if was is None:
        return None  # not code at the baseline (an issue id, a path added since): no flag
    if was[0] == "tree":
        under = path + "/"
        moved = [(c, ch) for c in commits for ch in c["changes"] if ch[0] in "RD"
                 and ch[1].startswith(under) and got.get(f"{tip}:{ch[1]}") is None
                 and got.get(f"{base}:{ch[1]}") is not None]  # fmt: skip
        # (there at the baseline and gone now: not moved back, not restored by a revert)
        moved = list({ch[1]: (c, ch) for c, ch in moved}.values())  # each path's last move
        if not moved:
            return None
        c, ch = moved[0]
        what = f"renamed to {ch[2]}" if ch[0] == "R" else "deleted"
        more = f" (and {len(moved) - 1} more)" if len(moved) > 1 else ""
        return f"{ch[1]} {what}{more}", list({m[0]["sha"]: m[0] for m in moved}.values())
    now = got.get(f"{tip}:{path}")
    if now is None:
        gone = [(c, ch) for c in commits for ch in c["changes"] if ch[0] in "RD" and ch[1] == path]
        if not gone:
            return f"{path} is gone", []
        c, ch = gone[-1]
        return (f"{path} renamed to {ch[2]}" if ch[0] == "R" else f"{path} deleted"), [c]
    why = code.check(text, _text(was), _text(now), path, symbol)
    if why is None:
        return None
    return why, [c for c in commits if any(path in (ch[1], ch[2]) for ch in c["changes"])]


def judge(root: Path, prefix: str, tip: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Each record's (paths it names, verdict or None) at ``tip``, git run at the top of the
    repository ``root`` (paths are the repository's: the workspace's ``prefix`` added)."""
    md = {r["key"]: f"{prefix}.nxs/memories/{r['key']}.md" for r in records}
    refs = {r["key"]: code_refs(r, prefix) for r in records if r["status"] == "open"}
    out: dict[str, Any] = {r["key"]: ([], None) for r in records}
    for key, named in refs.items():
        out[key] = ([p for _, p, _ in named] + [md[key]], None) if named else ([], None)
    live = [r for r in records if refs.get(r["key"])]
    if not live:
        return out
    told = {r["key"]: recorded(r) for r in live}
    found = objects(root, [c for cs in told.values() for c in cs])
    dated = {c: _committed(o[1]) for c, o in found.items() if o and o[0] == "commit"}
    # the commits since the oldest recorded one (all of them if a memory recorded none) that
    # wrote a memory's file: a memory committed with the code it describes is true of it
    oldest = min((dated[c], c) for cs in told.values() for c in cs if c in dated) if all(
        any(c in dated for c in cs) for cs in told.values()) else None  # fmt: skip
    paths = [md[r["key"]] for r in live]
    log = git(root, "log", "--format=%x01%H %ct", "--name-only", tip,
              *(["--not", oldest[1]] if oldest else []), "--",
              *(paths if len(paths) <= WHOLE_LOG else [f"{prefix}.nxs/memories"]))  # fmt: skip
    wrote: dict[str, tuple[str, int]] = {}  # memory file -> the newest commit that wrote it
    for chunk in (log or b"").decode("utf-8", "replace").split("\x01")[1:]:
        top, _, names = chunk.partition("\n")
        sha, stamp = top.split(" ")
        for name in names.split():
            wrote.setdefault(name, (sha, int(stamp)))
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    ancestry: dict[tuple[str, str], bool] = {}
    for r in live:  # the newest commit it was written, confirmed or committed at
        known = [(dated[c], c) for c in told[r["key"]] if c in dated]
        mine = wrote.get(md[r["key"]])
        base = _newest(root, known + ([(mine[1], mine[0])] if mine else []), ancestry)
        if base and base != tip:
            groups[base].append(r)
    for base, members in groups.items():
        named = sorted({p for r in members for _, p, _ in refs[r["key"]]})
        history = _log(root, base, tip, named)
        touched = {n for c in history for ch in c["changes"] for n in ch[1:]}
        asks = [(r, ref) for r in members for ref in refs[r["key"]]
                if any(n == ref[1] or n.startswith(ref[1] + "/") for n in touched)]  # fmt: skip
        gone = [f"{rev}:{ch[1]}" for c in history for ch in c["changes"] if ch[0] in "RD"
                for rev in (base, tip)]  # fmt: skip
        got = objects(root, [f"{rev}:{ref[1]}" for _, ref in asks for rev in (base, tip)] + gone)
        said = {r["key"]: f"{r['introduction']}\n{r['body']}" for r in members}
        found = [(r, ref, _ref_verdict(said[r["key"]], ref, base, tip, history, got))
                 for r, ref in asks]  # fmt: skip
        edited = [(r, ref, f) for r, ref, f in found
                  if f and (got.get(f"{tip}:{ref[1]}") or ("",))[0] == "blob"]  # fmt: skip
        versions = objects(root, [f"{c['sha']}:{ref[1]}" for _, ref, f in edited for c in f[1]])
        for r, ref, f in edited:  # of the commits that touched the file, those that moved it
            before, movers = got.get(f"{base}:{ref[1]}"), []
            for c in f[1]:
                now = versions.get(f"{c['sha']}:{ref[1]}")
                if code.check(said[r["key"]], _text(before), _text(now), ref[1], ref[2]):
                    movers.append(c)
                before = now
            f[1][:] = movers or f[1]
        for r, ref, why in found:
            if why is None:
                continue
            verdict = out[r["key"]][1] or {"reason": "", "since": base[:10], "changes": []}
            verdict["changes"].append({"ref": ref[0], "reason": why[0],
                                       "commits": [_said(c) for c in why[1]]})  # fmt: skip
            verdict["reason"] = verdict["changes"][0]["reason"] + (
                f" (and {len(verdict['changes']) - 1} more)" if len(verdict["changes"]) > 1 else "")  # fmt: skip
            out[r["key"]] = (out[r["key"]][0], verdict)
    return out


def _newest(root: Path, dated: list[tuple[int, str]], seen: dict[Any, bool]) -> str | None:
    """The newest of (time, commit): the latest time; of commits made in the same second, the
    one the others are ancestors of (a script or a rebase commits many in one second)."""
    if not dated:
        return None
    top = max(t for t, _ in dated)
    tied = sorted({c for t, c in dated if t == top})
    best = tied[0]
    for other in tied[1:]:
        if (best, other) not in seen:
            seen[best, other] = git(root, "merge-base", "--is-ancestor", best, other) is not None
        best = other if seen[best, other] else best
    return best


def _committed(commit: bytes) -> int:
    for line in commit.split(b"\n"):
        if line.startswith(b"committer "):
            return int(line.rsplit(b" ", 2)[1])
    return 0


def _changed(root: Path, old: str, tip: str) -> set[str] | None:
    """Every path that changed between two commits, and the folders above them."""
    out = git(root, "diff", "--name-only", "--no-renames", old, tip)
    if out is None:
        return None
    names: set[str] = set()
    for name in out.decode("utf-8", "replace").splitlines():
        parts = name.split("/")
        names.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return names


def _db(folder: Path) -> sqlite3.Connection:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(folder / "stale.db", timeout=5, isolation_level=None)
        conn.executescript(SCHEMA)
    except sqlite3.Error:  # a read-only or full disk: judged afresh, kept in memory
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.executescript(SCHEMA)
    return conn


def flags(store: Any) -> dict[str, dict[str, Any]]:
    """The possibly stale memories' verdicts by key (the store synced by the caller)."""
    at = None if store.remote else here(store.ws.root)
    if at is None:
        return {}
    prefix, tip, top = at
    conn = _db(store.local.dir)
    try:
        return _flags(store, conn, top, prefix, tip)
    except sqlite3.Error:  # another process mid-write on a slow disk: judged again next time
        return {}
    finally:
        conn.close()


def _flags(
    store: Any, conn: sqlite3.Connection, top: Path, prefix: str, tip: str
) -> dict[str, Any]:
    cache = store.cache
    made = os.stat(cache.path).st_ino if cache.path and os.path.exists(cache.path) else id(cache)
    stamp = f"{tip} {cache.meta('seq')} {made}"  # the cache's change count, and which cache
    if conn.execute("SELECT value FROM meta WHERE name = 'stamp'").fetchone() == (stamp,):
        got = conn.execute("SELECT key, verdict FROM flags WHERE verdict IS NOT NULL")
        return {k: orjson.loads(v) for k, v in got}
    idents = {k: f"{md} {log}" for k, (md, log) in cache.idents().items()}
    rows = dict(conn.execute("SELECT key, ident FROM flags"))
    todo = {k for k, i in idents.items() if rows.get(k) != i}
    moved: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for k, h, p in conn.execute(  # a memory that names no code holds at any HEAD
        "SELECT key, head, paths FROM flags WHERE head != ? AND paths != '[]'", (tip,)
    ):
        if k in idents and k not in todo:
            moved[h].append((k, p))
    kept = []
    for old, keys in moved.items():
        changed = _changed(top, old, tip)
        for k, p in keys:  # the code it names, and its own file, as they were: the verdict holds
            if changed is None or any(n in changed for n in orjson.loads(p)):
                todo.add(k)
            else:
                kept.append(k)
    judged = judge(top, prefix, tip, list(cache.many(todo).values())) if todo else {}
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("DELETE FROM flags WHERE key = ?", [(k,) for k in rows.keys() - idents])
        conn.executemany("UPDATE flags SET head = ? WHERE key = ?", [(tip, k) for k in kept])
        conn.executemany(
            "INSERT OR REPLACE INTO flags VALUES (?, ?, ?, ?, ?)",
            [(k, idents[k], tip, orjson.dumps(judged.get(k, ([], None))[0]).decode(),
              orjson.dumps(v).decode() if (v := judged.get(k, ([], None))[1]) else None)
             for k in todo],
        )  # fmt: skip
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (stamp,))
        conn.execute("COMMIT")
    except sqlite3.Error:  # not kept: judged again next time
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
    got = conn.execute("SELECT key, verdict FROM flags WHERE verdict IS NOT NULL")
    held = {k: orjson.loads(v) for k, v in got if k in idents and k not in todo}
    return held | {k: v for k, (_, v) in judged.items() if v}


def verdicts(service: Any) -> dict[str, dict[str, Any]]:
    """`flags` of a service's store, after bringing it up to date with the files."""
    service.store.sync()
    return flags(service.store)


def mark(service: Any, items: list[dict[str, Any]]) -> None:
    """Give each of ``items`` (summaries) that is possibly stale its reason as ``stale``."""
    got = flags(service.store) if items else {}  # the read that made them synced the store
    for item in items:
        if item["key"] in got:
            item["stale"] = got[item["key"]]["reason"]


def stale(service: Any, *, now: str) -> dict[str, Any]:
    """The open memories whose code moved since they were written or confirmed, in reading
    order, each with why and the commits that moved it."""
    from nxm.record import reading_order, summary

    got = verdicts(service)
    heads = service.store.cache.many(list(got), "head")
    shown = [{**summary(r), "stale": got[r["key"]]} for r in reading_order(list(heads.values()))]
    answer: dict[str, Any] = {"memories": shown, "total": len(shown)}
    if here(service.ws.root) is None:
        answer["note"] = "not in a git repository (or no commit yet): no memory can be flagged"
    return service.noted(answer)


def confirm(service: Any, *, key: str, now: str, actor: str) -> dict[str, Any]:
    """Record that a memory is still true of the code as it is (HEAD): its flag clears."""
    commit = head(service.ws.root)

    def apply(r: dict[str, Any], current: Any) -> tuple[str, dict[str, Any]]:
        return "CONFIRMED", {"commit": commit}

    return service._change(key, now, actor, apply)


def suggested(root: Path, text: str, refs: list[str]) -> list[str]:
    """The refs ``text`` names that exist in the repository and are not ``refs`` yet."""
    listed = git(root, "ls-files", "-z") if here(root) else None
    if not listed:
        return []
    files = set(listed.decode("utf-8", "replace").split("\0")) - {""}

    def read(path: str) -> str | None:
        with contextlib.suppress(OSError):
            file = root / path
            if file.stat().st_size <= 1 << 20:
                return file.read_text("utf-8", "replace")
        return None

    return code.suggest(text, refs, files, read)
