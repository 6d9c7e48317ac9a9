"""The module registry: which operation declarations each workspace module contributes.

The MCP tool surface and the CLIs are the fan-out over these (seed 003): a workspace exposes the
tools of its active modules only. Each listed module defines ``OPERATIONS``.
"""

from __future__ import annotations

import importlib

from nxs.ops import Operation

MODULE_OPS: dict[str, tuple[str, ...]] = {
    "memory": ("nxm.ops", "nxm.ops.session", "nxm.ops.lifecycle", "nxm.ops.repair"),
    "linear": ("nxs.linear.ops",),
}


def operations(modules: list[str] | tuple[str, ...] | None = None) -> list[Operation]:
    """Every declared operation of the given modules (all modules when None), in table order."""
    out: list[Operation] = []
    for module in modules if modules is not None else MODULE_OPS:
        for name in MODULE_OPS.get(module, ()):
            out.extend(importlib.import_module(name).OPERATIONS)
    return out


__all__ = ["MODULE_OPS", "operations"]
