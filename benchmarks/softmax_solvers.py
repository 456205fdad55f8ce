"""Softmax LR on optdigits-10: dense Newton against Newton-CG, and against scikit-learn.

Usage::

    python benchmarks/softmax_solvers.py [--splits 20] [--sizes 50 200 500]

On the run's own training sets of optdigits-10 (10 classes, 62 features, seed 0), one
thread, CPU time of the whole fit of every split at each size:

* ``newton-cg``: ``nbvslr.models.lr.softmax.fit_softmax`` (Hessian-vector products, O(m F P)
  each), what ``lr`` uses for K > 2;
* ``dense``: the same Newton steps and line search with the (F P) x (F P) Hessian formed
  (F (F + 1) / 2 weighted products ``Z^T diag(w) Z`` per split and step) and solved by LAPACK;
* ``sklearn``: ``LogisticRegression(C=C)`` (lbfgs, multinomial) one split at a time.

Both solvers stop at ``max |grad| / m <= 1e-10``; the script prints the ratios (dense /
newton-cg, sklearn / newton-cg) and the largest difference of the class probabilities on
the training rows between the two solvers.

``--preconditioner`` prints only Newton-CG with and without its preconditioner (time,
Hessian-vector products per split, the largest weight difference).

Then, whole splits (fit and held-out error): ``nbvslr.models.score_splits`` for ``nb`` and
``lr`` with C against a per-split loop of scikit-learn's ``GaussianNB`` and
``LogisticRegression`` fitted on the training rows and scored on every other row.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from nbvslr import models  # noqa: E402
from nbvslr.data import DataSettings, TaskSpec, load_task  # noqa: E402
from nbvslr.models.design import get_design  # noqa: E402
from nbvslr.models.lr.softmax import (  # noqa: E402
    _loss_probs,
    _masked,
    _penalty,
    _scores,
    fit_softmax,
)
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402


def dense_newton(Z1: np.ndarray, y: np.ndarray, K: int, C: float, tol: float = 1e-10,
                 max_iter: int = 100) -> np.ndarray:
    """Penalised softmax LR by Newton with the Hessian formed and solved: theta (S, K, P)."""
    S, m, P = Z1.shape
    Y = np.zeros((S, m, K))
    np.put_along_axis(Y, y[:, :, None].astype(np.int64), 1.0, axis=2)
    W = np.zeros((S, K, P))
    inv_c = 1.0 / C
    ridge = np.tile(np.r_[np.full(P - 1, inv_c), 1e-10], K)  # intercepts: a tiny ridge
    for _ in range(max_iter):
        s = _scores(Z1, W, K)
        loss, p = _loss_probs(s, Y)
        loss += _penalty(W, inv_c)
        g = np.matmul((p - Y).transpose(0, 2, 1), Z1) + _masked(W, inv_c)  # (S, K, P)
        if (np.abs(g).max(axis=(1, 2)) / m <= tol).all():
            break
        H = np.empty((S, K, P, K, P))
        for f in range(K):
            for h in range(f, K):
                w = p[:, :, f] * ((f == h) - p[:, :, h])  # (S, m)
                block = np.matmul((Z1 * w[:, :, None]).transpose(0, 2, 1), Z1)  # (S, P, P)
                H[:, f, :, h, :] = block
                H[:, h, :, f, :] = block.transpose(0, 2, 1)
        H = H.reshape(S, K * P, K * P) + np.diag(ridge)
        d = -np.linalg.solve(H, g.reshape(S, K * P, 1)).reshape(S, K, P)
        slope = (g * d).sum(axis=(1, 2))
        step = np.ones(S)
        for _ in range(40):
            trial = W + step[:, None, None] * d
            new = _loss_probs(_scores(Z1, trial, K), Y)[0] + _penalty(trial, inv_c)
            ok = new <= loss + 1e-4 * step * slope
            if ok.all():
                break
            step = np.where(ok, step, 0.5 * step)
        W = W + step[:, None, None] * d
    return W


def preconditioner_table(args: argparse.Namespace) -> None:
    """Newton-CG with and without its preconditioner (``softmax.PC_MIN_INV_C``): CPU
    seconds of the fit of every split, Hessian-vector products per split (the rows of the
    stacks they were made on, over the splits) and the largest weight difference."""
    from nbvslr.models.lr.entry import softmax

    data = load_task(TaskSpec("optdigits-10"), DataSettings())
    design = get_design(data, "x")
    K = data.n_classes
    count = [0]
    plain_hvp = softmax._hvp

    def counted(Z1, p, V, inv_c):
        count[0] += Z1.shape[0]
        return plain_hvp(Z1, p, V, inv_c)

    print(f"optdigits-10, C = {args.C:g}, {args.splits} splits: Newton-CG with and without "
          "the preconditioner")
    print("m  preconditioned s  plain s  plain/pc  products/split pc  plain  max|dtheta|")
    softmax._hvp = counted
    limit = softmax.PC_MIN_INV_C
    try:
        with threadpool_limits(1):
            for m in args.sizes:
                draw, _ = split_seeds(0, "optdigits-10", m, range(args.splits))
                idx = draw_train_sets(data.y, m, draw)
                Z1, y = design.rows(idx), np.asarray(data.y)[idx]
                out = {}
                for label, bound in (("pc", limit), ("plain", np.inf)):
                    softmax.PC_MIN_INV_C = bound
                    count[0] = 0
                    t0 = time.process_time()
                    theta = fit_softmax(Z1, y, K, C=args.C).theta
                    out[label] = (time.process_time() - t0, count[0] / args.splits, theta)
                (t_pc, n_pc, th_pc), (t_pl, n_pl, th_pl) = out["pc"], out["plain"]
                print(f"{m}  {t_pc:.2f}  {t_pl:.2f}  {t_pl / t_pc:.1f}x  {n_pc:.0f}  {n_pl:.0f}  "
                      f"{np.abs(th_pc - th_pl).max():.1e}")
    finally:
        softmax._hvp = plain_hvp
        softmax.PC_MIN_INV_C = limit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 500])
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--preconditioner", action="store_true",
                    help="only: Newton-CG with and without its preconditioner")
    args = ap.parse_args()
    if args.preconditioner:
        preconditioner_table(args)
        return
    from sklearn.linear_model import LogisticRegression

    data = load_task(TaskSpec("optdigits-10"), DataSettings())
    design = get_design(data, "x")
    K = data.n_classes
    print(f"optdigits-10, C = {args.C:g}, {args.splits} splits, CPU seconds of all splits")
    print("m  newton-cg  dense  sklearn  dense/cg  sklearn/cg  max|dp|")
    with threadpool_limits(1):
        for m in args.sizes:
            draw, _ = split_seeds(0, "optdigits-10", m, range(args.splits))
            idx = draw_train_sets(data.y, m, draw)
            Z1, y = design.rows(idx), np.asarray(data.y)[idx]
            t0 = time.process_time()
            cg = fit_softmax(Z1, y, K, C=args.C).theta
            t_cg = time.process_time() - t0
            t0 = time.process_time()
            dense = dense_newton(Z1, y, K, args.C)
            t_dense = time.process_time() - t0
            t0 = time.process_time()
            for s in range(args.splits):
                LogisticRegression(C=args.C, max_iter=1000).fit(Z1[s, :, :-1], y[s])
            t_sk = time.process_time() - t0
            p_cg = _loss_probs(_scores(Z1, cg, K), np.zeros((args.splits, m, K)))[1]
            p_dense = _loss_probs(_scores(Z1, dense, K), np.zeros((args.splits, m, K)))[1]
            print(f"{m}  {t_cg:.2f}  {t_dense:.2f}  {t_sk:.2f}  {t_dense / t_cg:.1f}x  "
                  f"{t_sk / t_cg:.1f}x  {np.abs(p_cg - p_dense).max():.1e}")
        whole_splits(data, args)


def whole_splits(data, args) -> None:
    """Fit and held-out error of every split: ours (batched) against scikit-learn's loop."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    specs = {
        "nb": (models.ModelSpec("nb", "nb", models.resolve_options("nb", "nb", {})),
               lambda: GaussianNB()),
        "lr C=1": (models.ModelSpec("lr", "lr", models.resolve_options("lr", "lr", {"C": 1.0})),
                   lambda: LogisticRegression(C=1.0, max_iter=1000)),
    }
    X, y = np.asarray(data.X), np.asarray(data.y)
    print("whole splits (fit + held-out error), CPU seconds of all splits")
    print("m  model  ours  sklearn  sklearn/ours  mean error ours / sklearn")
    for m in args.sizes:
        draw, seeds = split_seeds(0, "optdigits-10", m, range(args.splits))
        idx = draw_train_sets(y, m, draw)
        for name, (spec, make) in specs.items():
            t0 = time.process_time()
            ours = models.score_splits(spec, data, idx, seeds)["error"]
            t_ours = time.process_time() - t0
            t0 = time.process_time()
            errs = []
            for s in range(args.splits):
                test = np.setdiff1d(np.arange(len(y)), idx[s])
                model = make().fit(X[idx[s]], y[idx[s]])
                errs.append(np.mean(model.predict(X[test]) != y[test]))
            t_sk = time.process_time() - t0
            print(f"{m}  {name}  {t_ours:.2f}  {t_sk:.2f}  {t_sk / t_ours:.1f}x  "
                  f"{ours.mean():.3f} / {np.mean(errs):.3f}")


if __name__ == "__main__":
    main()
