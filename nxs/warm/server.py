"""The server side of CLI reuse (`nxs.warm`): `nxs mcp serve` or `nxs warm` answering CLI calls.

`Listener(seam)` binds the workspace's unix socket (0600; in a 0700 directory when the path is
the short one) unless another live server of this workspace holds it, accepts on a thread of
its own, and serves each connection on its own thread: it checks the peer (this user), the
request (protocol, fingerprint, workspace, a `SAFE` operation) and its own state, says "ready"
only while no other call runs (a busy server says so at once), then runs the operation under
the seam's call lock with the services the MCP tools use. `close` removes the socket file if it
is still this listener's and lets the calls under way finish; `last` is when a call last finished
(`nxs warm` stops after ``--idle`` without one). A server started while another holds the socket
(two MCP hosts open on one workspace) stands by (`stand_by`): it takes the socket over when the
other exits, so the workspace's CLI calls stay warm while any of its servers runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from nxs import progress, warm
from nxs.context import Context
from nxs.errors import NxsError
from nxs.ops import validate
from nxs.render import render

log = logging.getLogger("nxs.mcp")
RUN_WAIT_S = 2.0  # how long a "ready" server waits to be told "run" (it holds the call lock)
REQUEST_WAIT_S = 1.0
STANDBY_S = 5.0  # how often a standing-by server tries the socket another one holds
HELD = "another server of this workspace listens there"

# The frame writer of the CLI call running now. One call runs at a time (the seam's lock), and
# its handler may write from threads it starts (a search embeds the query on a pool thread), so
# what any thread writes goes to it, except the threads that are the server's own.
_calling: list[Any] = []
_OWN = ("MainThread", "nxs-warm", "nxs-warm-accept", "nxs-warm-standby")


def _sink() -> Any:
    if not _calling or threading.current_thread().name in _OWN:
        return None
    return _calling[0]


class _Split:
    """A stream that sends what the running CLI call writes to its client (as stderr frames)
    and everything else to the stream it replaces (whose every other attribute it shows: a
    library may ask for its ``fileno``)."""

    def __init__(self, base: Any) -> None:
        self.base = base

    def write(self, text: str) -> int:
        sink = _sink()
        if sink is None:
            return self.base.write(text)
        sink({"stderr": text})
        return len(text)

    def flush(self) -> None:
        if _sink() is None:
            self.base.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


def _split_streams() -> None:
    import sys

    # stdout too: the MCP server points it at stderr, and a call must not write either
    for name in ("stderr", "stdout"):
        stream = getattr(sys, name)
        if not isinstance(stream, _Split):
            setattr(sys, name, _Split(stream))


class Listener:
    """The socket a `nxs.mcp.server.Seam` answers CLI calls on."""

    def __init__(self, seam: Any) -> None:
        self.seam = seam
        self.root = Path(seam.workspace)
        self.path = warm.socket_path(self.root)
        self.fingerprint = warm.fingerprint()
        from nxs.registry import operations

        self.ops: dict[str, Any] = {
            op.name: op for op in operations(["memory"]) if op.cli == "nxm" and op.name in warm.SAFE
        }
        self.sock: socket.socket | None = None
        self._ino: int | None = None
        self.why: str | None = None  # why `start` could not listen
        self.last = time.monotonic()  # when a call last finished (or the listener started)
        self._open = 0  # connections accepted and not yet done with
        self._done = threading.Condition()
        # the calls run on one thread of their own, as the MCP calls do (`build_server`): each
        # thread that embeds or searches keeps allocations of its own in onnxruntime and lance
        from concurrent.futures import ThreadPoolExecutor

        self._worker = ThreadPoolExecutor(1, thread_name_prefix="nxs-cli")
        self._closed = threading.Event()
        self._binding = threading.Lock()  # a standby's try and `close` do not overlap

    def start(self) -> bool:
        """Bind and listen; False (and nothing bound) when another live server holds the
        socket (``why`` is `HELD`) or it cannot be made."""
        with self._binding:
            if self._closed.is_set():
                return False
            try:
                sock = self._bind()
            except OSError as exc:
                self.why = exc.strerror or str(exc)
                return False
            self.sock = sock
            self.last = time.monotonic()
            _split_streams()
            threading.Thread(target=self._accept, name="nxs-warm-accept", daemon=True).start()
            return True

    def _bind(self) -> socket.socket:
        import fcntl

        self._prepare()
        # under a lock: two standing-by servers finding a crashed server's socket must not
        # both remove it, the second removing the first's new one
        with open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._clear()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)  # made 0600: no moment when another user could connect
            try:
                sock.bind(os.fsencode(self.path))
                sock.listen(16)
                self._ino = os.lstat(self.path).st_ino
            except OSError:
                sock.close()
                raise
            finally:
                os.umask(old)
        return sock

    def stand_by(self) -> None:
        """Try `start` every `STANDBY_S` seconds on a thread of its own, until it listens or
        the listener is closed: the server holding the socket may exit before this one."""

        def retry() -> None:
            while not self._closed.wait(STANDBY_S):
                if self.start():
                    log.info("CLI reuse on: took over %s", self.path)
                    return

        threading.Thread(target=retry, name="nxs-warm-standby", daemon=True).start()

    def _prepare(self) -> None:
        """The socket's directory made (0700 when it is the short path's)."""
        parent = self.path.parent
        if parent == self.root / ".nxs" / "index":
            parent.mkdir(parents=True, exist_ok=True)
        else:
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not warm.private_dir(parent):
                raise OSError(0, "its directory is not private to this user")

    def _clear(self) -> None:
        """The socket file of a server that is gone removed; a live one is left to it."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(st.st_mode):
            raise OSError(0, "a file that is not a socket is in the way")
        probe = warm.connect(self.root)
        if not isinstance(probe, str):
            probe.close()
            raise OSError(0, HELD)
        os.unlink(self.path)

    def close(self) -> None:
        """Stop listening, remove the socket file if it is still this listener's, and wait
        for the connections under way (a call's answer, not cut off half-way: a client told
        "lost" after a write cannot know whether it was saved); a new one is refused."""
        self._closed.set()
        with self._binding:  # a standby's try under way ends first
            pass
        if self.sock is None:
            return
        with contextlib.suppress(OSError):
            if os.lstat(self.path).st_ino == self._ino:
                os.unlink(self.path)
        with contextlib.suppress(OSError):
            self.sock.close()
        self.sock = None
        with self._done:
            self._done.wait_for(lambda: self._open == 0)
        self._worker.shutdown(wait=False)

    def idle(self) -> float | None:
        """Seconds since a call last finished, or None while a connection is being served."""
        with self._done:
            return None if self._open else time.monotonic() - self.last

    def _accept(self) -> None:
        while self.sock is not None:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._done:  # counted before its thread starts: `close` waits for it
                self._open += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                self._answer(conn)
        except (OSError, ValueError, TimeoutError) as exc:
            log.debug("CLI call dropped: %s", exc)
        finally:
            with self._done:
                self._open -= 1
                self._done.notify_all()

    def _answer(self, conn: socket.socket) -> None:
        if warm.peer_uid(conn) != os.getuid():
            return
        request = warm.receive(conn, time.monotonic() + REQUEST_WAIT_S)
        why = self._refusal(request)
        if why is not None:
            warm.send(conn, {"refused": why})
            return
        seam = self.seam
        if not seam.lock.acquire(blocking=False):  # busy: the client runs it itself, now
            warm.send(conn, {"refused": "busy"})
            return
        final = None
        try:
            why = "stopping" if self.sock is None else self._state()
            if why is not None:
                warm.send(conn, {"refused": why})
                return
            warm.send(conn, {"ready": True})
            go = warm.receive(conn, time.monotonic() + RUN_WAIT_S)
            if not isinstance(go, dict) or go.get("run") is not True:
                return  # the client gave up waiting: it runs the call itself
            with seam._idle:
                seam._running += 1
            try:
                final = self._worker.submit(self._run, conn, request).result()
            finally:
                self.last = time.monotonic()
                with seam._idle:
                    seam._running -= 1
                    seam._idle.notify_all()
        finally:
            seam.lock.release()
        # the answer goes after the lock is free: a call the client makes next is not busy
        warm.send(conn, final)

    def _refusal(self, request: Any) -> str | None:
        """Why this request is not this server's to answer (None: it is)."""
        if not isinstance(request, dict) or request.get("hello") != warm.PROTOCOL:
            return "another protocol"
        if request.get("fp") != self.fingerprint:
            return "another nxs (code, packages or environment)"
        if request.get("root") != str(self.root):
            return "another workspace"
        if request.get("op") != "prime" and request.get("op") not in self.ops:
            return "not an operation this server runs for the CLI"
        if not isinstance(request.get("kwargs"), dict):
            return "bad request"
        return None

    def _state(self) -> str | None:
        """Why this server would not answer as a new process would (None: it would)."""
        from nxm.store import migrate

        seam = self.seam
        seam._evict_stale()
        try:
            ctx = Context(now="", actor="nxs", workspace_arg=str(self.root), services=seam.services)
            service = ctx.memory
        except NxsError as err:
            return f"workspace: {err.code}"
        store = service.store
        if service._embed_error is not None:
            return "the model did not load"
        if not store.cache.persistent or store.index.uri.startswith("memory://"):
            return "the cache or index is kept in memory"
        if store._on_disk is not None or store.remote:
            return "the index is not the workspace's own"
        if store.files.journal.exists() or migrate.needed(store):
            return "a journal to replay or a migration to run"
        if store.problems:
            return "memory files that cannot be read"
        return None

    def _run(self, conn: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
        sending = threading.Lock()  # frames from the call's threads, one at a time
        gone: list[bool] = []

        def sink(frame: dict[str, Any]) -> None:
            # a client that went away (Ctrl-C) must not make a write fail half-way: the call
            # runs to its end, and what it says is dropped
            with sending:
                if gone:
                    return
                try:
                    warm.send(conn, frame)
                except OSError:
                    gone.append(True)

        import gc

        _calling.append(sink)
        # a call's thousands of short-lived records (prime and list read 10,000 heads) would
        # set off collections that walk this process's whole heap (lancedb, the model, the
        # MCP SDK): prime took ~0.35 s here against ~0.2 s without; they are collected after
        gc.disable()
        try:
            with progress.forwarded(sink):
                return self._call(request)
        finally:
            gc.enable()
            _calling.clear()

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from nxs.clitool import internal

        seam = self.seam
        try:
            if request["op"] == "prime":
                return {"result": self._prime(request)}
            op = self.ops[request["op"]]
            kwargs = validate(op, request["kwargs"])
            ctx = Context(
                now=request["now"], actor=request["actor"], workspace_arg=str(self.root),
                services=seam.services,
            )  # fmt: skip
            try:
                result = op.handler(ctx, **kwargs)
            finally:
                seam._evict_stale()
            try:
                return {"result": plain(result)}
            except TypeError:
                if not op.writes:
                    return {"again": True}  # a read: the client runs it itself, exactly
                return {"result": orjson.loads(render(result))}  # done: the nearest value
        except NxsError as err:
            return {"error": warm.error_value(err)}
        except Exception as exc:  # noqa: BLE001 - the seam's one catch-all
            return {"error": warm.error_value(internal(exc))}

    def _prime(self, request: dict[str, Any]) -> str:
        from nxs.prime import output

        args, now = request["kwargs"], request.get("now")
        ctx = Context(
            now="", actor="nxs", workspace_arg=str(self.root), services=self.seam.services
        )
        return output(
            str(self.root), budget=args.get("budget"), format_=args.get("format_", "text"),
            now=now, quiet_outside=bool(args.get("quiet_outside")),
            seam=args.get("seam", "cli"), tools=args.get("tools"),
            store=ctx.memory.store,  # the server's own: it follows the files (inotify)
        ).decode()  # fmt: skip


def listen(seam: Any) -> Listener | None:
    """A started listener for the server's launch workspace, or None (no workspace, reuse
    turned off, or the socket cannot be had)."""
    if seam.workspace is None or seam.launch_error is not None or not warm.enabled():
        return None
    if "memory" not in seam.modules:
        return None
    listener = Listener(seam)
    if listener.start():
        return listener
    log.info("CLI reuse off: cannot listen on %s (%s)", listener.path, listener.why)
    if listener.why != HELD:
        return None
    listener.stand_by()
    return listener


def plain(value: Any) -> Any:
    """A handler's result as the JSON values it travels as, refused (TypeError) when the
    client would not get back the very value this process holds (a printer could tell them
    apart): only dicts with string keys, lists, strings, exact ints, finite floats, booleans
    and None pass."""
    import math

    if value is None or isinstance(value, bool | str):
        return value
    if type(value) is int:
        if -(2**63) <= value < 2**64:
            return value
    elif type(value) is float:
        if math.isfinite(value):
            return value
    elif type(value) is list:
        return [plain(v) for v in value]
    elif type(value) is dict:
        if all(type(k) is str for k in value):
            return {k: plain(v) for k, v in value.items()}
    raise TypeError(f"a result holds a {type(value).__name__}, which does not travel exactly")


__all__ = ["Listener", "listen", "plain"]
