"""The models room: its map lists every module, and the code digest reads every one."""

from __future__ import annotations

import re
from pathlib import Path

import nbvslr
from nbvslr.models.registry import ENTRIES
from nbvslr.runner import bookkeeping

MODELS = Path(nbvslr.__file__).parent / "models"


def _modules() -> set[str]:
    """Every module of nbvslr/models/ but the packages' own ``__init__``, as paths under it."""
    return {p.relative_to(MODELS).as_posix() for p in MODELS.rglob("*.py")
            if p.name != "__init__.py" or p.parent == MODELS}


def test_the_map_names_every_module():
    """models/README.md lists each module under its path, and no module that is not there."""
    text = (MODELS / "README.md").read_text()
    named = set(re.findall(r"`([\w/]+\.py)`", text))
    assert named == _modules()


def test_each_family_keeps_its_entries_in_one_folder():
    """Every entry lives in a family folder, and a non-text family's entries (two classes and
    K) in one folder: none at the top of the room, none split across folders."""
    folders: dict[str, set[str]] = {}
    for entry in ENTRIES:
        parts = type(entry).__module__.split(".")
        assert parts[:2] == ["nbvslr", "models"] and len(parts) == 4, type(entry).__module__
        if "text" not in entry.kinds:
            folders.setdefault(entry.name, set()).add(parts[2])
    assert folders == {"nb": {"nb"}, "lr": {"lr"}, "lda": {"discriminant"},
                       "qda": {"discriminant"}}


def test_code_digest_reads_every_family_folder(monkeypatch):
    """The checkpoint fingerprint's code digest covers the modules in the family folders."""
    read: list[Path] = []
    real = Path.read_bytes

    def recording(self: Path) -> bytes:
        read.append(self.resolve())
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", recording)
    bookkeeping.code_digest()
    got = {p.relative_to(MODELS.resolve()).as_posix() for p in read
           if MODELS.resolve() in p.parents}
    assert {"lr/entry.py", "nb/entry.py", "discriminant/gaussian.py", "text/fit.py"} <= got
    assert _modules() <= got
