"""Default categories for memories added without one (filled in by the lifecycle issue)."""

from __future__ import annotations


def categorize(text: str) -> str | None:
    """A category for ``text`` from the documented vocabulary, or None."""
    return None
