"""Cross-seam byte parity (SPEC section 2): every operation, the verb's --json vs the MCP tool.

The test enumerates the operation table: an operation without a verb, a tool or a case in
`tests/parity/cases_*.py` fails it. Each case runs twice on the same state, at the same path:

1. the seeded workspace is copied to the case's path and the user directories are emptied;
   the case's ``setup`` runs; the verb runs in-process (the console script's own entry point,
   under typer's CliRunner isolation) with ``--json --now --actor --workspace``;
2. the path and the user directories are reset the same way; the tool is called through a
   real MCP client over stdio, against one server process (all tool groups) shared by every
   case with the same ``env``, with the same ``now``/``actor``/``workspace`` arguments.

The verb's stdout must be the tool's text, byte for byte, and a non-zero exit must be
``isError``. Same path and same user directories on both runs, so a path in an answer is
not a difference.

`PARSE_CASES` are made from the table, not written: for every operation, the calls the CLI's
own parser used to refuse in its own words (a missing required value, a word for a number,
a fraction for an integer, 0 for a number, a value outside the choices, bad JSON for an
object, an unknown option). Each must be refused, in the same bytes, by both seams.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxs.ops import SEAM_NAMES, Operation
from nxs.registry import operations
from tests.conftest import private_cache
from tests.parity.state import ACTOR, NOW, seeded_copy, template

PARITY_DIR = Path(__file__).parent / "parity"
CASE_KEYS = {"id", "tool", "arguments", "env", "setup"}


def load_cases() -> list[dict[str, Any]]:
    """Every case of every ``tests/parity/cases_*.py``, in file order."""
    cases: list[dict[str, Any]] = []
    for path in sorted(PARITY_DIR.glob("cases_*.py")):
        module = importlib.import_module(f"tests.parity.{path.stem}")
        cases.extend({**case, "_file": path.name} for case in module.CASES)
    return cases


CASES = load_cases()
OPS = {op.tool: op for op in operations()}


def parse_cases() -> list[dict[str, Any]]:
    """The refusals every operation's verb must word as its tool does, enumerated."""
    cases: list[dict[str, Any]] = []

    def case(op: Operation, what: str, arguments: dict[str, Any]) -> None:
        # A positional is said after the ones before it: give those a value.
        (name,) = arguments
        names = [p.name for p in op.params]
        if name in names and op.params[names.index(name)].positional:
            earlier = op.params[: names.index(name)]
            arguments = {p.name: "abc" for p in earlier if p.positional} | arguments
        cases.append({"id": f"{op.tool}-{what}", "tool": op.tool, "arguments": arguments})

    for op in OPS.values():
        if any(p.required for p in op.params):
            cases.append({"id": f"{op.tool}-missing", "tool": op.tool, "arguments": {}})
        for p in op.params:
            if p.type == "int":
                case(op, f"{p.name}-word", {p.name: "two"})
                case(op, f"{p.name}-fraction", {p.name: 2.5})
            elif p.type == "float":
                case(op, f"{p.name}-word", {p.name: "two"})
                case(op, f"{p.name}-zero", {p.name: 0})
            elif p.type == "object":
                case(op, f"{p.name}-bad-json", {p.name: "{oops"})
            if p.choices:
                case(op, f"{p.name}-choice", {p.name: "bogus"})
        case(op, "unknown-option", {"colour": "red"})
    return cases


def cli_argv(op: Operation, arguments: dict[str, Any]) -> list[str]:
    """The verb's arguments for a tool call's arguments (positionals after ``--``).

    A name the operation does not declare becomes the option a user would mistype (`--colour`).
    """
    by_name = {p.name: p for p in op.params}
    for p in op.params:
        for alias in p.aliases:
            by_name.setdefault(alias, p)
    options: list[str] = []
    positional: dict[str, list[str]] = {}
    for name, value in arguments.items():
        if name in SEAM_NAMES or value is None:
            continue
        p = by_name.get(name)
        if p is None:
            options += ["--" + name.replace("_", "-"), str(value)]
            continue
        if p.type == "bool":
            options.append(p.flag if value else f"--no-{p.flag[2:]}")
        elif p.type == "object":
            text = value if isinstance(value, str) else orjson.dumps(value).decode()
            if p.positional:
                positional[p.name] = [text]
            else:
                options += [p.flag, text]
        elif p.type == "list":
            items = [value] if isinstance(value, str) else list(value)
            if p.positional:
                positional[p.name] = [str(v) for v in items]
            else:
                for item in items:
                    options += [p.flag, str(item)]
        elif p.positional:
            positional[p.name] = [str(value)]
        else:
            options += [p.flag, str(value)]
    tail = [v for p in op.params if p.positional for v in positional.get(p.name, [])]
    return options + (["--", *tail] if tail else [])


def run_cli(op: Operation, arguments: dict[str, Any], root: Path, env: dict[str, str]) -> Any:
    """Run the verb through the console script's entry point; return (stdout bytes, exit code)."""
    from typer.testing import CliRunner

    from nxs.clitool import main

    if op.cli == "nxm":
        from nxm.cli import app
    else:
        from nxs.cli import app
    seam = [
        "--json",
        "--now",
        arguments.get("now") or NOW,
        "--actor",
        arguments.get("actor") or ACTOR,
        "--workspace",
        str(root),
    ]
    argv = [*op.verb, *seam, *cli_argv(op, arguments)]
    runner = CliRunner()
    saved = sys.argv
    with runner.isolation(env=env) as (out, _err, _mixed):
        sys.argv = [op.cli, *argv]
        try:
            main(app, op.cli)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = saved
            sys.stdout.flush()
        return out.getvalue(), code


class ParityServer:
    """One `nxs mcp serve --tools all` process and its MCP client, driven from sync tests."""

    def __init__(self, stack: ExitStack, base: Path, env: dict[str, str]) -> None:
        from anyio.from_thread import start_blocking_portal
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from nxs.workspace import init
        from tests.conftest import CODE_ENV

        self.home = base / "home"
        # Seeding imports lancedb (seconds): do it while the server process starts.
        threading.Thread(target=template, daemon=True).start()
        launch, _ = init(base / "launch", ["memory", "linear"])  # every tool is listed
        cwd = base / "cwd"
        cwd.mkdir()
        self.log = base / "server.log"
        params = StdioServerParameters(
            command=sys.executable,
            args=["-c", "from nxs.cli import main; main()", "mcp", "serve", "--tools", "all"]
            + ["--workspace", str(launch.root)],
            env={**CODE_ENV, **server_env(self.home), **env},
            cwd=str(cwd),
        )
        errlog = stack.enter_context(self.log.open("w"))
        self.portal = stack.enter_context(start_blocking_portal())
        client = Client(
            stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=120
        )
        self.client = stack.enter_context(self.portal.wrap_async_context_manager(client))
        self.tools = {t.name: t for t in self.portal.call(self.client.list_tools).tools}

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, tool, arguments)


def server_env(home: Path) -> dict[str, str]:
    """The isolated user directories and identity a parity run uses on both seams."""
    return {
        "NXS_CONFIG_DIR": str(home / "config"),
        "NXS_DATA_DIR": str(home / "data"),
        "NXS_CACHE_DIR": str(private_cache(home.parent)),  # the server's machine, and the CLI's
        "HF_HUB_OFFLINE": "1",
        "USER": "tester",
    }


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A parity server per distinct case ``env``, started on first use."""
    started: dict[tuple[tuple[str, str], ...], ParityServer] = {}
    with ExitStack() as stack:

        def get(env: dict[str, str]) -> ParityServer:
            key = tuple(sorted(env.items()))
            if key not in started:
                base = tmp_path_factory.mktemp("parity-server")
                started[key] = ParityServer(stack, base, env)
            return started[key]

        yield get


def reset(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)


def prepare(root: Path, home: Path, case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh seeded copy at ``root``, empty user directories, then the case's setup."""
    reset(root)
    reset(home)
    with monkeypatch.context() as m:
        for name, value in {**server_env(home), **case.get("env", {})}.items():
            m.setenv(name, value)
        from nxm.store.local import Local

        reset(Local(root).dir)  # what this machine derived from the workspace made before
        seeded_copy(root)  # embedded on the server's machine
        setup = case.get("setup")
        if setup is not None:
            setup(root)


def test_every_operation_has_a_case() -> None:
    covered = {case["tool"] for case in CASES}
    missing = [tool for tool in OPS if tool not in covered]
    assert not missing, f"operations without a parity case in tests/parity/cases_*.py: {missing}"


def test_cases_are_well_formed() -> None:
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    for case in CASES:
        assert case["tool"] in OPS, f"{case['_file']}: {case['id']}: no operation {case['tool']}"
        assert set(case) - {"_file"} <= CASE_KEYS, f"{case['id']}: unknown keys"
        assert isinstance(case.get("arguments", {}), dict)


def test_every_operation_has_a_verb() -> None:
    import typer

    from nxm.cli import app as nxm_app
    from nxs.cli import app as nxs_app

    missing = []
    for op in OPS.values():
        command: Any = typer.main.get_command(nxm_app if op.cli == "nxm" else nxs_app)
        for word in op.verb:
            command = getattr(command, "commands", {}).get(word)
            if command is None:
                break
        if command is None:
            missing.append(op.command)
    assert not missing, f"operations without a CLI verb: {missing}"


def test_every_operation_is_a_tool(servers: Any) -> None:
    server = servers({})
    assert sorted(server.tools) == sorted(OPS)
    for tool, op in OPS.items():
        assert server.tools[tool].input_schema == op.input_schema(seam=False)
        assert server.tools[tool].description == op.description


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parity(
    case: dict[str, Any], servers: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = OPS[case["tool"]]
    env = dict(case.get("env", {}))
    server = servers(env)
    arguments = dict(case.get("arguments", {}))
    root = tmp_path / "ws"
    monkeypatch.chdir(tmp_path)

    prepare(root, server.home, case, monkeypatch)
    for name, value in {**server_env(server.home), **env}.items():
        monkeypatch.setenv(name, value)
    for name in ("NXS_WORKSPACE", "NXS_ACTOR", "NXM_ACTOR", "NXF_ACTOR"):
        monkeypatch.delenv(name, raising=False)
    out, code = run_cli(op, arguments, root, {})

    prepare(root, server.home, case, monkeypatch)
    call = {**arguments, "workspace": str(root)}
    call.setdefault("now", NOW)
    call.setdefault("actor", ACTOR)
    result = server.call(case["tool"], call)

    assert result.structured_content is None
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text.encode()
    assert out == text, f"{op.command} --json and {op.tool} differ"
    assert (code != 0) == bool(result.is_error), f"exit {code}, isError {result.is_error}"
    assert out.endswith(b"\n") and orjson.loads(out) is not None
    if code != 0:
        assert orjson.loads(out)["error"] is True


PARSE_CASES = parse_cases()


def test_parse_cases_cover_every_operation() -> None:
    assert {case["tool"] for case in PARSE_CASES} == set(OPS)
    kinds = {case["id"].rsplit("-", 1)[-1] for case in PARSE_CASES}
    assert {"missing", "word", "fraction", "zero", "choice", "option"} <= kinds


@pytest.fixture(scope="module")
def parse_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One seeded workspace for the parse cases: a refusal changes nothing, so they share it."""
    return seeded_copy(tmp_path_factory.mktemp("parse") / "ws")


@pytest.mark.parametrize("case", PARSE_CASES, ids=[c["id"] for c in PARSE_CASES])
def test_parse_refusals_are_the_tools(
    case: dict[str, Any], servers: Any, parse_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = OPS[case["tool"]]
    server = servers({})
    for name, value in server_env(server.home).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NXS_WORKSPACE", raising=False)
    out, code = run_cli(op, case["arguments"], parse_root, {})
    call = {**case["arguments"], "workspace": str(parse_root), "now": NOW, "actor": ACTOR}
    result = server.call(case["tool"], call)
    text = result.content[0].text.encode()
    assert out == text, f"{op.command} --json and {op.tool} differ"
    assert code == 2 and result.is_error is True
    assert orjson.loads(out)["kind"] == "validation"
    if case["id"].endswith("-missing"):
        assert orjson.loads(out)["suggestion"] == f"see `{op.command} --help`"


def test_server_log_is_clean(servers: Any) -> None:
    """Nothing but warnings the handlers chose to print reached the server's stderr."""
    server = servers({})
    text = server.log.read_text()
    assert "Traceback" not in text, text[-2000:]
