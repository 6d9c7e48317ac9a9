"""The embedder seam: fastembed in-process, loaded lazily, with no network.

`load_embedder(name)` returns an object with ``name``, ``dim`` and ``embed(texts)`` (float32 rows,
L2-normalised). The default model is the ONNX file `nxm model setup` produced in the user's cache;
``"hash"`` is a tiny deterministic embedder for tests (real code path, no model files).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from nxm.model import DIM, MODEL_NAME, ModelError, model_dir, model_status

if TYPE_CHECKING:
    import numpy as np

_LOADED: dict[str, Any] = {}
_WORD = re.compile(r"\w+")


class Embedder(Protocol):
    """What the service needs from an embedding model."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...


class HashEmbedder:
    """Deterministic signed feature hashing of words and character trigrams (tests only)."""

    name = "hash"

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [w[i : i + 3] for w in words for i in range(max(len(w) - 2, 1))]
        return words + grams

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dim
                out[row, index] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out


class FastEmbedder:
    """A fastembed TextEmbedding; the default model loads from the local ONNX install."""

    def __init__(self, name: str = MODEL_NAME) -> None:
        self.name = name
        kwargs: dict[str, Any] = {}
        if name == MODEL_NAME:
            status = model_status(name)
            if not status["installed"]:
                raise ModelError(
                    f"embedding model {name} is not installed ({status['path']})",
                    suggestion="run `nxm model setup`",
                )
            kwargs["specific_model_path"] = str(model_dir(name))
            # Local files only: without this fastembed asks the hub first and waits ~40 s offline.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from fastembed import TextEmbedding  # deferred: ~0.5 s of import

        try:
            self._model = TextEmbedding(name, threads=os.cpu_count() or 1, **kwargs)
        except Exception as exc:  # fastembed raises plain exceptions for missing models
            raise ModelError(
                f"cannot load embedding model {name}: {exc}",
                suggestion="run `nxm model setup`, or set [memory] model in .nxs/config.toml",
            ) from None
        self.dim = (
            int(self._model.embedding_size) if hasattr(self._model, "embedding_size") else DIM
        )

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(
            list(self._model.embed(list(texts), batch_size=batch_size)), dtype=np.float32
        )
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0, 1, norms)


def load_embedder(name: str = MODEL_NAME) -> Embedder:
    """The embedder for ``name`` (cached per process).

    Raises:
        ModelError: the model's files are missing or do not load.
    """
    if name not in _LOADED:
        _LOADED[name] = HashEmbedder() if name == "hash" else FastEmbedder(name)
    return _LOADED[name]


__all__ = ["Embedder", "FastEmbedder", "HashEmbedder", "load_embedder"]
