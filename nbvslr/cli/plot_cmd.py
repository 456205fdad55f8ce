"""``nbvslr plot``: pictures of finished runs, from saved results only.

A reader never writes into a task folder unasked: a task folder's figure goes beside it by
default (``results/pima`` -> ``results/pima.png``); a figure asked for inside a task folder
(``-o``) is written holding that folder's lock, and never over one of the run's own files.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from nbvslr import results
from nbvslr.analysis.fidelity import panel_order
from nbvslr.analysis.metrics import for_metric
from nbvslr.cli.results_options import results_dirs_argument
from nbvslr.errors import ResultsError
from nbvslr.results.layout import METRICS
from nbvslr.views import plots


@click.command(
    "plot",
    short_help="Draw the learning curves of finished runs.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr plot results/pima                      # -> results/pima.png
  nbvslr plot results --figure1 -o results/figure1.png -o results/figure1.pdf
  nbvslr plot results/pima --log-m -o pima-log.png
""",
)
@results_dirs_argument
@click.option("--output", "-o", "outputs", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Figure file; .png, .pdf or .svg (repeat for several formats). "
                   "Default: the first RESULTS_DIR's: RESULTS_DIR/curve.png for a folder of "
                   "tasks, TASK.png beside a task folder (a task folder's own curve.png is "
                   "the run's).")
@click.option("--figure1", is_flag=True,
              help="The paper's layout: 3 panels a row (5 x 3 for the 15 tasks), built-in "
                   "tasks in Figure 1's order, other tasks after them.")
@click.option("--paper/--no-paper", default=None,
              help="Overlay the paper's own curves (thin, black) on the panels of Figure 1. "
                   "Default: on with --figure1, off otherwise.")
@click.option("--log-m", is_flag=True,
              help="A logarithmic m axis, from the smallest m to the largest (the theorem's "
                   "log n, the logarithmic grids of nbvslr sample-complexity). Without it, "
                   "a panel whose grid is spaced by ratios over a wide range (10, 20, 50, "
                   "..., 2000) is drawn on one too, and Figure 1's evenly spaced grids on a "
                   "linear axis.")
@click.option("--metric", type=click.Choice(list(METRICS)), default="error",
              show_default=True,
              help="The metric to draw: the test error, or another one the run measured (its "
                   "config's metrics: log_loss, brier, train_error), with its 95% bands and "
                   "crossover; the paper's curves only with the error.")
@click.option("--dpi", type=click.IntRange(min=30, max=1200), default=150, show_default=True,
              help="Resolution of PNG output.")
def plot(results_dirs, outputs, figure1, paper, log_m, metric, dpi):
    """Draw the learning curves of finished runs: error vs m, one panel per task.

    RESULTS_DIR is a task folder (holding summary.csv and run.json) or a folder of task
    folders: a folder of task folders in the report's order (the paper's panels in
    Figure 1's order, then the others by name), task folders in the order given. Generative
    models (NB, LDA, QDA) are solid and discriminative ones (LR)
    dashed, with 95% bands; the first crossover of each panel's first pair is dotted
    (dash-dotted blue when its a goes ahead), with its bootstrap interval shaded when the
    folder has splits.csv.gz; a caption says what is drawn; nothing is re-run.
    """
    outputs = list(outputs) or [default_output(results_dirs[0])]
    formats = [plots.format_for(path) for path in outputs]  # fail before reading anything
    for path in outputs:
        _not_a_run_file(path)
    tasks = [for_metric(t, metric) for t in _panels(results_dirs)]
    paper = figure1 if paper is None else paper
    if figure1:
        fig = plots.figure1(tasks, paper=paper, log_m=log_m)
    else:
        fig = plots.figure_of_tasks(tasks, paper=paper, log_m=log_m or None)
    for path, fmt in zip(outputs, formats, strict=True):
        data = plots.render(fig, fmt, dpi=dpi)
        with _task_lock(Path(path).parent):
            results.atomic_write_bytes(path, data)
        click.echo(f"wrote {path} ({len(tasks)} panel{'s' if len(tasks) != 1 else ''})",
                   err=True)


def _panels(results_dirs) -> list[results.TaskResults]:
    """The tasks of each RESULTS_DIR in turn: a task folder as given, a folder of task
    folders in the report's order (``fidelity.panel_order``)."""
    out: list[results.TaskResults] = []
    for folder in results_dirs:
        tasks = results.load_results([folder])
        if not results.is_task_dir(Path(folder)):
            tasks = [tasks[i] for i in panel_order([str(t.name) for t in tasks])]
        out.extend(tasks)
    return out


def default_output(first: Path) -> Path:
    """``first/curve.png`` for a folder of tasks; ``<task>.png`` beside a task folder."""
    first = Path(first)
    if results.is_task_dir(first):
        plain = Path(os.path.normpath(first))  # as given (relative stays relative)
        if plain.name in ("", ".", ".."):  # "." or "..": the folder's own name
            plain = first.resolve()
        return plain.parent / f"{plain.name}.png"
    return first / results.CURVE_FILE


def _not_a_run_file(path: Path) -> None:
    """Refuse ``-o`` naming one of a run's own files in a task folder (or a dot-file)."""
    path = Path(path)
    if results.is_task_dir(path.parent) and (
            path.name in (*results.SEALED_FILES, results.MANIFEST_FILE)
            or path.name.startswith(".")):
        raise ResultsError(f"{path}: is a file of the run in that task folder, which nbvslr plot "
                           "never replaces; choose another -o name")


def _task_lock(folder: Path) -> contextlib.AbstractContextManager:
    """The lock of ``folder`` when it is a task folder (refused while a run writes it)."""
    return results.TaskLocks([folder]) if results.is_task_dir(folder) else contextlib.nullcontext()
