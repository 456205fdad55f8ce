"""``nbvslr run``: run the experiments of one or more config files."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from nbvslr import api
from nbvslr.api import check_out
from nbvslr.cli.data_options import MAX_DOWNLOAD_OPTION, data_options, data_settings
from nbvslr.config import CLI_JOBS, DEFAULT_BACKEND
from nbvslr.errors import ConfigError, stop_on_signal, stop_on_sigterm, stopped
from nbvslr.results import DEFAULT_OUT, task_dir
from nbvslr.runner import check_experiment
from nbvslr.runner.progress import progress_for


def _one_folder_each(args, loaded, out) -> None:
    """ConfigError when two configs of one command name the same task: both would write
    OUT/<task>, and the second would replace the first's results."""
    first: dict[str, str] = {}
    for arg, config in zip(args, loaded, strict=True):
        for spec in config.tasks:
            if spec.name in first:
                raise ConfigError(
                    f"{arg}: task {spec.name!r} is also in {first[spec.name]}, and both would "
                    f"write {task_dir(out, spec.name)}; run them one at a time with different "
                    "--out folders, or give one of the tasks another name")
            first[spec.name] = arg


@contextmanager
def _sigterm_stops_the_run() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` in the run (``nbvslr.__main__`` sets this for the whole
    command; this covers a run invoked otherwise, as by click's test runner)."""
    if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGTERM) is stop_on_signal):  # the command's own
        yield
        return
    previous = signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _RunCommand(click.Command):
    """``run``, whose help ends with every model option (from the options tables, imported
    when the help is shown)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        from nbvslr.models.registry import options_help, text_features_help

        with formatter.section("Model options (per model in a config; docs/options.md)"):
            formatter.write_dl(options_help())
        with formatter.section("Text task options (features: {kind: text, ...}; docs/text.md)"):
            formatter.write_dl(text_features_help())


@click.command(
    "run",
    cls=_RunCommand,
    short_help="Run the learning-curve experiments of each config.",
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
              help="joblib backend: loky, threading, sequential or dask "
                   "(with --scheduler, or else a local dask cluster of --jobs workers).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Dask scheduler to run on (with --backend dask); its workers must see "
                   "the config's CSV files, the cache and the mirror at the same paths.")
@click.option("--out", "-o", default=str(DEFAULT_OUT), show_default=True, metavar="FOLDER",
              help="Results folder; each task writes to OUT/<task>/.")
@click.option("--force", is_flag=True,
              help="Recompute every size, ignoring checkpoints of an earlier run.")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress: no bar on a terminal, no progress lines in a log.")
@data_options
@MAX_DOWNLOAD_OPTION
def run(configs, splits, seed, jobs, backend, scheduler, out, force, quiet, mirror, cache, offline,
        fresh, timeout, max_download):
    """Run the learning-curve experiments of each CONFIG, in turn: a config file, or the
    name of a config shipped with nbvslr (`nbvslr configs` lists them).

    For every task, training-set size m and split, a random training set of m rows (every
    class present) is drawn, every model is fitted on it and tested on all other rows.
    Results go to OUT/<task>/: splits.csv.gz, summary.csv, paired.csv, run.json and
    curve.png. Finished sizes are checkpointed: rerunning an interrupted run with the same
    config picks up where it stopped and ends with the same files.

    Every config file is read and checked, and every task's data loaded, before the first
    one runs.
    """
    out = check_out(out)
    data = data_settings(mirror, cache, offline, fresh, timeout, max_download)
    settings = dict(splits=splits, seed=seed, data=data, out=out, jobs=jobs,
                    backend=backend, scheduler=scheduler, force=force)
    loaded = []
    try:
        with _sigterm_stops_the_run():
            loaded = [api.read_config(arg, **settings) for arg in configs]
            _one_folder_each(configs, loaded, out)
            if len(loaded) > 1:  # the data of every config, before the first one runs
                for config in loaded:
                    check_experiment(config)
            for arg, config in zip(configs, loaded, strict=True):
                done = api.run(config, out=out,
                               progress=progress_for(sys.stderr, quiet=quiet)).names
                for name in done:
                    where = name if arg == name else f"{arg}: {name}"  # `nbvslr run pima`
                    click.echo(f"{where}: results in {task_dir(config.out, name)}")
    except KeyboardInterrupt as exc:
        what, code = stopped(exc)
        names = {spec.name for config in loaded for spec in config.tasks}
        if not any(any((Path(out) / name / ".checkpoints").glob("m=*.csv.gz"))
                   for name in names):
            # stopped while reading configs, loading data (a download) or starting the
            # workers, before any size was saved: nothing was kept
            click.echo(f"{what} before any size was computed: nothing was kept; rerun the "
                       "same command to start", err=True)
            sys.exit(code)
        task = names.pop() if len(names) == 1 else "<task>"
        click.echo(
            f"{what}: the finished sizes are kept in {Path(out) / task / '.checkpoints'}; "
            "rerun the same command to resume",
            err=True,
        )
        sys.exit(code)
