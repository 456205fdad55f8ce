"""Logistic regression: loss derivatives, agreement with statsmodels and scikit-learn, the
batched fit and the separability certificate."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from sklearn.linear_model import LogisticRegression

from nbvslr.models.budget import Budget
from nbvslr.models.lr.newton import (
    fit_newton,
    logistic_gradient,
    logistic_hessian,
    logistic_loss,
)


def _noisy(seed: int, n: int = 200, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A non-separable set: X (n, d + 1) with trailing ones, sign (n,)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    p = 1 / (1 + np.exp(-(X @ np.linspace(1, -1, d) + 0.3)))
    y = (rng.random(n) < p).astype(float)
    return np.concatenate([X, np.ones((n, 1))], axis=1), 2 * y - 1


@pytest.mark.parametrize("C", [None, 0.7])
def test_gradient_and_hessian_match_finite_differences(C):
    """Analytic gradient and Hessian equal central finite differences of the loss."""
    Z1, sign = _noisy(0, n=30)
    theta = np.array([[0.3, -0.2, 0.5, 0.1]])
    Z, s = Z1[None], sign[None]
    h = 1e-6
    eye = np.eye(4)
    num_g = [
        (logistic_loss(theta + h * e, Z, s, C) - logistic_loss(theta - h * e, Z, s, C))[0]
        / (2 * h)
        for e in eye
    ]
    np.testing.assert_allclose(logistic_gradient(theta, Z, s, C)[0], num_g, rtol=1e-6)
    num_h = np.stack([
        (logistic_gradient(theta + h * e, Z, s, C) - logistic_gradient(theta - h * e, Z, s, C))[0]
        / (2 * h)
        for e in eye
    ])
    np.testing.assert_allclose(logistic_hessian(theta, Z, s, C)[0], num_h, rtol=1e-6, atol=1e-8)


def test_unpenalised_matches_statsmodels():
    """Unpenalised Newton = statsmodels Logit, coefficients to 1e-6 relative."""
    Z1, sign = _noisy(1)
    res = fit_newton(Z1[None], sign[None])
    ref = sm.Logit((sign + 1) / 2, Z1).fit(method="newton", tol=1e-12, disp=0)
    assert res.converged[0] and not res.separable[0]
    np.testing.assert_allclose(res.theta[0], ref.params, rtol=1e-6)


def test_unpenalised_matches_sklearn():
    """Unpenalised Newton = sklearn LogisticRegression(C=inf), to 1e-5 relative."""
    Z1, sign = _noisy(2)
    ref = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    ref.fit(Z1[:, :-1], sign)
    theta = fit_newton(Z1[None], sign[None]).theta[0]
    np.testing.assert_allclose(theta, [*ref.coef_[0], ref.intercept_[0]], rtol=1e-5)


def test_penalised_matches_sklearn():
    """With C = 1 the fit equals sklearn LogisticRegression(C=1) (intercept unpenalised)."""
    Z1, sign = _noisy(3, n=60, d=4)
    ref = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    ref.fit(Z1[:, :-1], sign)
    res = fit_newton(Z1[None], sign[None], C=1.0)
    assert res.converged[0]
    np.testing.assert_allclose(res.theta[0], [*ref.coef_[0], ref.intercept_[0]], rtol=1e-6)


def test_batched_fit_equals_single_fits():
    """Fitting S splits at once gives each split's own fit (the active set changes nothing)."""
    stacks = [_noisy(10 + s, n=40) for s in range(6)]
    Z1 = np.stack([z for z, _ in stacks])  # (6, 40, 4)
    sign = np.stack([s for _, s in stacks])  # (6, 40)
    batch = fit_newton(Z1, sign)
    for s in range(6):
        one = fit_newton(Z1[s : s + 1], sign[s : s + 1])
        np.testing.assert_allclose(batch.theta[s], one.theta[0], rtol=1e-12, atol=1e-14)
        assert batch.n_iter[s] == one.n_iter[0]
        assert batch.converged[s] == one.converged[0]


def test_separability_certificate():
    """A separable set is certified (all margins > 0); a non-separable one is not."""
    x = np.array([0.1, 0.4, 0.5, 0.9])
    Z1 = np.stack([x, np.ones(4)], axis=1)[None]  # (1, 4, 2)
    sep = fit_newton(Z1, np.array([[-1.0, -1.0, 1.0, 1.0]]), stop_when_separable=True)
    assert sep.separable[0] and not sep.converged[0]
    theta = sep.theta[0]
    assert ((Z1[0] @ theta) * np.array([-1, -1, 1, 1]) > 0).all()
    mixed = fit_newton(Z1, np.array([[-1.0, 1.0, -1.0, 1.0]]), stop_when_separable=True)
    assert not mixed.separable[0] and mixed.converged[0]


def test_separable_mle_does_not_overflow():
    """Without stopping, a separable set runs to the cap or the gradient test, finitely."""
    x = np.array([0.1, 0.4, 0.5, 0.9])
    Z1 = np.stack([x, np.ones(4)], axis=1)[None]
    res = fit_newton(Z1, np.array([[-1.0, -1.0, 1.0, 1.0]]), max_iter=100)
    assert res.separable[0] and np.isfinite(res.theta).all()


def test_fit_does_not_depend_on_the_block_size():
    """Blocks of 8 splits (the minimum) give the same fits as one block of all 20."""
    stacks = [_noisy(30 + s, n=12, d=5) for s in range(20)]  # small n: some separable
    Z1 = np.stack([z for z, _ in stacks])  # (20, 12, 6)
    sign = np.stack([s for _, s in stacks])  # (20, 12)
    whole = fit_newton(Z1, sign, stop_when_separable=True, budget=Budget(memory=1e14))
    blocks = fit_newton(Z1, sign, stop_when_separable=True, budget=Budget(memory=1.0))
    np.testing.assert_allclose(blocks.theta, whole.theta, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(blocks.n_iter, whole.n_iter)
    np.testing.assert_array_equal(blocks.separable, whole.separable)
    assert whole.separable.any() and not whole.separable.all()


def test_row_space_steps_equal_full_steps(monkeypatch):
    """With 2 m <= D + 1 (unpenalised) the Newton steps solved in the row space of the
    training rows give the full (D+1)-dimensional fit: same certificates and step counts,
    same losses, also with repeated rows of both classes (a singular Gram matrix)."""
    import nbvslr.models.lr.newton as logistic

    rng = np.random.default_rng(5)
    S, m, d = 30, 10, 25
    X = (rng.random((S, m, d)) < 0.3).astype(float)
    X[:15, 1] = X[:15, 0]  # the first 15 splits repeat a row...
    sign = np.where(rng.random((S, m)) < 0.5, 1.0, -1.0)
    sign[:, 0], sign[:, 1] = 1.0, -1.0  # ...with both labels: not separable
    Z1 = np.concatenate([X, np.ones((S, m, 1))], axis=2)  # (S, m, d + 1)
    monkeypatch.setattr(logistic, "DUAL", False)
    full = fit_newton(Z1, sign, stop_when_separable=True)
    monkeypatch.setattr(logistic, "DUAL", True)
    rows = fit_newton(Z1, sign, stop_when_separable=True)
    assert not full.separable[:15].any() and full.separable[15:].all()
    np.testing.assert_array_equal(rows.separable, full.separable)
    np.testing.assert_array_equal(rows.n_iter, full.n_iter)
    np.testing.assert_array_equal(rows.converged, full.converged)
    # the loss has flat directions (quasi-separated rows): compare losses, thetas loosely
    np.testing.assert_allclose(
        logistic_loss(rows.theta, Z1, sign), logistic_loss(full.theta, Z1, sign), rtol=1e-9
    )
    np.testing.assert_allclose(rows.theta, full.theta, atol=1e-3)


def test_penalised_row_space_steps_equal_full_steps(monkeypatch):
    """Penalised, with m + 1 well below D + 1: the Newton steps solved in the span of the
    training rows plus the intercept give the full fit (same optimum, step counts and
    convergence), also with a repeated row of both labels; and match sklearn at C = 0.5."""
    import nbvslr.models.lr.newton as logistic

    rng = np.random.default_rng(6)
    S, m, d = 20, 12, 40
    X = (rng.random((S, m, d)) < 0.3).astype(float)
    X[:5, 1] = X[:5, 0]
    sign = np.where(rng.random((S, m)) < 0.5, 1.0, -1.0)
    sign[:, 0], sign[:, 1] = 1.0, -1.0
    Z1 = np.concatenate([X, np.ones((S, m, 1))], axis=2)
    monkeypatch.setattr(logistic, "DUAL", False)
    full = fit_newton(Z1, sign, C=0.5)
    monkeypatch.setattr(logistic, "DUAL", True)
    rows = fit_newton(Z1, sign, C=0.5)
    assert full.converged.all() and rows.converged.all()
    np.testing.assert_array_equal(rows.n_iter, full.n_iter)
    np.testing.assert_allclose(rows.theta, full.theta, rtol=1e-7, atol=1e-9)
    ref = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    ref.fit(X[7], sign[7])
    np.testing.assert_allclose(rows.theta[7], [*ref.coef_[0], ref.intercept_[0]], rtol=1e-6,
                               atol=1e-8)
