"""Process-level plumbing for LanceDB: importing it cheaply, malloc tuning, search threads."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any


def _glibc(function: str, *args: int) -> None:
    """Call one of glibc's malloc tunings (elsewhere nothing happens), so that a long-lived
    process does not keep growing: ``mallopt(M_ARENA_MAX=-8, 2)`` before LanceDB starts its
    threads (each would get an arena that keeps what it freed); ``mallopt(M_MMAP_THRESHOLD=-3,
    1 MB)``, fixed (glibc raises it after a large free, and the heap then keeps a write's large
    temporaries); ``malloc_trim(0)`` to hand the free heap back."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError, TypeError):
            getattr(ctypes.CDLL(None), function)(*args)


# lancedb imports the REST client of Lance namespaces, whose package `__init__` builds every
# generated API class, which a store on a path or an object-store URI never calls: only that
# `__init__` is deferred (its submodules load as usual) until one of its names is used.
LAZY_PACKAGES = ("lance_namespace_urllib3_client",)

# What lancedb imports at its top for Lance namespaces or LanceDB Cloud (pydantic models, a large
# share of `import lancedb`), which such a store never uses: `nxs.deferred` stands in for these
# names until one is used (then the real module loads).
DEFERRED = {
    "lancedb.namespace": (
        "connect_namespace", "connect_namespace_async", "LanceNamespaceDBConnection",
        "AsyncLanceNamespaceDBConnection",
    ),
    "lancedb.remote.db": ("RemoteDBConnection",),
    "lance_namespace": (
        "LanceNamespace", "ListNamespacesResponse", "CreateNamespaceResponse",
        "DropNamespaceResponse", "DescribeNamespaceResponse", "ListTablesResponse", "connect",
    ),
    "lance_namespace.errors": ("NamespaceNotEmptyError", "TableNotFoundError"),
    "lancedb.functions": (  # remote UDFs: pydantic models
        "AssignmentMapping", "FunctionArtifactRequest", "FunctionApplication", "FunctionBinding",
        "FunctionRegistrationRequest", "FunctionVersion", "PythonRuntimeSpec",
        "RefreshColumnResult", "UdfDefinition", "udf",
    ),
}  # fmt: skip


@contextlib.contextmanager
def _typing_override() -> Iterator[None]:
    """While lancedb imports, give it 3.12's `typing.override` on 3.11 too (the `overrides`
    package's reads each caller's bytecode, slowly); a later ``import overrides`` gets it."""
    if sys.version_info >= (3, 12) or "overrides" in sys.modules:
        yield
        return
    import types

    try:
        from typing_extensions import override
    except ImportError:
        yield
        return
    stand = types.ModuleType("overrides")
    stand.override = override  # type: ignore[attr-defined]
    stand.EnforceOverrides = type("EnforceOverrides", (), {})  # type: ignore[attr-defined]
    sys.modules["overrides"] = stand
    try:
        yield
    finally:
        if sys.modules.get("overrides") is stand:
            del sys.modules["overrides"]


def import_lancedb() -> Any:
    """``import lancedb`` (slow even so: only searches and writes pay it) with `DEFERRED`
    modules standing in until used and `LAZY_PACKAGES` initialised on first use."""
    import importlib.util

    if "lancedb" not in sys.modules:
        from nxs.deferred import stand_in

        for module, names in DEFERRED.items():
            stand_in(module, names)
    for name in LAZY_PACKAGES:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and spec.submodule_search_locations:
            sys.modules[name] = _lazy(importlib.util.module_from_spec(spec))
    with _typing_override():
        import lancedb

    return lancedb


def _lazy(module: Any) -> Any:
    """``module`` (made from its spec, not yet run) runs its code on the first missing name."""
    lock = threading.Lock()

    def missing(name: str) -> Any:
        with lock:
            if vars(module).get("__getattr__") is missing:  # once: then a missing name is one
                del module.__getattr__
                module.__spec__.loader.exec_module(module)
        return getattr(module, name)

    module.__getattr__ = missing
    return module


_BACKGROUND: list[Any] = []
os.register_at_fork(after_in_child=_BACKGROUND.clear)  # a forked child has none of the threads


def background() -> Any:
    """The process's two threads for work overlapping a search (LanceDB and onnxruntime release
    the GIL). A task given them must never wait for another of their tasks (deadlock)."""
    if not _BACKGROUND:
        from concurrent.futures import ThreadPoolExecutor

        _BACKGROUND.append(ThreadPoolExecutor(2, thread_name_prefix="nxs-search"))
    return _BACKGROUND[0]
