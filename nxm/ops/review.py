"""The reviewer's operations: `diff` (what a branch changed in memory) and `log` (the store's
events with their commits). Both read git and write nothing."""

from __future__ import annotations

from nxm.ops import calling, op
from nxs.ops import Operation, Param

OPERATIONS: list[Operation] = [
    op("diff", "insights",
       summary="The memories this branch added, changed, closed, forgot or superseded against "
       "a base (default: its merge base with the default branch), uncommitted changes "
       "included: each memory once, with its old and new introduction and fields.",
       handler=calling("nxm.review", "diff", actor=False),
       params=(
           Param("base", help="Branch, tag or commit to compare with; default: the default "
                 "branch (origin/HEAD, main or master).", max_len=200, positional=True),
           Param("markdown", type="bool",
                 help="Add the changes as Markdown for a pull request's description."),
       ),
       example="nxm diff main --markdown"),
    op("log", "insights",
       summary="Memory events across the store, newest first: when, who, what happened to "
       "which memory, and the commit that brought each event.",
       handler=calling("nxm.eventlog", "log", actor=False),
       params=(
           Param("limit", type="int", help="Events to return.", default=20, min=1, max=10_000),
           Param("key", help="Only this memory (key or prefix).", max_len=64),
           Param("by", help="Only events by this actor (the author a write recorded).", max_len=200),
           Param("since", help="Only events at or after this date or time (ISO-8601).",
                 max_len=40),
       ),
       example="nxm log --since 2026-05-01 --by alice"),
]  # fmt: skip
