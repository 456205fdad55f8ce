"""Test error of naive Bayes rules fitted by plain maximum likelihood (``smoothing: 0``),
whose probabilities may be 0.

A level of an attribute unseen in class y among the training rows has ``p(x_j = v | y) = 0``
there, so a row holding it has probability 0 in class y, whatever its other attributes. The
rules are still linear in the one-hot design, but some weights are infinite:

* two classes: the log-odds weight ``w = log p(v | 1) - log p(v | 0)`` of such a level is
  ``+inf`` (unseen in class 0), ``-inf`` (unseen in class 1) or NaN (unseen in both);
* K classes: the weight ``log p(v | k)`` of class k is ``-inf``.

A row's score is never formed as a sum with an infinity in it (0 x inf is NaN). Instead each
rule is split into its finite part (infinities replaced by 0) and, per class, the indicator
of its zero-probability levels; a row has probability 0 in a class when it holds at least one
of them. Then:

* a class in which the row has probability 0 loses to any class in which it has not;
* among the classes of non-zero probability, the usual rule: the finite score's sign (two
  classes) or its largest value (K), with the same tie band as ``evaluate`` and
  ``evaluate_multi``;
* a row of probability 0 in every class is a tie among them all: half an error with two
  classes (or the ``ties`` option's class), ``(K - 1) / K`` of an error with K (the K-class
  rule for t tied classes, t = K).

So plain ML naive Bayes is defined on every training set, as Mitchell's eq. 6 writes it,
instead of refused: a test row whose level no training row of either class held is a coin
flip between the classes.
"""

from __future__ import annotations

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.design import Design
from nbvslr.models.evaluate import TIE_RTOL
from nbvslr.models.evaluate_multi import class_counts

#: Rules scored at once (columns of the (U, n) score tiles).
MODEL_TILE = 256


def has_zeros(theta: np.ndarray) -> bool:
    """Whether a stack of rules holds a weight of probability 0 (a non-finite weight)."""
    return not bool(np.isfinite(theta).all())


def _predicted_signs(design: Design, theta: np.ndarray, ties: float) -> np.ndarray:
    """The predicted sign of every distinct row under every two-class rule: (U, n) in
    {-1, +1}, or ``ties`` for a tie (0: half an error)."""
    finite = np.where(np.isfinite(theta), theta, 0.0)  # (n, P)
    zero0 = (theta == np.inf) | np.isnan(theta)  # the level has probability 0 in class 0
    zero1 = (theta == -np.inf) | np.isnan(theta)  # ... in class 1
    Zu = design.unique_Z1  # (U, P)
    tau = np.maximum(TIE_RTOL * np.abs(finite).sum(axis=1), 1e-300)  # (n,)
    score = Zu @ finite.T  # (U, n)
    pred = np.where(np.abs(score) <= tau, 0.0, np.sign(score))
    out0 = (Zu @ zero0.T.astype(np.float64)) > 0  # (U, n): probability 0 in class 0
    out1 = (Zu @ zero1.T.astype(np.float64)) > 0
    pred = np.where(out0 & ~out1, 1.0, np.where(out1 & ~out0, -1.0, pred))
    pred = np.where(out0 & out1, 0.0, pred)
    return np.where(pred == 0.0, float(ties), pred)


def count_mistakes(design: Design, theta: np.ndarray, train_idx: np.ndarray | None,
                   ties: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``evaluate.count_mistakes`` for two-class rules (n, P) with zero-probability levels:
    mistakes on all N rows and on each rule's own training rows (n,) each, by the module
    docstring's rule."""
    theta = np.asarray(theta, dtype=np.float64)
    n = theta.shape[0]
    all_rows = np.zeros(n)
    train_rows = np.zeros(n)
    for lo in range(0, n, MODEL_TILE):
        hi = min(n, lo + MODEL_TILE)
        pred = _predicted_signs(design, theta[lo:hi], ties)  # (U, c)
        agree = design.unique_weight @ pred  # (c,) sum of sign x predicted sign
        all_rows[lo:hi] = 0.5 * (design.n_rows - agree)
        if train_idx is not None:
            idx = np.asarray(train_idx[lo:hi], dtype=np.int64)  # (c, m)
            own = pred[design.row_to_unique[idx], np.arange(hi - lo)[:, None]]  # (c, m)
            train_rows[lo:hi] = 0.5 * (idx.shape[1] - (design.sign[idx] * own).sum(axis=1))
    return all_rows, train_rows


def class_scores(design: Design, theta: np.ndarray) -> np.ndarray:
    """The scores of every distinct row under K-class rules (n, K, P) with zero-probability
    levels: (U, n, K), ``-inf`` where the row has probability 0 in the class, else the finite
    score."""
    n, K, P = theta.shape
    flat = theta.reshape(-1, P)  # (n K, P)
    finite = np.where(np.isfinite(flat), flat, 0.0)
    zero = (flat == -np.inf).astype(np.float64)
    Zu = design.unique_Z1  # (U, P)
    score = Zu @ finite.T  # (U, n K)
    out = (Zu @ zero.T) > 0
    return np.where(out, -np.inf, score).reshape(Zu.shape[0], n, K)


def count_mistakes_multi(design: Design, data: Dataset, theta: np.ndarray,
                         train_idx: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``evaluate_multi.count_mistakes_multi`` for K-class rules (n, K, P) with
    zero-probability levels: the top classes of a row are those of largest score among the
    classes of non-zero probability, within the tie band; every class when the row has
    probability 0 in all (a tie of t = K)."""
    # compiled (numba) where it runs: a process that only plans and writes never loads it
    from nbvslr.kernels.classes import add_correct, add_train_correct

    theta = np.asarray(theta, dtype=np.float64)
    n, K, _ = theta.shape
    counts = class_counts(design, data.y, K)  # (U, K)
    finite = np.where(np.isfinite(theta), theta, 0.0)
    tau = np.maximum(TIE_RTOL * np.abs(finite).sum(axis=(1, 2)), 1e-300)  # (n,)
    correct = np.zeros(n)
    train_correct = np.zeros(n)
    if train_idx is not None:
        idx = np.asarray(train_idx, dtype=np.int64)  # (n, m)
        rows = design.row_to_unique[idx].astype(np.int64)
        labels = np.asarray(data.y, dtype=np.int64)[idx]
    for lo in range(0, n, MODEL_TILE):
        hi = min(n, lo + MODEL_TILE)
        s = np.ascontiguousarray(class_scores(design, theta[lo:hi]))  # (U, c, K)
        add_correct(s, counts, tau[lo:hi], correct[lo:hi])
        if train_idx is not None:
            add_train_correct(s, rows[lo:hi], labels[lo:hi], tau[lo:hi], train_correct[lo:hi])
    train_rows = np.zeros(n) if train_idx is None else idx.shape[1] - train_correct
    return design.n_rows - correct, train_rows
