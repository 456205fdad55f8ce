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
            top = scores[u, c, 0]
            for k in range(1, K):
                if scores[u, c, k] > top:
                    top = scores[u, c, k]
            low = top - tau[c]
            t = 0
            for k in range(K):
                if scores[u, c, k] >= low:
                    t += 1
            hit = 1.0 if scores[u, c, labels[c, i]] >= low else 0.0
            acc += hit / t
        out[c] += acc
