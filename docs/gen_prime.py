"""Generate the `nxs prime` examples in docs/mcp.md: the text at 0, 50 and 500 memories.

    python docs/gen_prime.py            # rewrite the examples between their markers
    python docs/gen_prime.py --check    # exit 1 if docs/mcp.md is stale

Each store is built in a temporary directory from the fixed corpus below (seven categories,
the two big ones HIGH, plus item, user and session memories), at a fixed clock, so the text
depends only on the code.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "mcp.md"
NOW = "2026-05-29T10:00:00.000Z"
TOPICS = ("billing", "ledger", "webhooks", "invoices", "auth", "search", "exports", "api")
# category: (share of 500, priority, introduction templates; {t} is a topic)
CORPUS: dict[str | None, tuple[int, str, tuple[str, ...]]] = {
    "conventions": (
        150,
        "HIGH",
        (
            "Money in {t} is integer minor units, never float",
            "{t} modules log with structlog, one event per line",
            "Every {t} migration is a forward-only Alembic revision",
        ),
    ),
    "decisions": (
        150,
        "HIGH",
        (
            "{t} keeps its own Postgres schema; no cross-schema joins",
            "Retries for {t} live in a table, not in Celery",
            "{t} IDs are ULIDs so they sort by creation time",
        ),
    ),
    "gotchas": (
        60,
        "MEDIUM",
        (
            "{t} tests need TZ=UTC or due dates are off by a day",
            "{t} events arrive out of order: compare created, drop older",
        ),
    ),
    "owners": (30, "MEDIUM", ("Priya owns {t}; page her for incidents", "Dmitri reviews {t} PRs")),
    "processes": (25, "LOW", ("No Friday deploys of {t}", "{t} releases need two approvals")),
    "runbooks": (
        15,
        "MEDIUM",
        ("Replay failed {t} jobs with make replay", "Rotate {t} keys yearly"),
    ),
    None: (10, "MEDIUM", ("The {t} dashboard is at /admin/{t}",)),
}
ELSEWHERE = {"item": 30, "user": 10, "session": 20}


def corpus(total: int) -> list[dict[str, Any]]:
    """``total`` records (500 or a tenth of it) in the corpus's proportions."""
    from nxm.record import key_for, new_record

    scale = total / 500
    out = []
    for category, (count, priority, templates) in CORPUS.items():
        for n in range(max(1, round(count * scale))):
            topic = TOPICS[n % len(TOPICS)]
            intro = templates[n % len(templates)].format(t=topic)
            intro = intro[0].upper() + intro[1:] + ("" if n < 24 else f" (case {n})")
            body = f"{intro}. Body {category} {n}."
            created = f"2026-0{1 + n % 5}-{1 + n % 28:02d}T09:00:00.000Z"
            out.append(
                new_record(key=key_for(body), body=body, introduction=intro, category=category,
                           priority=priority, created=created, updated=created)
            )  # fmt: skip
    for scope, count in ELSEWHERE.items():
        for n in range(max(1, round(count * scale))):
            body = f"A {scope} memory {n}."
            refs = [f"src/{TOPICS[n % len(TOPICS)].replace(' ', '_')}/"] if scope == "item" else []
            created = "2026-05-01T09:00:00.000Z"
            out.append(new_record(key=key_for(body), body=body, introduction=body, scope=scope,
                                  refs=refs, created=created, updated=created))  # fmt: skip
    return out[:total]


def prime_of(records: list[dict[str, Any]], seam: str) -> str:
    from nxm.store.text import event_line, reconciled, render
    from nxs.prime import prime_text
    from nxs.workspace import init

    with tempfile.TemporaryDirectory() as tmp:
        ws, _ = init(Path(tmp) / "proj", ["memory"])
        for folder in ("memories", "history"):
            (ws.dir / folder).mkdir(parents=True, exist_ok=True)
        for r in records:
            (ws.dir / "memories" / f"{r['key']}.md").write_bytes(render(r))
            events = b"".join(event_line(e) for e in reconciled(r))
            (ws.dir / "history" / f"{r['key']}.jsonl").write_bytes(events)
        return prime_text(str(ws.root), now=NOW, seam=seam)


def examples() -> dict[str, str]:
    """The marker name and the text each example block holds."""
    out = {}
    for name, total, seam in (
        ("0-cli", 0, "cli"),
        ("0-mcp", 0, "mcp"),
        ("50", 50, "mcp"),
        ("500", 500, "mcp"),
    ):
        text = prime_of(corpus(total), seam)
        out[name] = f"```text\n{text}```\n\n({len(text.encode()):,} bytes)\n"
    return out


def rewrite(doc: str, blocks: dict[str, str]) -> str:
    for name, block in blocks.items():
        pattern = re.compile(
            rf"(<!-- prime:{re.escape(name)} -->\n).*?(<!-- /prime:{re.escape(name)} -->)", re.S
        )
        if not pattern.search(doc):
            raise SystemExit(f"docs/mcp.md has no <!-- prime:{name} --> block")
        doc = pattern.sub(lambda m, b=block: m[1] + b + m[2], doc)
    return doc


def main() -> None:
    doc = DOC.read_text()
    new = rewrite(doc, examples())
    if "--check" in sys.argv:
        if new != doc:
            print("docs/mcp.md's prime examples are stale: run `python docs/gen_prime.py`")
            raise SystemExit(1)
        return
    DOC.write_text(new)
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
