"""Memory link refs: parsing, the migration rule (`qualify`) and reading within one organisation."""

from __future__ import annotations

from typing import Any

import pytest

from nxs.linear.links import Link, named, parse, qualify, ref_for, url_key


def linked(org_label: str, url_key_: str, *identifiers: str, **data: Any) -> dict[str, Any]:
    """A LINKED event as the old code wrote it (the organisation only in the issues' URLs)."""
    issues = [
        {"id": f"id-{i}", "identifier": i, "url": f"https://linear.app/{url_key_}/issue/{i}/slug"}
        for i in identifiers
    ]
    return {"type": "LINKED", "data": {"org": org_label, "linear_issues": issues, **data}}


@pytest.mark.parametrize(
    ("ref", "link"),
    [
        ("linear:acme/NC-103", Link("NC-103", "acme")),
        ("LINEAR:Acme/nc-103", Link("NC-103", "acme")),
        ("linear:NC-103", Link("NC-103", None, legacy_prefixed=True)),
        ("nc-1", Link("NC-1", None)),
        ("src/proxy.ts", None),
        ("tests/NC-1", None),  # a path, not a link: only linear: refs carry an organisation
        ("linear:acme/", None),
        ("linear:a/b/NC-1", None),
        ("ENG-42x", None),
    ],
)
def test_parse(ref: str, link: Link | None) -> None:
    assert parse(ref) == link


def test_ref_for_and_url_key() -> None:
    assert ref_for("Acme", "nc-103") == "linear:acme/NC-103"
    assert url_key("https://linear.app/acme/issue/NC-103/rate-limit-retries") == "acme"
    assert url_key("https://linear.test/jolly/issue/JL-1") == "jolly"
    assert url_key("https://linear.app/acme/project/p") is None
    assert url_key("http://[bad/x/issue/y") is None and url_key(None) is None


def test_qualify_rewrites_attributable_legacy_refs_only() -> None:
    events = [
        {"type": "CREATED", "data": {}},
        linked("AV", "acme", "NC-103", "NC-1"),
        linked("JL", "jolly", "NC-103"),
        {"type": "CLASSIFIED", "data": {"fields": ["refs"]}},
    ]
    refs = ["linear:NC-103", "linear:NC-1", "linear:NC-7", "NC-2", "linear:acme/ENG-4", "a.py"]
    assert qualify(refs, events) == [
        "linear:acme/NC-103", "linear:jolly/NC-103",  # linked in both organisations
        "linear:acme/NC-1",
        "linear:NC-7",  # no event accounts for it: kept as it is
        "NC-2", "linear:acme/ENG-4", "a.py",
    ]  # fmt: skip
    once = qualify(refs, events)
    assert qualify(once, events) == once  # idempotent
    assert qualify(["linear:NC-1", "linear:acme/NC-1"], events) == ["linear:acme/NC-1"]
    newer = [linked("JL", "ignored", "NC-9", org_key="jolly")]  # org_key wins over the URL
    assert qualify(["linear:NC-9"], newer) == ["linear:jolly/NC-9"]


def test_named_reads_a_link_only_in_its_organisation() -> None:
    events = [linked("JL", "jolly", "NC-99")]
    refs = ["linear:acme/NC-1", "linear:NC-99", "NC-2", "linear:jolly/NC-3"]
    wanted = {"NC-1", "NC-2", "NC-3", "NC-99"}
    assert named(refs, events, "acme", wanted, single_org=False) == ["NC-1"]
    assert named(refs, events, "jolly", wanted, single_org=False) == ["NC-3", "NC-99"]
    # one organisation connected: a ref naming none can only mean it; an attributed one keeps
    # its organisation
    assert named(refs, events, "acme", wanted, single_org=True) == ["NC-1", "NC-2"]
    assert named(["linear:NC-5"], [], "acme", {"NC-5"}, single_org=True) == ["NC-5"]
    assert named(["linear:NC-5"], [], "acme", {"NC-5"}, single_org=False) == []
    assert named(refs, events, "acme", {"NC-3"}, single_org=True) == []
