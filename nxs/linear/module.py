"""The Linear module, as the umbrella knows it (`nxs.registry.Module`)."""

from nxs.registry import Module

LINEAR = Module(name="linear", operations=("nxs.linear.ops",), prime="nxs.linear.module:block")

BLOCK = {
    "cli": """\
# Linear (nxs linear)

Linear issues, projects and teams are reachable here: read with `nxs linear query ACTION`, \
write with `nxs linear mutate ACTION`; nothing deletes. Use them when the task involves a \
Linear issue, project or team. With several organisations connected, name one per call with \
`--org LABEL`; a missing or unknown label is refused, never guessed. Keys are set up with \
`nxs linear connect` and never live in the workspace.
""",
    "mcp": """\
# Linear

Linear issues, projects and teams are reachable here: read with linear_query, write with \
linear_mutate; nothing deletes. Use them when the task involves a Linear issue, project or \
team. With several organisations connected, name one per call with `org` (its label; \
`workspace` is the project root, not the organisation); a missing or unknown label is \
refused, never guessed.
""",
}


def block(ws: object, budget: int | None, now: str, seam: str, served: object) -> str:
    """Linear's block of the session bootstrap ('' where a host is not served its tools)."""
    if seam == "mcp" and served is not None and "linear_query" not in served:  # type: ignore[operator]
        return ""
    return BLOCK[seam]
