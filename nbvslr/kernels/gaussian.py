"""The compiled passes of Gaussian discriminant analysis (``models.discriminant.gaussian``):
the rows' deviations from their class means, the mirror of a precision's triangle, and
QDA's weights of the products from a precision.

Each is the same arithmetic as the numpy steps it replaces, in the same order, so the
numbers are equal to the last bit (tests/unit/test_discriminant.py compares them): a
deviation is one subtraction; a mirror copies; a weight is a precision's entry times -1/2
or -1. They replace passes of numpy over the stacks (a one-hot product, a sort and gather
by class, fancy-indexed copies) by one loop each, while a block of splits is in the cache.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def class_deviations(X, y, mu, order, out):
    """``out[s, p] = X[s, i] - mu[s, y[s, i]]`` for the rows i of split s, placed at ``p = i``
    (``order`` False) or, ``order`` True, sorted by class, stably (class 0's rows first, in
    their order): what ``numpy.argsort(y, kind="stable")`` then a gather gives.

    X : (S, m, d) float64; y : (S, m) int64 labels 0 .. K - 1; mu : (S, K, d) the class
    means; out : (S, m, d), filled.
    """
    S, m, d = X.shape
    K = mu.shape[1]
    start = np.empty(K, dtype=np.int64)
    for s in range(S):
        if order:
            start[:] = 0
            for i in range(m):
                start[y[s, i]] += 1
            acc = 0
            for k in range(K):
                n_k = start[k]
                start[k] = acc
                acc += n_k
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
