"""Lines that state relations by their layout rather than their words: "Owner: X" fields about
the memory's topic, a line keyed by a name ("HPC Systems: Emeka (lead), Rhys"), a Markdown
table's rows, and the names such lines list. docs/graph.md, "How extraction works", step 4.
"""

from __future__ import annotations

import re
from typing import Any

from nxm.graph.connectors import kind_of

Pair = tuple[Any, str, Any, str]  # (source, relation, target, connecting words)

# "Owner: X" lines: the relation X stands in to the memory's topic, and whether X is its source
FIELDS = {"owner": ("OWNS", True), "owners": ("OWNS", True), "maintainer": ("OWNS", True),
          "maintainers": ("OWNS", True), "owned by": ("OWNS", True), "lead": ("LEADS", True),
          "led by": ("LEADS", True), "stack": ("USES", False), "built with": ("USES", False),
          "depends on": ("DEPENDS_ON", False), "location": ("LOCATED_IN", False),
          "based in": ("LOCATED_IN", False), "replaces": ("REPLACES", False),
          **dict.fromkeys("os lang language runtime db database storage framework platform cloud "
                          "hosting cdn cache queue editor".split(), ("USES", False)),
          **dict.fromkeys("site region city office datacentre datacenter".split(),
                          ("LOCATED_IN", False)),
          **dict.fromkeys("contact on-call oncall pager steward codeowners".split(), ("OWNS", True)),
          "manager": ("REPORTS_TO", False), "reports to": ("REPORTS_TO", False),
          "employer": ("WORKS_AT", False), "upstream": ("DEPENDS_ON", False)}  # fmt: skip
NAMED = re.compile(r"^\s*name\s*:\s*", re.IGNORECASE)  # "name: Cairn": what the memory is about
# a Markdown table's columns: what a cell states about its row's first cell
_COLUMNS = {**FIELDS, "team": ("OWNS", True), "owning team": ("OWNS", True)}
ROW = re.compile(r"^\|.*\|$")
RULE = re.compile(r"^\|[\s:|-]+\|$")
FIELD = re.compile(rf"^\s*([\w -]{{2,40}} )?({'|'.join(FIELDS)})\s*:\s*", re.IGNORECASE)
ASIDE = re.compile(r"\s*\([^()]*\)")
_KEY = re.compile(r"\s*:\s+")
_VALUE_SEP = re.compile(r"\s*(?:,|;|/|&|,?\s*and)\s*")
_LEAD_IN = re.compile(r"\s*(?:(?:the|our|their|its|a|an)\s+)?", re.IGNORECASE)
_LEAD_MARK = re.compile(r"\s*\((?:team )?(?:lead|head)\)", re.IGNORECASE)
# (the key's type, a value's type) -> the relation, and whether the value is its source
_KEYED = {("ORGANIZATION", "PERSON"): ("MEMBER_OF", True), ("THING", "PERSON"): ("OWNS", True),
          ("THING", "ORGANIZATION"): ("OWNS", True), ("PERSON", "PLACE"): ("LOCATED_IN", False),
          ("THING", "PLACE"): ("LOCATED_IN", False), ("ORGANIZATION", "PLACE"): ("LOCATED_IN", False),
          ("THING", "THING"): ("USES", False)}  # fmt: skip


def keyed(sent: str, found: list[Any]) -> list[Pair]:
    """A line keyed by a name relates it to the names it lists, by their types: "HPC Systems:
    Emeka Nwosu (lead), Rhys Pritchard", "scrubber: Ilse de Vries", "Tom Achterberg: Sheffield"."""
    if not found or found[0].kind == "coref" or sent[: found[0].start].strip(" •*-"):
        return []
    head = found[0]
    key = _KEY.match(sent, head.end)
    if key is None:
        return []
    out: list[Pair] = []
    for value in listed_from(sent, found[1:], key.end()):
        relation, backwards = _KEYED.get((kind_of(head), kind_of(value)), (None, False))
        if relation == "MEMBER_OF" and _LEAD_MARK.match(sent, value.end):
            relation = "LEADS"
        if relation:
            out.append((value, relation, head, ":") if backwards else (head, relation, value, ":"))
    return out


def row(sent: str, found: list[Any], columns: list[str]) -> list[Pair]:
    """A Markdown table row: each cell under a column a field names ("team", "language",
    "region") relates the names in it to the row's first name ("| ride-engine | Trips | Elixir |")."""
    bars = [i for i, c in enumerate(sent) if c == "|"]
    cell = {id(m): sum(1 for b in bars if b < m.start) - 1 for m in found}
    keys = [m for m in found if cell[id(m)] == 0]
    if not keys:
        return []
    out: list[Pair] = []
    for m in found:
        column = columns[cell[id(m)]] if 0 < cell[id(m)] < len(columns) else ""
        if column in _COLUMNS:
            relation, backwards = _COLUMNS[column]
            if column.endswith("team"):
                m.vote({"ORGANIZATION": 3})  # a name under "team" is one, whatever its shape
            out.append(
                (m, relation, keys[0], column) if backwards else (keys[0], relation, m, column)
            )
    return out


def listed_from(sent: str, found: list[Any], start: int) -> list[Any]:
    """The names listed from ``start`` on ("A, B (lead) and C"): nothing else before the first,
    only separators and asides between them."""
    out: list[Any] = []
    at = start
    for m in found:
        if m.start < start:
            continue
        gap = ASIDE.sub("", sent[at : m.start])
        if (not out and not _LEAD_IN.fullmatch(gap)) or (out and not _VALUE_SEP.fullmatch(gap)):
            break  # not a list of names: a sentence
        out.append(m)
        at = m.end
    return out
