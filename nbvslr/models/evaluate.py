"""Test error of many linear models at once.

Every model is a ``theta`` of length ``D + 1`` over a :class:`~nbvslr.models.design.Design`.
The test set of a split is every row of the dataset except its training rows, so

    test mistakes = mistakes on all N rows - mistakes on the split's own m training rows,

and the mistakes on all rows of all models come from one ``(U, D+1) @ (D+1, n)`` product over
the U distinct rows (made in cache-sized tiles).

Ties. A score of 0 predicts neither class and counts as half an error. "0" means zero up to
rounding: a score with ``|score| <= tau = 1e-10 * ||theta||_1`` is a tie, any other counts by
its sign, so a row counts exactly 0, 1/2 or 1 mistake. The band is there because ties that are
exact in real arithmetic (common for categorical NB at small m, where log-odds of small-count
ratios cancel) would otherwise fall on either side depending on the order of a floating-point
sum.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nbvslr.models.design import Design

#: Scores within TIE_RTOL * ||theta||_1 of zero count as ties (half an error).
TIE_RTOL = 1e-10

#: Entries of one tile of scores (rows x models), and the most models in a tile.
TILE = 1 << 17
MODEL_TILE = 256


def _tie_band(theta: np.ndarray) -> np.ndarray:
    """``tau`` per model, shape (n,); positive even for theta = 0 (then every score ties)."""
    # guard: a tiny floor, so that theta = 0 makes every score a tie
    return np.maximum(TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)


def count_mistakes(
    design: Design, theta: np.ndarray, train_idx: np.ndarray | None, ties: float = 0.0,
    on_tile: Callable[[np.ndarray, int, int, int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes of each model on all rows and on its own training rows.

    Parameters
    ----------
    design : Design
    theta : ndarray of shape (n, D + 1)
        One linear model per row (intercept last).
    train_idx : ndarray of shape (n, m) or None
        The training rows of each model's split (distinct row indices), or None.
    ties : {0.0, 1.0, -1.0}
        The prediction of a tied score: 0 counts half an error; +1 predicts class 1, -1
        class 0.
    on_tile : callable, optional
        Called with each tile of scores while it is in the cache, ``on_tile(tile, r0, r1,
        lo, hi)``: the scores (r1 - r0, hi - lo) of distinct rows ``r0 .. r1 - 1`` under
        models ``lo .. hi - 1`` (``probabilities.TileSums`` sums the log-loss from them).

    Returns
    -------
    all_rows : ndarray of shape (n,)
        Mistakes on all N rows (ties count one half).
    train_rows : ndarray of shape (n,)
        Mistakes on the m training rows (zeros when ``train_idx`` is None).

    The (U, n) matrix of scores is never held at once: it is made in tiles of about
    ``TILE`` entries (a few MB, so each tile stays in the CPU cache while one compiled pass,
    ``kernels.steps.add_agreement``, turns it into signs and sums them). A predicted sign is
    ``trunc(clip(score / tau, -1.5, 1.5))``: exactly -1, 0 or +1, so every sum is a sum of
    small integers, exact whatever the order (bit-identical whatever the chunking of rows
    or models). A training row is one of the distinct rows: its score is read from the tile
    that holds it (``kernels.steps.add_train_agreement``), so a row counts the same among
    all rows and among the training rows, and no per-split product is made.
    """
    # compiled (numba) where it runs: a process that only plans and writes never loads it
    from nbvslr.kernels.steps import add_agreement, add_train_agreement

    theta = np.asarray(theta, dtype=np.float64)
    n = theta.shape[0]
    Zu = design.unique_Z1  # (U, D+1)
    U = Zu.shape[0]
    N = design.n_rows
    inv_tau = 1.0 / _tie_band(theta)  # (n,)
    agree = np.zeros(n)  # (n,) sum over rows of sign * predicted sign
    agree_tr = np.zeros(n)  # (n,) the same over each model's own training rows
    if train_idx is not None:
        idx = np.asarray(train_idx, dtype=np.int64)  # (n, m)
        train_rows_u = design.row_to_unique[idx].astype(np.int64)  # (n, m) distinct rows
        train_sign = np.ascontiguousarray(design.sign[idx], dtype=np.float64)  # (n, m)
    cols = min(n, MODEL_TILE) if n else 1
    rows = max(1, TILE // max(cols, 1))
    thT = np.ascontiguousarray(theta.T)  # (D+1, n)
    for lo in range(0, n, cols):
        hi = min(n, lo + cols)
        for r0 in range(0, U, rows):
            r1 = min(U, r0 + rows)
            tile = Zu[r0:r1] @ thT[:, lo:hi]  # (rows, cols)
            add_agreement(tile, inv_tau[lo:hi], design.unique_weight[r0:r1], ties, agree[lo:hi])
            if train_idx is not None:  # the training rows' scores: in the same tile
                add_train_agreement(tile, r0, train_rows_u[lo:hi], train_sign[lo:hi],
                                    inv_tau[lo:hi], ties, agree_tr[lo:hi])
            if on_tile is not None:
                on_tile(tile, r0, r1, lo, hi)
    all_rows = 0.5 * (N - agree)
    train_rows = np.zeros(n)
    if train_idx is not None:
        train_rows = 0.5 * (idx.shape[1] - agree_tr)
    return all_rows, train_rows


def heldout_errors(
    design: Design, theta: np.ndarray, train_idx: np.ndarray, ties: float = 0.0
) -> np.ndarray:
    """0-1 error of each model on the rows outside its training set.

    Parameters
    ----------
    design : Design
    theta : ndarray of shape (n, D + 1)
    train_idx : ndarray of shape (n, m)
        Distinct training row indices of each model.
    ties : float
        See ``count_mistakes``.

    Returns
    -------
    ndarray of shape (n,)
        Test error in [0, 1] (ties count one half).
    """
    train_idx = np.asarray(train_idx)
    all_rows, train_rows = count_mistakes(design, theta, train_idx, ties)
    return (all_rows - train_rows) / (design.n_rows - train_idx.shape[1])



#: A score under a quasi fit's direction with ``|x . v| <= DIRECTION_RTOL * ||v||_1`` is 0
#: (the row lies in the span of the overlap rows, where ``x . v`` is 0 up to rounding).
DIRECTION_RTOL = 1e-9


def count_mistakes_lex(
    design: Design, directions: np.ndarray, theta: np.ndarray, train_idx: np.ndarray,
    ties: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes on all rows and on each split's training rows, (n,) each, of lexicographic
    rules: a row is predicted by the sign of its score under ``directions`` (n, D + 1)
    where that score is not 0 (beyond ``DIRECTION_RTOL``), else by ``theta`` (n, D + 1) as
    ``count_mistakes`` does (ties by ``ties``).

    The two scores are folded into one: where the direction decides, the score is replaced
    by ``+-2 tau`` (tau: theta's tie band), which ``count_mistakes``'s step reads as that sign.
    As in ``count_mistakes``, a training row's scores are read from the tiles that hold its
    distinct row, so a row counts the same among all rows and among the training rows.
    """
    from nbvslr.kernels.steps import add_lex_agreement, add_lex_train_agreement

    theta = np.asarray(theta, dtype=np.float64)
    directions = np.asarray(directions, dtype=np.float64)
    idx = np.asarray(train_idx, dtype=np.int64)
    n = theta.shape[0]
    tau = _tie_band(theta)  # (n,)
    inv_tau = 1.0 / tau
    tau_v = np.maximum(DIRECTION_RTOL * np.abs(directions).sum(axis=1), 1e-300)  # (n,)
    Zu = design.unique_Z1
    U = Zu.shape[0]
    m = idx.shape[1]
    agree = np.zeros(n)
    agree_tr = np.zeros(n)
    if m:
        train_rows_u = design.row_to_unique[idx].astype(np.int64)  # (n, m) distinct rows
        train_sign = np.ascontiguousarray(design.sign[idx], dtype=np.float64)  # (n, m)
    cols = min(n, MODEL_TILE) if n else 1
    rows = max(1, TILE // max(cols, 1))
    for lo in range(0, n, cols):
        hi = min(n, lo + cols)
        for r0 in range(0, U, rows):
            r1 = min(U, r0 + rows)
            # the two tiles of scores (r, hi - lo), folded and counted in one compiled pass
            Zr = Zu[r0:r1]
            sv, st = Zr @ directions[lo:hi].T, Zr @ theta[lo:hi].T
            add_lex_agreement(sv, st, tau_v[lo:hi], tau[lo:hi], inv_tau[lo:hi],
                              design.unique_weight[r0:r1], ties, agree[lo:hi])
            if m:  # the training rows' scores: in the same tiles
                add_lex_train_agreement(sv, st, r0, train_rows_u[lo:hi], train_sign[lo:hi],
                                        tau_v[lo:hi], tau[lo:hi], inv_tau[lo:hi], ties,
                                        agree_tr[lo:hi])
    return 0.5 * (design.n_rows - agree), 0.5 * (m - agree_tr) if m else np.zeros(n)
