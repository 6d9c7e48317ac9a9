"""The operations of memory and code (docs/concepts.md, "Memory and code"): `stale` lists the
memories whose code moved since they were written, `confirm` says one is still true."""

from __future__ import annotations

from nxm.ops import KEY, calling, op
from nxs.ops import Operation

OPERATIONS: list[Operation] = [
    op(
        "stale",
        "insights",
        summary="List the open memories whose code moved since they were written or confirmed "
        "(a ref's file renamed or deleted, its symbol changed), each with why and the commits; "
        "check each against the code, then confirm or update it.",
        handler=calling("nxm.stale", "stale", actor=False),
        example="nxm stale --json",
    ),
    op(
        "confirm",
        "insights",
        summary="Record that a possibly stale memory is still true of the code as it is now "
        "(HEAD); its flag clears.",
        handler=calling("nxm.stale", "confirm"),
        writes=True,
        params=(KEY,),
        example="nxm confirm 3f2a",
    ),
]
