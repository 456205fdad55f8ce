"""Ways to form LR's Newton Hessian ``Z^T diag(w) Z`` on adult (discrete), timed side by side.

Usage::

    python benchmarks/hessian_forms.py [--m 382] [--splits 64]

On one block of training stacks of the task (the run's own splits, one thread, CPU time per
split and Newton step, median of repeats):

* ``general``: ``matmul(Zh^T, Zh')`` with ``Zh'`` a copy (a general matrix product);
* ``symmetric``: ``matmul(Zh^T, Zh)`` on the same buffer, which NumPy hands to BLAS's
  symmetric rank-k update (half the FLOPs) -- what ``logistic`` did before;
* ``float32``: the same in single precision, the cast from float64 included;
* ``sparse``: ``sparse_gram.weighted_gram`` from each row's non-zeros (what ``logistic`` does
  for a one-hot design), after ``sparse_rows`` once per block (timed on its own).

It also prints how many of a training set's rows are distinct (the "fewer rows" idea: equal
rows could be merged with a count) and the largest difference of each form from ``general``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(REPO))

from benchmarks import bench, panels  # noqa: E402
from nbvslr.kernels.sparse_gram import sparse_rows, weighted_gram  # noqa: E402
from nbvslr.models.design import get_design  # noqa: E402


def per_call(fn, repeats: int = 30) -> float:
    """Median CPU seconds of ``fn()`` over ``repeats`` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=382)
    ap.add_argument("--splits", type=int, default=64)
    args = ap.parse_args(argv)
    with threadpool_limits(limits=1), tempfile.TemporaryDirectory() as cache:
        data = panels.load_panel("adult-discrete", Path(cache), False)
        design = get_design(data, "onehot_ref")
        idx, _ = bench.splits_of(data, args.m, args.splits)
        Z = design.rows(idx)  # (S, m, P)
        S, m, P = Z.shape
        w = np.random.default_rng(0).uniform(0.01, 0.25, (S, m))  # p (1 - p) of a Newton step
        sw = np.sqrt(w)[:, :, None]

        def general():
            Zh = Z * sw
            return np.matmul(Zh.transpose(0, 2, 1), Zh.copy())

        def symmetric():
            Zh = Z * sw
            return np.matmul(Zh.transpose(0, 2, 1), Zh)

        def single():
            Zh = (Z * sw).astype(np.float32)
            return np.matmul(Zh.transpose(0, 2, 1), Zh)

        structure = sparse_rows(Z)
        out = np.empty((S, P, P))

        def sparse():
            weighted_gram(*structure, w, out)
            return out

        ref = general()
        distinct = np.mean([len(np.unique(design.row_to_unique[r])) for r in idx])
        print(f"adult-discrete, m = {m}, P = {P}, {S} splits; non-zeros per row "
              f"{np.count_nonzero(Z) / (S * m):.1f} of {P}; distinct rows per training set "
              f"{distinct:.0f} of {m}")
        print("| form | us per split and step | x symmetric | max rel. diff |")
        print("|---|---|---|---|")
        t_sym = per_call(symmetric) / S
        for name, fn in (("general", general), ("symmetric", symmetric), ("float32", single),
                         ("sparse", sparse)):
            t = per_call(fn) / S
            diff = np.abs(fn() - ref).max() / np.abs(ref).max()
            print(f"| {name} | {1e6 * t:.1f} | {t_sym / t:.2f} | {diff:.1e} |")
        t_rows = per_call(lambda: sparse_rows(Z), 5) / S
        print(f"sparse_rows, once per block: {1e6 * t_rows:.1f} us per split")
    return 0


if __name__ == "__main__":
    sys.exit(main())
