"""``evaluate.count_mistakes``'s pass over a tile of scores, compiled into one loop.

A tile of scores (rows x models) is turned into predicted signs (+1, -1, or a tie within
``tau``) and summed against each row's weight. In numpy that is five passes over the tile
(scale, clip, truncate, replace the ties, a product with the weights); here it is one, while
the tile is in the CPU cache. The sums are sums of small integers, exact in any order, so the
counts are bit-identical to the numpy passes (tests/unit/test_evaluate.py compares them).
A model's mistakes on its own training rows are counted the same way, from the same tiles
(``add_train_agreement``: a training row is one of the distinct rows, so its score is in the
tile that holds that row), or, without tiles, each row's score made from the distinct rows
in the loop (``train_row_agreement``) instead of from a gathered stack of the training rows.
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
def add_lex_agreement(sv, st, tau_v, tau, inv_tau, weight, ties, agree):
    """``add_agreement`` of lexicographic rules (``evaluate.count_mistakes_lex``): the score
    of row r under model c is ``sign(sv[r, c]) * 2 * tau[c]`` where ``|sv[r, c]| > tau_v[c]``
    (the direction decides), else ``st[r, c]``.

    sv, st : (R, C) float64 scores under the directions and under theta; tau_v, tau,
    inv_tau : (C,) the direction's zero band, theta's tie band and its inverse; weight (R,),
    ties and agree (C,) as in ``add_agreement``. The same folded score, then the same step,
    as the numpy passes (``np.where``, ``np.sign``) gave.
    """
    R, C = sv.shape
    for r in range(R):
        w = weight[r]
        for c in range(C):
            score = _lex_score(sv[r, c], st[r, c], tau_v[c], tau[c])
            agree[c] += w * _step(score, inv_tau[c], ties)


@compiled
def _lex_score(v, t, tau_v, tau):
    """The folded score of ``add_lex_agreement``: ``sign(v) 2 tau`` where ``|v| > tau_v``
    (the direction decides), else ``t``."""
    if abs(v) > tau_v:
        return (1.0 if v > 0.0 else -1.0) * 2.0 * tau
    return t


@compiled
def add_lex_train_agreement(sv, st, r0, rows, sign, tau_v, tau, inv_tau, ties, agree):
    """``add_train_agreement`` of lexicographic rules: ``agree[c] += sum_i sign[c, i] *
    step(score)`` over the training rows i of model c whose distinct row ``rows[c, i]`` is
    among the tiles' rows ``r0 .. r0 + R - 1``, the score folded from the two tiles (R, C)
    ``sv`` and ``st`` as ``add_lex_agreement`` folds it (tau_v, tau, inv_tau (C,) as
    there); rows (C, m) int64, sign (C, m), agree (C,) updated in place."""
    R, C = sv.shape
    m = rows.shape[1]
    for c in range(C):
        t = inv_tau[c]
        acc = 0.0
        for i in range(m):
            u = rows[c, i] - r0
            if 0 <= u < R:
                score = _lex_score(sv[u, c], st[u, c], tau_v[c], tau[c])
                acc += sign[c, i] * _step(score, t, ties)
        agree[c] += acc


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
def add_train_agreement(tile, r0, rows, sign, inv_tau, ties, agree):
    """``agree[c] += sum_i sign[c, i] * step(tile[rows[c, i] - r0, c])`` over the training
    rows i of model c whose distinct row ``rows[c, i]`` is among the tile's rows
    ``r0 .. r0 + R - 1``: tile (R, C) the scores of those rows under C models, rows (C, m)
    int64 indices into the distinct rows, sign (C, m), inv_tau (C,), agree (C,) updated in
    place. Over the tiles of every row, each training row is counted once."""
    R, C = tile.shape
    m = rows.shape[1]
    for c in range(C):
        t = inv_tau[c]
        acc = 0.0
        for i in range(m):
            u = rows[c, i] - r0
            if 0 <= u < R:
                acc += sign[c, i] * _step(tile[u, c], t, ties)
        agree[c] += acc
