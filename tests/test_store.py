"""The LanceDB store: compaction, the read cache, filters, vectors."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxm.service import MemoryService
from nxm.store import COMPACT_EVERY, Snapshot, Store, where
from nxs.context import Context
from nxs.workspace import find

NOW = "2026-05-29T10:00:00.000Z"


@pytest.fixture
def svc(ctx: Context) -> MemoryService:
    return ctx.memory


def add(svc: MemoryService, body: str, **kw: object) -> str:
    kw.setdefault("category", "notes")
    out = svc.add(body=body, introduction=body[:50], now=NOW, actor="t", **kw)
    return out["memory"]["key"]


def fragments(svc: MemoryService) -> int:
    table = svc.store.table()
    table.checkout_latest()
    return table.stats()["fragment_stats"]["num_fragments"]


def test_single_writes_keep_fragments_bounded(svc: MemoryService) -> None:
    seen = []
    keys = []
    for i in range(60):
        keys.append(
            add(svc, f"Fact number {i}: the widget-{i} service listens on port {8000 + i}.")
        )
        seen.append(fragments(svc))
    assert max(seen) < COMPACT_EVERY
    assert min(seen[COMPACT_EVERY:]) < COMPACT_EVERY // 2  # it did compact, more than once
    table = svc.store.table()
    assert table.count_rows() == 60
    assert sorted(i.columns[0] for i in table.list_indices() if i.index_type == "FTS") == [
        "context",
        "text",
    ]
    # rows written before and after the compactions are all found by the full-text index
    for i in (0, 30, 59):
        got = svc.search(query=f"widget-{i}", mode="keyword", limit=1, now=NOW)["results"]
        assert [r["key"] for r in got] == [keys[i]]


def test_compact_reports_fragments(svc: MemoryService) -> None:
    for i in range(3):
        add(svc, f"note {i}")
    got = svc.store.compact()
    # small tables fold every write into the index (optimize), so fragments never pile up
    assert got["fragments_before"] <= 2
    assert got["fragments_after"] <= got["fragments_before"]
    again = svc.store.compact()
    assert again["fragments_before"] == got["fragments_after"]
    assert again["fragments_after"] <= again["fragments_before"]
    assert svc.store.table().count_rows() == 3


def test_compact_on_an_empty_workspace(svc: MemoryService) -> None:
    assert svc.store.compact() == {"fragments_before": 0, "fragments_after": 0}


def test_read_cache_matches_lancedb_after_writes(svc: MemoryService) -> None:
    a = add(svc, "alpha")
    b = add(svc, "beta")
    svc.close(key=a, now=NOW, actor="t")
    svc.forget(key=b, now=NOW, actor="t")
    svc.purge(key=b, now=NOW, actor="t")
    cached = orjson.loads(svc.store.cache_path.read_bytes())
    assert cached["version"] == 1
    assert cached["records"] == [svc.store._scan()[a]]
    assert [r["key"] for r in cached["records"]] == [a]


def test_missing_or_corrupt_cache_is_rebuilt_from_lancedb(svc: MemoryService) -> None:
    keys = sorted([add(svc, "one"), add(svc, "two")])
    scanned = svc.store._scan()
    expected = orjson.loads(svc.store.cache_path.read_bytes())
    svc.store.cache_path.unlink()
    fresh = Store(find(svc.ws.root))
    assert sorted(fresh.records()) == keys
    assert fresh.records() == scanned
    assert orjson.loads(svc.store.cache_path.read_bytes()) == expected
    svc.store.cache_path.write_bytes(b'{"records": [')
    assert Store(find(svc.ws.root)).records() == scanned
    assert orjson.loads(svc.store.cache_path.read_bytes()) == expected


def test_a_writer_refreshes_a_stale_cache_from_lancedb(svc: MemoryService) -> None:
    """A deleted cache (a crash between commit and cache write) is rebuilt inside the lock."""
    a = add(svc, "one")
    svc.store.cache_path.unlink()
    b = add(svc, "two")
    assert sorted(orjson.loads(svc.store.cache_path.read_bytes())["records"], key=str) == sorted(
        svc.store._scan().values(), key=str
    )
    assert sorted(svc.store.records()) == sorted([a, b])


def test_records_of_a_workspace_without_a_table_is_empty_and_creates_nothing(
    svc: MemoryService,
) -> None:
    assert svc.store.records() == {}
    assert not (svc.ws.dir / "memory").exists()
    assert not svc.store.cache_path.exists()


def test_commit_without_changes_makes_no_version(svc: MemoryService) -> None:
    add(svc, "one")
    table = svc.store.table()
    table.checkout_latest()
    version = table.version
    with svc.store.writing() as current:
        svc.store.commit(current, [], None, [])
    table.checkout_latest()
    assert table.version == version


def test_vectors_are_returned_for_ready_records_only(svc: MemoryService) -> None:
    a = add(svc, "one")
    vec = svc.store.vectors([a, "missing"])
    assert list(vec) == [a]
    assert len(vec[a]) == svc.store.table_dim()
    with svc.store.writing() as current:
        pending = {**current[a], "processing": "PENDING"}
        svc.store.commit(current, [pending], {})
    assert svc.store.vectors([a]) == {}
    assert svc.store.records()[a]["processing"] == "PENDING"


def test_an_update_keeps_the_stored_vector_when_the_text_is_unchanged(svc: MemoryService) -> None:
    a = add(svc, "one")
    before = svc.store.vectors([a])[a]
    svc.close(key=a, now=NOW, actor="t")
    assert svc.store.vectors([a])[a] == before
    assert svc.store.records()[a]["processing"] == "READY"


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


def test_a_uri_store_skips_the_read_cache(tmp_path: Path) -> None:
    from conftest import make_workspace

    root = make_workspace(tmp_path / "proj")
    cfg = root / ".nxs" / "config.toml"
    store_dir = tmp_path / "remote"
    text = cfg.read_text().replace("[memory]\n", f'[memory]\nstore = "file://{store_dir}"\n')
    cfg.write_text(text)
    svc = MemoryService(find(root))
    assert svc.store.local is False
    k = add(svc, "kept remotely")
    assert not svc.store.cache_path.exists()
    assert (store_dir / "memories.lance").is_dir()
    assert list(MemoryService(find(root)).store.records()) == [k]


def test_quotes_in_a_keyword_query_are_plain_characters(svc: MemoryService) -> None:
    k = add(svc, "The widget service listens on port 8000.")
    plain = svc.search(query="widget", mode="keyword", now=NOW)["results"]
    assert [r["key"] for r in plain] == [k]
    for query in ('"widget"', '"widget', 'widget "port 8000"'):
        got = svc.search(query=query, mode="keyword", now=NOW)["results"]
        assert [r["key"] for r in got] == [k], query


def test_keyword_scores_do_not_depend_on_when_a_memory_was_indexed(svc: MemoryService) -> None:
    keys = [add(svc, f"{name} widget gauge") for name in ("alpha", "beta", "gamma")]
    add(svc, "delta other thing")
    got = svc.search(query="widget", mode="keyword", now=NOW)["results"]
    assert sorted(r["key"] for r in got) == sorted(keys)
    assert len({r["score"] for r in got}) == 1  # same length, same term frequency: same BM25


def _lancedb_semantic(svc: MemoryService, vector: object, filters: dict, limit: int) -> list:
    """LanceDB's own flat cosine search: what `Store.semantic` must return."""
    table = svc.store.table()
    table.checkout_latest()
    q = table.search(vector.tolist(), vector_column_name="vector").distance_type("cosine")
    cond = where({**filters, "processing": "READY"})
    got = q.where(cond, prefilter=True).limit(limit).select(["key", "_distance"]).to_arrow()
    return [
        (k, 1.0 - d)
        for k, d in zip(
            got.column("key").to_pylist(), got.column("_distance").to_pylist(), strict=True
        )
    ]


def _same_ranking(got: list, want: list) -> None:
    """The same scores in the same order; only keys of equal scores (up to float rounding)
    may trade places, or take each other's place at the cut."""
    assert len(got) == len(want)
    wanted = dict(want)
    for (k1, s1), (_, s2) in zip(got, want, strict=True):
        assert s1 == pytest.approx(s2, abs=1e-6)
        if k1 in wanted:
            assert wanted[k1] == pytest.approx(s1, abs=1e-6)
        else:
            assert s1 == pytest.approx(want[-1][1], abs=1e-6)


def test_a_writer_patches_the_vectors_it_holds(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After its own writes a process appends to the vectors it holds instead of reading them
    all again; its searches equal those of a process that reads them afresh."""
    from nxm import store

    monkeypatch.setattr(store, "SPARE_ROWS", 6)  # room for 6 rows past the 4 read below
    keys = [add(svc, f"The billing service retries {i} times.", user_id="u") for i in range(4)]
    vector = svc.embedder().embed(["billing retries"])[0]
    cases = [{}, {"status": "open"}, {"user_id": "u"}, {"status": "forgotten"}]

    def check() -> None:
        fresh = MemoryService(find(svc.ws.root)).store
        for filters in cases:
            for limit in (1, 3, 20):
                got = svc.store.semantic(vector, filters, limit)
                want = fresh.semantic(vector, filters, limit)
                _same_ranking(got[0], want[0])
                assert got[1] == pytest.approx(want[1], abs=1e-6)

    check()
    matrix = svc.store._vectors_at[1].matrix  # shared by the vectors of every later version
    steps = [
        lambda: add(svc, "The ledger service retries twice.", user_id="u"),  # appended
        lambda: svc.update(key=keys[0], introduction="x", body="Billing never retries.", now=NOW, actor="t"),
        lambda: svc.close(key=keys[1], now=NOW, actor="t"),  # same vector, new status
        lambda: svc.forget(key=keys[2], now=NOW, actor="t"),
        lambda: svc.purge(key=keys[2], now=NOW, actor="t"),  # deleted: no row appended
    ]  # fmt: skip
    for step in steps:
        step()
        check()
        assert svc.store._vectors_at[1].matrix is matrix  # patched, not read again
    held = svc.store._vectors_at[1]
    assert held.size == 4 + 4 and held.live().sum() == 4
    add(svc, "The auth service retries never.")  # 9th and 10th rows: room for them still
    add(svc, "The export service retries once.")
    check()
    assert svc.store._vectors_at[1].matrix is matrix and svc.store._vectors_at[1].size == 10
    assert held.size == 8 and held.live().sum() == 4  # an older version's vectors stay as they were
    add(svc, "The search service retries thrice.")  # no room: read again, without dead rows
    check()
    again = svc.store._vectors_at[1]
    assert again.matrix is not matrix and again.size == again.live().sum() == 7


def test_semantic_search_returns_what_lancedb_returns_for_every_filter(
    svc: MemoryService,
) -> None:
    services = ("billing", "ledger", "auth", "search", "export")
    keys = [
        add(
            svc,
            f"The {services[i % 5]} service retries {i % 3} times; owner {i % 7}, note {i}.",
            category=("notes", "decisions", "gotchas")[i % 3],
            scope="item" if i % 4 == 0 else "project",
            refs=[f"ENG-{i % 6}", "shared"] if i % 4 == 0 else None,
            priority=("LOW", "MEDIUM", "HIGH")[i % 3],
            layer="TASK" if i % 5 == 0 else None,
            ttl_days=(1 if i % 10 == 0 else 30) if i % 5 == 0 else None,
            user_id=None if i % 2 else f"user-{i % 3}",
            agent_id=f"agent-{i % 2}",
            session_id=f"s-{i % 4}" if i % 3 else None,
        )
        for i in range(40)
    ]
    for k in keys[1:8:3]:
        svc.close(key=k, now=NOW, actor="t")
    for k in keys[2:9:3]:
        svc.forget(key=k, now=NOW, actor="t")
    with svc.store.writing() as current:  # one record without a vector: never a semantic hit
        svc.store.commit(current, [{**current[keys[3]], "processing": "PENDING"}], {})
    later = "2026-06-05T10:00:00.000Z"  # past the one-day TASK memories' expiry
    cases = [
        {},
        {"status": "open", "not_expired": NOW},
        {"status": "open", "not_expired": later},
        {"status": "closed"},
        {"status_in": ["open", "forgotten"]},
        {"category": "decisions", "priority": "HIGH"},
        {"scope": "item", "ref": "ENG-2"},
        {"ref": "shared", "not_expired": later},
        {"ref": "ENG-99"},
        {"user_id": "user-1"},
        {"agent_id": "agent-0", "session_id": "s-2"},
        {"layer": "TASK", "status": "open"},
        {"processing": "PENDING"},
        {"user_id": "x' OR '1'='1"},
    ]
    embed = svc.embedder()
    for query in ("billing retries", "who owns the ledger", "note 17"):
        vector = embed.embed([query])[0]
        for filters in cases:
            every = [s for _, s in _lancedb_semantic(svc, vector, filters, 10_000)]
            for limit in (1, 5, 60):
                got, spread = svc.store.semantic(vector, filters, limit)
                want = _lancedb_semantic(svc, vector, filters, limit)
                _same_ranking(got, want)
                # the spread is over every record the filters allow, not only the hits
                if every:
                    assert spread == pytest.approx(
                        (statistics.fmean(every), statistics.pstdev(every)), abs=1e-5
                    )
                else:
                    assert spread is None
    assert svc.store.semantic(vector, {"status": "open"}, 60)[0]  # the cases were not all empty
    assert keys[3] not in dict(svc.store.semantic(vector, {}, 60)[0])

    # keyword search (LanceDB's async queries, all at once) equals its sync `search` filtered
    # before the search, for every filter, both columns
    table = svc.store.table()
    for query in ("billing retries", "owner note", "ledger ENG"):
        for filters in cases:
            for limit in (1, 5, 60):
                got = svc.store.keywords(query, filters, limit, ("text", "context"))
                for column in ("text", "context"):
                    q = table.search(query, query_type="fts", fts_columns=column).limit(limit)
                    if where(filters):
                        q = q.where(where(filters), prefilter=True)
                    want = q.select(["key", "_score"]).to_arrow()
                    assert got[column] == list(
                        zip(want["key"].to_pylist(), want["_score"].to_pylist(), strict=True)
                    ), (query, filters, limit, column)
    assert svc.store.keywords("ledger", {"status": "closed"}, 60, ("text",))["text"]  # not empty


def test_vectors_streamed_in_another_order_than_their_keys_rank_the_same(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lancedb.query
    import pyarrow as pa

    words = "amber basil cedar delta ember fjord garnet harbor iris juniper kestrel lumen".split()
    for i, word in enumerate(words):
        add(svc, f"The ledger {'billing ' * (i % 4)}note about {word} and {words[i - 5]}.")
    vector = svc.embedder().embed(["ledger billing"])[0]
    want, spread = svc.store.semantic(vector, {}, 12)
    real = lancedb.query.LanceEmptyQueryBuilder.to_batches

    def backwards(self: object, *args: object, **kwargs: object) -> pa.RecordBatchReader:
        got = real(self, *args, **kwargs)
        if "vector" not in got.schema.names:  # the keys and filter columns: as they come
            return got
        rows = [b.take(pa.array(range(b.num_rows - 1, -1, -1))) for b in got]
        return pa.RecordBatchReader.from_batches(got.schema, rows[::-1])

    monkeypatch.setattr(lancedb.query.LanceEmptyQueryBuilder, "to_batches", backwards)
    fresh = Store(find(svc.ws.root))  # reads the vectors anew, in the other order
    got, same = fresh.semantic(vector, {}, 12)
    _same_ranking(got, want)
    assert same == pytest.approx(spread)
    assert len({s for _, s in want}) >= 10  # most differ: a key given another's vector shows


def test_semantic_search_sees_every_process_writes(workspace: Path) -> None:
    reader, writer = MemoryService(find(workspace)), MemoryService(find(workspace))
    a = add(writer, "The ledger closes the books at midnight UTC.")
    vector = reader.embedder().embed(["ledger books midnight"])[0]
    assert [k for k, _ in reader.store.semantic(vector, {"status": "open"}, 5)[0]] == [a]
    b = add(writer, "The ledger books are audited every midnight.")
    assert sorted(k for k, _ in reader.store.semantic(vector, {"status": "open"}, 5)[0]) == sorted(
        [a, b]
    )
    writer.forget(key=a, now=NOW, actor="t")
    assert [k for k, _ in reader.store.semantic(vector, {"status": "open"}, 5)[0]] == [b]
    writer.purge(key=a, now=NOW, actor="t")
    assert [k for k, _ in reader.store.semantic(vector, {}, 5)[0]] == [b]
    writer.store.compact()
    assert [k for k, _ in reader.store.semantic(vector, {}, 5)[0]] == [b]
    got = reader.search(query="ledger books midnight", mode="semantic", now=NOW)["results"]
    assert [r["key"] for r in got] == [b]


def test_a_process_starts_its_next_write_from_the_records_it_wrote(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = add(svc, "The ledger closes at midnight.")
    monkeypatch.setattr(svc.store, "_read_cache", lambda: pytest.fail("read cache parsed again"))
    monkeypatch.setattr(svc.store, "_scan", lambda: pytest.fail("table scanned again"))
    b = add(svc, "The billing API retries three times.")
    svc.close(key=a, now=NOW, actor="t")
    got = svc.search(query="ledger", mode="keyword", status="closed", now=NOW)["results"]
    assert [r["key"] for r in got] == [a]
    monkeypatch.undo()
    fresh = MemoryService(find(svc.ws.root)).store
    assert sorted(fresh.records()) == sorted([a, b])
    assert fresh.records()[a]["status"] == "closed"
    assert fresh._scan() == fresh.records()


def test_a_write_after_another_process_wrote_starts_from_its_records(workspace: Path) -> None:
    one, two = MemoryService(find(workspace)), MemoryService(find(workspace))
    a = add(one, "The ledger closes at midnight.")
    b = add(two, "The billing API retries three times.")
    two.close(key=a, now=NOW, actor="t")
    c = add(one, "The auth gateway rotates keys weekly.")
    fresh = MemoryService(find(workspace)).store.records()
    assert sorted(fresh) == sorted([a, b, c])
    assert fresh[a]["status"] == "closed"
    assert one.store.snapshot() == fresh
    one.forget(key=b, now=NOW, actor="t")
    assert two.store.snapshot()[b]["status"] == "forgotten"
    assert two.store.records()[a]["status"] == "closed"


def test_a_search_reads_only_the_records_it_returns_and_ranks_as_with_every_record(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nxm.lifecycle import feedback

    said = [
        ("Where did you buy the snake ledger?", "chat"),
        ("In Paris, a year ago, with the ledger.", "chat"),
        ("Does the ledger bite?", "chat"),
        ("The ledger closes at midnight.", None),
        ("The billing ledger retries three times.", None),
        ("Ledger exports run nightly.", "ops"),
        ("The ledger export failed twice.", "ops"),
        ("The ledger is audited yearly.", None),
    ]
    keys = [
        svc.add(
            body=body, introduction=body[:40], now=f"2026-01-01T00:00:{i:02d}.000Z", actor="t",
            session_id=session,
        )["memory"]["key"]
        for i, (body, session) in enumerate(said)
    ]  # fmt: skip
    for key, signal in [(keys[3], "NEGATIVE"), (keys[4], "POSITIVE"), (keys[4], "POSITIVE")]:
        feedback(svc, key=key, signal=signal, now=NOW, actor="t")
    reader = MemoryService(find(svc.ws.root))  # another process: reads the read cache file
    snapshot = reader.store.snapshot()
    assert snapshot.brief[keys[0]] == {"session_id": "chat", "created": "2026-01-01T00:00:00.000Z"}
    assert snapshot.brief[keys[4]] == {"feedback": {"POSITIVE": 2, "NEGATIVE": 0, "NEUTRAL": 0}}
    assert snapshot.brief[keys[3]]["feedback"]["NEGATIVE"] == 1 and not snapshot.brief[keys[7]]
    read: list[str] = []
    parse = snapshot._read
    monkeypatch.setattr(snapshot, "_read", lambda key: read.append(key) or parse(key))
    every = Snapshot.of(reader.store.records())  # every record as a dict, as search held them
    for mode in ("hybrid", "keyword", "semantic"):
        read.clear()
        got = reader.search(query="ledger snake", mode=mode, limit=4, now=NOW)
        assert read == [r["key"] for r in got["results"]] and len(read) == 4
        with monkeypatch.context() as m:
            m.setattr(reader.store, "snapshot", lambda: every)
            assert reader.search(query="ledger snake", mode=mode, limit=4, now=NOW) == got


def test_a_snapshot_is_kept_while_the_read_cache_is_unchanged(workspace: Path) -> None:
    one, two = MemoryService(find(workspace)), MemoryService(find(workspace))
    a = add(one, "The ledger closes at midnight.")
    first = two.store.snapshot()
    assert two.store.snapshot() is first and first[a]["status"] == "open"
    one.close(key=a, now=NOW, actor="t")  # another process replaces the file
    assert first[a]["status"] == "open"  # an old snapshot still reads the state it was made of
    second = two.store.snapshot()
    assert second is not first and second[a]["status"] == "closed"
    assert dict(second) == two.store._scan()
    two.store.cache_path.write_bytes(b'{"records":[\n{"key": "damaged"')
    third = two.store.snapshot()  # a damaged file is rebuilt from the table, then read
    assert dict(third) == two.store._scan() and third.sig == two.store._cache_sig()


def test_the_read_cache_is_one_json_document_read_a_line_at_a_time(svc: MemoryService) -> None:
    keys = [add(svc, f"note {i}: the cache keeps every record") for i in range(3)]
    raw = svc.store.cache_path.read_bytes()
    assert sorted(r["key"] for r in orjson.loads(raw)["records"]) == sorted(keys)
    assert raw.count(b"\n") == 5  # head, a line per record, tail
    whole = svc.store._read_cache()
    assert whole == {r["key"]: r for r in orjson.loads(raw)["records"]}
    lines = raw.splitlines(keepends=True)
    damaged = [
        raw[:-20],  # cut short
        b"".join(lines[:-1]),  # no tail
        b"".join([*lines[:-2], lines[-2].replace(b"\n", b",\n"), lines[-1]]),  # comma, no record
        b"".join([lines[0], lines[1].replace(b",\n", b"\n"), *lines[2:]]),  # a comma missing
        raw + b"{}",  # bytes after the end
        b"".join([lines[0], b"[1],\n", *lines[2:]]),  # not a record
    ]
    for bad in damaged:
        svc.store.cache_path.write_bytes(bad)
        assert svc.store._read_cache() is None, bad
    svc.store.cache_path.write_bytes(orjson.dumps(orjson.loads(raw)))  # one line: read whole
    assert svc.store._read_cache() == whole
    svc.store.cache_path.write_bytes(b'{"records":[\n],"version":1}\n')
    assert svc.store._read_cache() == {}


def test_a_batch_is_folded_into_the_index_in_a_large_table(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nxm.store as store_module

    monkeypatch.setattr(store_module, "FOLD_EVERY_WRITE_UP_TO", 0)  # as if the table were large
    monkeypatch.setattr(store_module, "UNINDEXED_MAX", 5)
    add(svc, "the first memory makes the index")

    def unindexed() -> int:
        table = svc.store.table()
        table.checkout_latest()
        names = [i.name for i in table.list_indices() if i.index_type == "FTS"]
        return max(table.index_stats(n).num_unindexed_rows for n in names)

    for i in range(3):  # single writes wait for COMPACT_EVERY fragments
        add(svc, f"single write {i} of a gauge")
    assert unindexed() == 3
    records = [
        {**r, "key": f"{i:016x}", "body": f"batch row {i} of a widget", "processing": "PENDING"}
        for i, r in enumerate([next(iter(svc.store.records().values()))] * 8)
    ]
    with svc.store.writing() as current:
        svc.store.commit(current, records, {})
    assert svc.store.maintainer is not None  # a large table is folded by a child (nxm.maintain)
    assert svc.store.maintainer.wait(timeout=120) == 0
    assert unindexed() == 0
    got = svc.search(query="widget", mode="keyword", limit=20, now=NOW)["results"]
    assert len(got) == 8


def test_a_single_write_outside_the_index_is_found_by_keyword_search(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above `FOLD_EVERY_WRITE_UP_TO` rows a single write waits for the next fold; until then
    the full-text search scans it, so it is found at once (and ranked first for its own words)."""
    import nxm.store as store_module

    monkeypatch.setattr(store_module, "FOLD_EVERY_WRITE_UP_TO", 0)  # as if the table were large
    for i in range(5):
        add(svc, f"The gateway-{i} proxy retries upstream calls {i + 2} times.")
    key = add(svc, "The zeppelin backlog is drained by the nightly janitor job.")
    table = svc.store.table()
    table.checkout_latest()
    names = [i.name for i in table.list_indices() if i.index_type == "FTS"]
    assert max(table.index_stats(n).num_unindexed_rows for n in names) > 0
    for query in ("zeppelin backlog", "nightly janitor"):
        got = svc.search(query=query, mode="keyword", limit=3, now=NOW)["results"]
        assert [r["key"] for r in got][:1] == [key]
    assert len(svc.search(query="gateway proxy", mode="keyword", limit=10, now=NOW)["results"]) == 5


def test_read_cache_written_by_parts_equals_a_fresh_one(svc: MemoryService) -> None:
    """A long-lived writer serializes only the records a write changed; after adds, changes,
    a purge, a write by another process and a session follower, the file is still the one a
    fresh process writes for the same records."""

    def fresh() -> bytes:
        cached = svc.store._read_cache()
        assert cached == svc.store._scan()  # the records LanceDB holds
        return cache_bytes(cached)  # written as a fresh process writes them

    keys = [add(svc, f"note {i} on the cache", session_id="s1") for i in range(4)]
    assert svc.store.cache_path.read_bytes() == fresh()
    svc.update(key=keys[1], body="note one, changed", introduction="one", now=NOW, actor="t")
    svc.purge(key=svc.forget(key=keys[2], now=NOW, actor="t")["memory"]["key"], now=NOW, actor="t")
    assert svc.store.cache_path.read_bytes() == fresh()
    other = MemoryService(svc.ws)  # another process
    add(other, "written by another process")
    add(svc, "and one more here")
    assert svc.store.cache_path.read_bytes() == fresh()


def test_read_cache_of_no_records_is_written_by_parts_too(svc: MemoryService) -> None:
    key = add(svc, "the only one")
    svc.purge(key=svc.forget(key=key, now=NOW, actor="t")["memory"]["key"], now=NOW, actor="t")
    assert svc.store.cache_path.read_bytes() == b'{"records":[\n],"version":1}\n'
    assert svc.store._read_cache() == {}


def cache_bytes(records: dict[str, dict[str, Any]]) -> bytes:
    """The read cache's layout: one JSON document, one record a line in key order."""
    lines = b",\n".join(orjson.dumps(records[k]) for k in sorted(records))
    return b'{"records":[\n' + (lines + b"\n" if lines else b"") + b'],"version":1}\n'
