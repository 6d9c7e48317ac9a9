"""Heavy modules stay out of the CLI's import path (each costs from 0.3 s to several seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_workspace

HEAVY = (
    "lancedb", "mcp", "fastembed", "httpx", "onnxruntime", "onnx", "pyarrow", "numpy", "pandas",
    "safetensors", "tokenizers",
)  # fmt: skip

# Runs argv through a console-script entry point, then reports the heavy modules loaded.
PROBE = """
import json, sys
heavy = {heavy!r}
mode, *argv = sys.argv[1:]
if mode == "import":
    import nxm.cli, nxs.cli, nxs.cliapp
else:
    sys.argv = [mode, *argv]
    main = __import__(mode + ".cli", fromlist=["main"]).main
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    print("exit", code, file=sys.stderr)
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set(heavy))
print(json.dumps(loaded), file=sys.stderr)
"""


def loaded(*argv: str, cwd: Path | None = None) -> tuple[list[str], str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 0, proc.stderr
    return json.loads(lines[-1]), proc.stdout


def test_importing_the_clis_loads_no_heavy_module() -> None:
    assert loaded("import") == ([], "")


def test_nxm_help_loads_no_heavy_module() -> None:
    mods, out = loaded("nxm", "--help")
    assert mods == []
    assert "Usage: nxm" in out


def test_nxs_help_loads_no_heavy_module() -> None:
    mods, out = loaded("nxs", "--help")
    assert mods == []
    assert "Usage: nxs" in out


def test_list_and_show_load_no_heavy_module_even_with_no_local_index(tmp_path: Path) -> None:
    from nxm.service import MemoryService
    from nxs.workspace import find

    root = make_workspace(tmp_path / "proj")
    svc = MemoryService(find(root))
    key = svc.add(
        body="Read paths use the cache.",
        introduction="Cache",
        category="notes",
        now="2026-05-29T10:00:00Z",
        actor="t",
    )["memory"]["key"]
    import shutil

    shutil.rmtree(svc.store.local.dir)  # as after a fresh clone: made from the files
    mods, out = loaded("nxm", "list", "--json", cwd=root)
    assert mods == []
    assert json.loads(out)["memories"][0]["key"] == key
    mods, out = loaded("nxm", "show", key[:6], "--json", cwd=root)
    assert mods == []
    assert json.loads(out)["memory"]["body"] == "Read paths use the cache."


def test_cli_keeps_openblas_threads_from_spinning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set before numpy loads OpenBLAS (no CLI import loads it, above); a user's value wins."""
    import typer

    from nxs import clitool

    app = typer.Typer()
    app.command()(lambda: None)
    for preset, expected in ((None, "4"), ("12", "12")):
        monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
        if preset:
            monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", preset)
        monkeypatch.setattr(sys, "argv", ["nxm"])
        with pytest.raises(SystemExit) as done:
            clitool.main(app, "nxm")
        assert done.value.code == 0
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == expected


def test_lancedb_defers_the_namespace_rest_client(tmp_path: Path) -> None:
    """`import_lancedb` leaves the REST client's API classes unbuilt until a name is used."""
    probe = (
        "import sys\n"
        "from nxm.store import import_lancedb\n"
        "db = import_lancedb().connect(sys.argv[1])\n"
        "db.create_table('t', data=[{'a': 1}])\n"
        "before = sorted(m for m in sys.modules if '_client.api' in m)\n"
        "import lance_namespace_urllib3_client as client\n"
        "print(before, db.open_table('t').count_rows(), client.ApiClient.__name__,\n"
        "      hasattr(client, 'no_such_name'), sys.modules[client.__name__] is client)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "db")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "1", "ApiClient", "False", "True"]


def test_help_and_reads_skip_what_they_do_not_show(tmp_path: Path) -> None:
    """`nxm --help` loads no Markdown renderer or syntax highlighter; a read no pydantic."""
    probe = PROBE.format(heavy=("markdown_it", "pygments", "pydantic", "attr"))
    root = make_workspace(tmp_path / "proj")
    for argv, allowed in (
        (["nxm", "--help"], ["pydantic"]),
        (["nxm", "search", "-h"], ["pydantic"]),  # -h too, on a verb built alone
        (["nxm", "list", "--json"], []),
    ):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=root,
            timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert set(json.loads(proc.stderr.strip().splitlines()[-1])) <= set(allowed), argv
        assert "exit 0" in proc.stderr, proc.stderr
        assert ("Usage: " + " ".join(argv[:-1])) in proc.stdout or argv[-1] == "--json"


def test_searches_and_writes_never_load_lancedbs_namespace_and_cloud_modules(
    tmp_path: Path,
) -> None:
    """The stand-ins of `nxm.store.runtime.DEFERRED` stay unused by an add, a search in each
    mode and an update; a name of one, once used, is the real module's."""
    root = make_workspace(tmp_path / "proj")
    probe = (
        "import sys\n"
        "from nxm.service import MemoryService\n"
        "from nxm.store.runtime import DEFERRED\n"
        "from nxs.deferred import deferred\n"
        "from nxs.workspace import find\n"
        "svc = MemoryService(find(sys.argv[1]))\n"
        "now = '2026-05-29T10:00:00Z'\n"
        "key = svc.add(body='Billing retries webhooks twice.', introduction='Billing retries',\n"
        "              now=now, actor='t')['memory']['key']\n"
        "got = [[r['key'] for r in svc.search(query='webhooks', mode=m, now=now)['results']]\n"
        "       for m in ('keyword', 'hybrid', 'semantic')]\n"
        "svc.update(key=key, introduction='Billing retries thrice',\n"
        "           body='Billing retries webhooks three times.', now=now, actor='t')\n"
        "print(got == [[key]] * 3, [m for m in DEFERRED if not deferred(m)],\n"
        "      'lance_namespace_urllib3_client.models' in sys.modules, 'overrides' in sys.modules)\n"
        "from lancedb.namespace import LanceNamespaceDBConnection as C\n"
        "cls = C.real()  # the first use imports it\n"
        "print(deferred('lancedb.namespace'), cls.__module__,\n"
        "      cls is sys.modules['lancedb.namespace'].LanceNamespaceDBConnection)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(root)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True [] False False", "False lancedb.namespace True"]


def test_prime_loads_neither_typer_nor_rich(tmp_path: Path) -> None:
    """`nxs prime` (every session start) answers without the CLI framework; its --help, or an
    argument Typer must refuse, still goes through it."""
    probe = PROBE.format(heavy=("typer", "click", "rich", *HEAVY))
    root = make_workspace(tmp_path / "proj")
    for argv, allowed in (
        (["nxs", "prime", "--workspace", str(root)], set()),
        (["nxs", "prime", "--format", "claude-code", "--quiet-outside"], set()),
        (["nxs", "prime", "--help"], {"typer", "click", "rich"}),
    ):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=root,
            timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        got = set(json.loads(proc.stderr.strip().splitlines()[-1]))
        assert got <= allowed and (not allowed or "typer" in got), (argv, got)
        assert "# Memory (nxm)" in proc.stdout or "Usage: nxs prime" in proc.stdout
