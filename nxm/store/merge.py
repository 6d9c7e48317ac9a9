"""nxs's git merge driver: a workspace's committed files merged by what they hold.

Configured per clone by `nxm.store.gitconfig`; git runs ``python -m nxm.store.merge %O %A %B %P``.
A memory file merges field by field (`memory3`), an event log as a multiset of lines (`log3`: a
revert takes a vote back out, which git's ``union`` cannot), NEXUS_MEMORY.md by key (`index3`).
Anything else, a side that does not parse, or any failure: git's own text merge. This module
imports only the standard library, orjson and the formats, since git runs it once per file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from nxm import projection
from nxm.record import FIELDS, reading_sort_key
from nxm.store import text

MEMORY = re.compile(r"(^|/)\.nxs/memories/[^/]+\.md$")
LOG = re.compile(r"(^|/)\.nxs/(history/[^/]+\.jsonl|graph\.jsonl)$")
INDEX = re.compile(r"(^|/)NEXUS_MEMORY\.md$")
_ABSENT = object()  # a field of a side that has no file (add/add)


def merge3(
    path: str, base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str] = ("ours", "theirs")
) -> tuple[bytes, bool]:
    """One file's three versions merged by what its path says it is; whether it is clean."""
    path = path.replace(os.sep, "/")
    if MEMORY.search(path):
        return memory3(base, ours, theirs, labels)
    if LOG.search(path):
        return log3(base, ours, theirs), True
    if INDEX.search(path):
        return index3(base, ours, theirs), True
    return text3(base, ours, theirs, labels)


def text3(
    base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str], union: bool = False
) -> tuple[bytes, bool]:
    """`git merge-file` of the three texts (its markers, the repository's conflict style).

    Raises:
        OSError, subprocess.SubprocessError: git is missing or failed.
    """
    with tempfile.TemporaryDirectory(prefix="nxs-merge-") as tmp:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            names.append(os.path.join(tmp, name))
            Path(names[-1]).write_bytes(data)
        flags = ["--union"] if union else []
        got = subprocess.run(
            ["git", "merge-file", "-p", *flags, "-L", labels[0], "-L", "base", "-L", labels[1],
             *names],
            capture_output=True, check=False,
        )  # fmt: skip
    if not 0 <= got.returncode < 128:
        raise subprocess.SubprocessError(got.stderr.decode(errors="replace").strip())
    return got.stdout, got.returncode == 0


def _same(a: Any, b: Any) -> bool:
    return a is b or (
        a is not _ABSENT
        and b is not _ABSENT
        and orjson.dumps(a, option=orjson.OPT_SORT_KEYS)
        == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
    )


def _render(values: dict[str, Any]) -> bytes:
    """`text.render` of these values, a field that is `_ABSENT` left out (an add/add's base)."""
    data = text.render({k: (FIELDS[k] if v is _ABSENT else v) for k, v in values.items()})
    head, sep, body = data.partition(b"\n---\n")
    gone = tuple(f"{k}: ".encode() for k, v in values.items() if v is _ABSENT)
    kept = [ln for ln in head.split(b"\n") if not (gone and ln.startswith(gone))]
    return b"\n".join(kept) + sep + body


def memory3(base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str]) -> tuple[bytes, bool]:
    """A memory file merged field by field, a body both sides changed line by line (each side
    rewritten with the merged fields, so git's line merge conflicts only on true conflicts)."""
    try:
        sides = [text.parse(ours, "ours"), text.parse(theirs, "theirs")]
        old = text.parse(base, "base") if base.strip() else None
    except text.FileProblem:
        return text3(base, ours, theirs, labels)
    names = (*text.COMMITTED, "body")
    b = {n: (old.get(n, FIELDS[n]) if old is not None else _ABSENT) for n in names}
    o, t = ({n: s.get(n, FIELDS[n]) for n in names} for s in sides)
    merged, conflicts = {}, []
    for n in names:
        if _same(o[n], t[n]) or _same(t[n], b[n]):
            merged[n] = o[n]
        elif _same(o[n], b[n]):
            merged[n] = t[n]
        else:
            conflicts.append(n)
    if not conflicts:
        return text.render(merged), True
    three = [_render(merged | {n: side[n] for n in conflicts}) for side in (o, b, t)]
    out, clean = text3(three[1], three[0], three[2], labels)
    if clean:  # only the body conflicted, and its lines merged
        got = text.parse(out, "merged")
        want = merged | {"body": got["body"]}
        if not all(_same(got.get(n, FIELDS[n]), want[n]) for n in names):
            return text3(base, ours, theirs, labels)
    return out, clean


def _events(data: bytes) -> list[bytes]:
    """A log's lines, each with its newline (a last one cut short only when it is whole JSON)."""
    lines = data.split(b"\n")
    last = lines.pop()
    out = [ln + b"\n" for ln in lines]
    if last.strip():
        try:
            orjson.loads(last)
            out.append(last + b"\n")
        except orjson.JSONDecodeError:
            pass
    return out


def log3(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The logs merged as multisets of lines: each count ours + theirs - base, at least 0."""
    b, o, t = _events(base), _events(ours), _events(theirs)
    removed = Counter(b) - Counter(t)
    added = Counter(t) - Counter(b)
    kept = []
    for ln in o:  # the first of equal lines is the base's, the later ones appended
        if removed[ln] > 0:
            removed[ln] -= 1
        else:
            kept.append(ln)
    new = []
    for ln in reversed(t):
        if added[ln] > 0:
            added[ln] -= 1
            new.append(ln)
    return b"".join(kept + new[::-1])


def _line3(b: dict[str, Any] | None, o: dict[str, Any], t: dict[str, Any]) -> dict[str, Any]:
    out = dict(o)
    for n in projection.SHOWN:
        if o[n] == t[n] or (b is not None and o[n] == b[n]):
            out[n] = t[n]
        elif n == "created" and o[n] and t[n]:  # told by the earliest event: both are kept
            out[n] = min(o[n], t[n])
    return out  # a true conflict: ours (the memory file conflicts, its resolution writes again)


def index3(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """NEXUS_MEMORY.md merged by key (a removal beats an edit), re-sorted; a side not in
    `projection.render`'s form: the union of the lines, like git's ``union``."""
    got = [projection.parse(x) if x.strip() else ([], 0) for x in (base, ours, theirs)]
    if any(g is None for g in got):
        return text3(base, ours, theirs, ("ours", "theirs"), union=True)[0]
    (bl, bn), (ol, on), (tl, tn) = got  # type: ignore[misc]
    b, o, t = ({f["key"]: f for f in map(projection.fields, ls) if f} for ls in (bl, ol, tl))

    def beyond(lines: list[str], total: int, f: dict[str, Any]) -> bool:
        """Whether a side's file would not show this line (it is truncated before it)."""
        last = projection.fields(lines[-1]) if lines and total > len(lines) else None
        return last is not None and reading_sort_key(f) > reading_sort_key(last)

    merged = []
    for key in {**b, **o, **t}:
        x, y, z = b.get(key), o.get(key), t.get(key)
        if x is not None:
            y = x if y is None and beyond(ol, on, x) else y
            z = x if z is None and beyond(tl, tn, x) else z
            if y is None or z is None:
                continue  # removed on a side
        merged.append(_line3(x, y, z) if y is not None and z is not None else y or z)
    merged.sort(key=reading_sort_key)
    truncated = max(bn - len(bl), on - len(ol), tn - len(tl)) > 0
    total = max(on + tn - bn, len(merged)) if truncated else len(merged)
    lines = [projection.line(f) for f in merged[: projection.LIMIT]]
    return projection.render([ln for ln in lines if ln], total)


def _labels() -> tuple[str, str]:
    """The markers' labels: HEAD, and the merged branch's name when git says it (GITHEAD_*)."""
    named = [v for k, v in os.environ.items() if k.startswith("GITHEAD_")]
    return "HEAD", named[0] if len(named) == 1 else "theirs"


def main(argv: list[str] | None = None) -> int:
    """Merge %B into %A against %O for path %P; 0 when clean, 1 when markers are left."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 4:
        print("usage: python -m nxm.store.merge BASE OURS THEIRS PATH", file=sys.stderr)
        return 1
    base, ours, theirs, path = args[:4]
    labels = _labels()
    try:
        data = [Path(p).read_bytes() for p in (base, ours, theirs)]
        out, clean = merge3(path, data[0], data[1], data[2], labels)
        Path(ours).write_bytes(out)
        return 0 if clean else 1
    except Exception as exc:  # never fail a merge: git's own text merge instead
        print(f"nxs: merging {path} as text ({type(exc).__name__}: {exc})", file=sys.stderr)
    try:
        got = subprocess.run(
            ["git", "merge-file", "-L", labels[0], "-L", "base", "-L", labels[1],
             ours, base, theirs],
            check=False,
        )  # fmt: skip
        return 0 if got.returncode == 0 else 1
    except Exception:
        return 1


if __name__ == "__main__":
    sys.exit(main())
