"""A second server of one workspace stands by and takes the socket over (`Listener.stand_by`).

Two MCP hosts open on one workspace start two `nxs mcp serve`; the first listens, and when it
exits the second must answer the workspace's CLI calls, not leave them cold until it restarts.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from nxs.mcp.server import Seam
from nxs.warm import server
from nxs.warm.server import HELD, listen
from tests.test_reuse import NXM, Served, run, seed, warmed


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from tests.conftest import make_workspace

    monkeypatch.setattr(server, "STANDBY_S", 0.05)
    streams = (sys.stdout, sys.stderr)
    yield make_workspace(tmp_path / "ws")
    sys.stdout, sys.stderr = streams  # a listener that took over split them again


def listening(*listeners: Any, timeout: float = 10.0) -> list[Any]:
    """The listeners that hold a socket, once one does (or none after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = [lst for lst in listeners if lst.sock is not None]
        if held:
            time.sleep(0.3)  # several standbys' tries, had any other won too
            return [lst for lst in listeners if lst.sock is not None]
        time.sleep(0.02)
    return []


def test_a_second_server_takes_over_when_the_first_exits(root: Path) -> None:
    seed(root)
    first = Served(root)
    second = listen(Seam(workspace=str(root)))
    try:
        assert second is not None and second.sock is None and second.why == HELD
        warmed(root, [*NXM, "list", "--json"])  # the first answers
        first.close()
        assert listening(second) == [second]
        got = warmed(root, [*NXM, "list", "--json"])
        assert got.same() == run(root, [*NXM, "list", "--json"], cold=True).same()
    finally:
        second.close()
        first.close()
    assert not server.warm.socket_path(root).exists()  # the second removed its socket


def test_of_two_standing_by_one_takes_the_socket(root: Path) -> None:
    first = Served(root)
    standbys = [listen(Seam(workspace=str(root))) for _ in range(2)]
    try:
        assert all(s is not None and s.sock is None for s in standbys)
        first.close()
        held = listening(*standbys)
        assert len(held) == 1, held
        assert os.lstat(server.warm.socket_path(root)).st_ino == held[0]._ino
    finally:
        for s in standbys:
            s.close()


def test_a_closed_standby_never_takes_the_socket(root: Path) -> None:
    first = Served(root)
    second = listen(Seam(workspace=str(root)))
    assert second is not None
    second.close()
    first.close()
    time.sleep(0.3)  # several of its tries, had it kept trying
    assert second.sock is None and not server.warm.socket_path(root).exists()
