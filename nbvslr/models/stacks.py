"""Training stacks: the rows of S splits of one size gathered with the split axis first."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from nbvslr.errors import DataError


def check_both_classes(y: np.ndarray, first_split: int = 0, n_classes: int = 2) -> None:
    """Raise DataError unless every training set holds both classes (every one of K).

    Parameters
    ----------
    y : ndarray of shape (S, m)
        Labels in {0, 1} (or ``0 .. K - 1``) of each split's training rows.
    first_split : int
        Index of the first row of ``y`` among all splits (for the message).
    n_classes : int
        K.
    """
    y = np.asarray(y)
    if n_classes > 2:
        S = y.shape[0]
        flat = (np.arange(S)[:, None] * n_classes + y.astype(np.int64)).reshape(-1)
        counts = np.bincount(flat, minlength=S * n_classes).reshape(S, n_classes)
        bad = np.flatnonzero((counts == 0).any(axis=1))
        if bad.size:
            s = int(bad[0])
            missing = int(np.flatnonzero(counts[s] == 0)[0])
            raise DataError(
                f"training set of split {first_split + s} (m = {y.shape[1]}) holds no row of "
                f"class {missing}; every training set needs all {n_classes} classes "
                f"({bad.size} such split(s))"
            )
        return
    n1 = np.count_nonzero(y, axis=1)  # (S,)
    bad = np.flatnonzero((n1 == 0) | (n1 == y.shape[1]))
    if bad.size:
        s = int(bad[0])
        only = int(y[s, 0]) if y.shape[1] else 0
        raise DataError(
            f"training set of split {first_split + s} (m = {y.shape[1]}) holds only class "
            f"{only}; every training set needs both classes ({bad.size} such split(s))"
        )


def check_distinct(train_idx: np.ndarray, n_rows: int) -> None:
    """Raise DataError unless each split's training rows are distinct valid row indices.

    Parameters
    ----------
    train_idx : ndarray of shape (S, m)
    n_rows : int
        N, the number of rows of the dataset.
    """
    if train_idx.ndim != 2:
        raise DataError(f"train_idx must have shape (splits, m), got shape {train_idx.shape}")
    if train_idx.size and (train_idx.min() < 0 or train_idx.max() >= n_rows):
        raise DataError(f"train_idx holds row indices outside 0..{n_rows - 1}")
    srt = np.sort(train_idx, axis=1)  # (S, m)
    dup = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    if dup.size:
        raise DataError(f"training set of split {int(dup[0])} repeats a row; rows must be distinct")


def split_chunks(n_splits: int, bytes_per_split: float, budget: float) -> Iterator[slice]:
    """Slices of the split axis whose stacks stay around ``budget`` bytes
    (``nbvslr.models.budget.Budget.stacks``)."""
    step = max(1, int(budget // max(bytes_per_split, 1.0)))
    for lo in range(0, n_splits, step):
        yield slice(lo, min(n_splits, lo + step))
