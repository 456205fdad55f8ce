"""``nbvslr run``: run the experiments of one or more config files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nbvslr.catalog import resolve_config
from nbvslr.cli.data_options import data_options, data_settings
from nbvslr.config import CLI_JOBS, DEFAULT_BACKEND, load_config
from nbvslr.progress import progress_for
from nbvslr.results import DEFAULT_OUT, task_dir
from nbvslr.runner import run_experiment

INTERRUPTED = 130
"""Exit code of a run stopped by Ctrl-C (SIGINT), as a shell reports it."""


@click.command(
    "run",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr run synthetic                         # a shipped config, by name
  nbvslr run configs/pima.yaml --jobs 2        # a config file
  nbvslr run configs/figure1.yaml --splits 100 --out results/quick
  nbvslr run configs/pima.yaml --backend dask --scheduler tcp://10.0.0.5:8786
""",
)
@click.argument(
    "configs", nargs=-1, required=True, metavar="CONFIG...",
)
@click.option("--splits", type=click.IntRange(min=1), default=None, metavar="N",
              help="Random train/test splits per training-set size (overrides the config; "
                   "the paper uses 1000).")
@click.option("--seed", type=click.IntRange(min=0), default=None, metavar="N",
              help="Base seed of every random draw (overrides the config's seed, default 0).")
@click.option("--jobs", "-j", type=int, default=CLI_JOBS, show_default=True, metavar="N",
              help="Parallel workers; -1 uses every core. Results do not depend on it.")
@click.option("--backend", default=DEFAULT_BACKEND, show_default=True, metavar="NAME",
              help="joblib backend: loky, threading, multiprocessing, sequential or dask "
                   "(with --scheduler, or else a local dask cluster of --jobs workers).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Dask scheduler to run on (with --backend dask); its workers must see "
                   "the config's CSV files, the cache and the mirror at the same paths.")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_OUT, show_default=True,
              help="Results folder; each task writes to OUT/<task>/.")
@click.option("--force", is_flag=True,
              help="Recompute every size, ignoring checkpoints of an earlier run.")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress: no bar on a terminal, no progress lines in a log.")
@data_options
def run(configs, splits, seed, jobs, backend, scheduler, out, force, quiet, mirror, cache, offline,
        fresh, timeout):
    """Run the learning-curve experiments of each CONFIG, in turn: a config file, or the
    name of a config shipped with nbvslr (`nbvslr configs` lists them).

    For every task, training-set size m and split, a random training set of m rows (both
    classes present) is drawn, every model is fitted on it and tested on all other rows.
    Results go to OUT/<task>/: splits.csv.gz, summary.csv, paired.csv, run.json and
    curve.png. Finished sizes are checkpointed: rerunning an interrupted run with the same
    config picks up where it stopped and ends with the same files.

    Every config file is read and checked before the first one runs.
    """
    data = data_settings(mirror, cache, offline, fresh, timeout)
    settings = dict(splits=splits, seed=seed, data=data, out=out, jobs=jobs,
                    backend=backend, scheduler=scheduler, force=force)
    try:
        loaded = [load_config(resolve_config(arg), **settings) for arg in configs]
        for arg, config in zip(configs, loaded, strict=True):
            done = run_experiment(config, progress=progress_for(sys.stderr, quiet=quiet))
            for name in done:
                click.echo(f"{arg}: {name}: results in {task_dir(config.out, name)}")
    except KeyboardInterrupt:
        click.echo(
            f"interrupted: the finished sizes are kept in {out}/<task>/.checkpoints; "
            "rerun the same command to resume",
            err=True,
        )
        sys.exit(INTERRUPTED)
