"""Writers for the concurrency and crash tests: a plan of mixed writes and three ways to run it.

A `Plan` picks the next write for one writer (adds with a unique search token, updates,
classifies, closes and feedback on its own memories; updates, classifies, closes, reopens and
feedback on memories every writer shares; adds of "race" bodies every writer adds) and records
what each acknowledged answer promises: the event it must have left, the body or category it set.
Drivers run a step through a seam: `CliDriver` (the `nxm` Typer app in process),
`ProcessDriver` (a real `nxm` process per call), or the MCP session (tests/reliability/common).

Every acknowledgement is one JSON line appended with a single `os.write` after the call returned,
so a reader never counts a write that had not been acknowledged.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SIGNALS = ("POSITIVE", "NEGATIVE", "NEUTRAL")
EVENT = {
    "update": "UPDATED",
    "classify": "CLASSIFIED",
    "close": "CLOSED",
    "reopen": "REOPENED",
    "feedback": "FEEDBACK_SUBMITTED",
}


def stamp(writer: int, seq: int) -> str:
    """A timestamp unique to (writer, step), in the form the store writes."""
    at = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(days=writer, seconds=seq)
    return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def shared_body(k: int) -> str:
    return f"Shared memory {k}: every writer edits it (token sharedtok{k})."


def race_body(k: int) -> str:
    return f"Race memory {k}: every writer adds this same body at once (token racetok{k})."


class Plan:
    """The writes of one writer, chosen at random from its own state (seeded)."""

    def __init__(
        self, tag: str, index: int, seed: int, shared: list[str], race_every: int = 9
    ) -> None:
        self.tag, self.index = tag, index
        self.rng = random.Random(seed)
        self.shared = shared
        self.race_every = race_every
        self.own_open: list[tuple[str, int]] = []
        self.count = 0
        self.seq = 0

    def next(self) -> dict[str, Any]:
        """The next step: op, arguments (tool names) and what an acknowledgement promises."""
        self.seq += 1
        at = stamp(self.index, self.seq)
        step: dict[str, Any] = {"w": self.tag, "seq": self.seq, "at": at}
        rng = self.rng
        if self.seq % self.race_every == 0:
            k = self.seq // self.race_every
            body = race_body(k)
            return {**step, "op": "add", "args": {"body": body, "introduction": f"race {k}"},
                    "race": k, "token": f"racetok{k}"}  # fmt: skip
        r = rng.random()
        if len(self.own_open) < 2 or r < 0.25:
            i = self.count
            self.count += 1
            token = f"tok{self.tag}n{i}"
            body = f"{self.tag} note {i}: the {token} service listens on port {9000 + i}."
            return {**step, "op": "add", "token": token, "i": i,
                    "args": {"body": body, "introduction": f"{self.tag} note {i}"}}  # fmt: skip
        own = rng.choice(self.own_open)
        shared = rng.choice(self.shared)
        if r < 0.40:
            token = f"tok{self.tag}n{own[1]}"
            body = f"{self.tag} note {own[1]}: the {token} service moved (revision {self.seq})."
            intro = f"{self.tag} note {own[1]} rev {self.seq}"
            args = {"key": own[0], "body": body, "introduction": intro}
            return {**step, "op": "update", "args": args}
        if r < 0.50:
            return {**step, "op": "classify",
                    "args": {"key": own[0], "category": f"cat-{self.tag}-{self.seq}"}}  # fmt: skip
        if r < 0.55:
            return {**step, "op": "close", "args": {"key": own[0]}}
        if r < 0.70:
            key = rng.choice([own[0], shared, shared])
            signal = rng.choice(SIGNALS)
            return {**step, "op": "feedback", "args": {"key": key, "signal": signal}}
        if r < 0.78:
            k = self.shared.index(shared)
            body = f"{shared_body(k)} Revised by {self.tag} at step {self.seq}."
            args = {"key": shared, "body": body, "introduction": f"shared {k} by {self.tag}"}
            return {**step, "op": "update", "args": args}
        if r < 0.88:
            args = {"key": shared, "category": f"cat-{self.tag}-{self.seq}"}
            return {**step, "op": "classify", "args": args}
        if r < 0.94:
            return {**step, "op": "close", "args": {"key": shared}}
        return {**step, "op": "reopen", "args": {"key": shared}}

    def record(self, step: dict[str, Any], ok: bool, answer: dict[str, Any]) -> dict[str, Any]:
        """The acknowledgement line of a finished step (and the plan's state moved on)."""
        ack: dict[str, Any] = {k: v for k, v in step.items() if k != "args"}
        ack["args"] = step["args"]
        ack["ok"] = ok
        if not ok:
            ack.update(kind=answer.get("kind"), code=answer.get("code"))
            return ack
        op = step["op"]
        if op == "add":
            memory = answer["memory"]
            ack.update(key=memory["key"], created=answer["created"])
            if "race" not in step:
                self.own_open.append((memory["key"], step["i"]))
        else:
            ack["key"] = step["args"]["key"]
            ack["event"] = EVENT[op]
            if op == "close":
                self.own_open = [o for o in self.own_open if o[0] != ack["key"]]
        return ack


# -- drivers --------------------------------------------------------------------------------------


def argv_for(tool: str, args: dict[str, Any]) -> list[str]:
    """The `nxm`/`nxs` argv (after the program) for a tool call, from the operation table."""
    from nxs.registry import operations

    op = next(o for o in operations() if o.tool == tool)
    argv = list(op.verb)
    argv += [str(args[p.name]) for p in op.params if p.positional and p.name in args]
    for p in op.params:
        if p.positional or p.name not in args:
            continue
        value = args[p.name]
        if p.type == "bool":
            argv.append(p.flag if value else f"--no-{p.flag[2:]}")
        elif p.type == "list":
            for item in value:
                argv += [p.flag, item]
        elif p.type == "object":
            argv += [p.flag, json.dumps(value)]
        else:
            argv += [p.flag, str(value)]
    return argv


def _answer(out: bytes) -> dict[str, Any]:
    try:
        return json.loads(out)
    except ValueError:
        return {"kind": "unparseable", "code": out[:200].decode(errors="replace")}


class CliDriver:
    """The `nxm` CLI app run in this process (the verb's own parsing, run_op and exit code)."""

    def __init__(self, root: str) -> None:
        from typer.testing import CliRunner

        from nxm.cli import app

        self.root, self.app, self.runner = root, app, CliRunner()

    def __call__(self, op: str, args: dict[str, Any], at: str, actor: str) -> tuple[bool, Any]:
        argv = argv_for(f"memory_{op}", args)
        argv += ["--json", "--workspace", self.root, "--now", at, "--actor", actor]
        result = self.runner.invoke(self.app, argv)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            return False, {"kind": "crash", "code": repr(result.exception)}
        return result.exit_code == 0, _answer(result.stdout_bytes)


class ProcessDriver:
    """A real `nxm` process per call."""

    def __init__(self, root: str, env: dict[str, str]) -> None:
        self.root, self.env = root, env

    def __call__(self, op: str, args: dict[str, Any], at: str, actor: str) -> tuple[bool, Any]:
        argv = ["nxm", *argv_for(f"memory_{op}", args)]
        argv += ["--json", "--workspace", self.root, "--now", at, "--actor", actor]
        done = subprocess.run(argv, capture_output=True, env=self.env, timeout=600, check=False)
        if done.returncode not in (0, 2, 3, 4, 5) or b"Traceback" in done.stderr:
            return False, {"kind": "crash", "code": done.stderr.decode(errors="replace")[-500:]}
        return done.returncode == 0, _answer(done.stdout)


def run_plan(plan: Plan, driver: Any, steps: int, out: Path) -> None:
    """Run ``steps`` steps of ``plan``; append each acknowledgement to ``out``."""
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for _ in range(steps):
            step = plan.next()
            ok, answer = driver(step["op"], step["args"], step["at"], plan.tag)
            line = json.dumps(plan.record(step, ok, answer)) + "\n"
            os.write(fd, line.encode())
    finally:
        os.close(fd)


def read_acks(path: Path) -> list[dict[str, Any]]:
    """The complete acknowledgement lines of a file (a torn last line is not one)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return [json.loads(line) for line in data.split(b"\n")[:-1] if line]


def wait_for(path: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.01)


# -- worker processes (targets of `common.workers()`) -----------------------------------------------


def _warm(root: str) -> None:
    from nxs.context import Context

    service = Context(now="", actor="", workspace_arg=root).memory
    service.embedder()
    service.store.index.table(create=True)


def _start(root: str, env: dict[str, str]) -> None:
    """A writer process's environment (the fork server kept the one of the test that started
    it), then its store and model opened."""
    os.environ.clear()
    os.environ.update(env)
    _warm(root)


def cli_writer(
    root: str,
    tag: str,
    index: int,
    seed: int,
    steps: int,
    shared: list[str],
    env: dict[str, str],
    out: str,
    go: str,
) -> None:
    """A concurrency writer: the `nxm` app in this process, started by the ``go`` file."""
    _start(root, env)
    Path(out + ".ready").touch()
    wait_for(Path(go))
    run_plan(Plan(tag, index, seed, shared), CliDriver(root), steps, Path(out))


__all__ = [
    "EVENT",
    "CliDriver",
    "Plan",
    "ProcessDriver",
    "argv_for",
    "cli_writer",
    "compactor",
    "crash_writer",
    "race_body",
    "read_acks",
    "run_plan",
    "shared_body",
    "stamp",
    "wait_for",
]


def crash_writer(
    root: str,
    tag: str,
    index: int,
    seed: int,
    shared: list[str],
    env: dict[str, str],
    out: str,
    ready: str,
) -> None:
    """A crash-test writer: the `nxm` app in this process, writing until it is killed."""
    _start(root, env)
    Path(ready).touch()
    run_plan(Plan(tag, index, seed, shared), CliDriver(root), 10**6, Path(out))


def compactor(root: str, env: dict[str, str], ready: str, done: str) -> None:
    """A crash-test compaction: `nxm compact --json` in this process, marked done when it ends."""
    os.environ.clear()  # the fork server kept the environment of the test that started it
    os.environ.update(env)
    _warm(root)
    from typer.testing import CliRunner

    from nxm.cli import app

    runner = CliRunner()
    Path(ready).touch()
    result = runner.invoke(app, ["compact", "--json", "--workspace", root])
    Path(done).write_text(f"{result.exit_code}\n{result.stdout}")
