"""Gaussian naive Bayes's pooled within-class sums of squares, compiled into one pass.

``pooled_squares`` gives what ``nb.fit.fit_gaussian_nb`` made with numpy as four passes
over an (S, m, d) temporary (each row's class mean, the deviation, its square, the sum over
the rows): the same subtraction and product of each value, summed over the rows in their
order, as numpy sums over the rows of a C-ordered stack when d > 1 (an outer loop over the
rows, each row's d values added to the sums; with d = 1 numpy sums pairwise, and the caller
uses numpy), so the same bits (tests/unit/test_naive_bayes.py compares them).
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def pooled_squares(X, y1, mu1, mu0):
    """``sum_i (X[s, i, j] - mu[s, j])^2`` over the rows i of each split s, with ``mu`` the
    row's class mean: ``mu1`` where ``y1[s, i] > 0``, else ``mu0``.

    X : (S, m, d) float64; y1 : (S, m) float64 labels; mu1, mu0 : (S, d). Returns (S, d).
    """
    S, m, d = X.shape
    ss = np.zeros((S, d))
    for s in range(S):
        for i in range(m):
            mu = mu1[s] if y1[s, i] > 0 else mu0[s]
            for j in range(d):
                dev = X[s, i, j] - mu[j]
                ss[s, j] += dev * dev
    return ss
