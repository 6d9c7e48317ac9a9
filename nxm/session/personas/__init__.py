"""Personas: named ways of working a model can adopt (seed 000's get_persona_definition).

Built-in personas ship as TOML files beside this module; a workspace adds its own (or replaces
a built-in of the same name) as ``.nxs/personas/<name>.toml`` (`TEXT_FIELDS`, `LIST_FIELDS`).

`hint` is how recall picks a ``persona_hint``, deterministically: keywords matched in the request
and recalled memories recorded with the persona score; docs/session.md gives the rule.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from nxs.errors import NotFoundError, ValidationError
from nxs.trust import read_limited

HINT_MIN_SCORE = 2
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
TEXT_FIELDS = ("title", "description", "communication_style")
LIST_FIELDS = ("guidelines", "when_to_use", "keywords")
_WORD = re.compile(r"[a-z0-9]+")


def _check(data: dict[str, Any], origin: str, stem: str) -> dict[str, Any]:
    """A validated persona definition (fields in a fixed order)."""

    def bad(why: str) -> ValidationError:
        return ValidationError(
            f"persona file {origin} is invalid: {why}",
            suggestion="see docs/session.md for the persona file format",
            code="BAD_PERSONA",
        )

    name = data.get("name", stem)
    if not isinstance(name, str) or not NAME.match(name) or name != stem:
        raise bad(f"name must be the file's name ({stem!r}): lowercase letters, digits, - or _")
    out: dict[str, Any] = {"name": name}
    for f in TEXT_FIELDS:
        value = data.get(f)
        if not isinstance(value, str) or not value.strip():
            raise bad(f"{f} must be a non-empty string")
        out[f] = value.strip()
    for f in LIST_FIELDS:
        value = data.get(f, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise bad(f"{f} must be a list of non-empty strings")
        out[f] = [v.strip() for v in value]
    unknown = sorted(set(data) - {"name", *TEXT_FIELDS, *LIST_FIELDS})
    if unknown:
        raise bad(f"unknown fields: {', '.join(unknown)}")
    return out


def _parse(text: str, origin: str, stem: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(
            f"persona file {origin} is not valid TOML: {exc}", code="BAD_PERSONA"
        ) from None
    return _check(data, origin, stem)


def builtin() -> dict[str, dict[str, Any]]:
    """The personas shipped with nxs, by name."""
    out = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            stem = entry.name[: -len(".toml")]
            out[stem] = {**_parse(entry.read_text("utf-8"), entry.name, stem), "source": "builtin"}
    return out


def load(workspace_dir: Path | None, strict: bool = True) -> dict[str, dict[str, Any]]:
    """Built-in personas overlaid with the workspace's ``.nxs/personas/*.toml``, sorted by name;
    without ``strict`` a broken file is skipped (recall's hint must never fail a recall).

    Raises:
        ValidationError: a workspace persona file is unreadable or invalid (strict only).
    """
    found = builtin()
    folder = workspace_dir / "personas" if workspace_dir is not None else None
    if folder is not None and folder.is_dir():
        for path in sorted(folder.glob("*.toml")):
            origin = f".nxs/personas/{path.name}"
            try:
                try:  # committed: a link to /dev/zero is refused, not read
                    text = read_limited(path).decode("utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    why = getattr(exc, "strerror", None) or "not UTF-8"
                    raise ValidationError(f"persona file {origin} cannot be read: {why}") from None
                persona = _parse(text, origin, path.stem)
            except ValidationError as exc:
                if strict:
                    exc.code, exc.suggestion = "BAD_PERSONA", f"fix or remove {origin}"
                    raise
                continue
            found[path.stem] = {**persona, "source": "workspace"}
    return dict(sorted(found.items()))


def listing(personas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The answer of `nxm personas`: every persona's name, title, description and source."""
    rows = [
        {k: p[k] for k in ("name", "title", "description", "when_to_use", "source")}
        for p in personas.values()
    ]
    return {"personas": rows, "total": len(rows)}


def show(personas: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """The answer of `nxm persona NAME`: the whole definition.

    Raises:
        NotFoundError: no persona by that name (the message lists the known ones).
    """
    persona = personas.get(name.strip().lower())
    if persona is None:
        known = ", ".join(personas)
        raise NotFoundError(
            f"no persona named {name!r}; known personas: {known}",
            suggestion="list them with `nxm personas`",
            code="PERSONA_NOT_FOUND",
        )
    return {"persona": persona}


def _matches(keyword: list[str], words: list[str], at: int) -> bool:
    got = words[at : at + len(keyword)]  # a keyword of four or more letters matches prefixes
    same = (w == k or (len(k) >= 4 and w.startswith(k)) for k, w in zip(keyword, got, strict=False))
    return len(got) == len(keyword) and all(same)


def keyword_hits(persona: dict[str, Any], text: str) -> list[str]:
    """The distinct words (or phrases) of ``text`` that the persona's keywords match, sorted."""
    words = _WORD.findall(text.lower())
    hits: set[str] = set()
    for keyword in persona["keywords"]:
        parts = _WORD.findall(keyword.lower())
        if not parts:
            continue
        for at in range(len(words)):
            if _matches(parts, words, at):
                hits.add(" ".join(words[at : at + len(parts)]))
    # a word inside a matched phrase is not counted again on its own
    phrases = [h for h in hits if " " in h]
    return sorted(h for h in hits if " " in h or not any(h in p.split() for p in phrases))


def hint(
    personas: dict[str, dict[str, Any]], text: str, memory_personas: list[str | None]
) -> dict[str, Any] | None:
    """The persona recall suggests for a request and its recalled memories, with why; or None."""
    scored = []
    for name, persona in personas.items():
        words = keyword_hits(persona, text)
        votes = sum(1 for p in memory_personas if p == name)
        score = len(words) + votes
        if score:
            scored.append((score, name, words, votes))
    if not scored:
        return None
    scored.sort(key=lambda s: (-s[0], s[1]))
    best = scored[0]
    if best[0] < HINT_MIN_SCORE or (len(scored) > 1 and scored[1][0] == best[0]):
        return None
    score, name, words, votes = best
    why = []
    if words:
        why.append("request mentions " + ", ".join(words))
    if votes:
        why.append(f"{votes} recalled {'memory' if votes == 1 else 'memories'} used {name}")
    return {"name": name, "reason": "; ".join(why), "score": score}


__all__ = ["HINT_MIN_SCORE", "builtin", "hint", "keyword_hits", "listing", "load", "show"]
