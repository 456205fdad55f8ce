"""``evaluate.count_mistakes``'s pass over a tile of scores, compiled into one loop.

A tile of scores (rows x models) is turned into predicted signs (+1, -1, or a tie within
``tau``) and summed against each row's weight. In numpy that is five passes over the tile
(scale, clip, truncate, replace the ties, a product with the weights); here it is one, while
the tile is in the CPU cache. The sums are sums of small integers, exact in any order, so the
counts are bit-identical to the numpy passes (tests/unit/test_evaluate.py compares them).
A model's mistakes on its own training rows are counted the same way, each row's score made
from the distinct rows in the loop (``train_row_agreement``) instead of from a gathered
stack of the training rows.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def _step(score, inv_tau, ties):
    """The predicted sign of one score: ``trunc(clip(score / tau, -1.5, 1.5))``, with a tie
    (0) replaced by ``ties``; nan stays nan."""
    v = score * inv_tau
    if v >= 1.0:
        return 1.0
    if v <= -1.0:
        return -1.0
    if v != v:
        return np.nan
    return ties


@compiled
def add_agreement(tile, inv_tau, weight, ties, agree):
    """``agree[c] += sum_r weight[r] * step(tile[r, c])``.

    tile : (R, C) float64 scores; inv_tau : (C,) ``1 / tau`` per model; weight : (R,)
    the rows' integer weights; ties : the sign of a tie; agree : (C,) updated in place.
    """
    R, C = tile.shape
    for r in range(R):
        w = weight[r]
        for c in range(C):
            agree[c] += w * _step(tile[r, c], inv_tau[c], ties)


@compiled
def train_row_agreement(Zu, rows, theta, inv_tau, sign, ties):
    """``sum_i sign[a, i] * step(Zu[rows[a, i]] @ theta[a])`` per model a (its training
    rows' agreement), each score summed here in order: Zu (U, P) the distinct rows, rows
    (A, m) int64 indices into them, theta (A, P), inv_tau (A,), sign (A, m); (A,)."""
    A, m = rows.shape
    P = Zu.shape[1]
    out = np.zeros(A)
    for a in range(A):
        t = inv_tau[a]
        th = theta[a]
        acc = 0.0
        for i in range(m):
            z = Zu[rows[a, i]]
            score = 0.0
            for j in range(P):
                score += z[j] * th[j]
            acc += sign[a, i] * _step(score, t, ties)
        out[a] = acc
    return out


@compiled
def train_row_agreement_sparse(indptr, cols, vals, rows, theta, inv_tau, sign, ties):
    """``train_row_agreement`` on distinct rows held by their non-zeros: row u's entries
    ``vals[indptr[u]:indptr[u + 1]]`` in columns ``cols[...]`` (increasing). Each score sums
    the non-zero terms in column order, which for a finite theta is the dense sum exactly (a
    zero term adds a signed zero, which changes no sum but the sign of a zero score, and a
    zero score is a tie either way); (A,)."""
    A, m = rows.shape
    out = np.zeros(A)
    for a in range(A):
        t = inv_tau[a]
        th = theta[a]
        acc = 0.0
        for i in range(m):
            u = rows[a, i]
            score = 0.0
            for k in range(indptr[u], indptr[u + 1]):
                score += vals[k] * th[cols[k]]
            acc += sign[a, i] * _step(score, t, ties)
        out[a] = acc
    return out
