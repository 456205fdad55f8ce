"""``nbvslr sample-complexity``: m* of NB and LR as the number of features grows."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nbvslr.data.dataset import DataSettings
from nbvslr.runner.progress import progress_for
from nbvslr.studies.sample_complexity import analyse, describe, load_study, run_study


@click.command(
    "sample-complexity",
    short_help="Run a study of m* (NB and LR) as n grows.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr sample-complexity studies/sample-complexity.yaml
  nbvslr sample-complexity studies/sample-complexity.yaml --splits 10 --out /tmp/quick
""",
)
@click.argument("study_file", metavar="STUDY", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--splits", type=click.IntRange(min=1), default=None, metavar="N",
              help="Random splits per task and size (overrides the file).")
@click.option("--jobs", "-j", type=int, default=-1, show_default=True, metavar="N",
              help="Parallel workers; -1 uses every core. Results do not depend on it.")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results/studies/sample-complexity"), show_default=True,
              help="Study folder: m_star.csv, m_star_fixed_separation.csv, fits.csv, "
                   "tasks.csv, m_star.png, study.json; the runs in OUT/runs/<task>/. "
                   "(The committed study is results/sample-complexity.)")
@click.option("--force", is_flag=True,
              help="Recompute every size, ignoring checkpoints of an earlier run.")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress: no bar on a terminal, no progress lines in a log.")
@click.option("--draw-only", is_flag=True,
              help="Run nothing: recompute the tables and the figure from the saved runs "
                   "(study.json is left as the last run wrote it).")
def sample_complexity(study_file, splits, jobs, out, force, quiet, draw_only):
    """Run a sample-complexity STUDY and write m* of each model against n.

    For every task (one per swept number of features n), model and delta: m*, the smallest
    training-set size whose mean test error is within delta of the model's asymptotic error,
    with a bootstrap interval over the splits; then least-squares fits of m* against log n
    and n, a figure and the tables. Finished sizes are checkpointed: rerunning resumes.
    """
    study = load_study(study_file, splits=splits, out=out, jobs=jobs, force=force,
                       data=DataSettings(download=False))
    if draw_only:
        tables = analyse(out, [t.name for t in study.config.tasks], study.deltas,
                         n_boot=study.n_boot, level=study.level, seed=study.seed)
    else:
        tables = run_study(study, progress=progress_for(sys.stderr, quiet=quiet))
    click.echo(describe(tables, study.deltas[0]))
    click.echo(f"{study_file}: results in {out}")
