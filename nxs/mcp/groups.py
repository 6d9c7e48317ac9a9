"""The MCP tool groups (docs/mcp.md): which operations a server lists. Each operation declares
its own `group`; a workspace's ``[mcp] tools`` (or ``--tools``) chooses groups."""

from __future__ import annotations

from collections.abc import Iterable

from nxs.errors import ValidationError
from nxs.ops import Operation

# The documented tool groups (docs/mcp.md). Each operation declares its own `group`.
GROUPS: dict[str, str] = {
    "core": "capture, correct, retire and read memories: add, update, classify, close, reopen, "
    "forget, restore, purge, show, list, search",
    "session": "session start and end: recall, store_context, facts, facts_update, personas, "
    "persona",
    "knowledge": "consolidated knowledge and the entity graph: knowledge, graph_*",
    "insights": "lifecycle and figures: history, promote, feedback, stats, profile, entities, "
    "diff, log, stale, confirm",
    "linear": "Linear issues and projects: linear_query, linear_mutate",
}
GROUP_ALIASES = {"lifecycle": "insights", "graph": "knowledge"}
DEFAULT_GROUPS = ("core", "session")


def split_groups(spec: str | Iterable[str] | None) -> tuple[tuple[str, ...], list[str]]:
    """(the known groups of ``core,session`` or a list, the unknown names); ``all`` is every one."""
    if spec is None:
        return DEFAULT_GROUPS, []
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    unknown: list[str] = []
    for raw in names:
        name = str(raw).strip().lower()
        if not name:
            continue
        if name == "all":
            out = list(GROUPS)
            continue
        name = GROUP_ALIASES.get(name, name)
        if name not in GROUPS:
            unknown.append(str(raw))
        elif name not in out:
            out.append(name)
    return tuple(out), unknown


def parse_groups(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """Group names from ``core,session`` or a list; ``all`` means every group.

    Raises:
        ValidationError: an unknown group name.
    """
    groups, unknown = split_groups(spec)
    if unknown:
        raise ValidationError(
            f"unknown tool group {unknown[0]!r}",
            suggestion=f"groups: {', '.join(GROUPS)}, or all",
            code="BAD_TOOL_GROUP",
        )
    return groups


def exposed_operations(modules: Iterable[str], groups: Iterable[str]) -> list[Operation]:
    """The operations a server exposes: those of the active modules in the chosen groups."""
    from nxs.registry import operations

    chosen = set(groups)
    return [op for op in operations(list(modules)) if op.group in chosen]


def with_linear(modules: Iterable[str], groups: tuple[str, ...]) -> tuple[str, ...]:
    """The configured groups, with ``linear`` when the module is active and Linear connected."""
    if "linear" not in modules or "linear" in groups:
        return groups
    from nxs.linear.connections import connected

    return (*groups, "linear") if connected() else groups


__all__ = [
    "DEFAULT_GROUPS", "GROUPS", "GROUP_ALIASES", "exposed_operations", "parse_groups",
    "split_groups", "with_linear",
]  # fmt: skip
