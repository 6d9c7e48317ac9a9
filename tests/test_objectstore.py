"""A store on object storage: LanceDB's own ``s3://`` URI against a local S3 server (moto).

The workspace's `.nxs/config.toml` names the store and its options (docs/team-store.md)::

    [memory]
    store = "s3://team-memory/nxs"
    storage_options = { aws_endpoint = "http://127.0.0.1:PORT", allow_http = "true", ... }

Skipped when moto's server mode is not installed (``pip install -e ".[test]"`` brings it).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from nxm.service import MemoryService
from nxs.workspace import find
from tests.conftest import make_workspace

NOW = "2026-06-01T10:00:00.000Z"
BUCKET = "team-memory"


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 with one bucket; its endpoint URL."""
    server_mod = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per S3 request
    boto3 = pytest.importorskip("boto3")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    ).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


def _remote_workspace(root: Path, endpoint: str, prefix: str) -> Path:
    make_workspace(root)
    cfg = root / ".nxs" / "config.toml"
    options = (
        f'{{ aws_endpoint = "{endpoint}", aws_access_key_id = "testing", '
        'aws_secret_access_key = "testing", aws_region = "us-east-1", allow_http = "true" }'
    )
    text = cfg.read_text().replace(
        "[memory]\n",
        f'[memory]\nstore = "s3://{BUCKET}/{prefix}"\nstorage_options = {options}\n',
        1,
    )
    cfg.write_text(text)
    from nxs.trust import trust

    trust(root, find(str(root)).section("memory"))  # the user confirms the committed store
    return root


def _add(svc: MemoryService, body: str, intro: str) -> dict[str, Any]:
    return svc.add(body=body, introduction=intro, now=NOW, actor="tester")


def test_same_verbs_on_an_s3_store(tmp_path: Path, s3: str) -> None:
    root = _remote_workspace(tmp_path / "ws", s3, "verbs")
    svc = MemoryService(find(str(root)))
    assert svc.store.index.uri == f"s3://{BUCKET}/verbs" and svc.store.remote
    a = _add(svc, "Deploys freeze on Fridays after 15:00.", "Deploy freeze on Fridays")
    _add(svc, "The ledger service owns the invoices table.", "Ledger owns invoices")
    key = a["memory"]["key"]
    assert svc.show(key=key)["memory"]["body"].startswith("Deploys freeze")
    assert svc.list()["total"] == 2
    got = svc.search(query="friday deploy freeze", now=NOW)
    assert got["results"][0]["key"] == key and got["results"][0]["keyword"] > 0
    svc.forget(key=key, now=NOW, actor="tester")
    assert svc.list()["total"] == 1
    # the records live in the bucket's table: no memory file is written
    assert not (root / ".nxs" / "memories").exists()
    # a second process (the CLI) sees the same store through the same config
    out = subprocess.run(
        [_nxm(), "search", "ledger invoices", "--json", "--mode",
         "keyword", "--workspace", str(root)],
        capture_output=True, check=True, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert [r["introduction"] for r in orjson.loads(out.stdout)["results"]] == [
        "Ledger owns invoices"
    ]


def _nxm() -> str:
    script = Path(sys.executable).with_name("nxm")
    return str(script) if script.exists() else (shutil.which("nxm") or "nxm")


WRITER = """
import sys
from nxm.service import MemoryService
from nxs.workspace import find
svc = MemoryService(find(sys.argv[1]))
for i in range(int(sys.argv[3])):
    svc.add(body=f"Writer {sys.argv[2]} note {i}: queue depth alarm at {i * 7} items.",
            introduction=f"Writer {sys.argv[2]} note {i}", now="2026-06-01T10:00:00.000Z",
            actor=f"writer-{sys.argv[2]}")
"""


def test_two_processes_write_at_once(tmp_path: Path, s3: str) -> None:
    root = _remote_workspace(tmp_path / "ws", s3, "concurrent")
    n = 6
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), name, str(n)],
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        for name in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
    svc = MemoryService(find(str(root)))
    intros = {m["introduction"] for m in svc.list(page_size=100)["memories"]}
    assert intros == {f"Writer {w} note {i}" for w in "ab" for i in range(n)}
    got = svc.search(query="writer b note 3 queue depth", mode="keyword", now=NOW)
    assert got["results"][0]["introduction"] == "Writer b note 3"
