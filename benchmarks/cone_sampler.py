"""The K-class cone sampler of an earlier commit against the working tree's, side by side.

Usage::

    python benchmarks/cone_sampler.py --base 2e5a94e [--splits 100] [--sizes 50 200 500]
                                      [--repeats 3]

For optdigits-10 at each size m: the run's training sets (seed 0) and the unpenalised
softmax fit's certified starts, then ``cone_hmc.sample_cone_hmc`` with the default options
on the first ``--splits`` of them (every split is separable), in one process per tree
(``--base`` is extracted with ``git archive`` to a temporary folder; its numba loops compile
there first), BLAS on one thread. The two trees' processes alternate ``--repeats`` times;
per (m, tree) it prints the median CPU seconds of the sampler per split and the bounces per
iteration. For comparing a change of the sampled law (such as the reference-class form
against the sum-zero one), whose draws differ; ``benchmarks/samplers.py`` compares kernels
that take the same arguments, bit for bit. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def measure(splits: int, sizes: list[int]) -> dict[str, list[float]]:
    """In this process (the tree on sys.path first): per m, [CPU s per split, bounces per
    iteration] of the sampler."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from nbvslr.data import DataSettings, TaskSpec, load_task
    from nbvslr.models import resolve_options
    from nbvslr.models.design import get_design
    from nbvslr.models.registry import lookup
    from nbvslr.splits import draw_train_sets, split_seeds

    try:  # models/ by family; earlier trees: flat
        from nbvslr.models.lr.cone_hmc import sample_cone_hmc
        from nbvslr.models.lr.softmax import fit_softmax
        lr_models = "nbvslr.models.lr"
    except ImportError:
        from nbvslr.models.lr.cone_hmc import sample_cone_hmc
        from nbvslr.models.lr.softmax import fit_softmax
        lr_models = "nbvslr.models"
    try:  # the sum-zero sampler starts from K weight vectors, the earlier one from K - 1
        importlib.import_module(f"{lr_models}.sum_zero")
        full = True
    except ImportError:
        full = False
    data = load_task(TaskSpec("optdigits-10"), DataSettings())
    K = data.n_classes
    opts = resolve_options("lr", "lr", {})
    entry = lookup("lr", data.kind, multiclass=True)
    design = get_design(data, entry.design(data, opts))
    out: dict[str, list[float]] = {}
    with threadpool_limits(1):
        for m in sizes:
            draw, seeds = split_seeds(0, data.name, m, range(splits))
            idx = draw_train_sets(np.asarray(data.y), m, draw)
            Z1, y = design.rows(idx), np.asarray(data.y)[idx]
            res = fit_softmax(Z1, y, K, stop_when_separable=True)
            sep = np.flatnonzero(res.separable)
            start = res.theta[sep] if full else res.theta[sep, : K - 1].reshape(sep.size, -1)
            picked = [seeds[int(i)] for i in sep]
            sample_cone_hmc(Z1[sep[:2]], y[sep[:2]], K, start[:2], picked[:2])  # compile
            bounces: list[np.ndarray] = []
            t0 = time.process_time()
            sample_cone_hmc(Z1[sep], y[sep], K, start, picked, bounces=bounces)
            cpu = time.process_time() - t0
            ev = np.concatenate(bounces)
            out[str(m)] = [cpu / sep.size, float(ev.mean())]
    return out


def run_tree(tree: Path, splits: int, sizes: list[int]) -> dict[str, list[float]]:
    """``measure`` in a fresh process importing nbvslr from ``tree``."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    code = (f"import sys, json; sys.path.insert(0, {str(tree)!r}); "
            f"sys.path.insert(1, {str(REPO / 'benchmarks')!r}); import cone_sampler; "
            f"print(json.dumps(cone_sampler.measure({splits}, {sizes!r})))")
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 500])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.base],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        runs: dict[str, list[dict[str, list[float]]]] = {"base": [], "now": []}
        for rep in range(args.repeats):
            order = (("base", base), ("now", REPO)) if rep % 2 == 0 else (("now", REPO),
                                                                          ("base", base))
            for name, tree in order:
                runs[name].append(run_tree(tree, args.splits, args.sizes))
    print(f"optdigits-10, {args.splits} run splits, sampler CPU per split (median of "
          f"{args.repeats}), {args.base} (base) against the working tree (now)")
    print(f"{'m':>4s} {'base ms':>8s} {'now ms':>8s} {'now/base':>8s} "
          f"{'bounces/it base':>15s} {'now':>6s}")
    for m in map(str, args.sizes):
        tb = statistics.median(r[m][0] for r in runs["base"])
        tn = statistics.median(r[m][0] for r in runs["now"])
        bb = runs["base"][0][m][1]
        bn = runs["now"][0][m][1]
        print(f"{m:>4s} {1e3 * tb:8.2f} {1e3 * tn:8.2f} {tn / tb:8.3f} {bb:15.1f} {bn:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
