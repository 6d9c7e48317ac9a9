"""The CLI seam: Typer verbs derived from the operation table (`register`).

`run_op` is the one place the CLI calls a handler; `fail` prints an error's envelope (``--json``)
or message and exits with its kind's code. `main` builds only the called verb's parser.
"""

from __future__ import annotations

import copy
import inspect
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from nxs.context import CLI_ACTOR_ENV, Context, resolve_actor, resolve_now
from nxs.errors import NxsError, ValidationError
from nxs.ops import Operation, Param, parse_number, unknown_parameter, validate
from nxs.render import render

# Typer passes words through as they are (numbers too): `validate` is the one place a value
# is checked, so a refusal is the tool's refusal byte for byte (`parse_number` reads numbers).
_TYPES: dict[str, Any] = {
    "str": str, "int": str, "float": str, "bool": bool, "list": list[str], "object": str,
}  # fmt: skip
_METAVARS = {"int": "<int>", "float": "<float>"}  # what --help showed when Typer parsed them
# The full command path of every derived verb (aliases too) -> its operation; `main` uses it
# to word a refusal of Typer's own parser as the operation's refusal.
VERBS: dict[str, Operation] = {}

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the JSON answer (the MCP tool's bytes).")
]
NowOpt = Annotated[
    str | None, typer.Option("--now", help="Time to record (ISO-8601; default: now).")
]
ActorOpt = Annotated[
    str | None,
    typer.Option("--actor", help="Author to record (default: $NXM_ACTOR, $NXS_ACTOR or $USER)."),
]
_HiddenNow = Annotated[str | None, typer.Option("--now", hidden=True)]
_HiddenActor = Annotated[str | None, typer.Option("--actor", hidden=True)]
_FOUND = "Workspace path (default: found walking up; NXS_WORKSPACE)."
WorkspaceOpt = Annotated[str | None, typer.Option("--workspace", "-w", help=_FOUND)]
Humanizer = Callable[[str, Any], None]
KEYWORD = inspect.Parameter.KEYWORD_ONLY


def emit(data: bytes) -> None:
    """Write bytes to stdout exactly."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def printable(text: str) -> str:
    """Text with rich markup escaped and control characters (ANSI escapes, C1, bidi overrides,
    line separators) shown as ``\\x1b``: echoed input cannot rewrite what the terminal shows."""
    import re

    from rich.markup import escape

    unsafe = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]")
    return escape(unsafe.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text))


def fail(err: NxsError, as_json: bool) -> typer.Exit:
    """Report an error (JSON on stdout with --json, a message on stderr otherwise)."""
    if as_json:
        emit(render(err))
    else:
        from rich.console import Console

        console = Console(stderr=True, highlight=False, soft_wrap=True)
        console.print(f"[bold red]error[/]: {printable(err.message)}", markup=True)
        if err.suggestion:
            console.print(f"[dim]hint[/]: {printable(err.suggestion)}", markup=True)
    return typer.Exit(err.exit_code)


def internal(exc: BaseException) -> NxsError:
    """An unexpected exception as an internal error (no locals, no secrets; NXS_DEBUG shows it)."""
    if os.environ.get("NXS_DEBUG"):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    return NxsError(
        f"internal error: {type(exc).__name__}",
        suggestion="re-run with NXS_DEBUG=1 to see the traceback, and report it",
    )


def guarded(work: Callable[[], Any], as_json: bool, opened: list[Any] | None = None) -> Any:
    """``work()``, or exit through `fail` on a refusal or a crash (as an internal error); the
    contexts in ``opened`` are released either way."""
    try:
        return work()
    except NxsError as err:
        raise fail(err, as_json) from None
    except (KeyboardInterrupt, typer.Exit):
        raise
    except Exception as exc:  # noqa: BLE001 - the seam's one catch-all
        raise fail(internal(exc), as_json) from None
    finally:
        while opened:
            opened.pop().release()


def run_op(
    op: Operation, arguments: dict[str, Any], *, as_json: bool, now: str | None, actor: str | None,
    workspace: str | None, human: Humanizer | None = None,
) -> None:  # fmt: skip
    """Validate, call and print one operation for the CLI; exits non-zero on refusal."""
    opened: list[Context] = []

    def call() -> Any:
        kwargs = validate(op, {**arguments, "now": now, "actor": actor, "workspace": workspace})
        moment, author = resolve_now(now), resolve_actor(actor, CLI_ACTOR_ENV)
        opened.append(Context(now=moment, actor=author, workspace_arg=workspace))
        return op.handler(opened[-1], **kwargs)

    result = guarded(call, as_json, opened)
    if as_json or human is None:
        emit(render(result))
    else:
        human(op.name, result)


def _cli_param(p: Param, taken: frozenset[str] = frozenset()) -> inspect.Parameter:
    help_text = p.help
    if p.choices:
        help_text += f" \\[{' | '.join(p.choices)}]"  # escaped: rich eats [lower_case]; spaced: long lists wrap
    if p.type == "object":
        help_text += " (JSON object)"
    if p.stdin:
        help_text += " Give - to read it from stdin."
    if p.required and not p.positional:  # validate refuses its absence, on both seams alike
        help_text += " \\[required]"
    pytype = _TYPES[p.type]
    if p.positional:
        info: Any = typer.Argument(help=help_text, show_default=False)
        annotation = Annotated[pytype if p.required else pytype | None, info]
        default = inspect.Parameter.empty if p.required else None
    else:
        decls = [p.flag] if p.type != "bool" else [f"{p.flag}/--no-{p.flag[2:]}"]
        if p.type == "list" and p.name.endswith("s") and p.flag[:-1] not in taken:
            decls.append(p.flag[:-1])  # --refs x --ref y: both spellings repeat
        shown, metavar = p.default is not None, _METAVARS.get(p.type)
        info = typer.Option(*decls, help=help_text, show_default=shown, metavar=metavar)
        annotation = Annotated[pytype | None, info]
        default = None
    return inspect.Parameter(p.name, KEYWORD, annotation=annotation, default=default)


def make_command(op: Operation, human: Humanizer | None) -> Callable[..., None]:
    """A function whose signature Typer reads as the verb's arguments and options."""
    names = [p.name for p in op.params]
    numbers = {p.name for p in op.params if p.type in ("int", "float")}
    stdin = {p.name for p in op.params if p.stdin}

    def command(**kw: Any) -> None:
        arguments = {n: kw[n] for n in names if kw.get(n) is not None}
        for n in numbers & arguments.keys():
            arguments[n] = parse_number(arguments[n])
        for n in stdin & arguments.keys():
            if arguments[n] == "-":  # `nxm add -`: the body from a pipe or a heredoc
                arguments[n] = sys.stdin.read()
        given = {k: kw[k] for k in ("now", "actor", "workspace")}
        run_op(op, arguments, as_json=kw["json_"], human=human, **given)

    # A read still takes --now and --actor (a script's, the tool's), but does not offer them.
    now, actor = (NowOpt, ActorOpt) if op.writes else (_HiddenNow, _HiddenActor)
    seam = [
        inspect.Parameter(name, KEYWORD, annotation=kind, default=default)
        for name, kind, default in (
            ("json_", JsonOpt, False), ("now", now, None), ("actor", actor, None),
            ("workspace", WorkspaceOpt, None),
        )
    ]  # fmt: skip
    taken = frozenset(p.flag for p in op.params)  # --team-ids must not shadow --team-id
    params = [_cli_param(p, taken) for p in op.params] + seam
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__name__ = op.verb[-1].replace("-", "_")
    command.__doc__ = help_for(op)
    return command


def help_for(op: Operation) -> str:
    """A verb's --help text: the summary, the MCP tool it mirrors, an example."""
    text = f"{op.summary}\n\nMCP tool: {op.tool}."
    if op.example:
        text += f"\n\nExample:\n\n    {op.example}"
    return text


def _print_version(ctx: typer.Context, value: bool) -> None:
    if value:
        from nxs import release

        typer.echo(f"{ctx.find_root().info_name} {release('unknown')}")
        raise typer.Exit(0)


_VERSION = typer.Option(
    "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
)
VersionOpt = Annotated[bool, _VERSION]


def _program_options(version: VersionOpt = False) -> None:
    """The options of the program itself (`standard_options`)."""


def standard_options(app: typer.Typer) -> None:
    """``-h`` beside ``--help`` on every verb, and ``--version`` on the program."""
    settings = app.info.context_settings or {}
    app.info.context_settings = {**settings, "help_option_names": ["-h", "--help"]}
    app.callback()(_program_options)


def sub_app(
    app: typer.Typer, path: tuple[str, ...], groups: dict[tuple[str, ...], typer.Typer]
) -> typer.Typer:
    """The Typer that holds verbs under ``path`` (created on first use)."""
    if not path:
        return app
    if path not in groups:
        parent = sub_app(app, path[:-1], groups)
        groups[path] = typer.Typer(no_args_is_help=True, help="")  # `register` names its verbs
        parent.add_typer(groups[path], name=path[-1])
    return groups[path]


def group_verb(group: typer.Typer, op: Operation, cmd: Callable[..., None]) -> None:
    """Make ``cmd`` the group's own verb, run when no sub-command follows (options only)."""
    sig = inspect.signature(cmd)
    ctx_param = inspect.Parameter(
        "typer_ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )

    def callback(typer_ctx: typer.Context, **kw: Any) -> None:
        if typer_ctx.invoked_subcommand is None:
            cmd(**kw)

    params = [ctx_param, *sig.parameters.values()]
    callback.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in params}
    group.callback(invoke_without_command=True, no_args_is_help=False, help=help_for(op))(callback)


def register(
    app: typer.Typer, ops: list[Operation], human: Humanizer | None = None,
    groups: dict[tuple[str, ...], typer.Typer] | None = None,
) -> None:  # fmt: skip
    """Add one verb per operation to ``app`` (nested verbs get sub-apps)."""
    groups = {} if groups is None else groups
    parents = {op.verb[:i] for op in ops for i in range(1, len(op.verb))}
    for op in ops:
        VERBS[op.command] = op
        for alias in op.aliases:
            VERBS[" ".join((op.cli, *op.verb[:-1], alias))] = op
        cmd = make_command(op, human)
        if op.verb in parents or op.verb in groups:  # `nxm facts` beside `nxm facts update`
            group_verb(sub_app(app, op.verb, groups), op, cmd)
            continue
        target = sub_app(app, op.verb[:-1], groups)
        target.command(op.verb[-1])(cmd)
        for alias in op.aliases:  # listed beside it, e.g. `remember  Same as add.`
            target.command(alias, short_help=f"Same as {op.verb[-1]}.")(cmd)
    for path, group in groups.items():
        if group.info.help == "" and path not in parents & {op.verb for op in ops}:
            verbs = ", ".join(op.verb[-1] for op in ops if op.verb[:-1] == path)
            group.info.help = f"{' '.join(path).capitalize()}: {verbs}."


def unwrap(text: str | None) -> str | None:
    """A docstring's paragraphs each on one line (Typer keeps the line breaks of every one but
    the first, which then break mid-sentence at 80 columns); indented ones (examples) stay."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith(" ") else p.replace("\n", " ") for p in paragraphs)


def defer_required(command: Any, path: str) -> None:
    """Let a derived verb's missing positional reach `validate` (help still marks it required),
    which names the first missing one after reading the others, as the tool does; and tidy
    every verb's help: paragraphs `unwrap`ped, flags without a ``<bool>`` type."""
    command.help = unwrap(command.help)
    for param in command.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    if path in VERBS:
        for param in command.params:
            if param.param_type_name == "argument":
                param.value_is_missing = lambda value: False
            _plain(param)
    made = command.get_help_option  # its --help, made on first use with the call's names

    def help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            _plain(option)  # a flag too
            option.metavar = ""
        return option

    command.get_help_option = help_option
    for name, sub in (getattr(command, "commands", None) or {}).items():
        defer_required(sub, f"{path} {name}")


def _plain(param: Any) -> None:
    """Let a derived verb's words through as the strings (lists, flags) they are: Typer would
    import pydantic and build an adapter per option, and `validate` checks them anyway."""
    from typer._coercion import RuntimeParam

    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if kind not in (str, bool, list[str]) or not hasattr(param, "_runtime_param"):
        return

    class Plain(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            return list(value) if kind == list[str] else value

    param._runtime_param = Plain(param.type_descriptor.parameter_info, kind)


def _command_path(command: Any, prog: str, argv: tuple[str, ...] | list[str]) -> str:
    """The command the leading words of ``argv`` name (for errors raised without a context)."""
    path = [prog]
    for word in argv:
        command = (getattr(command, "commands", None) or {}).get(word)
        if command is None:
            break
        path.append(word)
    return " ".join(path)


def usage_error(exc: Any, prog: str, command: Any, argv: list[str], as_json: bool) -> NxsError:
    """A refusal of the CLI's own parser, worded as the operation's refusal where one exists;
    an unknown option, for a person, in the verb's words with its closest flag."""
    from typer._click import exceptions as click_exc

    path = exc.ctx.command_path if exc.ctx is not None else _command_path(command, prog, argv)
    op = VERBS.get(path)
    if op is None or not isinstance(exc, click_exc.NoSuchOption):
        return ValidationError(exc.format_message(), suggestion=f"see `{path} --help`")
    if as_json:  # the tool's refusal byte for byte
        return unknown_parameter(op, exc.option_name.lstrip("-").replace("-", "_"))
    import difflib

    flags = [o[2:] for p in exc.ctx.command.params if not getattr(p, "hidden", False)
             for o in p.opts if o.startswith("--")] if exc.ctx else []  # fmt: skip
    close = [
        f"did you mean --{m}? " for m in difflib.get_close_matches(exc.option_name[2:], flags, 1)
    ]
    return ValidationError(
        f"unknown option {exc.option_name} for {path}",
        suggestion=f"{''.join(close)}see `{path} --help`",
    )


def _command(app: typer.Typer, argv: list[str]) -> Any:
    """The click command for ``argv``, with only the verb (or group) its first word names:
    Typer would build every verb's parser. Help, a typo or no verb get the whole app."""
    from typer.main import get_command, get_command_name, get_group

    word = argv[0] if argv and not argv[0].startswith("-") else None
    if word is None and not app._add_completion and set(argv) <= {"-h", "--help"}:
        return get_command(_listing(app))  # the program's help lists verbs, not their options
    if word is None or app._add_completion:
        return get_command(app)
    commands = [
        c for c in app.registered_commands
        if (c.name or get_command_name(c.callback.__name__)) == word  # type: ignore[union-attr]
    ]  # fmt: skip
    groups = [g for g in app.registered_groups if g.name == word]
    if not commands and not groups:
        return get_command(app)
    pruned = copy.copy(app)
    pruned.registered_commands, pruned.registered_groups = commands, groups
    return get_group(pruned)  # a group even with one verb, as the whole app is


def _listing(app: typer.Typer) -> typer.Typer:
    """A copy of ``app`` whose verbs keep their names and help but take no parameters (all the
    program's help shows of them, without building each one's parameters)."""
    from typer.main import get_command_name

    def listed(info: Any) -> Any:
        stub = copy.copy(info)
        stub.name = info.name or get_command_name(info.callback.__name__)
        stub.help = info.help if info.help is not None else inspect.getdoc(info.callback)
        stub.callback = _no_parameters
        return stub

    def group(info: Any) -> Any:
        stub = copy.copy(info)
        stub.typer_instance = _listing(info.typer_instance)
        return stub

    out = copy.copy(app)
    out.registered_commands = [listed(c) for c in app.registered_commands]
    out.registered_groups = [group(g) for g in app.registered_groups]
    return out


def _no_parameters() -> None:
    """Stands for a verb in the program's help; never called."""


def _defer_help_extras() -> None:
    """Typer's help formatter imports rich's Markdown and Traceback at its top, which neither
    our help nor a refusal uses: they are imported when first used (`nxs.deferred`)."""
    from nxs.deferred import stand_in

    if "typer.rich_utils" not in sys.modules:
        stand_in("rich.markdown", ["Markdown"])
        stand_in("rich.traceback", ["Traceback"])


def main(app: typer.Typer, prog: str) -> None:
    """Run a Typer app; usage errors under --json print the validation envelope."""
    # OpenBLAS's idle threads spin after each call, taking the CPU a search's embedding and
    # full-text queries need (docs/benchmarks.md); read when numpy loads it, later.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    from nxs import progress

    progress.enable()  # long work shows a bar on a terminal's stderr
    # typer >= 0.20 vendors click as typer._click: its commands raise these, not click's.
    from typer._click import exceptions as click_exc

    as_json = "--json" in sys.argv[1:]
    _defer_help_extras()
    command = _command(app, sys.argv[1:])
    defer_required(command, prog)
    try:
        code = command.main(args=sys.argv[1:], prog_name=prog, standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        typer.echo(exc.format_message())  # the help text (rich's formatter printed it already)
        code = 0
    except click_exc.UsageError as exc:
        err = usage_error(exc, prog, command, sys.argv[1:], as_json)
        if as_json:
            emit(render(err))
        elif exc.ctx is None or exc.ctx.command_path in VERBS or err.message != exc.message:
            fail(err, False)  # ours, or click's words with a key taken out
        else:
            exc.show()
        code = 2
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        code = 130
    except click_exc.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except Exception as exc:  # noqa: BLE001 - no input may end in a traceback
        code = fail(internal(exc), as_json).exit_code
    sys.exit(code if isinstance(code, int) else 0)
