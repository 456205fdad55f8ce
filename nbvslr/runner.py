"""Run an experiment: every (task, m, block of splits) through joblib, results streamed.

``run_experiment(config)`` is the whole pipeline below the CLI:

1. load every task in this process and check the sizes against its rows, before any fit;
2. drop stale checkpoints, skip the sizes already done;
3. send work units to joblib (any backend; results arrive as they finish). A unit is the
   TaskSpec, the DataSettings, the models and a range of split indices, never arrays: each
   worker loads the dataset itself, once per process, and draws its own splits from the
   seeds, so the results do not depend on the number of workers, the backend, the block
   size, or which sizes were resumed;
4. save a checkpoint when the last block of a size arrives, and the task's files when its
   last size does.

BLAS runs one thread per worker (``threadpoolctl``): ``jobs x 1 <= cores`` and, as a
single-threaded BLAS always sums in the same order, the same numbers whatever ``--jobs``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import sys
import threading
import time
import warnings
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, parallel_config
from threadpoolctl import threadpool_info, threadpool_limits

from nbvslr import __version__, models, results
from nbvslr.config import Config
from nbvslr.data import load_task
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.errors import ConfigError, DataError
from nbvslr.models.spec import ModelSpec
from nbvslr.progress import NoProgress, Progress
from nbvslr.splits import draw_train_sets, full_seed, nested_train_sets, split_seeds

BLAS_THREADS = 1
FULL = 0
"""The ``m`` of a unit that fits on all rows (the asymptotic error)."""


# --------------------------------------------------------------------------- work units


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


@dataclass(frozen=True)
class UnitResult:
    task: str
    m: int
    start: int
    rows: dict[str, dict[str, np.ndarray]] | None  # model -> score_splits output
    full: dict[str, float] | None  # model -> error on all rows (FULL units)
    seconds: float


_CACHE: dict[str, Dataset] = {}
_CACHE_LOCK = threading.Lock()
_BLAS_SET = False


def _cache_key(spec: TaskSpec, settings: DataSettings) -> str:
    blob = {"task": _plain(spec.__dict__), "data": _plain(settings.__dict__)}
    return json.dumps(blob, sort_keys=True, default=str)


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict) or hasattr(obj, "items"):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def dataset_for(spec: TaskSpec, settings: DataSettings) -> Dataset:
    """The task's data, loaded once per process (shared by the threads of a process)."""
    key = _cache_key(spec, settings)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = load_task(spec, settings)
        return _CACHE[key]


def _limit_blas(unit: Unit) -> None:
    # In a worker process (loky, multiprocessing, dask): one BLAS thread for its lifetime.
    # In the calling process (sequential, threading) run_experiment holds the limit.
    global _BLAS_SET
    if os.getpid() != unit.parent_pid and not _BLAS_SET:
        threadpool_limits(limits=BLAS_THREADS)
        _BLAS_SET = True


def _fresh(seeds: Sequence[np.random.SeedSequence]) -> list[np.random.SeedSequence]:
    # A model may spawn children from its seeds; each model gets unspawned copies, so its
    # draws do not depend on which models ran before it.
    return [np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key) for s in seeds]


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
    data = dataset_for(unit.task, unit.data)
    t0 = time.perf_counter()
    if unit.m == FULL:
        full = {
            spec.name: float(models.score_full(spec, data, full_seed(unit.seed, data.name)))
            for spec in unit.models
        }
        return UnitResult(unit.task.name, FULL, 0, None, full, time.perf_counter() - t0)
    train_idx = train_sets(unit, data.y)  # (S, m)
    _, model_seeds = split_seeds(unit.seed, unit.task.name, unit.m, range(unit.start, unit.stop))
    rows = {
        spec.name: models.score_splits(spec, data, train_idx, _fresh(model_seeds))
        for spec in unit.models
    }
    return UnitResult(unit.task.name, unit.m, unit.start, rows, None, time.perf_counter() - t0)


# --------------------------------------------------------------------------- preparation


@dataclass
class _Task:
    """Bookkeeping of one task in the calling process."""

    spec: TaskSpec
    grid: tuple[int, ...]
    data: Dataset
    folder: Path
    checkpoints: results.Checkpoints
    todo: dict[int, int]  # m -> blocks still to come
    blocks: dict[int, list[UnitResult]]
    full: dict[str, float] | None = None
    seconds: dict[int, float] | None = None
    skipped: tuple[int, ...] = ()
    remaining: int = 0  # units still to come


def _check_sizes(config: Config, spec: TaskSpec, grid: tuple[int, ...], data: Dataset) -> None:
    n, pos = data.n_rows, data.n_positive
    if pos == 0 or pos == n:
        raise DataError(
            f"{spec.name}: the data has only one class ({pos} positives in {n} rows); "
            "check the task's target"
        )
    too_big = [m for m in grid if m > n - 1]
    if too_big:
        raise ConfigError(
            f"{config.source}: sizes: {too_big[0]} is larger than the {n - 1} rows left after "
            f"holding out one test row ({spec.name} has {n} rows) ({too_big[0]}); "
            f"use sizes of at most {n - 1}"
        )


def data_digest(data: Dataset) -> str:
    """sha256 of the task's arrays: checkpoints of other data are never reused."""
    h = hashlib.sha256()
    for arr in (data.X, data.y):
        arr = np.ascontiguousarray(arr)
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.tobytes())
    h.update(f"{data.kind}{tuple(data.n_values)}".encode())
    return h.hexdigest()


def code_digest() -> str:
    """sha256 of the source of the modules that decide a result (data, splits, models).

    In the checkpoint fingerprint: a rerun after the code changed recomputes every size
    rather than mixing results of two versions of the code.
    """
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    files = [root / "splits.py", *sorted((root / "models").glob("*.py")),
             *sorted((root / "data").glob("*.py"))]
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def fingerprint(config: Config, spec: TaskSpec, grid: tuple[int, ...], data: Dataset) -> str:
    """What a checkpoint of this task depends on (not jobs, backend, block or other sizes)."""
    blob = {
        "version": __version__,
        "code": code_digest(),
        "task": _plain(spec.__dict__),
        "data": data_digest(data),
        "splits": config.splits,
        "seed": config.seed,
        "models": [[m.name, m.family, _plain(dict(m.options))] for m in config.models],
        "nested_min": min(grid) if config.nested else None,
    }
    text = json.dumps(blob, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _prepare(config: Config) -> list[_Task]:
    tasks = []
    for spec, grid in zip(config.tasks, config.grids, strict=True):
        folder = results.task_dir(config.out, spec.name)
        data = dataset_for(*portable(spec, config.data))
        _check_sizes(config, spec, grid, data)
        checkpoints = results.Checkpoints(folder, fingerprint(config, spec, grid, data))
        tasks.append(_Task(spec, grid, data, folder, checkpoints, {}, defaultdict(list)))
    return tasks


def _units(config: Config, tasks: list[_Task]) -> Iterator[Unit]:
    pid = os.getpid()
    for task in tasks:
        task.checkpoints.prepare(force=config.force)
        done = task.checkpoints.done()
        task.skipped = tuple(m for m in task.grid if m in done)
        task.seconds = {}
        nested_min = min(task.grid) if config.nested else None
        spec, settings = portable(task.spec, config.data)
        common = dict(task=spec, data=settings, models=config.models, seed=config.seed)
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


def _rows(result: UnitResult, config: Config) -> pd.DataFrame:
    frames = []
    splits = np.arange(result.start, result.start + _n(result))
    for spec in config.models:
        out = result.rows[spec.name]
        frames.append(pd.DataFrame({
            "task": result.task,
            "model": spec.name,
            "family": spec.family,
            "m": result.m,
            "split": splits,
            "error": np.asarray(out["error"], dtype=np.float64),
            "separable": np.asarray(out["separable"], dtype=bool),
            "n_iter": np.asarray(out["n_iter"], dtype=np.int64),
            "converged": np.asarray(out["converged"], dtype=bool),
        }))
    return pd.concat(frames, ignore_index=True)


def _n(result: UnitResult) -> int:
    first = next(iter(result.rows.values()))
    return int(np.asarray(first["error"]).shape[0])


def _collect(task: _Task, result: UnitResult, config: Config) -> None:
    task.remaining -= 1
    if result.m == FULL:
        task.full = result.full
        return
    task.blocks[result.m].append(result)
    task.seconds[result.m] = task.seconds.get(result.m, 0.0) + result.seconds
    task.todo[result.m] -= 1
    if task.todo[result.m] == 0:
        frame = pd.concat([_rows(r, config) for r in task.blocks.pop(result.m)])
        task.checkpoints.save(result.m, frame)


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
            "positives": pos,
            "x_range": list(data.x_range) if data.x_range is not None else None,
            "sizes": list(task.grid),
            "paper_sizes": list(data.sizes) if data.sizes is not None else None,
            "recipe": _plain(dict(data.notes)),
        },
        "config": config.to_dict(),
        "seed": config.seed,
        "splits": config.splits,
        "models": [
            {"name": m.name, "family": m.family, "options": _plain(dict(m.options))}
            for m in config.models
        ],
        "asymptotic_error": task.full,
        "majority_error": min(pos, n - pos) / n,
        "execution": {"jobs": config.jobs, "backend": config.backend, "block": config.block,
                      "scheduler": config.scheduler},
        "timings": {
            "wall_seconds": round(time.perf_counter() - started, 3),
            "fit_seconds_by_m": {str(m): round(s, 3) for m, s in sorted(task.seconds.items())},
            "resumed_sizes": list(task.skipped),
        },
        "versions": _versions(),
        "machine": machine_info(),
    }


def machine_info() -> dict[str, Any]:
    """What the numbers may depend on beyond the code and the seeds: the CPU, the BLAS
    library numpy calls (name, version, kernel architecture) and numpy's version."""
    blas = [
        {key: lib.get(key) for key in ("internal_api", "version", "architecture", "prefix")}
        for lib in threadpool_info() if lib.get("user_api") == "blas"
    ]
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


def _finish(config: Config, task: _Task, started: float) -> pd.DataFrame:
    splits = task.checkpoints.load(task.grid)
    pair = results.pick_pair([(m.name, m.family) for m in config.models])
    results.write_task_outputs(task.folder, splits, _run_info(config, task, started), pair)
    return splits


# --------------------------------------------------------------------------- entry point


def _n_workers(jobs: int) -> int:
    cores = os.cpu_count() or 1
    return jobs if jobs > 0 else max(1, cores + 1 + jobs)


DASK_CONNECT_SECONDS = 5
"""How long ``--scheduler`` waits to reach the scheduler."""
DASK_WORKERS_SECONDS = 10
"""How long a run waits for the scheduler's first worker."""


def portable(spec: TaskSpec, settings: DataSettings) -> tuple[TaskSpec, DataSettings]:
    """The task and data settings with absolute paths (a CSV, the cache, the mirror).

    Relative paths are read from the calling process's folder, so a worker started in
    any other folder (a ``dask worker`` on a shared file system) finds the same files.
    """
    source = spec.source
    if source is not None and isinstance(source.get("csv"), str):
        source = {**source, "csv": str(Path(source["csv"]).expanduser().absolute())}
        spec = replace(spec, source=source)
    mirror = settings.mirror
    settings = replace(
        settings,
        cache_dir=Path(settings.cache_dir).expanduser().absolute(),
        mirror=Path(mirror).expanduser().absolute() if mirror is not None else None,
    )
    return spec, settings


def _dask_client(config: Config, n_workers: int) -> tuple[Any, bool]:
    """The dask client of this run, and whether the run owns it (and closes it).

    ``config.scheduler`` set: a client of that scheduler. Else the current dask client if
    there is one, else a local cluster of ``n_workers`` processes, one thread each.
    """
    try:
        from distributed import Client, LocalCluster, get_client
    except ImportError:
        raise ConfigError(
            "command line: --backend: dask needs the distributed package (dask); "
            "pip install 'nbvslr[dask]' or choose another backend"
        ) from None
    if config.scheduler is not None:
        _probe_scheduler(config.scheduler)
        client = Client(config.scheduler, timeout=DASK_CONNECT_SECONDS, set_as_default=False)
        try:
            client.wait_for_workers(1, timeout=DASK_WORKERS_SECONDS)
        except TimeoutError:
            client.close()
            raise ConfigError(
                f"command line: --scheduler: the dask scheduler has no worker after "
                f"{DASK_WORKERS_SECONDS} s ({config.scheduler}); start workers with "
                f"dask worker {config.scheduler}"
            ) from None
        return client, True
    try:
        return get_client(), False
    except ValueError:
        # No dashboard; the scheduler's small HTTP server (metrics) takes any free port, so
        # another cluster holding the usual 8787 is no problem.
        with _workers_ignore_sigint("dask"):
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None,
                                   scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        return Client(cluster, set_as_default=False), True


def _probe_scheduler(address: str) -> None:
    # Reach the scheduler with a bare connection first: a Client that fails to connect
    # leaves a half-started object behind whose clean-up blocks for seconds. The probe has
    # its own thread and event loop, so a caller inside a running loop (Jupyter) works too.
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect

    async def probe() -> None:
        comm = await connect(address, timeout=DASK_CONNECT_SECONDS)
        await comm.close()

    try:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(lambda: asyncio.run(probe())).result()
    except Exception as exc:  # OSError (timeout, refused), ValueError (address)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"command line: --scheduler: cannot reach the dask scheduler ({address}): "
            f"{reason}; start one with `dask scheduler` and pass its tcp://HOST:PORT"
        ) from None


def _close_dask(client: Any) -> None:
    cluster = client.cluster  # a LocalCluster this run started, or None (a --scheduler)
    client.close()
    if cluster is not None:
        cluster.close()


@contextmanager
def _workers_ignore_sigint(backend: str) -> Iterator[None]:
    """Start worker processes with SIGINT ignored (they inherit it), then restore it here.

    A terminal's Ctrl-C reaches every process of the group: the run stops in this process,
    which then ends the workers, and a worker still importing prints no traceback of its own.
    """
    if backend not in ("loky", "multiprocessing", "dask") or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_experiment(config: Config, progress: Progress | None = None) -> dict[str, pd.DataFrame]:
    """Run every task of ``config``; return ``{task: splits table}``, files written.

    The splits table has one row per (model, m, split) with columns
    ``results.SPLIT_COLUMNS``. Raises ``ConfigError`` (a size leaves no test row) or
    ``DataError`` before any model is fitted.
    """
    progress = progress if progress is not None else NoProgress()
    started = time.perf_counter()
    tasks = _prepare(config)
    by_name = {t.spec.name: t for t in tasks}
    units = list(_units(config, tasks))
    out: dict[str, pd.DataFrame] = {}

    client, owned = (
        _dask_client(config, _n_workers(config.jobs)) if config.backend == "dask"
        else (None, False)
    )
    backend_args = {"client": client} if client is not None else {}
    progress.start(len(units))
    try:
        with threadpool_limits(limits=BLAS_THREADS), \
                parallel_config(backend=config.backend, **backend_args), \
                warnings.catch_warnings():
            # An interrupted run cancels its queued units on purpose: joblib need not warn.
            warnings.filterwarnings("ignore", message=r".*tasks? which were still being")
            parallel = Parallel(n_jobs=config.jobs, return_as="generator_unordered",
                                batch_size=1)
            with _workers_ignore_sigint(config.backend):  # workers start at the first unit
                stream = parallel(delayed(run_unit)(u) for u in units)
            try:
                for result in stream:
                    task = by_name[result.task]
                    _collect(task, result, config)
                    label = f"{result.task} " + (
                        "all rows" if result.m == FULL else f"m={result.m}")
                    progress.advance(label)
                    if task.remaining == 0:
                        out[task.spec.name] = _finish(config, task, started)
            finally:
                stream.close()
    finally:
        progress.finish()
        if owned:
            _close_dask(client)
    return {t.spec.name: out[t.spec.name] for t in tasks}
