"""nxm: the memory module of nxs (record, store, embedder, ranking, operations, CLI)."""
