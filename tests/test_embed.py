"""The embedder seam: the hash embedder, the real model through fastembed, missing models."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nxm.embed import DEFERRED_HUB, Embedder, FastEmbedder, HashEmbedder, load_embedder
from nxm.embed.model import DIM, MODEL_NAME, ModelError, model_status

ROOT = Path(__file__).resolve().parents[1]
CANONICAL = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362])  # fastembed's reference

QUERY = "How do I undo my last commit?"
PARAPHRASE = "git reset HEAD~1 reverts the previous change"  # no word in common with QUERY
UNRELATED = "The recipe needs two cups of flour and a pinch of salt."


# -- the hash embedder ---------------------------------------------------------------------


def test_hash_embedder_is_deterministic_across_processes() -> None:
    texts = ["Carol owns the billing service.", "ERR_LEDGER_LOCKED: retry later", "x"]
    here = HashEmbedder().embed(texts)
    assert np.array_equal(here, HashEmbedder().embed(texts))
    code = (
        "import sys; from nxm.embed import HashEmbedder; "
        f"sys.stdout.write(HashEmbedder().embed({texts!r}).tobytes().hex())"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert bytes.fromhex(out) == here.tobytes()


def test_hash_embedder_rows_are_unit_float32() -> None:
    emb = HashEmbedder()
    assert isinstance(emb, Embedder)
    assert (emb.name, emb.dim) == ("hash", DIM)
    vectors = emb.embed(["one", "two words", "Three words here, with punctuation!", "...", ""])
    assert vectors.shape == (5, DIM) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms[:3], 1.0, atol=1e-6)
    assert np.array_equal(norms[3:], [0.0, 0.0])  # nothing to hash: the zero vector
    assert emb.embed([]).shape == (0, DIM)
    assert HashEmbedder(dim=16).embed(["a b c"]).shape == (1, 16)


def test_hash_embedder_scores_similar_texts_higher() -> None:
    emb = HashEmbedder()
    query, similar, unrelated = emb.embed(
        [
            "the sync test is flaky under load",
            "flaky sync tests under heavy load",
            "Carol owns billing",
        ]
    )
    assert query @ similar > 0.5
    assert query @ similar > query @ unrelated + 0.3
    assert float(query @ query) == pytest.approx(1.0, abs=1e-6)


def test_load_embedder_hash_is_cached() -> None:
    first = load_embedder("hash")
    assert isinstance(first, HashEmbedder)
    assert load_embedder("hash") is first


# -- a model that is not there -------------------------------------------------------------


def test_missing_model_raises_model_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "nope"))
    with pytest.raises(ModelError) as info:
        load_embedder(MODEL_NAME)
    assert "embedding model sentence-transformers/all-MiniLM-L6-v2 is not installed" in (
        info.value.message
    )
    assert info.value.suggestion == "run `nxm model setup`"
    with pytest.raises(ModelError):  # the failure is not cached, and any casing is the model
        load_embedder(MODEL_NAME.lower())
    assert not (tmp_path / "nope").exists()


def test_other_model_missing_from_the_cache_fails_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    monkeypatch.delenv("NXS_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(ModelError) as info:
        load_embedder("BAAI/bge-small-en-v1.5")
    assert info.value.code == "MODEL_NOT_INSTALLED"
    assert "NXS_ALLOW_DOWNLOAD" in (info.value.suggestion or "")
    with pytest.raises(ModelError) as info:
        FastEmbedder("no-such-org/no-such-model")
    assert info.value.code == "MODEL_UNKNOWN"


# -- the real model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> Embedder:
    status = model_status()
    if not status["installed"]:
        pytest.skip(f"{MODEL_NAME} is not installed in {status['path']}: run `nxm model setup`")
    return load_embedder(MODEL_NAME)


@pytest.mark.model
def test_real_model_loads_once_and_matches_the_reference(real: Embedder) -> None:
    assert isinstance(real, FastEmbedder)
    assert (real.name, real.dim) == (MODEL_NAME, DIM)
    assert load_embedder(MODEL_NAME) is real
    vector = real.embed(["hello world"])[0]
    assert np.allclose(vector[:5], CANONICAL, atol=1e-3)


@pytest.mark.model
def test_real_model_finds_a_paraphrase_with_no_shared_words(real: Embedder) -> None:
    query, paraphrase, unrelated = real.embed([QUERY, PARAPHRASE, UNRELATED])
    assert query @ paraphrase > query @ unrelated + 0.1


@pytest.mark.model
def test_real_model_keeps_the_order_of_the_texts(real: Embedder) -> None:
    texts = [UNRELATED * 4, QUERY, "", PARAPHRASE, "ok"]
    together = real.embed(texts, batch_size=2)
    assert together.shape == (len(texts), DIM) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    for row, text in zip(together, texts, strict=True):
        assert np.allclose(row, real.embed([text])[0], atol=1e-5)
    assert real.embed([]).shape == (0, DIM)


@pytest.mark.model
def test_real_model_threads_do_not_spin_and_other_sessions_are_untouched(real: Embedder) -> None:
    import onnxruntime as ort

    assert isinstance(real, FastEmbedder)
    session = real._model.model.model  # fastembed's onnxruntime InferenceSession
    options = session.get_session_options()
    for entry in ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning"):
        assert options.get_session_config_entry(entry) == "0"
    assert isinstance(ort.SessionOptions(), ort.SessionOptions)  # the patch is undone
    with pytest.raises(RuntimeError):  # a session made elsewhere has onnxruntime's default
        ort.SessionOptions().get_session_config_entry("session.intra_op.allow_spinning")


HUB_PROBE = """
import sys
import numpy as np
from nxm.embed.model import MODEL_NAME
texts = ["why does the billing-api retry webhooks twice", "hello world", "rotate the signing key"]
if sys.argv[1] == "plain":
    import fastembed  # imported first, as it ships: every module real (no stand-ins)
from nxm.embed import DEFERRED_HUB, FastEmbedder
from nxs.deferred import deferred
got = FastEmbedder(MODEL_NAME).embed(texts)
used = [m for m in DEFERRED_HUB if not deferred(m)]
sys.stdout.write(np.asarray(got, dtype=np.float32).tobytes().hex() + " " + repr(used))
"""


@pytest.mark.model
def test_real_model_loads_with_the_hub_downloader_deferred(real: Embedder) -> None:
    """The model loads from its files with `DEFERRED_HUB` unused, to the same bits."""
    out = {}
    for mode in ("nxs", "plain"):
        proc = subprocess.run(
            [sys.executable, "-c", HUB_PROBE, mode], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        out[mode] = proc.stdout.split(" ", 1)
    assert out["nxs"][1] == "[]"
    assert out["plain"][1] == repr(list(DEFERRED_HUB))  # the other run used the real ones
    assert out["nxs"][0] == out["plain"][0]
