"""safetensors -> ONNX for the encoders nxm sets up (BERT, MPNet), with numpy + onnx, no torch.

Both converters build their graph with one `_Graph` (the layers they share); each adds what its
architecture changes. Inputs ``input_ids``, ``attention_mask`` (and ``token_type_ids`` for
BERT); output ``last_hidden_state``; pooling and normalisation are fastembed's. The weights go to
``model.onnx.data`` beside the graph (onnxruntime maps it rather than copying it).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ONNX_DATA_FILE = "model.onnx.data"


class _Graph:
    """The nodes and initializers of one encoder graph, and the layers both encoders share."""

    def __init__(self, weights: dict[str, Any], hidden: int, heads: int, eps: float) -> None:
        import numpy as np

        self.np, self.w, self.eps = np, weights, eps
        self.inits: list[Any] = []
        self.nodes: list[Any] = []
        self.hidden, self.head_dim = hidden, hidden // heads
        self.heads_shape = self.const("heads_shape", [0, 0, heads, self.head_dim], np.int64)
        self.merged_shape = self.const("merged_shape", [0, 0, hidden], np.int64)
        self.one, self.half = self.const("one", 1.0), self.const("half", 0.5)
        self.sqrt2 = self.const("sqrt2", np.sqrt(2.0))
        self.scale = ""  # made with the mask (the order of the initializers is the file's bytes)

    def const(self, name: str, array: Any, dtype: Any = None) -> str:
        from onnx import numpy_helper

        arr = self.np.ascontiguousarray(array, dtype=dtype or self.np.float32)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def op(self, kind: str, inputs: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    def param(self, key: str) -> str:
        return self.const(key, self.w[key])

    def linear(self, x: str, key: str, out: str) -> str:  # torch Linear: x @ W.T + b
        w_t = self.const(f"{key}.weight.T", self.w[f"{key}.weight"].T)
        return self.op(
            "Add", [self.op("MatMul", [x, w_t], f"{out}.mm"), self.param(f"{key}.bias")], out
        )

    def layer_norm(self, x: str, key: str, out: str) -> str:
        ins = [x, self.param(f"{key}.weight"), self.param(f"{key}.bias")]
        return self.op("LayerNormalization", ins, out, axis=-1, epsilon=self.eps)

    def mask(self) -> str:
        """The additive attention mask [b, 1, 1, s] (and the attention scale the layers use)."""
        from onnx import TensorProto

        cast = self.op("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
        padded = self.op("Sub", [self.one, cast], "pad")
        lowest = self.const("lowest", self.np.finfo(self.np.float32).min)
        additive = self.op("Mul", [padded, lowest], "mask.add")
        axes = self.const("axes12", [1, 2], self.np.int64)
        mask = self.op("Unsqueeze", [additive, axes], "mask")
        self.scale = self.const("scale", 1.0 / self.np.sqrt(self.head_dim))
        return mask

    def _heads(self, x: str, perm: list[int]) -> str:  # [b, s, h] -> [b, heads, s, d] (or k^T)
        reshaped = self.op("Reshape", [x, self.heads_shape], f"{x}.r")
        return self.op("Transpose", [reshaped], f"{x}.t", perm=perm)

    def attention(self, x: str, n: str, keys: tuple[str, ...], bias: str) -> str:
        """Multi-head self-attention of `x` (`bias` added to the scores), before the residual."""
        q = self._heads(self.linear(x, keys[0], f"{n}.q"), [0, 2, 1, 3])
        k = self._heads(self.linear(x, keys[1], f"{n}.k"), [0, 2, 3, 1])
        v = self._heads(self.linear(x, keys[2], f"{n}.v"), [0, 2, 1, 3])
        scores = self.op("Mul", [self.op("MatMul", [q, k], f"{n}.qk"), self.scale], f"{n}.scores")
        masked = self.op("Add", [scores, bias], f"{n}.masked")
        probs = self.op("Softmax", [masked], f"{n}.probs", axis=-1)
        ctx = self.op("MatMul", [probs, v], f"{n}.ctx")
        ctx = self.op("Transpose", [ctx], f"{n}.ctx.t", perm=[0, 2, 1, 3])
        ctx = self.op("Reshape", [ctx, self.merged_shape], f"{n}.ctx.m")
        return self.linear(ctx, keys[3], f"{n}.attn")

    def feed_forward(self, h: str, n: str, p: str, out: str) -> str:
        """The layer's exact-GELU MLP, its residual and LayerNorm (the same keys in both)."""
        up = self.linear(h, f"{p}.intermediate.dense", f"{n}.up")
        erf = self.op("Erf", [self.op("Div", [up, self.sqrt2], f"{n}.up.s")], f"{n}.erf")
        gated = self.op("Mul", [up, self.op("Add", [erf, self.one], f"{n}.erf1")], f"{n}.g")
        gelu = self.op("Mul", [gated, self.half], f"{n}.gelu")
        down = self.linear(gelu, f"{p}.output.dense", f"{n}.down")
        return self.layer_norm(self.op("Add", [down, h], f"{n}.res2"), f"{p}.output.LayerNorm", out)

    def layers(self, x: str, count: int, attn: tuple[str, ...], norm: str, bias: str) -> str:
        """`count` encoder layers over `x`: attention, then the feed-forward."""
        for i in range(count):
            p, n = f"encoder.layer.{i}", f"l{i}"
            keys = tuple(f"{p}.attention.{k}" for k in attn)
            res1 = self.op("Add", [self.attention(x, n, keys, bias), x], f"{n}.res1")
            h = self.layer_norm(res1, f"{p}.attention.{norm}", f"{n}.h")
            x = self.feed_forward(h, n, p, "last_hidden_state" if i == count - 1 else f"{n}.out")
        return x

    def save(self, name: str, inputs: tuple[str, ...], output: str, out_path: Path) -> Path:
        import onnx
        from onnx import TensorProto, helper

        ins = [
            helper.make_tensor_value_info(i, TensorProto.INT64, ["batch", "sequence"])
            for i in inputs
        ]
        shape = ["batch", "sequence", self.hidden]
        outs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)]
        graph = helper.make_graph(self.nodes, name, ins, outs, initializer=self.inits)
        opset = [helper.make_opsetid("", 17)]
        model = helper.make_model(graph, opset_imports=opset, producer_name="nxm")
        model.ir_version = 8  # opset 17's IR: loads in any onnxruntime >= 1.14
        onnx.checker.check_model(model)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        data = out_path.parent / ONNX_DATA_FILE  # named relative to the graph, as ONNX requires
        data.unlink(missing_ok=True)  # the writer appends to it
        onnx.save_model(model, str(out_path), save_as_external_data=True, location=ONNX_DATA_FILE)
        return out_path


def _load(safetensors_path: Path | str, config_path: Path | str, kind: str, prefix: str) -> tuple:
    from safetensors.numpy import load_file

    from nxm.embed.models import ModelError

    cfg = json.loads(Path(config_path).read_text(encoding="utf-8"))
    if cfg.get("model_type") != kind or cfg.get("hidden_act", "gelu") != "gelu":
        raise ModelError(
            f"{config_path} is not a {kind.upper()} model with gelu activations",
            f"pass the files of a {kind.upper()} model nxm sets up",
            "MODEL_CONVERT_FAILED",
        )
    weights = {k.removeprefix(prefix): v for k, v in load_file(str(safetensors_path)).items()}
    return cfg, weights


def convert_bert(
    safetensors_path: Path | str, config_path: Path | str, out_path: Path | str
) -> Path:
    """Write the BERT encoder in `safetensors_path` as ONNX to `out_path` (all-MiniLM-L6-v2).

    Raises:
        ModelError: the config is not a BERT model with gelu activations.
    """
    import numpy as np

    cfg, w = _load(safetensors_path, config_path, "bert", "bert.")
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    g = _Graph(w, hidden, heads, float(cfg.get("layer_norm_eps", 1e-12)))

    # embeddings: word + position[:seq] + token type, then LayerNorm
    word = g.op("Gather", [g.param("embeddings.word_embeddings.weight"), "input_ids"], "word")
    seq_len = g.op("Shape", ["input_ids"], "seq_len", start=1, end=2)
    zero, axis0 = g.const("zero", [0], np.int64), g.const("axis0", [0], np.int64)
    positions = g.param("embeddings.position_embeddings.weight")
    pos = g.op("Slice", [positions, zero, seq_len, axis0], "pos")
    types = g.param("embeddings.token_type_embeddings.weight")
    ttype = g.op("Gather", [types, "token_type_ids"], "tt")
    summed = g.op("Add", [g.op("Add", [word, pos], "emb.wp"), ttype], "emb.sum")
    x = g.layer_norm(summed, "embeddings.LayerNorm", "emb")
    attn = ("self.query", "self.key", "self.value", "output.dense")
    x = g.layers(x, int(cfg["num_hidden_layers"]), attn, "output.LayerNorm", g.mask())
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    return g.save("bert_encoder", inputs, x, Path(out_path))


def rel_buckets(n: int, num_buckets: int = 32, max_distance: int = 128) -> Any:
    """MPNet's (T5's) relative-position bucket of every (query, key) pair of a length-n text."""
    import numpy as np

    rel = np.arange(n)[None, :] - np.arange(n)[:, None]
    half = num_buckets // 2
    exact = half // 2
    ret = (rel > 0).astype(np.int64) * half
    dist = np.abs(rel)
    scaled = np.log(np.maximum(dist, 1) / exact) / math.log(max_distance / exact) * (half - exact)
    large = np.minimum(exact + scaled.astype(np.int64), half - 1)
    return ret + np.where(dist < exact, dist, large)


def convert_mpnet(
    safetensors_path: Path | str, config_path: Path | str, out_path: Path | str
) -> Path:
    """Write the MPNet encoder as ONNX to `out_path` (all-mpnet-base-v2): BERT's graph with
    positions from the padding id, no token types, and a relative-position bias on the scores.

    Raises:
        ModelError: the config is not an MPNet model with gelu activations.
    """
    import numpy as np
    from onnx import TensorProto

    cfg, w = _load(safetensors_path, config_path, "mpnet", "mpnet.")
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    g = _Graph(w, hidden, heads, float(cfg.get("layer_norm_eps", 1e-5)))

    # positions: pad_id + 1, 2, ... over the real tokens, pad_id on padding (fairseq's count)
    pad = g.const("pad_id", int(cfg.get("pad_token_id", 1)), np.int64)
    real = g.op("Not", [g.op("Equal", ["input_ids", pad], "is_pad")], "real")
    real = g.op("Cast", [real], "real.i", to=TensorProto.INT64)
    count = g.op("CumSum", [real, g.const("axis1", 1, np.int64)], "count")
    positions = g.op("Add", [g.op("Mul", [count, real], "count.m"), pad], "positions")
    word = g.op("Gather", [g.param("embeddings.word_embeddings.weight"), "input_ids"], "word")
    table = g.param("embeddings.position_embeddings.weight")
    pos = g.op("Gather", [table, positions], "pos")
    x = g.layer_norm(g.op("Add", [word, pos], "emb.sum"), "embeddings.LayerNorm", "emb")
    buckets = int(cfg.get("relative_attention_num_buckets", 32))
    bias_w = w["encoder.relative_attention_bias.weight"]
    rel_table = bias_w[rel_buckets(512, buckets)].transpose(2, 0, 1)[None]
    n = g.op("Shape", ["input_ids"], "seq_len", start=1, end=2)
    ends = g.op("Concat", [n, n], "ends", axis=0)
    starts, axes = g.const("starts", [0, 0], np.int64), g.const("axes23", [2, 3], np.int64)
    rel = g.op("Slice", [g.const("rel_table", rel_table), starts, ends, axes], "rel")
    bias = g.op("Add", [rel, g.mask()], "bias")
    attn = ("attn.q", "attn.k", "attn.v", "attn.o")
    x = g.layers(x, int(cfg["num_hidden_layers"]), attn, "LayerNorm", bias)
    return g.save("mpnet_encoder", ("input_ids", "attention_mask"), x, Path(out_path))


CONVERTERS = {"bert": convert_bert, "mpnet": convert_mpnet}

__all__ = ["CONVERTERS", "convert_bert", "convert_mpnet", "rel_buckets"]
