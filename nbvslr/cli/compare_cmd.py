"""``nbvslr compare``, the curve guard: check a new run's curves against a reference run."""

from __future__ import annotations

from pathlib import Path

import click

from nbvslr.analysis.compare import DEFAULT_ALPHA, DEFAULT_FLOOR, compare


@click.command(
    "compare",
    short_help="Check a run's curves against a reference run.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr compare results/reference results     # your run against the committed reference
  nbvslr compare results/pima new/pima --largest 20
""",
)
@click.argument("reference", type=click.Path(file_okay=False, path_type=Path))
@click.argument("new", type=click.Path(file_okay=False, path_type=Path))
@click.option("--z", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Tolerance in combined standard errors (default: Bonferroni over every "
                   "check at level --alpha).")
@click.option("--floor", type=click.FloatRange(min=0), default=DEFAULT_FLOOR,
              show_default=True, help="Added to every tolerance, in error units.")
@click.option("--alpha", type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
              default=DEFAULT_ALPHA, show_default=True,
              help="Chance of any false alarm over the whole comparison.")
@click.option("--largest", type=click.IntRange(min=0), default=10, show_default=True,
              help="Also list this many of the largest moves that stayed within the noise.")
def compare_cmd(reference, new, z, floor, alpha, largest):
    """Compare the curves of the results in NEW with those in REFERENCE.

    Both are results folders (OUT/<task>/summary.csv and paired.csv) or single task
    folders. Every size of every model must stay within its noise (z combined standard
    errors plus a floor); the winner at the smallest and largest size, and the crossover,
    must hold. Prints a table of what moved; exits 1 if anything moved beyond the noise.
    """
    report = compare(reference, new, z=z, floor=floor, alpha=alpha)
    click.echo(report.table(largest=largest))
    if not report.ok:
        raise click.exceptions.Exit(1)
