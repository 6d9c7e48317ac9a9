"""Memory that notices when the code it describes moved (issue 35): a repository history to
measure it on, and a first detector from git plumbing.

    python -m bench.stale                    # 200 memories, 100 commits, seed 7
    python -m bench.stale --seed 3 --json    # another history; the figures as JSON

`build` writes a small codebase (services of Python modules, a Makefile) into a fresh git
repository and 200 facts about it, each with a ref as `nxm add --ref` would take it: a file
(``services/billing/fees.py``: "fee rules live there"), a symbol (``…/fees.py:compute_fee``:
"it charges 2.5%") or a Makefile target (``Makefile:ship``). Then 100 commits of what a team
does: rename or delete a file, change a value a function returns, rename a function or a
target, and edits that leave every fact true (a comment inside a function, the same expression
written the other way round, a new function beside it, a new file). The builder knows which facts each commit made false; that is the
ground truth, decided by what a fact says, not by which lines moved.

`detect` flags a memory from git alone: its file renamed or deleted since the commit it was
written at, its symbol gone, or a changed line inside the symbol's body that is not a comment
or blank. The report gives the share of invalidated memories flagged (target ≥ 0.9) and the
share of still-true ones flagged (target ≤ 0.1), and what each miss or false flag was.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

SERVICES = ("billing", "ledger", "payouts", "search", "auth", "notify", "export", "ingest")
WORDS = ("fee", "limit", "retry", "window", "batch", "quota", "timeout", "rate", "cap", "delay")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


class Repo:
    """The codebase as the builder knows it: files -> functions -> returned value."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.files: dict[str, dict[str, int]] = {}
        self.comments: dict[tuple[str, str], int] = Counter()
        self.swapped: set[tuple[str, str]] = set()  # `return V + x`: the same function
        self.targets = {"ship": "deploy.sh", "test": "pytest -q", "lint": "ruff check ."}
        for svc in SERVICES:
            for mod in rng.sample(WORDS, 5):
                self.files[f"services/{svc}/{mod}.py"] = {
                    f"{verb}_{mod}": rng.randint(2, 90) for verb in rng.sample(
                        ("compute", "check", "next", "max", "default", "apply"), 4)
                }  # fmt: skip

    def write(self) -> None:
        for path, funcs in self.files.items():
            lines = ['"""Generated module."""', ""]
            for name, value in funcs.items():
                lines += ["", f"def {name}(x: int = 0) -> int:"]
                lines += ["    # note"] * self.comments[(path, name)]
                flip = (path, name) in self.swapped
                lines += [f"    return {value} + x" if flip else f"    return x + {value}", ""]
            file = self.root / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text("\n".join(lines) + "\n")
        make = [f"{t}:\n\t{cmd}\n" for t, cmd in self.targets.items()]
        (self.root / "Makefile").write_text("\n".join(make))

    def commit(self, message: str) -> str:
        self.write()
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-qm", message)
        return _git(self.root, "rev-parse", "HEAD").strip()


def build(root: Path, memories: int = 200, commits: int = 100, seed: int = 7) -> dict[str, Any]:
    """The repository at ``root`` and its memories: ref, base commit, and whether true at HEAD."""
    rng = random.Random(seed)
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "bench@example.invalid")
    _git(root, "config", "user.name", "bench")
    repo = Repo(root, rng)
    base = repo.commit("the codebase")
    facts: list[dict[str, Any]] = []
    for i in range(memories):  # what each memory states, and what makes it false
        kind = rng.choices(("file", "symbol", "target"), (3, 6, 1))[0]
        if kind == "target":
            target = rng.choice(list(repo.targets))
            facts.append({"id": i, "ref": f"Makefile:{target}", "kind": kind, "target": target})
            continue
        path = rng.choice(list(repo.files))
        if kind == "file":
            facts.append({"id": i, "ref": path, "kind": kind, "path": path})
        else:
            name = rng.choice(list(repo.files[path]))
            value = repo.files[path][name]
            facts.append({"id": i, "ref": f"{path}:{name}", "kind": kind, "path": path,
                          "name": name, "value": value})  # fmt: skip
    for fact in facts:
        fact.update(base=base, true=True, why=None)
    ops = Counter()
    for n in range(commits):
        op = rng.choices(
            (
                "rename",
                "delete",
                "value",
                "rename_fn",
                "target",
                "comment",
                "reorder",
                "other_fn",
                "new",
            ),
            (0.5, 0.5, 3, 1, 0.5, 2, 2, 3, 1),
        )[0]
        path = rng.choice(list(repo.files))
        funcs = repo.files[path]
        name = rng.choice(list(funcs))
        if op == "rename":
            new = str(Path(path).with_name(f"{Path(path).stem}_v{n}.py"))
            (repo.root / new).parent.mkdir(parents=True, exist_ok=True)
            _git(repo.root, "mv", path, new)
            repo.files[new] = repo.files.pop(path)
            for f in facts:
                if f.get("path") == path:  # the file a memory names is gone from there
                    f.update(true=False, why=f.get("why") or f"renamed to {new}")
                    f["path"] = new
        elif op == "delete":
            del repo.files[path]
            (repo.root / path).unlink()
            for f in facts:
                if f.get("path") == path:
                    f.update(true=False, why=f.get("why") or "file deleted")
                    f["path"] = None
        elif op == "value":
            funcs[name] += rng.randint(1, 9)
            for f in facts:
                if f.get("path") == path and f.get("name") == name:
                    f.update(true=False, why=f.get("why") or "value changed")
        elif op == "rename_fn":
            funcs[f"{name}_v{n}"] = funcs.pop(name)
            for f in facts:
                if f.get("path") == path and f.get("name") == name:
                    f.update(true=False, why=f.get("why") or "function renamed")
                    f["name"] = f"{name}_v{n}"
        elif op == "target" and len(repo.targets) > 1:
            target = rng.choice(list(repo.targets))
            repo.targets[f"{target}-v{n}"] = repo.targets.pop(target)
            for f in facts:
                if f.get("target") == target:
                    f.update(true=False, why=f.get("why") or "target renamed")
                    f["target"] = None
        elif op == "comment":  # inside the function: every fact stays true
            repo.comments[(path, name)] += 1
        elif op == "reorder":  # `x + V` written `V + x`: the code moved, the fact did not
            repo.swapped ^= {(path, name)}
        elif op == "other_fn":  # a new function in the file: facts about the others stay true
            funcs[f"helper_{n}"] = rng.randint(2, 90)
        else:  # a new file elsewhere
            repo.files[f"services/{rng.choice(SERVICES)}/extra_{n}.py"] = {f"run_{n}": n}
        ops[op] += 1
        repo.commit(f"commit {n}: {op}")
    return {"root": str(root), "memories": facts, "ops": dict(ops)}


_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)|^(\w[\w.-]*):", re.M)


def _span(text: str, symbol: str) -> tuple[int, int] | None:
    """The 1-based line range of a Python function or a Makefile target named ``symbol``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _DEF.match(line)
        if m and symbol in (m.group(2), m.group(3)):
            end = i + 1
            while end < len(lines) and not _DEF.match(lines[end]):
                end += 1
            return i + 1, end
    return None


def detect(root: Path, memory: dict[str, Any]) -> str | None:
    """Why git says the code a memory refers to moved since its base commit, or None."""
    path, _, symbol = memory["ref"].partition(":")
    base = memory["base"]
    status = _git(root, "diff", "--name-status", "-M", base, "HEAD", "--", path).split()
    if status and status[0][0] in "RD":
        return "renamed" if status[0][0] == "R" else "deleted"
    if not symbol:
        return None
    old = _git(root, "show", f"{base}:{path}")
    span = _span(old, symbol)
    now = (root / path).read_text() if (root / path).exists() else ""
    if span is None or _span(now, symbol) is None:
        return "symbol gone"
    diff = _git(root, "diff", "-U0", base, "HEAD", "--", path)
    for hunk in re.finditer(
        r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@.*\n((?:[-+].*\n?)*)", diff, re.M
    ):
        start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
        changed = [ln[1:].strip() for ln in hunk.group(3).splitlines()]
        if not any(c and not c.startswith("#") for c in changed):
            continue  # comments and blank lines: nothing a memory states
        inside = (
            span[0] <= start < span[1]
            if count == 0
            else (start <= span[1] and start + count - 1 >= span[0])
        )  # count 0: added after line start
        if inside:
            return "edited"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        got = build(Path(tmp), args.memories, args.commits, args.seed)
        for m in got["memories"]:
            m["flag"] = detect(Path(tmp), m)
    mems = got["memories"]
    stale = [m for m in mems if not m["true"]]
    fine = [m for m in mems if m["true"]]
    caught = sum(bool(m["flag"]) for m in stale) / max(len(stale), 1)
    false = sum(bool(m["flag"]) for m in fine) / max(len(fine), 1)
    out = {"memories": len(mems), "invalidated": len(stale), "caught": round(caught, 3),
           "false_flags": round(false, 3), "ops": got["ops"],
           "misses": [(m["ref"], m["why"]) for m in stale if not m["flag"]],
           "false": [(m["ref"], m["flag"]) for m in fine if m["flag"]]}  # fmt: skip
    print(json.dumps(out, indent=1) if args.json else
          f"{len(mems)} memories, {len(stale)} invalidated by {args.commits} commits "
          f"({', '.join(f'{k} {v}' for k, v in sorted(got['ops'].items()))}): "
          f"caught {caught:.3f} (target ≥ 0.9), false flags {false:.3f} (target ≤ 0.1)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
