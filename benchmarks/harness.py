"""Measurement pieces of ``bench.py``: splits, the peer loop, timers, FLOP counts, memory.

Everything here works on a plain ``nbvslr.data.Dataset`` and ``nbvslr.models.ModelSpec``;
``bench.py`` only chooses what to measure and prints it. Nothing here asserts a timing.

The peer is what a careful scikit-learn user would write without the batched core: for each
split, fit one estimator on the ``m`` training rows and score it on all the other rows.
It fits the same models as the core:

- continuous NB: ``GaussianNB``, then its per-class variances replaced by the pooled
  within-class variance plus the core's epsilon, and its prior by the core's (smoothed) prior;
- discrete NB: ``CategoricalNB(alpha=l, min_categories=n_values)`` with the Laplace-smoothed
  class prior passed per split;
- LR: ``LogisticRegression(C=inf)`` (no penalty; ``penalty=None`` is deprecated since
  scikit-learn 1.8) on the raw columns, or on one-hot indicators of every level for a
  discrete task; with a finite C, on the core's own encoding (a reference level per
  attribute dropped: a penalised model depends on the parametrisation). It has no
  separable-set rule: on a separable split it reports whatever its solver stopped at.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from nbvslr.models.design import get_design
from nbvslr.models.registry import FAMILIES

# --------------------------------------------------------------------------------------
# The peer: a per-split scikit-learn loop


def one_hot(data: Any) -> np.ndarray:
    """Indicators of every level of every column of a discrete task.

    Returns
    -------
    Z : ndarray of shape (N, sum(n_values)), float64
    """
    X = np.asarray(data.X)
    offsets = np.concatenate([[0], np.cumsum(data.n_values)[:-1]]).astype(np.int64)  # (d,)
    Z = np.zeros((X.shape[0], int(np.sum(data.n_values))), dtype=np.float64)
    rows = np.arange(X.shape[0])[:, None]  # (N, 1)
    Z[rows, X + offsets] = 1.0
    return Z


@dataclass(frozen=True)
class PeerSettings:
    """How the peer mirrors the core's model options.

    Attributes
    ----------
    var_smoothing : float
        Added to each pooled Gaussian variance (continuous NB).
    var_smoothing_relative : bool
        If true, ``var_smoothing`` is scaled by the largest column variance of the training
        set (scikit-learn's convention); else it is absolute.
    var_floor : float
        Smallest epsilon (keeps the variance positive when the training X is constant).
    laplace : float
        Laplace count ``l`` of discrete NB (conditionals and class prior).
    prior_smoothing : float
        Count added to each class for continuous NB's prior (0 = maximum likelihood).
    lr_C : float
        ``LogisticRegression(C=...)``; ``inf`` is no penalty (the paper's LR).
    lr_solver : str
        ``LogisticRegression`` solver.
    lr_max_iter : int
    lr_tol : float
    """

    var_smoothing: float = FAMILIES["nb"]["var_smoothing"]
    var_smoothing_relative: bool = True
    var_floor: float = FAMILIES["nb"]["var_floor"]
    laplace: float = FAMILIES["nb"]["smoothing"]
    prior_smoothing: float = FAMILIES["nb"]["smoothing"]
    lr_C: float = float("inf")
    lr_solver: str = "lbfgs"
    lr_max_iter: int = 100
    lr_tol: float = 1e-4

    @classmethod
    def matching(cls, nb: Mapping[str, Any], lr: Mapping[str, Any], **peer: Any) -> PeerSettings:
        """The peer that fits the same models as the core's resolved ``nb`` and ``lr`` options.

        ``peer`` sets the solver fields (``lr_solver``, ``lr_max_iter``, ``lr_tol``).
        """
        return cls(
            var_smoothing=nb["var_smoothing"], var_smoothing_relative=True,
            var_floor=nb["var_floor"], laplace=nb["smoothing"],
            prior_smoothing=nb["smoothing"],
            lr_C=float("inf") if lr["C"] is None else lr["C"], **peer,
        )


class PeerModel:
    """A per-split scikit-learn fit and score of one model family on one task.

    Build once per task (the one-hot encoding of a discrete task is done here, outside
    the timed loop, as a peer would also do once); ``error(train)`` then fits on the rows
    ``train`` and returns the 0-1 error on all the other rows.
    """

    def __init__(self, data: Any, family: str, settings: PeerSettings = PeerSettings()):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression
        from sklearn.naive_bayes import CategoricalNB, GaussianNB

        if family not in ("nb", "lr"):
            raise ValueError(f"family must be 'nb' or 'lr', got {family!r}")
        self.family = family
        self.settings = settings
        self.y = np.asarray(data.y).astype(np.int64)  # (N,)
        self.discrete = data.kind == "discrete"
        self._ConvergenceWarning = ConvergenceWarning
        if family == "lr":
            if self.discrete and np.isfinite(settings.lr_C):
                # penalised: the core's encoding (one reference level per attribute dropped),
                # since a penalty makes the fitted model depend on the parametrisation
                self.X = get_design(data, "onehot_ref").Z1[:, :-1]
            else:
                self.X = one_hot(data) if self.discrete else np.asarray(data.X, np.float64)
            self._make = lambda: LogisticRegression(
                C=settings.lr_C, solver=settings.lr_solver, max_iter=settings.lr_max_iter,
                tol=settings.lr_tol,
            )
        elif self.discrete:
            self.X = np.asarray(data.X)
            self._make = lambda: CategoricalNB(
                alpha=settings.laplace, min_categories=np.asarray(data.n_values)
            )
        else:
            self.X = np.asarray(data.X, dtype=np.float64)
            self._make = GaussianNB

    def error(self, train: np.ndarray) -> float:
        """Fit on rows ``train`` (shape (m,)) and return the error on every other row."""
        X, y = self.X, self.y
        Xtr, ytr = X[train], y[train]  # (m, D), (m,)
        test = np.ones(y.shape[0], dtype=bool)
        test[train] = False
        clf = self._make()
        s = self.settings
        if self.family == "lr":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", self._ConvergenceWarning)
                clf.fit(Xtr, ytr)
        elif self.discrete:
            counts = np.bincount(ytr, minlength=2)
            # Laplace-smoothed class prior, as in the paper: (count + l) / (m + 2 l)
            clf.set_params(class_prior=(counts + s.laplace) / (len(ytr) + 2 * s.laplace))
            clf.fit(Xtr, ytr)
        else:
            clf.fit(Xtr, ytr)
            counts = np.bincount(ytr, minlength=2).astype(np.float64)
            var_c = clf.var_ - clf.epsilon_  # (2, d) per-class ML variances
            pooled = (counts @ var_c) / counts.sum()  # (d,) within-class ML variance
            eps = s.var_smoothing * (Xtr.var(axis=0).max() if s.var_smoothing_relative else 1.0)
            eps = max(eps, s.var_floor)
            clf.var_ = np.broadcast_to(pooled + eps, var_c.shape).copy()
            clf.class_prior_ = (counts + s.prior_smoothing) / (
                counts.sum() + 2 * s.prior_smoothing
            )
        return 1.0 - clf.score(X[test], y[test])


# --------------------------------------------------------------------------------------
# Timers

#: The clock of every single-threaded timing: this process's CPU time. On a quiet machine
#: it equals the wall time of one-thread work (BLAS is limited to one thread); on a shared
#: one it still measures the work, where wall time measures the other processes too.
CLOCK = time.process_time


@dataclass
class LoopTiming:
    """A loop over splits, measured on its first ``done`` items and scaled to ``total``.

    Attributes
    ----------
    seconds : float
        Estimated time for all ``total`` splits (measured time if ``done == total``).
    measured : float
        CPU time (``CLOCK``) of the ``done`` splits actually run.
    done, total : int
    extrapolated : bool
        True when ``done < total``: ``seconds = measured * total / done``.
    values : list of float
        What each run item returned (the per-split errors).
    """

    seconds: float
    measured: float
    done: int
    total: int
    extrapolated: bool
    values: list[float]

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("values")
        return d


def time_loop(
    step: Callable[[int], float], total: int, budget: float, min_items: int = 3,
    max_items: int | None = None,
) -> LoopTiming:
    """Run ``step(i)`` for ``i = 0, 1, ...`` until ``total`` items or ``budget`` seconds.

    At least ``min_items`` items run whatever the budget, at most ``max_items``. The
    time of the whole loop is extrapolated linearly from the items that ran.
    """
    cap = total if max_items is None else min(total, max_items)
    values: list[float] = []
    t0 = CLOCK()
    for i in range(cap):
        values.append(float(step(i)))
        if i + 1 >= min_items and CLOCK() - t0 > budget:
            break
    measured = CLOCK() - t0
    done = len(values)
    return LoopTiming(
        seconds=measured * total / done, measured=measured, done=done, total=total,
        extrapolated=done < total, values=values,
    )


def time_repeated(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """Median ``CLOCK`` time of ``repeats`` calls of ``fn``; each time; the last result."""
    times = []
    result = None
    for _ in range(max(1, repeats)):
        gc.collect()
        t0 = CLOCK()
        result = fn()
        times.append(CLOCK() - t0)
    return statistics.median(times), times, result


# --------------------------------------------------------------------------------------
# Arithmetic: the machine's peak and the Newton steps' FLOPs


def matmul_peak(threads: int, n: int = 2000, repeats: int = 3) -> dict[str, float]:
    """Best float64 matmul rate (GFLOP/s) of ``n x n`` products, two ways.

    ``blas``: one product with BLAS limited to ``threads`` threads. ``python_threads``:
    ``threads`` Python threads, each running its own product with single-threaded BLAS
    (the way a core that splits its batch across threads uses the machine). ``peak`` is
    the better of the two; a product costs ``2 n^3`` FLOPs.
    """
    rng = np.random.default_rng(0)
    a = rng.random((n, n))
    b = rng.random((n, n))
    flops = 2.0 * n**3
    best_blas = 0.0
    # one thread: its CPU time (CLOCK); more: wall time, the threads run at once
    clock = CLOCK if threads == 1 else time.perf_counter
    with threadpool_limits(limits=threads, user_api="blas"):
        a @ b  # warm-up: thread pool start, page faults
        for _ in range(repeats):
            t0 = clock()
            a @ b
            best_blas = max(best_blas, flops / (clock() - t0))
    best_py = 0.0
    if threads > 1:
        with threadpool_limits(limits=1, user_api="blas"):
            for _ in range(repeats):
                workers = [threading.Thread(target=np.matmul, args=(a, b)) for _ in range(threads)]
                t0 = time.perf_counter()
                for w in workers:
                    w.start()
                for w in workers:
                    w.join()
                best_py = max(best_py, threads * flops / (time.perf_counter() - t0))
    return {
        "blas": best_blas / 1e9, "python_threads": best_py / 1e9,
        "peak": max(best_blas, best_py) / 1e9, "threads": threads, "n": n,
    }


def newton_flops(m: int, width: int, n_iter: np.ndarray) -> dict[str, float]:
    """FLOPs of the Newton iterations of a batch of LR fits, counted from the shapes.

    Parameters
    ----------
    m : int
        Training rows per split.
    width : int
        Columns of the LR design including the intercept (``D + 1``).
    n_iter : ndarray of shape (S,)
        Newton iterations of each split (from ``score_splits``).

    Returns
    -------
    dict
        ``primal``: per iteration ``2 m w^2`` (Hessian ``Xh^T Xh``) ``+ w^3 / 3`` (Cholesky;
        ``2 w^3 / 3`` for LU is counted as ``lu``) ``+ 4 m w`` (margins and gradient).
        ``dual``: the same step through ``m x m`` systems (Woodbury), ``2 m^2 w + m^3 / 3
        + 4 m w``. ``useful`` is the smaller of the two per iteration, the work a solver
        that picks the cheaper form must do; it is what the fraction of peak uses, so the
        fraction is never flattered by counting work a dual solve skips.
    """
    it = float(np.sum(n_iter))
    w = float(width)
    primal = 2 * m * w**2 + w**3 / 3 + 4 * m * w
    lu = 2 * m * w**2 + 2 * w**3 / 3 + 4 * m * w
    dual = 2 * m**2 * w + m**3 / 3 + 4 * m * w
    return {
        "iterations": it, "primal": it * primal, "lu": it * lu, "dual": it * dual,
        "useful": it * min(primal, dual),
    }


def eval_flops(n_rows: int, width: int, n_splits: int) -> float:
    """FLOPs of scoring ``n_splits`` linear classifiers on all rows: ``2 N w S``."""
    return 2.0 * n_rows * width * n_splits


# --------------------------------------------------------------------------------------
# Memory


def traced_peak(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Peak bytes allocated through Python's allocators (numpy arrays included) by ``fn``.

    Returns ``(peak_mib, result)``. Run it outside timed runs: tracing slows allocation.
    """
    gc.collect()
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was:
            tracemalloc.stop()
    return (peak - base) / 2**20, result


class TreeRSS:
    """Peak resident memory of a process and all its descendants, sampled in a thread.

    ``with TreeRSS(pid) as mon: ...`` then ``mon.peak_total`` (sum over the tree, MiB) and
    ``mon.peak_single`` (largest one process, MiB). Sampling every ``interval`` seconds can
    miss a spike shorter than that; ``max_rss_mib`` gives the kernel's exact per-process
    peak. Needs psutil (installed with the test extras); without it both peaks stay NaN.
    """

    def __init__(self, pid: int, interval: float = 0.05):
        self.pid = pid
        self.interval = interval
        self.peak_total = float("nan")
        self.peak_single = float("nan")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        sizes = []
        for p in procs:
            try:
                sizes.append(p.memory_info().rss / 2**20)
            except psutil.Error:
                continue
        if sizes:
            self.peak_total = np.nanmax([self.peak_total, sum(sizes)])
            self.peak_single = np.nanmax([self.peak_single, max(sizes)])

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeRSS:
        try:
            import psutil  # noqa: F401
        except ImportError:
            return self
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def max_rss_mib() -> float:
    """The process's peak resident set size so far (MiB)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10  # bytes on macOS, KiB else


# --------------------------------------------------------------------------------------
# Small helpers


def median_or_nan(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if len(values) else float("nan")


def write_json(path: Path, report: Any) -> None:
    """The benchmark's numbers as JSON (``to_jsonable``) into ``path``, said on stdout."""
    path.write_text(json.dumps(to_jsonable(report), indent=1))
    print(f"numbers written to {path}")


def to_jsonable(obj: Any) -> Any:
    """numpy scalars and arrays, dataclasses and mappings turned into JSON types."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


# --------------------------------------------------------------------------------------
# The HMC sampler's floor


def hmc_floor_flops(bounces: np.ndarray, m: int, P: int) -> float:
    """FLOPs the exact-HMC sampler cannot avoid for the chains whose bounces are given.

    Parameters
    ----------
    bounces : ndarray of shape (S, chains, n_iter)
        Bounces of every chain and iteration (``sample_separating_hmc(..., bounces=[])``).
    m, P : int
        Constraints (training rows) and coordinates of each chain.

    Returns
    -------
    float
        Per iteration, the fresh velocity's and the position's projections on the m
        constraints (``F v`` and ``F x``: ``2 * 2 m P``); per bounce and constraint, the
        reflection's update of that constraint's rate (a reflection changes all m of them:
        one multiply-add, 2 FLOPs) and the time until it is met (a ratio, 1). The rotation of
        the state along the ellipse, the Gram matrix, the random numbers and every
        per-split set-up are not counted, so the floor is below any implementation of the
        same chain.
    """
    b = np.asarray(bounces)
    return float(b.size * 4.0 * m * P + b.sum() * 3.0 * m)


def child_cpu_seconds() -> float:
    """User + system CPU seconds of every waited-for child process so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_openmp_thread() -> None:
    """Run this script again with ``OMP_NUM_THREADS=1`` unless it is set so: OpenMP's idle
    threads (scikit-learn's loss loops) spin, which on a busy machine multiplied the peer's
    CPU time 10-20x, and threadpoolctl's limit did not stop it. Call it first in
    ``__main__``."""
    if os.environ.get("OMP_NUM_THREADS") != "1":
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "OMP_NUM_THREADS": "1"})


def run_in_tree(tree: Path, code: str, *args: object) -> dict[str, Any]:
    """Run the Python ``code`` (``-c``, with ``args``) in a fresh process inside another
    checkout ``tree`` (its nbvslr first on the path, BLAS and OpenMP on one thread) and
    return the JSON object of its last line of output."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=tree, env=env,
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])

