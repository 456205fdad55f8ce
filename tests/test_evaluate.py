"""Held-out error of many linear models at once."""

from __future__ import annotations

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.design import get_design
from nbvslr.models.evaluate import heldout_errors


def _data() -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (60, 3)).astype(float) / 2  # many repeated rows
    y = (rng.random(60) < 0.5).astype(np.int8)
    return Dataset(name="t", title="t", X=X, y=y, kind="continuous")


def test_heldout_error_equals_naive_loop():
    """One product minus training-row mistakes = a per-split loop over the held-out rows."""
    data = _data()
    design = get_design(data, "x")
    rng = np.random.default_rng(1)
    train = np.stack([rng.choice(60, 7, replace=False) for _ in range(25)])  # (25, 7)
    theta = rng.standard_normal((25, 4))
    fast = heldout_errors(design, theta, train)
    for s in range(25):
        test = np.setdiff1d(np.arange(60), train[s])
        score = design.Z1[test] @ theta[s]
        wrong = np.where(score == 0, 0.5, (score > 0) != (data.y[test] == 1))
        assert fast[s] == wrong.mean() or abs(fast[s] - wrong.mean()) < 1e-12


def test_ties_count_half():
    """A zero score is half an error, also when it is zero only up to rounding."""
    X = np.array([[0.0], [0.5], [1.0], [0.3], [0.3]])
    data = Dataset(name="t", title="t", X=X, y=np.array([0, 1, 1, 0, 1], np.int8),
                   kind="continuous")
    design = get_design(data, "x")
    train = np.array([[0]])
    # w x + b with b = -0.5 w: row 0.5 ties; rows 1.0 (class 1) right; 0.3 rows: one wrong
    theta = np.array([[1.0, -0.5]])
    assert heldout_errors(design, theta, train)[0] == (0.5 + 0 + 0 + 1) / 4
    # 0.1 + 0.2 - 0.3 != 0 in floating point, but it is a tie
    X2 = np.array([[0.1, 0.2], [1.0, 0.0]])
    data2 = Dataset(name="t", title="t", X=X2, y=np.array([1, 0], np.int8), kind="continuous")
    err = heldout_errors(get_design(data2, "x"), np.array([[1.0, 1.0, -0.3]]), np.array([[1]]))
    assert err[0] == 0.5
    zero = heldout_errors(design, np.zeros((1, 2)), train)
    assert zero[0] == 0.5
