"""Human output for `nxm diff` and `nxm log` (see `nxm.cli.human`)."""

from __future__ import annotations

import sys
from typing import Any

from nxm.cli.human import _escape, line, memories, when

MARK = {"added": "[green]+[/]", "changed": "[yellow]~[/]", "reopened": "[green]↺[/]",
        "restored": "[green]↺[/]", "closed": "[dim]-[/]", "superseded": "[dim]-[/]",
        "forgotten": "[red]x[/]", "purged": "[red]x[/]", "confirmed": "[green]✓[/]",
        "feedback": "[cyan]±[/]"}  # fmt: skip


def _shown(value: Any, limit: int = 60) -> str:
    return line("-" if value in (None, "") else value, limit)


def _diff(out: Any, r: dict[str, Any]) -> None:
    from rich.text import Text

    from nxm.review import KINDS, change_line, counted

    if r.get("markdown"):  # the block to paste, as is (not rich markup)
        sys.stdout.write(r["markdown"])
        return
    where = "with uncommitted changes" if r["uncommitted"] else "committed changes only"
    out.print(f"against [bold]{_escape(r['base'])}[/] [dim](merge base {r['merge_base'][:8]}, "
              f"{where})[/]")  # fmt: skip
    if r.get("note"):
        out.print(f"[dim]{_escape(r['note'])}[/]")
    if not r["total"]:
        out.print("[dim]no memory changed[/]")
    intro = {e["key"]: e["introduction"] for e in r["changes"]}
    room = max(out.width - 14, 30)
    for kind in KINDS:
        rows = [e for e in r["changes"] if e["kind"] == kind]
        if rows:
            out.print(f"\n[bold]{kind}[/] ({len(rows)})")
        for e in rows:
            tail = f" [dim]({e['status']})[/]" if kind == "added" and e["status"] != "open" else ""
            tail += " [yellow]uncommitted[/]" if e["uncommitted"] else ""
            short = room - len(Text.from_markup(tail))
            out.print(f"  {MARK[kind]} [cyan]{e['key'][:8]}[/]  {line(e['introduction'], short)}"
                      f"{tail}", soft_wrap=True)  # fmt: skip
            for old in e["replaces"]:
                out.print(f"      replaces [cyan]{old[:8]}[/] {line(intro.get(old), room - 10)}")
            if e["replaced_by"]:
                new = e["replaced_by"]
                out.print(f"      replaced by [cyan]{new[:8]}[/] {line(intro.get(new), room - 14)}")
            if e["votes"]:
                votes = ", ".join(f"{n} {s.lower()}" for s, n in e["votes"].items())
                out.print(f"      [dim]votes: {votes}[/]")
            for c in e["changes"]:
                if c["field"] == "introduction":  # two long lines: one under the other
                    out.print(f"      introduction: {line(c['old'], room - 14)}")
                    out.print(f"                 → {line(c['new'], room - 14)}")
                else:
                    out.print(f"      {change_line(c, _shown)}", soft_wrap=True)
    if r["total"]:
        out.print(f"\n[dim]{memories(r['total'])}: "
                  f"{counted(r['counts'])}[/]")  # fmt: skip
    for p in r["unreadable"]:
        out.print(f"[yellow]unreadable[/] {_escape(p['key'][:8])}: {_escape(p['problem'])}")


def _log(out: Any, r: dict[str, Any]) -> None:
    from nxm.cli.human import change

    if not r["events"]:
        out.print("[dim]no events match[/]")
        return
    room = max(out.width - 23, 30)
    for e in r["events"]:  # as `git log --oneline` does: the commit first, then what happened
        commit = f"[yellow]{e['commit']['sha'][:11]:<11}[/]" if e["commit"] else " " * 11
        commit = "[red]uncommitted[/]" if e["uncommitted"] else commit
        what = change(e)
        out.print(f"{commit}  {when(e['at'])}  [bold]{_escape(str(e['actor']))}[/]  "
                  f"{_escape(e['type'])}{'  ' + what if what else ''}", soft_wrap=True)  # fmt: skip
        out.print(f"{'':11}  [cyan]{e['key'][:8]}[/]  {line(e['introduction'], room)}")
    shown = len(r["events"])
    if shown < r["total"]:
        out.print(f"[dim]{shown} of {r['total']} events (--limit for more)[/]")
    if not r["git"]:
        out.print("[dim]not in a git repository: no commits to show[/]")


READERS = {"diff": _diff, "log": _log}
