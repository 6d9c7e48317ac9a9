"""The seeded state every parity case starts from.

`seed_workspace(root)` makes a memory workspace (the deterministic "hash" embedder) loaded with
the fixed memories of `seed.jsonl`; `KEYS` are their keys in file order. The memories, in order:

0. HIGH convention, project scope, two POSITIVE feedback (alice, claude-code)
1. decision, updated once (bob, cursor)
2. HIGH gotcha (alice)
3. closed process note, LOW priority (carol)
4. forgotten ownership note (bob)
5. item-scoped gotcha with refs ENG-42 and tests/test_store.py (alice, session s-0517)
6. TASK-layer status note expiring 2026-06-03 (bob, cursor, session s-0527)

Cases run at `NOW` as `ACTOR`. Seeding imports lancedb, so `seeded_copy` builds the state once
per process and copies the directory for each case.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

import orjson

SEED = Path(__file__).with_name("seed.jsonl")
KEYS: list[str] = [orjson.loads(raw)["key"] for raw in SEED.read_bytes().splitlines() if raw]
NOW = "2026-05-29T10:00:00Z"
ACTOR = "parity"
MODEL = "hash"

_template: Path | None = None
_template_cache: Path | None = None  # the machine (cache directory) it was embedded on
_lock = threading.Lock()


def seed_workspace(root: Path) -> Path:
    """Create a memory workspace at ``root`` loaded with `seed.jsonl`; return its root."""
    from nxm.port import import_records, parse_lines
    from nxm.service import MemoryService
    from nxs.workspace import find, init

    ws, _ = init(root, ["memory"])
    cfg = ws.dir / "config.toml"
    text = cfg.read_text()
    model = next(line for line in text.splitlines() if line.startswith("model = "))
    cfg.write_text(text.replace(model, f'model = "{MODEL}"'))
    service = MemoryService(find(ws.root))
    import_records(service, parse_lines(SEED.read_bytes()), record=False)  # the state, as is
    return ws.root


def template() -> Path:
    """The seeded workspace this process copies from, built on first use (thread-safe)."""
    global _template, _template_cache
    with _lock:
        if _template is None or not _template.exists():
            from nxs.paths import cache_dir

            _template = seed_workspace(Path(tempfile.mkdtemp(prefix="nxs-parity-")) / "seed")
            _template_cache = cache_dir()
        return _template


def seeded_copy(dest: Path, home: Path | None = None) -> Path:
    """A fresh copy of the seeded workspace at ``dest``, its texts embedded on this machine
    (``home``: the machine of a process started with that home, `tests.conftest.machine`)."""
    from tests.conftest import machine, share_vectors

    shutil.copytree(template(), dest, symlinks=True)
    assert _template_cache is not None
    share_vectors(_template_cache, Path(machine(home)) if home is not None else None)
    return dest


__all__ = ["ACTOR", "KEYS", "NOW", "SEED", "seed_workspace", "seeded_copy", "template"]
