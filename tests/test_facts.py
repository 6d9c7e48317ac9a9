"""User facts: RFC 7396 merge patch, the 4,096-byte cap, owner-only storage outside workspaces."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from nxm.cli import app
from nxm.session import facts
from nxm.session.facts import MAX_BYTES, merge_patch
from nxs.context import Context
from nxs.errors import UpstreamError, ValidationError
from nxs.ops import validate
from nxs.paths import data_dir
from nxs.registry import operations


def _run(ctx: Context, tool: str, **arguments: Any) -> Any:
    op = next(o for o in operations(["memory"]) if o.tool == tool)
    return op.handler(ctx, **validate(op, arguments))


# RFC 7396 appendix A, every example: (target, patch, result)
RFC_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC_EXAMPLES)
def test_merge_patch_follows_rfc_7396(target: Any, patch: Any, result: Any) -> None:
    before = orjson.dumps(target)
    assert merge_patch(target, patch) == result
    assert orjson.dumps(target) == before  # the input is not changed


def test_update_merges_nested_replaces_arrays_and_deletes_with_null() -> None:
    facts.update({"family": {"wife": {"name": "Nicole"}}, "langs": ["python", "go"], "tz": "UTC"})
    out = facts.update({"family": {"son": {"name": "Leo"}}, "langs": ["rust"], "tz": None})
    assert out["facts"] == {
        "family": {"son": {"name": "Leo"}, "wife": {"name": "Nicole"}},
        "langs": ["rust"],
    }
    assert facts.load() == out["facts"]
    assert out["bytes"] == len(orjson.dumps(out["facts"], option=orjson.OPT_SORT_KEYS))
    assert out["max_bytes"] == 4096
    # deleting a path that is not there changes nothing
    assert facts.update({"nope": None})["facts"] == out["facts"]


def test_the_same_patch_twice_gives_the_same_answer() -> None:
    patch = {"editor": "helix", "old": None}
    assert facts.update(patch) == facts.update(patch)


def test_empty_patch_and_empty_keys_are_refused() -> None:
    with pytest.raises(ValidationError, match="facts_patch is empty"):
        facts.update({})
    with pytest.raises(ValidationError, match=r"facts_patch\.a has an empty key"):
        facts.update({"a": {" ": 1}})
    assert not facts.path().exists()


def _filler(n: int) -> dict[str, Any]:
    """A document whose compact JSON is exactly ``n`` bytes."""
    overhead = len(orjson.dumps({"pad": ""}))
    return {"pad": "x" * (n - overhead)}


def test_4096_bytes_fit_4097_are_refused_and_nothing_changes() -> None:
    facts.update({"name": "Ada"})
    fits = {"name": None, **_filler(MAX_BYTES)}
    assert facts.update(fits)["bytes"] == 4096
    stored = facts.path().read_bytes()
    mtime = facts.path().stat().st_mtime_ns
    with pytest.raises(ValidationError) as info:
        facts.update({"z": 1})  # 4096 + len(',"z":1') bytes
    err = info.value
    assert err.code == "FACTS_TOO_LARGE"
    assert err.message == "the merged facts document would be 4102 bytes; the cap is 4096 bytes"
    assert "prune" in (err.suggestion or "")
    assert "xxx" not in err.message + (err.suggestion or "")  # values are never quoted
    assert facts.path().read_bytes() == stored
    assert facts.path().stat().st_mtime_ns == mtime
    over = _filler(MAX_BYTES + 1)
    with pytest.raises(ValidationError):
        facts.update(over)
    assert facts.path().read_bytes() == stored


def test_cap_counts_utf8_bytes_not_characters() -> None:
    doc = {"pad": "é" * 2040}  # 2040 characters, 4080 bytes of string
    assert facts.size(doc) == 4090
    facts.update(doc)
    with pytest.raises(ValidationError):
        facts.update({"pad": "é" * 2044})


def test_file_is_owner_only_in_the_user_data_dir() -> None:
    facts.update({"editor": "helix"})
    path = facts.path()
    assert path == data_dir() / "facts.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert orjson.loads(path.read_bytes()) == {"editor": "helix"}


def test_an_unreadable_document_is_an_upstream_error() -> None:
    facts.path().parent.mkdir(parents=True, exist_ok=True)
    facts.path().write_bytes(b"[1, 2]")
    with pytest.raises(UpstreamError, match="not a JSON object"):
        facts.load()
    facts.path().write_bytes(b"{broken")
    with pytest.raises(UpstreamError, match="not valid JSON") as info:
        facts.update({"a": 1})
    assert info.value.code == "FACTS_UNREADABLE"
    assert facts.path().read_bytes() == b"{broken"


def test_operations_show_and_update(ctx: Context) -> None:
    assert _run(ctx, "memory_facts") == {"bytes": 2, "facts": {}, "max_bytes": 4096}
    out = _run(ctx, "memory_facts_update", facts_patch='{"editor": "helix"}')
    assert out == {"bytes": 18, "facts": {"editor": "helix"}, "max_bytes": 4096}
    assert _run(ctx, "memory_facts_update", patch={"editor": None})["facts"] == {}
    with pytest.raises(ValidationError, match="facts_patch must be a JSON object"):
        _run(ctx, "memory_facts_update", facts_patch="[1]")


def test_cli_facts_and_facts_update(workspace: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["facts", "--json"])
    assert shown.exit_code == 0
    assert shown.stdout_bytes == b'{"bytes":2,"facts":{},"max_bytes":4096}\n'
    updated = runner.invoke(app, ["facts", "update", '{"tz": "Europe/Paris"}', "--json"])
    assert updated.exit_code == 0
    assert updated.stdout_bytes == b'{"bytes":21,"facts":{"tz":"Europe/Paris"},"max_bytes":4096}\n'
    big = orjson.dumps(_filler(5000)).decode()
    refused = runner.invoke(app, ["facts", "update", big, "--json"])
    assert refused.exit_code == 2
    assert orjson.loads(refused.stdout_bytes)["code"] == "FACTS_TOO_LARGE"
    assert runner.invoke(app, ["facts", "--json"]).stdout_bytes == updated.stdout_bytes


def test_facts_never_reach_the_workspace(ctx: Context, workspace: Path) -> None:
    _run(ctx, "memory_add", body="The API runs on port 8443.", introduction="API port is 8443")
    _run(ctx, "memory_facts_update", facts_patch={"kid": {"name": "Quintessa-Marlowe"}})
    _run(ctx, "memory_recall", query="api port", conversation_id="nc-x-20260529")
    _run(
        ctx,
        "memory_store_context",
        summary="Checked the API port.",
        context="Port 8443 from config.",
        conversation_id="nc-x-20260529",
    )
    from nxs.prime import prime_text

    assert "Quintessa" not in (workspace / "NEXUS_MEMORY.md").read_text()
    assert "Quintessa" not in prime_text(str(workspace))
    for path in workspace.rglob("*"):
        if path.is_file():
            assert b"Quintessa" not in path.read_bytes(), path
