"""``nbvslr report``: a table of finished runs, from saved results only."""

from __future__ import annotations

from pathlib import Path

import click

from nbvslr import results
from nbvslr.analysis.crossovers import DEFAULT_N_BOOT
from nbvslr.analysis.extrapolate import DEFAULT_N_BOOT as DRAWS
from nbvslr.analysis.extrapolate import REACH, check_extrapolable
from nbvslr.cli.results_options import results_dirs_argument
from nbvslr.errors import ConfigError
from nbvslr.results.layout import METRICS
from nbvslr.views.every_metric import (
    ALL,
    every_metric,
    every_metric_brief,
    every_metric_csv,
    every_metric_table,
)
from nbvslr.views.report import report_csv, report_rows, report_table, verdict_lines


@click.command(
    "report",
    short_help="Tabulate finished runs: errors, a - b, crossovers.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr report results
  nbvslr report results -o results/report.md
  nbvslr report results --format csv -o results/report.csv   # pandas.read_csv(...)
  nbvslr report results --format html -o report.html   # one page, figures inline
  nbvslr report results --format html --metric log_loss -o log_loss.html
  nbvslr report results --format html --metric all -o metrics.html   # side by side
  nbvslr report results --extrapolate     # fitted curves past the grid
  nbvslr report results -o results/report.md --brief   # the file, and a line per task
""",
)
@results_dirs_argument
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="FILE", help="Also write the table to FILE.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "csv", "html"]),
              default="markdown", show_default=True,
              help="markdown: the table with its notes; csv: one row per task and compared "
                   "pair, plain numbers (errors and interval half-widths at the smallest and "
                   "largest m, winners, crossover and its interval, b better from, "
                   "asymptotic and majority errors); html: one self-contained page to "
                   "share (every task's figure inline, the Markdown's sections, the runs' "
                   "settings and versions; readable offline), written with -o.")
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
@click.option("--extrapolate", is_flag=True,
              help="Append each model's fitted learning curve past the grid: its limit beside "
                   "the error when trained on all rows, and the predicted crossover beyond "
                   "the largest m, with intervals that count the choice of the curve family "
                   f"({DRAWS} draws of the mean curves, from summary.csv and paired.csv), up to "
                   "the reach the validation supports (docs/extrapolation.md). Not with csv; "
                   "of the test error, or with --metric brier of the Brier score (the "
                   "log-loss and the training error: refused, with why).")
@click.option("--beyond-reach", is_flag=True,
              help="With --extrapolate: look for the crossover up to the task's rows, past "
                   f"the validated reach ({REACH:g}x the largest m).")
@click.option("--metric", type=click.Choice([*METRICS, ALL]), default="error",
              show_default=True,
              help="The metric to tabulate: the test error, or another one the run measured "
                   "(its config's metrics), each with the same paired statistics; all: "
                   "every metric the runs measured side by side, per task a row per pair "
                   "and metric (with html a figure with a panel per metric) and where the "
                   "log-loss's or Brier score's winner differs from the test error's, by "
                   "m (csv: the metrics' tables one under the other, a first column "
                   "metric); the test error's report, said so, when they measured it "
                   "alone.")
@click.option("--brief", is_flag=True,
              help="Print one line per task and pair instead of the table: the winner at "
                   "the smallest and largest m, the crossover, where b stays better "
                   "(-o still writes the whole table).")
def report(results_dirs, output, fmt, n_boot, seed, notes, paper, brief,
           extrapolate, beyond_reach, metric):
    """Print a table of finished runs, one row per task and compared pair (a, b): by
    default every generative model (nb, lda, qda) against every discriminative one (lr),
    else the config's compare.

    Both models' errors at the smallest and largest m, the winner at each end (or "tie" when
    the paired 95% interval contains 0), the crossover with its bootstrap interval, and
    the asymptotic and majority-class errors; then, in Markdown, for the built-in panels,
    the comparison with the paper's Figure 1. Made from saved results only.
    """
    if fmt == "csv" and extrapolate:
        raise ConfigError("--extrapolate adds a Markdown section; use it without "
                          "--format csv")
    if beyond_reach and not extrapolate:
        raise ConfigError("--beyond-reach changes the section --extrapolate adds; give "
                          "--extrapolate too")
    if fmt == "html" and output is None:
        raise ConfigError("--format html writes a page; give its file, e.g. "
                          "-o report.html")
    if metric == ALL:
        if extrapolate:
            raise ConfigError("--extrapolate adds a section of one metric; give one --metric, "
                              "not all")
        _every_metric(results_dirs, output, fmt, n_boot, seed, notes, paper, brief)
        return
    if extrapolate:
        check_extrapolable(metric)
    rows = report_rows(results_dirs, n_boot=n_boot, seed=seed,
                       metric=metric) if brief else None
    if fmt == "html":
        from nbvslr.views.html import html_page  # matplotlib, for this format alone

        text = html_page(results_dirs, n_boot=n_boot, seed=seed, notes=notes, paper=paper,
                         extrapolate=extrapolate, beyond_reach=beyond_reach,
                         metric=metric)
        if rows is not None:
            click.echo(verdict_lines(rows), nl=False)
        results.atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)
        return
    if fmt == "csv":
        text = report_csv(results_dirs, n_boot=n_boot, seed=seed, metric=metric)
    else:
        text = report_table(results_dirs, n_boot=n_boot, seed=seed, notes=notes,
                            paper=paper, rows=rows, extrapolate=extrapolate,
                            beyond_reach=beyond_reach, metric=metric)
    click.echo(verdict_lines(rows) if rows is not None else text, nl=False)
    if output is not None:
        results.atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)



def _every_metric(results_dirs, output, fmt, n_boot, seed, notes, paper, brief) -> None:
    """``--metric all``: every metric's rows side by side, as the format asks."""
    every = every_metric(results_dirs, n_boot=n_boot, seed=seed)
    if fmt == "html":
        from nbvslr.views.html import every_metric_page  # matplotlib, for this format alone

        text = every_metric_page(every, n_boot=n_boot, seed=seed, notes=notes, paper=paper)
    elif fmt == "csv":
        text = every_metric_csv(every)
    else:
        text = every_metric_table(every, n_boot=n_boot, seed=seed, notes=notes, paper=paper)
    if brief or fmt != "html":
        click.echo(every_metric_brief(every) if brief else text, nl=False)
    if output is not None:
        results.atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)
