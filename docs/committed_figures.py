"""The committed figures, each drawn again from its committed tables by the current code.

The committed runs (``results/reference``, ``results/as-published``,
``results/multiclass``, ``results/text``, ``results/generative``) keep their tables and
their drawings but not their ``splits.csv.gz``; this draws every figure from the tables
alone, as ``nbvslr plot`` would (the crossover is marked; its bootstrap interval, which
needs the splits, is in the run's report.md). Nothing is run and no table is written.

    python docs/committed_figures.py          # make redraw-committed: rewrites the figures
    python docs/committed_figures.py --seal   # make seal-committed: and the digests

With ``--seal`` every committed task folder (those runs', ``results/fidelity``'s and
``results/long``'s) gets a
``files.sha256`` over its tables (``results.seal_tables``: summary.csv, paired.csv,
run.json, not the drawings), so the readers check a committed folder as they check a run's
and a fresh clone verifies (``tests/system/test_committed_figures.py``).

``tests/system/test_committed_figures.py`` draws each PNG again and compares it with the
committed one: a change to the drawing shows up there until the figures are redrawn.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure

from nbvslr import results
from nbvslr.analysis.fidelity import panel_order
from nbvslr.views import plots

ROOT = Path(__file__).resolve().parent.parent
RUNS = ("results/reference", "results/as-published", "results/multiclass", "results/text",
        "results/generative")
"""The committed runs whose figures are drawn from their tables."""
SYNTHETIC = ("nb-data", "dependent")
SEALED = (*RUNS, "results/fidelity", "results/long")
"""The committed runs whose task folders carry a ``files.sha256`` over their tables."""


@dataclass(frozen=True)
class Drawing:
    """One committed figure file and the task folders it is drawn from."""

    path: Path
    folders: tuple[Path, ...]
    draw: Callable[[list], Figure]


def _panels(run: Path) -> list[Path]:
    return sorted(p for p in run.iterdir() if (p / results.SUMMARY_FILE).is_file())


def _figure1(tasks: list) -> Figure:
    return plots.figure1(tasks, paper=True)


def drawings(root: Path = ROOT) -> list[Drawing]:
    """Every committed figure (PNG and PDF) of the committed runs, in a fixed order."""
    out: list[Drawing] = []
    for name in RUNS:
        run = root / name
        if not run.is_dir():
            continue
        panels = _panels(run)
        for folder in panels:
            out.append(Drawing(folder / results.CURVE_FILE, (folder,),
                               lambda tasks: plots.figure_of_tasks(tasks)))
        figure1 = tuple(p for p in panels if p.name not in SYNTHETIC)
        for fig in ("figure1.png", "figure1.pdf"):
            if (run / fig).exists():
                out.append(Drawing(run / fig, figure1, _figure1))
        side_by_side = tuple(panels[i] for i in panel_order([p.name for p in panels]))
        for fig in ("figure.png", "figure.pdf"):  # the run's tasks, as nbvslr plot RUN
            if (run / fig).exists():
                out.append(Drawing(run / fig, side_by_side,
                                   lambda tasks: plots.figure_of_tasks(tasks)))
        synthetic = tuple(run / n for n in SYNTHETIC if (run / n).is_dir())
        if (run / "synthetic.png").exists() and synthetic:
            out.append(Drawing(run / "synthetic.png", synthetic,
                               lambda tasks: plots.figure_of_tasks(tasks)))
    return out


class _TablesOnly:
    """A task read as a fresh clone has it: its committed tables, never a ``splits.csv.gz``
    that a refresh left beside them (git ignores those), so a figure drawn here is the one
    the committed-figures test draws anywhere."""

    def __init__(self, task: results.TaskResults) -> None:
        self._task = task

    def __getattr__(self, name: str):
        return getattr(self._task, name)

    def has_splits(self) -> bool:
        return False


def render(drawing: Drawing) -> bytes:
    """The figure's bytes as the current code draws it from the committed tables."""
    tasks = [_TablesOnly(t) for t in results.load_results(list(drawing.folders))]
    fig = drawing.draw(tasks)
    return plots.render(fig, plots.format_for(drawing.path))


def sealed_folders(root: Path = ROOT) -> list[Path]:
    """Every committed task folder (a folder holding a summary.csv under ``SEALED``)."""
    return sorted(p.parent for name in SEALED if (root / name).is_dir()
                  for p in (root / name).rglob(results.SUMMARY_FILE))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--seal" in argv:
        for folder in sealed_folders():
            results.seal_tables(folder)
            print(f"sealed {folder.relative_to(ROOT)}")
    for drawing in drawings():
        data = render(drawing)
        changed = not drawing.path.exists() or drawing.path.read_bytes() != data
        if changed:
            results.atomic_write_bytes(drawing.path, data)
        print(f"{'redrew' if changed else 'same  '} {drawing.path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
