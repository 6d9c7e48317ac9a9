"""Write the captures of "Reviewing memory changes" in docs/concepts.md: `nxm diff --markdown`,
`nxm diff` and `nxm log` on a branch of the example workspace.

    python docs/gen_review.py            # rewrite the captures between their markers
    python docs/gen_review.py --check    # exit 1 if docs/concepts.md is stale

A copy of `.nxs-example` is committed on ``main`` in a temporary git repository, then a branch
makes seven memory changes with the real verbs (one left uncommitted), at a fixed clock, author
and commit date: the captures depend only on the code and the example.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from gen_screens import run  # docs/ is the script's folder, on sys.path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "concepts.md"
BEGIN, END = (
    "<!-- review captures: python docs/gen_review.py -->",
    "<!-- end of review captures -->",
)
GIT = {"GIT_AUTHOR_NAME": "Priya Shah", "GIT_AUTHOR_EMAIL": "priya@larkspur.example",
       "GIT_COMMITTER_NAME": "Priya Shah", "GIT_COMMITTER_EMAIL": "priya@larkspur.example",
       "GIT_AUTHOR_DATE": "2026-06-02T09:00:00Z", "GIT_COMMITTER_DATE": "2026-06-02T09:00:00Z"}  # fmt: skip
OWNERS, TZ, PDF, REPLAY, RETRIES, FRIDAY = (
    "a36f1cc9", "2a383e15", "37507d62", "3ba5b9ba", "7c1c4e3a", "08ebb023",
)  # fmt: skip
BRANCH = [  # (actor, nxm arguments); a commit after the marker "commit"
    ("sam", ["add", "Sam owns webhooks and the Stripe integration since December; Priya keeps "
             "the ledger and invoice numbering.", "--introduction", "Priya owns the ledger and "
             "invoice numbering; Sam owns webhooks and Stripe", "--category", "owners",
             "--supersedes", OWNERS]),
    ("sam", ["add", "Ledger exports run nightly at 02:00 UTC from the exports worker; a failed "
             "night is retried once at 04:00.", "--introduction", "Ledger exports run nightly at "
             "02:00 UTC, retried once at 04:00", "--category", "processes"]),
    ("claude-code", ["update", TZ, "--introduction", "Tests need TZ=UTC (make test sets it): "
                     "due dates shift by a day in other timezones"]),
    ("sam", ["close", PDF]),
    ("commit", []),
    ("claude-code", ["forget", REPLAY]),
    ("dmitri", ["feedback", RETRIES, "POSITIVE", "--comment", "saved me an hour"]),
    ("commit", []),
    ("sam", ["update", FRIDAY, "--priority", "HIGH"]),  # left in the working tree
]  # fmt: skip
SHOTS = (
    ("nxm diff --markdown", ["diff", "--markdown"], "markdown"),
    ("nxm diff", ["diff"], "text"),
    ("nxm log --limit 8", ["log", "--limit", "8"], "text"),
)


def captures() -> str:
    with tempfile.TemporaryDirectory(prefix="nxs-review-doc-") as tmp:
        base = Path(tmp)
        repo = base / "larkspur"
        shutil.copytree(ROOT / ".nxs-example", repo)
        config = repo / ".nxs" / "config.toml"  # the test embedder: no model needed
        config.write_text(re.sub(r'model = ".*"', 'model = "hash"', config.read_text()))
        env = {**os.environ, **GIT, "COLUMNS": "80", "PYTHONPATH": str(ROOT),
               "NXS_CACHE_DIR": str(base / "cache"), "NXS_CONFIG_DIR": str(base / "config"),
               "NXS_DATA_DIR": str(base / "data"), "HOME": str(base)}  # fmt: skip
        env.pop("NXS_WORKSPACE", None)
        nxm = [sys.executable, "-c", "from nxm.cli import main; main()"]
        run(["git", "init", "-q", "-b", "main"], repo, env)
        run(["git", "add", "-A"], repo, env)
        run(["git", "commit", "-qm", "Larkspur's memories"], repo, env)
        run(["git", "checkout", "-qb", "LSP-733-owners"], repo, env)
        minute = 0
        for actor, args in BRANCH:
            if actor == "commit":
                run(["git", "add", "-A"], repo, env)
                run(["git", "commit", "-qm", f"LSP-733: memory, part {minute // 4 + 1}"], repo, env)
                continue
            minute += 1
            at = f"2026-06-03T10:{minute:02d}:00.000Z"
            run([*nxm, *args, "--now", at, "--actor", actor, "--json"], repo, env)
        parts = []
        for title, args, kind in SHOTS:
            text = run([*nxm, *args], repo, env)
            if kind == "markdown":
                quoted = "\n".join(">" + (" " + ln if ln else "") for ln in text.splitlines())
                parts.append(f"```markdown\n$ {title}\n{text}\n```\n\nPasted into a pull "
                             f"request's description, it reads:\n\n{quoted}\n")  # fmt: skip
            else:
                parts.append(f"```text\n$ {title}\n{text}\n```\n")
    return "\n".join(parts)


def main() -> int:
    doc = DOC.read_text(encoding="utf-8")
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    text = doc[:start] + "\n\n" + captures() + "\n" + doc[end:]
    if "--check" in sys.argv:
        stale = text != doc
        print(f"{DOC} is stale: run `python docs/gen_review.py`" if stale else "current")
        return int(stale)
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
