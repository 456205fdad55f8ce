"""Shared fixtures: the offline UCI mirror, a temporary cache, a headless matplotlib."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[1]


def _mirror_path() -> Path:
    env = os.environ.get("NBVSLR_DATA_MIRROR")
    return Path(env) if env else REPO.parent / "shared" / "data" / "uci"


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The offline mirror of the original UCI files (``NBVSLR_DATA_MIRROR``)."""
    path = _mirror_path()
    if not (path / "SOURCES.md").is_file():
        pytest.fail(f"UCI mirror not found at {path}; set NBVSLR_DATA_MIRROR")
    return path


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """An empty dataset cache for one test."""
    d = tmp_path / "cache"
    d.mkdir()
    return d
