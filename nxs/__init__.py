"""nxs: a CLI-first memory suite for coding agents (umbrella package)."""

__version__ = "0.1.0"


def release(missing: str = "0") -> str:
    """The installed distribution's version (``missing`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nxs")
    except PackageNotFoundError:
        return missing
