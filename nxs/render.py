"""The wire contract: `render` makes the bytes both seams emit for a result or an error (the
CLI's ``--json``, the MCP tool's text): keys sorted, so the same value gives the same bytes
whoever built the dict; one trailing newline; floats rounded, no NaN, no numpy types;
timestamps as `timestamp()` writes them (UTC ISO-8601, milliseconds, ``Z``).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import orjson

from nxs.errors import NxsError

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def clean(value: Any) -> Any:
    """Round floats to 6 places and turn numpy scalars into Python numbers, recursively."""
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist) and not isinstance(value, str | bytes):
        return clean(value.tolist())  # numpy scalars and arrays alike
    return value


def _utf8(value: Any) -> Any:
    """Strings made encodable (a lone surrogate from bad input shown as its escape)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_utf8(k): _utf8(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_utf8(v) for v in value]
    return value


def render(value: Any) -> bytes:
    """Serialize a result (or an `NxsError`) to the bytes both seams emit."""
    if isinstance(value, NxsError):
        value = _utf8(value.to_dict())  # an error may quote the bad input it refuses
    return orjson.dumps(clean(value), option=_OPTS)


def line(value: Any) -> bytes:
    """Serialize one JSON Lines record (export, logs): sorted keys, one line."""
    return orjson.dumps(clean(value), option=_OPTS)


def timestamp(moment: datetime | None = None) -> str:
    """UTC ISO-8601 with milliseconds, e.g. ``2026-11-29T22:51:22.123Z``."""
    moment = (moment or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or offset; naive means UTC) into an aware datetime."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


__all__ = ["clean", "line", "parse_timestamp", "render", "timestamp"]
