"""nxs's merge driver configured in a clone, idempotently (like ``git lfs install``).

git runs only drivers named in the clone's own config, so each clone gets ``merge.nxs.driver``
(this interpreter, `nxm.store.merge`) and the workspace's files routed to it in
``info/attributes``, which outranks the committed ``.gitattributes``: a clone where nxs never
ran (CI, a forge's merge button) keeps the committed fallbacks (``union``, a text merge). The
check when all is in place reads two small files and spawns nothing, so `install` can run on
any command.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

NAME = "nxs: memories merged by field, event logs by event, NEXUS_MEMORY.md by key"
ARGS = ("-m", "nxm.store.merge", "%O", "%A", "%B", "%P")
PATTERNS = ("NEXUS_MEMORY.md", ".nxs/memories/*.md", ".nxs/history/*.jsonl", ".nxs/graph.jsonl")
COMMENT = "# nxs: its files merged by nxs's driver (nxm.store.gitconfig)"
_SECTION = re.compile(r'^\s*\[\s*merge\s+"nxs"\s*\]\s*$', re.I)
_warned = False


def repository(root: Path) -> tuple[Path, Path] | None:
    """The work tree's top and common git directory of the repository holding ``root``."""
    for here in (root, *root.parents):
        dot = here / ".git"
        if dot.is_dir():
            gitdir = str(dot)
        elif dot.is_file():  # a worktree or a submodule: "gitdir: PATH"
            told = dot.read_text(encoding="utf-8").strip()
            if not told.startswith("gitdir:"):
                return None
            gitdir = os.path.join(here, told[len("gitdir:") :].strip())
        else:
            continue
        try:
            common = (Path(gitdir) / "commondir").read_text(encoding="utf-8").strip()
        except OSError:
            common = ""
        return here, Path(os.path.normpath(os.path.join(gitdir, common)))
    return None


def _unquote(raw: str) -> str:
    """A git config value as git reads it (quotes, backslash escapes, a trailing comment)."""
    out, quoted, i = [], False, 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i + 1], raw[i + 1]))
            i += 1
        elif c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def _settings(config: str) -> dict[str, str]:
    """The values of ``[merge "nxs"]`` in a config file's text (the last of each name)."""
    out: dict[str, str] = {}
    inside = False
    for ln in config.splitlines():
        if ln.lstrip().startswith("["):
            inside = bool(_SECTION.match(ln))
        elif inside and "=" in ln:
            name, _, value = ln.partition("=")
            out[name.strip().lower()] = _unquote(value)
    return out


def _driver_works(driver: str | None) -> bool:
    try:
        words = shlex.split(driver or "")
    except ValueError:
        return False
    return (
        tuple(words[1:]) == ARGS
        and os.path.isabs(words[0])
        and os.access(words[0], os.X_OK)  # an interpreter since removed is replaced
    )


def _pattern(prefix: str, tail: str) -> str:
    """An ``info/attributes`` pattern for ``tail`` under the workspace's directory."""
    path = re.sub(r"([*?\[\\])", r"\\\1", prefix) + "/" + tail if prefix else tail
    if re.search(r'[\s"]', path):  # git reads a C-quoted pattern
        path = '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return path


def _missing(root: Path) -> tuple[Path, list[str], list[str]] | None:
    """The common git directory, the config names and the attribute lines still to write."""
    found = repository(root)
    if found is None:
        return None
    top, common = found
    have = _settings(_read(common / "config").decode("utf-8"))
    names = [n for n, ok in (("name", have.get("name") == NAME),
                             ("driver", _driver_works(have.get("driver")))) if not ok]  # fmt: skip
    present = set(_read(common / "info" / "attributes").decode("utf-8").splitlines())
    prefix = root.relative_to(top).as_posix()
    wanted = [f"{_pattern('' if prefix == '.' else prefix, p)} merge=nxs" for p in PATTERNS]
    lines = [ln for ln in wanted if ln not in present]
    return common, names, lines


def configured(root: Path) -> bool | None:
    """Whether the driver is configured for this workspace (None: it is in no git repository)."""
    try:
        got = _missing(Path(os.path.abspath(root)))
    except (OSError, ValueError):
        return False
    return None if got is None else not (got[1] or got[2])


def install(root: Path) -> list[str]:
    """Configure the driver for the workspace at ``root``; what was changed. Never raises."""
    global _warned
    try:
        got = _missing(Path(os.path.abspath(root)))
        if got is None:
            return []
        common, names, lines = got
        changed = []
        for name in names:
            value = NAME if name == "name" else shlex.join([os.path.abspath(sys.executable), *ARGS])
            _git_config(common / "config", f"merge.nxs.{name}", value)
            changed.append(f"merge.nxs.{name}")
        if lines:
            _append(common / "info" / "attributes", lines)
            changed.append(str(common / "info" / "attributes"))
        return changed
    except Exception as exc:  # a read-only .git, no git: merges fall back to the committed ones
        if not _warned:
            _warned = True
            print(
                f"nxs: git's merge driver for nxs files is not configured: {exc}", file=sys.stderr
            )
        return []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def _git_config(path: Path, name: str, value: str) -> None:
    import subprocess  # here: the check that finds all in place spawns nothing

    got = subprocess.run(
        ["git", "config", "--file", str(path), name, value], capture_output=True, text=True
    )
    if got.returncode:
        raise OSError(got.stderr.strip() or f"git config {name} failed")


def _append(path: Path, lines: list[str]) -> None:
    from nxs.paths import atomic_write

    have = _read(path)
    if have and not have.endswith(b"\n"):
        have += b"\n"
    if COMMENT.encode() not in have:
        lines = [COMMENT, *lines]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, have + "".join(f"{ln}\n" for ln in lines).encode("utf-8"))


# The fallback where nxs's driver is not configured: no conflict.
PROJECTION_ATTRIBUTE = (
    b"# nxs: NEXUS_MEMORY.md is derived again after a merge\nNEXUS_MEMORY.md merge=union\n"
)


def write_git_files(root: Path) -> list[str]:
    """Add the missing lines of the git files nxs needs (keeping a person's); what changed."""
    from nxm.store.text import GITATTRIBUTES, GITIGNORE
    from nxs.paths import atomic_write

    changed = []
    for path, want in (
        (root / ".nxs" / ".gitignore", GITIGNORE),
        (root / ".nxs" / ".gitattributes", GITATTRIBUTES),
        (root / ".gitattributes", PROJECTION_ATTRIBUTE),
    ):
        have = _read(path)
        lines = set(have.splitlines())
        missing = [ln for ln in want.splitlines(keepends=True) if ln.rstrip(b"\n") not in lines]
        if any(not ln.startswith(b"#") for ln in missing):
            if have and not have.endswith(b"\n"):
                have += b"\n"
            atomic_write(path, have + b"".join(missing))
            changed.append(str(path.relative_to(root)))
    return changed


def set_up(root: Path) -> list[str]:
    """What `init` makes (idempotent): the git files and this clone's merge driver; what changed."""
    return write_git_files(root) + install(root)
