"""What a memory's text says about code, read without git: the definition of a named symbol, its
meaningful tokens, the values a memory states, and the refs its body names (`suggest`).

A ref ``path:NAME`` names a Python ``def``/``class`` (or ``NAME = …``), a Makefile target, or in
any other file the first line that defines NAME (``function NAME``, ``NAME:``, ``NAME =``…) with
the block under it (braces or indentation). Comments and layout are not meaning: two versions
of a definition are the same when their `tokens` are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_HASH = (".py", ".sh", ".bash", ".rb", ".pl", ".r", ".yml", ".yaml", ".toml", ".cfg", ".ini",
         ".mk", ".tf", ".conf", ".env", ".dockerfile")  # fmt: skip
_SLASH = (".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".c", ".h", ".cc", ".cpp", ".hpp",
          ".cs", ".kt", ".swift", ".scala", ".php", ".dart", ".proto")  # fmt: skip
_TOKEN = re.compile(r"\d+(?:\.\d+)?|\w+|[^\w\s]")
_KEYWORDS = ("function", "func", "fn", "def", "class", "struct", "interface", "type", "enum",
             "trait", "impl", "module", "const", "let", "var", "sub", "proc", "macro", "object")  # fmt: skip


def _make(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk")


def strip_comments(text: str, path: str) -> str:
    """``text`` without its comments (by the file's kind; unknown kinds: whole-line ones)."""
    low = path.lower()
    if low.endswith(_SLASH):
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        return re.sub(r"(?m)(^|[^:\"'])//.*$", r"\1", text)
    if low.endswith(_HASH) or _make(path) or low.rsplit("/", 1)[-1] == "dockerfile":
        return re.sub(r"(?m)(^|\s)#.*$", r"\1", text)
    return re.sub(r"(?m)^\s*(#|//).*$", "", text)


def tokens(text: str, path: str) -> list[str]:
    """The words, numbers and marks of code, comments and layout left out."""
    return _TOKEN.findall(strip_comments(text, path))


_LEXEME = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\d[\w.]*|\w+|[^\w\s]""")


def lexemes(text: str, path: str) -> list[str]:
    """Code as a formatter leaves its meaning: strings whole with one quote style, no trailing
    comma before a closing bracket, no statement-ending semicolon (prettier, black, gofmt)."""
    out: list[str] = []
    for t in _LEXEME.findall(strip_comments(text, path)):
        if t in ")]}" and out and out[-1] == ",":
            out.pop()
        out.append('"' + t[1:-1].replace('\\"', '"') + '"' if t[:1] in "'\"" else t)
    return [t for t in out if t != ";"]


def _literal(t: str) -> bool:
    return t[:1] == '"' or t[:1].isdigit()


def renamed(was: list[str], now: list[str]) -> bool:
    """Whether ``now`` is ``was`` with names renamed where each is used more than once (a
    local variable or parameter renamed throughout), nothing else changed."""
    if len(was) != len(now):
        return False
    pairs = {(a, b) for a, b in zip(was, now, strict=True) if a != b}
    if not pairs or any(_literal(a) or _literal(b) or not a[:1].isalpha() for a, b in pairs):
        return False
    olds, news = [a for a, _ in pairs], [b for _, b in pairs]
    one_to_one = len(set(olds)) == len(olds) == len(set(news))
    return one_to_one and all(was.count(a) > 1 and a not in now for a in olds)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], i: int) -> list[str]:
    """The definition starting at line ``i``: its head to where its brackets close (a signature
    over several lines), then to its closing brace, else to the end of its indented block."""
    depth = braces = 0
    end, braced = i, False
    while end < len(lines):
        line = lines[end]
        end += 1
        depth += sum(map(line.count, "({[")) - sum(map(line.count, ")}]"))
        braces += line.count("{") - line.count("}")
        braced = braced or braces > 0
        if depth <= 0:
            break
    if braced:
        return lines[i:end]
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > _indent(lines[i])):
        end += 1
    return lines[i:end]


def definition(text: str, symbol: str, path: str) -> str | None:
    """The text defining ``symbol`` in the file ``path`` (``A.b``: b inside A), or None."""
    for part in symbol.split("."):
        lines = text.splitlines()
        name = re.escape(part)
        if _make(path):
            pattern = rf"^{name}\s*:(?!=)"
        elif path.endswith(".py"):
            pattern = rf"^\s*(?:async\s+def|def|class)\s+{name}\b|^\s*{name}\s*(?::[^=]*)?=[^=]"
        else:
            pattern = (
                rf"\b(?:{'|'.join(_KEYWORDS)})\s+{name}\b|^\s*\[{name}\]"
                rf"|^\s*(?:export\s+)?([\"']?){name}\1\s*[:=(]"
            )  # NAME quoted: a JSON key
        found = re.compile(pattern)
        at = next((i for i, ln in enumerate(lines) if found.search(ln)), None)
        if at is None:
            return None
        if _make(path):  # a target's recipe: the tab-indented lines under it
            end = at + 1
            while end < len(lines) and (lines[end].startswith("\t") or not lines[end].strip()):
                end += 1
            text = "\n".join(lines[at:end])
        else:
            text = "\n".join(_block(lines, at))
    return text


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_CODEY = re.compile(r"^(\d+(?:\.\d+)?|\w*(_|\d)\w*|[a-z]+[A-Z]\w*)$")


def stated(text: str) -> set[str]:
    """The values a memory states that code can hold: numbers, identifiers (``snake_case``,
    ``camelCase``, with digits) and every word inside backticks."""
    out = {t for t in _TOKEN.findall(text) if _CODEY.match(t)}
    for span in _CODE_SPAN.findall(text):
        out.update(t for t in _TOKEN.findall(span) if re.match(r"\w", t))
    return out


def check(memory_text: str, old: str | None, new: str | None, path: str, symbol: str) -> str | None:
    """Why the code a ref names changed in a way that may make the memory false, or None.

    ``old``/``new``: the file at the memory's commit and now. A symbol counts as changed when
    its meaningful tokens changed; but when the memory states values the old definition held,
    it is flagged only if one of them is gone (the rest of the edit kept what it says). A whole
    file is checked by those values alone: an edit somewhere in it does not make it false.
    """
    if old is None or new is None:
        return None
    if symbol:
        before, after = definition(old, symbol, path), definition(new, symbol, path)
        if before is None:
            return None  # the ref never named a definition there: nothing to follow
        if after is None:
            return f"{symbol} is no longer defined in {path}"
    else:
        before, after = old, new
    was, now = lexemes(before, path), lexemes(after, path)
    if was == now or renamed(was, now):
        return None
    held = (stated(memory_text) & set(tokens(before, path))) - {symbol.rsplit(".", 1)[-1]}
    gone = sorted(held - set(tokens(after, path)))
    if gone:
        return f"{symbol or path} changed: {', '.join(gone[:3])} no longer in it"
    if not symbol:
        return None
    values = sorted(filter(_literal, was)) != sorted(filter(_literal, now))
    return f"{symbol} changed in {path}" if values or not held else None


_PATHY = re.compile(r"[\w.\-/]+(?::[\w.\-]+)?")
# a command names a definition in the file that declares it: `make ship` -> Makefile:ship
_RUNS = (("make", "Makefile"), ("npm run", "package.json"), ("yarn", "package.json"),
         ("pnpm run", "package.json"), ("just", "justfile"))  # fmt: skip


def suggest(text: str, refs: Iterable[str], files: set[str], read: object) -> list[str]:
    """Refs the text names that exist and are not ``refs`` yet: tracked ``files`` (and their
    folders) it names, as ``path:NAME`` when it also names a NAME defined in the file
    (``read(path)`` gives the file's text, or None)."""
    have = set(refs)
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    named: list[str] = []
    for m in _PATHY.findall(text):
        path, _, symbol = m.strip(".:/-").partition(":")
        if path in files or (path in folders and "/" in path):
            named.append(f"{path}:{symbol}" if symbol else path)
    for tool, file in _RUNS:
        if file in files:
            named += [f"{file}:{t}" for t in re.findall(rf"\b{tool} +([\w.-]*\w)", text)]
    words = stated(text)
    out: list[str] = []
    for ref in dict.fromkeys([*named, *(r for r in have if r.partition(":")[0] in files)]):
        path, _, symbol = ref.partition(":")
        body = read(path) if path in files else None  # type: ignore[operator]
        if symbol:
            if body is not None and definition(body, symbol, path) is not None:
                out.append(ref)
            continue
        found = [w for w in sorted(words) if body is not None and len(w) > 2
                 and not w.isdigit() and definition(body, w, path) is not None]  # fmt: skip
        out += [f"{path}:{w}" for w in found] or [path]
    covered = {h.partition(":")[0] for h in have if ":" in h}  # a path a symbol ref already names
    return [r for r in dict.fromkeys(out) if r not in have and r not in covered]
