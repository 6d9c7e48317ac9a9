"""The default category classifier: documented vocabulary, deterministic, the caller wins."""

from __future__ import annotations

import pytest

from nxm.categories import VOCABULARY, categorize, explain, scores
from nxs.context import Context


def test_vocabulary_is_the_documented_one() -> None:
    assert list(VOCABULARY) == [
        "preferences", "decisions", "gotchas", "conventions", "owners", "processes", "status",
        "tech-stack",
    ]  # fmt: skip


def test_examples_get_the_expected_category() -> None:
    cases = {
        "The user prefers TypeScript for all new projects.": "preferences",
        "We decided to use Postgres instead of MongoDB because we need transactions.": "decisions",
        "Beware: the lock test is flaky on CI.": "gotchas",
        "Always prefix private helpers with an underscore.": "conventions",
        "Dana owns the billing module; ask her before changing it.": "owners",
        "Deploy to staging with the release pipeline.": "processes",
        "This week the config loader is moving to tomllib.": "status",
        "The frontend is built with Next.js and Supabase.": "tech-stack",
    }
    assert {text: categorize(text) for text in cases} == cases


def test_no_cue_means_uncategorised() -> None:
    assert categorize("Lunch is at noon.") is None
    assert explain("Lunch is at noon.") == {"category": None, "scores": {}}


def test_scores_count_cues() -> None:
    # "prefers" is a strong cue (2), "uses" a cue (1); a product name alone is no cue
    assert scores("The user prefers TypeScript.") == {"preferences": 2}
    assert scores("We prefer a stack that uses Go.") == {"preferences": 2, "tech-stack": 3}
    # cues match whole words only: "preferences" in a path is not "prefers"
    assert scores("see docs/uses_of_mustard.md") == {}


def test_ties_go_to_the_earlier_category() -> None:
    text = "Run the suite; it must stay fast."  # processes 1 (run), conventions 1 (must)
    assert scores(text) == {"conventions": 1, "processes": 1}
    assert categorize(text) == "conventions"


def test_same_text_same_category() -> None:
    text = "Kafka keeps failing silently when the broker restarts; retry with backoff."
    assert len({categorize(text) for _ in range(5)}) == 1
    assert categorize(text) == "gotchas"


def test_add_uses_the_classifier_only_when_no_category_is_given(ctx: Context) -> None:
    svc = ctx.memory
    body = "We decided to keep SQLite for the CLI cache because it needs no server."
    got = svc.add(body=body, introduction="SQLite for the CLI cache", now=ctx.now, actor="t")
    assert got["memory"]["category"] == "decisions"
    mine = svc.add(
        body=body + " Revisit in Q3.",
        introduction="SQLite for the CLI cache (revisit)",
        category="storage",
        now=ctx.now,
        actor="t",
    )
    assert mine["memory"]["category"] == "storage"


def test_a_category_in_another_spelling_is_refused_with_the_one_in_use(ctx: Context) -> None:
    """`gotcha` beside `gotchas`: refused (writing nothing), naming the spelling in use; a
    category of its own is accepted, and the config keeps a near spelling on purpose."""
    from nxs.errors import ValidationError
    from tests.conftest import committed

    svc = ctx.memory
    body = "The lock test flakes when CI runs two jobs on one runner."
    got = svc.add(body=body, introduction="Lock test flakes", category="gotchas", now=ctx.now,
                  actor="t")  # fmt: skip
    key = got["memory"]["key"]
    before = committed(ctx.memory.ws.root)
    for spelling, same in (("gotcha", "gotchas"), ("Gotchas", "gotchas"), ("owner", "owners"),
                           ("proceses", "processes"), ("tech stack", "tech-stack")):  # fmt: skip
        with pytest.raises(ValidationError) as err:
            svc.add(body=f"{spelling}: another", introduction="x", category=spelling,
                    now=ctx.now, actor="t")  # fmt: skip
        assert (err.value.code, err.value.message) == (
            "SIMILAR_CATEGORY",
            f"category {spelling!r} looks like {same!r}, which is in use",
        )
        with pytest.raises(ValidationError, match="looks like"):
            svc.classify(key=key, category=spelling, now=ctx.now, actor="t")
    assert committed(ctx.memory.ws.root) == before
    new = svc.add(body="Billing's pager rotates weekly.", introduction="Billing pager weekly",
                  category="on-call", now=ctx.now, actor="t")  # fmt: skip
    assert new["memory"]["category"] == "on-call"
    for n in (2, 3):  # a number makes another kind, however close the words
        got = svc.add(body=f"Python {n} notes.", introduction=f"py{n}", category=f"python{n}",
                      now=ctx.now, actor="t")  # fmt: skip
        assert got["memory"]["category"] == f"python{n}"
    cfg = ctx.memory.ws.dir / "config.toml"
    cfg.write_text(cfg.read_text().replace("[memory]", '[memory]\ncategories = ["gotcha"]', 1))
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(str(ctx.memory.ws.root)))
    kept = svc.add(body="Another flake.", introduction="Flake", category="gotcha", now=ctx.now,
                   actor="t")  # fmt: skip
    assert kept["memory"]["category"] == "gotcha"


def test_doctor_reports_one_category_in_two_spellings(ctx: Context) -> None:
    from nxm.repair import doctor

    svc = ctx.memory
    svc.add(body="Flaky one.", introduction="a", category="gotchas", now=ctx.now, actor="t")
    cfg = svc.ws.dir / "config.toml"
    cfg.write_text(cfg.read_text().replace("[memory]", '[memory]\ncategories = ["gotcha"]', 1))
    from nxm.service import MemoryService
    from nxs.workspace import find

    svc = MemoryService(find(str(svc.ws.root)))
    svc.add(body="Flaky two.", introduction="b", category="gotcha", now=ctx.now, actor="t")
    assert not any(
        "look like one" in p["problem"] for p in doctor(svc, now=ctx.now, actor="t")["problems"]
    )
    cfg.write_text(cfg.read_text().replace('categories = ["gotcha"]\n', ""))
    svc = MemoryService(find(str(svc.ws.root)))
    found = [
        p
        for p in doctor(svc, now=ctx.now, actor="t")["problems"]
        if "look like one" in p["problem"]
    ]
    assert found == [{
        "file": ".nxs/memories",
        "problem": "categories 'gotchas' and 'gotcha' look like one",
        "fix": "`nxm classify KEY --category gotchas` for each memory in 'gotcha' "
        "(`nxm list --category gotcha`), or list both in [memory] categories",
    }]  # fmt: skip
