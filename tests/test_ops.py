"""The operation table and `validate`, the one place arguments are checked for both seams."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from nxm.ops import OPERATIONS
from nxs.errors import ValidationError
from nxs.ops import SEAM_NAMES, Operation, Param, validate


def _noop(ctx: Any, **kw: Any) -> Any:
    return kw


OP = Operation(
    name="demo",
    tool="memory_demo",
    cli="nxm",
    verb=("demo",),
    module="memory",
    group="core",
    summary="A demo operation.",
    handler=_noop,
    params=(
        Param("key", required=True, positional=True, max_len=8, aliases=("memory_id",)),
        Param("mode", default="hybrid", choices=("hybrid", "keyword")),
        Param("limit", type="int", default=5, min=1, max=20),
        Param("depth", type="int", default=2, min=1, max=5, clamp=True),
        Param("ratio", type="float", min=0.0, max=1.0),
        Param("flag", type="bool"),
        Param("refs", type="list", max_len=2, aliases=("ref",)),
        Param("metadata", type="object"),
    ),
)
DEFAULTS = {
    "mode": "hybrid",
    "limit": 5,
    "depth": 2,
    "ratio": None,
    "flag": None,
    "refs": None,
    "metadata": None,
}


def refused(arguments: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        validate(OP, arguments)
    assert info.value.kind == "validation"
    assert info.value.exit_code == 2
    return info.value.message


def test_defaults_fill_every_missing_parameter() -> None:
    assert validate(OP, {"key": "abc"}) == {"key": "abc", **DEFAULTS}


def test_none_means_not_given() -> None:
    assert validate(OP, {"key": "abc", "limit": None}) == {"key": "abc", **DEFAULTS}


def test_seam_parameters_are_not_passed_to_the_handler() -> None:
    args = {"key": "abc", "now": "2026-01-01", "actor": "me", "workspace": "/x"}
    assert validate(OP, args) == {"key": "abc", **DEFAULTS}
    assert frozenset({"now", "actor", "workspace"}) == SEAM_NAMES


def test_missing_required_is_refused_with_a_suggestion() -> None:
    with pytest.raises(ValidationError) as info:
        validate(OP, {})
    assert info.value.message == "key is required"
    assert info.value.suggestion == "see `nxm demo --help`"


def test_unknown_parameter_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValidationError) as info:
        validate(OP, {"key": "abc", "limt": 3})
    assert info.value.message == "unknown parameter 'limt' for memory_demo"
    assert (
        info.value.suggestion == "parameters: depth, flag, key, limit, metadata, mode, ratio, refs"
    )


def test_alias_is_accepted_and_given_twice_is_refused() -> None:
    assert validate(OP, {"memory_id": "abc"})["key"] == "abc"
    assert validate(OP, {"key": "abc", "ref": "ENG-1"})["refs"] == ["ENG-1"]
    assert refused({"key": "abc", "memory_id": "abd"}) == "key was given twice (as 'memory_id')"


def test_string_checks() -> None:
    assert refused({"key": 5}) == "key must be a string, got 5"
    assert refused({"key": "123456789"}) == "key is 9 characters; at most 8 are allowed"
    assert refused({"key": "a\x00b"}) == "key must not contain NUL characters"


def test_choices_are_case_insensitive_and_normalised() -> None:
    assert validate(OP, {"key": "k", "mode": "KEYWORD"})["mode"] == "keyword"
    assert (
        refused({"key": "k", "mode": "fuzzy"}) == "mode must be one of hybrid, keyword, got 'fuzzy'"
    )


def test_integer_checks() -> None:
    assert validate(OP, {"key": "k", "limit": 20})["limit"] == 20
    assert validate(OP, {"key": "k", "limit": 3.0})["limit"] == 3
    assert isinstance(validate(OP, {"key": "k", "limit": 3.0})["limit"], int)
    assert refused({"key": "k", "limit": 21}) == "limit must be from 1 to 20, got 21"
    assert refused({"key": "k", "limit": 0}) == "limit must be from 1 to 20, got 0"
    assert refused({"key": "k", "limit": 2.5}) == "limit must be an integer, got 2.5"
    assert refused({"key": "k", "limit": "3"}) == "limit must be an integer, got '3'"
    assert refused({"key": "k", "limit": True}) == "limit must be an integer, got True"


def test_clamped_numbers_are_clamped_not_refused() -> None:
    assert validate(OP, {"key": "k", "depth": 99})["depth"] == 5
    assert validate(OP, {"key": "k", "depth": -3})["depth"] == 1


def test_float_checks() -> None:
    assert validate(OP, {"key": "k", "ratio": 1})["ratio"] == 1
    assert refused({"key": "k", "ratio": float("nan")}) == "ratio must be a finite number, got nan"
    assert refused({"key": "k", "ratio": 1.5}) == "ratio must be from 0 to 1, got 1.5"


def test_bool_checks() -> None:
    assert validate(OP, {"key": "k", "flag": False})["flag"] is False
    assert refused({"key": "k", "flag": "yes"}) == "flag must be true or false, got 'yes'"
    assert refused({"key": "k", "flag": 1}) == "flag must be true or false, got 1"


def test_list_checks() -> None:
    assert validate(OP, {"key": "k", "refs": ("a", "b")})["refs"] == ["a", "b"]
    assert validate(OP, {"key": "k", "refs": "one"})["refs"] == ["one"]
    assert refused({"key": "k", "refs": ["a", "b", "c"]}) == "refs has 3 items; at most 2"
    assert refused({"key": "k", "refs": ["a", 1]}) == "refs must be a list of strings, got ['a', 1]"


def test_object_checks() -> None:
    assert validate(OP, {"key": "k", "metadata": '{"a": [1]}'})["metadata"] == {"a": [1]}
    assert validate(OP, {"key": "k", "metadata": {"b": 2}})["metadata"] == {"b": 2}
    assert (
        refused({"key": "k", "metadata": "[1, 2]"}) == "metadata must be a JSON object, got [1, 2]"
    )
    assert refused({"key": "k", "metadata": "{nope"}).startswith("metadata is not valid JSON: ")


def test_long_values_are_shortened_in_messages() -> None:
    message = refused({"key": "k", "limit": "x" * 100})
    assert message == "limit must be an integer, got '" + "x" * 56 + "..."


def test_input_schema_is_json_schema_with_seam_parameters() -> None:
    schema = OP.input_schema()
    assert schema["required"] == ["key"]
    assert schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 20,
        "default": 5,
    }
    assert schema["properties"]["depth"] == {"type": "integer", "default": 2}
    assert schema["properties"]["refs"] == {"type": "array", "items": {"type": "string"}}
    assert schema["properties"]["mode"] == {
        "type": "string",
        "enum": ["hybrid", "keyword"],
        "default": "hybrid",
    }
    assert set(schema["properties"]) == {p.name for p in OP.params} | {"workspace"}  # a read


def test_seam_parameters_are_listed_only_where_they_mean_something() -> None:
    """Every tool lists workspace (the facts: none); now and actor are accepted unlisted."""
    from nxs.registry import operations

    for op in operations():
        listed = set(op.input_schema()["properties"]) & SEAM_NAMES
        if op.tool in ("memory_facts", "memory_facts_update"):  # the user's own directory
            assert listed == set(), op.tool
        else:
            assert listed == {"workspace"}, op.tool
    # A read still takes the moment it is answered at (expiry depends on it), unlisted.
    assert validate(OP, {"key": "abc", "now": "2026-01-01"}) == {"key": "abc", **DEFAULTS}
    assert validate(OP, {"key": "abc", "actor": "ci"}) == {"key": "abc", **DEFAULTS}


def test_schemas_and_descriptions_hold_no_cli_words() -> None:
    """A model calling a tool cannot type `--ttl-days` or run `nxs linear workspaces`."""
    import re

    from nxs.registry import operations

    cli = re.compile(r"--[a-z]|`nx[ms] |\bnx[ms] [a-z]|docs/")
    for op in operations():
        text = orjson.dumps({"d": op.description, "s": op.input_schema()}).decode()
        assert not cli.search(text), (op.tool, cli.search(text))


def test_core_table_names_one_tool_and_one_verb_per_operation() -> None:
    assert [(op.name, op.tool, op.command) for op in OPERATIONS] == [
        ("add", "memory_add", "nxm add"),
        ("update", "memory_update", "nxm update"),
        ("classify", "memory_classify", "nxm classify"),
        ("close", "memory_close", "nxm close"),
        ("reopen", "memory_reopen", "nxm reopen"),
        ("forget", "memory_forget", "nxm forget"),
        ("restore", "memory_restore", "nxm restore"),
        ("purge", "memory_purge", "nxm purge"),
        ("show", "memory_show", "nxm show"),
        ("list", "memory_list", "nxm list"),
        ("search", "memory_search", "nxm search"),
        ("history", "memory_history", "nxm history"),
    ]
    assert [op.name for op in OPERATIONS if op.writes] == [
        "add", "update", "classify", "close", "reopen", "forget", "restore", "purge",
    ]  # fmt: skip
    assert OPERATIONS[0].aliases == ("remember",)


def test_search_limit_defaults_to_five_and_caps_at_twenty() -> None:
    search = next(op for op in OPERATIONS if op.name == "search")
    assert validate(search, {"query": "q"})["limit"] == 5
    with pytest.raises(ValidationError) as info:
        validate(search, {"query": "q", "limit": 21})
    assert info.value.message == "limit must be from 1 to 20, got 21"
    assert validate(search, {"query": "q", "max_results": 7})["limit"] == 7


def test_introduction_limit_is_declared_for_both_seams() -> None:
    add = OPERATIONS[0]
    assert add.param("introduction").max_len == 200
    with pytest.raises(ValidationError) as info:
        validate(add, {"body": "b", "introduction": "x" * 201})
    assert info.value.message == "introduction is 201 characters; at most 200 are allowed"
