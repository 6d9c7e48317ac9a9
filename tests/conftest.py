"""Shared fixtures: every test runs with private user directories and its own workspace."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from nxs.context import Context
from nxs.workspace import init

# The real model lives in the user's cache (installed by `nxm model setup`); remember where
# before the user directories are isolated, so model tests can still find it.
REAL_CACHE = os.environ.get("NXS_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nxs"
)
# A server started with an environment of its own (the MCP SDK passes on only HOME, PATH and
# a few more) imports the code under test too, not whatever copy is installed.
CODE_ENV = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
# The dashboard's browser harness: one `nxs ui` and one Chromium for the whole session.
pytest_plugins = ("tests.ui_harness",)


def private_cache(home: Path) -> Path:
    """A cache directory of its own (derived indexes, vectors) that still finds the installed
    models (they are read, never written, by tests that do not set up a model)."""
    cache = home / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    models = Path(REAL_CACHE) / "models"
    if models.is_dir() and not (cache / "models").exists():
        (cache / "models").symlink_to(models)
    return cache


def machine(home: Path) -> str:
    """The cache directory a subprocess of this test uses: the test's own (one machine), or,
    outside a test (a module's server), one of its own under ``home``."""
    return os.environ.get("NXS_CACHE_DIR") or str(private_cache(home))


def share_vectors(cache: Path, into: Path | None = None) -> None:
    """Give this test's machine (its cache directory) the vectors another cache holds, as if
    the workspaces copied from there had been embedded here (what their copied derived files
    used to carry)."""
    from nxs.paths import cache_dir

    here = into or cache_dir()
    if cache.resolve() == here.resolve() or (here / "vectors.db").exists():
        return
    here.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal"):
        src = cache / f"vectors.db{suffix}"
        if src.exists():
            shutil.copyfile(src, here / f"vectors.db{suffix}")


@pytest.fixture(autouse=True)
def _isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("NXS_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("NXS_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("NXS_CACHE_DIR", str(private_cache(home)))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("NXS_WORKSPACE", "NXS_ACTOR", "NXM_ACTOR", "NXF_ACTOR", "LINEAR_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("USER", "tester")


def make_workspace(root: Path, model: str = "hash") -> Path:
    """A memory workspace at ``root`` using the given embedding model ("hash" is the test one)."""
    ws, _ = init(root, ["memory"])
    cfg = ws.dir / "config.toml"
    cfg.write_text(cfg.read_text().replace("sentence-transformers/all-MiniLM-L6-v2", model))
    return ws.root


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh memory workspace (deterministic hash embedder); the current directory is inside it."""
    root = make_workspace(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def ctx(workspace: Path) -> Context:
    """A call context on the fresh workspace with a fixed clock and actor."""
    return Context(now="2026-05-29T10:00:00.000Z", actor="tester", workspace_arg=str(workspace))


def committed(root: Path) -> dict[str, bytes]:
    """Every file of a workspace (all of it is committed: what nxs derives lives in the
    user's cache), by path: what a refused call must leave as it was."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }
