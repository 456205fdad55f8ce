"""The committed figures are what the current code draws from the committed tables."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("committed_figures",
                                               REPO / "docs" / "committed_figures.py")
committed = importlib.util.module_from_spec(_spec)
sys.modules["committed_figures"] = committed  # its dataclass looks its module up
_spec.loader.exec_module(committed)

PNGS = [d for d in committed.drawings() if d.path.suffix == ".png"]
MOVED = 0.25
"""A pixel counts as changed when a channel moves by more than this (0..1)."""
AT_MOST = 0.002
"""Share of changed pixels allowed: a font's antialiasing on another machine, not a new
caption, axis or line style."""


def _pixels(data: bytes) -> np.ndarray:
    return image.imread(io.BytesIO(data), format="png")


def test_every_committed_figure_is_listed():
    """Every PNG and PDF committed under the committed runs is one the script redraws."""
    listed = {d.path.relative_to(REPO).as_posix() for d in committed.drawings()}
    tracked = subprocess.run(["git", "ls-files", *committed.RUNS], cwd=REPO, text=True,
                             capture_output=True, check=True).stdout.split()
    figures = {p for p in tracked if p.endswith((".png", ".pdf"))}
    assert figures and figures <= listed


@pytest.mark.parametrize("drawing", PNGS, ids=lambda d: d.path.relative_to(REPO).as_posix())
def test_committed_png_matches_a_fresh_drawing(drawing):
    """Same size and, pixel for pixel, the same drawing as the code makes from the tables
    (`make redraw-committed` after a change to the drawing)."""
    fresh = _pixels(committed.render(drawing))
    kept = _pixels(drawing.path.read_bytes())
    assert kept.shape == fresh.shape, "committed figure has another size: make redraw-committed"
    changed = float((np.abs(kept - fresh).max(axis=-1) > MOVED).mean())
    assert changed <= AT_MOST, (f"{changed:.2%} of the pixels differ from a fresh drawing: "
                                "make redraw-committed")


def test_the_comparison_sees_a_caption():
    """A drawing with one more line of text fails the comparison: the test can fail."""
    drawing = next(d for d in PNGS if d.path.parent.name == "boston")
    from nbvslr import results
    from nbvslr.views import plots

    fig = plots.figure_of_tasks(results.load_results([drawing.path.parent]))
    fig.axes[0].set_title("a title of another length, drawn in another place")
    other = _pixels(plots.render(fig, "png"))
    kept = _pixels(drawing.path.read_bytes())
    assert other.shape != kept.shape or (
        float((np.abs(kept - other).max(axis=-1) > MOVED).mean()) > AT_MOST)


def test_every_committed_task_folder_is_sealed_and_verifies():
    """Each committed task folder carries a tracked files.sha256 over its tables, which its
    files match (as a fresh clone has them) and which sealing again leaves unchanged."""
    from nbvslr import results

    folders = committed.sealed_folders()
    tracked = set(subprocess.run(["git", "ls-files", *committed.SEALED], cwd=REPO, text=True,
                                 capture_output=True, check=True).stdout.split())
    assert len(folders) >= 50
    for folder in folders:
        manifest = folder / results.MANIFEST_FILE
        assert manifest.relative_to(REPO).as_posix() in tracked, f"{manifest} not committed"
        task = results.load_task(folder)  # every listed file has its listed sha256
        assert task.manifest is not None
        assert set(task.manifest) == {n for n in ("summary.csv", "paired.csv", "run.json")
                                      if (folder / n).is_file()}
        text = manifest.read_bytes()
        for name, digest in task.manifest.items():  # what `sha256sum -c` checks
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
        assert text == results.write.manifest_bytes(
            {n: (folder / n).read_bytes() for n in task.manifest})
