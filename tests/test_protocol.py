"""One session protocol: the prime text and the tool descriptions say the same thing, naming MCP
tools to a host and CLI verbs to a shell, and Claude Code is told it once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from nxs.linear.module import BLOCK as LINEAR_BLOCK
from nxs.mcp.install import install, serve_options
from nxs.mcp.server import Seam
from nxs.prime import HOOKED, prime_text
from nxs.protocol import ALSO, STEPS, named
from nxs.registry import operations
from nxs.workspace import init

OPS = {op.tool: op for op in operations()}
NOW = "2026-05-29T10:00:00.000Z"
HEADER = "The session protocol, when to"


def _workspace(tmp_path: Path, *modules: str) -> Path:
    ws, _ = init(tmp_path / "proj", ["memory", *modules])
    return ws.root


def test_every_step_is_a_tool_whose_description_says_the_same_when(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    seam = Seam(str(root))
    text = prime_text(str(root), now=NOW, seam="mcp", served=seam.by_tool)
    described = {t.name: t.description for t in seam.tools()}
    for tool, _verb in STEPS:
        op = OPS[tool]
        assert op.when, tool
        assert f". {tool}: {op.when}\n" in text  # the prime's line ...
        assert described[tool].endswith(f" Call it {op.when}")  # ... is the description's end
    # Every tool the text names exists and is served; no other tool claims a moment of its own.
    assert named(text) and named(text) <= set(seam.by_tool)
    linear = {"linear_query", "linear_mutate"}
    assert {op.tool for op in OPS.values() if op.when} == {t for t, _ in STEPS} | linear
    for tool, description in described.items():
        if tool not in dict(STEPS):
            assert "Call it" not in description and "session start" not in description, tool
    assert "at every session start" in OPS["memory_recall"].when
    assert "end of every session" in OPS["memory_store_context"].when


def test_a_host_is_told_tools_and_a_shell_verbs(tmp_path: Path) -> None:
    root = _workspace(tmp_path, "linear")
    shell = prime_text(str(root), now=NOW)
    assert named(shell) == set()  # not one MCP tool name
    for tool, verb in [*STEPS, *((t, v) for t, v, _ in ALSO)]:
        assert f"`{verb}`" in shell, verb
        op = OPS[tool]
        words = verb.split()
        assert words[0] == op.cli and words[1] in (op.verb[0], *op.aliases), verb
    for tool, _verb in STEPS:  # the same words, with the verbs for the tools they mention
        when = OPS[tool].when.replace("memory_recall", "`nxm recall`")
        assert when in shell
    assert "`nxs linear query ACTION`" in shell
    hosted = prime_text(str(root), now=NOW, seam="mcp", tools="all")
    assert "nxm recall" not in hosted and "--introduction" not in hosted
    for block in LINEAR_BLOCK.values():
        assert OPS["linear_query"].when in block


def test_a_host_is_told_only_of_the_tools_it_is_served(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    seam = Seam(str(root), groups="core")
    text = seam.instructions()
    assert named(text) <= set(seam.by_tool)
    assert "memory_recall" not in text and "memory_store_context" not in text
    assert "memory_add:" in text


def test_claude_code_is_told_once_by_the_hook(tmp_path: Path) -> None:
    """`nxs mcp install --host claude-code` sets the hook and a server that only points to it."""
    root = _workspace(tmp_path)
    home = tmp_path / "home"
    result = install("claude-code", workspace=str(root), home=home, command=["nxs"])
    options, _ = serve_options(result["server"]["args"]) or ({}, [])
    server = Seam(str(root), instructions=options["--instructions"])
    assert server.instructions() == HOOKED
    assert HEADER not in server.instructions()
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].split()
    assert command[0] == "nxs"
    run = subprocess.run(
        [sys.executable, "-m", "nxs", *command[1:], "--workspace", str(root), "--now", NOW],
        capture_output=True,
        check=True,
    )
    context = orjson.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.count(HEADER) == 1
    assert context == prime_text(str(root), now=NOW, seam="mcp")
    # Hosts without a hook get it as the instructions, naming the tools they are served.
    plain = Seam(str(root))
    assert plain.instructions() == prime_text(str(root), seam="mcp", served=plain.by_tool)


def test_an_unknown_instructions_mode_is_refused(tmp_path: Path) -> None:
    import pytest

    from nxs.errors import ValidationError

    with pytest.raises(ValidationError, match="unknown instructions 'brief'"):
        Seam(str(_workspace(tmp_path)), instructions="brief")
