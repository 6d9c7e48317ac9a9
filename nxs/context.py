"""The call context both seams build: workspace, clock, actor, and the services over them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from nxs.errors import ValidationError
from nxs.render import parse_timestamp, timestamp
from nxs.workspace import Workspace, find

# Actor resolution (seed 003): the umbrella writes as one identity; the nxm CLI may be told
# apart by NXM_ACTOR first.
SERVER_ACTOR_ENV = ("NXS_ACTOR", "NXF_ACTOR", "USER")
CLI_ACTOR_ENV = ("NXM_ACTOR", *SERVER_ACTOR_ENV)
_EXAMPLE = "e.g. 2026-05-29T10:00:00Z"


def resolve_actor(explicit: str | None, env: tuple[str, ...] = SERVER_ACTOR_ENV) -> str:
    """The first of: the explicit actor, the named environment variables, ``nxs``.

    Raises:
        ValidationError: it is longer than 100 characters (refused, never cut).
    """
    for name, value in (("actor", explicit), *((n, os.environ.get(n)) for n in env)):
        if value and value.strip():
            if len(value.strip()) > 100:
                raise ValidationError(
                    f"{name} is {len(value.strip())} characters; at most 100 are allowed",
                    suggestion="name the author with a shorter --actor (a name or handle)",
                )
            return value.strip()
    return "nxs"


def resolve_now(explicit: str | None) -> str:
    """The timestamp a write stamps: the explicit one normalised, else the current time."""
    if explicit is None:
        return timestamp()
    try:
        moment = parse_timestamp(explicit)
    except (ValueError, TypeError, OverflowError):
        raise ValidationError(
            f"now must be an ISO-8601 timestamp, got {explicit!r}", suggestion=_EXAMPLE
        ) from None
    if not 1970 <= moment.year <= 9000:  # expiries and stats windows add and subtract years
        raise ValidationError(
            f"now must be between the years 1970 and 9000, got {explicit!r}", suggestion=_EXAMPLE
        )
    return timestamp(moment)


@dataclass
class Context:
    """What a handler gets besides its arguments."""

    now: str
    actor: str
    workspace_arg: str | None = None
    services: dict[str, Any] = field(default_factory=dict)  # shared cache (the server keeps it)

    @property
    def workspace(self) -> Workspace:
        """The workspace this call opens (found lazily, so a bad one errors as the call's error)."""
        key = ("workspace", self.workspace_arg)
        if key not in self.services:
            self.services[key] = find(self.workspace_arg)
        return self.services[key]

    def service(self, name: str) -> Any:
        """The service of module ``name`` in this call's workspace, made once per context
        (NotFoundError where the module is not active)."""
        ws = self.workspace
        ws.require(name)
        key = (name, ws.root)
        if key not in self.services:
            from nxs.registry import hook, module  # deferred: keeps `--help` and prime light

            self.services[key] = hook(module(name).service)(ws)
        return self.services[key]

    @property
    def memory(self) -> Any:
        """The memory module's service of this call's workspace."""
        return self.service("memory")

    def release(self) -> None:
        """Close the files the services hold open (a CLI call ends; a server keeps them)."""
        for service in self.services.values():
            release = getattr(service, "release", None)
            if release is not None:
                release()


__all__ = ["CLI_ACTOR_ENV", "SERVER_ACTOR_ENV", "Context", "resolve_actor", "resolve_now"]
