"""Exact HMC sampler of separating hyperplanes: validity, uniformity, narrow cones,
determinism, and agreement with hit-and-run (in fresh processes:
tests/system/test_hmc_processes.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from separable_sets import noisy_problem, seeds, separable_stack

from nbvslr.models.budget import Budget
from nbvslr.models.lr.hit_and_run import sample_separating
from nbvslr.models.lr.hmc import sample_separating_hmc


def _cone_by_rejection(F: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Unit directions uniform on {theta : F theta > 0}, by rejection from the Gaussian."""
    rng = np.random.default_rng(seed)
    out = []
    while sum(len(o) for o in out) < n:
        g = rng.standard_normal((200_000, F.shape[1]))
        out.append(g[(g @ F.T > 0).all(axis=1)])
    g = np.concatenate(out)[:n]
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def test_every_draw_separates_and_is_a_unit_vector():
    """Every kept hyperplane strictly separates its training set and has norm 1."""
    Z1, sign, theta0 = separable_stack(S=20, m=8, d=10)
    draws = sample_separating_hmc(Z1, sign, theta0, seeds(20), chains=3, draws=4,
                                  burn_in=3, thin=2)
    assert draws.shape == (20, 12, 11)
    margins = sign[:, None, :] * np.matmul(draws, Z1.transpose(0, 2, 1))  # (S, K, m)
    assert (margins > 0).all()
    np.testing.assert_allclose(np.linalg.norm(draws, axis=2), 1.0, rtol=1e-12)


def test_two_dimensional_arc_is_uniform():
    """In 2-D the separating directions form an arc; draws are uniform on it (KS test)."""
    n = 400
    Z1 = np.tile(np.array([[2.0, 1.0], [1.0, 1.0]]), (n, 1, 1))  # (n, 2, 2)
    sign = np.tile([1.0, -1.0], (n, 1))
    theta0 = np.tile([1.0, -1.5], (n, 1))
    draws = sample_separating_hmc(Z1, sign, theta0, seeds(n, 7), chains=1, draws=1,
                                  burn_in=5, thin=1)[:, 0]  # (n, 2), one chain per split
    angle = np.arctan2(draws[:, 1], draws[:, 0])
    lo, hi = np.arctan2(-2.0, 1.0), np.arctan2(-1.0, 1.0)
    assert ((angle > lo) & (angle < hi)).all()
    assert stats.kstest(angle, stats.uniform(lo, hi - lo).cdf).pvalue > 0.01


def test_reduced_chain_is_uniform_on_a_half_sphere():
    """One constraint in 3-D (m = 1 < P = 3, the reduced chain with an exact 2-D free part):
    the cosine with the constraint's normal and the angle around it are uniform."""
    n = 400
    row = np.array([1.0, 2.0, 1.0])
    Z1 = np.tile(row, (n, 1, 1))  # (n, 1, 3)
    sign = np.ones((n, 1))
    theta0 = np.tile(row, (n, 1))
    draws = sample_separating_hmc(Z1, sign, theta0, seeds(n, 11), chains=1, draws=1,
                                  burn_in=5, thin=1, reduce=True)[:, 0]  # (n, 3)
    normal = row / np.linalg.norm(row)
    cosine = draws @ normal
    assert (cosine > 0).all()
    assert stats.kstest(cosine, stats.uniform(0, 1).cdf).pvalue > 0.01
    e1 = np.cross(normal, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    angle = np.arctan2(draws @ e2, draws @ e1)
    assert stats.kstest(angle, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 0.01


#: A narrow cone: |x1| < 0.05 x2 and |x3| < 0.05 x2 (in 5-D, so m = 4 < P = 5 and the
#: reduced chain has a free coordinate).
NARROW = np.array([[1.0, 0.05, 0, 0, 0], [-1.0, 0.05, 0, 0, 0], [0, 0.05, 1.0, 0, 0],
                   [0, 0.05, -1.0, 0, 0]])


@pytest.mark.parametrize("reduce", [True, False])
def test_narrow_cone_matches_rejection_sampling(reduce):
    """Chains started at the most marginal of 600 rejection draws (the edge of a narrow cone)
    match rejection samples of the law after 10 iterations: two-sample KS on every coordinate
    and on the smallest margin (fixed seeds; p > 0.001 each)."""
    F, n = NARROW, 600
    truth = _cone_by_rejection(F, n, seed=1)
    Z1, sign = np.tile(F, (n, 1, 1)), np.ones((n, len(F)))
    edge = truth[np.argmin((truth @ F.T).min(axis=1))]
    theta0 = np.tile(edge, (n, 1))
    draws = sample_separating_hmc(Z1, sign, theta0, seeds(n, 3), chains=1, draws=1,
                                  burn_in=10, thin=1, reduce=reduce)[:, 0]
    assert ((draws @ F.T) > 0).all()
    pairs = [(draws[:, i], truth[:, i]) for i in range(F.shape[1])]
    pairs.append(((draws @ F.T).min(axis=1), (truth @ F.T).min(axis=1)))
    for mine, ref in pairs:
        assert stats.ks_2samp(mine, ref).pvalue > 0.001


def test_agrees_with_hit_and_run_on_test_error():
    """On well-conditioned separable sets (m < P), HMC and a long hit-and-run chain give the
    same mean test error within Monte Carlo error (same splits, independent draws)."""
    Z1, sign, theta0, Zt, yt = noisy_problem()
    S = len(Z1)
    hmc = sample_separating_hmc(Z1, sign, theta0, seeds(S, 1))
    hr = sample_separating(Z1, sign, theta0, seeds(S, 2), chains=2, draws=1,
                           burn_in=1000, thin=1)

    def test_error(draws):
        return (np.sign(draws @ Zt.T) != yt).mean(axis=(1, 2))  # (S,)

    diff = test_error(hmc) - test_error(hr)  # paired by split
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(S)
    assert diff.std() > 0


def test_same_seeds_same_draws_whatever_the_grouping(monkeypatch):
    """Draws depend only on each split's seed: blocks of 3 splits give the same numbers as
    one block of all 10, and other seeds give other draws."""

    Z1, sign, theta0 = separable_stack(S=10, m=6, d=8, seed=3)
    kw = dict(chains=2, draws=2, burn_in=3, thin=2)
    whole = sample_separating_hmc(Z1, sign, theta0, seeds(10, 5), **kw)
    again = sample_separating_hmc(Z1, sign, theta0, seeds(10, 5), **kw)
    np.testing.assert_array_equal(whole, again)
    blocks = sample_separating_hmc(Z1, sign, theta0, seeds(10, 5), **kw,
                                   budget=Budget(memory=1.0, min_block=3))
    np.testing.assert_array_equal(blocks, whole)
    other = sample_separating_hmc(Z1, sign, theta0, seeds(10, 6), **kw)
    assert not np.allclose(whole, other)


@pytest.mark.parametrize("reduce", [True, False])
def test_split_seeds_give_numpys_streams(reduce):
    """SplitSeeds take the compiled seeding (splits.each_generator), a list of the same
    seeds numpy's default_rng: the same draws, in blocks or not, with the free part's
    normals drawn after the velocities (m < P, reduced chain) or without them."""
    from nbvslr.splits import split_seeds

    Z1, sign, theta0 = separable_stack(S=10, m=6, d=8, seed=4)
    _, model = split_seeds(9, "t", 6, range(20, 30))
    kw = dict(chains=2, draws=2, burn_in=3, thin=2, reduce=reduce)
    fast = sample_separating_hmc(Z1, sign, theta0, model, **kw,
                                 budget=Budget(memory=1.0, min_block=3))
    slow = sample_separating_hmc(Z1, sign, theta0, list(model), **kw)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("sampler", [sample_separating_hmc, sample_separating])
def test_start_must_separate(sampler):
    """Either sampler refuses a starting theta that does not separate, and a wrong number
    of seeds (the shared input check)."""
    Z1, sign, theta0 = separable_stack(S=2, m=4, d=5)
    with pytest.raises(ValueError, match="separate"):
        sampler(Z1, sign, -theta0, seeds(2))
    with pytest.raises(ValueError, match="seeds"):
        sampler(Z1, sign, theta0, seeds(3))


def test_capped_chains_end_strictly_inside(monkeypatch):
    """A chain stopped by the bounce cap ends strictly inside the cone, not on a wall: with a
    cap of one event, every draw's smallest margin is still clearly positive."""
    import nbvslr.models.lr.hmc as hmc

    monkeypatch.setattr(hmc, "MAX_EVENTS", 1)
    F, n = NARROW, 200
    Z1, sign = np.tile(F, (n, 1, 1)), np.ones((n, len(F)))
    theta0 = np.tile([0.0, 1.0, 0.0, 0.0, 0.0], (n, 1))
    draws = sample_separating_hmc(Z1, sign, theta0, seeds(n, 9), chains=1, draws=2,
                                  burn_in=2, thin=1)
    margins = np.matmul(draws, F.T).min(axis=2)  # (n, 2)
    assert (margins > 1e-9).all()


@pytest.mark.parametrize("method", ["hmc", "hit-and-run"])
def test_function_defaults_are_the_option_defaults(method):
    """Calling a sampler without counts gives what a config without them gives."""
    import inspect

    from nbvslr.models import resolve_options
    from nbvslr.models.options import MCMC_DEFAULTS

    fn = sample_separating_hmc if method == "hmc" else sample_separating
    params = inspect.signature(fn).parameters
    resolved = resolve_options("lr", "lr", {"mcmc_method": method})
    for key in MCMC_DEFAULTS[method]:
        assert params[key.removeprefix("mcmc_")].default == resolved[key]


def test_kernel_compiles_without_a_writable_cache(monkeypatch):
    """Where numba finds no writable cache folder, the kernel's decorator compiles without
    a cache instead of failing at import."""
    from numba.core import caching

    from nbvslr.kernels.jit import compiled

    def twice(x):
        return 2.0 * x

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # older numba: _CacheImpl
    monkeypatch.setattr(impl, "_locator_classes", [])
    monkeypatch.setattr(caching.config, "CACHE_LOCATOR_CLASSES", "", raising=False)
    with pytest.raises(RuntimeError, match="no locator"):
        import numba

        numba.njit(cache=True)(twice)
    assert compiled(twice)(1.5) == 3.0


@pytest.mark.parametrize("gram", [True, False])
def test_cone_kernel_draws_do_not_depend_on_the_row_order(gram):
    """The K-class kernel sorts each split's rows by class and maps the first wall back to
    the training set's order: the same rows in another order (and their Gram matrix
    permuted alike) give bit-identical draws and bounce counts, held Gram matrix or not."""
    from nbvslr.kernels.hmc_multi import run_cone_chains

    rng = np.random.default_rng(5)
    S, m, P, K, C, n_iter = 3, 40, 4, 5, 2, 4
    Z = np.concatenate([rng.standard_normal((S, m, P - 1)), np.ones((S, m, 1))], axis=2)
    W = rng.standard_normal((S, K, P))
    W -= W.mean(axis=1, keepdims=True)  # the kernel's chains sum to 0 over the classes
    y = np.matmul(Z, W.transpose(0, 2, 1)).argmax(axis=2).astype(np.int64)
    assert min(np.unique(y[s]).size for s in range(S)) >= 3
    x0 = W.reshape(S, -1)
    velocities = rng.standard_normal((S, n_iter, C, K, P))
    velocities = (velocities - velocities.mean(axis=3, keepdims=True)).reshape(S, n_iter, C, -1)

    def draws(Zp, yp):
        Gz = np.matmul(Z, Z.transpose(0, 2, 1))  # the original rows' Gram matrix ...
        if Zp is not Z:  # ... permuted like the rows
            Gz = np.stack([Gz[s][np.ix_(order[s], order[s])] for s in range(S)])
        if not gram:
            Gz = np.empty((S, 0, 0))
        kept = np.empty((S, C, 2, K * P))
        events = np.empty((S, C, n_iter), dtype=np.int64)
        run_cone_chains(np.ascontiguousarray(Zp), np.ascontiguousarray(yp), K, Gz, x0,
                        velocities, 2, 1, 1000, kept, events)
        return kept, events

    kept, events = draws(Z, y)
    assert events.sum() > 10 * S * C  # the chains bounce
    for order in (np.stack([rng.permutation(m) for _ in range(S)]),
                  np.argsort(y, axis=1, kind="stable")):
        other = draws(np.take_along_axis(Z, order[:, :, None], 1),
                      np.take_along_axis(y, order, 1))
        assert np.array_equal(other[0], kept) and np.array_equal(other[1], events)


def test_first_wall_in_lanes_is_the_single_scan():
    """The four-lane ``_first_wall`` returns the index and value of the single in-order scan
    (first smallest, ties, -0.0 and 0.0, inf and nan, every length up to 13)."""
    from nbvslr.kernels.hmc import _first_wall

    def scan(ratio):
        j, k = 0, np.inf
        for i, r in enumerate(ratio):
            if r < k:
                j, k = i, r
        return j, k

    rng = np.random.default_rng(0)
    pool = np.array([-2.0, -1.0, -0.0, 0.0, 1.0, np.inf, -np.inf, np.nan, -1e300, 1e-300])
    for n in range(14):
        for _ in range(300):
            ratio = rng.choice(pool, n) if rng.random() < 0.7 else rng.standard_normal(n)
            j, k = _first_wall(ratio)
            rj, rk = scan(ratio)
            assert j == rj and np.array_equal(np.float64(k), np.float64(rk)), (ratio, j, k)
            assert np.signbit(k) == np.signbit(rk)
