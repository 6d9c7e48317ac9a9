"""What in ``.nxs/`` cannot be read, and the fix of each: nothing vanishes in silence.

Every read reports these (stderr for a person, ``problems`` in the JSON answer for an agent),
and `nxm doctor` lists them all.
"""

from __future__ import annotations

MEMORIES = ".nxs/memories"
HISTORY = ".nxs/history"


def _fix(key: str, problem: str) -> str:
    if "conflict" in problem:
        return f"`nxm resolve {key}` shows both sides; keep one with `--keep ours|theirs`"
    return f"edit the file where it says, or restore it with `git checkout -- {MEMORIES}/{key}.md`"


def problems(
    unreadable: list[tuple[str, str]], md_strays: list[str], log_strays: list[str],
    orphans: list[str],
) -> list[dict[str, str]]:  # fmt: skip
    """Each file of the store that makes no memory: {file, problem, fix}, by file."""
    out = []
    for key, problem in unreadable:
        where = problem.split(" ", 1)[0].rstrip(":")  # FileProblem names its file first
        file = where if where.startswith(".nxs/") else f"{MEMORIES}/{key}.md"
        out.append({"file": file, "problem": problem, "fix": _fix(key, problem)})
    for name in md_strays:
        if name.endswith(".md"):
            problem = "a memory file not named by its key (16 hex digits), so no verb can name it"
            fix = "`nxm doctor --fix` names it by its key (the hash of its body)"
        else:
            problem = "not a memory file (a memory is .nxs/memories/<key>.md)"
            fix = "move it out of .nxs/memories/"
        out.append({"file": f"{MEMORIES}/{name}", "problem": problem, "fix": fix})
    stray = "not a memory's history (a history is .nxs/history/<key>.jsonl)"
    out += [
        {"file": f"{HISTORY}/{n}", "problem": stray, "fix": "move it out of .nxs/history/"}
        for n in log_strays
    ]
    orphan = "a history without its memory file (purged, or deleted on another branch)"
    for key in orphans:
        fix = f"`git rm {HISTORY}/{key}.jsonl`, or bring back {MEMORIES}/{key}.md"
        out.append({"file": f"{HISTORY}/{key}.jsonl", "problem": orphan, "fix": fix})
    return sorted(out, key=lambda p: p["file"])
