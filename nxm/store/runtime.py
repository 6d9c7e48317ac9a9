"""Process-level plumbing for LanceDB: importing it cheaply, malloc tuning, search threads."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any


def _glibc(function: str, *args: int) -> None:
    """Call one of glibc's malloc tunings; elsewhere (not Linux, not glibc) nothing happens.

    - ``mallopt(M_ARENA_MAX=-8, 2)``: two malloc arenas instead of eight per core. Each of
      LanceDB's threads otherwise gets its own, which keeps what it freed: a long-lived process
      grew from 140 to 690 MB in 20 writes at 10,000 memories, and to 330 MB with two arenas
      (measured; `MALLOC_ARENA_MAX=2` does the same). Called before LanceDB starts its threads.
    - ``mallopt(M_MMAP_THRESHOLD=-3, 1 MB)``: every block of 1 MB or more is its own mapping,
      returned to the system when freed. By default glibc raises the threshold after such a
      free (up to 32 MB), and the heap keeps what a write's large temporaries left: at 100,000
      memories 30 adds with searches between took a process's peak from 546 to 638 MB with
      this and from 559 to 651 MB without (measured).
    - ``malloc_trim(0)``: return the free heap to the system (what LanceDB's reads left there
      is otherwise kept, and counted in the process's peak).
    """
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError, TypeError):
            getattr(ctypes.CDLL(None), function)(*args)


# lancedb imports the REST client of Lance namespaces, whose package `__init__` builds every API
# class of its generated OpenAPI code (~2 s and ~14 MB here); a store on a path or an object
# store URI never calls them. Only the package's own `__init__` is deferred: its submodules
# (the models lancedb does import) load as usual, and the first use of one of its names runs it.
LAZY_PACKAGES = ("lance_namespace_urllib3_client",)


# What lancedb imports at its top for connections to a Lance namespace or LanceDB Cloud, which a
# store on a path or an object-store URI never makes: the namespace client's models (pydantic,
# generated code) alone were ~40 % of `import lancedb` here. `nxs.deferred` stands in for them
# until a name is used (then the real module loads); the names are those lancedb imports.
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
    """While lancedb imports, give it Python 3.12's `override` on 3.11 too.

    On 3.11 lancedb decorates its methods with the `overrides` package's ``override``, which
    reads each caller's bytecode to find the base classes (~0.15 s for lancedb's 41 methods);
    on 3.12 it takes ``typing.override``, which only marks the method. Afterwards a later
    ``import overrides`` gets the real package.
    """
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
    """``import lancedb`` with `DEFERRED` modules standing in until used and `LAZY_PACKAGES`
    initialised on first use (deferred: lancedb costs ~1 s to import even so; only searches
    and writes pay it)."""
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
    """The process's two threads for work that overlaps a search's other parts (LanceDB and
    onnxruntime release the GIL); made once, as a new thread per search costs ~1-4 ms. A task
    given them must never wait for another of their tasks (that could deadlock)."""
    if not _BACKGROUND:
        from concurrent.futures import ThreadPoolExecutor

        _BACKGROUND.append(ThreadPoolExecutor(2, thread_name_prefix="nxs-search"))
    return _BACKGROUND[0]
