"""Memory that notices when the code it describes moved (issue 35): a repository history to
measure the product's stale flags on, and their cost at scale.

    python -m bench.stale                    # 200 memories, 100 commits, seed 7
    python -m bench.stale --seed 3 --json    # another history; the figures as JSON
    python -m bench.stale --scale 10000      # what the flags add to prime at 10,000 memories

`build` writes a small codebase (services of Python modules, a Makefile) into a fresh git
repository and 200 facts about it, each with a ref as `nxm add --ref` would take it: a file
(``services/billing/fees.py``: "fee rules live there"), a symbol (``…/fees.py:compute_fee``:
"it charges 2.5%") or a Makefile target (``Makefile:ship``). Then 100 commits of what a team
does: rename or delete a file, change a value a function returns, rename a function or a
target, and edits that leave every fact true (a comment inside a function, the same expression
written the other way round, a new function beside it, a new file). The builder knows which facts each commit made false; that is the
ground truth, decided by what a fact says, not by which lines moved.

The memories are written with the product (`MemoryService.add` with the ref, as `nxm add
--ref` does, in a workspace committed after the codebase) and flagged by it (`nxm.stale.flags`,
what `nxm stale` lists). The report gives the share of invalidated memories flagged (target
≥ 0.9) and the share of still-true ones flagged (target ≤ 0.1), and each miss or false flag.

``--scale N`` imports N memories (60% with code refs) into a repository of the same kind and
times `nxm.prime.block` with the flags and without them (warm: HEAD as last judged), the first
judgement of all N (cold), and the one after a commit that edits three files (incremental).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
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


def build(
    root: Path, memories: int = 200, commits: int = 100, seed: int = 7, unstated: bool = False
) -> dict[str, Any]:
    """The repository at ``root`` and its memories: ref, base commit, and whether true at HEAD."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
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
    keys = write(root, facts, repo, unstated)
    for fact, key in zip(facts, keys, strict=True):
        fact["key"] = key
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


def _service_of(root: Path) -> Any:
    from nxm.service import MemoryService
    from nxs.workspace import find

    return MemoryService(find(root))


def _service(root: Path) -> Any:
    from nxm.service import MemoryService
    from nxs.workspace import find, init

    ws, _ = init(root, ["memory"])
    cfg = ws.dir / "config.toml"  # the deterministic test embedder: no model download
    cfg.write_text(cfg.read_text().replace("sentence-transformers/all-MiniLM-L6-v2", "hash"))
    return MemoryService(find(root))


def body(fact: dict[str, Any], repo: Repo, unstated: bool = False) -> str:
    """What a memory about this fact says, as a person would write it (``unstated``: a symbol's
    memory that does not quote the value it returns)."""
    if fact["kind"] == "target":
        return f"`make {fact['target']}` runs `{repo.targets[fact['target']]}`."
    svc, mod = fact["path"].split("/")[1], Path(fact["path"]).stem
    if fact["kind"] == "file":
        return f"The {svc} service keeps its {mod} rules in {fact['path']}."
    if unstated:
        return f"`{fact['name']}` in {fact['path']} is where the {mod} {svc} adds is decided."
    return f"`{fact['name']}` in {fact['path']} returns its argument plus {fact['value']}."


def write(root: Path, facts: list[dict[str, Any]], repo: Repo, unstated: bool) -> list[str]:
    """Each fact written as a memory with its ref (`nxm add --ref`), committed; their keys."""
    service = _service(root)
    keys = []
    for n, fact in enumerate(facts):
        text = body(fact, repo, unstated)
        got = service.add(body=text, introduction=text[:200], refs=[fact["ref"]], now=_at(n),
                          actor="bench", category="notes")  # fmt: skip
        keys.append(got["memory"]["key"])
    service.release()
    repo.commit("the team's memories")
    return keys


def _at(n: int) -> str:
    return f"2026-06-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def flags(root: Path) -> dict[str, Any]:
    """What the product flags (`nxm stale`)."""
    from nxm.stale import verdicts

    service = _service_of(root)
    try:
        return verdicts(service)
    finally:
        service.release()


def quality(seed: int, memories: int, commits: int, unstated: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NXS_CACHE_DIR"] = str(Path(tmp) / "cache")
        got = build(Path(tmp) / "repo", memories, commits, seed, unstated)
        flagged = flags(Path(tmp) / "repo")
    mems = got["memories"]
    for m in mems:
        m["flag"] = flagged.get(m["key"], {}).get("reason")
    stale = [m for m in mems if not m["true"]]
    fine = [m for m in mems if m["true"]]
    caught = sum(bool(m["flag"]) for m in stale) / max(len(stale), 1)
    false = sum(bool(m["flag"]) for m in fine) / max(len(fine), 1)
    return {"seed": seed, "memories": len(mems), "invalidated": len(stale),
            "caught": round(caught, 3), "false_flags": round(false, 3), "ops": got["ops"],
            "misses": [(m["ref"], m["why"]) for m in stale if not m["flag"]],
            "false": [(m["ref"], m["flag"]) for m in fine if m["flag"]]}  # fmt: skip


def _ms(run: Any, times: int = 7) -> float:
    took = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        took.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(took), 1)


def scale(n: int, seed: int = 7) -> dict[str, Any]:
    """Prime with and without the flags at ``n`` memories; the cold and incremental judgements."""
    import nxm.stale
    from nxm.port import import_records
    from nxm.prime import block
    from nxm.record import key_for, new_record
    from nxs.workspace import find

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NXS_CACHE_DIR"] = str(Path(tmp) / "cache")
        root = Path(tmp) / "repo"
        root.mkdir()
        for args in (("init", "-q"), ("config", "user.email", "b@x"), ("config", "user.name", "b")):
            _git(root, *args)
        repo = Repo(root, rng)
        base = repo.commit("the codebase")
        service = _service(root)
        records = []
        for i in range(n):
            path = rng.choice(list(repo.files))
            refs = [] if rng.random() < 0.4 else [
                rng.choice([path, f"{path}:{rng.choice(list(repo.files[path]))}"])]  # fmt: skip
            text = f"Fact {i}: {path} holds the {Path(path).stem} rules (note {rng.random():.6f})."
            records.append(new_record(
                key=key_for(text), body=text, introduction=text, refs=refs, category="notes",
                created=_at(i), updated=_at(i), actor="bench",
                events=[{"type": "CREATED", "at": _at(i), "actor": "bench",
                         "data": {"commit": base}}]))  # fmt: skip
        import_records(service, records, record=False)
        service.release()
        repo.commit("the team's memories")
        ws = find(root)
        now = "2026-06-02T10:00:00.000Z"
        real = nxm.stale.flags
        start = time.perf_counter()
        cold = len(flags(root))
        cold_ms = (time.perf_counter() - start) * 1000
        from nxm.store import open_store

        store = open_store(ws)
        store.sync()
        warm = _ms(lambda: real(store), 21)
        store.close()
        pairs = []  # interleaved, so that a busy machine slows both alike
        for _ in range(11):
            nxm.stale.flags = real
            one = _ms(lambda: block(ws, None, now), 1)
            nxm.stale.flags = lambda store: {}
            pairs.append((one, _ms(lambda: block(ws, None, now), 1)))
        nxm.stale.flags = real
        with_flags = statistics.median(a for a, _ in pairs)
        without = statistics.median(b for _, b in pairs)
        added = statistics.median(a - b for a, b in pairs)
        service = _service_of(root)  # one memory written: the next read judges what changed
        service.add(body="One more fact.", introduction="One more fact", now=now, actor="bench")
        service.release()
        store = open_store(ws)
        store.sync()
        start = time.perf_counter()
        real(store)
        wrote_ms = (time.perf_counter() - start) * 1000
        store.close()
        for funcs in list(repo.files.values())[:3]:
            funcs[next(iter(funcs))] += 1
        repo.commit("three files edited")
        start = time.perf_counter()
        after = len(flags(root))
        moved_ms = (time.perf_counter() - start) * 1000
    return {"memories": n, "with_code_refs": sum(bool(r["refs"]) for r in records),
            "prime_ms": with_flags, "prime_without_flags_ms": without,
            "added_ms": round(added, 1), "flags_warm_ms": warm, "cold_judge_ms": round(cold_ms),
            "flagged_cold": cold, "after_write_ms": round(wrote_ms, 1), "after_commit_judge_ms": round(moved_ms),
            "flagged_after": after}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--scale", type=int, help="time prime at this many memories instead")
    parser.add_argument(
        "--unstated",
        action="store_true",
        help="symbol memories that do not quote the value their function returns",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.scale:
        out = scale(args.scale, args.seed)
        print(json.dumps(out, indent=1) if args.json else
              f"{out['memories']} memories ({out['with_code_refs']} with code refs): prime "
              f"{out['prime_ms']} ms with flags, {out['prime_without_flags_ms']} ms without "
              f"(+{out['added_ms']} ms, target ≤ 50; the flags alone {out['flags_warm_ms']} ms); "
              f"after a write {out['after_write_ms']} ms; first judgement "
              f"{out['cold_judge_ms']} ms, after a commit {out['after_commit_judge_ms']} ms")  # fmt: skip
        return 0
    out = quality(args.seed, args.memories, args.commits, args.unstated)
    print(json.dumps(out, indent=1) if args.json else
          f"seed {args.seed}: {out['memories']} memories, {out['invalidated']} invalidated by "
          f"{args.commits} commits ({', '.join(f'{k} {v}' for k, v in sorted(out['ops'].items()))}): "
          f"caught {out['caught']:.3f} (target ≥ 0.9), false flags {out['false_flags']:.3f} "
          f"(target ≤ 0.1)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
