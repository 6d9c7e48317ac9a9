"""python -m bench.project_memory: the run, its tables on stdout, optionally all of it as JSON."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench.project_memory import DATA, memories, queries
from bench.project_memory import __doc__ as DOC
from bench.project_memory.harness import MODES, HarnessError, evaluate
from bench.project_memory.report import markdown

SYSTEMS = (*(f"nxs {m}" for m in MODES), "bm25s", "dense MiniLM")


def floor_arg(text: str) -> tuple[str, float]:
    system, sep, value = text.rpartition("=")
    if not sep or system not in SYSTEMS:
        raise argparse.ArgumentTypeError(f"want SYSTEM=SCORE, SYSTEM one of {', '.join(SYSTEMS)}")
    return system, float(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.project_memory",
        description=(DOC or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", default=None, help="embedding model (default: the real one)")
    parser.add_argument(
        "--floor", type=floor_arg, action="append", default=[], metavar="SYSTEM=SCORE",
        help="drop the system's hits scoring below SCORE (repeatable)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, default=None, help="also write everything here")
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the set: memories/ and queries/ (default: data/)"
    )
    args = parser.parse_args(argv)
    from nxm.embed.model import MODEL_NAME

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = args.model or MODEL_NAME

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    log(f"project memory: model {model}")
    with tempfile.TemporaryDirectory(prefix="nxs-project-memory-") as tmp:
        try:
            got = evaluate(
                memories(args.data),
                queries(args.data),
                Path(tmp) / "ws",
                model,
                floors=dict(args.floor),
                log=log,
            )
        except HarnessError as exc:
            log(f"error: {exc}")
            return 1
    print(markdown(got))
    print(f"ingest {got['ingest_s']} s; query p50 (ms): {got['query_p50_ms']}")
    if args.json:
        import orjson

        args.json.write_bytes(orjson.dumps(got, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
