"""The sparse Hessian of LR's Newton steps: the same matrix and the same fits as the dense
product."""

from __future__ import annotations

import numpy as np
import pytest

from nbvslr.kernels.sparse_gram import sparse_rows, weighted_gram
from nbvslr.models.lr import newton as logistic


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


def test_unpenalised_sparse_fit_on_the_columns_each_split_uses(monkeypatch):
    """Unpenalised sparse fits work on the columns each split's rows use (``_packed``): the
    same steps, loss and weights as the dense path, and a column a split never uses keeps
    its starting value, whatever the other splits of the block use."""
    Z1, sign = _onehot_problem(S=30, m=120, seed=5)
    rng = np.random.default_rng(6)
    # rare levels: each split drops a few columns of its own (rows moved to the reference)
    for a in range(30):
        Z1[a][:, rng.choice(Z1.shape[2] - 1, size=4, replace=False)] = 0.0
    unused = ~(Z1 != 0).any(axis=1)  # (S, P)
    assert unused.any(axis=1).all() and not unused.all(axis=0).any()
    theta0 = np.where(unused, rng.standard_normal(unused.shape), 0.0)
    _, pos, th = logistic._packed(sparse_rows(Z1), Z1, theta0)
    assert pos.shape[1] == (~unused).sum(axis=1).max() < Z1.shape[2]
    assert not th.any()  # the starting values of the used columns: 0
    sparse = logistic.fit_newton(Z1, sign, theta0=theta0, max_iter=30)
    np.testing.assert_array_equal(sparse.theta[unused], theta0[unused])
    monkeypatch.setattr(logistic, "SPARSE_DENSITY", 0.0)
    dense = logistic.fit_newton(Z1, sign, theta0=theta0, max_iter=30)
    assert (sparse.n_iter == dense.n_iter).all()
    assert (sparse.converged == dense.converged).all()
    assert (sparse.separable == dense.separable).all()
    loss = [logistic.logistic_loss(r.theta, Z1, sign) for r in (sparse, dense)]
    np.testing.assert_allclose(loss[0], loss[1], rtol=1e-9, atol=1e-12)
    # splits not running off to a separation (as in the test above)
    steady = np.abs(np.where(unused, 0.0, dense.theta)).max(axis=1) < 10
    assert steady.sum() >= 10
    np.testing.assert_allclose(sparse.theta[steady], dense.theta[steady], rtol=1e-6, atol=1e-8)


def test_packed_fits_do_not_depend_on_the_block():
    """A split's packed fit is the same, bit for bit, whichever splits share its block (so
    whatever the block's widest split): blocks of 8 against one block of all 24, and the
    split alone."""
    from nbvslr.models.budget import Budget

    Z1, sign = _onehot_problem(S=24, m=60, seed=7)
    rng = np.random.default_rng(8)
    for a in range(0, 24, 3):  # every third split loses a few columns
        Z1[a][:, rng.choice(Z1.shape[2] - 1, size=5, replace=False)] = 0.0
    whole = logistic.fit_newton(Z1, sign, stop_when_separable=True, budget=Budget(memory=1e14))
    blocks = logistic.fit_newton(Z1, sign, stop_when_separable=True, budget=Budget(memory=1.0))
    alone = logistic.fit_newton(Z1[3:4], sign[3:4], stop_when_separable=True)
    np.testing.assert_array_equal(blocks.theta, whole.theta)
    np.testing.assert_array_equal(blocks.n_iter, whole.n_iter)
    np.testing.assert_array_equal(alone.theta[0], whole.theta[3])
    assert (whole.n_iter > 3).any()


def test_listed_rows_equal_sparse_rows_of_the_gathered_stack():
    """``listed_rows`` (a stack's non-zeros read from its distinct rows, some rows read as
    zero) lists exactly what ``sparse_rows`` lists of the gathered stack, those rows zeroed."""
    from nbvslr.kernels.sparse_gram import listed_rows

    rng = np.random.default_rng(7)
    U = rng.integers(-2, 3, (40, 9)).astype(float) * (rng.random((40, 9)) < 0.3)
    U[3] = 0.0  # a distinct row with no non-zero
    ids = rng.integers(0, 40, (6, 25))
    skip = rng.random((6, 25)) < 0.3
    r, c = np.nonzero(U)
    ptr = np.r_[0, np.cumsum(np.bincount(r, minlength=40))].astype(np.int64)
    got = listed_rows(ptr, c.astype(np.int64), U[r, c], ids, skip)
    want = sparse_rows(U[ids] * ~skip[:, :, None])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


def _packed_by_numpy(cols, nnz, P):
    """``pack_columns`` as numpy computed it in ``newton._packed`` before (the reference)."""
    A = cols.shape[0]
    used = np.zeros((A, P + 1), dtype=bool)
    listed = np.arange(cols.shape[2]) < nnz[:, :, None]
    used[np.arange(A)[:, None, None], np.where(listed, cols, P)] = True
    used = used[:, :P]
    slot = np.cumsum(used, axis=1) - 1
    W = max(1, int(used.sum(axis=1).max()))
    pos = np.full((A, W), P, dtype=np.int64)
    a_i, j_i = np.nonzero(used)
    pos[a_i, slot[a_i, j_i]] = j_i
    packed = np.maximum(np.take_along_axis(slot, cols.reshape(A, -1), axis=1), 0)
    return packed.reshape(cols.shape), pos


def test_pack_columns_equals_the_numpy_packing():
    """``pack_columns`` (compiled) renumbers every slot and lists every split's used
    columns exactly as the numpy passes did, unused and past-the-count slots included."""
    from nbvslr.kernels.sparse_gram import pack_columns

    rng = np.random.default_rng(8)
    for A, m, P in [(7, 20, 15), (3, 5, 40), (1, 1, 3)]:
        Z = _sparse_stack(A, m, P, seed=A)
        cols, vals, nnz = sparse_rows(Z)
        cols = cols.copy()
        past = np.arange(cols.shape[2]) >= nnz[:, :, None]
        cols[past] = rng.integers(0, P, past.sum())  # any column in the unused slots
        got, want = pack_columns(cols, nnz, P), _packed_by_numpy(cols, nnz, P)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
