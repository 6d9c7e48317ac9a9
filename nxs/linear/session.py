"""One Linear call's state: its arguments, its organisation, its client, its nxs workspace.

The organisation is chosen on first use of the client, after every local check has passed, so
a refused call never reaches Linear and a disambiguation answer goes only to a well-formed call.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson

from nxs.context import Context
from nxs.errors import NotFoundError, NxsError, UpstreamError, ValidationError
from nxs.linear import connections
from nxs.linear.client import LinearClient, api_url
from nxs.linear.documents import MUTATIONS

MemoryService = Any  # the memory module's service (`nxs.registry`): its public methods only

SORTED = orjson.OPT_SORT_KEYS
TRANSPORT = "linear.transport"  # ctx.services key: an httpx transport (tests)
SLEEP = "linear.sleep"  # ctx.services key: the retry sleeper (tests)


def backoff_sleep(seconds: float) -> None:
    """The retry sleeper when none is injected (the CLI's tests replace it)."""
    time.sleep(seconds)


@dataclass
class Call:
    """What an action function gets: the context, the given arguments, the lazy client."""

    ctx: Context
    args: dict[str, Any]
    org: str | None = None
    org_key: str | None = None  # the organisation's urlKey, once a document has asked for it
    _client: LinearClient | None = field(default=None, repr=False)

    def arg(self, name: str, default: Any = None) -> Any:
        value = self.args.get(name)
        return default if value is None else value

    @property
    def label(self) -> str | None:
        """The organisation label once chosen."""
        return self._client.conn.label if self._client else None

    def section(self) -> dict[str, Any]:
        """The workspace's ``[linear]`` config, or {} when there is no workspace here."""
        try:
            return self.ctx.workspace.section("linear")
        except NotFoundError:
            if self.ctx.workspace_arg:
                raise
            return {}

    @property
    def client(self) -> LinearClient:
        """The client for the chosen organisation (raises `Disambiguation` when unsure)."""
        if self._client is None:
            conn = connections.select(self.org)
            section = self.section()
            timeout = section.get("timeout", 30.0)
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                raise ValidationError(
                    f"[linear] timeout must be a positive number of seconds, got {timeout!r}",
                    suggestion="fix [linear] timeout in .nxs/config.toml (default 30)",
                    code="BAD_CONFIG",
                )
            self._client = LinearClient(
                conn,
                api_url(conn, section),
                timeout=float(timeout),
                sleep=self.ctx.services.get(SLEEP) or backoff_sleep,
                transport=self.ctx.services.get(TRANSPORT),
            )
        return self._client

    def run(self, name: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one named document; one asking for ``organization { urlKey }`` sets `org_key`.

        A create carries an id of ours (the same for the same call, time and author), so a write
        Linear applied but answered without its entity is still named: an issue is read back,
        anything else is reported applied (never refused, which would invite a second write).
        """
        variables = dict(variables or {})
        if name.endswith("Create"):
            seed = orjson.dumps([name, variables, self.ctx.now, self.ctx.actor], option=SORTED)
            made = str(uuid.uuid5(uuid.NAMESPACE_OID, seed.decode()))
            variables["input"] = {**variables["input"], "id": made}
        data = self.client.run(name, variables)
        if name in MUTATIONS:
            payload = next(iter(data.values()), None) or {}
            if payload.get("success") is False:
                raise UpstreamError(
                    f"Linear did not apply {name} (success: false)",
                    suggestion="check the ids and values against linear_query, then try again",
                    code="LINEAR_ERROR",
                )
            if not any(v for k, v in payload.items() if k != "success"):  # applied, not shown
                made = variables.get("id") or variables["input"]["id"]
                root = name[0].lower() + name[1:]  # IssueCreate -> issueCreate
                data = {root: {"success": True, "issue": self._read_back(name, made)}}
        org = data.get("organization")
        if isinstance(org, dict) and org.get("urlKey"):
            self.org_key = str(org["urlKey"]).lower()
        return data

    def _read_back(self, name: str, made: str) -> dict[str, Any]:
        """The issue of a write Linear applied but answered without, read back by its id; any
        other entity (or a failed read) is reported applied, with its id."""
        said = "; ".join(self.client.beside) or "no error given"
        if name in ("IssueCreate", "IssueUpdate"):
            try:
                return self.run("Issue", {"id": made})["issue"]
            except NxsError as err:
                said += f"; reading it back: {err.message}"
        raise UpstreamError(
            f"Linear applied {name} (id {made}) but answered without its result: {said}",
            suggestion="it is done: do not send it again; read it back in Linear",
            code="LINEAR_INCOMPLETE",
            details={"applied": True, "id": made},
        )

    def single_org(self) -> bool:
        """Whether only one organisation is connected (a link naming none can mean only it)."""
        return len(connections.load()) == 1

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def memory(self) -> MemoryService:
        """The memory service of the nxs workspace; its NotFoundError says the action needs it."""
        try:
            return self.ctx.memory
        except NotFoundError as err:
            err.message += " (this Linear action reads or stamps memories)"
            raise

    def memory_or_none(self) -> MemoryService | None:
        """The memory service, or None when there is no memory workspace here."""
        if self.ctx.workspace_arg:
            return self.memory()
        try:
            return self.ctx.memory
        except NotFoundError:
            return None


__all__ = ["SLEEP", "TRANSPORT", "Call"]
