"""Workspaces: finding `.nxs/` (walking up, like git's `.git/`, unless `--workspace` or
``NXS_WORKSPACE`` names one), reading its config (committed: nothing private), creating one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nxs.errors import NotFoundError, ValidationError
from nxs.paths import atomic_write
from nxs.registry import MODULES, hook, module

DIRNAME = ".nxs"
DEFAULT_CONFIG: dict[str, Any] = {
    "mcp": {"tools": ["core", "session"]},  # at most 20 tools by default (docs/mcp.md)
}


@dataclass
class Workspace:
    """An opened workspace: its root, its `.nxs/` directory and its config."""

    root: Path
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def dir(self) -> Path:
        return self.root / DIRNAME

    @property
    def modules(self) -> list[str]:
        return list(self.config.get("nxs", {}).get("modules", []))

    def section(self, name: str) -> dict[str, Any]:
        """A config section merged over its defaults (a module's, `nxs.registry`)."""
        return {**defaults(name), **self.config.get(name, {})}

    def require(self, module: str) -> None:
        """Raises NotFoundError when the module is not active here."""
        if module not in self.modules:
            cmd = "nxm init" if module == "memory" else f"nxs init --module {module}"
            raise NotFoundError(
                f"the {module} module is not active in the workspace at {self.root}",
                suggestion=f"run `{cmd}` there",
                code="MODULE_INACTIVE",
            )


# Settings whose type the code relies on: (section, name) -> (types, what it must be).
_SHAPES: dict[tuple[str, str], tuple[Any, str]] = {
    ("nxs", "modules"): (list, "a list of module names"),
    ("memory", "model"): (str, "a model name"),
    ("memory", "store"): (str, "a path or URI"),
    ("memory", "task_ttl_days"): (int | float, "a number of days"),
    ("memory", "prime_budget"): (int, "a number of bytes"),
    ("memory", "storage_options"): (dict, "a table"),
    ("memory", "categories"): (list, "a list of category names"),
    ("mcp", "tools"): (list | str, "a list of tool groups"),
}


def _bad_config(message: str) -> ValidationError:
    fix = "fix the file by hand or restore it from version control"
    return ValidationError(message, suggestion=fix, code="BAD_CONFIG")


def _read_config(path: Path) -> dict[str, Any]:
    import tomllib  # here: `--help` reads no config

    from nxs.trust import read_limited

    invalid = f"{path} is not a valid nxs config:"
    try:
        config = tomllib.loads(read_limited(path).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _bad_config(f"{path} is not valid TOML: {exc}") from None
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _bad_config(f"{invalid} cannot read it ({exc.strerror})") from None
    for section in ("nxs", *MODULES, "mcp"):
        if not isinstance(config.get(section, {}), dict):
            raise _bad_config(f"{invalid} {section} must be a [{section}] table")
    for (section, name), (types, what) in _SHAPES.items():
        value = config.get(section, {}).get(name)
        if value is not None and not isinstance(value, types):
            raise _bad_config(f"{invalid} {section}.{name} must be {what}, got {value!r:.60}")
    return config


def _missing(message: str, suggestion: str) -> NotFoundError:
    return NotFoundError(message, suggestion=suggestion, code="NO_WORKSPACE")


def find(explicit: str | os.PathLike[str] | None = None, start: Path | None = None) -> Workspace:
    """Open the workspace named explicitly, by ``NXS_WORKSPACE``, or found walking up.

    Raises:
        NotFoundError: no `.nxs/` there or above.
        ValidationError: its config.toml is unreadable.
    """
    named = explicit or os.environ.get("NXS_WORKSPACE")
    if named:
        try:
            root = Path(named).expanduser().resolve()
            if root.name == DIRNAME:
                root = root.parent
            present = (root / DIRNAME).is_dir()
        except (OSError, ValueError, RuntimeError) as exc:  # a NUL, an unknown ~user, too long
            raise _missing(
                f"no nxs workspace at {str(named)[:200]!r}: {str(exc)[:200]}",
                "name an existing directory with --workspace (or NXS_WORKSPACE)",
            ) from None
        if not present:
            fix = f"run `nxm init` in {root}, or name another with --workspace"
            raise _missing(f"no nxs workspace at {root}", fix)
    else:
        here = (start or Path.cwd()).resolve()
        root = next((d for d in (here, *here.parents) if (d / DIRNAME).is_dir()), None)  # type: ignore[assignment]
        if root is None:
            fix = "run `nxm init` in your project's root (or pass --workspace / set NXS_WORKSPACE)"
            raise _missing(f"no nxs workspace in {here} or any parent directory", fix)
    return Workspace(root=root, config=_read_config(root / DIRNAME / "config.toml"))


def dump_config(config: dict[str, Any]) -> str:
    """A new config as TOML (nested tables inline)."""
    from nxs.mcp.hostfiles import toml_table

    head = "# nxs workspace configuration. Committed with the project: nothing private here.\n"
    return head + "".join(f"\n{toml_table([name], values)}" for name, values in config.items())


def init(path: Path, modules: list[str]) -> tuple[Workspace, list[str]]:
    """Create or extend a workspace at ``path`` (an unknown module, or an unreadable config, is
    refused); return it and the modules newly activated."""
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        raise ValidationError(
            f"unknown module {unknown[0]!r}", suggestion=f"modules: {', '.join(MODULES)}"
        )
    from nxs.trust import check_paths, read_limited

    root = path.resolve()
    nxs_dir = root / DIRNAME
    check_paths(root)  # a cloned `.nxs` symlinked elsewhere: nothing is written there
    config = _read_config(nxs_dir / "config.toml")
    active = list(config.get("nxs", {}).get("modules", []))
    added = [m for m in modules if m not in active]
    if added or not (nxs_dir / "config.toml").exists():
        config.setdefault("nxs", {})["version"] = 1
        config["nxs"]["modules"] = active + added
        for m in added:
            for k, v in defaults(m).items():
                config.setdefault(m, {}).setdefault(k, v)
        new = [*added, *(["mcp"] if "mcp" not in config else [])]
        config.setdefault("mcp", dict(DEFAULT_CONFIG["mcp"]))
        nxs_dir.mkdir(parents=True, exist_ok=True)
        file = nxs_dir / "config.toml"
        if file.exists():  # the tables that changed, in place: comments and the rest kept
            from nxs.mcp.hostfiles import toml_set

            text = read_limited(file).decode("utf-8")  # read above: it is small
            for name in [n for n in ["nxs", *new] if n in config]:
                text = toml_set(file, text, [name], config[name])
        else:
            text = dump_config(config)
        atomic_write(file, text.encode())
    for name in config.get("nxs", {}).get("modules", []):  # each module's set-up, idempotent
        spec = module(name).init if name in MODULES else None
        if spec:
            hook(spec)(root)
    return Workspace(root=root, config=config), added


def defaults(name: str) -> dict[str, Any]:
    """A config section's defaults: the umbrella's, or its module's declaration."""
    if name in MODULES:
        return dict(module(name).defaults)
    return dict(DEFAULT_CONFIG.get(name, {}))


__all__ = ["DIRNAME", "MODULES", "Workspace", "defaults", "dump_config", "find", "init"]
