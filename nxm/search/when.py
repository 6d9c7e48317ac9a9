"""The time a query names: "on 8 May 2023", "in June 2022", "during 2023", "last week".

`period` returns the days it covers as ISO dates, ``(first, after_last)``, so a memory's
``created`` (ISO 8601, UTC) falls in it when ``first <= created[:10] < after_last``. Only
unambiguous forms count (docs/retrieval.md lists them); relative ones read against ``now``.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any


@functools.cache
def _patterns() -> Any:
    """The forms, compiled on first use (a read never pays for them)."""
    import calendar
    from types import SimpleNamespace

    months = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
    months |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
    months["sept"] = 9
    month = "|".join(sorted(months, key=len, reverse=True))
    day, year = r"(\d{1,2})(?:st|nd|rd|th)?", r"((?:19|20)\d\d)"
    return SimpleNamespace(
        MONTHS=months,
        DAY_MONTH_YEAR=re.compile(rf"\b{day}\s+(?:of\s+)?({month})\.?,?\s+{year}\b", re.I),
        MONTH_DAY_YEAR=re.compile(rf"\b({month})\.?\s+{day},?\s+{year}\b", re.I),
        ISO_DAY=re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b"),
        MONTH_YEAR=re.compile(rf"\b({month})\.?,?\s+(?:of\s+)?{year}\b", re.I),
        YEAR=re.compile(rf"\b(?:in|during|of|since|by|throughout)\s+{year}\b", re.I),
        RELATIVE=re.compile(
            r"\b(today|yesterday|(?:this|last|past)\s+(?:week|month|year))\b", re.I
        ),
    )


def _month(year: int, month: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, month, 1), dt.date(year + month // 12, month % 12 + 1, 1)


def _relative(word: str, today: dt.date) -> tuple[dt.date, dt.date]:
    word = " ".join(word.lower().split()).replace("past", "last")
    if word in ("today", "yesterday"):
        day = today - dt.timedelta(days=word == "yesterday")
        return day, day + dt.timedelta(days=1)
    this, unit = word.split()
    if unit == "week":  # weeks start on Monday
        start = today - dt.timedelta(days=today.weekday() + 7 * (this == "last"))
        return start, start + dt.timedelta(days=7)
    if unit == "month":
        year, month = today.year, today.month
        if this == "last":
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return _month(year, month)
    year = today.year - (this == "last")
    return dt.date(year, 1, 1), dt.date(year + 1, 1, 1)


def period(query: str, now: str | None = None) -> tuple[str, str] | None:
    """The first period the query names, most specific form first, or None."""
    found: tuple[dt.date, dt.date] | None = None
    p = _patterns()
    months = p.MONTHS
    try:
        if m := p.DAY_MONTH_YEAR.search(query):
            day = dt.date(int(m[3]), months[m[2].lower()], int(m[1]))
        elif m := p.MONTH_DAY_YEAR.search(query):
            day = dt.date(int(m[3]), months[m[1].lower()], int(m[2]))
        elif m := p.ISO_DAY.search(query):
            day = dt.date(int(m[1]), int(m[2]), int(m[3]))
        else:
            day = None
        if day is not None:
            found = day, day + dt.timedelta(days=1)
        elif m := p.MONTH_YEAR.search(query):
            found = _month(int(m[2]), months[m[1].lower()])
        elif m := p.YEAR.search(query):
            found = dt.date(int(m[1]), 1, 1), dt.date(int(m[1]) + 1, 1, 1)
        elif (m := p.RELATIVE.search(query)) and now:
            found = _relative(m[1], dt.date.fromisoformat(now[:10]))
    except ValueError:  # "31 February 2023": no such day, no period
        return None
    return (found[0].isoformat(), found[1].isoformat()) if found else None
