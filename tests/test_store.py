"""The store: memory files, the record cache that follows them, the LanceDB index over them."""

from __future__ import annotations

import os
import shutil
import statistics
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nxm.record import CONTROL, FIELDS, new_record
from nxm.service import MemoryService
from nxm.store import Store, files, text
from nxm.store.index import COMPACT_EVERY, where
from nxs.context import Context
from nxs.errors import ConflictError, NotFoundError
from nxs.workspace import find
from tests.conftest import committed, make_workspace

NOW = "2026-05-29T10:00:00.000Z"


@pytest.fixture
def svc(ctx: Context) -> MemoryService:
    return ctx.memory


def add(svc: MemoryService, body: str, **kw: Any) -> str:
    kw.setdefault("category", "notes")
    out = svc.add(body=body, introduction=body[:50], now=NOW, actor="t", **kw)
    return out["memory"]["key"]


def fresh(svc: MemoryService) -> MemoryService:
    """A new service on the same workspace: what the next process sees."""
    return MemoryService(find(svc.ws.root))


def embedded(svc: MemoryService, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many records each embedding call of ``svc`` takes from now on."""
    calls: list[int] = []
    real = svc._vectors
    monkeypatch.setattr(svc, "_vectors", lambda rs: calls.append(len(rs)) or real(rs))
    return calls


def fragments(svc: MemoryService) -> int:
    table = svc.store.index.table()
    table.checkout_latest()
    return table.stats()["fragment_stats"]["num_fragments"]


# -- the committed text ----------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    intro=_text.filter(lambda s: s.strip() and "\n" not in s and "\r" not in s),
    body=_text.filter(lambda s: s.strip("\n") == s and s.strip() and "\r" not in s),
    category=st.one_of(st.none(), _text.filter(lambda s: not CONTROL.search(s))),  # plain
    refs=st.lists(_text, max_size=3),
    metadata=st.dictionaries(
        _text, st.one_of(_text, st.integers(-(2**53), 2**53), st.booleans()), max_size=2
    ),
    user=st.one_of(st.none(), _text),
)
def test_a_record_survives_its_file(intro, body, category, refs, metadata, user) -> None:  # noqa: ANN001
    record = new_record(
        key="0123456789abcdef", introduction=intro, body=body, category=category, refs=refs,
        metadata=metadata, user_id=user, billable=True,
    )  # fmt: skip
    back = text.record_of("0123456789abcdef", text.render(record), None, "test")
    for name in text.COMMITTED + ("body",):
        assert back[name] == record[name], name


def test_a_file_written_by_hand_in_plain_yaml_reads() -> None:
    md = (
        b"---\r\nintroduction: 'It''s UTC everywhere'  \r\ncategory: conventions # why\r\n"
        b"refs:\r\n  - src/time.py\r\n  - ENG-7\r\nbillable: true\r\npriority: HIGH\r\n---\r\n"
        b"\r\nAll timestamps are UTC.\r\n"
    )
    got = text.record_of("0123456789abcdef", md, None, "test")
    assert got["introduction"] == "It's UTC everywhere"
    assert got["category"] == "conventions"
    assert got["refs"] == ["src/time.py", "ENG-7"]
    assert got["billable"] is True and got["priority"] == "HIGH"
    assert got["body"] == "All timestamps are UTC."
    assert got["status"] == "open" and got["events"] == [] and got["created"] is None


@pytest.mark.parametrize(
    ("md", "why"),
    [
        (b"introduction: x\n\nbody\n", "no front matter"),
        (b"---\nintroduction: x\nbogus: 1\n---\n\nbody\n", "unknown field 'bogus'"),
        (b"---\ncategory: x\n---\n\nbody\n", "no introduction"),
        (b"---\nintroduction: x\n---\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> a\n", "merge conflict"),
        (b"---\nintroduction: x\nbillable: maybe\n---\n\nbody\n", "billable must be true or false"),
        (b"---\nintroduction: \xff\n---\n\nbody\n", "not UTF-8"),
    ],
)
def test_a_file_that_does_not_read_says_why(md: bytes, why: str) -> None:
    with pytest.raises(text.FileProblem, match=why):
        text.record_of("0123456789abcdef", md, None, "test")


def test_what_the_events_tell_is_not_written_twice(svc: MemoryService) -> None:
    key = add(svc, "Feature flags live in LaunchDarkly.")
    from nxm.lifecycle import feedback

    feedback(svc, key=key, signal="POSITIVE", now="2026-05-30T10:00:00.000Z", actor="bob")
    svc.update(key=key, introduction="Flags in LaunchDarkly", now="2026-05-31T10:00:00.000Z",
               actor="carol")  # fmt: skip
    md = (svc.ws.dir / "memories" / f"{key}.md").read_text()
    for derived in ("created", "updated", "actor", "feedback", "processing", "model", "key"):
        assert f"\n{derived}:" not in md
    shown = svc.show(key=key)["memory"]
    assert shown["created"] == NOW and shown["updated"] == "2026-05-31T10:00:00.000Z"
    assert shown["actor"] == "carol" and shown["feedback"]["POSITIVE"] == 1
    log = (svc.ws.dir / "history" / f"{key}.jsonl").read_bytes().splitlines()
    assert [orjson.loads(x)["type"] for x in log] == ["CREATED", "FEEDBACK_SUBMITTED", "UPDATED"]


def test_a_union_merged_log_keeps_its_lines_and_tells_times_by_their_stamps() -> None:
    log = (
        b"".join(
            text.event_line({"type": t, "at": at, "actor": a})
            for t, at, a in (
                ("CREATED", "2026-01-02", "x"),
                ("UPDATED", "2026-01-05", "ours"),
                ("FEEDBACK_SUBMITTED", "2026-01-09", "r"),
                ("UPDATED", "2026-01-03", "theirs"),
                ("CREATED", "2026-01-01", "y"),
            )
        )
        + b'{"type": "REOPENED", "at": "2026-'
    )  # a line a crash cut short
    got = text.parse_log(log, "test")
    assert [e["actor"] for e in got] == ["x", "ours", "r", "theirs", "y"]
    told = text.derived(got)
    assert (told["created"], told["updated"], told["actor"]) == ("2026-01-01", "2026-01-05", "ours")


# -- following the files ---------------------------------------------------------------------


def test_a_broken_file_is_left_out_and_named_while_the_others_are_served(
    svc: MemoryService,
) -> None:
    good, bad = add(svc, "The API is versioned in the path."), add(svc, "Logs go to Loki.")
    (svc.ws.dir / "memories" / f"{bad}.md").write_text("---\nintroduction: x\n")
    other = fresh(svc)
    assert [m["key"] for m in other.list()["memories"]] == [good]
    with pytest.raises(NotFoundError) as info:
        other.show(key=bad[:6])
    assert info.value.code == "MEMORY_FILE_BROKEN" and "front matter" in info.value.message
    with pytest.raises(NotFoundError):
        other.close(key=bad, now=NOW, actor="t")


def test_the_cache_is_never_believed_over_the_files(svc: MemoryService) -> None:
    keys = sorted([add(svc, "one fact"), add(svc, "two facts")])
    db = svc.store.local.records
    for damage in (None, b"not a database at all", b""):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        if damage is not None:
            db.write_bytes(damage)
        other = fresh(svc)
        assert sorted(m["key"] for m in other.list()["memories"]) == keys
        assert other.search(query="fact", mode="keyword", now=NOW)["total"] == 2


def test_a_cache_row_a_reader_parsed_too_late_is_not_put_back(svc: MemoryService) -> None:
    key = add(svc, "The queue is RabbitMQ.")
    cache = svc.store.cache
    before = cache.idents()[key]
    stale = svc.show(key=key)["memory"]
    svc.update(key=key, introduction="Queue: RabbitMQ", now=NOW, actor="t")
    assert cache.put([(stale, *before, key)], expect={key: before}) == []
    assert svc.show(key=key)["memory"]["introduction"] == "Queue: RabbitMQ"


def test_a_same_size_edit_in_the_same_second_is_seen(svc: MemoryService) -> None:
    key = add(svc, "Port 8080 serves the admin UI.")
    path = svc.ws.dir / "memories" / f"{key}.md"
    assert svc.show(key=key)["memory"]["body"].startswith("Port 8080")
    st_before = path.stat()
    path.write_text(path.read_text().replace("8080", "9090"))  # same size, same inode, at once
    os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))  # even the same mtime
    assert fresh(svc).show(key=key)["memory"]["body"].startswith("Port 9090")


def test_a_write_killed_half_way_lands_whole_at_the_next_command(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = add(svc, "Alpha is the first service."), add(svc, "Beta is the second.")
    before = committed(svc.ws.root)
    real = files._apply
    done: list[str] = []

    def dies_after_one(where: files.Files, change: files.Change, **kw: Any) -> None:
        if done:
            raise KeyboardInterrupt  # as a kill would: nothing after this runs
        done.append(change.key)
        real(where, change, **kw)

    monkeypatch.setattr(files, "_apply", dies_after_one)
    with pytest.raises(KeyboardInterrupt), svc.store.writing() as current:
        svc.store.commit(current, [
            {**current[a], "status": "closed", "events": [*current[a]["events"],
             {"type": "CLOSED", "at": NOW, "actor": "t"}]},
            {**current[b], "status": "closed", "events": [*current[b]["events"],
             {"type": "CLOSED", "at": NOW, "actor": "t"}]},
        ])  # fmt: skip
    assert committed(svc.ws.root) != before  # half of it is on disk
    monkeypatch.setattr(files, "_apply", real)
    other = fresh(svc)
    assert [other.show(key=k)["memory"]["status"] for k in (a, b)] == ["closed", "closed"]
    assert not svc.store.files.journal.exists()
    assert [e["type"] for e in other.show(key=b)["memory"]["events"]] == ["CREATED", "CLOSED"]


def test_switching_branches_embeds_nothing_again(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keys = [add(svc, f"Service {i} is deployed by team {i}.") for i in range(5)]
    svc.search(query="deployed", now=NOW)
    mem = svc.ws.dir / "memories"
    shutil.move(mem, tmp_path / "away")  # "another branch": no memory files
    assert fresh(svc).search(query="deployed", now=NOW)["total"] == 0
    shutil.move(tmp_path / "away", mem)  # and back
    other = fresh(svc)
    calls = embedded(other, monkeypatch)
    got = other.search(query="deployed", mode="semantic", limit=10, now=NOW)["results"]
    assert sorted(r["key"] for r in got) == sorted(keys)
    assert sum(calls) == 0


def test_vectors_lost_from_the_machine_are_embedded_again(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [add(svc, f"Worker {i} drains the {w} queue.") for i, w in enumerate("abc")]
    svc.store.close()
    db = svc.store.local.vectors
    import sqlite3

    with sqlite3.connect(db) as conn:  # someone cleaned part of the cache by hand
        conn.execute("DELETE FROM vectors WHERE text IN (SELECT text FROM vectors LIMIT 2)")
    other = fresh(svc)
    calls = embedded(other, monkeypatch)
    other.store.reindex()  # reads every file again; the index is made anew
    got = other.search(query="drains the queue", mode="semantic", limit=10, now=NOW)["results"]
    assert sorted(r["key"] for r in got) == sorted(keys)
    assert sum(calls) == 2  # the two lost; the one kept was not embedded again


def test_another_clone_on_this_machine_embeds_nothing(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keys = [add(svc, f"Region {r} hosts the {r} shard.") for r in ("eu", "us")]
    clone = tmp_path / "clone"
    shutil.copytree(svc.ws.root, clone)  # a clone, a worktree: another folder, same files
    other = MemoryService(find(clone))
    assert other.store.local.dir != svc.store.local.dir  # its own index ...
    calls = embedded(other, monkeypatch)
    got = other.search(query="hosts the shard", mode="semantic", limit=10, now=NOW)["results"]
    assert sorted(r["key"] for r in got) == sorted(keys)
    assert sum(calls) == 0  # ... from the machine's vectors
    assert [m["processing"] for m in other.list()["memories"]] == ["READY", "READY"]


def test_an_add_looks_at_the_folders_and_the_next_read_at_every_file(svc: MemoryService) -> None:
    a = add(svc, "Deploys go out on Tuesdays.")
    b = add(svc, "The release train leaves at noon.")
    mem = svc.ws.dir / "memories"
    # an editor saving in place (same inode, the folder untouched): the next read sees it
    path = mem / f"{b}.md"
    path.write_text(path.read_text().replace("The release train leaves at noon.", "Trains: 1pm."))
    mark = svc.store.files.mark(mem)
    c = add(fresh(svc), "Hotfixes skip the train.")
    assert svc.store.files.mark(mem) != mark  # the add's own file moved the mark ...
    after = fresh(svc)
    assert after.show(key=b)["memory"]["body"] == "Trains: 1pm."  # ... and a read looks at all
    assert "Trains: 1pm." in (svc.ws.root / "NEXUS_MEMORY.md").read_text()
    # a file removed (as a checkout does): the next add sees it through the folder's mark
    (mem / f"{a}.md").unlink()
    (svc.ws.dir / "history" / f"{a}.jsonl").unlink()
    again = fresh(svc).add(body="Deploys go out on Tuesdays.", introduction="Deploys", now=NOW,
                           actor="t", category="notes")  # fmt: skip
    assert again["created"] is True
    # a body edited in place since: an add of its old text is a new memory, not "stored"
    path = mem / f"{c}.md"
    path.write_text(path.read_text().replace("Hotfixes skip the train.", "Hotfixes ride along."))
    back = fresh(svc).add(body="Hotfixes skip the train.", introduction="Hotfixes", now=NOW,
                          actor="t", category="notes")  # fmt: skip
    assert back["created"] is True and back["memory"]["key"] != c
    assert fresh(svc).show(key=c)["memory"]["body"] == "Hotfixes ride along."
    # a write that changes a memory edited in place since reads it from its file first
    path.write_text(path.read_text().replace("Hotfixes ride along.", "Hotfixes wait."))
    fresh(svc).update(key=c, priority="HIGH", now=NOW, actor="t")
    shown = fresh(svc).show(key=c)["memory"]
    assert (shown["body"], shown["priority"]) == ("Hotfixes wait.", "HIGH")


def test_a_deleted_index_is_made_again_by_the_next_search(svc: MemoryService) -> None:
    key = add(svc, "Invoices are rendered by WeasyPrint.")
    svc.search(query="invoices", now=NOW)
    shutil.rmtree(svc.store.local.lance)
    assert [r["key"] for r in fresh(svc).search(query="WeasyPrint", now=NOW)["results"]] == [key]


def test_reindex_rebuilds_from_the_files(svc: MemoryService) -> None:
    keys = sorted(add(svc, f"fact {i} about widgets") for i in range(3))
    got = svc.store.reindex()
    assert got == {"memories": 3, "problems": 0}
    assert sorted(r["key"] for r in svc.search(query="widgets", now=NOW)["results"]) == keys


def test_a_refused_write_changes_no_file(svc: MemoryService) -> None:
    key = add(svc, "Only main is released.")
    before = committed(svc.ws.root)
    for call in (
        lambda: svc.update(key=key, introduction=key, body="   ", now=NOW, actor="t"),
        lambda: svc.purge(key=key, now=NOW, actor="t"),
        lambda: svc.reopen(key=key, now=NOW, actor="t"),
    ):
        with pytest.raises((ConflictError, Exception)):
            call()
    assert committed(svc.ws.root) == before


def test_a_busy_lock_is_refused_after_a_bounded_wait_naming_its_holder(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    from nxm.store import lock

    add(svc, "first")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from nxm.store.lock import locked\nwith locked(Path(sys.argv[1])):\n"
         "    print('held', flush=True); time.sleep(30)", str(svc.ws.dir)],
        stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == b"held\n"
        monkeypatch.setattr(lock, "WAIT_S", 0.3)
        with pytest.raises(ConflictError) as info:
            svc.add(body="second", introduction="second", now=NOW, actor="t")
        assert info.value.code == "STORE_BUSY"
        assert f"pid {holder.pid}" in info.value.message
        assert [m["key"] for m in svc.list()["memories"]] == [key_of(svc, "first")]
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def key_of(svc: MemoryService, body: str) -> str:
    from nxm.record import key_for

    return key_for(body)


# -- the earlier layout ------------------------------------------------------------------------


def _old_layout(root: Path, records: list[dict[str, Any]]) -> None:
    """A store as the earlier version kept it: the LanceDB table committed in .nxs/memory/."""
    import lancedb
    import pyarrow as pa

    cols = ["key", "hash", "status", "processing", "doc"]
    schema = pa.schema([*(pa.field(c, pa.string()) for c in cols),
                        pa.field("vector", pa.list_(pa.float32(), 4))])  # fmt: skip
    rows = [
        {"key": r["key"], "hash": "", "status": r["status"], "processing": r["processing"],
         "doc": orjson.dumps(r).decode(), "vector": [1.0, 0.0, 0.0, float(i)]}
        for i, r in enumerate(records)
    ]  # fmt: skip
    lancedb.connect(str(root / ".nxs" / "memory")).create_table(
        "memories", pa.Table.from_pylist(rows, schema)
    )
    (root / ".nxs" / "cache").mkdir(exist_ok=True)
    (root / ".nxs" / "cache" / "records.json").write_text("{}")
    (root / ".nxs" / "graph-agent.json").write_bytes(orjson.dumps({
        "entities": {"dana kim": {"name": "Dana Kim", "type": "PERSON", "description": "SRE lead",
                                  "user_id": None, "created": NOW, "updated": NOW, "actor": "t"}},
        "relations": [], "version": 1,
    }))  # fmt: skip


def test_the_earlier_layout_moves_to_files_losing_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path / "old")
    records = [
        new_record(key="a" * 16, introduction="Kept", body="Body one", created=NOW, updated=NOW,
                   actor="ann", processing="READY", model="hash",
                   events=[{"type": "CREATED", "at": NOW, "actor": "ann"}]),
        new_record(key="b" * 16, introduction="Closed one", body="Body two", status="closed",
                   created=NOW, updated="2026-06-01T00:00:00.000Z", actor="bob",
                   feedback={"POSITIVE": 2, "NEGATIVE": 0, "NEUTRAL": 0},
                   events=[{"type": "CREATED", "at": NOW, "actor": "ann"},
                           {"type": "FEEDBACK_SUBMITTED", "at": NOW, "actor": "c",
                            "data": {"signal": "POSITIVE"}},
                           {"type": "FEEDBACK_SUBMITTED", "at": NOW, "actor": "d",
                            "data": {"signal": "POSITIVE"}},
                           {"type": "CLOSED", "at": "2026-06-01T00:00:00.000Z", "actor": "bob",
                            "data": {"from": "open", "to": "closed"}}]),
        new_record(key="c" * 16, introduction="No history", body="Imported long ago",
                   created=NOW, updated=NOW, actor="imp", metadata={"x": [1, 2]}),
    ]  # fmt: skip
    _old_layout(root, records)
    svc = MemoryService(find(root))
    shown = {r["key"]: svc.show(key=r["key"])["memory"] for r in records}
    assert "moved 3 memories" in capfd.readouterr().err
    for r in records:
        for name in FIELDS:
            if name not in ("events", "processing", "model"):
                assert shown[r["key"]][name] == r[name], (r["key"], name)
        assert shown[r["key"]]["events"][: len(r["events"])] == r["events"]
    assert shown["a" * 16]["processing"] == "READY"  # its vector came along
    assert not (root / ".nxs" / "memory").exists() and not (root / ".nxs" / "cache").exists()
    assert (root / ".nxs" / "graph.jsonl").exists()
    assert MemoryService(find(root)).store.records().keys() == shown.keys()


# -- the index -------------------------------------------------------------------------------


def test_single_writes_keep_fragments_bounded(svc: MemoryService) -> None:
    keys = [add(svc, "Fact number 0: the widget-0 service listens on port 8000.")]
    svc.search(query="widget", now=NOW)  # this process searches: its writes keep the index
    seen = []
    for i in range(1, 60):
        keys.append(
            add(svc, f"Fact number {i}: the widget-{i} service listens on port {8000 + i}.")
        )
        seen.append(fragments(svc))
    assert max(seen) < COMPACT_EVERY
    table = svc.store.index.table()
    assert table.count_rows() == 60
    assert sorted(i.columns[0] for i in table.list_indices() if i.index_type == "FTS") == [
        "context", "text",
    ]  # fmt: skip
    for i in (0, 30, 59):
        got = svc.search(query=f"widget-{i}", mode="keyword", limit=1, now=NOW)["results"]
        assert [r["key"] for r in got] == [keys[i]]


def test_writes_of_another_process_are_indexed_by_the_next_search(svc: MemoryService) -> None:
    add(svc, "The first memory.")
    svc.search(query="first", now=NOW)
    other = fresh(svc)
    keys = [other.add(body=f"Batch fact {i}", introduction=f"Batch {i}", now=NOW,
                      actor="t")["memory"]["key"] for i in range(4)]  # fmt: skip
    assert other.store.index._table is None  # that process never opened the index
    got = svc.search(query="Batch fact", mode="keyword", limit=10, now=NOW)["results"]
    assert sorted(r["key"] for r in got) == sorted(keys)


def test_compact_reports_fragments(svc: MemoryService) -> None:
    for i in range(3):
        add(svc, f"note {i}")
    svc.search(query="note", now=NOW)
    got = svc.store.compact()
    assert got["fragments_after"] <= got["fragments_before"] <= 2
    assert svc.store.index.table().count_rows() == 3


def test_compact_on_an_empty_workspace(svc: MemoryService) -> None:
    assert svc.store.compact() == {"fragments_before": 0, "fragments_after": 0}


def test_where_builds_quoted_sql() -> None:
    assert where({}) is None
    assert where({"status": None}) is None
    assert where({"status": "open", "user_id": "O'Brien"}) == (
        "status = 'open' AND user_id = 'O''Brien'"
    )
    assert where({"ref": "ENG-1", "not_expired": NOW}) == (
        f"array_has(refs, 'ENG-1') AND (expires IS NULL OR expires > '{NOW}')"
    )
    assert where({"status_in": ["open", "closed"]}) == "status IN ('open', 'closed')"
    with pytest.raises(KeyError):
        where({"body": "x"})


def test_filter_values_with_quotes_search_safely(svc: MemoryService) -> None:
    k = add(svc, "Tea is brewed by O'Brien.", user_id="O'Brien")
    got = svc.search(query="brewed", mode="keyword", user_id="O'Brien", now=NOW)["results"]
    assert [r["key"] for r in got] == [k]
    assert (
        svc.search(query="brewed", mode="keyword", user_id="x' OR '1'='1", now=NOW)["results"] == []
    )


def test_a_uri_store_keeps_records_in_its_table_and_writes_no_memory_file(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "proj")
    cfg = root / ".nxs" / "config.toml"
    store_dir = tmp_path / "remote"
    cfg.write_text(
        cfg.read_text().replace("[memory]\n", f'[memory]\nstore = "file://{store_dir}"\n')
    )
    from nxs.trust import trust

    trust(root, find(root).section("memory"))  # a store outside: the user confirms it
    svc = MemoryService(find(root))
    assert svc.store.remote
    k = add(svc, "kept remotely")
    assert not (root / ".nxs" / "memories").exists()
    assert (store_dir / "memories.lance").is_dir()
    again = MemoryService(find(root))
    assert list(again.store.records()) == [k]
    assert again.search(query="remotely", mode="keyword", now=NOW)["results"][0]["key"] == k


def test_quotes_in_a_keyword_query_are_plain_characters(svc: MemoryService) -> None:
    k = add(svc, "The widget service listens on port 8000.")
    for query in ("widget", '"widget"', '"widget', 'widget "port 8000"'):
        got = svc.search(query=query, mode="keyword", now=NOW)["results"]
        assert [r["key"] for r in got] == [k], query


def test_keyword_scores_do_not_depend_on_when_a_memory_was_indexed(svc: MemoryService) -> None:
    keys = [add(svc, f"{name} widget gauge") for name in ("alpha", "beta", "gamma")]
    add(svc, "delta other thing")
    got = svc.search(query="widget", mode="keyword", now=NOW)["results"]
    assert sorted(r["key"] for r in got) == sorted(keys)
    assert len({r["score"] for r in got}) == 1  # same length, same term frequency: same BM25


def _lancedb_semantic(svc: MemoryService, vector: Any, filters: dict, limit: int) -> list:
    """LanceDB's own flat cosine search: what `Index.semantic` must return."""
    table = svc.store.index.table()
    table.checkout_latest()
    q = table.search(vector.tolist(), vector_column_name="vector").distance_type("cosine")
    cond = where({**filters, "processing": "READY"})
    got = q.where(cond, prefilter=True).limit(limit).select(["key", "_distance"]).to_arrow()
    return [(k, 1.0 - d) for k, d in zip(got.column("key").to_pylist(),
                                         got.column("_distance").to_pylist(), strict=True)]  # fmt: skip


def _same_ranking(got: list, want: list) -> None:
    """The same scores in the same order; only keys of equal scores may trade places."""
    assert len(got) == len(want)
    wanted = dict(want)
    for (k1, s1), (_, s2) in zip(got, want, strict=True):
        assert s1 == pytest.approx(s2, abs=1e-6)
        if k1 in wanted:
            assert wanted[k1] == pytest.approx(s1, abs=1e-6)
        else:
            assert s1 == pytest.approx(want[-1][1], abs=1e-6)


def test_search_returns_what_lancedb_returns_for_every_filter(svc: MemoryService) -> None:
    services = ("billing", "ledger", "auth", "search", "export")
    keys = [
        add(svc, f"The {services[i % 5]} service retries {i % 3} times; owner {i % 7}, note {i}.",
            category=("notes", "decisions", "gotchas")[i % 3],
            scope="item" if i % 4 == 0 else "project",
            refs=[f"ENG-{i % 6}", "shared"] if i % 4 == 0 else None,
            priority=("LOW", "MEDIUM", "HIGH")[i % 3],
            layer="TASK" if i % 5 == 0 else None,
            ttl_days=(1 if i % 10 == 0 else 30) if i % 5 == 0 else None,
            user_id=None if i % 2 else f"user-{i % 3}",
            agent_id=f"agent-{i % 2}",
            session_id=f"s-{i % 4}" if i % 3 else None)
        for i in range(40)
    ]  # fmt: skip
    for k in keys[1:8:3]:
        svc.close(key=k, now=NOW, actor="t")
    for k in keys[2:9:3]:
        svc.forget(key=k, now=NOW, actor="t")
    text = svc.store.cache.texts([keys[3]])[keys[3]]
    with svc.store.embeddings._db() as conn:  # one memory without a vector: never a hit
        conn.execute("DELETE FROM vectors WHERE text = ?", (text,))
    with svc.store.cache.transaction() as conn:
        conn.execute("UPDATE records SET ready = 0 WHERE key = ?", (keys[3],))
        conn.execute("INSERT OR REPLACE INTO pending VALUES (?, 999)", (keys[3],))
    svc.store.refresh()
    later = "2026-06-05T10:00:00.000Z"  # past the one-day TASK memories' expiry
    cases = [
        {}, {"status": "open", "not_expired": NOW}, {"status": "open", "not_expired": later},
        {"status": "closed"}, {"status_in": ["open", "forgotten"]},
        {"category": "decisions", "priority": "HIGH"}, {"scope": "item", "ref": "ENG-2"},
        {"ref": "shared", "not_expired": later}, {"ref": "ENG-99"}, {"user_id": "user-1"},
        {"agent_id": "agent-0", "session_id": "s-2"}, {"layer": "TASK", "status": "open"},
        {"processing": "PENDING"}, {"user_id": "x' OR '1'='1"},
    ]  # fmt: skip
    index = svc.store.index
    embed = svc.embedder()
    for query in ("billing retries", "who owns the ledger", "note 17"):
        vector = embed.embed([query])[0]
        for filters in cases:
            every = [s for _, s in _lancedb_semantic(svc, vector, filters, 10_000)]
            for limit in (1, 5, 60):
                got, spread = index.semantic(vector, filters, limit)
                _same_ranking(got, _lancedb_semantic(svc, vector, filters, limit))
                if every:  # the spread is over every record the filters allow
                    assert spread == pytest.approx(
                        (statistics.fmean(every), statistics.pstdev(every)), abs=1e-5
                    )
                else:
                    assert spread is None
            rows = (
                index.table().search().where(where(filters))
                if where(filters)
                else index.table().search()
            )
            allowed = set(rows.select(["key"]).limit(None).to_arrow().column("key").to_pylist())
            assert index.passing(set(keys), filters) == allowed, filters
    assert keys[3] not in dict(index.semantic(vector, {}, 60)[0])
    table = index.table()
    for query in ("billing retries", "owner note", "ledger ENG"):
        for filters in cases:
            for limit in (1, 5, 60):
                got = index.keywords(query, filters, limit, ("text", "context"))
                for column in ("text", "context"):
                    q = table.search(query, query_type="fts", fts_columns=column).limit(limit)
                    if where(filters):
                        q = q.where(where(filters), prefilter=True)
                    want = q.select(["key", "_score"]).to_arrow()
                    assert got[column] == list(
                        zip(want["key"].to_pylist(), want["_score"].to_pylist(), strict=True)
                    ), (query, filters, limit, column)


def test_records_of_a_new_workspace_are_empty_and_no_index_is_made(svc: MemoryService) -> None:
    store = Store(find(svc.ws.root))
    assert list(store.records()) == []
    assert not store.local.lance.exists()


def test_a_long_lived_store_sees_every_edit(svc: MemoryService) -> None:
    keys = [add(svc, f"Watched fact {i}.") for i in range(3)]
    store = fresh(svc).store
    assert sorted(store.records()) == sorted(keys)
    path = svc.ws.dir / "memories" / f"{keys[0]}.md"
    path.write_text(path.read_text().replace("Watched fact 0.", "Watched fact zero."))
    (svc.ws.dir / "memories" / f"{keys[1]}.md").unlink()
    got = store.records()
    assert got[keys[0]]["body"] == "Watched fact zero." and keys[1] not in got
    shutil.rmtree(svc.ws.dir / "memories")  # the folder itself goes
    assert list(store.records()) == []


def test_keys_and_prefixes_are_looked_up_in_the_key_index_as_iteration_finds_them(
    svc: MemoryService,
) -> None:
    keys = [add(svc, f"prefix body {i}") for i in range(12)]
    records = fresh(svc).store.records()
    every = list(records)
    for prefix in {k[:n] for k in keys for n in (1, 2)} | {"", "zz", keys[0]}:
        assert records.starting(prefix) == [k for k in every if k.startswith(prefix)]
    assert keys[0] in records and keys[0][:-1] not in records and "zz" not in records
    # A write's own changes count as iteration counts them.
    records.changes[keys[1]] = None
    records.changes["f" * 16] = {**records[keys[2]], "key": "f" * 16}
    every = list(records)
    for prefix in ("", "f", keys[1][:3], keys[2][:1]):
        assert records.starting(prefix) == [k for k in every if k.startswith(prefix)]
    assert keys[1] not in records and "f" * 16 in records
    # Past a few lookups every key is read at once: the answers stay the same.
    looks = [k for k in keys for _ in range(3)] + [k[:-1] for k in keys]
    fresh_records = fresh(svc).store.records()
    assert [k in fresh_records for k in looks] == [k in keys for k in looks]


def test_the_counts_a_list_page_gives_follow_every_write_the_cache_sees(
    svc: MemoryService,
) -> None:
    def check() -> None:
        store = fresh(svc).store
        store.sync()
        cache = store.cache
        counted = dict(
            cache.query("SELECT status, COUNT(*) FROM records WHERE good = 1 GROUP BY status")
        )
        for status in ("open", "closed", "forgotten", "all"):
            want = sum(counted.values()) if status == "all" else counted.get(status, 0)
            assert cache.page(status, 0, 5)[1] == want, status

    keys = [add(svc, f"counted body {i}") for i in range(6)]
    check()
    svc.close(key=keys[0], now=NOW, actor="t")
    svc.forget(key=keys[1], now=NOW, actor="t")
    svc.forget(key=keys[2], now=NOW, actor="t")
    svc.purge(key=keys[2], now=NOW, actor="t")
    check()
    memories = svc.ws.dir / "memories"
    (memories / f"{keys[3]}.md").write_text("---\nintroduction: x\n")  # broken: not counted
    check()
    text = (memories / f"{keys[4]}.md").read_text()
    (memories / f"{keys[4]}.md").write_text(text.replace("status: open", "status: closed"))
    (memories / f"{keys[5]}.md").unlink()  # gone, as with a checkout
    check()
    svc.reopen(key=keys[0], now=NOW, actor="t")
    check()


def test_a_new_cache_file_is_made_in_place_while_another_process_holds_it(tmp_path: Path) -> None:
    """Two commands starting at once both find the cache file without tables: the second must
    make the tables in the file the first holds open, never remove it (in WAL mode that lost
    the first one's tables: "no such table: meta")."""
    import sqlite3

    from nxm.store.cache import Cache

    path = tmp_path / "records.db"
    first = sqlite3.connect(path, isolation_level=None)  # the other process: opened, no tables
    first.execute("PRAGMA journal_mode=WAL")
    inode = path.stat().st_ino
    cache = Cache(path, "m", None)  # type: ignore[arg-type]
    assert cache.meta("version") is not None
    assert path.stat().st_ino == inode  # the same file: not removed and made again
    assert first.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
    first.close()
    cache.close()
