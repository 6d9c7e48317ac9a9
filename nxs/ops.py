"""The operation table: every operation declared once, exposed by both seams.

The Typer verb (`nxs.clitool`) and the MCP tool (`nxs.mcp.server`) are both derived from an
`Operation`; `validate` is the one place arguments are checked, so a seam cannot accept what
the other refuses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from nxs.errors import ValidationError

# Python types a Param may carry, and the JSON Schema type each becomes.
_JSON_TYPES = {
    "str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array",
    "object": "object",
}  # fmt: skip


@dataclass(frozen=True)
class Param:
    """One declared parameter of an operation."""

    name: str
    type: str = "str"  # str | int | float | bool | list (of strings) | object (JSON object)
    help: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    max_len: int | None = None  # characters for str, items for list
    positional: bool = False  # a CLI argument rather than an --option
    aliases: tuple[str, ...] = ()  # other names accepted on the MCP seam (seed spellings)
    clamp: bool = False  # out-of-range numbers are clamped instead of refused
    list_aliases: bool = False  # the aliases appear in the tool's input schema too
    stdin: bool = False  # on the CLI, the value "-" is read from standard input

    @property
    def flag(self) -> str:
        """The CLI option name, e.g. ``--user-id``."""
        return "--" + self.name.replace("_", "-")

    def schema(self) -> dict[str, Any]:
        """The JSON Schema fragment for this parameter. Length limits are left out: they guard
        the store (a refusal names them), a model never nears them, and each costs tools/list
        bytes on every tool."""
        out: dict[str, Any] = {"type": _JSON_TYPES[self.type]}
        if self.help:
            out["description"] = self.help
        if self.type == "list":
            out["items"] = {"type": "string"}
        if self.choices:
            out["enum"] = list(self.choices)
        if self.type in ("int", "float") and not self.clamp:
            if self.min is not None:
                out["minimum"] = self.min
            if self.max is not None:
                out["maximum"] = self.max
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Operation:
    """One operation: a verb on the CLI, a tool on the MCP server, one handler."""

    name: str  # the service word, e.g. "add"
    tool: str  # the MCP tool, e.g. "memory_add"
    cli: str  # "nxm" or "nxs"
    verb: tuple[str, ...]  # the CLI path under that program, e.g. ("graph", "search")
    module: str  # the workspace module that must be active: "memory" | "linear"
    group: str  # the MCP tool group: core | session | knowledge | insights | linear
    summary: str  # one line: what it does and when a model should call it
    handler: Callable[..., Any]  # handler(ctx, **arguments) -> JSON-able result
    params: tuple[Param, ...] = ()
    writes: bool = False
    example: str = ""
    aliases: tuple[str, ...] = ()  # extra CLI verb names, e.g. ("remember",)
    # The seam parameters its tool schema lists. Every tool accepts `now` and `actor` too,
    # unlisted: a script's knobs, not a model's, each listing cost ~80 bytes of every tools/list.
    seam: tuple[str, ...] = ("workspace",)
    when: str = ""  # when a model calls it, as the session protocol says (`nxs.protocol`)

    @property
    def description(self) -> str:
        """The MCP tool's description: the summary, then when to call it."""
        return f"{self.summary} Call it {self.when}" if self.when else self.summary

    @property
    def seam_params(self) -> tuple[Param, ...]:
        """The seam parameters this tool's schema lists."""
        return tuple(p for p in SEAM_PARAMS if p.name in self.seam)

    @property
    def command(self) -> str:
        """The full CLI command, e.g. ``nxm graph search``."""
        return " ".join((self.cli, *self.verb))

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def input_schema(self, seam: bool = True) -> dict[str, Any]:
        """The MCP tool's JSON input schema, with its seam parameters unless ``seam`` is false."""
        props = {p.name: p.schema() for p in self.params}
        for p in self.params:
            if p.list_aliases:
                for alias in p.aliases:
                    props[alias] = {**p.schema(), "description": f"Alias of {p.name}."}
        if seam:
            props.update({p.name: p.schema() for p in self.seam_params})
        required = [p.name for p in self.params if p.required]
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        return schema


# The seam parameters (seed 003), --now/--actor/--workspace on every verb and tool.
SEAM_PARAMS = (
    Param("now", help="Time to stamp (ISO-8601); default: now."),
    Param("actor", help="Author to record; default: the server's."),
    Param("workspace", help="Project root; default: the server's."),
)
SEAM_NAMES = frozenset(p.name for p in SEAM_PARAMS)


def _type_error(p: Param, expected: str, value: Any) -> ValidationError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return ValidationError(f"{p.name} must be {expected}, got {shown}")  # `validate` adds help


def _check_text(name: str, value: str) -> None:
    """Refuse text no store or answer can hold: NUL, or lone surrogates (not UTF-8)."""
    if "\x00" in value:
        raise ValidationError(f"{name} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            f"{name} is not valid UTF-8 text (it holds a lone surrogate)",
            suggestion="send UTF-8 text; in a shell, check the terminal's encoding",
        ) from None


def _coerce(p: Param, value: Any) -> Any:
    """Check one value against its declaration; return the value to pass on."""
    if p.type == "str":
        if not isinstance(value, str):
            raise _type_error(p, "a string", value)
        _check_text(p.name, value)
        if p.choices:
            match = next((c for c in p.choices if c.lower() == value.lower()), None)
            if match is None:
                choices = ", ".join(p.choices)
                raise ValidationError(f"{p.name} must be one of {choices}, got {value!r}")
            value = match
        if p.max_len is not None and len(value) > p.max_len:
            too_long = f"{p.name} is {len(value)} characters; at most {p.max_len} are allowed"
            raise ValidationError(too_long)
        return value
    if p.type == "bool":
        if not isinstance(value, bool):
            raise _type_error(p, "true or false", value)
        return value
    if p.type in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(p, "a number" if p.type == "float" else "an integer", value)
        if p.type == "int" and isinstance(value, float):
            if not value.is_integer():
                raise _type_error(p, "an integer", value)
            value = int(value)
        elif p.type == "float" and not math.isfinite(value):
            raise _type_error(p, "a finite number", value)
        low, high = p.min, p.max
        if p.clamp:
            if low is not None:
                value = max(value, type(value)(low))
            if high is not None:
                value = min(value, type(value)(high))
        elif (low is not None and value < low) or (high is not None and value > high):
            bounds = (
                f"from {_num(low)} to {_num(high)}" if high is not None else f"at least {_num(low)}"
            )
            raise ValidationError(f"{p.name} must be {bounds}, got {value}")
        return value
    if p.type == "list":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise _type_error(p, "a list of strings", value)
        if p.max_len is not None and len(value) > p.max_len:
            raise ValidationError(f"{p.name} has {len(value)} items; at most {p.max_len}")
        for v in value:
            _check_text(p.name, v)
        return list(value)
    if p.type == "object":
        if isinstance(value, str):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError as exc:
                raise ValidationError(
                    f"{p.name} is not valid JSON: {exc}",
                    suggestion='pass a JSON object, e.g. \'{"source": "review"}\'',
                ) from None
        if not isinstance(value, dict):
            raise _type_error(p, "a JSON object", value)
        try:
            orjson.dumps(value)
        except orjson.JSONEncodeError as exc:
            raise ValidationError(
                f"{p.name} cannot be stored as JSON: {exc}",
                suggestion="use string keys, UTF-8 text and integers within 64 bits",
            ) from None
        return value
    raise AssertionError(f"unknown param type {p.type}")  # a declaration bug, not input


def _num(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else str(x)


def unknown_parameter(op: Operation, name: str) -> ValidationError:
    """The refusal of a name the operation does not declare (both seams: `--colour`, ``colour``)."""
    known = ", ".join(sorted(x.name for x in op.params)) or "none"
    return ValidationError(
        f"unknown parameter {name!r} for {op.tool}", suggestion=f"parameters: {known}"
    )


_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_number(text: str) -> Any:
    """A CLI word as the JSON number a tool call would carry, else the word unchanged (whatever
    the parameter's type, so `validate` refuses ``--page 2.5`` as it refuses ``2.5`` in a call)."""
    if _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than Python converts (4,300): no value could fit
            return text
    if _NUMBER.fullmatch(text):
        return float(text)
    return text


def validate(op: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    """Check arguments (``None``: not given; an unknown name is refused, never a silent no-op)
    against the declaration; return handler keyword arguments. Every refusal has a suggestion."""
    try:
        return _validate(op, arguments)
    except ValidationError as err:
        if not err.suggestion:
            err.suggestion = f"see `{op.command} --help`"
        raise


def _validate(op: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    by_name = {p.name: p for p in op.params}
    for p in op.params:
        for alias in p.aliases:
            by_name.setdefault(alias, p)
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if name in SEAM_NAMES:
            if isinstance(value, str):
                _check_text(name, value)
            continue
        p = by_name.get(name)
        if p is None:
            raise unknown_parameter(op, name)
        if value is None:
            continue
        if p.name in out:
            raise ValidationError(f"{p.name} was given twice (as {name!r})")
        out[p.name] = _coerce(p, value)
    for p in op.params:
        if p.name not in out:
            if p.required:
                raise ValidationError(f"{p.name} is required")  # `validate` adds the suggestion
            out[p.name] = p.default
    return out


__all__ = [
    "SEAM_NAMES", "SEAM_PARAMS", "Operation", "Param", "parse_number", "unknown_parameter",
    "validate",
]  # fmt: skip
