"""Memory <-> Linear issue links: refs that name the organisation, read only within it.

A link is the ref ``linear:<org>/<IDENTIFIER>`` (``linear:acme/NC-103``), ``<org>`` being
Linear's ``organization.urlKey``: the same whatever label each person connected it under, so a
committed `.nxs/` means the same on every machine. Identifiers repeat across organisations, so
a link is read only in the organisation it names.

Legacy refs (``linear:NC-103``, or hand-typed ``NC-103``) belong to the organisations the
memory's own ``LINKED`` events recorded for that identifier; one no event accounts for is read
only while a single organisation is connected. `migrate` rewrites the attributable ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MemoryService = Any  # the memory module's service (`nxs.registry`): its public methods only

PREFIX = "linear:"
IDENTIFIER_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*-[0-9]+$")
ORG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
LINKED = "LINKED"
EVERY = 1_000_000_000  # a page size that is every memory (list pages; we want them all)


@dataclass(frozen=True)
class Link:
    """What one ref names: an identifier (upper case) and its organisation (None: unknown)."""

    identifier: str
    org: str | None
    legacy_prefixed: bool = False  # ``linear:NC-103``, from before links named the org


def ref_for(org: str, identifier: str) -> str:
    """The ref a link stores, e.g. ``linear:acme/NC-103``."""
    return f"{PREFIX}{org.lower()}/{identifier.upper()}"


def parse(ref: str) -> Link | None:
    """The link a ref names, or None when it names no Linear issue."""
    text = ref.strip()
    prefixed = text.lower().startswith(PREFIX)
    if prefixed:
        text = text[len(PREFIX) :]
    org, _, ident = text.rpartition("/")
    if org and prefixed and ORG_RE.match(org) and IDENTIFIER_RE.match(ident):
        return Link(ident.upper(), org.lower())
    if not org and IDENTIFIER_RE.match(ident):
        return Link(ident.upper(), None, legacy_prefixed=prefixed)
    return None


def url_key(url: str | None) -> str | None:
    """The organisation's URL key in an issue URL (``https://linear.app/acme/issue/NC-1``)."""
    if not url:
        return None
    try:
        path = urlsplit(url).path.split("/")
    except ValueError:
        return None
    if len(path) > 3 and path[2] == "issue" and ORG_RE.match(path[1]):
        return path[1].lower()
    return None


def attributions(events: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """The organisations each identifier was linked in, from a memory's ``LINKED`` events."""
    out: dict[str, set[str]] = {}
    for e in events:
        if e.get("type") != LINKED:
            continue
        data = e.get("data") or {}
        for issue in data.get("linear_issues") or []:
            if not isinstance(issue, dict) or not issue.get("identifier"):
                continue
            org = data.get("org_key") or url_key(issue.get("url"))
            if org:
                out.setdefault(str(issue["identifier"]).upper(), set()).add(str(org).lower())
    return out


def qualify(refs: list[str], events: Iterable[dict[str, Any]]) -> list[str]:
    """The refs with every attributable ``linear:<ID>`` rewritten to ``linear:<org>/<ID>``
    (one per organisation the events link it in); every other ref kept as it is."""
    known = attributions(events)
    out: list[str] = []
    for r in refs:
        link = parse(r)
        if link is not None and link.legacy_prefixed and known.get(link.identifier):
            out.extend(ref_for(org, link.identifier) for org in sorted(known[link.identifier]))
        else:
            out.append(r)
    return list(dict.fromkeys(out))


def named(
    refs: list[str], events: Iterable[dict[str, Any]], org: str | None, identifiers: set[str],
    single_org: bool,
) -> list[str]:  # fmt: skip
    """The identifiers (of ``identifiers``, upper case) these refs link in organisation ``org``.

    ``single_org``: only one organisation is connected, so a ref that names none is read as
    naming it. ``org`` None (unknown) reads only such refs.
    """
    known: dict[str, set[str]] | None = None  # read from the events at the first legacy ref
    hits: set[str] = set()
    for r in refs:
        link = parse(r)
        if link is None or link.identifier not in identifiers:
            continue
        orgs: set[str] | None = None  # None: the ref names no organisation
        if link.org is not None:
            orgs = {link.org}
        elif link.legacy_prefixed:
            known = attributions(events) if known is None else known
            orgs = known.get(link.identifier)
        if (orgs is None and single_org) or (org is not None and org.lower() in (orgs or ())):
            hits.add(link.identifier)
    return sorted(hits)


def is_legacy(refs: list[str]) -> bool:
    """Whether any ref is a ``linear:<ID>`` made before links named the organisation."""
    return any((link := parse(r)) is not None and link.legacy_prefixed for r in refs)


def memories(service: MemoryService) -> list[dict[str, Any]]:
    """Every memory's summary (forgotten ones too), in reading order."""
    return service.list(status="all", page=1, page_size=EVERY)["memories"]


def events(service: MemoryService, key: str) -> list[dict[str, Any]]:
    """A memory's whole event timeline, oldest first."""
    return service.history(key=key, limit=EVERY, order="oldest")["events"]


def linked(
    service: MemoryService, org: str | None, identifiers: Iterable[str], single_org: bool, *,
    forgotten: bool = True,
) -> list[tuple[dict[str, Any], list[str]]]:  # fmt: skip
    """The memories linking one of ``identifiers`` in ``org``, each with the identifiers named."""
    wanted = {i.upper() for i in identifiers}
    out = []
    for memory in memories(service):
        if not forgotten and memory["status"] == "forgotten":
            continue
        refs = memory["refs"]
        if not any((link := parse(r)) is not None and link.identifier in wanted for r in refs):
            continue
        history = events(service, memory["key"]) if is_legacy(refs) else []
        hits = named(refs, history, org, wanted, single_org)
        if hits:
            out.append((memory, hits))
    return out


def migrate(service: MemoryService, now: str, actor: str) -> list[str]:
    """Rewrite every attributable legacy ref (one ``classify`` per memory); the keys changed."""
    changed = []
    for memory in memories(service):
        if not is_legacy(memory["refs"]):
            continue
        refs = qualify(memory["refs"], events(service, memory["key"]))
        if refs != memory["refs"]:
            service.classify(key=memory["key"], refs=refs, now=now, actor=actor)
            changed.append(memory["key"])
    return changed


__all__ = [
    "Link", "attributions", "is_legacy", "linked", "memories", "migrate", "named", "parse",
    "qualify", "ref_for", "url_key",
]  # fmt: skip
