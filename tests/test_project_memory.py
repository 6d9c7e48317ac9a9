"""The project-memory evaluation set (bench/project_memory): its data hold together, and the
harness measures what it says (hand-checked metrics; a tiny run with the test embedder)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from bench.project_memory import HALVES, memories, queries
from bench.project_memory.harness import evaluate
from bench.project_memory.metrics import KINDS, NEGATIVE, ahead, floor_at, mrr, ndcg, recall
from bench.project_memory.text import content_words, shared_words
from nxm.categories import VOCABULARY
from nxs.render import parse_timestamp

MEMS = memories()
QUERIES = queries()
BY_ID = {m["id"]: m for m in MEMS}


def _answer_text(m: dict) -> str:  # what the keyword index sees of a memory, less its key
    return f"{m['introduction']}\n{m['body']}\n{m['category']}"


def test_memories_are_well_formed() -> None:
    assert len(BY_ID) == len(MEMS) >= 290, "ids are unique, and there are about 300"
    assert len({m["body"] for m in MEMS}) == len(MEMS), "the service keeps one memory per body"
    for m in MEMS:
        assert m["category"] in VOCABULARY, m["id"]
        assert m["introduction"].strip() and "\n" not in m["introduction"], m["id"]
        assert len(m["introduction"]) <= 200, m["id"]
        created = parse_timestamp(m["created"])
        if m.get("closed"):
            assert parse_timestamp(m["closed"]) > created, m["id"]
        if m.get("supersedes"):
            old = BY_ID[m["supersedes"]]
            assert parse_timestamp(old["created"]) < created, m["id"]
    assert sum(bool(m.get("session")) for m in MEMS) >= 10
    assert sum(bool(m.get("closed")) for m in MEMS) >= 3
    assert sum(bool(m.get("supersedes")) for m in MEMS) >= 5


def test_queries_grade_existing_memories() -> None:
    assert len({q["id"] for q in QUERIES}) == len(QUERIES) >= 190
    for q in QUERIES:
        assert q["kind"] in (*KINDS, NEGATIVE), q["id"]
        assert q["half"] in HALVES, q["id"]
        assert set(q["grades"]) <= BY_ID.keys(), q["id"]
        assert set(q["grades"].values()) <= {0, 1, 2}, q["id"]
        assert set(q.get("distractors", ())) <= q["grades"].keys(), q["id"]
        assert all(q["grades"][d] < 2 for d in q.get("distractors", ())), q["id"]
        answers = [k for k, g in q["grades"].items() if g == 2]
        if q["kind"] == NEGATIVE:
            assert not q["grades"], q["id"]
        else:
            assert answers, q["id"]


def test_every_kind_is_in_both_halves() -> None:
    counts = Counter((q["kind"], q["half"]) for q in QUERIES)
    for kind in (*KINDS, NEGATIVE):
        for half in HALVES:
            assert counts[(kind, half)] >= 5, (kind, half)
    assert sum(q["kind"] == NEGATIVE for q in QUERIES) >= 12


def test_paraphrases_share_no_content_word_with_their_answers() -> None:
    paraphrases = [q for q in QUERIES if q["kind"] == "paraphrase"]
    assert len(paraphrases) >= 30
    for q in paraphrases:
        for key, grade in q["grades"].items():
            if grade == 2:
                shared = shared_words(q["query"], _answer_text(BY_ID[key]))
                assert not shared, f"{q['id']} shares {sorted(shared)} with {key}"


def test_multi_topic_and_temporal_queries_are_what_they_claim() -> None:
    for q in QUERIES:
        answers = [k for k, g in q["grades"].items() if g == 2]
        if q["kind"] == "multi":
            assert len(q["query"]) >= 200 and len(answers) >= 2, q["id"]
        if q["kind"] == "temporal":
            assert q.get("distractors") or len(answers) == 1, q["id"]
            newest = max(parse_timestamp(BY_ID[k]["created"]) for k in answers)
            for d in q.get("distractors", ()):  # the stale version is the older one
                assert parse_timestamp(BY_ID[d]["created"]) < newest, (q["id"], d)


def test_content_words_stem_and_drop_stop_words() -> None:
    assert content_words("How do we deploy the ledger-svc?") == {"deploy", "ledger", "svc"}
    assert shared_words("When do deploys happen?", "Deployments go out on Tuesdays") == {"deploy"}
    assert not shared_words("Can I ship it?", "Deployments go out on Tuesdays")


def test_ndcg_on_a_hand_checked_case() -> None:
    grades = {"a": 2, "b": 1, "z": 0}
    # ranked b, x, a: DCG = 1/log2(2) + 0 + 2/log2(4) = 2; ideal a, b: 2 + 1/log2(3)
    assert ndcg(["b", "x", "a"], grades) == pytest.approx(2 / (2 + 1 / math.log2(3)))
    assert ndcg(["a", "b", "x"], grades) == pytest.approx(1.0)
    assert ndcg(["z", "x"], grades) == 0.0
    assert ndcg(["a"], {}) == 0.0
    # only the first ten count
    assert ndcg([f"x{i}" for i in range(10)] + ["a"], grades) == 0.0


def test_recall_mrr_ahead_and_the_floor() -> None:
    grades = {"a": 2, "c": 2, "b": 1, "old": 0}
    assert recall(["b", "a", "x", "y", "z", "c"], grades) == 0.5  # c is sixth
    assert mrr(["b", "x", "a"], grades) == pytest.approx(1 / 3)
    assert mrr(["b"], grades) == 0.0
    assert ahead(["a", "old"], grades, ["old"]) == 1.0
    assert ahead(["old", "a"], grades, ["old"]) == 0.0
    assert ahead(["b", "x"], grades, ["old"]) == 0.0  # no answer at all
    assert floor_at([0.1] + [0.5] * 19) == 0.5  # 5 % of 20 is one: only the 0.1 falls below
    assert floor_at([0.1, 0.1] + [0.5] * 18) == 0.1  # a floor of 0.5 would empty two
    assert floor_at([]) is None


def test_the_harness_on_a_tiny_set(tmp_path: Path) -> None:
    ids = ("pay.78", "pay.79", "pay.09", "pay.10", "pay.40", "app.11", "app.12", "pay.45", "pay.46")
    mems = [BY_ID[i] for i in ids]
    qs = [
        {"id": "t1", "kind": "identifier", "half": "tune", "query": "ERR_REFUND_REVERSED",
         "grades": {"pay.78": 2, "pay.79": 0}, "distractors": ["pay.79"]},
        {"id": "t2", "kind": "temporal", "half": "held", "query": "Which tool reports crashes?",
         "grades": {"app.12": 2, "app.11": 0}, "distractors": ["app.11"]},
        {"id": "t3", "kind": NEGATIVE, "half": "held", "query": "office badge hours", "grades": {}},
    ]  # fmt: skip
    got = evaluate(mems, qs, tmp_path / "ws", "hash")
    assert set(got["ranked"]) == {
        "nxs hybrid",
        "nxs semantic",
        "nxs keyword",
        "bm25s",
        "dense MiniLM",
    }
    for system, lists in got["ranked"].items():
        for ranked in lists.values():
            assert len(ranked) <= 10 and {k for k, _ in ranked} <= set(ids), system
    assert got["ranked"]["bm25s"]["t1"][0][0] == "pay.78"
    assert got["results"]["tune"]["bm25s"]["identifier"]["ndcg@10"] == 1.0
    for mode in ("hybrid", "semantic", "keyword"):  # app.11 is closed: search leaves it out
        assert "app.11" not in {k for k, _ in got["ranked"][f"nxs {mode}"]["t2"]}
    assert got["results"]["held"]["dense MiniLM"]["negative"]["empty"] == 0.0  # cosine always ranks
