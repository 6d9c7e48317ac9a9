"""Stand-ins for modules a library imports at its top but a command does not use.

`stand_in("rich.markdown", ["Markdown"])` puts a module in ``sys.modules`` whose names are
placeholders; the first real use of one (a call, an attribute, an ``isinstance``) or of any
other name of the module imports the real module, which answers every use from then on.
A placeholder is not the real class (subclassing it or comparing with ``is`` goes wrong), so
only names their importer calls or asks attributes of are deferred.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Iterable
from typing import Any

_LOCK = threading.RLock()


class StandIn(types.ModuleType):
    """The module in ``sys.modules`` until its real one is needed."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # introspection (pickle, inspect, doctest): not a use
            raise AttributeError(name)
        return getattr(load(self.__name__), name)


class Placeholder(type):
    """The metaclass of a deferred name: every use of the class is a use of the real one."""

    _module: str
    _attr: str

    def real(cls) -> Any:
        return getattr(load(cls._module), cls._attr)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls.real(), name)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.real())

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, cls.real())

    def __repr__(cls) -> str:
        return f"<deferred {cls._module}.{cls._attr}>"


def stand_in(module: str, names: Iterable[str]) -> bool:
    """Defer ``module`` unless already imported (``names`` become placeholders); True if done."""
    with _LOCK:
        if module in sys.modules:
            return False
        mod = StandIn(module)
        for name in names:
            mod.__dict__[name] = Placeholder(name, (), {"_module": module, "_attr": name})
        parent, _, child = module.rpartition(".")
        sys.modules[module] = mod
        if parent in sys.modules:  # `import a.b; a.b.x` finds it as the package's attribute
            setattr(sys.modules[parent], child, mod)  # (a package imported later binds names)
        return True


def load(module: str) -> Any:
    """The real ``module``, imported now if its stand-in is still in place."""
    with _LOCK:
        parent = module.rpartition(".")[0]
        if parent and isinstance(sys.modules.get(parent), StandIn):
            load(parent)  # a submodule is imported from its real package
        current = sys.modules.get(module)
        if isinstance(current, StandIn):
            del sys.modules[module]
            try:
                real = importlib.import_module(module)
            except BaseException:
                sys.modules[module] = current
                raise
            current.__dict__["__real__"] = real
            return real
        if current is None:
            return importlib.import_module(module)
        return current


def deferred(module: str) -> bool:
    """Whether ``module`` is still a stand-in (nothing has used it)."""
    return isinstance(sys.modules.get(module), StandIn)


__all__ = ["Placeholder", "StandIn", "deferred", "load", "stand_in"]
