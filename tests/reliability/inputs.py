"""Hypothesis strategies for bad input: every operation's parameters, right and wrong.

`calls()` draws one tool call: an operation of the table, then for each declared parameter
either nothing, a plausible value or a wrong one (wrong type, out of range, too long, control
characters, lone surrogates, path-like text, keys that do not exist), sometimes an unknown
parameter, and the seam parameters (``now``, ``actor``, ``workspace``) right or wrong.
`argv()` turns a call into a CLI argument list with extra junk (unknown options, stray
arguments, option syntax in values).
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from nxs.ops import Operation, Param
from nxs.registry import operations
from tests.parity.state import KEYS

OPS: list[Operation] = operations()

MISSING_KEYS = ["ffffffffffffffff", "0000", "zz", "k" * 64, "-1", "*", "%", "' OR '1'='1"]
PATHS = [
    "..", "../..", "/", "/etc/passwd", "~", "~root", "~no_such_user_zz/x", ".nxs", "./.nxs",
    ".nxs/config.toml", "a/../../b", "/dev/null", "/proc/self/fd/0", "s3://bucket/x",
    "file:///etc", "C:\\Windows", "%2e%2e%2f", "\\\\server\\share", "x" * 5000,
    "/tmp/" + "a/" * 3000, "\x00", "/tmp/\x00x", "\ud800", "/tmp/\udcff", "-", "--json", " ",
]  # fmt: skip
NASTY = [
    "", " ", "\x00", "a\x00b", "\x1b[2J\x1b[31mred", "line\nbreak", "\r\n", "\u2028", "\u202e",
    "\ufeff", "\ud800", "x\udcffy", "%s%n", "{0}", "'; DROP TABLE memories; --", "key IN ('a')",
    "\\", '"', "null", "NaN", "é" * 201, "🙂" * 65, "\t\v\f", "-- --json", "--help",
]  # fmt: skip
HUGE = ["x" * 300_000, "y" * 4001, "z" * 201, "w" * 65]
NOWS = ["2026-05-29T10:00:00Z", "yesterday", "", "9999-99-99", "2026-05-29T10:00:00+25:00",
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "\ud800", "1e308"]  # fmt: skip

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
any_char = st.one_of(st.characters(), surrogates, st.sampled_from("\x00\x1b\n\r\u2028"))
junk_text = st.one_of(
    st.sampled_from(NASTY + HUGE + PATHS + MISSING_KEYS),
    st.text(any_char, max_size=80),
)
wrong_type = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.lists(st.lists(st.text(max_size=3), max_size=2), max_size=2),
)


def plausible(p: Param) -> st.SearchStrategy[Any]:
    """A value the declaration accepts (the state may still refuse it)."""
    if p.name in ("key", "memory_id"):
        return st.sampled_from(KEYS + [k[:5] for k in KEYS] + MISSING_KEYS[:2])
    if p.choices:
        return st.sampled_from(list(p.choices) + [c.lower() for c in p.choices])
    if p.type == "str":
        return st.text(st.characters(codec="utf-8"), min_size=1, max_size=min(p.max_len or 60, 60))
    if p.type == "int":
        low = int(p.min) if p.min is not None else -5
        high = int(p.max) if p.max is not None else 1000
        return st.integers(min_value=low, max_value=min(high, low + 1000))
    if p.type == "float":
        low = p.min if p.min is not None else -5.0
        high = p.max if p.max is not None else 1000.0
        return st.floats(min_value=low, max_value=high)
    if p.type == "bool":
        return st.booleans()
    if p.type == "list":
        return st.lists(st.text(st.characters(codec="utf-8"), max_size=20), max_size=3)
    return st.dictionaries(
        st.text(st.characters(codec="utf-8"), max_size=8),
        st.one_of(st.none(), st.integers(), st.text(max_size=10), st.lists(st.integers())),
        max_size=3,
    )


def wrong(p: Param) -> st.SearchStrategy[Any]:
    """A value the declaration should refuse, or text built to break what comes after."""
    options = [wrong_type, junk_text]
    if p.type in ("int", "float"):
        edges = [v for v in (p.min, p.max) if v is not None]
        options.append(st.sampled_from([e - 1 for e in edges] + [e + 1 for e in edges] or [0]))
        options.append(st.sampled_from(["12", "1.5", "", "inf"]))
    if p.type == "list":
        options.append(st.lists(junk_text, max_size=60))
    if p.type == "object":
        options.append(st.sampled_from(["{", "[]", '"x"', "null", '{"a": NaN}', "{}" * 3]))
        options.append(st.dictionaries(junk_text, junk_text, max_size=3))
    return st.one_of(*options)


def nasty(p: Param) -> st.SearchStrategy[Any]:
    """A value of the declared type built to break what comes after validation."""
    if p.type == "str" and not p.choices:
        text = st.one_of(st.sampled_from(NASTY + PATHS + MISSING_KEYS), st.text(any_char))
        if p.max_len:
            text = text.map(lambda t: t[: p.max_len]) | st.just("n" * p.max_len)
        return text
    if p.type == "list":
        return st.lists(st.sampled_from(NASTY + PATHS) | st.text(any_char), max_size=5)
    if p.type == "object":
        return st.dictionaries(junk_text, junk_text | wrong_type, max_size=3)
    return wrong(p)


MODES = ["clean", "one-wrong", "one-wrong", "nasty", "nasty", "chaos"]


@st.composite
def calls(draw: Any, ops: list[Operation] | None = None, json_only: bool = False) -> Any:
    """(operation, arguments as the MCP tool gets them).

    Modes: ``clean`` (plausible values), ``one-wrong`` (one parameter wrong), ``nasty`` (right
    types, hostile text: reaches the handlers), ``chaos`` (each parameter anything).
    """
    op = draw(st.sampled_from(ops or OPS))
    mode = draw(st.sampled_from(MODES))
    args: dict[str, Any] = {}
    for p in op.params:
        if mode == "chaos":
            how = draw(st.sampled_from(["omit", "plausible", "wrong", "nasty"]))
        else:
            how = "plausible" if p.required or draw(st.booleans()) else "omit"
            if how == "plausible" and mode == "nasty" and draw(st.booleans()):
                how = "nasty"
        if how != "omit":
            args[p.name] = draw({"plausible": plausible, "wrong": wrong, "nasty": nasty}[how](p))
    if mode == "one-wrong":
        p = draw(st.sampled_from(op.params)) if op.params else None
        if p is not None:
            args[p.name] = draw(wrong(p))
    if mode == "chaos" or draw(st.integers(0, 9)) == 0:
        if draw(st.integers(0, 4)) == 0:
            args[draw(st.sampled_from(["colour", "keys", "", "__proto__", "now "]))] = "x"
        if draw(st.booleans()):
            args["now"] = draw(st.one_of(st.sampled_from(NOWS), wrong_type))
        if draw(st.booleans()):
            args["actor"] = draw(st.one_of(junk_text, wrong_type))
        if draw(st.booleans()):
            args["workspace"] = draw(st.one_of(st.sampled_from(PATHS), wrong_type))
    if json_only:  # what a JSON-RPC client can send: no lone surrogates, finite numbers
        args = _jsonable(args)
    return op, args


def _jsonable(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, float) and not math.isfinite(value):
        return 0.5
    if isinstance(value, dict):
        return {_jsonable(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


JUNK_ARGS = ["--bogus", "-x", "--json=1", "--", "stray", "--page", "--help-me", "-w", "--now"]


@st.composite
def argv(draw: Any) -> tuple[Operation, list[str]]:
    """A CLI argument list for one verb, with wrong values and junk."""
    op, args = draw(calls())
    out = list(op.verb)
    for p in op.params:
        if p.name not in args:
            continue
        value = args[p.name]
        text = value if isinstance(value, str) else str(value)
        if p.positional:
            out.append(text)
        elif p.type == "bool":
            out.append(p.flag if value is True else f"--no-{p.flag[2:]}")
        elif p.type == "list" and isinstance(value, list):
            for item in value:
                out += [p.flag, item if isinstance(item, str) else str(item)]
        else:
            out += [p.flag, text]
    for name in ("now", "actor", "workspace"):
        if name in args:
            value = args[name]
            out += [f"--{name}", value if isinstance(value, str) else str(value)]
    if draw(st.integers(0, 4)) == 0:
        junk = draw(st.lists(st.sampled_from(JUNK_ARGS) | junk_text, min_size=1, max_size=3))
        at = draw(st.integers(0, len(out)))
        out[at:at] = junk
    out = [a.replace("\x00", "") for a in out]  # argv cannot carry NUL
    out.append("--json")
    return op, out


__all__ = ["NASTY", "OPS", "PATHS", "argv", "calls", "nasty", "plausible", "wrong"]
