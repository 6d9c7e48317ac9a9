"""Two processes writing to one workspace at once lose nothing and duplicate nothing."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import make_workspace

from nxm.record import key_for
from nxm.service import MemoryService
from nxs.workspace import find

OWN = 20  # memories each worker adds, then updates: 40 acknowledged writes per worker
SHARED = 5  # bodies both workers add: exactly one may create each

WORKER = """
import json, sys, time
from pathlib import Path
from nxm.service import MemoryService
from nxs.workspace import find

root, tag, own, shared = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
svc = MemoryService(find(root))
svc.embedder()
svc.store.index.table(create=True)  # pay lancedb's import; its writes keep the index
(root / f"ready-{tag}").touch()
while not (root / "go").exists():
    time.sleep(0.01)


def ack(**kw):
    print(json.dumps(kw), flush=True)


for i in range(own):
    at = f"2026-05-29T10:{i:02d}:00Z"
    m = svc.add(body=f"{tag} fact {i}: service {tag}-{i} listens on port {9000 + i}.",
                introduction=f"{tag} fact {i}", category="notes", now=at, actor=tag)["memory"]
    ack(op="add", key=m["key"], created=True)
    if i < shared:
        s = svc.add(body=f"Shared fact {i} written by both workers.", introduction=f"shared {i}",
                    category="notes", now=at, actor=tag)
        ack(op="shared", key=s["memory"]["key"], created=s["created"], i=i)
    m = svc.update(key=m["key"], introduction=f"{tag} fact {i} (updated)",
                   body=f"{tag} fact {i}: service {tag}-{i} moved to port {7000 + i}.",
                   now=at, actor=tag)["memory"]
    ack(op="update", key=m["key"], body=m["body"])
"""


def test_two_writers_lose_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "proj")
    tags = ("alpha", "beta")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), tag, str(OWN), str(SHARED)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in tags
    ]
    deadline = time.monotonic() + 60
    while not all((root / f"ready-{t}").exists() for t in tags):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "workers did not start"
        time.sleep(0.05)
    (root / "go").touch()
    acks: dict[str, list[dict]] = {}
    for tag, proc in zip(tags, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        acks[tag] = [json.loads(line) for line in out.splitlines()]
        assert len([a for a in acks[tag] if a["op"] in ("add", "update")]) == 2 * OWN

    svc = MemoryService(find(root))
    docs = dict(svc.store.records().items())  # what the files hold
    assert len(docs) == 2 * OWN + SHARED
    assert len({d["body"] for d in docs.values()}) == len(docs)
    assert {d["processing"] for d in docs.values()} == {"READY"}
    svc.refresh()
    table = svc.store.index.table()
    rows = table.search().select(["key", "processing"]).limit(None).to_arrow().to_pylist()
    counts = collections.Counter(r["key"] for r in rows)
    assert [k for k, n in counts.items() if n != 1] == []  # the index: one row each
    assert counts.keys() == docs.keys() and {r["processing"] for r in rows} == {"READY"}

    for tag in tags:
        updates = [a for a in acks[tag] if a["op"] == "update"]
        for i, a in enumerate(updates):
            d = docs[a["key"]]
            assert a["key"] == key_for(
                f"{tag} fact {i}: service {tag}-{i} listens on port {9000 + i}."
            )
            assert (d["body"], d["introduction"]) == (a["body"], f"{tag} fact {i} (updated)")
            assert [(e["type"], e["actor"]) for e in d["events"]] == [
                ("CREATED", tag),
                ("UPDATED", tag),
            ]
    shared = [a for tag in tags for a in acks[tag] if a["op"] == "shared"]
    for i in range(SHARED):
        both = [a for a in shared if a["i"] == i]
        assert len(both) == 2
        assert sorted(a["created"] for a in both) == [False, True]
        assert (
            both[0]["key"] == both[1]["key"] == key_for(f"Shared fact {i} written by both workers.")
        )
        assert [e["type"] for e in docs[both[0]["key"]]["events"]] == ["CREATED"]

    projection = (root / "NEXUS_MEMORY.md").read_text()
    assert f"\n{2 * OWN + SHARED} open memories.\n" in projection
    assert all(f"`{k}`" in projection for k in docs)
