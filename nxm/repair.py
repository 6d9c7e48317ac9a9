"""Mending the store after git: a memory in a merge conflict (`resolve`), and everything in
``.nxs/`` that does not read, with its fix (`doctor`).

`resolve` shows both sides of a conflicted memory and writes the one kept (edited, if asked),
with both sides' events. `doctor --fix` does what needs no person: configure git's merge driver,
write the git files and NEXUS_MEMORY.md, adopt memory files added by hand under another name.
"""

from __future__ import annotations

from typing import Any

from nxm.record import event, key_for
from nxm.store import text
from nxs.errors import ConflictError, ValidationError

SIDES = ("ours", "theirs")
SHOWN = (*text.COMMITTED, "body")


def _conflicted(service: Any, key: str) -> str:
    """The full key of the memory in conflict that ``key`` names.

    Raises:
        NotFoundError: no memory file in conflict starts with it.
        ConflictError: several do, or the memory reads fine (not in conflict).
    """
    key = key.strip().lower()
    store = service.store
    store.sync()
    hits = [k for k, why in store.cache.problems() if k.startswith(key) and "conflict" in why]
    if len(hits) > 1:
        raise ConflictError(
            f"key prefix {key!r} matches {len(hits)} memories in conflict: {', '.join(hits[:5])}",
            suggestion="give more characters of the key",
            code="AMBIGUOUS_KEY",
        )
    if hits:
        return hits[0]
    found = service.resolve(store.records(), key)  # raises when it names nothing at all
    raise ConflictError(
        f"memory {found['key']} is not in a merge conflict",
        suggestion="`nxm doctor` lists the memory files that do not read",
        code="BAD_STATE",
    )


def _side_events(raw: bytes | None, where: str) -> list[dict[str, Any]]:
    """A history's events, both sides' when git left it in conflict (each event once)."""
    if raw is None:
        return []
    if not text.conflicted(raw):
        return text.parse_log(raw, where)
    ours, theirs, _, _ = text.sides(raw)
    events = text.parse_log(ours, where)
    seen = [text.event_line(e) for e in events]
    for e in text.parse_log(theirs, where):
        line = text.event_line(e)
        if line in seen:
            seen.remove(line)
        else:
            events.append(e)
    return events


def resolve(
    service: Any, *, key: str, now: str, actor: str, keep: str | None = None,
    introduction: str | None = None, body: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Both sides of a memory in conflict, or (``keep``) the memory resolved to one of them,
    edited by ``introduction`` and ``body``, with both sides' events.

    Raises:
        NotFoundError, ConflictError: as `_conflicted`; a side that does not read is kept.
        ValidationError: an edit without ``keep``.
    """
    from nxm.service import _body, _intro

    if keep is None and (introduction is not None or body is not None):
        raise ValidationError(
            "an edit needs the side it edits", suggestion="add --keep ours or --keep theirs"
        )
    full = _conflicted(service, key)
    store = service.store
    md, _, log, _ = store.files.read(full)
    where = f".nxs/memories/{full}.md"
    raw = md or b""
    if text.conflicted(raw):
        ours, theirs, *labels = text.sides(raw)
    else:  # only the history is in conflict
        ours, theirs, labels = raw, raw, ["ours", "theirs"]
    sides: dict[str, Any] = {}
    for name, data in zip(SIDES, (ours, theirs), strict=True):
        try:
            sides[name] = text.parse(data, f"{where} ({name})")
        except text.FileProblem as exc:
            sides[name] = {"problem": str(exc)}
    differs = [f for f in SHOWN if sides["ours"].get(f) != sides["theirs"].get(f)]
    out: dict[str, Any] = {
        "key": full,
        "labels": dict(zip(SIDES, labels, strict=True)),
        "differs": differs,
        **{name: sides[name] for name in SIDES},
    }
    if keep is None:
        return {**out, "kept": None, "resolved": False}
    chosen = sides[keep]
    if "problem" in chosen:
        raise ConflictError(
            f"the {keep} side of memory {full} does not read: {chosen['problem']}",
            suggestion="keep the other side, or edit the file by hand",
            code="SIDE_UNREADABLE",
        )
    fields = {**chosen}
    if introduction is not None:
        fields["introduction"] = _intro(introduction)
    if body is not None:
        fields["body"] = _body(body)
    events = _side_events(log, f".nxs/history/{full}.jsonl")
    kept = {"kept": keep, "label": out["labels"][keep], "fields": differs}
    events.append(event("RESOLVED", now, actor, **kept))
    with store.writing() as current:
        md_bytes = text.render({**fields, "key": full})
        log_bytes = b"".join(text.event_line(e) for e in events)
        record = text.record_of(full, md_bytes, log_bytes, ".nxs")
        vector = service._vectors([record])
        store.commit(current, [record], vector, resolving=full)
    shown = {k: v for k, v in record.items() if k != "events"}
    return {**out, "kept": keep, "resolved": True, "memory": shown}


def _adopt(service: Any, name: str, now: str, actor: str) -> dict[str, str]:
    """A memory file added by hand under another name, keyed by its body and renamed."""
    store = service.store
    path = store.files.memories / name
    try:
        fields = text.parse(path.read_bytes(), f".nxs/memories/{name}")
    except (OSError, text.FileProblem) as exc:
        return {"file": f".nxs/memories/{name}", "skipped": str(exc)}
    key = key_for(fields["body"])
    with store.writing() as current:
        if key in current or store.cache.problem(key) is not None:
            return {"file": f".nxs/memories/{name}", "skipped": f"memory {key} has that body"}
        md_bytes = text.render({**fields, "key": key})
        log_bytes = text.event_line(event("CREATED", now, actor, adopted=name))
        record = text.record_of(key, md_bytes, log_bytes, ".nxs")
        vector = service._vectors([record])
        store.commit(current, [record], vector)
        path.unlink()
    return {"file": f".nxs/memories/{name}", "adopted": key}


def doctor(service: Any, *, now: str, actor: str, fix: bool = False) -> dict[str, Any]:
    """Every problem of the store and of this clone's git set-up, with its fix (done: ``fix``)."""
    from nxm.categories import VOCABULARY, near
    from nxm.projection import NAME
    from nxm.store import gitconfig

    store = service.store
    store.sync()
    root = service.ws.root
    found = list(store.problems)
    fixed: list[dict[str, str]] = []
    if fix:
        changed = gitconfig.set_up(root)
        fixed += [{"file": name, "fixed": "written"} for name in changed]
        for p in [p for p in found if p["fix"].startswith("`nxm doctor --fix`")]:
            fixed.append(_adopt(service, p["file"].rsplit("/", 1)[1], now, actor))
        with store.locked():
            before = _read(root / NAME)
            store.project()
            if _read(root / NAME) != before:
                fixed.append({"file": NAME, "fixed": "written from the memories"})
        store.sync()
        found = list(store.problems)
    kept, used = set(service.config.get("categories", ())), store.cache.categories()
    rank = {c: (c in VOCABULARY, n, c) for c, n in used.items()}
    for a in sorted(used):  # one category in two spellings: the vocabulary's or the larger stays
        same = near(a, set(used) - {a})
        if same and a not in kept and rank[a] < rank[same]:
            found.append({
                "file": ".nxs/memories",
                "problem": f"categories {same!r} and {a!r} look like one",
                "fix": f"`nxm classify KEY --category {same}` for each memory in {a!r} "
                f"(`nxm list --category {a}`), or list both in [memory] categories",
            })  # fmt: skip
    if gitconfig.configured(root) is False:
        found.append({
            "file": ".git/config",
            "problem": "git's merge driver for memories is not configured in this clone, so "
            "a merge falls back to line merges (NEXUS_MEMORY.md and histories by union)",
            "fix": "`nxm doctor --fix` (or `nxm init`) configures it",
        })  # fmt: skip
    return {"problems": found, "fixed": fixed, "ok": not found}


def _read(path: Any) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


__all__ = ["doctor", "resolve"]
