"""nxm/embed/convert.py's MPNet converter, on a tiny random MPNet: the ONNX graph must give
what a plain numpy forward pass of MPNet gives, padded or not."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("safetensors")

from nxm.embed.convert import convert_mpnet, rel_buckets  # noqa: E402

CFG = {
    "model_type": "mpnet", "hidden_act": "gelu", "hidden_size": 32, "num_attention_heads": 4,
    "num_hidden_layers": 2, "intermediate_size": 64, "layer_norm_eps": 1e-5,
    "max_position_embeddings": 514, "vocab_size": 50, "pad_token_id": 1,
    "relative_attention_num_buckets": 32,
}  # fmt: skip


def tiny_weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    h, f = CFG["hidden_size"], CFG["intermediate_size"]

    def r(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.5, shape).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": r(CFG["vocab_size"], h),
        "embeddings.position_embeddings.weight": r(514, h),
        "embeddings.LayerNorm.weight": 1 + r(h),
        "embeddings.LayerNorm.bias": r(h),
        "encoder.relative_attention_bias.weight": r(32, CFG["num_attention_heads"]),
    }
    for i in range(CFG["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for name, (o, n) in {
            "attention.attn.q": (h, h), "attention.attn.k": (h, h), "attention.attn.v": (h, h),
            "attention.attn.o": (h, h), "intermediate.dense": (f, h), "output.dense": (h, f),
        }.items():  # fmt: skip
            w[f"{p}.{name}.weight"], w[f"{p}.{name}.bias"] = r(o, n), r(o)
        for name in ("attention.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{name}.weight"], w[f"{p}.{name}.bias"] = 1 + r(h), r(h)
    return w


def forward(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """MPNet's encoder in float64, written from its definition (not from the converter)."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    h, heads, eps = CFG["hidden_size"], CFG["num_attention_heads"], CFG["layer_norm_eps"]
    d = h // heads
    erf = np.vectorize(math.erf)

    def norm(x: np.ndarray, key: str) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[f"{key}.weight"] + w[f"{key}.bias"]

    def lin(x: np.ndarray, key: str) -> np.ndarray:
        return x @ w[f"{key}.weight"].T + w[f"{key}.bias"]

    b, n = ids.shape
    real = ids != 1
    positions = np.cumsum(real, 1) * real + 1
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][positions]
    )
    x = norm(x, "embeddings.LayerNorm")
    bias = np.zeros((heads, n, n))
    for i in range(n):  # bucket of key j seen from query i, as T5 / MPNet count it
        for j in range(n):
            rel = j - i
            bucket = 16 if rel > 0 else 0
            dist = abs(rel)
            if dist < 8:
                bucket += dist
            else:
                bucket += min(8 + int(math.log(dist / 8) / math.log(128 / 8) * 8), 15)
            bias[:, i, j] = w["encoder.relative_attention_bias.weight"][bucket]
    pad = np.where(mask[:, None, None, :] > 0, 0.0, -1e30)
    for i in range(CFG["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (
            lin(x, f"{p}.attention.attn.{c}").reshape(b, n, heads, d).transpose(0, 2, 1, 3)
            for c in "qkv"
        )
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias + pad
        probs = np.exp(s - s.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, n, h)
        x = norm(lin(ctx, f"{p}.attention.attn.o") + x, f"{p}.attention.LayerNorm")
        up = lin(x, f"{p}.intermediate.dense")
        x = norm(lin(0.5 * up * (1 + erf(up / math.sqrt(2))), f"{p}.output.dense") + x,
                 f"{p}.output.LayerNorm")  # fmt: skip
    return x


def test_buckets_match_the_definition() -> None:
    got = rel_buckets(300)
    assert got[0, 0] == 0 and got[5, 0] == 5 and got[0, 5] == 21  # near: exact, by side
    assert got[200, 0] == 15 and got[0, 200] == 31  # far: the last bucket of each side
    assert got[20, 0] == 8 + int(math.log(20 / 8) / math.log(16) * 8)


def test_converted_graph_matches_the_forward_pass(tmp_path: Path) -> None:
    import onnxruntime as ort
    from safetensors.numpy import save_file

    w = tiny_weights(np.random.default_rng(7))
    save_file(w, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(CFG))
    convert_mpnet(tmp_path / "model.safetensors", tmp_path / "config.json", tmp_path / "model.onnx")
    sess = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    ids = np.array([[0, 5, 9, 33, 7, 12, 2] + [49] * 14, [0, 8, 2] + [1] * 18], dtype=np.int64)
    mask = (ids != 1).astype(np.int64)
    got = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    want = forward(w, ids, mask)
    real = mask[..., None] > 0
    assert np.abs(np.where(real, got - want, 0)).max() < 1e-4
    alone = sess.run(None, {"input_ids": ids[1:, :3], "attention_mask": mask[1:, :3]})[0]
    assert np.abs(alone[0] - got[1, :3]).max() < 1e-5  # padding changes nothing
