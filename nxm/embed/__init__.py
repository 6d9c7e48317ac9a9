"""The embedder seam: text in, L2-normalised float32 rows out.

`FastEmbedder` runs a fastembed ONNX model (one nxm sets up is loaded from its install, never
the network); `HashEmbedder` is a tiny deterministic one for tests and model-less runs;
`load_embedder` picks one, once per process. numpy and fastembed are imported lazily.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nxm.embed.model import DIM, MODEL_NAME, ModelError, cache_root, model_dir, model_status
from nxm.embed.models import Spec, find
from nxs import progress

if TYPE_CHECKING:
    import numpy

HASH_NAME = "hash"
DEFAULT_BATCH_SIZE = 64
# Set to 1 to let fastembed download models other than MODEL_NAME into its cache.
ALLOW_DOWNLOAD_ENV = "NXS_ALLOW_DOWNLOAD"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit vectors of a fixed size."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> numpy.ndarray:
        """float32 array of shape (len(texts), dim), one L2-normalised row per text."""
        ...


class FastEmbedder:
    """A fastembed `TextEmbedding`, loaded eagerly so that a missing model fails at once;
    other models than nxm's come from fastembed's cache, downloaded only with `allow_download`."""

    def __init__(self, name: str = MODEL_NAME, *, allow_download: bool = False) -> None:
        name = _canonical(name)
        self.name = name
        kwargs: dict[str, Any] = {}
        own = find(name)  # a model nxm sets up: loaded from its install, never the hub
        if own is not None:
            status = model_status(name)
            if not status["installed"]:
                raise _not_installed(name, status["path"], status.get("problem"))
            self.dim = own.dim
            # fastembed must not look at the hub for a model it is given as files
            os.environ["HF_HUB_OFFLINE"] = "1"
            kwargs["specific_model_path"] = status["path"]
        else:
            kwargs["cache_dir"] = os.environ.get("FASTEMBED_CACHE_PATH") or str(
                cache_root() / "models" / "fastembed"
            )
            if not allow_download:
                os.environ["HF_HUB_OFFLINE"] = "1"  # a cache miss then fails at once
                kwargs["local_files_only"] = True
        try:
            _defer_hub()
            from fastembed import TextEmbedding

            if own is not None and own.name != MODEL_NAME:
                _register(TextEmbedding, own)
        except ImportError as exc:
            raise ModelError(
                f"fastembed is not installed: {exc}",
                "install nxs with its dependencies",
                "MODEL_DEPENDENCY",
            ) from exc
        try:
            with _no_spinning():
                self._model = TextEmbedding(name, **kwargs)
        except ValueError as exc:  # unknown name, or not in the cache
            if own is None and "not supported" in str(exc):
                raise ModelError(
                    f"embedding model {name} is not supported by fastembed",
                    "choose a model from fastembed's TextEmbedding.list_supported_models()",
                    "MODEL_UNKNOWN",
                ) from exc
            where = kwargs.get("specific_model_path") or kwargs.get("cache_dir")
            raise _not_installed(name, where, str(exc), downloadable=own is None) from exc
        except Exception as exc:  # onnxruntime refusing the file, a broken cache
            raise ModelError(
                f"cannot load embedding model {name}: {exc}",
                f"run `{own.setup_command} --force`"
                if own is not None
                else "delete it from fastembed's cache and download it again",
                "MODEL_LOAD_FAILED",
            ) from exc
        if own is None:
            self.dim = int(self._model.embedding_size)

    def embed(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> numpy.ndarray:
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batch_size = max(1, batch_size)
        rows = []
        for row in self._model.embed([texts[i] for i in order], batch_size=batch_size):
            rows.append(row)
            if len(rows) % batch_size == 0:
                progress.tick(batch_size)  # a bulk embed's bar moves batch by batch
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[order] = np.stack(rows)  # sorted by length: each batch pads little
        # fastembed normalises this model, not every model it runs; a zero row stays zero
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"FastEmbedder(name={self.name!r}, dim={self.dim})"


# fastembed imports the Hugging Face Hub downloader at its top, a large part of its import time
# that a model loaded from files never uses: `nxs.deferred` stands in for these modules (the
# names fastembed imports) until a download uses one.
DEFERRED_HUB = {
    "huggingface_hub.hf_api": ("RepoFile", "model_info", "list_repo_tree"),
    "huggingface_hub._snapshot_download": ("snapshot_download",),
    "huggingface_hub.file_download": ("repo_folder_name",),
}


def _defer_hub() -> None:
    if "fastembed" not in sys.modules:
        from nxs.deferred import stand_in

        for module, names in DEFERRED_HUB.items():
            stand_in(module, names)


@contextlib.contextmanager
def _no_spinning() -> Iterator[None]:
    """Sessions made inside do not busy-wait between runs, taking the CPU the rest of a search
    needs (docs/benchmarks.md); fastembed has no option for it."""
    import onnxruntime as ort

    make = ort.SessionOptions

    def options() -> Any:
        so = make()
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.add_session_config_entry("session.inter_op.allow_spinning", "0")
        return so

    ort.SessionOptions = options
    try:
        yield
    finally:
        ort.SessionOptions = make


def _canonical(name: str) -> str:
    """A model nxm sets up by its full name, however it is written."""
    name = (name or MODEL_NAME).strip()
    own = find(name)
    return own.name if own is not None else name


_REGISTERED: set[str] = set()
_REGISTER_LOCK = threading.Lock()


def _register(text_embedding: Any, own: Spec) -> None:
    """Describe `own` to fastembed as a custom model, once per process (it refuses a second)."""
    from fastembed.common.model_description import ModelSource, PoolingType

    with _REGISTER_LOCK:
        if own.name in _REGISTERED:
            return
        try:
            text_embedding.add_custom_model(
                model=own.name, pooling=PoolingType.MEAN, normalization=True, dim=own.dim,
                sources=ModelSource(hf=own.name), model_file="model.onnx",
                additional_files=["model.onnx.data"],
            )  # fmt: skip
        except ValueError as exc:  # registered by someone else in this process: theirs serves
            if "already registered" not in str(exc):
                raise
        _REGISTERED.add(own.name)


def _not_installed(
    name: str, where: str | None, problem: str | None, downloadable: bool = False
) -> ModelError:
    detail = f" in {where}" if where else ""
    if problem and problem != "not installed":
        detail += f" ({problem})"
    if downloadable:
        suggestion = f"set {ALLOW_DOWNLOAD_ENV}=1 to let fastembed download it, or use {MODEL_NAME}"
    else:
        own = find(name)
        suggestion = f"run `{own.setup_command if own else 'nxm model setup'}`"
    return ModelError(
        f"embedding model {name} is not installed{detail}", suggestion, "MODEL_NOT_INSTALLED"
    )


_WORD = re.compile(r"\w+")


@lru_cache(maxsize=65536)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """The bucket and sign of a feature: blake2b, so the same in every process and platform."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, (1.0 if digest[4] & 1 else -1.0)


class HashEmbedder:
    """Signed hashing of words and their trigrams into `dim` buckets, L2-normalised, so texts
    sharing words or fragments score higher; for tests and model-less runs."""

    def __init__(self, dim: int = DIM, name: str = HASH_NAME) -> None:
        if dim < 1:
            raise ValueError("dim must be positive")
        self.dim = dim
        self.name = name

    @staticmethod
    def features(text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [w[i : i + 3] for w in words for i in range(max(len(w) - 2, 1))]
        return words + grams

    def embed(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> numpy.ndarray:
        import numpy as np

        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            if row and row % batch_size == 0:
                progress.tick(batch_size)
            vec = out[row]
            for feature in self.features(text):
                slot, sign = _slot(feature, self.dim)
                vec[slot] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"


_LOADED: dict[tuple[str, str], Embedder] = {}
_LOCK = threading.Lock()


def load_embedder(name: str = MODEL_NAME) -> Embedder:
    """The embedder called `name` ("hash" or a fastembed model), loaded once per process.

    Raises:
        ModelError: the model's files are not installed (at once, no network wait).
    """
    name = _canonical(name)
    # the install location is part of the key: NXS_CACHE_DIR may change within a process
    key = (name, os.path.realpath(model_dir(name)) if find(name) else "")
    with _LOCK:
        cached = _LOADED.get(key)
        if cached is not None:
            return cached
        embedder: Embedder
        if name == HASH_NAME:
            embedder = HashEmbedder()
        else:
            allow = os.environ.get(ALLOW_DOWNLOAD_ENV, "").strip().lower() in {"1", "true", "yes"}
            embedder = FastEmbedder(name, allow_download=allow)
        _LOADED[key] = embedder
        return embedder


__all__ = [
    "DEFAULT_BATCH_SIZE", "Embedder", "FastEmbedder", "HASH_NAME", "HashEmbedder", "load_embedder",
]  # fmt: skip
