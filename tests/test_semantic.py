"""Search where meaning matters (the real model), exact identifiers, and a model-less run."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import REAL_CACHE, make_workspace, private_cache
from typer.testing import CliRunner

from nxm.cli import app
from nxm.embed.model import MODEL_NAME
from nxm.record import indexed_text
from nxm.service import MemoryService
from nxs.workspace import find

NOW = "2026-05-29T10:00:00.000Z"
runner = CliRunner()

CORPUS = [
    ("Carol owns the billing service and its on-call rota.", "Carol owns billing"),
    ("Release tags are cut from main only; CI refuses tags pushed from other branches.", "Release tags come from main"),
    ("The staging database is wiped every night at 2am; never keep test data there.", "Staging DB is wiped nightly"),
    ("Use ruff for linting and formatting; the line length is 100.", "Lint and format with ruff"),
    ("We chose LanceDB because one table holds records, vectors and the full-text index.", "Why LanceDB"),
    ("The sync test is flaky under load because the retry loop hides timeouts.", "Sync test is flaky"),
    ("Frontend components are written in TypeScript with React hooks, no class components.", "Frontend: TypeScript + hooks"),
]  # fmt: skip
IDENTIFIERS = [
    ("Set NXS_CACHE_DIR to move the model cache somewhere else.", "NXS_CACHE_DIR moves the model cache"),
    ("NXS_CONFIG_DIR moves the user config directory, where Linear keys live.", "NXS_CONFIG_DIR moves user config"),
    ("NXS_DATA_DIR holds user facts, owner-only.", "NXS_DATA_DIR holds user facts"),
    ("The read cache lives in .nxs/cache/records.json; the model cache dir is separate.", "Read cache file"),
    ("ERR_LEDGER_LOCKED: another writer holds the ledger; retry after it commits.", "ERR_LEDGER_LOCKED means a writer holds the lock"),
    ("ERR_LEDGER_LOCKOUT: too many failed logins lock the ledger account for an hour.", "ERR_LEDGER_LOCKOUT after failed logins"),
    ("ERR_LEDGER_LOCK_TIMEOUT: waiting for the ledger lock gave up after 30 s.", "ERR_LEDGER_LOCK_TIMEOUT after 30 s"),
    ("Ledger errors are prefixed ERR_LEDGER_ and documented in errors.md.", "Ledger error prefix"),
]  # fmt: skip
# (query, index into CORPUS): paraphrases sharing no word with any memory
PARAPHRASES = [
    ("who handles invoicing?", 0),
    ("Will my QA rows survive overnight?", 2),
]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def load(svc: MemoryService, items: list[tuple[str, str]]) -> list[str]:
    return [
        svc.add(body=b, introduction=i, category="notes", now=NOW, actor="t")["memory"]["key"]
        for b, i in items
    ]


def top(svc: MemoryService, query: str, mode: str, n: int = 1) -> list[str]:
    return [r["key"] for r in svc.search(query=query, mode=mode, now=NOW)["results"][:n]]


# -- exact identifiers: keyword search (any embedder) --------------------------------------


@pytest.fixture(scope="module")
def identifiers(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryService, list[str]]:
    root = make_workspace(tmp_path_factory.mktemp("ids") / "proj")
    svc = MemoryService(find(root))
    return svc, load(svc, CORPUS + IDENTIFIERS)


# The FTS tokenizer splits and stems identifiers (ERR_LEDGER_LOCKED -> err ledger lock), so
# ERR_LEDGER_LOCK_TIMEOUT, which says "lock" twice, would outrank the exact match were each
# identifier not also indexed whole (nxm.record.identifiers).
IDENTIFIER_QUERIES = [
    ("NXS_CACHE_DIR", 0),
    ("NXS_CONFIG_DIR", 1),
    ("ERR_LEDGER_LOCKED", 4),
    ("ERR_LEDGER_LOCKOUT", 5),
]


@pytest.mark.parametrize(("query", "index"), IDENTIFIER_QUERIES)
def test_keyword_search_finds_an_exact_identifier_first(
    identifiers: tuple[MemoryService, list[str]], query: str, index: int
) -> None:
    svc, keys = identifiers
    assert top(svc, query, "keyword") == [keys[len(CORPUS) + index]]


# -- the real model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryService, list[str]]:
    from nxm.embed.model import model_status

    saved = os.environ.get("NXS_CACHE_DIR")
    os.environ["NXS_CACHE_DIR"] = str(private_cache(tmp_path_factory.mktemp("home")))
    try:
        if not model_status()["installed"]:
            pytest.skip(
                f"the real model {MODEL_NAME} is not installed in {REAL_CACHE}:"
                " run `nxm model setup` (CI does) to run the semantic tests"
            )
        root = make_workspace(tmp_path_factory.mktemp("real") / "proj", MODEL_NAME)
        svc = MemoryService(find(root))
        keys = load(svc, CORPUS + IDENTIFIERS)
        assert svc.embedder() is not None
    finally:
        if saved is None:
            os.environ.pop("NXS_CACHE_DIR", None)
        else:
            os.environ["NXS_CACHE_DIR"] = saved
    return svc, keys


@pytest.mark.model
def test_real_model_embeds_on_add(real: tuple[MemoryService, list[str]]) -> None:
    svc, keys = real
    records = svc.store.records()
    assert {(records[k]["processing"], records[k]["model"]) for k in keys} == {
        ("READY", MODEL_NAME)
    }
    svc.refresh()
    assert svc.store.index.table_dim() == 384


@pytest.mark.model
@pytest.mark.parametrize(("query", "index"), PARAPHRASES)
def test_semantic_search_finds_a_paraphrase_with_no_shared_words(
    real: tuple[MemoryService, list[str]], query: str, index: int
) -> None:
    svc, keys = real
    every = svc.store.records().values()
    assert words(query) & set().union(*(words(indexed_text(r)) for r in every)) == set()
    assert svc.search(query=query, mode="keyword", now=NOW)["results"] == []
    assert top(svc, query, "semantic") == [keys[index]]
    assert top(svc, query, "hybrid") == [keys[index]]
    best = svc.search(query=query, mode="semantic", now=NOW)["results"]
    # the rest are clearly less similar, or below the relevance floor and not returned
    assert len(best) == 1 or best[0]["semantic"] > best[1]["semantic"] + 0.1


@pytest.mark.model
@pytest.mark.parametrize(("query", "index"), IDENTIFIER_QUERIES)
def test_hybrid_search_keeps_an_exact_identifier_first(
    real: tuple[MemoryService, list[str]], query: str, index: int
) -> None:
    svc, keys = real
    assert top(svc, query, "hybrid") == [keys[len(CORPUS) + index]]


# -- a model-less run ----------------------------------------------------------------------


def nxm(root: Path, *args: str) -> Any:
    return runner.invoke(app, [*args, "--json", "--workspace", str(root)])


def test_a_model_less_run_stays_usable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "empty-cache"))
    root = make_workspace(tmp_path / "proj", MODEL_NAME)

    added = nxm(root, "add", "Set NXS_CACHE_DIR to move the model cache.", "--introduction",
                "Cache dir", "--category", "notes", "--now", NOW)  # fmt: skip
    assert added.exit_code == 0
    memory = orjson.loads(added.stdout_bytes)["memory"]
    assert (memory["processing"], memory["model"]) == ("PENDING", None)
    assert "semantic search unavailable" in added.stderr
    other = nxm(root, "add", "Ruff formats the code.", "--introduction", "Ruff", "--now", NOW)
    assert other.exit_code == 0

    keyword = nxm(root, "search", "NXS_CACHE_DIR", "--mode", "keyword")
    assert keyword.exit_code == 0
    assert [r["key"] for r in orjson.loads(keyword.stdout_bytes)["results"]] == [memory["key"]]

    hybrid = nxm(root, "search", "NXS_CACHE_DIR")
    assert hybrid.exit_code == 0
    out = orjson.loads(hybrid.stdout_bytes)
    assert [r["key"] for r in out["results"]] == [memory["key"]]
    assert out["results"][0]["semantic"] is None
    assert out["note"] == "semantic search unavailable (no embedding model); keyword results only"

    semantic = nxm(root, "search", "NXS_CACHE_DIR", "--mode", "semantic")
    assert semantic.exit_code == 5
    assert orjson.loads(semantic.stdout_bytes)["code"] == "MODEL_UNAVAILABLE"
    refused = nxm(root, "embed")
    assert refused.exit_code == 5
    assert orjson.loads(refused.stdout_bytes)["kind"] == "upstream"

    listed = orjson.loads(nxm(root, "list").stdout_bytes)["memories"]
    assert [m["processing"] for m in listed] == ["PENDING", "PENDING"]

    cfg = root / ".nxs" / "config.toml"
    cfg.write_text(cfg.read_text().replace(MODEL_NAME, "hash"))
    embedded = nxm(root, "embed")
    assert embedded.exit_code == 0
    assert embedded.stdout_bytes == b'{"embedded":2,"model":"hash","pending":0}\n'
    listed = orjson.loads(nxm(root, "list").stdout_bytes)["memories"]
    assert [m["processing"] for m in listed] == ["READY", "READY"]
    records = dict(MemoryService(find(root)).store.records().items())
    assert {r["model"] for r in records.values()} == {"hash"}
    found = nxm(root, "search", "NXS_CACHE_DIR", "--mode", "semantic")
    assert found.exit_code == 0
    assert orjson.loads(found.stdout_bytes)["results"][0]["key"] == memory["key"]
    assert nxm(root, "embed").stdout_bytes == b'{"embedded":0,"model":"hash","pending":0}\n'


@pytest.mark.model
def test_changing_the_model_reembeds(
    real: tuple[MemoryService, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path / "proj")
    keys = load(MemoryService(find(root)), CORPUS[:2])
    cfg = root / ".nxs" / "config.toml"
    cfg.write_text(cfg.read_text().replace('model = "hash"', f'model = "{MODEL_NAME}"'))
    svc = MemoryService(find(root))
    assert svc.embed_pending() == {"embedded": 2, "model": MODEL_NAME, "pending": 0}
    records = dict(svc.store.records().items())
    assert {records[k]["model"] for k in keys} == {MODEL_NAME}
    assert top(svc, PARAPHRASES[0][0], "semantic") == [keys[0]]
