"""Reuse of a warm server for CLI calls (issue 20): the client side and the wire.

An `nxs mcp serve` that a host started for a workspace (stdio or HTTP), or an `nxs warm` that
a shell started (`nxs.warm.command`), has lancedb, the model and the store loaded, and follows the
files with inotify. It also listens on a unix socket (`nxs.warm.server`), and a CLI call of a verb in `SAFE` asks it to run the operation instead of
loading all that itself. The rules (issue 20), and what keeps each:

- **Nothing has to run.** The CLI never starts a server; without a socket file the call costs
  one ``lstat`` more. `NXS_NO_REUSE=1` turns reuse off.
- **A stale, slow, busy or foreign server is never used, and never delays an answer.** A socket
  file nobody listens on refuses the connection at once; a server that has not said "ready"
  within `HANDSHAKE_S` is left alone (it runs nothing unless told "run" after that); a server
  busy with another call says so at once. The server must be of this user (``SO_PEERCRED``, and
  the socket file's owner), for this workspace, and of the same `fingerprint` (protocol, the
  interpreter and its installed packages, nxs's code, the environment that changes answers).
- **The answer is the one the process would have given.** The client validates the arguments
  and resolves the clock and the actor itself, as `nxs.clitool.run_op` does; the server runs the
  same handler of the same operation table and sends back the result (orjson: JSON values, exact
  floats) or the `nxs.errors` envelope, and the client prints it with the same code as in
  process. What the handler writes on stderr, and its progress bars, come back in order, framed,
  and are written or drawn by the client. A server whose state would make it answer unlike a
  new process (a model that failed to load, a cache or index kept in memory, a journal to
  replay, a migration to run, unreadable memory files) refuses, and the call runs in process.
- **Secrets**: the request holds what the command line gave and the process would have read
  itself; it goes to a process of the same user, over a 0600 socket.

Frames are a 4-byte big-endian length and an orjson object. The client sends the request; the
server answers ``{"ready": true}`` or ``{"refused": why}``; the client sends ``{"run": true}``;
the server sends ``stderr``/``progress``/``close`` frames, then ``result`` or ``error``.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from nxs.errors import ConflictError, NotFoundError, NxsError, UpstreamError, ValidationError

if TYPE_CHECKING:
    import socket

# socket, struct and hashlib (~6 ms) are imported once a socket file is there: a call without
# a server pays one lstat

PROTOCOL = 1
OFF_ENV = "NXS_NO_REUSE"
LOG_ENV = "NXS_REUSE_LOG"  # a file each call appends whether a warm server answered it, or why not
HANDSHAKE_S = 0.1  # a server that has not said "ready" by then is not waited for
SOCKET_NAME = "warm.sock"
MAX_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
MAX_FRAME = 256 << 20
# The operations a warm server may run for the CLI: the store's own verbs, whose answer
# depends only on their arguments, the clock, the actor and the store (no path relative to
# the caller's directory, no terminal, no other service's state).
SAFE = frozenset({
    "add", "update", "classify", "close", "reopen", "forget", "restore", "purge", "show",
    "list", "search", "history", "recall", "promote", "feedback", "facts", "prime",
})  # fmt: skip
# Environment a process reads that can change an answer (the actor and the workspace are
# resolved by the client and sent; the rest must be the same in both processes).
_ENV_PREFIXES = ("NXS_", "NXM_", "NXF_", "HF_", "FASTEMBED_", "XDG_", "LINEAR_")
_ENV_NAMES = ("HOME", "APPDATA", "CODEX_HOME", "TZ", "PYTHONPATH", "PYTHONHASHSEED")
_ENV_IGNORED = frozenset({
    "NXS_ACTOR", "NXM_ACTOR", "NXF_ACTOR", "NXS_WORKSPACE", "NXS_MCP_WARM", OFF_ENV, LOG_ENV,
    "XDG_SESSION_ID", "XDG_VTNR", "XDG_SEAT",
})  # fmt: skip
_ERRORS: dict[str, type[NxsError]] = {
    cls.kind: cls
    for cls in (NxsError, ValidationError, NotFoundError, ConflictError, UpstreamError)
}


def socket_path(root: Path) -> Path:
    """Where the server of the workspace at ``root`` listens: in its machine-local
    ``.nxs/index/``, or, when that path is too long for a unix socket, under a per-user 0700
    directory named by a hash of the root."""
    local = root / ".nxs" / "index" / SOCKET_NAME
    if len(os.fsencode(local)) < MAX_PATH:
        return local
    import hashlib

    return short_dir() / (hashlib.sha256(os.fsencode(root)).hexdigest()[:32] + ".sock")


def short_dir() -> Path:
    """The per-user directory of the sockets whose workspace path is too long."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "nxs"
    return Path("/tmp") / f"nxs-{os.getuid()}"


def private_dir(path: Path) -> bool:
    """True when ``path`` is a real directory of this user that no one else can enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and st.st_mode & 0o077 == 0


def _code_stamp() -> list[Any]:
    """What identifies the code a process runs: nxs's and nxm's files, and the directories
    packages are installed in (an install or upgrade changes their mtime)."""
    out: list[Any] = []
    here = Path(__file__).resolve().parents[1]  # nxs/
    for package in (here, here.parent / "nxm"):
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    out.append((folder, name, st.st_size, st.st_mtime_ns))
    import site

    for entry in [*site.getsitepackages(), site.getusersitepackages()]:
        try:
            out.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            out.append((entry, None))
    return out


def fingerprint() -> str:
    """The same in two processes only if they would answer alike: protocol, interpreter,
    installed packages, nxs's code, and the environment variables that change answers."""
    env = sorted(
        (k, v)
        for k, v in os.environ.items()
        if (k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES) and k not in _ENV_IGNORED
    )
    import hashlib

    stamp = [PROTOCOL, sys.version, sys.executable, sys.prefix, _code_stamp(), env]
    return hashlib.sha256(orjson.dumps(stamp)).hexdigest()


# -- frames ----------------------------------------------------------------------------------


def send(sock: socket.socket, value: Any) -> None:
    """Write one frame."""
    import struct

    data = orjson.dumps(value)
    sock.sendall(struct.pack(">I", len(data)) + data)


def receive(sock: socket.socket, deadline: float | None = None) -> Any:
    """Read one frame (None at the end of the stream); ``deadline`` is a `time.monotonic`
    moment after which `TimeoutError` is raised."""
    import struct

    head = _exactly(sock, 4, deadline)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    if size > MAX_FRAME:
        raise ConnectionError("frame too large")
    body = _exactly(sock, size, deadline)
    if body is None:
        raise ConnectionError("stream ended inside a frame")
    return orjson.loads(body)


def _exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            if got:
                raise ConnectionError("stream ended inside a frame")
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end (Linux ``SO_PEERCRED``), or None."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    except OSError:
        return None
    return uid


def error_value(err: NxsError) -> dict[str, Any]:
    """An error as it travels: its envelope and its exit code."""
    return {**err.to_dict(), "exit_code": err.exit_code}


def error_of(value: dict[str, Any]) -> NxsError:
    """The `nxs.errors` error a travelled envelope describes (the same envelope and exit)."""
    cls = _ERRORS.get(value.get("kind", ""), NxsError)
    err = cls(
        value["message"],
        suggestion=value.get("suggestion"),
        code=value.get("code"),
        details=value.get("details"),
    )
    if err.exit_code != value.get("exit_code", err.exit_code):
        err.exit_code = value["exit_code"]
    return err


# -- the client ------------------------------------------------------------------------------


class Lost(Exception):
    """The server went away after it was told to run the call."""


class Again(Exception):
    """The server ran a read whose result would not travel exactly: run it in process."""


def enabled() -> bool:
    """Whether this process may ask a warm server (off with NXS_NO_REUSE, or under NXS_DEBUG,
    whose tracebacks would name the server's frames)."""
    return os.environ.get(OFF_ENV, "").strip() in ("", "0") and not os.environ.get("NXS_DEBUG")


def connect(root: Path) -> socket.socket | str:
    """A connection to this user's warm server of ``root``, or why there is none (no socket
    file, not a socket of this user, nobody listening, a peer of another user)."""
    path = socket_path(root)
    try:
        st = os.lstat(path)
    except OSError:
        return "no server"
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return "not a socket of this user"
    if path.parent != root / ".nxs" / "index" and not private_dir(path.parent):
        return "not a socket of this user"
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HANDSHAKE_S)
        sock.connect(os.fsencode(path))
    except OSError:  # refused (a stale file), a full backlog (busy), gone
        sock.close()
        return "nobody listens"
    if peer_uid(sock) not in (os.getuid(), None):
        sock.close()
        return "a server of another user"
    return sock


def ask(root: Path, request: dict[str, Any], writes: bool) -> dict[str, Any] | None:
    """Have the warm server of ``root`` run ``request``; its final frame (``result`` or
    ``error``, with the ``stderr`` text it wrote), or None to run the call in process.

    Raises:
        UpstreamError: the server was told to run a write and went away before answering (the
            write may or may not have been saved; running it again could make it twice).
    """
    op = request.get("op")
    sock = connect(root)
    if isinstance(sock, str):
        return _note(op, sock)
    try:
        deadline = time.monotonic() + HANDSHAKE_S
        try:
            send(sock, {**request, "hello": PROTOCOL, "fp": fingerprint(), "root": str(root)})
            answer = receive(sock, deadline)
        except TimeoutError:
            return _note(op, "no answer in time")
        except (OSError, ValueError):
            return _note(op, "connection failed")
        if not isinstance(answer, dict) or answer.get("ready") is not True:
            why = answer.get("refused") if isinstance(answer, dict) else None
            return _note(op, f"refused: {why}" if why else "no answer")
        try:
            send(sock, {"run": True})
            got = _follow(sock)
            _note(op, None)
            return got
        except Again:
            return _note(op, "a result that does not travel exactly")
        except (OSError, ValueError, Lost):
            _note(op, "the server went away")
            if writes:
                raise UpstreamError(
                    "the nxs server running this write stopped before it answered; the write "
                    "may or may not be saved",
                    suggestion="look with `nxm list` (or `nxm show KEY`) before running it again",
                    code="SERVER_LOST",
                ) from None
            return None
    finally:
        sock.close()


def _note(op: Any, why: str | None) -> None:
    """Append to the `LOG_ENV` file who answered this call (None: the warm server)."""
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{op}: {'warm' if why is None else 'in process, ' + why}\n")


def _follow(sock: socket.socket) -> dict[str, Any]:
    """Read the server's frames to the final one, drawing progress as it comes and keeping
    stderr text for the end (a call that has to run in process after all prints it once)."""
    from nxs import progress

    sock.settimeout(None)
    said: list[str] = []
    while True:
        frame = receive(sock)
        if not isinstance(frame, dict):
            raise Lost
        if "stderr" in frame:
            said.append(frame["stderr"])
        elif "progress" in frame:
            progress.report(*frame["progress"])
        elif "close" in frame:
            progress.close(frame["close"])
        elif "again" in frame:  # a read whose result would not travel exactly
            raise Again
        elif "result" in frame or "error" in frame:
            frame["said"] = said
            return frame


def replay(frame: dict[str, Any]) -> Any:
    """Write what the server's handler wrote on stderr, then return its result or raise its
    error, as the handler in this process would have."""
    if frame["said"]:
        sys.stderr.write("".join(frame["said"]))
        sys.stderr.flush()
    if "error" in frame:
        raise error_of(frame["error"])
    return frame["result"]


__all__ = [
    "HANDSHAKE_S",
    "OFF_ENV",
    "PROTOCOL",
    "SAFE",
    "ask",
    "connect",
    "enabled",
    "error_of",
    "error_value",
    "fingerprint",
    "receive",
    "replay",
    "send",
    "socket_path",
]
