"""Operations of this part of the suite (filled in by its issue)."""

from nxs.ops import Operation

OPERATIONS: list[Operation] = []
