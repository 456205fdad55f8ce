"""The compiled pass of ``nbvslr.models.evaluate_multi``: rows counted correct by K-class
rules, from a tile of their scores.

A row's top classes are those whose score is within ``tau`` of its largest; a row of
``c_k`` rows of class k (a distinct row of the design standing for several) counts
``sum_{k top} c_k / t`` correct, t the number of top classes. The sums over rows run in row
order, one rule at a time, as numpy's sum over the rows' axis adds them, so the counts are
the same numbers to the last bit. A split's training rows are counted from the same tile
of scores (their rows among the distinct rows), not from a second product.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def _band_low(row, tau):
    """The lowest score counted among a row's top classes: its largest score (of ``row``,
    (K,)) less the tie band ``tau``."""
    top = row[0]
    for k in range(1, row.shape[0]):
        if row[k] > top:
            top = row[k]
    return top - tau


@compiled
def add_correct(scores, counts, tau, out):
    """``out[n] += sum_u sum_{k top} counts[u, k] / t_un`` for every rule n.

    scores : (R, n, K) the scores of R rows under n rules; counts : (R, K) the rows of each
    class each row stands for; tau : (n,) the tie band of each rule; out : (n,) added to.
    """
    R, n, K = scores.shape
    for u in range(R):
        for c in range(n):
            low = _band_low(scores[u, c], tau[c])
            t = 0
            hit = 0.0
            for k in range(K):
                if scores[u, c, k] >= low:
                    t += 1
                    hit += counts[u, k]
            out[c] += hit / t


@compiled
def add_train_correct(scores, rows, labels, tau, out):
    """``out[c] += sum_i [y_i top] / t_i`` over the m training rows of every rule c, read
    from the rows' scores among all rows.

    scores : (R, n, K) the scores of the R distinct rows under n rules; rows : (n, m) int64
    each rule's training rows (indices into R); labels : (n, m) int64 their classes; tau :
    (n,); out : (n,) added to, the rows of each rule in order.
    """
    n, m = rows.shape
    K = scores.shape[2]
    for c in range(n):
        acc = 0.0
        for i in range(m):
            u = rows[c, i]
            low = _band_low(scores[u, c], tau[c])
            t = 0
            for k in range(K):
                if scores[u, c, k] >= low:
                    t += 1
            hit = 1.0 if scores[u, c, labels[c, i]] >= low else 0.0
            acc += hit / t
        out[c] += acc


@compiled
def largest_variance(X, out):
    """``out[s] = X[s].var(axis=0).max()`` for every training set s, numpy's own
    operations in numpy's order (the mean, then the mean square deviation, each a sum over
    the rows in row order), without its (S, m, d) temporaries. X : (S, m, d) C-ordered
    with d > 1 (numpy sums a lone feature's column pairwise instead); out : (S,)."""
    S, m, d = X.shape
    mean = np.empty(d)
    ss = np.empty(d)
    for s in range(S):
        mean[:] = 0.0
        ss[:] = 0.0
        for i in range(m):
            for j in range(d):
                mean[j] += X[s, i, j]
        for j in range(d):
            mean[j] /= m
        for i in range(m):
            for j in range(d):
                t = X[s, i, j] - mean[j]
                ss[j] += t * t
        best = ss[0] / m
        for j in range(1, d):
            v = ss[j] / m
            if v > best or np.isnan(v):
                best = v
            if np.isnan(best):
                break
        out[s] = best


@compiled
def within_squares(X, mu, y, out):
    """``out[s, j] = sum_i (X[s, i, j] - mu[s, y[s, i], j])^2``, the rows in row order (as
    numpy's sum over the rows' axis adds them for d > 1). X : (S, m, d); mu : (S, K, d)
    the class means; y : (S, m) int64; out : (S, d)."""
    S, m, d = X.shape
    for s in range(S):
        for j in range(d):
            out[s, j] = 0.0
        for i in range(m):
            k = y[s, i]
            for j in range(d):
                t = X[s, i, j] - mu[s, k, j]
                out[s, j] += t * t
