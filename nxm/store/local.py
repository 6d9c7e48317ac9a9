"""Where this machine keeps what it derives from a workspace: outside the repository.

The record cache, the search index and the usage log live in ``$NXS_CACHE_DIR/workspaces/
NAME-HASH`` (of the workspace's real path), where no commit, ``git add -A`` or ``git clean`` can
reach them; vectors once per machine (``$NXS_CACHE_DIR/vectors.db``). Deleting any of it loses
nothing: the next command derives it again from the files.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from nxs.paths import cache_dir

EARLIER = ("index", "cache")  # what earlier versions derived inside `.nxs/`


class Local:
    """The derived files of one workspace."""

    def __init__(self, root: Path) -> None:
        real = os.path.realpath(root)
        tag = hashlib.sha256(real.encode()).hexdigest()[:12]
        self.root = root
        self.dir = cache_dir() / "workspaces" / f"{Path(real).name[:40]}-{tag}"
        self.records = self.dir / "records.db"
        self.lance = self.dir / "lance"
        self.usage = self.dir / "usage.log"
        self.vectors = cache_dir() / "vectors.db"

    def drop_earlier(self) -> None:
        """Remove what an earlier version derived inside ``.nxs/`` (machine-local, rebuildable)."""
        for name in EARLIER:
            path = self.root / ".nxs" / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
