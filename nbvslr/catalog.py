"""The configs shipped with nbvslr: listed, shown, and found by name from any folder.

They live in the package (``nbvslr/configs/<name>.yaml``; a source checkout links them as
``configs/``), so ``nbvslr run pima`` works in an empty folder and from an installed wheel.
This module imports nothing but ``nbvslr.errors``: ``nbvslr configs`` answers without
importing numpy, pandas or the models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from nbvslr.errors import ConfigError, did_you_mean

SUFFIX = ".yaml"


@dataclass(frozen=True)
class ShippedConfig:
    """One shipped config: its name (``pima``, ``figure1``), file and one-line description."""

    name: str
    path: Path
    description: str


def _root() -> Path:
    return Path(str(resources.files("nbvslr").joinpath("configs")))


def _description(text: str) -> str:
    """The first sentence of the config's leading comment, without the ``#``."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    # a sentence ends at a full stop before a capital or a "name:" (synthetic's "nb-data:")
    return re.split(r"(?<=\.)\s+(?=[A-Z]|[\w-]+:)", " ".join(lines).strip(), maxsplit=1)[0]


def shipped_configs() -> list[ShippedConfig]:
    """Every shipped config, sorted by name (a sub-folder's configs as ``folder/name``)."""
    root = _root()
    found = []
    for path in sorted(root.rglob(f"*{SUFFIX}")):
        name = path.relative_to(root).with_suffix("").as_posix()
        found.append(ShippedConfig(name, path, _description(path.read_text(encoding="utf-8"))))
    return found


def shipped_config(name: str) -> ShippedConfig:
    """The shipped config called ``name`` (``pima`` or ``pima.yaml``); ``ConfigError`` naming
    the closest one if there is none."""
    known = {c.name: c for c in shipped_configs()}
    key = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    if key in known:
        return known[key]
    stem = Path(key).name
    hint = (f" (did you mean the shipped config '{stem}'?)" if stem in known
            else did_you_mean(key, known))
    raise ConfigError(
        f"{name}: no such config file, nor a shipped config{hint}; "
        "`nbvslr configs` lists the shipped ones"
    )


def resolve_config(arg: str | Path) -> Path:
    """The config file that a ``nbvslr run`` argument names: an existing file as given, else
    the shipped config of that name. A folder, or neither, is a ``ConfigError``."""
    path = Path(arg)
    if path.is_dir():
        raise ConfigError(f"{arg} is a folder; name a config file (.yaml) or a shipped config")
    if path.exists():
        return path
    return shipped_config(str(arg)).path
