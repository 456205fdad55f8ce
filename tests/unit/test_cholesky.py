"""LR's Newton systems by Cholesky factorisation (``logistic._solve``,
``kernels.cholesky``)."""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.cholesky import cholesky_solve, row_dots
from nbvslr.models.lr import newton as logistic


def _spd(A: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((A, 2 * n, n))
    return np.matmul(X.transpose(0, 2, 1), X), rng.standard_normal((A, n))


def test_kernel_solves_each_leading_block_with_its_ridge():
    """``out[a, :k]`` solves ``(H[a, :k, :k] + r I) x = b[a, :k]``, r from that block's
    trace; the rest of ``out[a]`` is 0 and nothing outside the block is read."""
    H, b = _spd(4, 11, seed=0)
    k = np.array([11, 6, 1, 9])
    Hk = H.copy()
    for a, q in enumerate(k):
        Hk[a, q:, :] = np.nan
        Hk[a, :, q:] = np.nan
    out = np.full((4, 11), np.nan)
    assert cholesky_solve(Hk, k, 30, b, out).all()
    for a, q in enumerate(k):
        block = H[a, :q, :q]
        r = 1e-10 * np.trace(block) / 30 + 1e-30
        np.testing.assert_allclose(out[a, :q], np.linalg.solve(block + r * np.eye(q), b[a, :q]),
                                   rtol=1e-9)
        assert (out[a, q:] == 0).all()


def test_solve_adds_the_ridge_and_solves_each_split_at_its_own_size():
    """With k, split a solves its leading k[a] x k[a] block (the ridge from that block's
    trace), leaves the rest 0, reads nothing outside the block, and gets the same bits as
    when solved alone."""
    H, b = _spd(4, 9, seed=1)
    k = np.array([9, 5, 1, 5])
    Hk = H.copy()
    for a, q in enumerate(k):
        Hk[a, q:, :] = np.nan  # outside the leading block: must not be read
        Hk[a, :, q:] = np.nan
    x = logistic._solve(Hk, b, 20, k)
    for a, q in enumerate(k):
        block = H[a, :q, :q]
        r = 1e-10 * np.trace(block) / 20 + 1e-30
        expected = np.linalg.solve(block + r * np.eye(q), b[a, :q])
        np.testing.assert_allclose(x[a, :q], expected, rtol=1e-9)
        assert (x[a, q:] == 0).all()
        alone = logistic._solve(H[a : a + 1, :q, :q].copy(), b[a : a + 1, :q], 20)
        np.testing.assert_array_equal(x[a, :q], alone[0])


def test_a_system_that_is_not_positive_definite_is_solved_by_lu():
    """The kernel flags it; ``logistic._solve`` solves it by LU, the others by Cholesky."""
    H, b = _spd(3, 6, seed=2)
    H[1] = -H[1]  # negative definite: no Cholesky factor
    np.testing.assert_array_equal(
        cholesky_solve(H, np.full(3, 6), 6, b, np.empty((3, 6))), [True, False, True])
    x = logistic._solve(H.copy(), b)
    for a in range(3):
        r = 1e-10 * np.trace(H[a]) / 6 + 1e-30
        np.testing.assert_allclose(x[a], np.linalg.solve(H[a] + r * np.eye(6), b[a]),
                                   rtol=1e-9)


def test_row_dots_sums_in_order_and_ignores_trailing_zeros():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((5, 13)), rng.standard_normal((5, 13))
    np.testing.assert_allclose(row_dots(x, y), (x * y).sum(axis=1), rtol=1e-12)
    pad = np.zeros((5, 4))
    np.testing.assert_array_equal(
        row_dots(np.concatenate([x, pad], axis=1), np.concatenate([y, pad], axis=1)),
        row_dots(x, y))
