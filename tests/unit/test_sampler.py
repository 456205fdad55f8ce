"""Hit-and-run sampler of separating hyperplanes: validity, uniformity, determinism."""

from __future__ import annotations

import numpy as np
from scipy import stats
from separable_sets import noisy_problem, seeds, separable_stack

from nbvslr.models.budget import Budget
from nbvslr.models.lr.hit_and_run import sample_separating


def test_every_draw_separates_and_lies_in_the_ball():
    """Every kept hyperplane strictly separates its training set and has norm <= 1."""
    Z1, sign, theta0 = separable_stack(S=20, m=8, d=10)
    draws = sample_separating(Z1, sign, theta0, seeds(20), chains=3, draws=4, burn_in=20,
                              thin=5)
    assert draws.shape == (20, 12, 11)
    margins = sign[:, None, :] * np.matmul(draws, Z1.transpose(0, 2, 1))  # (S, K, m)
    assert (margins > 0).all()
    assert (np.linalg.norm(draws, axis=2) <= 1 + 1e-12).all()


def test_two_dimensional_arc_is_uniform():
    """With theta = (w, b) in 2-D the separating directions form an arc; draws are uniform on
    it (KS test on the angle), and the squared radius is uniform (density 2 r on the disk)."""
    # x = 2 is class 1, x = 1 is class 0: 2 w + b > 0 and w + b < 0, i.e. angle in
    # (atan2(-2, 1), atan2(-1, 1)) = (-63.43, -45) degrees.
    n = 400
    Z1 = np.tile(np.array([[2.0, 1.0], [1.0, 1.0]]), (n, 1, 1))  # (n, 2, 2)
    sign = np.tile([1.0, -1.0], (n, 1))
    theta0 = np.tile([1.0, -1.5], (n, 1))
    draws = sample_separating(Z1, sign, theta0, seeds(n, 7), chains=1, draws=1, burn_in=30,
                              thin=1)[:, 0]  # (n, 2) independent: one chain per split
    angle = np.arctan2(draws[:, 1], draws[:, 0])
    lo, hi = np.arctan2(-2.0, 1.0), np.arctan2(-1.0, 1.0)
    assert ((angle > lo) & (angle < hi)).all()
    assert stats.kstest(angle, stats.uniform(lo, hi - lo).cdf).pvalue > 0.01
    r2 = (draws**2).sum(axis=1)
    assert stats.kstest(r2, stats.uniform(0, 1).cdf).pvalue > 0.01


def test_same_seeds_same_draws_whatever_the_grouping():
    """Draws depend only on each split's seed: two blocks give the same numbers as one."""
    Z1, sign, theta0 = separable_stack(S=10, m=6, d=8, seed=3)
    given = seeds(10, 5)
    kw = dict(chains=2, draws=2, burn_in=21, thin=7)  # steps not a multiple of the block
    whole = sample_separating(Z1, sign, theta0, given, **kw)
    again = sample_separating(Z1, sign, theta0, seeds(10, 5), **kw)
    parts = np.concatenate([
        sample_separating(Z1[:4], sign[:4], theta0[:4], given[:4], **kw),
        sample_separating(Z1[4:], sign[4:], theta0[4:], given[4:], **kw),
    ])
    np.testing.assert_array_equal(whole, again)
    np.testing.assert_array_equal(whole, parts)
    other = sample_separating(Z1, sign, theta0, seeds(10, 6), **kw)
    assert not np.array_equal(whole, other)


def test_reduced_chain_is_uniform_on_a_half_ball():
    """One constraint in 3-D (m = 1 < P = 3, the reduced chain with a 2-D null space): the
    draws are uniform on the half-ball, so the cosine with the constraint's normal, the
    cubed radius and the angle around the normal are uniform (KS tests)."""
    n = 400
    row = np.array([1.0, 2.0, 1.0])
    Z1 = np.tile(row, (n, 1, 1))  # (n, 1, 3)
    sign = np.ones((n, 1))
    theta0 = np.tile(row, (n, 1))
    draws = sample_separating(Z1, sign, theta0, seeds(n, 11), chains=1, draws=1, burn_in=30,
                              thin=1)[:, 0]  # (n, 3)
    normal = row / np.linalg.norm(row)
    radius = np.linalg.norm(draws, axis=1)
    cosine = draws @ normal / radius
    assert (cosine > 0).all()
    assert stats.kstest(cosine, stats.uniform(0, 1).cdf).pvalue > 0.01
    assert stats.kstest(radius**3, stats.uniform(0, 1).cdf).pvalue > 0.01
    e1 = np.cross(normal, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    angle = np.arctan2(draws @ e2, draws @ e1)
    assert stats.kstest(angle, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 0.01


def test_reduced_and_full_chains_agree_on_test_error():
    """On separable sets with m < P, the reduced chain and the full P-dimensional chain give
    the same mean test error within Monte Carlo error (same splits, independent draws)."""
    Z1, sign, theta0, Zt, yt = noisy_problem()
    S = len(Z1)
    kw = dict(chains=2, draws=1, burn_in=150, thin=50)

    def test_error(reduce, base):
        draws = sample_separating(Z1, sign, theta0, seeds(S, base), reduce=reduce, **kw)
        return (np.sign(draws @ Zt.T) != yt).mean(axis=(1, 2))  # (S,)

    diff = test_error(True, 1) - test_error(False, 2)  # paired by split
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(S)
    assert diff.std() > 0  # the two chains did draw differently


def test_blocks_do_not_change_the_draws():
    """Sampling in blocks of 3 splits gives the same draws as one block of all 10."""
    Z1, sign, theta0 = separable_stack(S=10, m=5, d=7, seed=8)
    kw = dict(chains=2, draws=1, burn_in=20, thin=5)
    whole = sample_separating(Z1, sign, theta0, seeds(10, 2), **kw)
    blocks = sample_separating(Z1, sign, theta0, seeds(10, 2), **kw,
                               budget=Budget(memory=1.0, min_block=3))
    np.testing.assert_array_equal(blocks, whole)
