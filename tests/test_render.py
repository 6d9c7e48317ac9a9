"""The serializer: the bytes both seams emit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from nxs.errors import ConflictError, NotFoundError, NxsError, UpstreamError, ValidationError
from nxs.render import clean, line, parse_timestamp, render, timestamp


def test_render_sorts_keys_at_every_depth_and_ends_with_one_newline() -> None:
    value = {"b": 1, "a": {"z": [{"y": 2, "x": 1}], "c": None}}
    assert render(value) == b'{"a":{"c":null,"z":[{"x":1,"y":2}]},"b":1}\n'


def test_render_is_independent_of_insertion_order() -> None:
    assert render({"x": 1, "y": 2, "k": "v"}) == render({"k": "v", "y": 2, "x": 1})


def test_render_writes_no_nan_or_infinity() -> None:
    out = render({"a": float("nan"), "b": float("inf"), "c": -float("inf"), "d": [float("nan")]})
    assert out == b'{"a":null,"b":null,"c":null,"d":[null]}\n'


def test_render_rounds_floats_to_six_places() -> None:
    assert render({"s": 1 / 3, "t": 0.1 + 0.2, "u": 2.0}) == b'{"s":0.333333,"t":0.3,"u":2.0}\n'


def test_render_turns_numpy_values_into_plain_json() -> None:
    value = {
        "f": np.float32(0.1),
        "i": np.int64(7),
        "b": np.bool_(True),
        "v": np.array([0.5, np.nan], dtype=np.float32),
        "m": np.array([[1, 2], [3, 4]]),
    }
    assert render(value) == b'{"b":true,"f":0.1,"i":7,"m":[[1,2],[3,4]],"v":[0.5,null]}\n'


def test_render_keeps_unicode_as_utf8() -> None:
    assert render({"t": "café — ✓"}) == '{"t":"café — ✓"}\n'.encode()


def test_line_is_one_sorted_line() -> None:
    out = line({"z": "multi\nline", "a": 1})
    assert out == b'{"a":1,"z":"multi\\nline"}\n'
    assert out.count(b"\n") == 1


def test_clean_leaves_strings_bools_and_none_alone() -> None:
    assert clean(["x", True, None, 3]) == ["x", True, None, 3]
    assert clean((1.23456789,)) == [1.234568]


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (
            ValidationError("bad", suggestion="fix it"),
            b'{"code":"VALIDATION_ERROR","error":true,"kind":"validation","message":"bad",'
            b'"suggestion":"fix it"}\n',
        ),
        (
            NotFoundError("gone", code="NO_WORKSPACE"),
            b'{"code":"NO_WORKSPACE","error":true,"kind":"not_found","message":"gone"}\n',
        ),
        (
            ConflictError("twice", details={"keys": ["a", "b"]}),
            b'{"code":"CONFLICT","details":{"keys":["a","b"]},"error":true,"kind":"conflict",'
            b'"message":"twice"}\n',
        ),
        (
            UpstreamError("down"),
            b'{"code":"UPSTREAM_ERROR","error":true,"kind":"upstream","message":"down"}\n',
        ),
        (
            NxsError("boom"),
            b'{"code":"INTERNAL_ERROR","error":true,"kind":"internal","message":"boom"}\n',
        ),
    ],
)
def test_render_error_envelope(err: NxsError, expected: bytes) -> None:
    assert render(err) == expected


def test_exit_codes_by_kind() -> None:
    assert [
        (e.kind, e.exit_code)
        for e in (NxsError, ValidationError, NotFoundError, ConflictError, UpstreamError)
    ] == [("internal", 1), ("validation", 2), ("not_found", 3), ("conflict", 4), ("upstream", 5)]


def test_timestamp_is_utc_with_milliseconds_and_z() -> None:
    moment = datetime(2026, 5, 29, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert timestamp(moment) == "2026-05-29T10:00:00.123Z"
    assert timestamp(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000Z"


def test_timestamp_now_has_the_fixed_shape() -> None:
    text = timestamp()
    assert len(text) == 24
    assert text[10] == "T" and text[19] == "." and text.endswith("Z")
    assert parse_timestamp(text).tzinfo is UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-29T10:00:00Z", "2026-05-29T10:00:00.000Z"),
        ("2026-05-29T10:00:00z", "2026-05-29T10:00:00.000Z"),
        ("2026-05-29T10:00:00", "2026-05-29T10:00:00.000Z"),
        ("2026-05-29T12:30:00.5+02:00", "2026-05-29T10:30:00.500Z"),
        (" 2026-05-29 ", "2026-05-29T00:00:00.000Z"),
    ],
)
def test_parse_then_format_normalises(text: str, expected: str) -> None:
    assert timestamp(parse_timestamp(text)) == expected


def test_parse_timestamp_refuses_garbage() -> None:
    with pytest.raises(ValueError):
        parse_timestamp("yesterday")
