"""Write docs/cli.md: what `nxm list`, `search`, `recall`, `show` and `history` print at 80
columns, captured from the real commands on a copy of the example workspace.

    python docs/gen_screens.py          (needs the default model: `nxm model setup`)
    python docs/gen_screens.py --check  (exit 1 if docs/cli.md is stale)

The copy is made in a temporary directory with its own user directories, so nothing of yours is
read or written, and nothing is changed in it: each capture is what the same command prints on
`.nxs-example` itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from nxs.paths import cache_dir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / ".nxs-example"
OUT = ROOT / "docs" / "cli.md"

HEAD = """\
# What the CLI shows

Each verb prints a short, readable answer for a person; add `--json` for the machine answer (the
MCP tool's bytes). Tables fit 80 columns: the introduction column narrows and ends in `…`
rather than wrapping a row over several lines; priority and status are coloured on a terminal.
These captures come from the example workspace (`.nxs-example/`), at 80 columns, made by
`python docs/gen_screens.py`.
"""


TAIL = """\
## Progress

Long work reports on stderr, never on stdout, which holds only the answer (and nothing at all
under the MCP server): `nxm import`, `nxm embed [--all]`, `nxm reindex`, and a fresh clone's
first reading of its memory files, first index and first embedding. On a terminal it is a bar
with the count, the rate and the time left, moving every 64 texts the model embeds; `nxm model
setup` shows pip's download bar (bytes, rate, time left). Elsewhere (an agent's pipe, CI) it is
a plain line once the work has run two seconds, then every ten, so an agent waiting on a first
index sees why:

```text
nxs: indexing memories: DONE of TOTAL (RATE/s, about N s left)
```

Frames of the bar for `nxm import` of 600 memories with the default model, on the 2-core
machine shared by six engineers (load average 5-6), 2 Dec 2026:

```text
importing memories ━━━━╺━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  64/600  -:--:--
importing memories ━━━━━━━━━━━━━━━━━╺━━━━━━━━━━━━━━━━━━━━━━ 256/600 106/s 0:00:05
importing memories ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╺━━━━━ 512/600 83/s 0:00:02
```
"""


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """A command's output as a page shows it (trailing spaces off); its failure ends the run."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, env=env, check=False, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
    return "\n".join(line.rstrip() for line in done.stdout.decode().rstrip().splitlines())


def nxm(args: list[str], workspace: Path, env: dict[str, str]) -> str:
    cli = [sys.executable, "-c", "from nxm.cli import main; main()"]
    return run([*cli, *args, "--workspace", str(workspace)], workspace, env)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="nxs-screens-") as tmp:
        base = Path(tmp)
        workspace = base / "larkspur"
        shutil.copytree(EXAMPLE, workspace)
        cache = base / "cache"  # derived files of the copy; the installed models read from there
        cache.mkdir()
        models = cache_dir() / "models"
        if models.is_dir():
            (cache / "models").symlink_to(models)
        env = {
            **os.environ,
            "NXS_CACHE_DIR": str(cache),
            "COLUMNS": "80",
            "NXS_CONFIG_DIR": str(base / "config"),
            "NXS_DATA_DIR": str(base / "data"),
            "NXS_ACTOR": "docs",
            "PYTHONPATH": str(ROOT),
        }
        env.pop("NXS_WORKSPACE", None)
        key = "7c1c"  # the corrected decision
        shots = [
            ("nxm list", ["list"]),
            ('nxm search "can I deploy on a Friday"', ["search", "can I deploy on a Friday"]),
            ('nxm recall "webhook retries"', ["recall", "webhook retries"]),
            (f"nxm show {key}", ["show", key]),
            (f"nxm history {key}", ["history", key]),
        ]
        parts = [HEAD]
        for title, args in shots:
            text = nxm(args, workspace, env)
            parts.append(f"## `{title}`\n\n```text\n$ {title}\n{text}\n```\n")
        parts.append(TAIL)
    text = "\n".join(parts)
    if "--check" in sys.argv:
        stale = OUT.read_text(encoding="utf-8") != text
        print(f"{OUT} is stale: run `python docs/gen_screens.py`" if stale else "current")
        return int(stale)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
