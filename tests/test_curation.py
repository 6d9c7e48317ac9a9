"""Curation at write time (issue 17): add reports what a memory resembles, and supersedes."""

from __future__ import annotations

from typing import Any

import pytest

from nxm import curate
from nxm.service import MemoryService
from nxm.store import Store
from nxs.context import Context
from nxs.errors import ConflictError, NotFoundError
from tests.test_service import on_disk, refused

OLD = "2026-01-05T09:00:00.000Z"
NEW = "2026-03-02T09:00:00.000Z"


@pytest.fixture
def svc(ctx: Context) -> MemoryService:
    return ctx.memory


def _add(svc: MemoryService, body: str, now: str = OLD, **kw: Any) -> dict[str, Any]:
    return svc.add(body=body, introduction=body[:60], now=now, actor="t", category="owners", **kw)


def test_supersedes_links_both_and_closes_the_old_one_in_one_write(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _add(svc, "Dana Kim owns the billing service.")["memory"]
    commits: list[list[str]] = []
    real = Store.commit

    def counted(self: Store, current: Any, upserts: list[dict[str, Any]], *a: Any) -> None:
        commits.append(sorted(r["key"] for r in upserts))
        real(self, current, upserts, *a)

    monkeypatch.setattr(Store, "commit", counted)
    got = _add(svc, "Priya Raman owns the billing service now.", NEW, supersedes=old["key"][:6])
    new = got["memory"]
    assert got["superseded"] == old["key"]
    assert commits == [sorted([old["key"], new["key"]])]  # one write holds both
    disk = on_disk(svc)  # what a new process reads from the files
    assert disk[old["key"]]["status"] == "closed"
    closed = disk[old["key"]]["events"][-1]
    assert closed["type"] == "CLOSED" and closed["data"]["superseded_by"] == new["key"]
    assert closed["at"] == NEW
    created = disk[new["key"]]["events"][0]
    assert created["type"] == "CREATED" and created["data"] == {"supersedes": old["key"]}
    assert curate.linked(disk[new["key"]]) == {old["key"]}
    history = svc.history(key=old["key"])["events"]
    assert history[0]["data"]["superseded_by"] == new["key"]
    # the old one no longer answers a search; with every status the current one ranks first
    found = svc.search(query="who owns the billing service", now=NEW)["results"]
    assert [r["key"] for r in found] == [new["key"]]
    every = svc.search(query="who owns the billing service", now=NEW, status="all")["results"]
    assert [r["key"] for r in every][:2] == [new["key"], old["key"]]


def test_superseding_a_closed_memory_links_it_and_keeps_it_closed(svc: MemoryService) -> None:
    old = _add(svc, "Dana Kim owns the billing service.")["memory"]
    svc.close(key=old["key"], now=OLD, actor="t")
    new = _add(svc, "Priya Raman owns billing.", NEW, supersedes=old["key"])["memory"]
    after = svc.show(key=old["key"])["memory"]
    assert after["status"] == "closed"
    assert after["events"][-1]["type"] == "LINKED"
    assert after["events"][-1]["data"] == {"superseded_by": new["key"]}


@pytest.mark.parametrize(
    ("setup", "kind", "code"),
    [
        ("missing", NotFoundError, None),
        ("forgotten", ConflictError, "BAD_STATE"),
        ("itself", ConflictError, "ALREADY_STORED"),
    ],
)
def test_a_supersedes_that_cannot_be_made_writes_nothing(
    svc: MemoryService, setup: str, kind: type, code: str | None
) -> None:
    old = _add(svc, "Dana Kim owns the billing service.")["memory"]
    body = "Priya Raman owns billing."
    target = old["key"]
    if setup == "missing":
        target = "ffffffffffff"
    elif setup == "forgotten":
        svc.forget(key=old["key"], now=OLD, actor="t")
    else:
        body = "Dana Kim owns the billing service."
    refused(svc, kind, lambda: _add(svc, body, NEW, supersedes=target), code)


def test_re_adding_a_stored_body_with_supersedes_links_it(svc: MemoryService) -> None:
    """What the similar-memory note invites: the add made the new memory, the re-add with
    supersedes links it to the old one (once) instead of failing."""
    old = _add(svc, "Dana Kim owns the billing service and its on-call rota.")["memory"]
    body = "Priya Raman owns the billing service and its on-call rota now."
    first = _add(svc, body, NEW)
    assert first["similar"] and "supersedes" in first["note"]
    again = _add(svc, body, NEW, supersedes=old["key"])
    new = first["memory"]["key"]
    assert (again["created"], again["superseded"], again["memory"]["key"]) == (
        False,
        old["key"],
        new,
    )
    after_old = svc.show(key=old["key"])["memory"]
    assert after_old["status"] == "closed"
    assert after_old["events"][-1]["data"]["superseded_by"] == new
    events = svc.show(key=new)["memory"]["events"]
    assert events[-1]["type"] == "LINKED" and events[-1]["data"] == {"supersedes": old["key"]}
    _add(svc, body, NEW, supersedes=old["key"])  # once more: already linked, nothing written
    assert svc.show(key=new)["memory"]["events"] == events
    found = svc.search(query="who owns the billing service", now=NEW)["results"]
    assert [r["key"] for r in found][0] == new


def test_add_reports_the_memories_it_resembles(svc: MemoryService) -> None:
    first = _add(svc, "Dana Kim owns the billing service and its on-call rota.")["memory"]
    _add(svc, "Release tags are cut from main only.")
    got = _add(svc, "Priya Raman owns the billing service and its on-call rota now.", NEW)
    assert [s["key"] for s in got["similar"]] == [first["key"]]
    hit = got["similar"][0]
    assert hit["introduction"] == first["introduction"]
    assert curate.SIMILAR <= hit["similarity"] < curate.DUPLICATE and hit["kind"] == "similar"
    assert "supersedes" in got["note"]
    alone = _add(svc, "Postgres 16 runs the ledger database.", NEW)
    assert alone["similar"] == [] and "note" not in alone


def test_a_near_exact_duplicate_in_other_words_is_reported_as_one(svc: MemoryService) -> None:
    first = _add(svc, "Dana Kim owns the billing service.")["memory"]
    got = _add(svc, "Dana Kim owns the billing service!", NEW)
    assert got["created"] is True
    assert got["similar"][0]["key"] == first["key"]
    assert got["similar"][0]["kind"] == "duplicate"
    assert first["key"] in got["note"] and "forget" in got["note"]


def test_closed_memories_are_not_reported(svc: MemoryService) -> None:
    first = _add(svc, "Dana Kim owns the billing service and its on-call rota.")["memory"]
    svc.close(key=first["key"], now=OLD, actor="t")
    got = _add(svc, "Priya Raman owns the billing service and its on-call rota now.", NEW)
    assert got["similar"] == []
