"""Derived state kept current on every write (knowledge, entity graph): filled in by its issue."""

from __future__ import annotations

from typing import Any


def on_write(
    service: Any,
    current: dict[str, dict[str, Any]],
    changed: list[dict[str, Any]],
    deleted: list[str],
) -> None:
    """Called under the write lock after each commit, before NEXUS_MEMORY.md is rewritten."""
