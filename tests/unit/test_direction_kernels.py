"""The quasi direction's compiled passes (``kernels.direction``) against the numpy they
replace: the overlap rows' Gram matrices, the optimality check, and ``nnls`` retried in
reverse order before Lawson-Hanson."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls

import nbvslr.models.lr.least_distance as ld
from nbvslr.kernels.direction import overlap_columns, overlap_grams
from nbvslr.runner import warm


def _numpy_kkt(G: np.ndarray, y: np.ndarray, rtol: float = ld.KKT_RTOL):
    """The check as numpy wrote it before it was compiled (the reference)."""
    if (y < 0).any():
        return False, np.inf
    cnorm = np.sqrt(1.0 + np.einsum("ij,ij->i", G, G))
    rx, rk = G.T @ y, y.sum() - 1.0
    size = max(1.0, float(y @ cnorm))
    big = max(float(np.abs(rx).max(initial=0.0)), abs(float(rk)))
    if big <= rtol * size:
        return False, big / size
    if not rk < 0.0:
        return False, np.inf
    x = -rx / rk
    s = G @ x - 1.0
    worst = np.maximum(-s, 0.0)
    on = y > 0
    worst[on] = np.abs(s[on])
    return True, float((worst / cnorm).max(initial=0.0) / np.sqrt(1.0 + x @ x))


def _grams(Z1: np.ndarray, separated: np.ndarray):
    """``overlap_grams``'s means and Gram matrices, per split (lists of (c,), (c, c))."""
    S, m, P = Z1.shape
    U, ids = Z1.reshape(S * m, P), np.arange(S * m).reshape(S, m)
    used = np.zeros((S, P - 1), dtype=bool)
    count = np.zeros(S, dtype=np.int64)
    overlap_columns(U, ids, separated, used, count)
    c = used.sum(axis=1)
    c_ptr = np.r_[0, np.cumsum(c)].astype(np.int64)
    g_ptr = np.r_[0, np.cumsum(c * c)].astype(np.int64)
    mean, gram = np.zeros(c_ptr[-1]), np.zeros(g_ptr[-1])
    overlap_grams(U, ids, separated, used, count, c_ptr, mean, g_ptr, gram)
    return used, [mean[c_ptr[a]:c_ptr[a + 1]] for a in range(S)], [
        gram[g_ptr[a]:g_ptr[a + 1]].reshape(c[a], c[a]) for a in range(S)]


@pytest.mark.parametrize("integer", [True, False])
def test_overlap_grams_equal_the_centred_products(integer):
    """Both of ``overlap_grams``' sums (the exact one for small integers, the centred one
    otherwise) give each split's overlap columns, mean and centred Gram matrix as numpy."""
    rng = np.random.default_rng(3)
    S, m, P = 30, 25, 9
    Z1 = rng.integers(0, 2, size=(S, m, P)).astype(float) * (rng.random((S, m, P)) < 0.4)
    if not integer:
        Z1 *= rng.normal(50.0, 3.0, size=(S, m, P))
    Z1[:, :, -1] = 1.0
    Z1[:, :, 2] = 0.0  # a column no row uses
    separated = rng.random((S, m)) < 0.3
    used, means, grams = _grams(Z1, separated)
    for a in range(S):
        X = Z1[a, ~separated[a], :-1]
        c = np.flatnonzero(X.any(axis=0))
        assert np.array_equal(np.flatnonzero(used[a]), c)
        X = X[:, c]
        np.testing.assert_allclose(means[a], X.mean(axis=0), rtol=1e-13)
        Xc = X - X.mean(axis=0)
        ref = Xc.T @ Xc
        np.testing.assert_allclose(grams[a], ref, rtol=1e-11, atol=1e-11 * np.abs(ref).max())
        assert np.array_equal(grams[a], grams[a].T)


def test_the_compiled_check_gives_numpys_verdicts():
    """``kkt_violation`` (compiled) gives the numpy check's verdict and violation on nnls's
    points, Lawson-Hanson's, perturbed and negative ones, feasible and infeasible."""
    rng = np.random.default_rng(11)
    seen = set()
    for _ in range(60):
        n, k = rng.integers(3, 30), rng.integers(2, 10)
        G = rng.integers(-1, 3, size=(n, k)).astype(float)
        E, f = ld.ldp_matrices(G)
        y0 = nnls(E, f, maxiter=50 * n)[0]
        for y in (y0, ld.lawson_hanson(E, f), y0 * (1 + 1e-3 * rng.random(n)),
                  y0 - (rng.random(n) < 0.1)):
            feasible, bad = ld.kkt_violation(G, y)
            ref = _numpy_kkt(G, y)
            assert feasible == ref[0]
            assert bad == pytest.approx(ref[1], rel=1e-9, abs=1e-15)
            seen.add((feasible, bad <= ld.KKT_RTOL))
    assert seen >= {(True, True), (False, True), (True, False)}


def test_a_miss_of_nnls_is_retried_in_reverse_order_before_lawson_hanson(monkeypatch):
    """Where ``nnls``'s point fails the check, ``nnls`` on the constraints in reverse order
    is tried next, and its point, once checked, is the answer (no Lawson-Hanson)."""
    G = np.array([[1.0, 0.0], [1.0, 1.0], [2.0, 0.0]])  # optimum x = (1, 0)
    calls = []

    def first_misses(E, f, maxiter):
        calls.append(E.copy())
        if len(calls) == 1:  # feasible, not optimal: x = (1, 1)
            return np.array([0.0, 1.0 / 3.0, 0.0]), 0.0
        return nnls(E, f, maxiter=maxiter)

    def refuse(*_args, **_kwargs):
        raise AssertionError("Lawson-Hanson was not needed")

    monkeypatch.setattr(ld, "nnls", first_misses)
    monkeypatch.setattr(ld, "lawson_hanson", refuse)
    y, feasible, bad = ld.least_distance(G)
    assert len(calls) == 2 and np.array_equal(calls[1], calls[0][:, ::-1])
    assert feasible and bad <= ld.KKT_RTOL
    E, f = ld.ldp_matrices(G)
    r = E @ y - f
    np.testing.assert_allclose(-r[:-1] / r[-1], [1.0, 0.0], atol=1e-12)


def test_warming_compiles_what_the_direction_problem_runs():
    """compile_all builds the direction's passes with the types ``detect`` passes them: a
    quasi set's direction afterwards compiles nothing."""
    from nbvslr.kernels import direction
    from nbvslr.models.lr.separation import QUASI, detect

    kernels = [getattr(direction, name) for name in (
        "overlap_columns", "overlap_grams", "stack_problems", "directions", "kkt_check",
        "least_margins")]
    warm.compile_all(["two-class"])
    built = [list(k.signatures) for k in kernels]
    assert all(built)
    rng = np.random.default_rng(5)
    Z1 = np.zeros((20, 30, 7))
    Z1[:, np.arange(30), rng.integers(0, 6, 30)] = 1.0
    Z1[:, :, -1] = 1.0
    sign = np.where(rng.random((20, 30)) < 0.5, 1.0, -1.0)
    sign[:, 0] = 1.0
    Z1[:, 0, :-1] = 0.0
    Z1[:, 0, 5] = 1.0  # a level seen only in row 0: quasi
    Z1[:, 1:, 5] = 0.0
    found = detect(Z1, sign)
    assert (found.code == QUASI).any()
    assert [list(k.signatures) for k in kernels] == built
