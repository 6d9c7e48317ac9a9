"""Export and import: stable JSON Lines bytes, idempotent by key, all-or-nothing checks."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import make_workspace
from typer.testing import CliRunner

from nxm.cli import app
from nxm.port import export_lines, parse_lines
from nxm.service import MemoryService
from nxs.errors import ValidationError
from nxs.workspace import find

runner = CliRunner()
NOW = "2026-05-29T10:00:00.000Z"


def nxm(*args: str, input: bytes | None = None) -> Any:
    return runner.invoke(app, list(args), input=input)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A workspace with memories in every state, and its export."""
    root = make_workspace(tmp_path_factory.mktemp("port") / "src")
    svc = MemoryService(find(root))

    def add(body: str, intro: str, **kw: Any) -> str:
        kw.setdefault("category", "notes")
        return svc.add(body=body, introduction=intro, now=NOW, actor="alice", **kw)["memory"]["key"]

    a = add("Release tags are cut from main only.", "Tags from main", priority="HIGH")
    b = add("Café au lait — ünïcode ✓ survives export.", "Unicode body", user_id="bob")
    c = add(
        "The sync test flakes.\nRetry hides timeouts.",
        "Flaky sync",
        scope="item",
        refs=["ENG-42"],
        metadata={"source": "review", "nested": {"n": [1, 2]}},
    )
    d = add("Old deploy needed sudo.", "Old deploy", layer="TASK", ttl_days=3.0)
    e = add("Wrong fact.", "Wrong")
    svc.update(key=a, introduction="Tags from main only", now="2026-05-30T00:00:00Z", actor="bob")
    svc.close(key=d, now="2026-05-31T00:00:00Z", actor="bob")
    svc.forget(key=e, now="2026-05-31T00:00:00Z", actor="bob")
    assert len({a, b, c, d, e}) == 5
    result = nxm("export", "-w", str(root))
    assert result.exit_code == 0
    return root, result.stdout_bytes


def loaded(data: bytes) -> bytes:
    """An export with the IMPORTED events an import added taken out (to compare with its source)."""
    out = []
    for raw in data.splitlines():
        r = orjson.loads(raw)
        r["events"] = [e for e in r["events"] if e["type"] != "IMPORTED"]
        out.append(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n")
    return b"".join(out)


def fresh(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "dst")


def state(root: Path) -> tuple[Any, ...]:
    svc = MemoryService(find(root))
    version = None
    if (root / ".nxs" / "memory" / "memories.lance").exists():
        table = svc.store.table()
        version = table.version
    proj = root / "NEXUS_MEMORY.md"
    return version, proj.read_bytes() if proj.exists() else None


def test_export_is_one_sorted_line_per_memory_in_key_order(source: tuple[Path, bytes]) -> None:
    root, data = source
    lines = data.split(b"\n")
    assert lines[-1] == b""  # ends with exactly one newline, no blank line
    records = [orjson.loads(raw) for raw in lines[:-1]]
    assert len(records) == 5
    keys = [r["key"] for r in records]
    assert keys == sorted(keys)
    assert {r["status"] for r in records} == {"open", "closed", "forgotten"}
    for raw, r in zip(lines, records, strict=False):
        assert raw == orjson.dumps(r, option=orjson.OPT_SORT_KEYS)
        assert "vector" not in r
        assert r["events"][0]["type"] == "CREATED"
    store = MemoryService(find(root)).store.records()
    assert data == b"".join(export_lines(store))


def test_export_to_a_file_and_by_status(source: tuple[Path, bytes], tmp_path: Path) -> None:
    root, data = source
    out = tmp_path / "memories.jsonl"
    result = nxm("export", "-o", str(out), "-w", str(root))
    assert result.exit_code == 0
    assert out.read_bytes() == data
    assert "".join(result.stdout.split()) == f"exported5memoriesto{out}"  # rich may wrap it
    opened = nxm("export", "--status", "open", "-w", str(root)).stdout_bytes
    assert [orjson.loads(x)["status"] for x in opened.splitlines()] == ["open"] * 3


def test_export_import_export_gives_identical_bytes(
    source: tuple[Path, bytes], tmp_path: Path
) -> None:
    _, data = source
    dst = fresh(tmp_path)
    (tmp_path / "in.jsonl").write_bytes(data)
    result = nxm("import", str(tmp_path / "in.jsonl"), "--json", "-w", str(dst))
    assert result.exit_code == 0
    assert result.stdout_bytes == (
        b'{"imported":5,"reminted":0,"replaced":0,"skipped":0,"total":5}\n'
    )
    again = nxm("export", "-w", str(dst)).stdout_bytes
    assert loaded(again) == data  # and one IMPORTED event each, by the importer
    assert [orjson.loads(x)["events"][-1]["type"] for x in again.splitlines()] == ["IMPORTED"] * 5
    records = dict(MemoryService(find(dst)).store.records().items())
    assert {r["processing"] for r in records.values()} == {"READY"}


def test_second_import_skips_everything_and_writes_nothing(
    source: tuple[Path, bytes], tmp_path: Path
) -> None:
    _, data = source
    dst = fresh(tmp_path)
    assert nxm("import", "-", "--json", "-w", str(dst), input=data).exit_code == 0
    before = state(dst)
    again = nxm("import", "-", "--json", "-w", str(dst), input=data)
    assert again.exit_code == 0
    assert again.stdout_bytes == (
        b'{"imported":0,"reminted":0,"replaced":0,"skipped":5,"total":5}\n'
    )
    assert state(dst) == before


def test_replace_overwrites_changed_memories_only(
    source: tuple[Path, bytes], tmp_path: Path
) -> None:
    _, data = source
    dst = fresh(tmp_path)
    assert nxm("import", "-", "-w", str(dst), input=data).exit_code == 0
    lines = data.splitlines(keepends=True)
    changed = orjson.loads(lines[1])
    changed["introduction"] = "Edited in the file"
    lines[1] = orjson.dumps(changed, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
    edited = b"".join(lines)
    plain = nxm("import", "-", "--json", "-w", str(dst), input=edited)
    assert plain.stdout_bytes == (
        b'{"imported":0,"reminted":0,"replaced":0,"skipped":5,"total":5}\n'
    )
    assert loaded(nxm("export", "-w", str(dst)).stdout_bytes) == data
    replaced = nxm("import", "-", "--replace", "--json", "-w", str(dst), input=edited)
    assert replaced.exit_code == 0
    assert replaced.stdout_bytes == (
        b'{"imported":0,"reminted":0,"replaced":1,"skipped":4,"total":5}\n'
    )
    assert loaded(nxm("export", "-w", str(dst)).stdout_bytes) == edited


BAD_LINES = [
    (b"{not json", "line 3 is not valid JSON: "),
    (b"[1, 2]", "line 3 is not a JSON object"),
    (b'{"key": "abc", "body": "b"}', "line 3 lacks introduction"),
    (b'{"key": "", "body": " ", "introduction": "i"}', "line 3 lacks body"),
    (b'{"key": "a", "body": "b", "introduction": "i"}', "line 3 has a key that is not a memory key"),
    (b'{"key": "a", "body": "b", "introduction": "i", "colour": 1}', "line 3 has unknown fields: colour"),
    (b'{"body": "b", "introduction": "i", "status": "gone"}', "line 3 has an unknown status"),
    (b'{"body": "b", "introduction": "i", "priority": "URGENT"}', "line 3 has an unknown priority"),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "message"), BAD_LINES)
def test_a_bad_line_refuses_the_whole_file(
    source: tuple[Path, bytes], tmp_path: Path, bad: bytes, message: str
) -> None:
    _, data = source
    lines = data.splitlines(keepends=True)
    payload = lines[0] + lines[1] + bad + b"\n" + lines[2]
    dst = fresh(tmp_path)
    result = nxm("import", "-", "--json", "-w", str(dst), input=payload)
    assert result.exit_code == 2
    envelope = orjson.loads(result.stdout_bytes)
    assert envelope["kind"] == "validation"
    assert envelope["message"].startswith(message)
    assert envelope["suggestion"] == "nothing was imported"
    assert state(dst) == (None, None)
    assert MemoryService(find(dst)).store.records() == {}


def test_a_bad_line_leaves_a_populated_workspace_untouched(
    source: tuple[Path, bytes], tmp_path: Path
) -> None:
    root, data = source
    dst = tmp_path / "copy"
    shutil.copytree(root, dst)
    before = state(dst)
    other = b'{"key": "0123456789abcdef", "body": "new", "introduction": "new"}\n'
    result = nxm("import", "-", "--json", "-w", str(dst), input=other + b"oops\n")
    assert result.exit_code == 2
    assert state(dst) == before
    assert nxm("export", "-w", str(dst)).stdout_bytes == data


def test_import_of_a_missing_file_is_not_found(tmp_path: Path) -> None:
    dst = fresh(tmp_path)
    result = nxm("import", str(tmp_path / "nope.jsonl"), "--json", "-w", str(dst))
    assert result.exit_code == 3
    assert orjson.loads(result.stdout_bytes)["message"] == (
        f"cannot read {tmp_path / 'nope.jsonl'}: No such file or directory"
    )


def test_parse_lines_skips_blank_lines_and_fills_defaults() -> None:
    got = parse_lines(b'\n{"key": "0123456789abcdef", "body": "b", "introduction": "i"}\n\n')
    assert len(got) == 1
    assert (got[0]["key"], got[0]["status"], got[0]["processing"], got[0]["events"]) == (
        "0123456789abcdef",
        "open",
        "PENDING",
        [],
    )
    with pytest.raises(ValidationError):
        parse_lines(b'{"key": "k1", "body": "b", "introduction": "i"}\n"text"\n')
