"""Human output for the session, graph, knowledge and figures verbs (see `nxm.cli.human`).

Each reader prints one answer for a person at 80 columns; stored text goes through
`nxm.cli.human._escape` (via `line`, `styled` or directly).
"""

from __future__ import annotations

from typing import Any

from nxm.cli import human, human_review
from nxm.cli.human import FILL, FIXED, SHORT, _escape, cut, line, styled, table, when


def _recall(out: Any, r: dict[str, Any]) -> None:
    if r["memories"]:
        rows = table(("key", FIXED), ("conf", FIXED), ("memory", FILL))
        for m in r["memories"]:
            stale = human.STALE if m.get("stale") else ""
            rows.add_row(f"[cyan]{_escape(m['memory_id'][:8])}[/]", f"{m['confidence']:.2f}",
                         cut(stale + line(m["summary"])))  # fmt: skip
        out.print(rows)
    else:
        out.print("[dim]nothing to recall for this[/]")
    notes = [human.memories(r["total"])] + (["topics fanned out"] if r.get("fanned_out") else [])
    out.print(f"[dim]{' · '.join(notes)}[/]")
    if r.get("persona_hint"):
        out.print(
            f"persona hint: [bold]{_escape(r['persona_hint'])}[/] "
            f"[dim]({line(r.get('persona_reason'), 60)}; `nxm persona {_escape(r['persona_hint'])}`)[/]"
        )
    if r.get("user_facts"):
        out.print("[bold]user facts[/]")
        _facts_lines(out, r["user_facts"])


def _store_context(out: Any, r: dict[str, Any]) -> None:
    verb = "stored context as" if r.get("created") else "context already stored as"
    out.print(
        f"{verb} [cyan]{_escape(r['memory_id'])}[/] {line(r['introduction'])} "
        f"[dim]({r['context_chars']} characters, summary ~{r['summary_tokens']} tokens, "
        f"conversation {_escape(str(r['conversation_id']))})[/]"
    )


def _paths(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in _paths(v, f"{prefix}{k}.")]
    return [(prefix.rstrip("."), value)]


def _facts_lines(out: Any, facts: dict[str, Any]) -> None:
    import orjson

    for path, value in _paths(facts):
        shown = value if isinstance(value, str) else orjson.dumps(value).decode()
        out.print(f"  [bold]{_escape(path)}[/]: {line(shown, 70)}")


def _facts(out: Any, r: dict[str, Any]) -> None:
    if not r["facts"]:  # the bytes of `{}` would only puzzle
        out.print('[dim]no user facts yet[/] (`nxm facts update \'{"name": "Ada"}\'`)')
        return
    _facts_lines(out, r["facts"])
    out.print(f"[dim]{r['bytes']} of {r['max_bytes']} bytes[/]")


def _personas(out: Any, r: dict[str, Any]) -> None:
    rows = table(("name", FIXED), ("title", SHORT | {"max_width": 30}), ("use when", FILL))
    for p in r["personas"]:
        rows.add_row(f"[bold]{_escape(p['name'])}[/]", _escape(p["title"]),
                     cut(line((p.get("when_to_use") or [""])[0])))  # fmt: skip
    out.print(rows)


def _persona(out: Any, r: dict[str, Any]) -> None:
    p = r["persona"]
    out.print(
        f"[bold]{_escape(p['name'])}[/] · {_escape(p['title'])} [dim]({_escape(p['source'])})[/]"
    )
    out.print(_escape(p["description"]))
    if p.get("communication_style"):
        out.print(f"[dim]style:[/] {_escape(p['communication_style'])}")
    for g in p.get("guidelines") or ():
        out.print(f"  • {_escape(g)}")


def _feedback(out: Any, r: dict[str, Any]) -> None:
    fb = r["feedback"]
    out.print(
        f"recorded {styled(r['signal'], human.SIGNAL_STYLE)} on [cyan]{r['key']}[/] "
        f"[dim](now +{fb['POSITIVE']} {fb['NEUTRAL']} −{fb['NEGATIVE']})[/]"
    )


def _purge(out: Any, r: dict[str, Any]) -> None:
    out.print(f"purged [cyan]{r['key']}[/] for good")


def _entity(e: dict[str, Any]) -> str:
    return f"[bold]{_escape(e['name'])}[/] [dim]({_escape(e['type'])})[/]"


def _graph_search(out: Any, r: dict[str, Any]) -> None:
    if not r["entities"]:
        out.print(f"[dim]no entity matches[/] {line(r['query'], 60)}")
        return
    rows = table(("name", SHORT | {"max_width": 24}), ("type", FIXED), ("rel", FIXED),
                 ("mem", FIXED), ("description", FILL))  # fmt: skip
    for e in r["entities"]:
        rows.add_row(
            f"[bold]{_escape(e['name'])}[/]", _escape(e["type"]), str(e.get("relationCount", 0)),
            str(len(e.get("sourceMemoryIds") or ())), cut(line(e.get("description"))),
        )  # fmt: skip
    out.print(rows)


def _graph_traverse(out: Any, r: dict[str, Any]) -> None:
    out.print(f"from {_entity(r['startEntity'])}, {r['direction']}, up to {r['hops']} hops")
    if not r["paths"]:
        out.print("[dim]no relations[/]")
    for p in r["paths"]:
        arrow = f"-{_escape(p['relationship'])}->"
        left, right = _escape(p["from"]["name"]), _escape(p["entity"]["name"])
        if p["direction"] == "incoming":
            left, right = right, left
        out.print(f"  {'  ' * (p['depth'] - 1)}{left} [magenta]{arrow}[/] {right}")


def _graph_query(out: Any, r: dict[str, Any]) -> None:
    out.print(_escape(r["answer"]))
    sources = _escape(", ".join(k[:8] for k in r.get("sourceMemoryIds") or ()))
    out.print(
        f"[dim]confidence {r['confidence']:.2f} · {r['method']}"
        + (f" · from {sources}" if sources else "")
        + "[/]"
    )


def _graph_add(out: Any, r: dict[str, Any]) -> None:
    verb = "added" if r.get("created") else ("corrected" if r.get("changed") else "unchanged:")
    out.print(f"{verb} {_entity(r['entity'])} [dim]{r['entity']['id']}[/]")


def _graph_relate(out: Any, r: dict[str, Any]) -> None:
    rel = r["relation"]
    verb = "related" if r.get("created") else "already related:"
    out.print(
        f"{verb} {_entity(rel['source'])} [magenta]-{_escape(rel['relation'])}->[/] "
        f"{_entity(rel['target'])}"
    )


def _graph_remove(out: Any, r: dict[str, Any]) -> None:
    removed = r.get("removed") or {}
    for e in removed.get("entities") or ():
        out.print(f"removed {_entity(e)}")
    for rel in removed.get("relations") or ():
        out.print(
            f"removed {_escape(rel['source']['name'])} [magenta]-{_escape(rel['relation'])}->[/] "
            f"{_escape(rel['target']['name'])}"
        )
    if not r.get("changed"):
        out.print("[dim]nothing removed[/]")


def _knowledge(out: Any, r: dict[str, Any]) -> None:
    if "entry" in r:
        e = r["entry"]
        out.print(
            f"[bold]{_escape(e['subject'] or '')}[/] · {_escape(e['category'] or '')} · "
            f"{styled(e['priority'], human.PRIORITY_STYLE)} [dim]{e['id']}[/]"
        )
        out.print(_escape(e["content"]))
        out.print(f"[dim]from {_escape(', '.join(k[:8] for k in e['sourceMemoryIds']))}[/]")
        return
    if "content" in r:
        from markdown_it import MarkdownIt
        from rich.markdown import Markdown

        text = r["content"] or "_(no open memories)_"
        doc = Markdown(text)  # its parser drops inline HTML: TRN-<ticket>-slug would lose a word
        doc.parsed = (
            MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"]).parse(text)
        )
        out.print(doc)
        return
    rows = table(("id", FIXED), ("category", SHORT), ("subject", SHORT), ("statement", FILL))
    for e in r["entries"]:
        rows.add_row(
            f"[dim]{e['id']}[/]", _escape(e["category"] or ""), _escape(e["subject"] or ""),
            cut(line(e["content"])),
        )  # fmt: skip
    out.print(rows)


def _stats(out: Any, r: dict[str, Any]) -> None:
    before = r["comparisonPeriod"]
    rows = table(
        ("", FIXED), (f"last {r['days']} days", FIXED | {"justify": "right"}),
        ("the window before", FIXED | {"justify": "right"}),
        title=f"{when(r['from'])} → {when(r['to'])}",
    )  # fmt: skip
    for name, now in r["memories"].items():
        rows.add_row(f"memories {name}", str(now), str(before["memories"][name]))
    for signal in ("POSITIVE", "NEGATIVE", "NEUTRAL"):
        rows.add_row(f"feedback {styled(signal, human.SIGNAL_STYLE)}", str(r["feedback"][signal]),
                     str(before["feedback"][signal]))  # fmt: skip
    rows.add_row("searches", str(r["searches"]), str(before["searches"]))
    rows.add_row("tokens (estimated)", f"{r['tokens']:,}", f"{before['tokens']:,}")
    out.print(rows)
    totals = " · ".join(f"{v} {k}" for k, v in r["totals"].items())
    out.print(f"[dim]now: {totals}[/]")


def _profile(out: Any, r: dict[str, Any]) -> None:
    out.print(
        f"[bold]{_escape(r['userId'])}[/] · {human.memories(r['memoryCount'])} · "
        f"{r['entityCount']} entit{'y' if r['entityCount'] == 1 else 'ies'} · "
        f"last active {when(r.get('lastActivityAt')) or 'never'}"
    )
    if r.get("categories"):
        cats = ", ".join(f"{_escape(k)} {v}" for k, v in r["categories"].items())
        out.print(f"[dim]categories:[/] {cats}")
    if r.get("topics"):
        out.print(f"[dim]topics:[/] {_escape(', '.join(r['topics']))}")
    if r.get("summary"):
        out.print(_escape(r["summary"]))


def _entities(out: Any, r: dict[str, Any]) -> None:
    if not r["entities"]:
        out.print("[dim]no users or agents have memories yet[/]")
        return
    rows = table(("kind", FIXED), ("id", SHORT | {"max_width": 30}), ("open", FIXED),
                 ("stored", FIXED), ("last active", FIXED))  # fmt: skip
    for e in r["entities"]:
        who = e.get("userId") or e.get("agentId") or ""
        rows.add_row(
            _escape(e["kind"]), _escape(who), str(e["memoryCount"]), str(e["storedCount"]),
            when(e.get("lastActivityAt")),
        )  # fmt: skip
    out.print(rows)


def _resolve(out: Any, r: dict[str, Any]) -> None:
    if r["resolved"]:
        m = r["memory"]
        side = r["kept"]
        out.print(f"resolved [cyan]{_escape(r['key'])}[/]: kept {side} "
                  f"({_escape(r['labels'][side])}): {line(m['introduction'], 60)}")  # fmt: skip
        paths = f".nxs/memories/{r['key']}.md .nxs/history/{r['key']}.jsonl"
        out.print(f"[dim]tell git with `git add {paths}`[/]")
        return
    out.print(f"memory [cyan]{_escape(r['key'])}[/] is in a merge conflict; they differ in: "
              f"{', '.join(r['differs']) or 'nothing but the markers'}")  # fmt: skip
    for side in ("ours", "theirs"):
        fields = r[side]
        out.print(f"\n[bold]{side}[/] ({_escape(r['labels'][side])}):")
        if "problem" in fields:
            out.print(f"  [red]{_escape(fields['problem'])}[/]")
            continue
        for name in r["differs"] or ["introduction"]:
            out.print(f"  {name}: {_escape(str(fields.get(name)))}", soft_wrap=True)
    key = r["key"][:8]
    out.print(f"\n[dim]keep one with `nxm resolve {key} --keep ours` or `--keep theirs` "
              "(add --body or --introduction to edit it)[/]")  # fmt: skip


def _doctor(out: Any, r: dict[str, Any]) -> None:
    for f in r["fixed"]:
        adopted = f.get("adopted") and f"adopted as {f['adopted']}"
        what = adopted or f.get("fixed") or f"skipped: {f.get('skipped')}"
        out.print(f"fixed {_escape(f['file'])}: {_escape(what)}")
    if r["ok"]:
        out.print("[green]every memory file reads; git is set up for nxs here[/]")
        return
    for p in r["problems"]:
        out.print(f"[yellow]{_escape(p['file'])}[/]: {_escape(p['problem'])}", soft_wrap=True)
        out.print(f"  [dim]fix[/]: {_escape(p['fix'])}", soft_wrap=True)


def _stale(out: Any, r: dict[str, Any]) -> None:
    for m in r["memories"]:
        out.print(f"[cyan]{_escape(m['key'][:8])}[/] [bold]{line(m['introduction'], 68)}[/]")
        human.stale_lines(out, m["stale"])
    if r.get("note"):
        out.print(f"[yellow]{_escape(r['note'])}[/]")
    elif not r["memories"]:
        out.print("[dim]no memory names code that moved since it was written or confirmed[/]")
    else:
        out.print(f"[dim]{human.memories(r['total'])} possibly stale: check each against the "
                  "code, then `nxm confirm KEY` (still true) or `nxm update KEY`[/]")  # fmt: skip


READERS = {
    "resolve": _resolve, "stale": _stale, "doctor": _doctor,
    "recall": _recall, "store_context": _store_context, "facts": _facts,
    "facts_update": _facts, "personas": _personas, "persona": _persona, "feedback": _feedback,
    "purge": _purge, "graph_search": _graph_search, "graph_traverse": _graph_traverse,
    "graph_query": _graph_query, "graph_add": _graph_add, "graph_relate": _graph_relate,
    "graph_remove": _graph_remove, "knowledge": _knowledge, "stats": _stats,
    "profile": _profile, "entities": _entities,
}  # fmt: skip
READERS.update(human_review.READERS)


def show(name: str, result: Any) -> None:
    """Print an operation's result for a person."""
    out = human.console()
    for problem in result.get("problems", ()) if isinstance(result, dict) else ():
        from rich.console import Console

        err = Console(stderr=True, highlight=False, soft_wrap=True)
        err.print(f"[yellow]left out[/]: {_escape(problem['file'])}: {_escape(problem['problem'])}")
        err.print(f"  [dim]fix[/]: {_escape(problem['fix'])}")
    reader = human.READERS.get(name) or READERS.get(name)
    if reader is not None:
        reader(out, result)
    elif isinstance(result, dict) and "memory" in result:
        human._one_memory(out, name, result)
    else:  # a verb without its own rendering: the JSON answer, whole and valid (never wrapped)
        from nxs.render import render

        out.print(_escape(render(result).decode().rstrip("\n")), soft_wrap=True)
