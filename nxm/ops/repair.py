"""The operations that mend the store after git: `resolve` a memory in a merge conflict, and
`doctor`, which lists (and fixes what it can of) everything in ``.nxs/`` that does not read."""

from __future__ import annotations

from nxm.ops import INTRODUCTION, KEY, calling, op
from nxs.ops import Operation, Param

OPERATIONS: list[Operation] = [
    op(
        "resolve",
        "core",
        summary="Show both sides of a memory git left in a merge conflict, or resolve it by "
        "keeping one side (edited, if you pass a new body or introduction).",
        handler=calling("nxm.repair", "resolve"),
        writes=True,
        params=(
            KEY,
            Param(
                "keep",
                help="The side to keep; without it, both are shown.",
                choices=("ours", "theirs"),
            ),  # fmt: skip
            INTRODUCTION,
            Param(
                "body", help="The body to keep instead of the side's.", max_len=200_000, stdin=True
            ),  # fmt: skip
        ),
        example="nxm resolve 3f2a --keep theirs",
    ),
    op(
        "doctor",
        "insights",
        summary="List every memory file that does not read (conflicts, bad front matter, "
        "stray or misnamed files) and this clone's git set-up, each with its fix; with fix, "
        "do what needs no person.",
        handler=calling("nxm.repair", "doctor"),
        writes=True,
        params=(
            Param(
                "fix",
                type="bool",
                help="Configure git, write the git files and "
                "NEXUS_MEMORY.md, adopt misnamed memory files.",
            ),  # fmt: skip
        ),
        example="nxm doctor --fix",
    ),
]
