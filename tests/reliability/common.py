"""What the reliability tests share: sizes, worker processes, store inspection, an MCP client.

Sizes: every test has a quick CI size and a full size; ``NXS_RELIABILITY_FULL=1`` picks the full
one (docs/reliability.md has both, with the commands and the measured results).

Worker processes come from a multiprocessing fork server that has imported lancedb and nxm once
(`tests.reliability.preload`), so a worker starts in well under a second instead of paying
lancedb's import (seconds of CPU) each time; each worker is still its own OS process with its
own LanceDB handles, file lock and runtime, and ``kill -9`` kills it like any other.
"""

from __future__ import annotations

import collections
import hashlib
import json
import multiprocessing
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

FULL = os.environ.get("NXS_RELIABILITY_FULL", "") not in ("", "0")
ACTIONABLE = {"validation", "not_found", "conflict"}


def size(quick: int, full: int) -> int:
    """The quick (CI) size, or the full one under ``NXS_RELIABILITY_FULL=1``."""
    return full if FULL else quick


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a worker or subprocess: private user dirs under ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NXS_", "NXM_", "NXF_", "LINEAR_", "PYTEST_"))
    }
    from tests.conftest import machine

    env.update(
        NXS_CONFIG_DIR=str(home / "config"),
        NXS_DATA_DIR=str(home / "data"),
        NXS_CACHE_DIR=machine(home),
        HF_HUB_OFFLINE="1",
        USER="tester",
    )
    env.update(extra)
    return env


_forkserver: Any = None


def workers() -> Any:
    """The multiprocessing context whose processes fork from the preloaded server."""
    global _forkserver
    if _forkserver is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["tests.reliability.preload"])
        _forkserver = ctx
    return _forkserver


# -- the store, read directly ---------------------------------------------------------------------


def store_docs(root: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The records as the memory files hold them (read without the cache), and the keys the
    search index does not hold exactly once after a new process brought it up to date."""
    from nxm.service import MemoryService
    from nxm.store.text import record_of
    from nxs.workspace import find

    docs = {}
    for md in sorted((root / ".nxs" / "memories").glob("*.md")):
        log = root / ".nxs" / "history" / f"{md.stem}.jsonl"
        raw = log.read_bytes() if log.exists() else None
        docs[md.stem] = record_of(md.stem, md.read_bytes(), raw, ".nxs")
    service = MemoryService(find(root))
    try:
        service.store.records()
        service.store.refresh()
        table = service.store.index.table()
        keys = table.search().select(["key"]).limit(None).to_arrow().column("key").to_pylist() if (
            table is not None
        ) else []  # fmt: skip
    finally:
        service.store.close()
    counts = collections.Counter(keys)
    wrong = {k for k, n in counts.items() if n != 1} | (set(docs) ^ set(counts))
    return docs, sorted(wrong)


def consistent(root: Path) -> dict[str, dict[str, Any]]:
    """Assert that the record cache and NEXUS_MEMORY.md agree with the memory files, and the
    index holds each memory once; return the records the files hold."""
    from nxm.projection import derive
    from nxm.service import MemoryService
    from nxm.store.text import LOCAL
    from nxs.workspace import find

    def committed(records: Any) -> dict[str, dict[str, Any]]:
        return {k: {f: v for f, v in r.items() if f not in LOCAL} for k, r in records.items()}

    docs, wrong = store_docs(root)
    assert wrong == []
    store = MemoryService(find(root)).store
    cached = dict(store.records().items())
    store.close()
    assert committed(cached) == committed(docs)
    assert (root / "NEXUS_MEMORY.md").read_bytes() == derive(docs.values())
    return docs


def fingerprint(root: Path) -> dict[str, str]:
    """What a refused call must not change: every committed file (all but the machine-local
    `.nxs/index/` and `.nxs/cache/`), hashed."""
    out: dict[str, str] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath, name)
            rel = path.relative_to(root)
            if rel.parts[:2] in ((".nxs", "index"), (".nxs", "cache")):
                continue
            out[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def events_of(docs: dict[str, dict[str, Any]]) -> collections.Counter[tuple[str, str, str, str]]:
    """Every stored event as (key, type, actor, at), counted."""
    return collections.Counter(
        (key, e["type"], e["actor"], e["at"]) for key, d in docs.items() for e in d["events"]
    )


def run_cli(prog: str, args: list[str]) -> tuple[int, bytes, bytes]:
    """A console-script entry point (`nxm` or `nxs`) in process: exit code, stdout, stderr."""
    from typer.testing import CliRunner

    main = __import__(f"{prog}.cli", fromlist=["main"]).main
    saved = sys.argv
    with CliRunner().isolation() as streams:
        sys.argv = [prog, *args]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.argv = saved
            sys.stdout.flush()
            sys.stderr.flush()
        out, err = streams[0].getvalue(), streams[1].getvalue()
    return code, out, err


# -- a real stdio MCP server ------------------------------------------------------------------------


class StdioSession:
    """A `nxs mcp serve` process and an SDK client talking to it, usable from sync code."""

    def __init__(self, stack: ExitStack, args: list[str], env: dict[str, str], log: Path) -> None:
        from anyio.from_thread import start_blocking_portal
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from tests.conftest import CODE_ENV

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "nxs", "mcp", "serve", *args],
            env={**CODE_ENV, **env},
            cwd=str(log.parent),
        )
        self.log = log
        errlog = stack.enter_context(log.open("w"))
        self.portal = stack.enter_context(start_blocking_portal())
        client = Client(
            stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=300
        )
        self.client = stack.enter_context(self.portal.wrap_async_context_manager(client))

    def tools(self) -> list[Any]:
        """The tools the server lists."""
        return self.portal.call(self.client.list_tools).tools

    def raw(self, tool: str, arguments: Any) -> Any:
        """The SDK's CallToolResult of one tool call."""
        return self.portal.call(self.client.call_tool, tool, arguments)

    def call(self, tool: str, arguments: Any) -> tuple[bool, dict[str, Any]]:
        """(is_error, the parsed text answer) of one tool call."""
        result = self.raw(tool, arguments)
        assert [c.type for c in result.content] == ["text"], result
        return bool(result.is_error), json.loads(result.content[0].text)


__all__ = [
    "ACTIONABLE",
    "FULL",
    "StdioSession",
    "child_env",
    "events_of",
    "fingerprint",
    "consistent",
    "store_docs",
    "run_cli",
    "size",
    "workers",
]
