"""The memory store: Markdown files git merges, and a local index that follows them.

A workspace commits ``.nxs/memories/<key>.md`` (a memory) and ``.nxs/history/<key>.jsonl``
(its events, one a line; `nxm.store.text`). This machine derives, outside the repository
(`nxm.store.local`), the record cache (`nxm.store.cache`, SQLite: what ``list``, ``show`` and
``prime`` read without lancedb), the search index (`nxm.store.index`, LanceDB) and the
vectors (`nxm.store.vectors`, by model and text, shared by its clones).

Every command first brings the cache up to date with the files (`Store.sync`) by comparing
file identities, so a checkout, pull, merge, rebase or hand edit is seen by the next command of
every seam. Reads write nothing git tracks; what cannot be read is reported (`problems`), never
dropped in silence. The index catches up before the next search (`Store.refresh`). A write
(`Store.writing`, `Store.commit`) holds the write lock, brings the cache up to date, writes the
files of the memories it changes through a journal (`nxm.store.files`), then NEXUS_MEMORY.md;
it never writes over a memory file that is in conflict.
"""

from __future__ import annotations

from nxm.store.index import Index, where
from nxm.store.records import Records
from nxm.store.runtime import background, import_lancedb
from nxm.store.store import Store, unreadable
from nxm.store.team import TeamStore
from nxs.workspace import Workspace

__all__ = [
    "Records", "Store", "TeamStore", "background", "import_lancedb", "open_store", "unreadable",
    "where",
]  # fmt: skip


def open_store(ws: Workspace) -> Store:
    """The store of a workspace: its files, or a team store's table (docs/team-store.md)."""
    from nxs import trust

    config = ws.section("memory")
    trust.check_paths(ws.root)  # before anything is written (a committed symlink)
    configured, options = trust.store_settings(ws.root, config)  # before anything is sent
    if configured:
        return TeamStore(ws, Index(configured, options or None))
    return Store(ws)
