"""Shared fixtures: a mirror of the original UCI files, a temporary cache, a headless matplotlib."""

from __future__ import annotations

import gzip
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "nbvslr" / "data" / "uci"


@pytest.fixture(scope="session")
def mirror(tmp_path_factory) -> Path:
    """A folder of the original UCI files (``<dataset>/<file>``), as a user's mirror holds
    them: the shipped copies, decompressed. Tests that use it pass ``--fresh`` or a cache to
    exercise the mirror, or read the raw files to check a recipe."""
    root = tmp_path_factory.mktemp("uci-mirror")
    for packed in SHIPPED.glob("*/*.gz"):
        target = root / packed.parent.name / packed.name.removesuffix(".gz")
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(gzip.decompress(packed.read_bytes()))
    return root


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """An empty dataset cache for one test."""
    d = tmp_path / "cache"
    d.mkdir()
    return d
