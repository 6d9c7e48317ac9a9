"""The layout stays honest: no import cycle (deferred imports counted), and the umbrella (`nxs`)
knows the memory module (`nxm`) only through its declaration in `nxs.registry`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, Path]:
    out = {}
    for package in ("nxs", "nxm"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def imports() -> dict[str, set[str]]:
    """Each module's imports of the project's modules, wherever they stand in its code (a
    function's deferred import counts), with the packages whose ``__init__`` they run."""
    mods = _modules()

    def known(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{up}.{base}" if base else up
                targets = [known(f"{base}.{a.name}") or base for a in node.names]
            for target in filter(None, map(known, targets)):
                parts = target.split(".")
                for n in range(1, len(parts) + 1):  # a.b.c runs a/__init__ and a/b/__init__
                    step = ".".join(parts[:n])
                    if step in mods and step != name and not name.startswith(step + "."):
                        edges[name].add(step)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                out.append(sorted(group))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_counting_deferred_imports() -> None:
    assert cycles(imports()) == []


def test_the_umbrella_imports_nothing_of_the_memory_module() -> None:
    edges = imports()
    assert [(m, t) for m, ts in edges.items() if m.startswith("nxs") for t in ts
            if t.split(".")[0] == "nxm"] == []  # fmt: skip


def test_the_checks_can_fail() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    edges = imports()
    assert "nxs.errors" in edges["nxm.service"]  # deferred or not, an import is seen
    assert "nxm.store" in edges["nxm.service"]
