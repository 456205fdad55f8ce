"""Test error of many linear models at once.

Every model is a ``theta`` of length ``D + 1`` over a :class:`~nbvslr.models.design.Design`.
The test set of a split is every row of the dataset except its training rows, so

    test mistakes = mistakes on all N rows - mistakes on the split's own m training rows,

and the mistakes on all rows of all models come from one ``(U, D+1) @ (D+1, n)`` product over
the U distinct rows (chunked over models to bound memory).

Ties. A score of 0 predicts neither class and counts as half an error. "0" means zero up to
rounding: a score with ``|score| <= tau = 1e-10 * ||theta||_1`` is a tie, any other counts by
its sign, so a row counts exactly 0, 1/2 or 1 mistake. The band is there because ties that are
exact in real arithmetic (common for categorical NB at small m, where log-odds of small-count
ratios cancel) would otherwise fall on either side depending on the order of a floating-point
sum.
"""

from __future__ import annotations

import numpy as np

from nbvslr.models.design import Design

#: Scores within TIE_RTOL * ||theta||_1 of zero count as ties (half an error).
TIE_RTOL = 1e-10

#: Bytes of scores held at once.
SCORE_BYTES = 200e6


def _tie_band(theta: np.ndarray) -> np.ndarray:
    """``tau`` per model, shape (n,); positive even for theta = 0 (then every score ties)."""
    # guard: a tiny floor, so that theta = 0 makes every score a tie
    return np.maximum(TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)


def count_mistakes(
    design: Design, theta: np.ndarray, train_idx: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes of each model on all rows and on its own training rows.

    Parameters
    ----------
    design : Design
    theta : ndarray of shape (n, D + 1)
        One linear model per row (intercept last).
    train_idx : ndarray of shape (n, m) or None
        The training rows of each model's split (distinct row indices), or None.

    Returns
    -------
    all_rows : ndarray of shape (n,)
        Mistakes on all N rows (ties count one half).
    train_rows : ndarray of shape (n,)
        Mistakes on the m training rows (zeros when ``train_idx`` is None).
    """
    theta = np.asarray(theta, dtype=np.float64)
    n = theta.shape[0]
    U = design.unique_Z1.shape[0]
    N = design.n_rows
    all_rows = np.empty(n)
    train_rows = np.zeros(n)
    step = max(1, int(SCORE_BYTES // (8 * U)))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        th = theta[lo:hi]  # (c, D+1)
        tau = _tie_band(th)  # (c,)
        scores = design.unique_Z1 @ th.T  # (U, c)
        tie = np.abs(scores) <= tau  # (U, c)
        np.sign(scores, out=scores)  # (U, c) predicted sign
        scores[tie] = 0.0  # (U, c) in {-1, 0, 1}
        # sum over rows of sign * predicted sign = (#right - #wrong), ties count 0
        agree = design.unique_weight @ scores  # (c,)
        all_rows[lo:hi] = 0.5 * (N - agree)
        if train_idx is not None:
            idx = np.asarray(train_idx[lo:hi], dtype=np.int64)  # (c, m)
            u = design.row_to_unique[idx]  # (c, m)
            picked = scores[u, np.arange(hi - lo)[:, None]]  # (c, m)
            agree_tr = (design.sign[idx] * picked).sum(axis=1)  # (c,)
            train_rows[lo:hi] = 0.5 * (idx.shape[1] - agree_tr)
    return all_rows, train_rows


def heldout_errors(design: Design, theta: np.ndarray, train_idx: np.ndarray) -> np.ndarray:
    """0-1 error of each model on the rows outside its training set.

    Parameters
    ----------
    design : Design
    theta : ndarray of shape (n, D + 1)
    train_idx : ndarray of shape (n, m)
        Distinct training row indices of each model.

    Returns
    -------
    ndarray of shape (n,)
        Test error in [0, 1] (ties count one half).
    """
    train_idx = np.asarray(train_idx)
    all_rows, train_rows = count_mistakes(design, theta, train_idx)
    return (all_rows - train_rows) / (design.n_rows - train_idx.shape[1])

