"""The one error tree shared by every seam.

    NxsError                 kind "internal"    exit 1
     ├── ValidationError     kind "validation"  exit 2   bad or missing arguments, a no-op write
     ├── NotFoundError       kind "not_found"   exit 3   no such key, workspace, entity, label
     ├── ConflictError       kind "conflict"    exit 4   the state forbids it (purge an open memory)
     └── UpstreamError       kind "upstream"    exit 5   Linear, the model hub, the disk said no

Both seams render an error with `to_dict()`; the CLI exits with ``exit_code``, the MCP server
returns it as a tool result with ``isError: true``. A refused call writes nothing. Messages
never hold a Linear key, whatever input they quote (`redact`).
"""

from __future__ import annotations

import re
from typing import Any

# A Linear credential that input put where a label, URL, path or word goes: never echoed.
_KEY = re.compile(r"lin_(?:api|oauth)_[^\s'\"(),;=\]}]*", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with anything shaped like a Linear key replaced by ``[redacted]``."""
    return _KEY.sub("[redacted]", text)


class NxsError(Exception):
    """Base of every error a seam reports; carries a stable kind and code."""

    kind, code, exit_code = "internal", "INTERNAL_ERROR", 1

    def __init__(
        self, message: str, *, suggestion: str | None = None, code: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        message, suggestion = redact(message), suggestion and redact(suggestion)
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion
        if code:
            self.code = code
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        """The error envelope both seams print."""
        out: dict[str, Any] = {"error": True, "kind": self.kind, "code": self.code}
        out["message"] = self.message
        if self.suggestion:
            out["suggestion"] = self.suggestion
        if self.details:
            out["details"] = self.details
        return out


class ValidationError(NxsError):
    """The arguments are wrong: a missing, mistyped or out-of-range value, or a no-op."""

    kind, code, exit_code = "validation", "VALIDATION_ERROR", 2


class NotFoundError(NxsError):
    """The thing named does not exist."""

    kind, code, exit_code = "not_found", "NOT_FOUND", 3


class ConflictError(NxsError):
    """The current state forbids the call (an ambiguous prefix, purging an open memory)."""

    kind, code, exit_code = "conflict", "CONFLICT", 4


class UpstreamError(NxsError):
    """Something outside nxs failed: Linear, the disk, the model files."""

    kind, code, exit_code = "upstream", "UPSTREAM_ERROR", 5


__all__ = [
    "ConflictError", "NotFoundError", "NxsError", "UpstreamError", "ValidationError", "redact",
]  # fmt: skip
