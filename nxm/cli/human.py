"""Human output for the nxm verbs (the rest in `nxm.cli.human_more`, whose `show` picks one):
rich tables and lines that fit 80 columns. Stored text goes through `_escape` (rich markup);
long cells end in an ellipsis instead of wrapping a table row over many lines.
"""

from __future__ import annotations

from typing import Any

from nxm.record import memories  # noqa: F401 (the verbs' counts: human.memories)
from nxs.clitool import printable as _escape

_console: Any = None
PAST = {"add": "added", "update": "updated", "classify": "classified", "close": "closed",
        "reopen": "reopened", "forget": "forgot", "restore": "restored", "promote": "promoted",
        "revert": "reverted", "confirm": "confirmed"}  # fmt: skip
PRIORITY_STYLE = {"HIGH": "bold red", "MEDIUM": "yellow", "LOW": "dim"}
STATUS_STYLE = {"open": "green", "closed": "dim", "forgotten": "red", "expired": "dim"}
SIGNAL_STYLE = {"POSITIVE": "green", "NEGATIVE": "red", "NEUTRAL": "dim"}
TEXT_FIELDS = ("body", "introduction")
STALE = "[yellow](possibly stale)[/] "  # the code it names moved (`nxm stale` says how)


def console() -> Any:
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(highlight=False, soft_wrap=False)
    return _console


def styled(value: Any, styles: dict[str, str]) -> str:
    """A stored word (a status, a priority) escaped and coloured by its value."""
    text = _escape("" if value is None else str(value))
    style = styles.get(str(value))
    return f"[{style}]{text}[/]" if style and text else text


def when(stamp: str | None) -> str:
    """An ISO timestamp as ``2026-05-29 10:00`` (minutes are enough to read a list)."""
    return _escape(str(stamp)[:16].replace("T", " ")) if stamp else ""


def line(text: Any, limit: int = 0) -> str:
    """Stored text as one escaped line: the first line, cut at ``limit`` with an ellipsis."""
    first = str(text or "").strip().split("\n", 1)[0]
    if limit and len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return _escape(first)


def table(*columns: tuple[str, dict[str, Any]], title: str | None = None) -> Any:
    """A borderless table; a column's options say how it gives way at 80 columns."""
    from rich import box
    from rich.table import Table

    out = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        header_style="bold",
        title_justify="left",
        title_style="bold",
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
    )  # fmt: skip  (two spaces between columns: the text column gets the rest)
    for header, options in columns:
        out.add_column(header, **options)
    return out


FIXED = {"no_wrap": True}  # keys, words, numbers: never cut
# The text: the one column rich narrows to fit (it is wrapable), each cell kept to one line
# by `cut`; so a long introduction ends in an ellipsis and its row stays one line.
FILL = {"overflow": "ellipsis"}
SHORT = {"no_wrap": True, "overflow": "ellipsis", "max_width": 16}  # categories, names


def cut(markup: str) -> Any:
    """A cell of a `FILL` column: one line, an ellipsis where the column ends."""
    from rich.text import Text

    text = Text.from_markup(markup, overflow="ellipsis")
    text.no_wrap = True
    return text


def _memory_rows(rows: list[dict[str, Any]]) -> Any:
    # A status column only when the rows differ in it (a list is of one status by default).
    mixed = len({m["status"] for m in rows}) > 1
    columns = [("key", FIXED), ("introduction", FILL), ("category", SHORT), ("priority", FIXED)]
    columns += [("status", FIXED)] if mixed else []
    out = table(*columns)
    for m in rows:
        cells = [
            f"[cyan]{_escape(m['key'][:8])}[/]",
            cut((STALE if m.get("stale") else "") + line(m["introduction"])),
            _escape(m.get("category") or ""), styled(m["priority"], PRIORITY_STYLE),
        ]  # fmt: skip
        cells += [styled(m["status"], STATUS_STYLE)] if mixed else []
        out.add_row(*cells)
    return out


def _list(out: Any, result: dict[str, Any]) -> None:
    page, pages, total = result["page"], result["total_pages"], result["total"]
    if not total:
        out.print("[dim]no memories match[/] (see `nxm list --status all`)")
        return
    if not result["memories"]:
        out.print(
            f"[yellow]page {page} is past the end[/]: {memories(total)} fill {pages} "
            f"page{'s' if pages != 1 else ''} of {result['page_size']} "
            f"(try `--page {pages}`)"
        )
        return
    out.print(_memory_rows(result["memories"]))
    statuses = {m["status"] for m in result["memories"]}
    which = _escape(next(iter(statuses))) if len(statuses) == 1 else ""
    out.print(f"[dim]page {page} of {pages} · {memories(total, which)}[/]")


def _search(out: Any, result: dict[str, Any]) -> None:
    room = max(out.width - 17, 30)  # two lines a hit: its introduction, then its kind and snippet
    for m in result["results"]:
        head = f"{m['score']:.3f}  [cyan]{_escape(m['key'][:8])}[/]  "
        head += STALE if m.get("stale") else ""
        out.print(head + f"[bold]{line(m['introduction'], room)}[/]")
        about = [m.get("category"), m["priority"] != "MEDIUM" and m["priority"],
                 m["status"] != "open" and m["status"]]  # fmt: skip
        snippet = " ".join((m.get("snippet") or "").split())
        about.append(snippet and f"“{snippet}”")
        out.print(" " * 17 + f"[dim]{line(' · '.join(x for x in about if x), room)}[/]")
    if not result["results"]:
        out.print(f"[dim]nothing found for[/] {line(result['query'], 60)}")
    if result.get("note"):
        out.print(f"[yellow]{_escape(result['note'])}[/]")


def _show(out: Any, result: dict[str, Any]) -> None:
    from rich.panel import Panel

    m = result["memory"]
    cells = [_escape(m["category"] or ""), _escape(m["scope"])]
    cells += [styled(m["priority"], PRIORITY_STYLE), _escape(m["layer"])]
    cells += [styled(m["status"], STATUS_STYLE), _escape(m["processing"])]
    facts = " · ".join(x for x in cells if x)
    head = f"[bold]{_escape(m['introduction'])}[/]\n[cyan]{m['key']}[/] · {facts}"
    if m["refs"]:
        head += f"\n[dim]refs:[/] {_escape(', '.join(m['refs']))}"
    if m.get("expires"):
        head += f"\n[dim]expires {when(m['expires'])}[/]"
    out.print(Panel(f"{head}\n\n{_escape(m['body'])}", expand=False))
    if result.get("stale"):
        stale_lines(out, result["stale"])
    who = [f"{k.replace('_id', '')} {_escape(str(m[k]))}" for k in ("user_id", "agent_id",
           "session_id") if m.get(k)]  # fmt: skip
    fb = m["feedback"]
    out.print(
        f"[dim]created {when(m['created'])} · updated {when(m['updated'])} by "
        f"{_escape(str(m['actor']))} · {len(m['events'])} events[/]"
    )
    out.print(
        f"[dim]feedback +{fb['POSITIVE']} {fb['NEUTRAL']} −{fb['NEGATIVE']}"
        + "".join(f" · {w}" for w in who)
        + "[/]"
    )


def stale_lines(out: Any, verdict: dict[str, Any]) -> None:
    """Why a memory may be stale: each ref's change and the commits that made it."""
    out.print(f"{STALE}[dim]since {_escape(verdict['since'])}:[/]")
    for c in verdict["changes"]:
        out.print(f"  {_escape(c['reason'])}", soft_wrap=True)
        for commit in c["commits"][:5]:
            out.print(f"    [dim]{_escape(commit['commit'][:8])} {when(commit['date'])}[/] "
                      f"{line(commit['subject'], 60)}")  # fmt: skip


def change(e: dict[str, Any]) -> str:
    """What one history event did, in one escaped line."""
    data = e.get("data") or {}
    if "from" in data and "to" in data and e["type"] != "REVERTED":
        return f"{_escape(str(data['from']))} → {_escape(str(data['to']))}"
    if e["type"] == "FEEDBACK_SUBMITTED":
        said = f" “{line(data['comment'])}”" if data.get("comment") else ""
        return styled(data.get("signal"), SIGNAL_STYLE) + said
    parts = []
    if e["type"] == "REVERTED":
        parts.append(f"to #{_escape(str(data.get('to')))}")
    before = data.get("before") if isinstance(data.get("before"), dict) else None
    for field in data.get("fields") or ():
        if before is None or field not in before:
            parts.append(_escape(field))
        elif field in TEXT_FIELDS:
            parts.append(f"{_escape(field)} (was “{line(before[field], 24)}”)")
        else:
            old = before[field]
            old = ", ".join(old) if isinstance(old, list) else old
            parts.append(
                f"{_escape(field)} (was {_escape(str(old if old not in (None, '') else '-'))})"
            )
    rest = {k: v for k, v in data.items() if k not in ("fields", "before", "to", "from")}
    if isinstance(rest.get("commit"), str):  # the code it was written against: a short sha
        rest["commit"] = rest["commit"][:10]
    parts += [f"{_escape(k)}: {line(v)}" for k, v in rest.items()]
    return ", ".join(parts)


def _history(out: Any, result: dict[str, Any]) -> None:
    rows = table(("#", FIXED), ("at", FIXED), ("event", FIXED), ("actor", SHORT),
                 ("change", FILL), title=f"history of {result['key']}")  # fmt: skip
    for e in result["events"]:
        rows.add_row(
            str(e["n"]), when(e["at"]), _escape(e["type"]), _escape(str(e["actor"])), cut(change(e))
        )
    out.print(rows)
    shown = len(result["events"])
    if shown < result["total"]:
        out.print(f"[dim]{shown} of {result['total']} events (--limit for more)[/]")


def _one_memory(out: Any, name: str, result: dict[str, Any]) -> None:
    m = result["memory"]
    verb = PAST.get(name, name) if name != "add" or result.get("created") else "already stored as"
    tail = f"({m['status']}, {m['processing']})"
    room = max(out.width - len(verb) - len(m["key"]) - len(tail) - 3, 20)
    out.print(  # one line: the introduction cut to what the width leaves
        f"{verb} [cyan]{m['key']}[/] {line(m['introduction'], room)} "
        f"[dim]({styled(m['status'], STATUS_STYLE)}, {_escape(m['processing'])})[/]",
        soft_wrap=True,
    )
    if result.get("note"):  # add: the stored memories it resembles, or what it superseded
        out.print(f"[yellow]{_escape(result['note'])}[/]")
    if result.get("suggested_refs"):  # refs the body names that exist in the repository
        refs = [*m["refs"], *result["suggested_refs"]]
        out.print(f"[dim]it names code: {_escape(', '.join(result['suggested_refs']))}; to keep "
                  f"them as refs: nxm classify {m['key'][:8]} "
                  f"{_escape(' '.join(f'--ref {r}' for r in refs))}[/]", soft_wrap=True)  # fmt: skip
    for s in result.get("similar") or ():
        out.print(
            f"  {_escape(s['kind'])} [cyan]{s['key'][:8]}[/] {line(s['introduction'], 50)} "
            f"[dim]({s['similarity']:.2f})[/]"
        )


READERS = {"list": _list, "search": _search, "show": _show, "history": _history}
