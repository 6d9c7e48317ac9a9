"""JSON host configs edited in place: one member set or removed, every other byte kept.

Some hosts' files are JSONC (comments, trailing commas), which a JSON encoder would drop:
`parse` keeps each value's place in the text, so `set_member` and `remove_member` change only
the member they touch, indented like the file. ``strict=True`` refuses what is not plain JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<line>//[^\n]*)|(?P<block>/\*.*?\*/)|(?P<str>"(?:[^"\\\x00-\x1f]|\\.)*")"""
    r"""|(?P<num>-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<lit>true|false|null)"""
    r"""|(?P<punct>[{}\[\]:,])""",
    re.DOTALL,
)


class JsoncError(ValueError):
    """Text that is not JSON (or JSONC); ``line`` and ``column`` are 1-based."""

    def __init__(self, text: str, pos: int, message: str) -> None:
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"line {self.line}, column {self.column}: {message}")


@dataclass
class Node:
    """A value and where it is: ``start``/``end`` offsets; objects keep their members."""

    value: Any
    start: int
    end: int
    members: list[Member] = field(default_factory=list)  # objects only, in file order
    close: int = 0  # objects: the offset of the closing brace


@dataclass
class Member:
    key: str
    start: int  # the key's opening quote
    node: Node
    comma: int | None = None  # the offset of the comma after it, if any


class _Parser:
    def __init__(self, text: str, strict: bool) -> None:
        self.text, self.strict = text, strict
        self.tokens: list[tuple[str, int, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise JsoncError(text, pos, f"unexpected {text[pos]!r}")
            kind = m.lastgroup or ""
            if kind in ("line", "block") and strict:
                raise JsoncError(text, pos, "comments are not JSON")
            if kind in ("str", "num", "lit", "punct"):
                self.tokens.append((kind if kind != "punct" else m.group(), m.start(), m.end()))
            pos = m.end()
        self.tokens.append(("end", len(text), len(text)))
        self.i = 0

    def peek(self) -> tuple[str, int, int]:
        return self.tokens[min(self.i, len(self.tokens) - 1)]

    def take(self, kind: str | None = None) -> tuple[str, int, int]:
        token = self.peek()
        if kind is not None and token[0] != kind:
            found = "the end" if token[0] == "end" else repr(self.text[token[1] : token[2]])
            raise JsoncError(self.text, token[1], f"expected {kind!r}, found {found}")
        self.i += 1
        return token

    def value(self) -> Node:
        kind, start, end = self.peek()
        if kind == "{":
            return self.obj()
        if kind == "[":
            return self.arr()
        if kind in ("str", "num", "lit"):
            self.take()
            return Node(json.loads(self.text[start:end]), start, end)
        raise JsoncError(self.text, start, "expected a value")

    def obj(self) -> Node:
        _, start, _ = self.take("{")
        node = Node({}, start, start)
        while self.peek()[0] != "}":
            _, key_start, key_end = self.take("str")
            self.take(":")
            member = Member(json.loads(self.text[key_start:key_end]), key_start, self.value())
            node.members.append(member)
            node.value[member.key] = member.node.value
            if self.peek()[0] != ",":
                break
            member.comma = self.take()[1]
            if self.strict and self.peek()[0] == "}":
                raise JsoncError(self.text, member.comma, "a trailing comma is not JSON")
        _, close, end = self.take("}")
        node.end, node.close = end, close
        return node

    def arr(self) -> Node:
        _, start, _ = self.take("[")
        items: list[Any] = []
        while self.peek()[0] != "]":
            items.append(self.value().value)
            if self.peek()[0] != ",":
                break
            comma = self.take()[1]
            if self.strict and self.peek()[0] == "]":
                raise JsoncError(self.text, comma, "a trailing comma is not JSON")
        _, _, end = self.take("]")
        return Node(items, start, end)


def parse(text: str, *, strict: bool = False) -> Node:
    """The document's root node (its ``value`` is the plain Python value).

    Raises:
        JsoncError: the text is not JSON (JSONC unless ``strict``).
    """
    parser = _Parser(text, strict)
    root = parser.value()
    kind, start, _ = parser.peek()
    if kind != "end":
        raise JsoncError(text, start, "unexpected text after the end of the document")
    return root


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]


def _unit(text: str) -> str:
    """The file's indent step: its first indented line's whitespace, else two spaces."""
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else "  "


def _dump(value: Any, indent: str, unit: str) -> str:
    lines = json.dumps(value, indent=unit, ensure_ascii=False).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def _find(root: Node, path: tuple[str, ...]) -> Node | None:
    node: Node | None = root
    for key in path:
        member = next((m for m in node.members if m.key == key), None) if node else None
        node = member.node if member else None
    return node


def set_member(text: str, path: tuple[str, ...], key: str, value: Any) -> str:
    """The text with ``path[...][key] = value``; objects on the path are made when missing.

    Raises:
        JsoncError: the text does not parse, or a value on the path is not an object.
    """
    if not text.strip():
        return json.dumps(_nest(path, key, value), indent=2, ensure_ascii=False) + "\n"
    root = parse(text)
    unit = _unit(text)
    node, depth = root, 0
    for name in path:  # walk as far as the path exists
        if not isinstance(node.value, dict):
            raise JsoncError(text, node.start, f"{name!r} is not inside an object")
        member = next((m for m in node.members if m.key == name), None)
        if member is None:
            break
        node, depth = member.node, depth + 1
    if not isinstance(node.value, dict):
        raise JsoncError(text, node.start, f"{'.'.join(path[:depth])} is not an object")
    rest = path[depth:]
    new_key, new_value = (rest[0], _nest(rest[1:], key, value)) if rest else (key, value)
    existing = next((m for m in node.members if m.key == new_key), None)
    if existing is not None:
        indent = _line_indent(text, existing.start)
        dumped = _dump(new_value, indent, unit)
        return text[: existing.node.start] + dumped + text[existing.node.end :]
    if node.members:
        last = node.members[-1]
        indent = _line_indent(text, last.start)
        entry = f"{json.dumps(new_key, ensure_ascii=False)}: {_dump(new_value, indent, unit)}"
        # the new member gets a line of its own after the last one's (and its line comment)
        after = last.comma + 1 if last.comma is not None else last.node.end
        eol = _end_of_line(text, after)
        # keep the file's trailing-comma style
        comma, tail = ("", ",") if last.comma is not None else (",", "")
        return (
            text[: last.node.end] + comma + text[last.node.end : eol]
            + "\n" + indent + entry + tail + text[eol:]
        )  # fmt: skip
    outer = _line_indent(text, node.start)
    indent = outer + unit
    entry = f"{json.dumps(new_key, ensure_ascii=False)}: {_dump(new_value, indent, unit)}"
    inside = text[node.start + 1 : node.close].rstrip(" \t")
    return f"{text[: node.start + 1]}{inside}\n{indent}{entry}\n{outer}{text[node.close :]}"


def _end_of_line(text: str, pos: int) -> int:
    """``pos`` moved past blanks and a line comment to the end of its line, if only they follow."""
    m = re.match(r"[ \t]*(//[^\n]*)?(?=\n|$)", text[pos:])
    return pos + m.end() if m else pos


def _nest(path: tuple[str, ...], key: str, value: Any) -> Any:
    nested: Any = {key: value}
    for name in reversed(path):
        nested = {name: nested}
    return nested


def remove_member(text: str, path: tuple[str, ...], key: str) -> str | None:
    """The text without ``path[...][key]`` (its line too, when it had one); None if absent.

    Raises:
        JsoncError: the text does not parse.
    """
    if not text.strip():
        return None
    root = parse(text)
    node = _find(root, path)
    if node is None or not isinstance(node.value, dict):
        return None
    index = next((i for i, m in enumerate(node.members) if m.key == key), None)
    if index is None:
        return None
    member = node.members[index]
    start = member.start
    end = member.comma + 1 if member.comma is not None else member.node.end
    line_start = text.rfind("\n", 0, start) + 1
    if not text[line_start:start].strip():  # the member's lines go with it
        after = re.match(r"[ \t]*(\n|$)", text[end:])
        if after is not None:
            start, end = line_start, end + after.end()
    text = text[:start] + text[end:]
    previous = node.members[index - 1] if index else None
    if member.comma is None and previous is not None and previous.comma is not None:
        text = text[: previous.comma] + text[previous.comma + 1 :]  # it is last now
    return text


__all__ = ["JsoncError", "Member", "Node", "parse", "remove_member", "set_member"]
