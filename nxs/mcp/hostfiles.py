"""Host config files: read one server entry, write it back in place, keep a backup.

JSON(C) files are edited with `nxs.mcp.jsonc`, so only the member set changes and comments
survive; Codex's TOML is edited as text, replacing or removing the ``[mcp_servers.<name>]``
table and its sub-tables. A file that does not parse is refused, and nothing is written.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

from nxs.errors import ValidationError
from nxs.mcp import jsonc
from nxs.paths import atomic_write

FIX = "fix the file by hand (nothing was written), then run the command again"


def _bad(path: Path, problem: str) -> ValidationError:
    return ValidationError(f"{path} {problem}", suggestion=FIX, code="BAD_HOST_CONFIG")


def read_text(path: Path) -> str:
    """A config file's text ('' when it does not exist).

    Raises:
        ValidationError: it exists but cannot be read as UTF-8 text.
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(
            f"cannot read {path}: {exc}", suggestion="fix or move the file, then run again"
        ) from None


def parse_json(path: Path, text: str, *, strict: bool) -> dict[str, Any]:
    """The document's object ({} for an empty file).

    Raises:
        ValidationError: not JSON (JSONC unless ``strict``), or not an object.
    """
    if not text.strip():
        return {}
    try:
        data = jsonc.parse(text, strict=strict).value
    except jsonc.JsoncError as exc:
        kind = "JSON" if strict else "JSON (comments and trailing commas allowed)"
        raise _bad(path, f"is not valid {kind} ({exc})") from None
    if not isinstance(data, dict):
        raise _bad(path, "does not hold a JSON object")
    return data


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """The TOML document as a dict.

    Raises:
        ValidationError: not TOML.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"is not valid TOML ({exc})") from None


def json_set(path: Path, text: str, keys: tuple[str, ...], name: str, value: Any) -> str:
    """The JSON(C) text with ``keys…[name] = value``, every other byte kept.

    Raises:
        ValidationError: a value on the way is not an object.
    """
    try:
        return jsonc.set_member(text, keys, name, value)
    except jsonc.JsoncError as exc:
        raise _bad(path, f"cannot take the entry ({exc})") from None


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")


def _dotted(header: str) -> list[str]:
    """``mcp_servers."nxs".env`` as its parts (quoted parts unquoted)."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', header)
    return [a or b or c for a, b, c in parts]


def _block(lines: list[str], table: list[str]) -> tuple[int, int] | None:
    """The line span of ``[table]`` and its sub-tables, or None."""
    start = None
    for i, line in enumerate(lines):
        if line.lstrip().startswith("[["):  # an array of tables ends any table
            if start is not None:
                return start, i
            continue
        m = _HEADER.match(line)
        if m is None:
            continue
        parts = _dotted(m.group(1))
        if start is None:
            if parts == table:
                start = i
        elif parts[: len(table)] != table:
            return start, i
    return (start, len(lines)) if start is not None else None


def _toml_value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v, where) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_key(k)} = {_toml_value(v, where)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise ValidationError(
        f"cannot keep {where} (a {type(value).__name__}) when rewriting the entry",
        suggestion="edit the entry by hand, or remove that setting and run again",
        code="BAD_HOST_CONFIG",
    )


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def toml_table(table: list[str], values: dict[str, Any]) -> str:
    """``[a.b]`` and its keys as TOML text (nested tables inline)."""
    body = "".join(
        f"{_key(k)} = {_toml_value(v, '.'.join([*table, k]))}\n" for k, v in values.items()
    )
    return f"[{'.'.join(_key(p) for p in table)}]\n{body}"


def toml_set(path: Path, text: str, table: list[str], values: dict[str, Any]) -> str:
    """The TOML text with ``[table]`` (and its sub-tables) replaced by ``values``.

    Raises:
        ValidationError: the table is defined another way (dotted keys, inline) than a header.
    """
    lines = text.splitlines(keepends=True)
    span = _block(lines, table)
    new = toml_table(table, values)
    if span is None:
        if _get(parse_toml(path, text), table) is not None:
            raise _bad(path, f"defines {'.'.join(table)} without a [{'.'.join(table)}] header")
        return new if not text.strip() else text.rstrip("\n") + "\n\n" + new
    start, end = span
    keep_blank = end < len(lines) and not lines[end - 1].strip()
    return "".join(lines[:start]) + new + ("\n" if keep_blank else "") + "".join(lines[end:])


def toml_remove(text: str, table: list[str]) -> str | None:
    """The TOML text without ``[table]`` and its sub-tables; None when it has none."""
    lines = text.splitlines(keepends=True)
    span = _block(lines, table)
    if span is None:
        return None
    start, end = span
    while start > 0 and not lines[start - 1].strip() and (end >= len(lines)):
        start -= 1  # the blank lines before a last table go with it
    return "".join(lines[:start]) + "".join(lines[end:])


def _get(data: dict[str, Any], table: list[str]) -> Any:
    node: Any = data
    for part in table:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def backup(path: Path) -> Path:
    """Copy the file to ``FILE.bak`` (then ``.bak.1``, …); return the copy's path."""
    target = path.with_name(path.name + ".bak")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.bak.{n}")
        n += 1
    shutil.copy2(path, target)
    return target


def write(path: Path, text: str) -> None:
    """Replace the file atomically, keeping its permissions (host files may be private)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    atomic_write(path, text.encode(), mode=mode)


__all__ = [
    "backup", "json_set", "parse_json", "parse_toml", "read_text", "toml_remove",
    "toml_set", "toml_table", "write",
]  # fmt: skip
