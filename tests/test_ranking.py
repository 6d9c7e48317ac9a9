"""Ranking that never loses to its parts, currency, the relevance floor (issue 17).

The measured figures are `python -m bench.project_memory` (docs/benchmarks.md); these pin the
rules on small, hand-made lists so each can fail on its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from nxm.record import new_record
from nxm.search import rank


def _rec(key: str, created: str = "2026-01-01T00:00:00.000Z") -> dict[str, Any]:
    return new_record(key=key, created=created)


def test_evidence_is_the_share_of_the_query_a_match_holds() -> None:
    query = "how do we store money amounts in the database"
    full = "Money amounts are stored in the database as integer minor units."
    assert rank.keyword_evidence(query, [full]) == 1.0
    # one incidental word of four: a paraphrase's keyword matches look like this
    assert rank.keyword_evidence(query, ["The database runs on Postgres 16."]) == 0.25
    assert rank.keyword_evidence(query, []) == 0.0
    # a long request: five of its words in one memory is full evidence
    long = "onboarding " * 3 + "deploy rollback canary alerts pager runbook escalation budget"
    assert rank.keyword_evidence(long, ["deploy rollback canary alerts pager"]) == 1.0


def test_shares_follow_the_evidence_and_sum_to_one() -> None:
    assert rank.shares(None) == (rank.ALPHA, 1 - rank.ALPHA)
    assert rank.shares(1.0) == (rank.ALPHA, 1 - rank.ALPHA)
    kw, sem = rank.shares(0.25)
    assert kw == pytest.approx(rank.ALPHA / 16) and kw + sem == pytest.approx(1.0)


def test_weak_keyword_evidence_lets_the_semantic_answer_win() -> None:
    records = {k: _rec(k) for k in "abcdefgh"}
    # keyword matched "x" strongly on an incidental word; the embedding finds "a"
    kw = [("x", 9.0), *((k, 1.0) for k in "bcdefg")]
    records["x"] = _rec("x")
    sem = [("a", 0.4), ("x", 0.35), *((k, 0.3) for k in "bcdefgh")]
    spread = (0.3, 0.05)
    even = rank.fuse(kw, sem, records, "hybrid", spread=spread)
    weak = rank.fuse(kw, sem, records, "hybrid", spread=spread, evidence=0.2)
    assert even[0][0] == "x"  # half and half: the incidental match wins
    assert weak[0][0] == "a"  # the keyword side barely counts
    strong = rank.fuse(kw, sem, records, "hybrid", spread=spread, evidence=1.0)
    assert [k for k, _ in strong] == [k for k, _ in even]


# -- currency -----------------------------------------------------------------------------------

OLD = "2024-05-02T08:00:00.000Z"
NEW = "2025-02-10T09:00:00.000Z"


def _mem(key: str, created: str, body: str, **kw: Any) -> dict[str, Any]:
    return {"key": key, "created": created, "introduction": body, "body": body, **kw}


def _hits(*pairs: tuple[str, float]) -> list[tuple[str, dict[str, Any]]]:
    return [(k, {"score": s}) for k, s in pairs]


SAME_VECTORS = {"old": [1.0, 0.0], "new": [0.9, 0.3], "far": [0.0, 1.0]}


@pytest.mark.parametrize(
    ("new_body", "vectors", "lifted"),
    [
        ("Reconciliation moved to 04:30 UTC.", SAME_VECTORS, True),
        # whoever wrote it did not know the old note: no "moved", "now", "replaced"
        ("Reconciliation runs at 04:30 UTC.", SAME_VECTORS, True),
        ("Reconciliation moved to 04:30 UTC.", {**SAME_VECTORS, "new": [0.1, 1.0]}, False),
    ],
    ids=["worded-and-similar", "not-worded", "not-similar"],
)
def test_a_newer_version_on_the_same_subject_ranks_first(
    new_body: str, vectors: dict[str, list[float]], lifted: bool
) -> None:
    from nxm.search import currency

    records = {
        "old": _mem("old", OLD, "Reconciliation runs nightly at 02:00 UTC."),
        "new": _mem("new", NEW, new_body),
    }
    got = currency.order(_hits(("old", 2.0), ("new", 1.8)), records, vectors)
    assert [k for k, _ in got] == (["new", "old"] if lifted else ["old", "new"])
    if lifted:
        assert got[0][1]["currency"] == pytest.approx(0.2)  # they trade scores
        assert got[1][1]["newer"] == "new" and got[1][1]["score"] == 1.8
    else:
        assert "currency" not in got[1][1] and "newer" not in got[0][1]


def test_an_older_memory_is_never_lifted_over_a_newer_one() -> None:
    from nxm.search import currency

    records = {
        "old": _mem("old", OLD, "We moved the job to 02:00 UTC."),
        "new": _mem("new", NEW, "The job runs at 04:30 UTC now."),
    }
    got = currency.order(_hits(("new", 2.0), ("old", 1.9)), records, SAME_VECTORS)
    assert [k for k, _ in got] == ["new", "old"]


def test_a_weak_newer_match_is_not_lifted_over_a_strong_one() -> None:
    from nxm.search import currency

    records = {
        "old": _mem("old", OLD, "INFRA-77: the node pool runs on m6i."),
        "new": _mem("new", NEW, "INFRA-777: the node pool moved to m7g."),
    }
    got = currency.order(_hits(("old", 2.0), ("new", 0.5)), records, SAME_VECTORS)
    assert [k for k, _ in got] == ["old", "new"]


def test_an_explicit_supersedes_link_lifts_whatever_the_wording_and_score() -> None:
    from nxm.search import currency

    records = {
        "old": _mem("old", OLD, "Billing is owned by Dana."),
        "new": _mem("new", NEW, "Billing: Priya.", events=[{"data": {"supersedes": "old"}}]),
    }
    got = currency.order(_hits(("old", 2.0), ("new", 0.3)), records, {})
    assert [k for k, _ in got] == ["new", "old"]


def test_search_ranks_the_current_version_first(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the service: the older statement matches the query's words better, yet the
    newer one that says it moved comes first and the old one names it."""
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(workspace))
    first = svc.add(
        body="recon-job compares the journal with the settlement files nightly at 02:00 UTC.",
        introduction="Reconciliation job runs nightly at 02:00 UTC",
        now=OLD, actor="t", category="processes",
    )["memory"]  # fmt: skip
    second = svc.add(
        body="The reconciliation job moved from 02:00 to 04:30 UTC: the settlement files come "
        "later at night.",
        introduction="Reconciliation job moved to 04:30 UTC",
        now=NEW, actor="t", category="processes",
    )["memory"]  # fmt: skip
    topics = ("Payouts settle in two days", "Refunds need a reason code")
    topics += ("Merchants sign up through the dashboard", "Cards are tokenized")
    for topic in topics:
        svc.add(body=f"{topic}.", introduction=topic, now=NEW, actor="t", category="notes")
    got = svc.search(query="when does the reconciliation job run", now=NEW)["results"]
    assert [r["key"] for r in got[:2]] == [second["key"], first["key"]]
    assert got[1]["newer"] == second["key"] and got[0]["currency"] > 0
    from nxm.search import currency

    monkeypatch.setattr(currency, "order", lambda hits, *_: hits)
    plain = svc.search(query="when does the reconciliation job run", now=NEW)["results"]
    assert [r["key"] for r in plain[:2]] == [first["key"], second["key"]]  # without the rule


def test_lines_of_a_conversation_are_not_versions_of_each_other() -> None:
    from nxm.search import currency

    records = {
        "old": _mem("old", OLD, "Reconciliation runs nightly at 02:00 UTC.", session_id="s"),
        "new": _mem("new", NEW, "Reconciliation moved to 04:30 UTC.", session_id="s"),
    }
    got = currency.order(_hits(("old", 2.0), ("new", 1.8)), records, SAME_VECTORS)
    assert [k for k, _ in got] == ["old", "new"]


# -- the graph's answer ---------------------------------------------------------------------------


def test_graph_answers_with_the_owner_stated_last_even_after_an_old_memory_is_edited(
    workspace: Any,
) -> None:
    """Three memories name billing's owner in turn; editing the first one later (a fixed
    wording) must not make its owner the answer again."""
    from nxm import graph
    from nxm.graph.query import ask
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(workspace))
    said = [
        ("Dana Kim owns Billing.", "2026-01-05T09:00:00.000Z"),
        ("Priya Raman owns Billing now; it moved from Dana Kim.", "2026-03-02T09:00:00.000Z"),
        ("Since the April reorg, Marco Bianchi owns Billing.", "2026-04-20T09:00:00.000Z"),
    ]
    keys = [
        svc.add(body=b, introduction=b, now=at, actor="t", category="owners")["memory"]["key"]
        for b, at in said
    ]
    later = "2026-05-01T09:00:00.000Z"
    svc.update(key=keys[0], introduction="Dana Kim owned Billing first", now=later, actor="t")
    got = ask(graph.current(svc, later), question="who owns billing?")
    assert [a["name"] for a in got["answers"]] == ["Marco Bianchi"]
    assert got["sourceMemoryIds"] == [keys[2]]


# -- the relevance floor --------------------------------------------------------------------------


def test_each_mode_has_its_floor() -> None:
    floor = rank.SEMANTIC_FLOOR
    assert rank.relevant("semantic", floor, 0.0, floor)
    assert not rank.relevant("semantic", floor - 0.01, 1.0, floor)  # words do not count
    assert rank.relevant("keyword", None, rank.WORDS_FLOOR, floor)
    assert not rank.relevant("keyword", 0.9, rank.WORDS_FLOOR - 0.01, floor)
    assert rank.relevant("hybrid", floor, 0.0, floor)
    assert rank.relevant("hybrid", None, rank.WORDS_FLOOR, floor)
    assert not rank.relevant("hybrid", floor - 0.01, rank.WORDS_FLOOR - 0.01, floor)


def test_matched_is_the_share_of_the_query_words_a_text_holds() -> None:
    from nxm.search.terms import content_words

    asked = content_words("reconciliation job schedule")
    assert rank.matched(asked, "The reconciliation job runs at 04:30.") == pytest.approx(2 / 3)
    assert rank.matched(set(), "anything") == 1.0  # a query of stop words drops nothing


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_a_query_about_nothing_stored_returns_nothing_and_says_so(
    workspace: Any, mode: str
) -> None:
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(workspace))
    for body in ("Release tags are cut from main only.", "The staging database is wiped nightly."):
        svc.add(body=body, introduction=body, now=OLD, actor="t", category="notes")
    got = svc.search(query="cryptocurrency wallet custody", mode=mode, now=NEW)
    assert got["results"] == [] and got["total"] == 0
    assert got["note"].startswith("nothing relevant is stored")
    hit = svc.search(query="staging database", mode=mode, now=NEW)["results"]
    assert [r["introduction"] for r in hit][:1] == ["The staging database is wiped nightly."]


# -- snippets -------------------------------------------------------------------------------------


def test_a_snippet_is_the_whole_body_when_short() -> None:
    from nxm.search.snippet import snippet

    assert snippet("Tags come  from\nmain.", {"tag"}) == ("Tags come from main.", False)


def test_a_snippet_centres_on_the_sentence_that_matches_and_stays_bounded() -> None:
    from nxm.search.snippet import SNIPPET_CHARS, snippet
    from nxm.search.terms import content_words

    filler = " ".join(f"Sentence {i} talks about something else entirely." for i in range(12))
    body = f"{filler} The recon-job moved to 04:30 UTC on 2025-02-10. {filler}"
    text, cut = snippet(body, content_words("when does recon-job run"))
    assert cut is True and len(text) <= SNIPPET_CHARS
    assert "The recon-job moved to 04:30 UTC on 2025-02-10." in text
    assert text.startswith("…") and text.endswith("…")
    # nothing matched (a hit found by meaning): the start of the body
    start, cut = snippet(body, content_words("unrelated words"))
    assert start.startswith("Sentence 0") and cut is True and len(start) <= SNIPPET_CHARS


def test_a_long_sentence_is_cut_at_words_around_its_match() -> None:
    from nxm.search.snippet import SNIPPET_CHARS, snippet
    from nxm.search.terms import content_words

    body = " ".join(["word"] * 100 + ["LEDGER_DB_POOL_MIN"] + ["more"] * 100)
    text, cut = snippet(body, content_words("LEDGER_DB_POOL_MIN"))
    assert cut and len(text) <= SNIPPET_CHARS and "LEDGER_DB_POOL_MIN" in text
    assert text.startswith("…word") and text.endswith("…")


def test_search_and_recall_hits_carry_a_snippet(workspace: Any) -> None:
    from nxm.service import MemoryService
    from nxm.session.recall import recall
    from nxs.workspace import find

    svc = MemoryService(find(workspace))
    long = "Background. " * 30 + "Refunds to closed cards become a manual bank transfer task."
    svc.add(body=long, introduction="Refunds to closed cards", now=OLD, actor="t", category="x")
    hit = svc.search(query="refunds closed cards", now=NEW)["results"][0]
    assert "manual bank transfer" in hit["snippet"] and hit["snippet_truncated"] is True
    got = recall(svc, query="refunds to closed cards", now=NEW)["memories"][0]
    assert got["snippet"] == hit["snippet"] and got["snippet_truncated"] is True


def test_turns_of_a_conversation_keep_half_and_half(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keyword evidence is measured over matches outside a session; a chat store's matches are
    all turns, so fusion gets no evidence (half and half), a project store's gets a measure."""
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(workspace))
    seen: list[float | None] = []
    real = rank.fuse
    monkeypatch.setattr(rank, "fuse", lambda *a: seen.append(a[-1]) or real(*a))
    for i, said in enumerate(["Where did you buy the snake?", "In Paris, a year ago."]):
        at = f"2026-01-01T00:00:0{i}.000Z"
        svc.add(body=said, introduction=said, now=at, actor="t", session_id="s1")
    svc.search(query="where was the snake bought", now=NEW)
    svc.add(body="Snakes are banned in the office.", introduction="No snakes", now=NEW, actor="t")
    svc.search(query="where was the snake bought", now=NEW)
    assert seen[0] is None and seen[1] is not None and 0.0 < seen[1] <= 1.0


def test_an_identifier_the_query_names_outranks_namesakes_of_its_ordinary_words() -> None:
    hits = [("fired", {"score": 3.0}), ("alert", {"score": 2.0}), ("twin", {"score": 1.0})]
    texts = {
        "fired": "The release job fired twice.",
        "alert": "Alert NodeDiskPressureSustained: cordon the node.",
        "twin": "NodeDiskPressureSustainedLong pages the on-call.",  # not the same token
    }
    got = rank.exact(hits, texts, "NodeDiskPressureSustained fired again")
    assert [k for k, _ in got] == ["alert", "fired", "twin"]
    assert got[0][1]["exact"] == pytest.approx(1.001) and "exact" not in got[1][1]
    # ordinary hyphenated words and amounts are not identifiers: nothing moves
    for query in ("on-call fired", "the 30th fired", "fired at 10am"):
        assert rank.exact(hits, {**texts, "alert": f"{query} alert"}, query) == hits


@pytest.mark.model
def test_identifier_queries_in_other_words_still_find_their_memory_first(tmp_path: Any) -> None:
    """The project-memory set's identifier queries of one team, each with ordinary words around
    it as an agent writes them ("... fired again", "what does ... mean"); real model."""
    from bench.project_memory import NOW, memories, queries
    from bench.project_memory.harness import HarnessError, ingest, service_for

    try:
        svc = service_for(tmp_path / "ws", "sentence-transformers/all-MiniLM-L6-v2")
    except HarnessError as err:
        pytest.skip(str(err))
    ids, _ = ingest(svc, [m for m in memories() if m["id"].startswith("pay.")])
    back = {v: k for k, v in ids.items()}
    asked = [q for q in queries() if q["id"].startswith("pay.") and q["kind"] == "identifier"]
    around = ["{} showed up in the logs", "what does {} mean", "{} why did this break",
              "who do I ask about {}", "{} keeps failing", "{} fired again last night"]  # fmt: skip
    missed = []
    for i, q in enumerate(asked):
        text = around[i % len(around)].format(q["query"])
        got = svc.search(query=text, mode="hybrid", limit=10, now=NOW)["results"]
        if not got or q["grades"].get(back[got[0]["key"]]) != 2:
            missed.append(text)
    assert len(asked) >= 8 and missed == []
