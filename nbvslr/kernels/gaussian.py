"""The compiled passes of Gaussian discriminant analysis (``models.discriminant.gaussian``):
the class counts and means, the rows' deviations from them and naive Bayes's largest
feature variance, the mirror of a precision's triangle, and QDA's weights of the products
from a precision.

Each is the same arithmetic as the numpy steps it replaces, in the same order, so the
numbers are equal to the last bit (tests/unit/test_discriminant.py compares them): a
class mean sums its rows in row order, as OpenBLAS's product of the one-hot labels and the
rows does (each entry one multiply-add a row, 0 or 1 times the row's value); a variance
sums in row order as numpy's sum over the rows' axis of an (S, m, d) stack does for d > 1
(as ``kernels.classes.largest_variance``); a deviation is one subtraction; a mirror
copies; a weight is a precision's entry times -1/2 or -1. They replace passes of numpy
over the stacks (a gathered copy of the rows, a one-hot product, a sort and gather by
class, a variance, fancy-indexed copies) by one loop each, while a block of splits is in
the cache.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def class_stats(X, rows, y, n, mu, order, out, v_max):
    """Each split's class counts and means, its rows' deviations from their own class mean,
    and (``v_max`` of S entries) naive Bayes's largest feature variance, in one pass over
    its rows for the sums and one for the deviations, read from the data's rows (no
    gathered copy).

    X : (N, d) float64 the data's rows; rows : (S, m) int64 each split's training rows;
    y : (S, m) int64 their labels 0 .. K - 1, every class present. Filled: n (S, K) the
    counts; mu (S, K, d) the means, each the sum of its class's rows in row order divided
    by the count (what the one-hot product ``Y' X / n`` of OpenBLAS gives, to the last
    bit); out (S, m, d): ``X[rows[s, i]] - mu[s, y[s, i]]`` at row ``p = i`` (``order``
    False) or, ``order`` True, sorted by class, stably (class 0's rows first, in their
    order: what ``numpy.argsort(y, kind="stable")`` then a gather gives); v_max (S,), when
    it has S entries (else (0,), skipped): ``X[rows[s]].var(axis=0).max()`` as numpy makes
    it for d > 1 (the mean, then the mean square deviation, each a sum over the rows in row
    order; a NaN propagates).
    """
    S, m = rows.shape
    d = X.shape[1]
    K = mu.shape[1]
    variance = v_max.shape[0] == S
    start = np.empty(K, dtype=np.int64)
    total = np.empty(d)
    squares = np.empty(d)
    for s in range(S):
        for k in range(K):
            n[s, k] = 0.0
            for j in range(d):
                mu[s, k, j] = 0.0
        total[:] = 0.0
        for i in range(m):
            r = rows[s, i]
            k = y[s, i]
            n[s, k] += 1.0
            for j in range(d):
                mu[s, k, j] += X[r, j]
                total[j] += X[r, j]
        for k in range(K):
            for j in range(d):
                mu[s, k, j] = mu[s, k, j] / n[s, k]
        for j in range(d):
            total[j] = total[j] / m  # the mean of every row
        if order:
            acc = 0
            for k in range(K):
                start[k] = acc
                acc += int(n[s, k])
        squares[:] = 0.0
        for i in range(m):
            r = rows[s, i]
            k = y[s, i]
            p = i
            if order:
                p = start[k]
                start[k] += 1
            for j in range(d):
                out[s, p, j] = X[r, j] - mu[s, k, j]
                t = X[r, j] - total[j]
                squares[j] += t * t
        if variance:
            best = squares[0] / m
            for j in range(1, d):
                v = squares[j] / m
                if v > best or np.isnan(v):
                    best = v
                if np.isnan(best):
                    break
            v_max[s] = best


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
