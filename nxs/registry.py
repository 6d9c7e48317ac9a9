"""The module registry: what the umbrella knows of each workspace module, and nothing more.

A module declares itself once, as a `Module` (`nxm.module`, `nxs.linear.module`); the umbrella
reaches it only through the dotted names here, never its internals, so the tools, the CLIs,
`nxs prime` and `init` are the fan-out over the modules a workspace activates.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from nxs.ops import Operation

# Where each module declares itself (`Module`), in the order the umbrella lists them.
DECLARED = {"memory": "nxm.module:MEMORY", "linear": "nxs.linear.module:LINEAR"}
MODULES = tuple(DECLARED)


@dataclass(frozen=True)
class Module:
    """One workspace module, as the umbrella sees it. Each hook is ``"package.module:name"``."""

    name: str
    operations: tuple[str, ...]  # Python modules that declare its OPERATIONS
    defaults: dict[str, Any] = field(default_factory=dict)  # its config section's defaults
    service: str | None = None  # service(workspace): what `Context.service(name)` returns
    prime: str | None = None  # block(ws, budget, now, seam, served) -> str: its bootstrap text
    init: str | None = None  # set_up(root) -> [files changed]: what `init` makes for it
    views: tuple[str, ...] = ()  # Python modules that declare the dashboard's VIEWS


def hook(spec: str) -> Any:
    """The object a ``"package.module:name"`` hook names."""
    where, _, name = spec.partition(":")
    return getattr(importlib.import_module(where), name)


@cache
def module(name: str) -> Module:
    """The declaration of module ``name`` (a `KeyError` for a name no module has)."""
    return hook(DECLARED[name])  # type: ignore[no-any-return]


def operations(modules: list[str] | tuple[str, ...] | None = None) -> list[Operation]:
    """Every declared operation of the given modules (all modules when None), in table order."""
    out: list[Operation] = []
    for name in modules if modules is not None else MODULES:
        if name in DECLARED:
            for where in module(name).operations:
                out.extend(importlib.import_module(where).OPERATIONS)
    return out


def views(modules: list[str] | tuple[str, ...]) -> list[Operation]:
    """The dashboard's views of the given modules."""
    return [
        op
        for name in modules if name in DECLARED
        for where in module(name).views
        for op in importlib.import_module(where).VIEWS
    ]  # fmt: skip


__all__ = ["DECLARED", "MODULES", "Module", "hook", "module", "operations", "views"]
