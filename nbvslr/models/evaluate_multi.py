"""Test error of many K-class linear rules at once.

A rule is ``theta`` of shape (K, D + 1) over a :class:`~nbvslr.models.design.Design`; it
predicts ``argmax_k Z1 @ theta_k``. As for two classes (``evaluate``),

    test mistakes = mistakes on all N rows - mistakes on the split's own m training rows,

and the mistakes on all rows come from one ``(U, D + 1) @ (D + 1, n K)`` product over the U
distinct rows, made in tiles of rules; a split's training rows are counted from the same
tile (their distinct rows' scores), so there is no second product.

Ties. The top classes of a row are those whose score is within ``tau = 1e-10 * ||theta||_1``
of the largest (the same band as for two classes). A tie among t top classes counts
``(t - 1) / t`` of an error when the true class is among them (t = 2 gives the binary
half) and 1 otherwise; a row with one top class counts 0 or 1. So a distinct row u of the
design, holding ``c_uk`` rows of class k, contributes ``n_u - sum_{k top} c_uk / t_u``.
Each tile of scores is counted by one compiled pass (``kernels.classes``), which adds the
rows in the order numpy's sum over them would.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.design import Design
from nbvslr.models.evaluate import DIRECTION_RTOL, TIE_RTOL

#: Entries of one tile of scores (rows x rules x K): 16 MB. On optdigits-10 (5,620 rows,
#: 37 rules a tile) the product and the counts together ran as fast as with 18 rules and
#: faster than with 74, whose product alone is quicker but whose tile the counts then read
#: from memory rather than cache (benchmarks/RESULTS.md, "Multiclass").
TILE = 1 << 21

_COUNTS: weakref.WeakKeyDictionary[Design, np.ndarray] = weakref.WeakKeyDictionary()


def class_counts(design: Design, y: np.ndarray, n_classes: int) -> np.ndarray:
    """``c`` (U, K): how many rows of each class each distinct row of ``design`` stands for
    (cached with the design)."""
    if design not in _COUNTS:
        c = np.zeros((design.unique_Z1.shape[0], n_classes))
        np.add.at(c, (design.row_to_unique, np.asarray(y, dtype=np.int64)), 1.0)
        _COUNTS[design] = c
    return _COUNTS[design]


def _band(theta: np.ndarray) -> np.ndarray:
    """``tau`` per rule (n,), positive even for theta = 0 (every class then ties)."""
    return np.maximum(TIE_RTOL * np.abs(theta).sum(axis=(1, 2)), 1e-300)


def _count(
    design: Design, data: Dataset, K: int, tau: np.ndarray, train_idx: np.ndarray | None,
    tile: Callable[[int, int], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes of n rules on all rows and on their training rows (n,) each, from their
    scores on the design's U distinct rows, ``tile(lo, hi)`` (U, hi - lo, K) for the rules
    ``lo:hi``; tie bands ``tau`` (n,)."""
    # compiled (numba) where it runs: a process that only plans and writes never loads it
    from nbvslr.kernels.classes import add_correct, add_train_correct

    n = tau.shape[0]
    counts = class_counts(design, data.y, K)  # (U, K)
    U = design.unique_Z1.shape[0]
    correct = np.zeros(n)
    train_correct = np.zeros(n)
    if train_idx is not None:
        idx = np.asarray(train_idx, dtype=np.int64)  # (n, m)
        rows = design.row_to_unique[idx].astype(np.int64)  # (n, m) among the U rows
        labels = np.asarray(data.y, dtype=np.int64)[idx]  # (n, m)
    cols = max(1, min(n, TILE // max(1, U * K)))
    for lo in range(0, n, cols):
        hi = min(n, lo + cols)
        s = tile(lo, hi)
        add_correct(s, counts, tau[lo:hi], correct[lo:hi])
        if train_idx is not None:
            add_train_correct(s, rows[lo:hi], labels[lo:hi], tau[lo:hi], train_correct[lo:hi])
    all_rows = design.n_rows - correct
    train_rows = np.zeros(n)
    if train_idx is not None:
        train_rows = idx.shape[1] - train_correct
    return all_rows, train_rows


def count_mistakes_multi(
    design: Design, data: Dataset, theta: np.ndarray, train_idx: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes of each rule on all N rows and on its own training rows.

    Parameters
    ----------
    design : Design
    data : Dataset
        Its labels ``0 .. K - 1``.
    theta : ndarray of shape (n, K, D + 1)
    train_idx : ndarray of shape (n, m) or None

    Returns
    -------
    all_rows, train_rows : ndarray of shape (n,)
        Ties count as the module docstring says.
    """
    theta = np.asarray(theta, dtype=np.float64)
    n, K, P = theta.shape
    Zu = design.unique_Z1  # (U, P)
    U = Zu.shape[0]
    return _count(design, data, K, _band(theta), train_idx,
                  lambda lo, hi: (Zu @ theta[lo:hi].reshape(-1, P).T).reshape(U, hi - lo, K))


def heldout_errors_multi(
    design: Design, data: Dataset, theta: np.ndarray, train_idx: np.ndarray
) -> np.ndarray:
    """0-1 error of each rule (n, K, D + 1) on the rows outside its training set (n,)."""
    train_idx = np.asarray(train_idx)
    all_rows, train_rows = count_mistakes_multi(design, data, theta, train_idx)
    return (all_rows - train_rows) / (design.n_rows - train_idx.shape[1])


def count_mistakes_multi_lex(
    design: Design, data: Dataset, directions: np.ndarray, theta: np.ndarray,
    train_idx: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``count_mistakes_multi`` of lexicographic K-class rules (softmax LR's rule for a
    quasi-separated training set, ``separation_multi``): a row's candidate classes are
    those of the largest score under ``directions`` (n, K, D + 1), within
    ``evaluate.DIRECTION_RTOL * ||D||_1``; among them the rule ``theta`` (n, K, D + 1)
    decides, ties as in the module docstring. Returns the mistakes on all rows and on each
    rule's training rows (n,) each.

    The two scores are folded into one tile: a class outside the candidates gets a score
    below the candidates' largest by more than the tie band, so the counts of
    ``count_mistakes_multi`` read the lexicographic rule.
    """
    theta = np.asarray(theta, dtype=np.float64)
    directions = np.asarray(directions, dtype=np.float64)
    n, K, P = theta.shape
    Zu = design.unique_Z1  # (U, P)
    U = Zu.shape[0]
    tau = _band(theta)  # (n,)
    tau_v = np.maximum(DIRECTION_RTOL * np.abs(directions).sum(axis=(1, 2)), 1e-300)

    def tile(lo: int, hi: int) -> np.ndarray:
        sv = (Zu @ directions[lo:hi].reshape(-1, P).T).reshape(U, hi - lo, K)
        s = (Zu @ theta[lo:hi].reshape(-1, P).T).reshape(U, hi - lo, K)  # (U, c, K)
        cand = sv >= sv.max(axis=2, keepdims=True) - tau_v[None, lo:hi, None]
        top = np.where(cand, s, -np.inf).max(axis=2, keepdims=True)  # (U, c, 1)
        # below the candidates' largest by more than the band: never a top class
        return np.where(cand, s, top - 2.0 * tau[None, lo:hi, None] - (1.0 + np.abs(top)))

    return _count(design, data, K, tau, train_idx, tile)
