"""Run bookkeeping in the calling process: which units a task needs, what a checkpoint
depends on (the fingerprint, with a digest of the code), collecting results as they
arrive, and each task's run.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info

import nbvslr.runner.memory as memory
from nbvslr import results
from nbvslr.analysis.metrics import no_probabilities
from nbvslr.config import Config
from nbvslr.data.dataset import Dataset, TaskSpec
from nbvslr.errors import DataError, ResultsError
from nbvslr.models.lr.separation import NAMES, NOT_ASSESSED
from nbvslr.models.registry import lookup
from nbvslr.results.checkpoints import first_bad_error
from nbvslr.runner.backends import n_workers
from nbvslr.runner.outputs import Written, task_tables, write_tables
from nbvslr.runner.units import FULL, Unit, UnitResult, data_digest, loaded, plain, portable
from nbvslr.splits import check_size
from nbvslr.version import __version__


@dataclass
class _Task:
    """Bookkeeping of one task in the calling process."""

    spec: TaskSpec
    grid: tuple[int, ...]
    data: Dataset
    digest: str  # data_digest(data): every unit's worker checks its data against it
    folder: Path
    checkpoints: results.Checkpoints | results.MemoryCheckpoints
    todo: dict[int, int]  # m -> blocks still to come
    blocks: dict[int, list[UnitResult]]
    full: dict[str, float] | None = None
    full_brier: dict[str, dict] | None = None  # run.json's asymptotic_brier
    seconds: dict[int, float] | None = None
    skipped: tuple[int, ...] = ()
    remaining: int = 0  # units still to come
    plan: memory.Plan | None = None
    began: float | None = None  # perf_counter when its first unit started, as far as known
    warnings: tuple[str, ...] = ()  # said once on stderr when the run starts; in run.json
    dropped: int = 0  # finished sizes of an earlier run with other settings, recomputed


def _check_sizes(config: Config, spec: TaskSpec, grid: tuple[int, ...], data: Dataset) -> None:
    n, pos = data.n_rows, data.n_positive
    if data.multiclass:
        counts = np.bincount(data.y, minlength=data.n_classes)
        if (counts == 0).any():
            raise DataError(
                f"{spec.name}: class {data.classes[int(np.argmin(counts))]!r} has no row; "
                "check the task's target"
            )
    elif pos == 0 or pos == n:
        raise DataError(
            f"{spec.name}: the data has only one class ({pos} positives in {n} rows); "
            "check the task's target"
        )
    for m in grid:
        check_size(m, n, spec.name, config.source, data.n_classes)
    for model in config.models:  # each model has a fit for the task's kind and classes
        lookup(model.family, data.kind, data.multiclass, model=model.name, task=spec.name,
               source=config.source)
    options = data.text_options or {}
    min_df = int(options.get("min_df", 1))
    if options.get("vocabulary") == "training" and min(grid) < min_df:
        # a split's words are those in min_df of its m training documents: none when m < min_df
        raise DataError(
            f"{spec.name}: features.min_df = {min_df} keeps no word at m = {min(grid)} (a word "
            f"is in at most m training documents); use sizes of at least {min_df}, a lower "
            "min_df, or vocabulary: all"
        )


def _binary_class(data: Dataset, k: int) -> str:
    """Class ``k`` of a binary task as a message names it: ``the positive class ('1')`` (its
    values, as the recipe's notes list them)."""
    side = "positive" if k == 1 else "negative"
    values = data.notes.get(side)
    named = (f" ({', '.join(repr(str(v)) for v in values)})"
             if isinstance(values, list | tuple) and values else "")
    return f"the {side} class{named}"


def single_row_classes(name: str, data: Dataset) -> str | None:
    """The one line saying which classes have a single row (document), or None. Every
    training set holds one row of each class (``nbvslr.splits``), so such a row is in every
    training set and never in a test set: the test errors are those of the other classes.
    Said, not refused: the run and its numbers are as without the line."""
    counts = np.bincount(data.y, minlength=data.n_classes)
    single = [int(k) for k in np.flatnonzero(counts == 1)]
    if not single:
        return None
    row = "document" if data.kind == "text" else "row"
    if not data.multiclass:
        what, other = _binary_class(data, single[0]), "other class"
    else:
        quoted = [repr(data.classes[k]) for k in single]
        what = (f"class {quoted[0]}" if len(quoted) == 1
                else f"classes {', '.join(quoted[:-1])} and {quoted[-1]}")
        other = "other classes"
    one = len(single) == 1
    return (f"{name}: {what} {'has a single ' + row if one else f'have a single {row} each'}"
            f", which every training set holds (one {row} of each class), so "
            f"{'it is' if one else 'they are'} never tested and the test errors are those of "
            f"the {other}; add {row}s of {'that class' if one else 'those classes'} to test "
            f"{'it' if one else 'them'}")


def code_digest() -> str:
    """sha256 of the source of the modules that decide a result (data, splits, models).

    In the checkpoint fingerprint: a rerun after the code changed recomputes every size
    rather than mixing results of two versions of the code.
    """
    root = Path(__file__).resolve().parent.parent  # the nbvslr package
    h = hashlib.sha256()
    files = [root / "splits.py", *sorted((root / "kernels").glob("*.py")),
             *sorted((root / "models").rglob("*.py")), *sorted((root / "data").rglob("*.py"))]
    for path in files:  # sub-packages too: the family folders, the registry of sources
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def fingerprint(config: Config, spec: TaskSpec, grid: tuple[int, ...], data: Dataset,
                digest: str | None = None) -> str:
    """What a checkpoint of this task depends on (not jobs, backend, block or other sizes);
    ``digest`` is ``data_digest(data)`` when already known."""
    blob = {
        "version": __version__,
        "code": code_digest(),
        "task": plain(spec.__dict__),
        "data": digest if digest is not None else data_digest(data),
        "splits": config.splits,
        "seed": config.seed,
        "models": [[m.name, m.family, plain(dict(m.options))] for m in config.models],
        "nested_min": min(grid) if config.nested else None,
        # only when asked: the default's fingerprint is the one it always was
        **({"metrics": list(config.metrics)} if config.metrics != ("error",) else {}),
    }
    text = json.dumps(blob, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def prepare(config: Config) -> list[_Task]:
    tasks = []
    for spec, grid in zip(config.tasks, config.grids, strict=True):
        data, digest = loaded(*portable(spec, config.data))
        _check_sizes(config, spec, grid, data)
        if config.out is None:  # nothing written: sizes kept in memory, none resumed
            folder = Path(spec.name)  # names the task in messages
            checkpoints: results.Checkpoints | results.MemoryCheckpoints = (
                results.MemoryCheckpoints())
        else:
            folder = results.task_dir(config.out, spec.name)
            expected = results.Expected(
                spec.name, tuple((m.name, m.family) for m in config.models), config.splits,
                config.metrics)
            checkpoints = results.Checkpoints(
                folder, fingerprint(config, spec, grid, data, digest), expected)
        said = single_row_classes(spec.name, data)
        # what the data layer kept on the user's insistence (many_levels: allow)
        kept = tuple(str(line) for line in data.notes.get("warnings", ()))
        tasks.append(_Task(spec, grid, data, digest, folder, checkpoints, {},
                           defaultdict(list), warnings=((said,) if said else ()) + kept))
    return tasks


def memory_plan(config: Config, tasks: list[_Task], budget: float | None = None) -> memory.Plan:
    """The run's memory estimate (``nbvslr.runner.memory``); ``ConfigError`` if it would not
    fit in ``budget`` (default: this machine's memory)."""
    shapes = [memory.task_shape(t.spec.name, t.data, t.grid, config.models) for t in tasks]
    local = config.backend == "loky" or (config.backend == "dask" and not config.scheduler)
    workers = n_workers(config.jobs)
    plan = memory.plan(
        shapes, splits=config.splits, block=config.block, workers=workers if local else 0,
        threads=workers if config.backend == "threading" else 1,
        budget=memory.machine_bytes() if budget is None else budget,
    )
    for task in tasks:
        task.plan = plan
    return plan


def work_units(config: Config, tasks: list[_Task]) -> Iterator[Unit]:
    """The units still to do. Every task's checkpoints are prepared and checked first, so a
    damaged one is reported before any size is computed."""
    for task in tasks:
        task.dropped = task.checkpoints.prepare(force=config.force)
        task.checkpoints.check(sorted(task.checkpoints.done() & set(task.grid)))
    pid = os.getpid()
    for task in tasks:
        done = task.checkpoints.done()
        task.skipped = tuple(m for m in task.grid if m in done)
        task.seconds = {}
        nested_min = min(task.grid) if config.nested else None
        spec, settings = portable(task.spec, config.data)
        common = dict(task=spec, data=settings, models=config.models, seed=config.seed,
                      digest=task.digest, metrics=config.metrics)
        yield Unit(**common, m=FULL, parent_pid=pid)
        task.remaining += 1
        for m in task.grid:
            if m in done:
                continue
            starts = range(0, config.splits, config.block)
            task.todo[m] = len(starts)
            for start in starts:
                stop = min(start + config.block, config.splits)
                yield Unit(**common, m=m, start=start, stop=stop, nested_min=nested_min,
                           parent_pid=pid)
                task.remaining += 1


# --------------------------------------------------------------------------- collection


#: The splits table's ``separation`` of each code of ``models.lr.separation``, by code + 1.
SEPARATION_NAMES = np.array([NAMES[c] for c in range(NOT_ASSESSED, len(NAMES) - 1)],
                            dtype=object)


def _size_rows(results: list[UnitResult], config: Config) -> pd.DataFrame:
    """The rows of one size's blocks: per block, each model's splits in order (the file
    order comes from ``sort_splits`` when the checkpoint is written). One frame from whole
    columns, not one per block and model."""
    metrics = config.metrics
    parts: dict[str, list[np.ndarray]] = {k: [] for k in
                                          ("model", "family", "split", *metrics, "separable",
                                           "separation", "n_iter", "converged")}
    for result in results:
        n = unit_splits(result)
        splits = np.arange(result.start, result.start + n)
        for spec in config.models:
            out = result.rows[spec.name]
            parts["model"].append(np.full(n, spec.name, dtype=object))
            parts["family"].append(np.full(n, spec.family, dtype=object))
            parts["split"].append(splits)
            for key in metrics:
                parts[key].append(np.asarray(out[key], dtype=np.float64))
            parts["separable"].append(np.asarray(out["separable"], dtype=bool))
            parts["separation"].append(SEPARATION_NAMES[np.asarray(out["separation"]) + 1])
            parts["n_iter"].append(np.asarray(out["n_iter"], dtype=np.int64))
            parts["converged"].append(np.asarray(out["converged"], dtype=bool))
    columns = {k: np.concatenate(v) for k, v in parts.items()}
    rows = len(columns["split"])
    return pd.DataFrame({
        "task": np.full(rows, results[0].task, dtype=object),
        "model": columns["model"],
        "family": columns["family"],
        "m": np.full(rows, results[0].m, dtype=np.int64),
        "split": columns["split"],
        **{key: columns[key] for key in metrics},
        "separable": columns["separable"],
        "separation": columns["separation"],
        "n_iter": columns["n_iter"],
        "converged": columns["converged"],
    })


def unit_splits(result: UnitResult) -> int:
    first = next(iter(result.rows.values()))
    return int(np.asarray(first["error"]).shape[0])


def collect(task: _Task, result: UnitResult, config: Config) -> bool:
    """Keep a unit's result; True when it was the last block of its size."""
    task.remaining -= 1
    # The unit began about `seconds` before it arrived (its worker's time to load the data
    # and to send the result back is not counted).
    began = time.perf_counter() - result.seconds
    task.began = began if task.began is None else min(task.began, began)
    if result.m == FULL:
        task.full = result.full
        task.full_brier = result.full_brier
        return False
    task.blocks[result.m].append(result)
    task.seconds[result.m] = task.seconds.get(result.m, 0.0) + result.seconds
    task.todo[result.m] -= 1
    if task.todo[result.m] == 0:
        frame = _size_rows(task.blocks.pop(result.m), config)
        check_errors(frame, task.spec.name, result.m)
        task.checkpoints.save(result.m, frame)
        return True
    return False


def check_errors(frame: pd.DataFrame, task: str, m: int) -> None:
    """Refuse a size whose rows hold a test error outside [0, 1] (NaN included) before it is
    checkpointed: a fault of a model's code, not of the input, which would otherwise be
    kept and refused as a corrupt checkpoint on the next run. The sizes already finished
    stay kept."""
    error = frame["error"].to_numpy(dtype=np.float64)
    i = first_bad_error(error)
    if i is not None:
        raise ResultsError(
            f"{task}: model {frame['model'].iloc[i]} gave the test error {error[i]} at m = {m} "
            f"(split {frame['split'].iloc[i]}), not in [0, 1]; nothing of m = {m} was kept. "
            "This is a fault in nbvslr: please report it with the config")


def _run_info(config: Config, task: _Task, started: float) -> dict[str, Any]:
    data = task.data
    n, pos = data.n_rows, data.n_positive
    return {
        "task": {
            "name": task.spec.name,
            "title": data.title,
            "kind": data.kind,
            "rows": n,
            "features": data.n_features,
            "positives": None if data.multiclass else pos,
            **({"classes": list(data.classes),
                "class_counts": np.bincount(data.y, minlength=data.n_classes).tolist()}
               if data.multiclass else {}),
            "x_range": list(data.x_range) if data.x_range is not None else None,
            "sizes": list(task.grid),
            "paper_sizes": list(data.sizes) if data.sizes is not None else None,
            "recipe": plain(dict(data.notes)),
        },
        "config": config.to_dict(),
        "seed": config.seed,
        "splits": config.splits,
        "models": [
            {"name": m.name, "family": m.family, "options": plain(dict(m.options))}
            for m in config.models
        ],
        "asymptotic_error": task.full,
        # the all-rows fit's Brier score, when the run measures it (the floor of its
        # extrapolation: analysis.extrapolate.floor_of_brier)
        **({"asymptotic_brier": task.full_brier} if "brier" in config.metrics else {}),
        "majority_error": (1.0 - np.bincount(data.y).max() / n if data.multiclass
                           else min(pos, n - pos) / n),
        "execution": {"jobs": config.jobs, "backend": config.backend, "block": config.block,
                      "scheduler": config.scheduler},
        "memory": task.plan.to_dict() if task.plan is not None else None,
        "timings": {
            # The task's own time: from its first piece of work to its files (tasks
            # overlap a little in a run of several); the run's clock when it finished.
            "wall_seconds": round(time.perf_counter() - (task.began or started), 3),
            "run_seconds_at_finish": round(time.perf_counter() - started, 3),
            "fit_seconds_by_m": {str(m): round(s, 3) for m, s in sorted(task.seconds.items())},
            "resumed_sizes": list(task.skipped),
        },
        "versions": _versions(),
        "machine": machine_info(),
        **({"warnings": list(task.warnings)} if task.warnings else {}),
    }


def machine_info() -> dict[str, Any]:
    """What the numbers may depend on beyond the code and the seeds: the CPU, the BLAS
    libraries the fits call (name, version, kernel architecture: numpy's, and scipy's,
    which the compiled loops and the text fits call) and numpy's version.

    The same list whatever this process did before: scipy's BLAS is loaded here if no
    import has loaded it yet (the models import scipy, so a run has), and the libraries are
    listed in a fixed order, not in the order they were loaded (which compiling the loops
    changes)."""
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS; already imported by the models)

    blas = sorted(
        ({key: lib.get(key) for key in ("internal_api", "version", "architecture", "prefix")}
         for lib in threadpool_info() if lib.get("user_api") == "blas"),
        key=lambda lib: json.dumps(lib, sort_keys=True, default=str))
    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "blas": blas,
    }


def _cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux, else what ``platform`` knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _versions() -> dict[str, str]:
    out = {"nbvslr": __version__}
    for pkg in ("numpy", "pandas", "joblib", "threadpoolctl", "pyyaml", "matplotlib"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def finish(config: Config, task: _Task, started: float) -> Written:
    """The tables of a task whose last size arrived, its files written unless the run
    writes nothing (``config.out`` None)."""
    splits, text = task.checkpoints.load_csv(task.grid)
    info = _run_info(config, task, started)
    if "log_loss" in config.metrics or "brier" in config.metrics:
        # the splits without class probabilities, and why (NaN in the table)
        info["no_probabilities"] = no_probabilities(splits)
    tables = task_tables(task.folder, splits, info, config.pairs, splits_csv=text)
    if config.out is not None:
        write_tables(tables)
    return tables
