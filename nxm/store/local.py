"""Where this machine keeps what it derives from a workspace: outside the repository.

Everything derived (the record cache, the LanceDB search index, the search usage log) lives in
the user's cache directory, one folder per workspace (``$NXS_CACHE_DIR/workspaces/NAME-HASH``,
the hash of the workspace's real path), so no commit, ``git add -A`` or ``git clean`` can reach
it, whatever ``.gitignore`` the checked-out commit has. Vectors are kept once per machine by
model and text (``$NXS_CACHE_DIR/vectors.db``), so a second clone or worktree embeds nothing.
Deleting any of it loses nothing: the next command derives it again from the files.
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
