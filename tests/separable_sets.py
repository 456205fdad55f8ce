"""Separable training sets and seeds shared by the sampler tests (test_sampler, test_hmc)."""

from __future__ import annotations

import numpy as np

from nbvslr.models.lr.newton import fit_newton


def seeds(n: int, base: int = 0) -> list[np.random.SeedSequence]:
    """One SeedSequence per split."""
    return [np.random.SeedSequence(base, spawn_key=(s,)) for s in range(n)]


def separable_stack(S: int, m: int, d: int, seed: int = 0):
    """S separable training sets (m <= d + 1 points in general position), certified by
    Newton: ``(Z1, sign, theta0)``."""
    rng = np.random.default_rng(seed)
    Z1 = np.concatenate([rng.random((S, m, d)), np.ones((S, m, 1))], axis=2)
    sign = np.where(np.arange(m) % 2 == 0, 1.0, -1.0) * np.ones((S, 1))
    res = fit_newton(Z1, sign, stop_when_separable=True)
    assert res.separable.all()
    return Z1, sign, res.theta


def noisy_problem(S: int = 300, m: int = 12, d: int = 30, n_test: int = 2000, seed: int = 4):
    """S separable training sets of m rows (m < P = d + 1) from a noisy linear model, their
    Newton separators and a test set: ``(Z1, sign, theta0, Zt, yt)``."""
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(d)

    def rows(shape):
        X = rng.standard_normal((*shape, d))
        y = np.where(X @ w_true + 0.8 * rng.standard_normal(shape) > 0, 1.0, -1.0)
        return np.concatenate([X, np.ones((*shape, 1))], axis=-1), y

    Z1, sign = rows((S, m))
    sign[:, 0], sign[:, 1] = 1.0, -1.0  # both classes in every split
    res = fit_newton(Z1, sign, stop_when_separable=True)
    assert res.separable.all()
    Zt, yt = rows((n_test,))
    return Z1, sign, res.theta, Zt, yt
