"""The compiled passes of Gaussian discriminant analysis (``models.discriminant.gaussian``):
the class counts and means and the rows' deviations from them, the mirror of a precision's
triangle, and QDA's weights of the products from a precision.

Each is the same arithmetic as the numpy steps it replaces, in the same order, so the
numbers are equal to the last bit (tests/unit/test_discriminant.py compares them): a
class mean sums its rows in row order, as OpenBLAS's product of the one-hot labels and the
rows does (each entry one multiply-add a row, 0 or 1 times the row's value); a deviation is
one subtraction; a mirror copies; a weight is a precision's entry times -1/2
or -1. They replace passes of numpy over the stacks (a one-hot product, a sort and gather
by class, fancy-indexed copies) by one loop each, while a block of splits is in the cache.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def class_stats(X, y, n, mu, order, out):
    """Each split's class counts and means, and its rows' deviations from their own class
    mean, in one pass over the rows for the means and one for the deviations.

    X : (S, m, d) float64; y : (S, m) int64 labels 0 .. K - 1, every class present.
    Filled: n (S, K) the counts; mu (S, K, d) the means, each the sum of its class's rows
    in row order divided by the count (what the one-hot product ``Y' X / n`` of OpenBLAS
    gives, to the last bit); out (S, m, d): ``X[s, i] - mu[s, y[s, i]]`` at row ``p = i``
    (``order`` False) or, ``order`` True, sorted by class, stably (class 0's rows first, in
    their order: what ``numpy.argsort(y, kind="stable")`` then a gather gives).
    """
    S, m, d = X.shape
    K = mu.shape[1]
    start = np.empty(K, dtype=np.int64)
    for s in range(S):
        for k in range(K):
            n[s, k] = 0.0
            for j in range(d):
                mu[s, k, j] = 0.0
        for i in range(m):
            k = y[s, i]
            n[s, k] += 1.0
            for j in range(d):
                mu[s, k, j] += X[s, i, j]
        for k in range(K):
            for j in range(d):
                mu[s, k, j] = mu[s, k, j] / n[s, k]
        if order:
            acc = 0
            for k in range(K):
                start[k] = acc
                acc += int(n[s, k])
        for i in range(m):
            k = y[s, i]
            p = i
            if order:
                p = start[k]
                start[k] += 1
            for j in range(d):
                out[s, p, j] = X[s, i, j] - mu[s, k, j]


@compiled
def mirror_lower(P):
    """Copy the strict lower triangle of each matrix of a stack (n, d, d) onto its upper
    one, in place: a symmetric matrix of which only the lower triangle was written."""
    n, d, _ = P.shape
    for a in range(n):
        for i in range(d):
            for j in range(i):
                P[a, j, i] = P[a, i, j]



@compiled
def quadratic_weights(P, out, first):
    """QDA's weights of the products ``x_i x_j`` (i <= j, ``numpy.triu_indices`` order) from
    each precision of a stack (n, d, d): ``-P[i, i] / 2`` and ``-P[i, j]``, written to
    ``out[a, first:first + d (d + 1) / 2]`` of out (n, width)."""
    n, d, _ = P.shape
    for a in range(n):
        t = first
        for i in range(d):
            out[a, t] = -0.5 * P[a, i, i]
            t += 1
            for j in range(i + 1, d):
                out[a, t] = -1.0 * P[a, i, j]
                t += 1
