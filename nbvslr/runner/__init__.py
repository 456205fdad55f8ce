"""Run an experiment: every (task, m, block of splits) through joblib, results streamed.

``run_experiment(config)`` is the whole pipeline below the CLI:

1. load every task in this process and check the sizes against its rows, before any fit
   (``bookkeeping``);
2. lock the task folders (``nbvslr.results.lock``: a second run on one is refused), drop
   stale checkpoints, check the others, skip the sizes already done (``bookkeeping``);
3. send work units (``units``) to a parallel backend (``backends``; results arrive as they
   finish);
4. save a checkpoint when the last block of a size arrives, and the task's files when its
   last size does (``bookkeeping``, through ``nbvslr.results``).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import pandas as pd

from nbvslr import results
from nbvslr.config import Config
from nbvslr.errors import raise_if_stopped
from nbvslr.runner.backends import n_workers, unit_stream
from nbvslr.runner.bookkeeping import collect, finish, memory_plan, prepare, unit_splits, work_units
from nbvslr.runner.outputs import Written
from nbvslr.runner.progress import NoProgress, Progress, TaskPlan
from nbvslr.runner.units import FULL, Unit
from nbvslr.runner.warm import ensure_compiled, groups_for

__all__ = ["check_experiment", "run_experiment", "run_tasks"]


def check_experiment(config: Config) -> None:
    """What ``run_experiment`` checks before its first fit, alone: every task loads, every
    size leaves a test row, the memory plan fits. Raises as ``run_experiment`` would; a
    dataset loaded here is not loaded again by the run (the per-process cache)."""
    memory_plan(config, prepare(config))


def _task_plan(task: Any, units: list[Unit], config: Config) -> TaskPlan:
    """What the progress display is told of a task: its sizes, and its units for the
    time left."""
    name = task.spec.name
    return TaskPlan(name, len(task.grid), len(task.skipped), config.splits,
                    units=tuple((u.m, u.stop - u.start) for u in units
                                if u.task.name == name and u.m != FULL),
                    features=task.data.n_features)


def run_experiment(config: Config, progress: Progress | None = None) -> dict[str, pd.DataFrame]:
    """Run every task of ``config``; return ``{task: splits table}``, files written.

    The splits table has one row per (model, m, split) with columns
    ``results.SPLIT_COLUMNS``. Raises ``SizeError`` (a size leaves no test row) or
    ``DataError`` before any model is fitted.
    """
    return {t.name: t.table for t in run_tasks(config, progress)}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_tasks(config: Config, progress: Progress | None = None) -> list[Written]:
    """Run every task of ``config``; return each task's tables (``outputs.Written``: its
    splits, summary, paired rows and run.json), in config order.

    With ``config.out`` a folder, every task's files are written there, finished sizes are
    checkpointed and a rerun resumes; with ``config.out`` None nothing is written (no
    folder, no checkpoint, no lock) and every size is computed.
    """
    progress = progress if progress is not None else NoProgress()
    started = time.perf_counter()
    raise_if_stopped()
    tasks = prepare(config)
    memory_plan(config, tasks)  # refused here if it would not fit
    for task in tasks:  # once per run, whatever the progress shown (run.json keeps them)
        for line in task.warnings:
            _say(f"warning: {line}")
    # a machine's first run compiles the loops here, once, before any worker starts
    ensure_compiled(None if isinstance(progress, NoProgress) else _say,
                    groups_for((t.data.kind, t.data.multiclass) for t in tasks))
    by_name = {t.spec.name: t for t in tasks}
    out: dict[str, Written] = {}
    # One run at a time per task folder: refused here if another run holds one of them.
    folders = [t.folder for t in tasks] if config.out is not None else []
    with results.TaskLocks(folders) as locks:
        units = list(work_units(config, tasks))
        for task in tasks:  # a rerun with other settings: said, never silent
            if task.dropped:
                _say(f"note: {task.spec.name}: the {task.dropped} finished size"
                     f"{'s' if task.dropped != 1 else ''} in {task.folder} were made with other "
                     "settings and are recomputed; its files are replaced when this run "
                     "finishes (--out another folder keeps them)")
        with unit_stream(config, units) as stream:  # a dask client is started here
            progress.start([_task_plan(t, units, config) for t in tasks],
                           workers=n_workers(config.jobs))
            try:
                for result in stream:
                    raise_if_stopped()
                    task = by_name[result.task]
                    locks.check(task.folder)  # its .lock is still this run's
                    size_finished = collect(task, result, config)
                    if result.m != FULL:
                        progress.splits_done(result.task, result.m, unit_splits(result),
                                             result.seconds)
                    if size_finished:
                        progress.size_done(result.task, result.m)
                    if task.remaining == 0:
                        out[task.spec.name] = finish(config, task, started)
                        progress.task_done(task.spec.name,
                                           time.perf_counter() - (task.began or started))
            finally:
                progress.finish()
    return [out[t.spec.name] for t in tasks]
