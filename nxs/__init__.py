"""nxs: a CLI-first memory suite for coding agents (umbrella package)."""

__version__ = "0.1.0"
