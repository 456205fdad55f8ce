"""The sparse Hessian of LR's Newton steps: the same matrix and the same fits as the dense
product."""

from __future__ import annotations

import numpy as np
import pytest

from nbvslr.kernels.sparse_gram import sparse_rows, weighted_gram
from nbvslr.models import logistic


def _sparse_stack(A: int, m: int, P: int, seed: int) -> np.ndarray:
    """A (A, m, P) stack with ~20% non-zeros of any value, some rows empty."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((A, m, P)) * (rng.random((A, m, P)) < 0.2)
    Z[:, 0, :] = 0.0
    return Z


def test_weighted_gram_equals_the_dense_product():
    """``weighted_gram`` gives ``Z^T diag(w) Z`` (symmetric, to rounding) for every split."""
    Z = _sparse_stack(5, 30, 12, seed=0)
    w = np.random.default_rng(1).random((5, 30))
    cols, vals, nnz = sparse_rows(Z)
    assert (nnz == (Z != 0).sum(axis=2)).all()
    H = np.full((5, 12, 12), np.nan)
    weighted_gram(cols, vals, nnz, w, H)
    dense = np.matmul(Z.transpose(0, 2, 1) * w[:, None, :], Z)
    np.testing.assert_allclose(H, dense, rtol=1e-12, atol=1e-12)
    assert (H == H.transpose(0, 2, 1)).all()


def _onehot_problem(S: int, m: int, seed: int):
    """S training sets of m rows, 6 attributes with 2..7 levels one-hot (a reference level
    dropped) plus the intercept, labels from a noisy linear rule."""
    rng = np.random.default_rng(seed)
    levels = [2, 3, 4, 5, 6, 7]
    blocks, score = [], np.zeros((S, m))
    for k in levels:
        x = rng.integers(0, k, (S, m))
        onehot = (x[:, :, None] == np.arange(1, k)).astype(float)  # level 0 dropped
        blocks.append(onehot)
        score += rng.standard_normal(k)[x]
    Z1 = np.concatenate(blocks + [np.ones((S, m, 1))], axis=2)
    sign = np.where(score + 3.0 * rng.standard_normal((S, m)) > 0, 1.0, -1.0)
    sign[:, 0], sign[:, 1] = 1.0, -1.0
    return Z1, sign


@pytest.mark.parametrize("C", [None, 1.0])
def test_sparse_and_dense_newton_fit_the_same(monkeypatch, C):
    """On one-hot designs the sparse Hessian path converges to the dense path's fit in the
    same number of steps (unpenalised and penalised): the same loss, and the same weights
    wherever the loss is not flat (quasi-separated splits drift along flat directions
    within the gradient tolerance)."""
    Z1, sign = _onehot_problem(S=40, m=200, seed=2)
    assert np.count_nonzero(Z1) <= logistic.SPARSE_DENSITY * Z1.size
    sparse = logistic.fit_newton(Z1, sign, C=C)
    monkeypatch.setattr(logistic, "SPARSE_DENSITY", 0.0)
    dense = logistic.fit_newton(Z1, sign, C=C)
    assert sparse.converged.all() and dense.converged.all()
    assert (sparse.n_iter == dense.n_iter).all()
    loss = [logistic.logistic_loss(r.theta, Z1, sign, C) for r in (sparse, dense)]
    np.testing.assert_allclose(loss[0], loss[1], rtol=1e-10)
    flat = np.abs(dense.theta).max(axis=1) > 10  # weights running off: quasi-separated
    assert flat.mean() < 0.5
    np.testing.assert_allclose(sparse.theta[~flat], dense.theta[~flat], rtol=1e-7, atol=1e-9)


def test_sparse_products_equal_the_dense_ones():
    """``sparse_matvec`` and ``sparse_rmatvec`` give ``Z x`` and ``Z^T r`` per split."""
    from nbvslr.kernels.sparse_gram import sparse_matvec, sparse_rmatvec

    Z = _sparse_stack(4, 25, 9, seed=3)
    rng = np.random.default_rng(4)
    x, r = rng.standard_normal((4, 9)), rng.standard_normal((4, 25))
    cols, vals, nnz = sparse_rows(Z)
    np.testing.assert_allclose(sparse_matvec(cols, vals, nnz, x),
                               np.matmul(Z, x[:, :, None])[:, :, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sparse_rmatvec(cols, vals, nnz, r, 9),
                               np.matmul(r[:, None, :], Z)[:, 0, :], rtol=1e-12, atol=1e-12)
