"""The memory module, as the umbrella knows it (`nxs.registry.Module`)."""

from nxs.registry import Module

MEMORY = Module(
    name="memory",
    operations=(
        "nxm.ops",
        "nxm.ops.session",
        "nxm.ops.lifecycle",
        "nxm.ops.repair",
        "nxm.ops.review",
        "nxm.ops.code",
    ),
    defaults={
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "task_ttl_days": 7,
        "prime_budget": 6000,
    },
    service="nxm.service:MemoryService",
    prime="nxm.prime:block",
    init="nxm.store.gitconfig:set_up",
    views=("nxm.views",),
)
