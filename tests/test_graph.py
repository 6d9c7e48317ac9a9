"""The entity graph: extraction quality on labelled memories, build rules, traversal, questions.

`python -m tests.test_graph` prints the quality table that docs/graph.md quotes; a test checks
the document still says what the code measures.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxm import graph
from nxm.graph.extract import extract, norm
from nxm.graph.query import DONT_KNOW, ask, search, traverse
from nxm.record import new_record
from nxm.service import MemoryService
from nxs.context import Context
from nxs.errors import ConflictError, NotFoundError, ValidationError
from nxs.workspace import find

DATA = Path(__file__).parent / "data"
NOW = "2026-05-29T10:00:00.000Z"
NO_AGENT: dict[str, Any] = {"entities": {}, "relations": []}


def labelled(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))["memories"]


def as_records(memories: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for i, m in enumerate(memories):
        r = new_record(
            key=f"{i:016x}", introduction=m["introduction"], body=m["body"], user_id=m["user_id"],
            created=NOW, updated=NOW,
        )  # fmt: skip
        out[r["key"]] = r
    return out


# -- quality -------------------------------------------------------------------------------------


def extraction_counts(memories: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """True/false positives and negatives, per memory summed: entities (name, name+type), relations."""
    out = {"entities": Counter(), "typed": Counter(), "relations": Counter()}
    records = as_records(memories)
    built = graph.build(records, {}, NO_AGENT, NOW)
    for m, key in zip(memories, records, strict=True):
        got = extract(f"{m['introduction']}\n{m['body']}", m["user_id"])
        names = {norm(x["name"]) for x in got["mentions"]}
        typed = {(n, built.entities[built.names[n]]["type"]) for n in names}
        gold = {norm(n) for n, _ in m["entities"]}
        gold_typed = {(norm(n), t) for n, t in m["entities"]}
        rels = {(norm(x["source"]), x["relation"], norm(x["target"])) for x in got["relations"]}
        gold_rels = {(norm(a), r, norm(b)) for a, r, b in m["relations"]}
        for label, mine, truth in (
            ("entities", names, gold), ("typed", typed, gold_typed), ("relations", rels, gold_rels),
        ):  # fmt: skip
            out[label].update(tp=len(mine & truth), fp=len(mine - truth), fn=len(truth - mine))
        assert key in built.records
    return out


def question_results() -> list[tuple[str, str, float, bool]]:
    """(set, question, confidence, right) for every labelled question."""
    sets = json.loads((DATA / "graph_questions.json").read_text(encoding="utf-8"))["sets"]
    out = []
    for qs in sets:
        built = graph.build(as_records(labelled(qs["set"])), {}, NO_AGENT, NOW)
        for question, expected in qs["questions"]:
            got = ask(built, question=question)
            names = [a["name"] for a in got["answers"]]
            if expected is None:  # unanswerable: right when it declines (confidence below 0.5)
                right = got["confidence"] < 0.5
            else:
                right = got["confidence"] >= 0.5 and all(e in names for e in expected)
            out.append((qs["set"], question, got["confidence"], right))
    return out


def _pr(c: Counter[str]) -> str:
    p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
    r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
    return f"{p:.2f} | {r:.2f} | {c['tp']} | {c['fp']} | {c['fn']}"


def quality_table() -> str:
    """The Markdown tables docs/graph.md quotes."""
    lines = [
        "| set | memories | measure | precision | recall | tp | fp | fn |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, label in (("graph_set.json", "development"), ("graph_heldout.json", "held-out")):
        memories = labelled(name)
        counts = extraction_counts(memories)
        for measure in ("entities", "typed", "relations"):
            shown = {"entities": "entities (name)", "typed": "entities (name + type)"}
            lines.append(
                f"| {label} | {len(memories)} | {shown.get(measure, measure)} | {_pr(counts[measure])} |"
            )
    results = question_results()
    lines += ["", "| set | questions | right | answered (confidence ≥ 0.5) | right when answered |",
              "|---|---|---|---|---|"]  # fmt: skip
    for name, label in (("graph_set.json", "development"), ("graph_heldout.json", "held-out")):
        mine = [r for r in results if r[0] == name]
        answered = [r for r in mine if r[2] >= 0.5]
        lines.append(
            f"| {label} | {len(mine)} | {sum(r[3] for r in mine)} | {len(answered)} | "
            f"{sum(r[3] for r in answered)} |"
        )
    return "\n".join(lines) + "\n"


def test_extraction_quality_on_the_labelled_sets() -> None:
    dev, held = labelled("graph_set.json"), labelled("graph_heldout.json")
    assert len(dev) + len(held) >= 50
    d, h = extraction_counts(dev), extraction_counts(held)
    # one more false positive than before: isort (g24) is now a listed tool the labels omit
    assert (d["entities"]["tp"], d["entities"]["fp"], d["entities"]["fn"]) == (166, 3, 2)
    # one more: "the infrastructure team … manages the Terraform code" reads as owning Terraform
    assert (d["relations"]["tp"], d["relations"]["fp"], d["relations"]["fn"]) == (81, 2, 2)
    assert (h["entities"]["tp"], h["entities"]["fp"], h["entities"]["fn"]) == (61, 1, 7)
    assert (h["relations"]["tp"], h["relations"]["fp"], h["relations"]["fn"]) == (25, 2, 8)


def test_question_accuracy() -> None:
    results = question_results()
    assert len(results) >= 20
    # every one: the two held-out entities the extractor misses are found as plain words
    assert sum(r[3] for r in results) == len(results)
    assert all(r[3] for r in results if r[2] >= 0.5)  # every confident answer was right


def test_docs_quote_the_measured_quality() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "graph.md").read_text(encoding="utf-8")
    assert quality_table() in doc, "docs/graph.md: rerun `python -m tests.test_graph`"


# -- extraction ----------------------------------------------------------------------------------


def _triples(text: str, user: str | None = None) -> list[tuple[str, str, str]]:
    return [(r["source"], r["relation"], r["target"]) for r in extract(text, user)["relations"]]


def test_relations_lists_passives_and_pronouns() -> None:
    text = (
        "João Silva is a senior backend engineer at Acme Corp. He leads the backend team and "
        "uses TypeScript, Rust and Go. The events service is owned by Tendai Moyo."
    )
    assert _triples(text) == [
        ("João Silva", "WORKS_AT", "Acme Corp"),
        ("João Silva", "LEADS", "backend team"),
        ("João Silva", "USES", "TypeScript"),
        ("João Silva", "USES", "Rust"),
        ("João Silva", "USES", "Golang"),
        ("Tendai Moyo", "OWNS", "events service"),
    ]
    assert _triples("The user prefers pnpm over npm.", "bob") == [("bob", "PREFERS", "pnpm")]
    assert _triples("The user prefers pnpm over npm.") == []  # no user id: no subject


def test_what_is_not_an_entity() -> None:
    text = (
        "Deploy to staging with `make deploy-staging` (ENG-42). Run the suite with pytest; mark "
        "slow tests `@pytest.mark.slow` and keep TID253 on. We use JSON over HTTP."
    )
    assert sorted({m["name"] for m in extract(text)["mentions"]}) == ["pytest"]


def test_aliases_fold_to_one_canonical_name() -> None:
    names = [
        m["name"] for m in extract("We moved from postgres to k8s; Postgres stays.")["mentions"]
    ]
    assert names == ["PostgreSQL", "Kubernetes", "PostgreSQL"]


# -- the built graph -----------------------------------------------------------------------------


def _records(*bodies: str, **kw: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for i, body in enumerate(bodies):
        r = new_record(key=f"k{i}", introduction=f"memory {i}", body=body, **kw)
        out[r["key"]] = r
    return out


def test_forgetting_drops_only_what_no_other_memory_supports() -> None:
    records = _records("Dana Kim owns the billing service.", "Dana Kim prefers Vim.")
    before = graph.build(records, {}, NO_AGENT, NOW)
    assert sorted(e["name"] for e in before.entities.values()) == [
        "Dana Kim", "Vim", "billing service",
    ]  # fmt: skip
    records["k0"]["status"] = "forgotten"
    after = graph.build(records, {}, NO_AGENT, NOW)
    assert sorted(e["name"] for e in after.entities.values()) == ["Dana Kim", "Vim"]
    assert after.find("Dana Kim")["sourceMemoryIds"] == ["k1"]
    assert [r["relation"] for r in after.relations.values()] == ["PREFERS"]
    del records["k1"]  # purged
    assert graph.build(records, {}, NO_AGENT, NOW).entities == {}


def test_expired_task_memories_support_nothing() -> None:
    records = _records("Dana Kim prefers Vim.", layer="TASK", expires=NOW)
    assert graph.build(records, {}, NO_AGENT, NOW).entities == {}
    assert len(graph.build(records, {}, NO_AGENT, "2026-05-29T09:59:59.999Z").entities) == 2


def test_types_are_voted_and_first_names_fold_into_full_names() -> None:
    records = _records(
        "Marco Rossi works at Initech.", "Ask Marco before merging.", "Marco prefers Emacs."
    )
    built = graph.build(records, {}, NO_AGENT, NOW)
    marco = built.find("Marco")
    assert (marco["name"], marco["type"], marco["sourceMemoryIds"]) == (
        "Marco Rossi", "PERSON", ["k0", "k1", "k2"],
    )  # fmt: skip
    assert built.find("Initech")["type"] == "ORGANIZATION"
    assert marco["id"] == graph.entity_id("marco rossi")


def _built(*bodies: str) -> tuple[list[tuple], list[tuple]]:
    """(name, type, memories) of each entity and (source, relation, target) of each relation."""
    g = graph.build(_records(*bodies), {}, NO_AGENT, NOW)
    names = {eid: e["name"] for eid, e in g.entities.items()}
    entities = sorted(
        (e["name"], e["type"], tuple(e["sourceMemoryIds"])) for e in g.entities.values()
    )
    return entities, sorted((names[r["source"]], r["relation"], names[r["target"]])
                            for r in g.relations.values())  # fmt: skip


def test_a_lowercase_word_one_memory_names_a_thing_by_names_it_in_the_others() -> None:
    entities, relations = _built(
        "crawler is a small Rust job. It runs every night on the batch cluster.",
        "The Search team owns crawler and a few scripts.",
        "deploys are frozen until friday, ping me if it's urgent",  # chat: no sentence says much
    )
    assert ("crawler", "THING", ("k0", "k1")) in entities
    assert ("Search team", "OWNS", "crawler") in relations
    assert not any(name in ("deploys", "friday", "memory") for name, _, _ in entities)
    # without the memory that names it, "crawler" is a plain word again
    entities, relations = _built("The Search team owns crawler and a few scripts.")
    assert [e[0] for e in entities] == ["Search team"] and relations == []


def test_an_acronym_defined_beside_a_name_stands_for_it_everywhere() -> None:
    entities, relations = _built(
        "The Payments Platform group (PPG) is led by Ines Moreau.",
        "PPG owns ledger-svc and is based in Lyon.",
        "Questions about refunds go to PPG, not to SRE.",
    )
    assert ("Payments Platform group", "ORGANIZATION", ("k0", "k1", "k2")) in entities
    assert relations == [
        ("Ines Moreau", "LEADS", "Payments Platform group"),  # read across "(PPG)"
        ("Payments Platform group", "LOCATED_IN", "Lyon"),
        ("Payments Platform group", "OWNS", "ledger-svc"),
    ]
    assert not any(e[0] in ("PPG", "SRE") for e in entities)  # an undefined acronym is no name
    # letters that are not the name's initials define nothing
    entities, _ = _built(
        "The Payments Platform group (EMEA) is led by Ines Moreau.", "EMEA owns x."
    )
    assert ("Payments Platform group", "ORGANIZATION", ("k0",)) in entities


def test_a_line_keyed_by_a_name_relates_it_to_the_names_it_lists() -> None:
    _, relations = _built(
        "Directory\n- Payments Platform group: Ines Moreau (lead), Karl Weiss\n- On call: nobody",
        "Who sits where:\n- Karl Weiss: Lyon\n- Ines Moreau: Paris",
        "ledger-svc facts\nname: ledger-svc\nowner: Payments Platform group\nlanguage: Kotlin\n"
        "region: Frankfurt\nrunbook: see the wiki, Karl Weiss wrote most of it",
    )
    assert relations == [
        ("Ines Moreau", "LEADS", "Payments Platform group"),
        ("Ines Moreau", "LOCATED_IN", "Paris"),
        ("Karl Weiss", "LOCATED_IN", "Lyon"),
        ("Karl Weiss", "MEMBER_OF", "Payments Platform group"),
        ("Payments Platform group", "OWNS", "ledger-svc"),
        ("ledger-svc", "LOCATED_IN", "Frankfurt"),
        ("ledger-svc", "USES", "Kotlin"),
    ]  # the runbook line is a sentence, not a list of names: nothing read from it


def test_a_markdown_table_relates_each_row_to_its_first_cell_by_column() -> None:
    _, relations = _built(
        "Who runs what, as of March:\n"
        "| component | team | database | region |\n|:--|:--|:--|:--|\n"
        "| billing-svc | Ledger | PostgreSQL | Frankfurt |\n"
        "| courier | Dispatch squad | Redis, DynamoDB | Dublin |\n"
        "| notes | whatever is left | | |"
    )
    assert relations == [
        ("Dispatch squad", "OWNS", "courier"),
        ("Ledger", "OWNS", "billing-svc"),
        ("billing-svc", "LOCATED_IN", "Frankfurt"),
        ("billing-svc", "USES", "PostgreSQL"),
        ("courier", "LOCATED_IN", "Dublin"),
        ("courier", "USES", "DynamoDB"),
        ("courier", "USES", "Redis"),
    ]
    # the same cells without a header row say nothing
    assert _built("| billing-svc | Ledger | PostgreSQL | Frankfurt |")[1] == []


def test_a_field_line_states_its_relation_for_every_name_it_lists() -> None:
    _, relations = _built(
        "courier notes\nname: courier\nstack: Go, Redis and NATS\nowner: Dispatch squad"
    )
    assert relations == [
        ("Dispatch squad", "OWNS", "courier"),
        ("courier", "USES", "Golang"),
        ("courier", "USES", "NATS"),
        ("courier", "USES", "Redis"),
    ]


def test_stored_extraction_is_used_only_while_it_matches() -> None:
    records = _records("Dana Kim prefers Vim.")
    stale = {"k0": {"fingerprint": "0" * 16, "mentions": [], "relations": []}}
    assert len(graph.build(records, stale, NO_AGENT, NOW).entities) == 2  # re-extracted
    fresh = {
        "k0": {"fingerprint": graph.fingerprint(records["k0"]), "mentions": [], "relations": []}
    }
    assert graph.build(records, fresh, NO_AGENT, NOW).entities == {}  # trusted as stored


# -- traversal -----------------------------------------------------------------------------------


def _chain() -> graph.Graph:
    """A -USES-> B -USES-> C -USES-> D, all agent-authored."""
    ends = {n: {"name": n, "type": "THING"} for n in "ABCD"}
    agent = {
        "entities": {},
        "relations": [
            {"source": ends[a], "relation": "USES", "target": ends[b]}
            for a, b in (("A", "B"), ("B", "C"), ("C", "D"))
        ],
    }
    return graph.build({}, {}, agent, NOW)


def test_traversal_depth_limits() -> None:
    g = _chain()

    def reached(**kw: Any) -> list[tuple[str, int]]:
        return [(p["entity"]["name"], p["depth"]) for p in traverse(g, **kw)["paths"]]

    assert reached(entity="A", hops=1) == [("B", 1)]
    assert reached(entity="A", hops=2) == [("B", 1), ("C", 2)]
    assert reached(entity="A", hops=3) == [("B", 1), ("C", 2), ("D", 3)]
    assert reached(entity="B", hops=1) == [("A", 1), ("C", 1)]
    assert reached(entity="B", hops=1, direction="outgoing") == [("C", 1)]
    assert reached(entity="D", hops=3, direction="incoming") == [("C", 1), ("B", 2), ("A", 3)]
    assert reached(entity="D", hops=3, direction="outgoing") == []
    path = traverse(g, entity=graph.entity_id("a"), hops=2)["paths"][1]
    assert (path["from"]["name"], path["relationship"], path["direction"]) == (
        "B",
        "USES",
        "outgoing",
    )
    with pytest.raises(NotFoundError):
        traverse(g, entity="Z")


# -- search and questions ------------------------------------------------------------------------


def test_search_by_name_description_type_and_user() -> None:
    records = _records("Dana Kim owns the billing service.", "Priya leads the billing team.")
    records["k1"]["user_id"] = "u2"
    g = graph.build(records, {}, NO_AGENT, NOW)
    got = search(g, query="billing")
    # names first: a description that mentions billing does not make Dana Kim a match
    assert [(e["name"], e["score"]) for e in got["entities"]] == [
        ("billing service", 0.8), ("billing team", 0.8),
    ]  # fmt: skip
    assert [e["name"] for e in search(g, query="billing", type="ORGANIZATION")["entities"]] == [
        "billing team"
    ]
    assert [e["name"] for e in search(g, query="billing", user_id="u2")["entities"]] == [
        "billing team"
    ]
    assert search(g, query="billing", limit=1)["total"] == 2
    # no name matches: descriptions count
    assert [(e["name"], e["score"]) for e in search(g, query="owns")["entities"]] == [
        ("billing service", 0.4), ("Dana Kim", 0.4),
    ]  # fmt: skip
    assert search(g, query="dana kím")["entities"][0]["score"] == 1.0  # accents aside
    with pytest.raises(ValidationError):
        search(g, query=" ")


def test_a_question_answered_and_one_refused() -> None:
    g = graph.build(as_records(labelled("graph_set.json")), {}, NO_AGENT, NOW)
    got = ask(g, question="Who owns the billing service?")
    # one sentence per memory that states the relation: here the introduction
    assert got["answer"] == (
        "Dana Kim owns the billing service; ask her before changing invoice rounding."
    )
    assert [a["name"] for a in got["answers"]] == ["Dana Kim"]
    assert [e["name"] for e in got["entitiesUsed"]] == ["billing service"]
    assert (got["intent"], got["confidence"]) == ("OWNS", 0.75)
    nothing = ask(g, question="Who is the CFO of Wayne Enterprises?")
    assert (nothing["answer"], nothing["confidence"], nothing["entitiesUsed"]) == (
        "I don't know: no memory mentions CFO, Wayne, Enterprises.", 0.0, [],
    )  # fmt: skip
    assert ask(g, question="Who is?")["answer"] == DONT_KNOW
    partial = ask(g, question="Who owns the Kubernetes cluster in Frankfurt?")
    assert (partial["answer"], partial["confidence"], partial["answers"]) == (
        "I don't know: the graph has no Frankfurt.", 0.0, [],
    )  # fmt: skip


def test_confidence_rises_with_independent_support() -> None:
    g = graph.build(_records("Dana Kim works at Initech.", "Dana Kim works at Initech, remotely."),
                    {}, NO_AGENT, NOW)  # fmt: skip
    assert ask(g, question="Where does Dana Kim work?")["confidence"] == 0.95


def test_a_relation_joining_two_named_entities_comes_first() -> None:
    records = _records(
        "Dana Kim works at Initech.", "Priya works at Initech.", "Dana Kim works at Globex."
    )
    g = graph.build(records, {}, NO_AGENT, NOW)
    got = ask(g, question="Does Dana Kim work at Initech?")
    assert (got["answer"], [a["name"] for a in got["answers"]]) == (
        "Dana Kim works at Initech.", ["Dana Kim", "Initech"],
    )  # fmt: skip
    who = ask(g, question="Who works at Initech?")
    assert [a["name"] for a in who["answers"]] == ["Dana Kim", "Priya"]  # in name order


# -- storage and agent-authored facts --------------------------------------------------------------


def test_extractions_are_kept_by_text_and_hold_no_bodies(ctx: Context) -> None:
    """A memory is extracted once per text: the record cache keeps each extraction with the
    fingerprint of its text (names, votes and sentence numbers, never the body)."""
    svc = ctx.memory
    keys = [
        svc.add(body=f"Dana Kim moved the billing service {i} to Acme Corp; the secret rounding "
                "rule is banker's rounding.", introduction=f"Billing service {i}", now=NOW,
                actor="t")["memory"]["key"]
        for i in range(4)
    ]  # fmt: skip
    extracted: list[str] = []
    real = graph._extraction
    try:
        graph._extraction = lambda r: extracted.append(r["key"]) or real(r)  # type: ignore[assignment]
        graph.current(svc, NOW)
        assert sorted(extracted) == sorted(keys)
        extracted.clear()
        svc.update(key=keys[1], body="Priya Shah took over billing from Dana Kim in Paris.",
                   introduction="Priya owns billing", now=NOW, actor="t")  # fmt: skip
        graph.current(MemoryService(find(svc.ws.root)), NOW)  # a new process keeps them too
        assert extracted == [keys[1]]
    finally:
        graph._extraction = real  # type: ignore[assignment]
    stored = svc.store.cache.extractions()
    assert stored == {k: graph._extraction(r) for k, r in svc.store.records().items()}
    assert b"rounding" not in orjson.dumps(stored)
    svc.purge(key=svc.forget(key=keys[0], now=NOW, actor="t")["memory"]["key"], now=NOW, actor="t")
    assert keys[0] not in svc.store.cache.extractions()


def test_a_given_name_costs_one_more_extraction_of_the_memories_using_it(ctx: Context) -> None:
    svc = ctx.memory

    def add(body: str, intro: str) -> str:
        return svc.add(body=body, introduction=intro, now=NOW, actor="t")["memory"]["key"]

    user = add("The Search team owns crawler and a few scripts.", "What search owns")
    calls: list[tuple[str, bool]] = []
    real = graph._extraction
    try:
        graph._extraction = lambda r, names=None: (
            calls.append((r["key"], bool(names))) or real(r, names)
        )  # type: ignore[assignment]
        graph.current(svc, NOW)
        calls.clear()
        giver = add("crawler is a small Rust job. It runs every night.", "Crawler")
        built = graph.current(svc, NOW)
        assert sorted(calls) == sorted([(giver, False), (user, True)])
        assert built.find("crawler")["sourceMemoryIds"] == [user, giver]
        calls.clear()
        graph.current(MemoryService(find(svc.ws.root)), NOW)  # kept: a new process redoes none
        assert calls == []
        svc.forget(key=giver, now=NOW, actor="t")  # the name goes with the memory that gave it
        assert graph.current(svc, NOW).find("crawler") is None
        assert calls == [(user, False)]
    finally:
        graph._extraction = real  # type: ignore[assignment]


def test_agent_facts_survive_re_extraction_and_forgetting(ctx: Context) -> None:
    svc = ctx.memory
    key = svc.add(body="Dana Kim owns the billing service.", introduction="Dana owns billing",
                  now=NOW, actor="t")["memory"]["key"]  # fmt: skip
    added = graph.add(svc, name="dana kim", description="Billing owner.", now=NOW, actor="agent")
    assert (added["created"], added["changed"]) == (False, True)  # a correction of an extracted one
    assert added["entity"]["description"] == "Billing owner."
    assert added["entity"]["name"] == "Dana Kim"  # a correction keeps the entity's spelling
    assert added["entity"]["descriptionSource"] == "agent"
    again = graph.add(svc, name="Dana Kim", description="Billing owner.", now=NOW, actor="agent")
    assert again["changed"] is False
    rel = graph.relate(svc, source="Dana Kim", relation="reports to", target="billing service",
                       now=NOW, actor="agent")  # fmt: skip
    assert (rel["created"], rel["relation"]["relation"]) == (True, "REPORTS_TO")
    assert graph.relate(svc, source="Dana Kim", relation="REPORTS_TO", target="billing service",
                        now=NOW, actor="agent")["created"] is False  # fmt: skip
    with svc.store.cache.transaction() as conn:  # the local cache can go: nothing is lost
        conn.execute("DELETE FROM extracted")
    lines = (svc.ws.dir / graph.AGENT_LOG).read_bytes().splitlines()
    assert [orjson.loads(x)["op"] for x in lines] == ["entity", "relation"]  # committed, appended
    svc.forget(key=key, now=NOW, actor="t")
    g = graph.current(svc, NOW)
    dana = g.find("Dana Kim")
    assert (dana["type"], dana["authored"], dana["sourceMemoryIds"]) == ("PERSON", True, [])
    assert [r["relation"] for r in g.relations.values()] == ["REPORTS_TO"]
    with pytest.raises(NotFoundError):
        graph.relate(svc, source="Nobody", relation="USES", target="Dana Kim", now=NOW, actor="a")
    with pytest.raises(ValidationError):
        graph.relate(
            svc, source="Dana Kim", relation="uses!", target="Dana Kim", now=NOW, actor="a"
        )


def test_the_kept_graph_follows_writes_agent_statements_and_expiry(ctx: Context) -> None:
    """A service keeps its graph between questions; a write, an agent's statement or a memory
    expiring must each show at once."""
    svc = ctx.memory
    svc.add(body="Dana Kim owns the billing service.", introduction="Dana owns billing", now=NOW,
            actor="t")  # fmt: skip
    svc.add(body="Omar Haddad owns the deploy bot.", introduction="Omar owns the deploy bot",
            now=NOW, actor="t", layer="TASK", ttl_days=1)  # fmt: skip
    first = graph.current(svc, NOW)
    assert graph.current(svc, NOW) is first  # kept: nothing changed
    assert first.find("deploy bot") is not None
    later = "2026-06-03T10:00:00.000Z"  # the task memory has expired
    assert graph.current(svc, later).find("deploy bot") is None
    key = svc.add(body="Priya Raman leads the billing team.", introduction="Priya leads billing",
                  now=later, actor="t")["memory"]["key"]  # fmt: skip
    assert graph.current(svc, later).find("Priya Raman")["sourceMemoryIds"] == [key]
    graph.add(svc, name="Ledger", type="THING", now=later, actor="agent")
    assert graph.current(svc, later).find("Ledger")["authored"] is True
    svc.forget(key=key, now=later, actor="t")
    assert graph.current(svc, later).find("Priya Raman") is None


def test_what_an_agent_wrote_can_be_removed_and_the_log_keeps_it(ctx: Context) -> None:
    svc = ctx.memory
    svc.add(body="Dana Kim uses pytest every day.", introduction="Dana uses pytest", now=NOW,
            actor="t")  # fmt: skip
    graph.add(svc, name="Acme Corp", type="ORGANIZATION", now=NOW, actor="agent")
    graph.relate(svc, source="Dana Kim", relation="WORKS_AT", target="Acme Corp", now=NOW,
                 actor="agent")  # fmt: skip
    graph.relate(svc, source="pytest", relation="USES", target="Acme Corp", now=NOW, actor="agent")
    got = graph.remove(svc, entity="Dana Kim", relation="works at", target="acme corp", now=NOW,
                       actor="agent", reason="moved on")  # fmt: skip
    assert [r["relation"] for r in got["removed"]["relations"]] == ["WORKS_AT"]
    assert got["entity"]["name"] == "Dana Kim"  # still extracted from the memory
    g = graph.current(svc, NOW)
    assert [r["relation"] for r in g.relations.values() if r["authored"]] == ["USES"]
    gone = graph.remove(svc, entity="Acme Corp", now=NOW, actor="agent")
    assert [e["name"] for e in gone["removed"]["entities"]] == ["Acme Corp"]
    assert [r["relation"] for r in gone["removed"]["relations"]] == ["USES"]
    assert graph.current(svc, NOW).find("Acme Corp") is None
    ops = [orjson.loads(x)["op"] for x in (svc.ws.dir / graph.AGENT_LOG).read_bytes().splitlines()]
    assert ops[-2:] == ["remove_relation", "remove_entity"]
    before = (svc.ws.dir / graph.AGENT_LOG).read_bytes()
    with pytest.raises(ConflictError) as info:
        graph.remove(svc, entity="pytest", now=NOW, actor="agent")  # only extracted
    assert info.value.code == "NOT_AUTHORED"
    with pytest.raises(NotFoundError):
        graph.remove(svc, entity="Nobody", now=NOW, actor="agent")
    with pytest.raises(ValidationError):
        graph.remove(svc, entity="Dana Kim", relation="USES", now=NOW, actor="agent")
    assert (svc.ws.dir / graph.AGENT_LOG).read_bytes() == before  # refusals wrote nothing


def timings(n: int = 1000) -> dict[str, float]:
    """CPU milliseconds (best of 5) of the graph and knowledge reads at ``n`` memories."""
    import time

    from nxm.knowledge import knowledge

    base = labelled("graph_set.json") + labelled("graph_heldout.json")
    cats = ["conventions", "decisions", "gotchas", "people", "tech-stack", None]
    records = {}
    for i in range(n):
        m = base[i % len(base)]
        r = new_record(
            key=f"{i:016x}", introduction=m["introduction"], body=f"{m['body']} Note {i}.",
            user_id=m["user_id"], category=cats[i % len(cats)], created=NOW, updated=NOW,
        )  # fmt: skip
        records[r["key"]] = r

    def best(work: Any, runs: int = 5) -> float:
        times = []
        for _ in range(runs):
            start = time.process_time()
            work()
            times.append(time.process_time() - start)
        return round(min(times) * 1000, 1)

    extracted = {k: graph._extraction(r) for k, r in records.items()}
    raw = orjson.dumps({"memories": extracted})
    built = graph.build(records, extracted, NO_AGENT, NOW)
    return {
        "extract every memory": best(lambda: [graph._extraction(r) for r in records.values()], 1),
        "load the extractions": best(lambda: orjson.loads(raw)),
        "assemble the graph": best(lambda: graph.build(records, extracted, NO_AGENT, NOW)),
        "graph search": best(lambda: search(built, query="billing")),
        "graph query": best(lambda: ask(built, question="Who owns the billing service?")),
        "knowledge (merged)": best(lambda: knowledge(records, now=NOW)),
    }


if __name__ == "__main__":
    import sys

    if "--timings" in sys.argv:
        for label, ms in timings().items():
            print(f"{label}: {ms} ms")
    else:
        print(quality_table(), end="")


def test_hand_edited_log_lines_without_their_fields_are_skipped(ctx: Context) -> None:
    svc = ctx.memory
    graph.add(svc, name="Acme Corp", type="ORGANIZATION", now=NOW, actor="agent")
    with (svc.ws.dir / graph.AGENT_LOG).open("ab") as fh:
        for bad in ({"op": "entity"}, {"op": "relation", "source": {}}, {"op": "remove_entity"},
                    {"op": "relation", "source": 3, "relation": "USES", "target": None}):  # fmt: skip
            fh.write(orjson.dumps({**bad, "at": NOW}) + b"\n")
    assert graph.current(svc, NOW).find("Acme Corp")["name"] == "Acme Corp"
    graph.add(svc, name="Dana Kim", type="PERSON", now=NOW, actor="agent")
    graph.relate(svc, source="Dana Kim", relation="WORKS_AT", target="Acme Corp", now=NOW,
                 actor="agent")  # fmt: skip
    assert [r["relation"] for r in graph.current(svc, NOW).relations.values()] == ["WORKS_AT"]
