"""Human output for the nxm verbs: rich tables and panels on a terminal (``--json`` skips this)."""

from __future__ import annotations

from typing import Any

_console: Any = None
PAST = {"add": "added", "update": "updated", "classify": "classified", "close": "closed",
        "reopen": "reopened", "forget": "forgot", "restore": "restored", "promote": "promoted"}  # fmt: skip


def console() -> Any:
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(highlight=False, soft_wrap=False)
    return _console


def _table(
    rows: list[dict[str, Any]], columns: list[tuple[str, str]], title: str | None = None
) -> Any:
    from rich.table import Table

    table = Table(title=title, show_lines=False, header_style="bold", title_justify="left")
    for _, header in columns:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*[_cell(row.get(field)) for field, _ in columns])
    return table


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def show(name: str, result: Any) -> None:
    """Print an operation's result for a person."""
    out = console()
    if name == "list":
        rows = [
            {**m, "key": m["key"][:8], "introduction": _escape(m["introduction"])}
            for m in result["memories"]
        ]
        out.print(_table(rows, [("key", "key"), ("introduction", "introduction"), ("category", "category"),
                                ("priority", "priority"), ("status", "status"), ("scope", "scope")]))  # fmt: skip
        out.print(
            f"[dim]page {result['page']} of {max(result['total_pages'], 1)} · {result['total']} memories[/]"
        )
    elif name == "search":
        rows = [  # the snippet under the introduction, dimmed
            {**m, "key": m["key"][:8], "introduction": _escape(m["introduction"])
             + (f"\n[dim]{_escape(m['snippet'])}[/]" if m.get("snippet") else "")}
            for m in result["results"]
        ]  # fmt: skip
        out.print(_table(rows, [("score", "score"), ("key", "key"), ("introduction", "introduction"),
                                ("category", "category"), ("keyword", "keyword"), ("semantic", "semantic")]))  # fmt: skip
        if result.get("note"):
            out.print(f"[yellow]{_escape(result['note'])}[/]")
    elif name == "show":
        from rich.panel import Panel

        m = result["memory"]
        facts = " · ".join(
            str(x)
            for x in (
                m["category"],
                m["scope"],
                m["priority"],
                m["layer"],
                m["status"],
                m["processing"],
            )
            if x
        )
        head = f"[bold]{_escape(m['introduction'])}[/]\n[dim]{m['key']} · {facts}[/]"
        if m["refs"]:
            head += f"\n[dim]refs: {_escape(', '.join(m['refs']))}[/]"
        out.print(Panel(f"{head}\n\n{_escape(m['body'])}", expand=False))
        out.print(
            f"[dim]created {m['created']} · updated {m['updated']} by {_escape(str(m['actor']))} · {len(m['events'])} events[/]"
        )
    elif name == "knowledge" and "content" in result:
        from rich.markdown import Markdown

        out.print(Markdown(result["content"] or "_(no open memories)_"))
    elif name == "history":
        out.print(
            _table(
                result["events"],
                [("n", "#"), ("at", "at"), ("type", "event"), ("actor", "actor"), ("data", "data")],
            )
        )
    elif isinstance(result, dict) and "memory" in result:
        m = result["memory"]
        verb = (
            PAST.get(name, name) if name != "add" or result.get("created") else "already stored as"
        )
        out.print(
            f"{verb} [bold]{m['key']}[/] {_escape(m['introduction'])} [dim]({m['status']}, {m['processing']})[/]"
        )
        if result.get("note"):  # add: the stored memories it resembles
            out.print(f"[yellow]{_escape(result['note'])}[/]")
    else:
        from rich.json import JSON

        from nxs.render import render

        out.print(JSON(render(result).decode()))
