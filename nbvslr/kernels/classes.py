"""The compiled pass of ``nbvslr.models.evaluate_multi``: rows counted correct by K-class
rules, from a tile of their scores.

A row's top classes are those whose score is within ``tau`` of its largest; a row of
``c_k`` rows of class k (a distinct row of the design standing for several) counts
``sum_{k top} c_k / t`` correct, t the number of top classes. The sums over rows run in row
order, one rule at a time, as numpy's sum over the rows' axis adds them, so the counts are
the same numbers to the last bit.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def add_correct(scores, counts, tau, out):
    """``out[n] += sum_u sum_{k top} counts[u, k] / t_un`` for every rule n.

    scores : (R, n, K) the scores of R rows under n rules; counts : (R, K) the rows of each
    class each row stands for; tau : (n,) the tie band of each rule; out : (n,) added to.
    """
    R, n, K = scores.shape
    for u in range(R):
        for c in range(n):
            top = scores[u, c, 0]
            for k in range(1, K):
                if scores[u, c, k] > top:
                    top = scores[u, c, k]
            low = top - tau[c]
            t = 0
            hit = 0.0
            for k in range(K):
                if scores[u, c, k] >= low:
                    t += 1
                    hit += counts[u, k]
            out[c] += hit / t


@compiled
def train_correct(scores, labels, tau):
    """Training rows counted correct per rule: ``sum_i [y_i top] / t_i`` over the m rows.

    scores : (m, n, K); labels : (n, m) int64; tau : (n,). Returns (n,).
    """
    m, n, K = scores.shape
    out = np.zeros(n)
    for i in range(m):
        for c in range(n):
            top = scores[i, c, 0]
            for k in range(1, K):
                if scores[i, c, k] > top:
                    top = scores[i, c, k]
            low = top - tau[c]
            t = 0
            for k in range(K):
                if scores[i, c, k] >= low:
                    t += 1
            hit = 1.0 if scores[i, c, labels[c, i]] >= low else 0.0
            out[c] += hit / t
    return out
