"""Where scipy's ``nnls`` answers the quasi direction's least-distance problem non-optimally,
and what the certified answer changes there.

Usage::

    python benchmarks/direction_misses.py [--splits 1000] TASK [TASK ...]

For every size of each TASK's Figure 1 grid (``configs/figure1.yaml``, seed 0, the splits
``nbvslr run`` draws), LR's ``score_splits`` runs as shipped (``least_distance``: ``nnls``
checked, Lawson-Hanson where the check fails) while each quasi split's direction problem is
also handed to ``nnls`` alone and checked (``least_distance.kkt_violation`` above
``KKT_RTOL``: a miss). The splits with a miss are then scored again with ``nnls``'s point
unchecked (the code before the check) and the held-out errors compared. Prints, per size
with a miss: the quasi splits, the misses, the splits whose error moved, the net number of
test rows that changed class, and the change of the mean error over all the splits.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: the tree's nbvslr
    sys.path.insert(0, str(REPO))

import nbvslr.models as models  # noqa: E402
import nbvslr.models.lr.least_distance as ld  # noqa: E402
import nbvslr.models.lr.separation as sep  # noqa: E402
from nbvslr.config import load_config  # noqa: E402
from nbvslr.models.design import get_design  # noqa: E402
from nbvslr.models.registry import lookup  # noqa: E402
from nbvslr.runner.units import loaded  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

MISSED: set[str] = set()  # keys of the training sets whose nnls point failed the check
SHIPPED = sep.max_margin_direction


def _key(Z1: np.ndarray, sign: np.ndarray) -> str:
    """A training set's key: its (m, P) rows and (m,) signs."""
    return hashlib.sha1(np.ascontiguousarray(Z1, dtype=np.float64).tobytes()
                        + np.ascontiguousarray(sign, dtype=np.float64).tobytes()).hexdigest()


def _unchecked(G: np.ndarray, **_knobs) -> tuple[np.ndarray, bool, float]:
    """The solver before the check: scipy's ``nnls`` point, feasible when ``r[k] < 0``."""
    E, f = ld.ldp_matrices(G)
    y, _ = ld.nnls(E, f, maxiter=50 * E.shape[1])
    return y, bool((E @ y - f)[-1] < 0), 0.0


def _noting(G: np.ndarray, **knobs) -> tuple[np.ndarray, bool, float]:
    """``least_distance``, noting in ``NOTED`` whether ``nnls``'s own point fails the check."""
    E, f = ld.ldp_matrices(G)
    y, _ = ld.nnls(E, f, maxiter=50 * E.shape[1])
    NOTED.append(ld.kkt_violation(G, y)[1] > ld.KKT_RTOL)
    return ld.least_distance(G, **knobs)


NOTED: list[bool] = []


def _watched(Z1, sign, separated, **knobs):
    """``max_margin_direction`` as shipped, noting the splits whose ``nnls`` point fails."""
    for a in range(Z1.shape[0]):
        NOTED.clear()
        sep.least_distance = _noting
        try:
            SHIPPED(Z1[a:a + 1], sign[a:a + 1], separated[a:a + 1], **knobs)
        finally:
            sep.least_distance = ld.least_distance
        if any(NOTED):
            MISSED.add(_key(Z1[a], sign[a]))
    return SHIPPED(Z1, sign, separated, **knobs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("tasks", nargs="+")
    args = ap.parse_args(argv)
    config = load_config(REPO / "configs" / "figure1.yaml", splits=args.splits)
    names = [t.name for t in config.tasks]
    lr = next(model for model in config.models if model.name == "lr")
    with threadpool_limits(limits=1):
        for task in args.tasks:
            spec, grid = config.tasks[names.index(task)], config.grids[names.index(task)]
            data, _ = loaded(spec, config.data)
            entry = lookup(lr.family, data.kind, data.multiclass)
            design = get_design(data, entry.design(data, lr.options))
            totals = np.zeros(3, dtype=int)
            for m in grid:
                draw, seeds = split_seeds(config.seed, spec.name, m, range(args.splits))
                train = draw_train_sets(data.y, m, draw)
                MISSED.clear()
                sep.max_margin_direction = _watched
                try:
                    now = models.score_splits(lr, data, train, seeds)
                finally:
                    sep.max_margin_direction = SHIPPED
                quasi = int((now["separation"] == sep.QUASI).sum())
                hit = np.array([i for i in range(args.splits)
                                if _key(design.rows(train[i:i + 1])[0],
                                        design.sign[train[i]]) in MISSED], dtype=np.int64)
                totals += (quasi, hit.size, 0)
                if not hit.size:
                    continue
                sep.least_distance = _unchecked
                try:
                    before = models.score_splits(lr, data, train[hit],
                                                 [seeds[i] for i in hit])["error"]
                finally:
                    sep.least_distance = ld.least_distance
                after = now["error"][hit]
                moved = int((before != after).sum())
                totals[2] += moved
                rows = int(np.round((after - before) * (data.y.size - m)).sum())
                print(f"{task} m = {m}: quasi {quasi}, nnls misses {hit.size}, error moved on "
                      f"{moved}, test rows (net) {rows:+d}, mean error "
                      f"{(after - before).sum() / args.splits:+.2e}", flush=True)
            print(f"{task}: quasi splits {totals[0]}, nnls misses {totals[1]}, error moved on "
                  f"{totals[2]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
