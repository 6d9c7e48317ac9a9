"""Which entity names are other spellings of another name in the same graph.

When unambiguous: accents aside, a lone first name, an ``@handle``, a team's bare name, "<name>
service" for "<name>-svc", a company's bare name (docs/graph.md, "Aliases"). Names an agent wrote
are never folded, and a word-list name (a technology, a city) is never taken for a first name.
"""

from __future__ import annotations

import re
from collections import Counter

from nxm.graph.extract import fold, norm
from nxm.graph.lexicon import ORG_SUFFIXES, ORGS, PLACES, TEAM_HEADS, TECH

_SUFFIXES = frozenset(w.casefold() for w in ORG_SUFFIXES)
_SERVICE = re.compile(r"^(.+?)(?:[- ](?:svc|service))$")
_LISTED = frozenset(norm(n) for names in (TECH, ORGS, PLACES) for n in names.values())


def _handle_forms(full: str) -> set[str]:
    words = fold(full).replace("-", " ").split()
    first, last = words[0], words[-1]
    return {first, last, first + last, first[0] + last, first + last[0], f"{first[0]}.{last}",
            *(f"{first}{sep}{last}" for sep in ".-_")}  # fmt: skip


def aliases(types: dict[str, str], votes: dict[str, Counter[str]], keep: object) -> dict[str, str]:
    """{short or variant name: the name it stands for}, names normalised (`nxm.graph.extract.norm`)."""
    out: dict[str, str] = {}
    by_fold: dict[str, list[str]] = {}
    for n in types:
        by_fold.setdefault(fold(n), []).append(n)
    for variants in by_fold.values():
        if len(variants) > 1:
            # the accented spelling, then the most voted, then the first in order
            best = max(variants, key=lambda v: (v != fold(v), sum(votes[v].values()), v))
            out.update({v: best for v in variants if v != best and v not in keep})
    # short form -> the names it may stand for
    people, handles, orgs, teams, services = {}, {}, {}, {}, {}  # type: ignore[var-annotated]
    for n, t in types.items():
        if n in out:
            continue
        words = n.split()
        if t == "PERSON" and len(words) > 1 and not n.startswith("@"):
            people.setdefault(fold(words[0]), []).append(n)
            for form in _handle_forms(n):
                handles.setdefault(form, []).append(n)
        if t == "ORGANIZATION" and len(words) > 1 and words[-1] in _SUFFIXES:
            orgs.setdefault(" ".join(words[:-1]), []).append(n)
        if len(words) > 1 and words[-1] in TEAM_HEADS:
            teams.setdefault(" ".join(words[:-1]), []).append(n)
        if t == "THING" and "-" in n and (m := _SERVICE.match(n)):
            services.setdefault(m.group(1), []).append(n)
    for n, t in types.items():
        if n in keep or n in out:
            continue
        listed = n in _LISTED  # a word-list name is what the list says it is
        words = n.split()
        if n.startswith("@") and len(handles.get(fold(n[1:]), ())) == 1:
            out[n] = handles[fold(n[1:])][0]
        elif len(words) == 1 and not listed and len(people.get(fold(n), ())) == 1:
            if t in ("PERSON", "THING"):
                out[n] = people[fold(n)][0]
        elif t in ("ORGANIZATION", "THING") and len(orgs.get(n, ())) == 1:
            out[n] = orgs[n][0]
        elif not listed and t != "PLACE" and len(teams.get(n, ())) == 1:
            out[n] = teams[n][0]
        elif words[0] == "team" and len(words) > 1 and len(teams.get(" ".join(words[1:]), ())) == 1:
            out[n] = teams[" ".join(words[1:])][0]
        elif t == "THING" and (m := _SERVICE.match(n)) and "-" not in n:
            hits = [s for s in services.get(m.group(1), ()) if s != n]
            if len(hits) == 1:
                out[n] = hits[0]
    for n in list(out):  # a chain of aliases ends at a name that is no alias
        seen = {n}
        while out[n] in out and out[n] not in seen:
            seen.add(out[n])
            out[n] = out[out[n]]
    return out


__all__ = ["aliases"]
