"""The default category classifier: documented vocabulary, deterministic, the caller wins."""

from __future__ import annotations

from nxm.categories import VOCABULARY, categorize, explain, scores
from nxs.context import Context


def test_vocabulary_is_the_documented_one() -> None:
    assert list(VOCABULARY) == [
        "preferences", "decisions", "gotchas", "conventions", "people", "processes", "status",
        "tech-stack",
    ]  # fmt: skip


def test_examples_get_the_expected_category() -> None:
    cases = {
        "The user prefers TypeScript for all new projects.": "preferences",
        "We decided to use Postgres instead of MongoDB because we need transactions.": "decisions",
        "Beware: the lock test is flaky on CI.": "gotchas",
        "Always prefix private helpers with an underscore.": "conventions",
        "Dana owns the billing module; ask her before changing it.": "people",
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
