"""The dashboard's own views: what the pages need that no single tool answers.

Each is an `Operation` (arguments checked, run through the seam's call path with its services,
lock and error envelopes) served only to the page, at ``POST /api/view/<name>``. They only read,
through the same service the tools use, so the page shows what the tools answer.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from nxm.ops import FILTERS, OPERATIONS
from nxs.ops import Operation, Param

MAX_NODES = 500  # the picture draws this many at most; the page says how many were left out
SORTS = ("reading", "updated", "created", "priority")
ORDERS = ("desc", "asc")
EVERYTHING = 1 << 62  # a page size no store reaches: the whole filtered list, in reading order
PRIORITY_RANK = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}


def _matching(ctx: Any, filters: dict[str, Any]) -> list[dict[str, Any]]:
    """Every memory `memory_list` would page through for these filters, in reading order."""
    return ctx.memory.list(page=1, page_size=EVERYTHING, **filters)["memories"]


def sort_memories(memories: list[dict[str, Any]], sort: str, order: str) -> list[dict[str, Any]]:
    """Summaries in the chosen order; a stable sort, so ties keep reading order either way."""
    if sort == "reading":
        return memories
    if sort == "priority":  # "desc" is HIGH first
        rank = PRIORITY_RANK.get
        return sorted(memories, key=lambda m: rank(m["priority"], 1), reverse=order == "asc")
    return sorted(memories, key=lambda m: m.get(sort) or "", reverse=order == "desc")


def _list(ctx: Any, *, sort: str, order: str, page: int, page_size: int, **filters: Any) -> Any:
    import math

    chosen = sort_memories(_matching(ctx, filters), sort, order)
    start = (page - 1) * page_size
    total = len(chosen)
    return {
        "memories": chosen[start : start + page_size], "order": order, "page": page,
        "page_size": page_size, "sort": sort, "total": total,
        "total_pages": math.ceil(total / page_size) if total else 0,
    }  # fmt: skip


def _select(ctx: Any, **filters: Any) -> Any:
    """The key and status of every memory the filters match (for "select all N")."""
    chosen = _matching(ctx, filters)
    return {
        "memories": [{"key": m["key"], "status": m["status"]} for m in chosen],
        "total": len(chosen),
    }


def _export(ctx: Any, **filters: Any) -> Any:
    """`nxm export`'s lines (key order, history included) for the memories the filters match."""
    from nxm.port import export_lines

    keys = [m["key"] for m in _matching(ctx, filters)]
    records = ctx.memory.store.records()
    data = b"".join(export_lines({k: records[k] for k in keys}))
    stamp = ctx.now[:10]
    return {"count": len(keys), "filename": f"memories-{stamp}.jsonl", "jsonl": data.decode()}


class Generation:
    """What the page polls: a value that changes whenever the store or the graph log did."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, ctx: Any) -> Any:
        from nxm.graph import AGENT_LOG

        store = ctx.memory.store
        if store.sync():
            self.seen += 1
        data, commits = store.generation()
        try:
            graph = (ctx.memory.ws.dir / AGENT_LOG).stat()
            mark = f"{graph.st_size}.{graph.st_mtime_ns}"
        except OSError:
            mark = "-"
        return {"generation": f"{data}.{commits}.{self.seen}.{mark}"}


def _graph(ctx: Any) -> dict[str, Any]:
    """Every entity (most supported first, up to `MAX_NODES`) and the relations between them."""
    from nxm.graph import current, view_relation

    graph = current(ctx.memory, ctx.now)
    degree = Counter(e for rel in graph.relations.values() for e in (rel["source"], rel["target"]))
    ranked = sorted(
        graph.entities.values(),
        key=lambda e: (-len(e["sourceMemoryIds"]) - degree[e["id"]], e["name"].casefold(), e["id"]),
    )[:MAX_NODES]
    shown = {e["id"] for e in ranked}
    relations = [
        view_relation(graph, rel)
        for rel in graph.relations.values()
        if rel["source"] in shown and rel["target"] in shown
    ]
    relations.sort(key=lambda r: r["id"])
    return {
        "entities": [{**e, "relationCount": degree[e["id"]]} for e in ranked],
        "relations": relations, "shown": len(ranked), "total": len(graph.entities),
    }  # fmt: skip


def _session(ctx: Any) -> dict[str, Any]:
    """The MCP instructions and tool list a session here gets, with their sizes in bytes."""
    import mcp_types as types

    from nxs.mcp.server import Seam

    seam = Seam(workspace=str(ctx.workspace.root))  # the configured groups, as `nxs mcp serve`
    instructions = seam.instructions()
    tools = seam.tools()

    def size(model: Any) -> int:
        return len(model.model_dump_json(by_alias=True, exclude_unset=True).encode())

    by_tool = {op.tool: op for op in seam.ops}
    return {
        "groups": list(seam.groups),
        "instructions": instructions,
        "instructionsBytes": len(instructions.encode()),
        "tools": [
            {
                "bytes": size(tool),
                "description": tool.description,
                "group": by_tool[tool.name].group,
                "name": tool.name,
                "writes": by_tool[tool.name].writes,
            }
            for tool in tools
        ],
        "toolsBytes": size(types.ListToolsResult(tools=tools)),
    }


def _view(name: str, handler: Any, summary: str, params: tuple[Param, ...] = ()) -> Operation:
    return Operation(
        name=name, tool=f"ui_{name}", cli="nxs", verb=("ui",), module="memory", group="ui",
        summary=summary, handler=handler, params=params,
    )  # fmt: skip


def operations() -> list[Operation]:
    """The dashboard's views of the memory module, each a read-only operation ``ui_<view>``."""
    from nxm.activity import activity

    listing = (
        Param("sort", help="reading (default), updated, created or priority.", default="reading", choices=SORTS),
        Param("order", help="desc (newest or highest first, default) or asc.", default="desc", choices=ORDERS),
        *next(op for op in OPERATIONS if op.tool == "memory_list").params,
    )  # fmt: skip
    days = Param("days", type="int", help="Window in days.", default=30, min=1, max=3650)
    return [
        _view("list", _list, "The memory list, sorted.", listing),
        _view("select", _select, "Keys and statuses of every memory a filter matches.", FILTERS),
        _view("export", _export, "The JSON Lines export of the memories a filter matches.", FILTERS),
        _view("generation", Generation(), "A value that changes when the store does."),
        _view("graph", _graph, "The whole entity graph, for the picture."),
        _view("session", _session, "The instructions and tool list a session gets."),
        _view("activity", activity, "Memories and events over time, and who did what.", (days,)),
    ]  # fmt: skip


VIEWS = operations()  # what `nxs.registry.views` collects for the dashboard

__all__ = ["MAX_NODES", "SORTS", "VIEWS", "operations", "sort_memories"]
