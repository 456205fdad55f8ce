"""How close is softmax LR's rule for a quasi-separated training set to the penalised fits?

Usage::

    python benchmarks/quasi_multiclass.py [--splits 40] [--sizes 40 80] [--C 1e6 1e9 1e12]

On a synthetic discrete task (400 rows, six attributes, rare levels seen with one class or
two: the task of ``tests/unit/test_separation_multi.py``), for each size m: that many
training sets, their quasi-separated ones detected (``separation_multi``), and each quasi
split's lexicographic rule (the direction D*, then the overlap fit) against the L2-penalised
softmax fit (Newton-CG, tol 1e-14) at each C: the share of the task's rows the two classify
otherwise, split by what decides the row under the rule (the direction alone, or the overlap
fit among several candidates). Then the same for the two-class rule (``separation``) on the
task made two-class (class 1 against the rest). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models import separation, separation_multi
from nbvslr.models.design import get_design, level_directions
from nbvslr.models.evaluate import DIRECTION_RTOL, TIE_RTOL
from nbvslr.models.lr.newton import fit_newton
from nbvslr.models.lr.softmax import fit_softmax


def task(K: int = 3, n: int = 400, seed: int = 3) -> Dataset:
    rng = np.random.default_rng(seed)
    n_values = (3, 4, 5, 6, 3, 4)
    X = np.stack([rng.choice(k, n, p=np.r_[np.full(k - 1, 0.9 / (k - 1)), 0.1])
                  for k in n_values], axis=1)
    w = rng.standard_normal((len(n_values), K))
    score = sum(np.where(X[:, [j]] == 1, w[j], 0.0) for j in range(len(n_values)))
    y = (score + 3.0 * rng.standard_normal((n, K))).argmax(axis=1).astype(np.int8)
    y[X[:, 2] == 4] = 1
    y[(X[:, 3] == 5) & (y == 1)] = 0
    return Dataset(name="q", title="q", X=X, y=y, kind="discrete", n_values=n_values,
                   classes=tuple("abcdefgh"[:K]))


def train_sets(y: np.ndarray, K: int, m: int, S: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < S:
        idx = np.sort(rng.choice(y.size, m, replace=False))
        if np.unique(y[idx]).size == K:
            out.append(idx)
    return np.array(out)


def classes(Zu: np.ndarray, D: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lexicographic class of each row (-1 a tie) and its number of candidates."""
    sv, s = Zu @ D.T, Zu @ W.T
    cand = sv >= sv.max(axis=1, keepdims=True) - max(DIRECTION_RTOL * np.abs(D).sum(), 1e-300)
    s = np.where(cand, s, -np.inf)
    top = (s >= s.max(axis=1, keepdims=True) - TIE_RTOL * np.abs(W).sum()).sum(axis=1)
    return np.where(top > 1, -1, s.argmax(axis=1)), cand.sum(axis=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=40)
    ap.add_argument("--sizes", type=int, nargs="+", default=[40, 80])
    ap.add_argument("--C", type=float, nargs="+", default=[1e6, 1e9, 1e12])
    args = ap.parse_args()
    data = task(3)
    design = get_design(data, "onehot_ref")
    extra = level_directions(data, "onehot_ref")
    Zu = design.unique_Z1
    w = np.bincount(design.row_to_unique, minlength=Zu.shape[0])  # rows per distinct row
    print("K = 3: share of rows classified otherwise than the penalised fit")
    for m in args.sizes:
        idx = train_sets(data.y, 3, m, args.splits, seed=m)
        Z1, y = design.rows(idx), np.asarray(data.y)[idx]
        found = separation_multi.detect_multi(Z1, y, 3, extra=extra)
        q = np.flatnonzero(found.code == separation.QUASI)
        for C in args.C:
            pen = fit_softmax(Z1[q], y[q], 3, C=C, tol=1e-14, max_iter=3000)
            one = several = 0.0
            for n, a in enumerate(q):
                ours, cand = classes(Zu, found.direction[a], found.theta[a])
                theirs, _ = classes(Zu, np.zeros_like(pen.theta[n]), pen.theta[n])
                off = ours != theirs
                one += (w * (off & (cand == 1))).sum()
                several += (w * (off & (cand > 1))).sum()
            total = w.sum() * q.size
            print(f"  m = {m:3d}  {q.size:3d} quasi splits  C = {C:.0e}:  direction decides "
                  f"{100 * one / total:.2f} %, overlap fit decides {100 * several / total:.2f} %")
    two = dataclasses.replace(data, classes=(), y=(data.y == 1).astype(np.int8))
    design = get_design(two, "onehot_ref")
    Zu = design.unique_Z1
    print("K = 2 (class b against the rest), the two-class rule")
    for m in args.sizes:
        idx = train_sets(two.y, 2, m, args.splits, seed=m)
        Z1, sign = design.rows(idx), design.sign[idx]
        found = separation.detect(Z1, sign, extra=level_directions(two, "onehot_ref"))
        q = np.flatnonzero(found.code == separation.QUASI)
        for C in args.C:
            pen = fit_newton(Z1[q], sign[q], C=C, tol=1e-14, max_iter=3000)
            one = several = 0.0
            for n, a in enumerate(q):
                sv, st = Zu @ found.direction[a], Zu @ found.theta[a]
                decides = np.abs(sv) > DIRECTION_RTOL * np.abs(found.direction[a]).sum()
                off = np.where(decides, sv > 0, st > 0) != (Zu @ pen.theta[n] > 0)
                one += (w * (off & decides)).sum()
                several += (w * (off & ~decides)).sum()
            total = w.sum() * q.size
            print(f"  m = {m:3d}  {q.size:3d} quasi splits  C = {C:.0e}:  direction decides "
                  f"{100 * one / total:.2f} %, overlap fit decides {100 * several / total:.2f} %")


if __name__ == "__main__":
    main()
