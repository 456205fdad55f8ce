"""Naive Bayes's statistics of each training set, compiled into one pass each.

``pooled_squares`` gives what ``nb.fit.fit_gaussian_nb`` made with numpy as four passes
over an (S, m, d) temporary (each row's class mean, the deviation, its square, the sum over
the rows): the same subtraction and product of each value, summed over the rows in their
order, as numpy sums over the rows of a C-ordered stack when d > 1 (an outer loop over the
rows, each row's d values added to the sums; with d = 1 numpy sums pairwise, and the caller
uses numpy), so the same bits (tests/unit/test_naive_bayes.py compares them).

``onehot_counts`` gives ``nb.fit.fit_categorical_nb``'s counts of each level, in all rows and
in class 1, without the flat (S m d) index and label arrays that two ``np.bincount`` calls
needed: counts of whole numbers, exact in any order, so the same values.
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


@compiled
def onehot_counts(codes, y1, offsets, n_values, K):
    """The rows of each split at each level, in all and in class 1: ``(all, ones, ok)``.

    codes : (S, m, d) int64 level codes; y1 : (S, m) float64 labels in {0, 1}; offsets,
    n_values : (d,) int64 (each attribute's first one-hot column, its number of levels);
    K : the one-hot columns. ``all`` and ``ones`` are (S, K) float64; ``ok`` is False if a
    code is outside ``0 .. n_values[j] - 1`` (then the counts are not to be used).
    """
    S, m, d = codes.shape
    count_all = np.zeros((S, K))
    count1 = np.zeros((S, K))
    ok = True
    for s in range(S):
        for i in range(m):
            one = y1[s, i]
            for j in range(d):
                c = codes[s, i, j]
                if c < 0 or c >= n_values[j]:
                    ok = False
                    continue
                col = offsets[j] + c
                count_all[s, col] += 1.0
                count1[s, col] += one
    return count_all, count1, ok
