"""Memory changes a reviewer can read, from git: `diff` (what a branch did to the memories, each
memory once, old → new) and `log` (the store's events, newest first, with the commit of each).

Both only read. git is asked with optional locks off (a read never takes ``index.lock``), and a
branch's changes are what it has beyond its merge base with the base, so what a merge brought in
from the base is not the branch's (as a forge's pull request counts them).
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from nxm.record import FIELDS, memories
from nxm.store.text import COMMITTED, KEY, FileProblem, event_line, parse, parse_log
from nxs.errors import ConflictError, NotFoundError, UpstreamError, ValidationError

# The kinds of change, in the order they are listed.
KINDS = ("added", "changed", "reopened", "restored", "closed", "superseded", "forgotten",
         "purged", "confirmed", "feedback")  # fmt: skip
SHOWN = (*(f for f in COMMITTED if f != "status"), "body")
DEFAULTS = ("refs/heads/main", "refs/heads/master", "refs/remotes/origin/main",
            "refs/remotes/origin/master")  # fmt: skip
_FOLDERS = ("memories", "history")


class Git:
    """git run in one repository, read-only (`nxm.stale.run`: the one runner)."""

    def __init__(self, top: Path) -> None:
        self.top = top

    def __call__(self, *args: str, input: bytes | None = None, ok: bool = True) -> bytes | None:
        """git's stdout; on failure None, or (``ok``) an UpstreamError."""
        from nxm.stale import run

        got = run(self.top, *args, data=input)
        if got is None:
            raise UpstreamError("git is not installed", suggestion="install git", code="NO_GIT")
        if got.returncode == 0:
            return got.stdout  # type: ignore[no-any-return]
        if not ok:
            return None
        why = got.stderr.decode(errors="replace").strip()[:300]
        raise UpstreamError(f"git {args[0]} failed: {why}", code="GIT_FAILED")

    def stream(self, *args: str) -> subprocess.Popen[bytes]:
        from nxm.stale import ENV

        return subprocess.Popen(["git", *args], cwd=self.top, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env={**os.environ, **ENV})  # fmt: skip


def repository(ws_dir: Path) -> tuple[Git, str] | None:
    """git for the repository holding ``.nxs/``, and that folder's path in it (None: no git)."""
    from nxm.store.gitconfig import repository as find

    found = find(ws_dir.parent)
    if found is None:
        return None
    top = found[0]
    return Git(top), os.path.relpath(ws_dir, top).replace(os.sep, "/")


def _in_git(ws_dir: Path) -> tuple[Git, str]:
    found = repository(ws_dir)
    if found is None:
        raise ConflictError(
            f"{ws_dir.parent} is not in a git repository: there is no branch to compare",
            suggestion="`git init` and commit the workspace; `nxm log` lists events without git",
            code="NOT_A_REPOSITORY",
        )
    return found


def _short(ref: str) -> str:
    return ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")


def _target(git: Git, base: str | None, quiet: bool = False) -> tuple[str, str, str] | None:
    """What HEAD is compared with: (its name, the merge base, a note); None when ``quiet`` and
    HEAD is the default branch (or there is none).

    Raises:
        ValidationError, NotFoundError, ConflictError: a base that is no commit, or no base.
    """
    note = ""
    if base is None:
        # One look at the refs: the branches (HEAD's marked *), origin/HEAD's target.
        listed = git("for-each-ref", "--format=%(HEAD)%00%(refname)%00%(symref)", "refs/heads/",
                     "refs/remotes/origin/HEAD", *DEFAULTS[2:]).decode()  # fmt: skip
        rows = [ln.split("\0") for ln in listed.splitlines()]
        refs = {ref: target for _, ref, target in rows}
        head = next((_short(ref) for star, ref, _ in rows if star == "*"), "")
        origin = refs.get("refs/remotes/origin/HEAD")
        default = origin or next((r for r in DEFAULTS if r in refs), None)
        if default is None:
            if quiet:
                return None
            if not rows:  # not even one branch
                raise ConflictError("this repository has no commit yet: there is nothing to "
                                    "compare", suggestion="commit first", code="NO_COMMIT")  # fmt: skip
            raise ConflictError(
                "this repository has no default branch (origin/HEAD, main or master) to "
                "compare with", suggestion="pass BASE, e.g. `nxm diff develop`",
                code="NO_DEFAULT_BRANCH",
            )  # fmt: skip
        base = _short(default)
        if head and head == base.removeprefix("origin/"):
            if quiet:
                return None
            if base == head:  # on the default branch itself: what it has beyond its upstream
                up = git("rev-parse", "-q", "--abbrev-ref", "@{upstream}", ok=False)
                if not up:
                    raise ConflictError(
                        f"HEAD is {head}, the default branch, and it has no upstream: "
                        "there is no branch to compare", code="ON_DEFAULT_BRANCH",
                        suggestion="pass BASE, e.g. `nxm diff HEAD~3` or `nxm diff v1.2`",
                    )  # fmt: skip
                base = up.decode().strip()
            note = f"HEAD is {head}, the default branch: compared with {base}"
    elif base.startswith("-"):
        raise ValidationError(f"base {base!r} is not a commit", suggestion="pass a branch, "
                              "tag or commit")  # fmt: skip
    merge_base = git("merge-base", base, "HEAD", ok=False)
    if merge_base:
        return base, merge_base.decode().strip(), note
    if not git("rev-parse", "-q", "--verify", "HEAD^{commit}", ok=False):
        raise ConflictError("this repository has no commit yet: there is nothing to compare",
                            suggestion="commit first", code="NO_COMMIT")  # fmt: skip
    if not git("rev-parse", "-q", "--verify", f"{base}^{{commit}}", ok=False):
        raise NotFoundError(f"no commit {base!r} in this repository", code="NO_SUCH_BASE",
                            suggestion="pass a branch, tag or commit (`git branch -a` lists "
                            "the branches)")  # fmt: skip
    raise ConflictError(f"{base} and HEAD share no history", code="UNRELATED_HISTORIES",
                        suggestion="pass a base HEAD grew from")  # fmt: skip


def key_of(path: str, rel: str) -> str | None:
    """The key of a memory or history file's path in the repository (None: another file)."""
    folder, _, name = path.removeprefix(rel + "/").partition("/")
    stem, dot, suffix = name.rpartition(".")
    wanted = {"memories": "md", "history": "jsonl"}.get(folder)
    return stem if dot and suffix == wanted and KEY.match(stem) else None


def _touched(git: Git, merge_base: str, paths: tuple[str, ...], status: bytes) -> tuple[dict, set]:
    """The files changed since the merge base, each with its blob there (None: absent), and
    those the working tree changes. The commits' changes come tree to tree and the working
    tree's from status: a diff of the merge base against the working tree would compare each
    file's content, and `rev:path` names make cat-file read whole trees (~17 ms each at 2,000)."""
    raw = (git("diff", "--raw", "-z", "--no-abbrev", "--no-renames", merge_base, "HEAD", *paths)
           or b"").decode().split("\0")  # fmt: skip
    old: dict[str, str | None] = {}
    for meta, path in zip(raw[0::2], raw[1::2], strict=False):
        sha = meta.split()[2] if meta.startswith(":") else ""
        old[path] = sha if sha.strip("0") else None
    dirty = set()
    for item in status.decode().split("\0"):
        fields = item.split(" ", 8 if item[:2] == "1 " else 10)
        if item[:2] in ("1 ", "u ", "? "):  # changed, unmerged, untracked
            path = item[2:] if item[:2] == "? " else fields[-1]
            head = fields[6] if item[:2] == "1 " else ""
            dirty.add(path)
            old.setdefault(path, head if head.strip("0") else None)
    return old, dirty


def _blobs(git: Git, shas: list[str]) -> dict[str, bytes]:
    """The contents of blobs, in one cat-file."""
    from nxm.stale import objects

    return {sha: got[1] for sha, got in objects(git.top, shas).items() if got} if shas else {}


def _side(md: bytes | None, log: bytes | None, where: str) -> tuple[dict[str, Any] | None, list]:
    fields = {n: FIELDS[n] for n in COMMITTED} | parse(md, where) if md is not None else None
    return fields, parse_log(log, where) if log is not None else []


def _body(old: str, new: str) -> dict[str, Any]:
    """A body change summarised: lines added and removed, and the first changed lines."""
    import difflib

    a, b = old.splitlines(), new.splitlines()
    added = removed = 0
    first: dict[str, Any] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed, added = removed + i2 - i1, added + j2 - j1
            first = first or {"old": a[i1] if i2 > i1 else None, "new": b[j1] if j2 > j1 else None}
    return {"field": "body", **first, "lines_added": added, "lines_removed": removed}


def _kind(old: dict | None, new: dict | None, changes: list, events: list) -> str | None:
    if old is None:
        return "added" if new is not None else None
    if new is None:
        return "purged"
    was, now = old["status"], new["status"]
    replaced = any((e.get("data") or {}).get("superseded_by") for e in events)
    if was != now:
        if now == "forgotten" or was == "forgotten":
            return "forgotten" if now == "forgotten" else "restored"
        return ("superseded" if replaced else "closed") if now == "closed" else "reopened"
    if changes:
        return "changed"
    if replaced:
        return "superseded"
    types = {e["type"] for e in events}
    if types == {"FEEDBACK_SUBMITTED"}:
        return "feedback"
    if types and types <= {"FEEDBACK_SUBMITTED", "CONFIRMED"}:
        return "confirmed"  # still true of the code as it is (`nxm confirm`)
    return "changed" if events else None  # e.g. closed and reopened: no net change


def _entry(key: str, old: dict | None, new: dict | None, events: list) -> dict[str, Any] | None:
    """One memory's change, or None when the branch left it as it was."""
    changes: list[dict[str, Any]] = []
    if old is not None and new is not None:
        for name in SHOWN:
            a, b = old.get(name), new.get(name)
            if a != b:
                changes.append(
                    _body(a, b) if name == "body" else {"field": name, "old": a, "new": b}
                )
    kind = _kind(old, new, changes, events)
    if kind is None:
        return None
    now = new if new is not None else old
    assert now is not None
    data = [e.get("data") or {} for e in events]
    votes = Counter(d.get("signal") for e, d in zip(events, data, strict=True)
                    if e["type"] == "FEEDBACK_SUBMITTED")  # fmt: skip
    return {
        "key": key, "kind": kind, "introduction": now["introduction"],
        "category": now.get("category"), "status": now.get("status", "open"),
        "was": old.get("status", "open") if old is not None else None, "changes": changes,
        "votes": {s: n for s, n in sorted(votes.items()) if s},
        "replaces": sorted({d["supersedes"] for d in data if d.get("supersedes")}),
        "replaced_by": next((d["superseded_by"] for d in data if d.get("superseded_by")), None),
        "events": len(events), "actors": sorted({str(e.get("actor")) for e in events}),
    }  # fmt: skip


def changes(ws_dir: Path, base: str | None = None, quiet: bool = False) -> dict[str, Any] | None:
    """What the working tree's memories differ in from the merge base of HEAD and ``base``
    (default: the default branch), each memory once (None: ``quiet`` and nothing to compare)."""
    git, rel = _in_git(ws_dir)
    paths = ("--", *(f"{rel}/{f}" for f in _FOLDERS))
    # status reads the working tree while the refs and the trees are compared
    status = git.stream("status", "--porcelain=v2", "-z", "--untracked-files=all",
                        "--no-renames", *paths)  # fmt: skip
    try:
        target = _target(git, base, quiet)
        if target is None:
            return None
        name, merge_base, note = target
        old, dirty = _touched(git, merge_base, paths, status.communicate()[0])
    finally:
        if status.returncode is None:
            status.kill()
            status.communicate()
    blobs = _blobs(git, sorted({sha for sha in old.values() if sha}))
    by_key: dict[str, dict[str, bytes | None]] = {}
    for path, sha in old.items():
        key = key_of(path, rel)
        if key:
            by_key.setdefault(key, {})[path.rpartition(".")[2]] = blobs.get(sha) if sha else None
    dirty = {key_of(p, rel) for p in dirty}
    from nxm.store.files import Files

    files = Files(ws_dir)
    entries, problems = [], []
    for key in sorted(by_key):
        try:
            md, _, log, _ = files.read(key)
            after, events = _side(md, log, f"{rel}/memories/{key}.md")
            then = by_key[key]  # a file not listed is as it was at the merge base
            before, was = _side(
                then.get("md", md), then.get("jsonl", log), f"{name}:{rel}/memories/{key}.md"
            )
        except FileProblem as exc:
            problems.append({"key": key, "problem": str(exc)})
            continue
        seen = {event_line(e) for e in was}
        entry = _entry(key, before, after, [e for e in events if event_line(e) not in seen])
        if entry is not None:
            entries.append({**entry, "uncommitted": key in dirty})
    entries.sort(key=lambda e: (KINDS.index(e["kind"]), e["introduction"].casefold(), e["key"]))
    counts = Counter(e["kind"] for e in entries)
    return {
        "base": name, "merge_base": merge_base, "note": note or None,
        "uncommitted": any(e["uncommitted"] for e in entries),
        "counts": {k: counts[k] for k in KINDS if counts[k]}, "total": len(entries),
        "changes": entries, "unreadable": problems,
    }  # fmt: skip


def diff(service: Any, *, now: str, base: str | None = None, markdown: bool = False) -> dict:
    """The memory changes of this branch (and the working tree) against ``base``.

    Raises:
        ConflictError: the memories are not in git (a team store on object storage).
    """
    if service.store.remote:
        raise ConflictError("this workspace keeps its memories in a team store on object "
                            "storage, not in git: there is no branch to compare",
                            suggestion="`nxm log` lists the store's events", code="NOT_IN_GIT")  # fmt: skip
    out = changes(service.ws.dir, base)
    assert out is not None
    if markdown:
        out["markdown"] = as_markdown(out)
    return out


def counted(counts: dict[str, int]) -> str:
    """``3 added, 1 closed``."""
    return ", ".join(f"{n} {kind}" for kind, n in counts.items())


def branch_line(ws_dir: Path, seam: str = "cli", served: Any = None) -> str:
    """The session start's line on what this branch changed in memory ('' when nothing, on the
    default branch, or outside git)."""
    if repository(ws_dir) is None:
        return ""
    got = changes(ws_dir, quiet=True)
    if not got or not got["total"]:
        return ""
    more = "`nxm diff` shows them"
    if seam == "mcp" and (served is None or "memory_diff" in served):
        more = "memory_diff shows them"
    return (f"This branch changed {memories(got['total'])} against {got['base']} "
            f"({counted(got['counts'])}); {more}.\n")  # fmt: skip


# -- Markdown for a pull request -------------------------------------------------------------

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#|~"})


def _md(text: Any, limit: int = 120) -> str:
    """Stored text as one line of Markdown that cannot format or link anything."""
    first = " ".join(str(text if text is not None else "-").split())
    first = first if len(first) <= limit else first[: limit - 1].rstrip() + "…"
    return first.translate(_MD_SPECIAL) if first else "-"


def _value(value: Any, show: Any) -> str:
    if isinstance(value, list):
        return show(", ".join(map(str, value)) or "-")
    if isinstance(value, dict):
        return show(orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())
    return show(value)


def change_line(c: dict[str, Any], show: Any = _md) -> str:
    """One field's change: ``priority: MEDIUM → HIGH`` (a body: its line counts and first
    changed line), its values through ``show`` (Markdown-escaped by default)."""
    if c["field"] == "body":
        first = c.get("new") or c.get("old")
        where = f" “{show(first, 60)}”" if first else ""
        return f"body: +{c['lines_added']} −{c['lines_removed']} lines{where}"
    return f"{c['field']}: {_value(c['old'], show)} → {_value(c['new'], show)}"


def _intro(by_key: dict[str, dict[str, Any]], key: str) -> str:
    return _md(by_key[key]["introduction"]) if key in by_key else ""


def as_markdown(result: dict[str, Any]) -> str:
    """The answer of `diff` as a block to paste into a pull request's description."""
    by_key = {e["key"]: e for e in result["changes"]}
    n = result["total"]
    what = "including uncommitted changes" if result["uncommitted"] else "committed"
    out = ["### Memory changes", "",
           f"**{memories(n)}** against `{_md(result['base'])}` (merge base "
           f"`{result['merge_base'][:8]}`, {what}){': ' + counted(result['counts']) if n else ''}."]  # fmt: skip
    for kind in KINDS:
        rows = [e for e in result["changes"] if e["kind"] == kind]
        if rows:
            out += ["", f"#### {kind.capitalize()} ({len(rows)})", ""]
        for e in rows:
            head = f"- `{e['key'][:8]}` {_md(e['introduction'])}"
            if kind == "added" and e["status"] != "open":
                head += f" ({e['status']})"
            for old in e["replaces"]:
                head += f" — replaces `{old[:8]}` {_intro(by_key, old)}"
            if e["replaced_by"]:
                head += (
                    f" — replaced by `{e['replaced_by'][:8]}` {_intro(by_key, e['replaced_by'])}"
                )
            if e["votes"]:
                head += " — votes: " + ", ".join(f"{v} {s.lower()}" for s, v in e["votes"].items())
            out.append(head.rstrip())
            out += [f"  - {change_line(c)}" for c in e["changes"]]
    return "\n".join(out) + "\n"
