"""What a host pays to connect: the bytes of `tools/list` and of the `initialize` instructions.

    python bench/mcp_surface.py                    # default groups, a fresh workspace
    python bench/mcp_surface.py --tools all        # every group
    python bench/mcp_surface.py --linear           # with a Linear key connected (fake, never sent)

A real `nxs mcp serve` process is started over stdio in a temporary workspace and spoken to as
a host does (initialize, initialized, tools/list); the sizes are those of the JSON-RPC lines it
writes, so they are what a host reads off the wire. Not a timing: the numbers do not depend on
the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _send(proc: subprocess.Popen[bytes], message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def measure(tools: str | None = None, linear: bool = False) -> dict[str, int]:
    """Start a server in a new workspace; the wire sizes of its answers."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "NXS_CONFIG_DIR": str(base / "config"),
            "NXS_DATA_DIR": str(base / "data"),
            "NXS_MCP_WARM": "0",
            "NXS_WORKSPACE": "",
            "LINEAR_API_KEY": "lin_api_" + "x" * 40 if linear else "",
        }
        proj = base / "proj"
        proj.mkdir()
        modules = ["--module", "memory"] + (["--module", "linear"] if linear else [])
        subprocess.run(
            [sys.executable, "-m", "nxs", "init", str(proj), *modules],
            check=True,
            capture_output=True,
            env=env,
        )
        args = [sys.executable, "-m", "nxs", "mcp", "serve", "--workspace", str(proj)]
        if tools:
            args += ["--tools", tools]
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert proc.stdout is not None
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp-surface", "version": "1"},
        }
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        first = proc.stdout.readline()
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        listed = proc.stdout.readline()
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=60)
    tools_result = json.loads(listed)["result"]["tools"]
    instructions = json.loads(first)["result"].get("instructions", "")
    return {
        "tools": len(tools_result),
        "tools_list_bytes": len(listed.rstrip(b"\n")),
        "largest_tool_bytes": max(len(json.dumps(t, separators=(",", ":"))) for t in tools_result),
        "instructions_bytes": len(instructions.encode()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", help="tool groups, as `nxs mcp serve --tools`")
    parser.add_argument("--linear", action="store_true", help="connect a (fake) Linear key")
    opts = parser.parse_args()
    print(json.dumps(measure(opts.tools, opts.linear)))


if __name__ == "__main__":
    main()
