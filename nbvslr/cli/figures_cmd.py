"""``nbvslr plot`` and ``nbvslr report``: pictures and a table, from saved results only."""

from __future__ import annotations

from pathlib import Path

import click

from nbvslr import plots, results
from nbvslr.report import report_csv, report_table
from nbvslr.stats import DEFAULT_N_BOOT

_RESULTS = click.argument(
    "results_dirs", nargs=-1, required=True, metavar="RESULTS_DIR...",
    type=click.Path(file_okay=False, path_type=Path),
)


@click.command(
    "plot",
    short_help="Draw the learning curves of finished runs.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr plot results/pima                      # -> results/pima/curve.png
  nbvslr plot results --figure1 -o results/figure1.png -o results/figure1.pdf
""",
)
@_RESULTS
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
@click.option("--dpi", type=click.IntRange(min=30, max=1200), default=150, show_default=True,
              help="Resolution of PNG output.")
def plot(results_dirs, outputs, figure1, paper, dpi):
    """Draw the learning curves of finished runs: error vs m, one panel per task.

    RESULTS_DIR is a task folder (holding summary.csv and run.json) or a folder of task
    folders. NB is solid and LR dashed, with 95% bands; the first crossover is dotted, with
    its bootstrap interval shaded when the folder has splits.csv.gz; nothing is re-run.
    """
    outputs = list(outputs) or [results_dirs[0] / results.CURVE_FILE]
    formats = [plots.format_for(path) for path in outputs]  # fail before reading anything
    tasks = results.load_results(results_dirs)
    paper = figure1 if paper is None else paper
    if figure1:
        fig = plots.figure1(tasks, paper=paper)
    else:
        fig = plots.figure_of_tasks(tasks, paper=paper)
    for path, fmt in zip(outputs, formats, strict=True):
        results.atomic_write_bytes(path, plots.render(fig, fmt, dpi=dpi))
        click.echo(f"wrote {path} ({len(tasks)} panel{'s' if len(tasks) != 1 else ''})",
                   err=True)


@click.command(
    "report",
    short_help="Tabulate finished runs: errors, NB - LR, crossovers.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr report results
  nbvslr report results -o results/report.md
  nbvslr report results --format csv -o results/report.csv   # pandas.read_csv(...)
""",
)
@_RESULTS
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="FILE", help="Also write the table to FILE.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "csv"]), default="markdown",
              show_default=True,
              help="markdown: the table with its notes; csv: one row per task and compared "
                   "pair, plain numbers (errors and interval half-widths at the smallest and "
                   "largest m, winners, crossover and its interval, b better from, "
                   "asymptotic and majority errors).")
@click.option("--n-boot", type=click.IntRange(min=1), default=DEFAULT_N_BOOT,
              show_default=True,
              metavar="N", help="Bootstrap resamples for the crossover interval.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="N", help="Seed of the bootstrap (the same seed, the same table).")
@click.option("--notes/--no-notes", default=True, show_default=True,
              help="Append the definitions of the columns.")
@click.option("--paper/--no-paper", default=True, show_default=True,
              help="Append the comparison of the built-in panels with the paper's Figure 1 "
                   "(as `nbvslr fidelity`).")
def report(results_dirs, output, fmt, n_boot, seed, notes, paper):
    """Print a table of finished runs, one row per task and compared pair (NB vs LR, and
    the config's other pairs).

    NB and LR error at the smallest and largest m, the winner at each end (or "tie" when
    the paired 95% interval contains 0), the crossover with its bootstrap interval, and
    the asymptotic and majority-class errors; then, in Markdown, for the built-in panels,
    the comparison with the paper's Figure 1. Made from saved results only.
    """
    if fmt == "csv":
        text = report_csv(results_dirs, n_boot=n_boot, seed=seed)
    else:
        text = report_table(results_dirs, n_boot=n_boot, seed=seed, notes=notes,
                            paper=paper)
    click.echo(text, nl=False)
    if output is not None:
        results.atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)

