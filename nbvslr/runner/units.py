"""Work units: one (task, m, range of splits) or the fit on all rows, done in a worker.

A unit is the TaskSpec, the DataSettings, the models, a range of split indices and the
sha256 of the data the run fingerprinted (``data_digest``), never arrays: each worker loads
the dataset itself, once per process, checks that it is the data of that sha256 (a CSV
replaced during the run is refused, in every backend, rather than fitted under the old
file's fingerprint) and draws its own splits from the seeds, so the results do not depend on
the number of workers, the backend, the block size, or which sizes were resumed.

BLAS runs one thread per worker (``threadpoolctl``): ``jobs x 1 <= cores`` and, as a
single-threaded BLAS always sums in the same order, the same numbers whatever ``--jobs``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import nbvslr.runner.lifeline as lifeline
from nbvslr import models
from nbvslr.data import absolute_paths, csvsource, load_task
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.sources import is_url, sha256_of
from nbvslr.data.textfolder import folder_sha256
from nbvslr.errors import DataError
from nbvslr.models.spec import ModelSpec
from nbvslr.results.layout import DEFAULT_METRICS
from nbvslr.splits import draw_train_sets, full_seed, nested_train_sets, split_seeds

BLAS_THREADS = 1
FULL = 0
"""The ``m`` of a unit that fits on all rows (the asymptotic error)."""


@dataclass(frozen=True)
class Unit:
    """One piece of work: splits ``start .. stop - 1`` of (task, m), or the full fit.

    Carries settings only; the worker loads the data and draws the splits.
    """

    task: TaskSpec
    data: DataSettings
    models: tuple[ModelSpec, ...]
    seed: int
    m: int  # FULL (0) = train and test on all rows
    start: int = 0
    stop: int = 0
    nested_min: int | None = None  # the grid's smallest size, in nested mode
    parent_pid: int = 0
    digest: str | None = None  # data_digest of the data the run fingerprinted
    metrics: tuple[str, ...] = DEFAULT_METRICS  # what score_splits measures of each split


@dataclass(frozen=True)
class UnitResult:
    task: str
    m: int
    start: int
    rows: dict[str, dict[str, np.ndarray]] | None  # model -> score_splits output
    full: dict[str, float] | None  # model -> error on all rows (FULL units)
    seconds: float
    #: model -> the Brier score on all rows (FULL units of a run measuring it:
    #: ``models.full_scores``' ``brier``)
    full_brier: dict[str, dict] | None = None


_CACHE: dict[str, tuple[Dataset, str, str | None]] = {}
"""The per-process copies: task and settings -> (data, its ``data_digest``, the
``content_sha256`` of its source when it was read)."""
_CACHE_LOCK = threading.Lock()
_BLAS_SET = False


def _cache_key(spec: TaskSpec, settings: DataSettings) -> str:
    blob = {"task": plain(spec.__dict__), "data": plain(settings.__dict__)}
    return json.dumps(blob, sort_keys=True, default=str)


def content_sha256(spec: TaskSpec) -> str | None:
    """sha256 of the local file or folder ``spec`` reads (``source.csv``, ``source.folder``);
    ``None`` for any other source (a built-in file is verified against its known sha256, a
    DataFrame's text is in its key already) and for a path the load refuses (never read)."""
    source = spec.source if hasattr(spec.source, "get") else {}
    csv, folder = source.get("csv"), source.get("folder")
    if isinstance(csv, str):
        path = Path(csv).expanduser()
        try:
            if not path.is_file() or not csvsource.fits_in_memory(path.stat().st_size):
                return None  # the load refuses it, from its kind or its size
            return sha256_of(path)
        except OSError:
            return None
    if isinstance(folder, str):
        return folder_sha256(folder)
    return None


def plain(obj: Any) -> Any:
    if isinstance(obj, dict) or hasattr(obj, "items"):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    return obj


def data_digest(data: Dataset) -> str:
    """sha256 of the task's arrays: checkpoints of other data are never reused, and a worker
    never fits data other than the data the run fingerprinted."""
    h = hashlib.sha256()
    X = data.X
    # a text task's sparse counts: their csr arrays (sorted indices, duplicates summed)
    arrays = (X.data, X.indices, X.indptr) if data.kind == "text" else (X,)
    if data.kind == "text":
        h.update(f"csr{X.shape}".encode())
    for arr in (*arrays, data.y):
        arr = np.ascontiguousarray(arr)
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.tobytes())
    h.update(f"{data.kind}{tuple(data.n_values)}".encode())
    return h.hexdigest()


def dataset_for(spec: TaskSpec, settings: DataSettings, digest: str | None = None) -> Dataset:
    """The task's data, loaded once per process (shared by the threads of a process).

    With ``digest`` (the ``data_digest`` the run fingerprinted), the data must be that data:
    a copy cached from an earlier run is loaded again once, and data that still differs (the
    file was replaced since the run read it) raises ``DataError``.
    """
    return loaded(spec, settings, digest)[0]


def loaded(spec: TaskSpec, settings: DataSettings,
           digest: str | None = None) -> tuple[Dataset, str]:
    """``dataset_for``'s data and its ``data_digest`` (computed once per load).

    The copy kept for the process is keyed by content: without ``digest`` (a run starting,
    which fingerprints what it reads) a local source whose bytes changed since the copy was
    made (a CSV or text folder edited between two runs of one process) is read again; with
    ``digest`` the copy is used only if it is that data.
    """
    key = _cache_key(spec, settings)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            stale = (cached[1] != digest if digest is not None
                     else cached[2] != content_sha256(spec))
            if stale:  # an earlier version of the file: read it again
                del _CACHE[key]
        if key not in _CACHE:
            content = content_sha256(spec)  # before the read: a later edit is seen next time
            data = load_task(spec, settings)
            _CACHE[key] = (data, data_digest(data), content)
        data, found, _ = _CACHE[key]
    if digest is not None and found != digest:
        raise DataError(
            f"{spec.name}: {_where(spec)} changed during the run (its data's sha256 is not "
            f"the one the run fingerprinted when it started); nothing of it was fitted: run "
            f"again once the data no longer changes")
    return data, found


def _where(spec: TaskSpec) -> str:
    source = spec.source or {}
    csv = source.get("csv") if hasattr(source, "get") else None
    return f"the data file {csv}" if isinstance(csv, str) else "the task's data"


def _limit_blas(unit: Unit) -> None:
    # In a worker process (loky, multiprocessing, dask): one BLAS thread for its lifetime.
    # In the calling process (sequential, threading) run_experiment holds the limit.
    # A worker process also ends soon after the run's process dies (lifeline).
    global _BLAS_SET
    if os.getpid() != unit.parent_pid and not _BLAS_SET:
        threadpool_limits(limits=BLAS_THREADS)
        lifeline.watch_parent()
        _BLAS_SET = True


def train_sets(unit: Unit, y: np.ndarray) -> np.ndarray:
    """The unit's training sets, ndarray of shape (stop - start, m)."""
    draw, _ = split_seeds(
        unit.seed, unit.task.name, unit.m, range(unit.start, unit.stop),
        nested=unit.nested_min is not None,
    )
    if unit.nested_min is not None:
        return nested_train_sets(y, unit.m, unit.nested_min, draw)
    return draw_train_sets(y, unit.m, draw)


def run_unit(unit: Unit) -> UnitResult:
    """Do one unit of work (in a worker)."""
    _limit_blas(unit)
    data = dataset_for(unit.task, unit.data, unit.digest)
    t0 = time.perf_counter()
    if unit.m == FULL:
        scores = {spec.name: models.full_scores(spec, data, full_seed(unit.seed, data.name),
                                                unit.metrics)
                  for spec in unit.models}
        full = {name: float(s["error"]) for name, s in scores.items()}
        brier = ({name: s["brier"] for name, s in scores.items()}
                 if "brier" in unit.metrics else None)
        return UnitResult(unit.task.name, FULL, 0, None, full, time.perf_counter() - t0,
                          full_brier=brier)
    train_idx = train_sets(unit, data.y)  # (S, m)
    # SplitSeeds builds a new, unspawned SeedSequence on every read: a model that spawns
    # children from its seeds cannot change what the next model draws
    _, model_seeds = split_seeds(unit.seed, unit.task.name, unit.m, range(unit.start, unit.stop))
    rows = {
        spec.name: models.score_splits(spec, data, train_idx, model_seeds,
                                       metrics=unit.metrics)
        for spec in unit.models
    }
    return UnitResult(unit.task.name, unit.m, unit.start, rows, None, time.perf_counter() - t0)


def portable(spec: TaskSpec, settings: DataSettings) -> tuple[TaskSpec, DataSettings]:
    """The task and data settings with absolute paths (a CSV, the cache, a folder mirror).

    Relative paths are read from the calling process's folder, so a worker started in
    any other folder (a ``dask worker`` on a shared file system) finds the same files.
    """
    spec = absolute_paths(spec)
    mirror = settings.mirror
    if mirror is not None and not is_url(mirror):  # a URL mirror is the same from anywhere
        mirror = Path(mirror).expanduser().absolute()
    settings = replace(
        settings, cache_dir=Path(settings.cache_dir).expanduser().absolute(), mirror=mirror
    )
    return spec, settings
