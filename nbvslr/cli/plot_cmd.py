"""``nbvslr plot``: pictures of finished runs, from saved results only."""

from __future__ import annotations

from pathlib import Path

import click

from nbvslr import results
from nbvslr.cli.results_options import results_dirs_argument
from nbvslr.views import plots


@click.command(
    "plot",
    short_help="Draw the learning curves of finished runs.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr plot results/pima                      # -> results/pima/curve.png
  nbvslr plot results --figure1 -o results/figure1.png -o results/figure1.pdf
  nbvslr plot results/pima --log-m -o pima-log.png
""",
)
@results_dirs_argument
@click.option("--output", "-o", "outputs", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Figure file; .png, .pdf or .svg (repeat for several formats). "
                   "Default: RESULTS_DIR/curve.png (the first RESULTS_DIR).")
@click.option("--figure1", is_flag=True,
              help="The paper's layout: 3 panels a row (5 x 3 for the 15 tasks), built-in "
                   "tasks in Figure 1's order, other tasks after them.")
@click.option("--paper/--no-paper", default=None,
              help="Overlay the paper's own curves (thin, black) on the panels of Figure 1. "
                   "Default: on with --figure1, off otherwise.")
@click.option("--log-m", is_flag=True,
              help="A logarithmic m axis, from the smallest m to the largest (the theorem's "
                   "log n, the logarithmic grids of nbvslr sample-complexity).")
@click.option("--dpi", type=click.IntRange(min=30, max=1200), default=150, show_default=True,
              help="Resolution of PNG output.")
def plot(results_dirs, outputs, figure1, paper, log_m, dpi):
    """Draw the learning curves of finished runs: error vs m, one panel per task.

    RESULTS_DIR is a task folder (holding summary.csv and run.json) or a folder of task
    folders. NB is solid and LR dashed, with 95% bands; the first crossover is dotted
    (dash-dotted blue when NB goes ahead), with its bootstrap interval shaded when the
    folder has splits.csv.gz; a caption says what is drawn; nothing is re-run.
    """
    outputs = list(outputs) or [results_dirs[0] / results.CURVE_FILE]
    formats = [plots.format_for(path) for path in outputs]  # fail before reading anything
    tasks = results.load_results(results_dirs)
    paper = figure1 if paper is None else paper
    if figure1:
        fig = plots.figure1(tasks, paper=paper, log_m=log_m)
    else:
        fig = plots.figure_of_tasks(tasks, paper=paper, log_m=log_m)
    for path, fmt in zip(outputs, formats, strict=True):
        results.atomic_write_bytes(path, plots.render(fig, fmt, dpi=dpi))
        click.echo(f"wrote {path} ({len(tasks)} panel{'s' if len(tasks) != 1 else ''})",
                   err=True)
