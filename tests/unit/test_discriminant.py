"""LDA and QDA (models.discriminant.gaussian, the lda and qda entries): scikit-learn's
predictions where the covariances are non-singular, batched fits equal to one split at a time,
the singular-covariance rules, and naive Bayes as full shrinkage."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA

from nbvslr import models
from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models import ModelSpec, resolve_options
from nbvslr.models.design import get_design
from nbvslr.models.discriminant.gaussian import fit_lda, fit_qda, precision, quadratic_terms
from nbvslr.models.nb.fit_multi import fit_gaussian_nb_multi
from nbvslr.models.registry import lookup
from nbvslr.splits import split_seeds


def _task(n: int, d: int, K: int, seed: int = 0, shift: float = 1.0) -> Dataset:
    """K Gaussian classes of correlated features (n rows, d features)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A + shift * rng.normal(size=(K, d))[y]
    return Dataset(name="g", title="g", X=X, y=y.astype(np.int8), kind="continuous",
                   classes=tuple(str(k) for k in range(K)) if K > 2 else ())


def _idx(n: int, m: int, S: int, K: int, seed: int = 1) -> np.ndarray:
    """S training sets of m distinct rows, every class present (rows k, k + K, ...)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(S):
        first = rng.permutation(K)  # one row of each class, then the rest at random
        rest = rng.choice(np.setdiff1d(np.arange(n), first), m - K, replace=False)
        out.append(np.concatenate([first, rest]))
    return np.stack(out)


def _scores(data: Dataset, name: str, theta: np.ndarray) -> np.ndarray:
    """Each split's class scores on every row: (S, N, K) (two classes: the log-odds)."""
    Z1 = get_design(data, "x" if name == "lda" else "x_xx").Z1  # (N, P)
    if theta.ndim == 2:
        return (Z1 @ theta.T).T  # (S, N)
    return np.einsum("np,skp->snk", Z1, theta)


@pytest.mark.parametrize("K", [2, 3, 5])
@pytest.mark.parametrize("name, sk", [("lda", SkLDA), ("qda", SkQDA)])
def test_predictions_are_sklearns_where_the_covariance_is_non_singular(name, sk, K):
    """Every split's predictions on every row equal scikit-learn's LDA / QDA fitted to that
    split alone (m well above d per class; empirical priors; the ML covariance, which the
    installed scikit-learn also uses)."""
    data = _task(400, 4, K)
    idx = _idx(400, 30 * K, 12, K)
    opts = resolve_options(name, name, {"smoothing": 0})  # sklearn's prior: counts / m
    entry = lookup(name, "continuous", multiclass=K > 2)
    fit = entry.fit(data, get_design(data, entry.design(data, opts)), idx, opts)
    scores = _scores(data, name, fit.theta)
    ours = (scores > 0).astype(int) if K == 2 else scores.argmax(axis=2)
    for s in range(idx.shape[0]):
        theirs = sk().fit(data.X[idx[s]], data.y[idx[s]]).predict(data.X)
        assert (ours[s] == theirs).mean() == 1.0


def test_batched_fits_equal_one_split_at_a_time():
    """The stacked fit of S splits gives each split the theta of its fit alone."""
    data = _task(200, 5, 3, seed=2)
    idx = _idx(200, 24, 6, 3)
    X, y = data.X[idx], data.y[idx]
    for fit in (fit_lda, fit_qda):
        batch = fit(X, y, 3)
        for s in range(6):
            np.testing.assert_allclose(batch[s], fit(X[s : s + 1], y[s : s + 1], 3)[0],
                                       rtol=1e-9, atol=1e-9)


def test_qda_scores_are_gaussian_log_densities():
    """QDA's score of class k on [x, x_i x_j, 1] is log p(k) + log N(x | mu_k, Sigma_k) up to
    a constant of the row (d/2 log 2 pi), with the ML class covariances."""
    from scipy.stats import multivariate_normal

    data = _task(120, 3, 3, seed=5)
    idx = _idx(120, 60, 1, 3)
    X, y = data.X[idx[0]], data.y[idx[0]].astype(int)
    theta = fit_qda(data.X[idx], data.y[idx], 3, smoothing=1.0)[0]
    n = np.bincount(y, minlength=3)
    expect = np.stack([
        np.log((n[k] + 1.0) / (60 + 3.0))
        + multivariate_normal(X[y == k].mean(0), np.cov(X[y == k].T, bias=True)).logpdf(data.X)
        for k in range(3)], axis=1)
    i, j = quadratic_terms(3)
    Z1 = np.concatenate([data.X, data.X[:, i] * data.X[:, j], np.ones((120, 1))], axis=1)
    got = Z1 @ theta.T
    np.testing.assert_allclose(got - expect, np.full_like(got, 1.5 * np.log(2 * np.pi)),
                               atol=1e-9)


@pytest.mark.parametrize("K", [2, 3])
def test_full_shrinkage_is_naive_bayes(K):
    """shrinkage 1 keeps the diagonal alone: LDA is Gaussian NB with shared variances, QDA
    with class variances (the same epsilon-free ML variances: no variance is 0 here)."""
    data = _task(300, 4, K, seed=7)
    idx = _idx(300, 40, 5, K)
    X, y = data.X[idx], data.y[idx]
    nb = dict(var_smoothing=0.0, var_floor=1e-300)
    for fit, variance in ((fit_lda, "shared"), (fit_qda, "class")):
        ours = fit(X, y, K, shrinkage=1.0)
        naive = fit_gaussian_nb_multi(X, y, K, variance=variance, **nb)
        if variance == "class":  # QDA's design has every product; NB's only the squares
            i, j = quadratic_terms(4)
            d = 4
            square = np.flatnonzero(i == j)
            np.testing.assert_allclose(ours[..., d + square], naive[..., d : 2 * d], rtol=1e-9)
            assert np.all(ours[..., d + np.flatnonzero(i != j)] == 0)
            ours = np.concatenate([ours[..., :d], ours[..., -1:]], axis=2)
            naive = np.concatenate([naive[..., :d], naive[..., -1:]], axis=2)
        # QDA's log-determinant and NB's sum of log variances differ by NB's dropped
        # constant only: compare the rules' differences between classes
        np.testing.assert_allclose(ours - ours[:, :1], naive - naive[:, :1], rtol=1e-8,
                                   atol=1e-8)


def test_m_at_most_d_is_defined_by_either_rule():
    """At m <= d every covariance is singular: epsilon and pinv both give finite rules; at
    m = 2 epsilon's LDA is nearest class mean and pinv's direction lies in the rows' span."""
    data = _task(100, 10, 2, seed=3)
    idx = _idx(100, 2, 4, 2)
    X, y = data.X[idx], data.y[idx]
    for singular in ("epsilon", "pinv"):
        for fit in (fit_lda, fit_qda):
            assert np.isfinite(fit(X, y, 2, singular=singular)).all()
    theta = fit_lda(X, y, 2, singular="epsilon", smoothing=1.0)  # (S, 2, d + 1)
    x = data.X
    for s in range(4):
        mu = X[s][np.argsort(y[s])]  # one row per class: the class means
        nearest = ((x[:, None, :] - mu[None]) ** 2).sum(-1).argmin(1)
        ours = (np.c_[x, np.ones(100)] @ theta[s].T).argmax(1)
        assert (ours == nearest).all()


def test_non_singular_covariance_is_used_as_it_is():
    """Neither rule touches a non-singular covariance: its precision is its inverse."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 5, 5))
    cov = A @ np.swapaxes(A, 1, 2) + np.eye(5)
    for singular in ("epsilon", "pinv"):
        P, logdet, flag = precision(cov, lambda flat: np.full(flat.shape, 1e-3), singular)
        np.testing.assert_allclose(P, np.linalg.inv(cov), rtol=1e-9)
        np.testing.assert_allclose(logdet, np.linalg.slogdet(cov)[1], rtol=1e-12)
        assert not flag.any()


def test_heldout_error_through_score_splits():
    """score_splits' error of an lda and a qda model is each split's error on its own test
    rows, counted directly."""
    data = _task(150, 3, 2, seed=4)
    idx = _idx(150, 20, 5, 2)
    _, seeds = split_seeds(0, "g", 20, range(5))
    for name in ("lda", "qda"):
        spec = ModelSpec(name, name, resolve_options(name, name, {}))
        got = models.score_splits(spec, data, idx, seeds)["error"]
        entry = lookup(name, "continuous")
        fit = entry.fit(data, get_design(data, entry.design(data, spec.options)), idx,
                        spec.options)
        scores = _scores(data, name, fit.theta)
        for s in range(5):
            test = np.setdiff1d(np.arange(150), idx[s])
            assert got[s] == pytest.approx(np.mean((scores[s, test] > 0) != data.y[test]))


def test_discrete_tasks_and_bad_options_are_refused():
    """lda fits continuous tasks only; a shrinkage outside [0, 1] is a config error."""
    with pytest.raises(ConfigError, match="continuous"):
        lookup("lda", "discrete")
    with pytest.raises(ConfigError, match="shrinkage"):
        resolve_options("q", "qda", {"shrinkage": 1.5})


@pytest.mark.parametrize("name", ["lda", "qda"])
@pytest.mark.parametrize("K", [2, 4])
def test_memory_plan_bounds_the_entries(name, K):
    """The width an entry declares for the memory plan is at least what it holds."""
    data = _task(60, 6, K)
    opts = resolve_options(name, name, {})
    entry = lookup(name, "continuous", multiclass=K > 2)
    width, kept = entry.planned(data, opts)
    assert width >= entry.width(data, get_design(data, entry.design(data, opts)))
    assert kept == 0


@pytest.mark.parametrize("name", ["lda", "qda"])
def test_smoothing_zero_is_the_maximum_likelihood_prior(name):
    """smoothing: 0 is accepted and gives the class frequencies count(k) / m as the prior
    (the intercepts differ from uniform-prior ones by exactly log(count(k) / m) + log K)."""
    opts = resolve_options(name, name, {"smoothing": 0})
    assert opts["smoothing"] == 0.0
    data = _task(90, 3, 3, seed=4)
    idx = np.concatenate([np.arange(3), np.arange(3, 30, 3), np.arange(4, 10, 3)])[None]
    X, y = data.X[idx], data.y[idx]
    fit = fit_lda if name == "lda" else fit_qda
    ml = fit(X, y, 3, smoothing=0.0)[0]
    flat = fit(X, y, 3, prior="uniform")[0]
    counts = np.bincount(y[0], minlength=3)
    np.testing.assert_allclose(ml[:, -1] - flat[:, -1],
                               np.log(counts / counts.sum()) + np.log(3), atol=1e-12)
    np.testing.assert_array_equal(ml[:, :-1], flat[:, :-1])


@pytest.mark.parametrize("name", ["lda", "qda"])
def test_a_feature_constant_in_the_training_rows_ties_no_k_class_prediction(name):
    """K classes, a feature equal to 1 in every training row (0 in a few test rows): its
    weights of about 1/epsilon are the same in every class, so they change no prediction,
    and the tie band (relative to the rule's size) must not turn the rows into ties. The
    mistakes counted are those of the argmax of the scores (the task's rows are in general
    position: no exact tie)."""
    from nbvslr.models.evaluate_multi import count_mistakes_multi

    base = _task(300, 3, 3, seed=11)
    one = np.ones((300, 1))
    one[[5, 50, 95, 140, 185, 230, 275]] = 0.0  # never in the training rows below
    data = Dataset(name="c", title="c", X=np.hstack([base.X, one]), y=base.y,
                   kind="continuous", classes=base.classes)
    rows = np.setdiff1d(np.arange(300), np.flatnonzero(one[:, 0] == 0.0))
    idx = rows[_idx(rows.size, 30, 8, 3)]  # every class present: rows k, k + 3, ... of rows
    assert (np.sort(data.y[idx][:, :3], axis=1) == np.arange(3)).all()
    opts = resolve_options(name, name, {})
    entry = lookup(name, "continuous", multiclass=True)
    design = get_design(data, entry.design(data, opts))
    theta = entry.fit(data, design, idx, opts).theta  # (S, K, P)
    mistakes, _ = count_mistakes_multi(design, data, theta, None)
    scores = _scores(data, name, theta)  # (S, N, K)
    assert np.all(mistakes == (scores.argmax(axis=2) != data.y).sum(axis=1))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("name", ["lda", "qda"])
def test_blocks_of_splits_change_no_fit(name, K):
    """The entry fits its splits in blocks of the cache budget: one split a block gives every
    split the theta, bit for bit, of the fit of all at once (singular covariances, at m <= d
    and from a feature constant in some training sets, and non-singular ones alike)."""
    from nbvslr.models.budget import Budget

    base = _task(120, 6, K, seed=4)
    X = base.X.copy()
    X[: 60, 0] = 1.0  # constant in a training set drawn from the first 60 rows
    data = Dataset(name="b", title="b", X=X, y=base.y, kind="continuous",
                   classes=base.classes)
    idx = np.concatenate([_idx(60, 12, 5, K, seed=5), _idx(120, 40, 5, K, seed=6)[:, :12]])
    opts = resolve_options(name, name, {})
    entry = lookup(name, "continuous", multiclass=K > 2)
    design = get_design(data, entry.design(data, opts))
    whole = entry.fit(data, design, idx, opts, budget=Budget(memory=1e12)).theta
    # one split a block, whatever the entry's fewest (LDA's min_block)
    alone = entry.fit(data, design, idx, opts, budget=Budget(memory=1.0, min_block=1)).theta
    np.testing.assert_array_equal(alone, whole)


def test_a_failed_factor_leaves_the_others_as_the_stack_makes_them():
    """A stack holding a matrix that is not positive definite: each other matrix's Cholesky
    factor is the one the stack's factorisation gives it, the failed one NaN and flagged."""
    from nbvslr.models.discriminant.gaussian import _cholesky_where

    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 5, 8))
    C = A @ np.swapaxes(A, 1, 2)
    good = np.linalg.cholesky(C)
    C[2, 0, 0] = -1.0
    L, ok = _cholesky_where(C)
    assert ok.tolist() == [True, True, False, True, True, True]
    np.testing.assert_array_equal(L[ok], good[ok])
    assert np.isnan(L[2]).all()


def test_the_public_cholesky_path_gives_the_private_paths_factors(monkeypatch):
    """Without numpy's private stacked factorisation (another numpy version), the public
    path gives the same factors and flags, bit for bit, a failed matrix among them or not."""
    from nbvslr.models.discriminant import gaussian

    rng = np.random.default_rng(5)
    A = rng.normal(size=(6, 5, 8))
    C = A @ np.swapaxes(A, 1, 2)
    bad = C.copy()
    bad[[1, 4], 0, 0] = -1.0
    fast = [gaussian._cholesky_where(M.copy()) for M in (C, bad)]
    monkeypatch.setattr(gaussian, "_CHOLESKY_LO", None)
    public = [gaussian._cholesky_where(M.copy()) for M in (C, bad)]
    for (L1, ok1), (L2, ok2) in zip(fast, public, strict=True):
        np.testing.assert_array_equal(ok1, ok2)
        np.testing.assert_array_equal(L1, L2)  # NaN where failed, on both paths
    assert public[1][1].tolist() == [True, False, True, True, False, True]


def test_flagged_before_after_and_unflagged_covariances_in_one_stack():
    """``singular: epsilon`` on a stack mixing a covariance flagged before factorising (a
    feature of variance 0), one flagged after (collinear, full rank bound: a failed or tiny
    pivot) and regular ones: epsilon added exactly where flagged, written in place when
    ``overwrite``, and each factor numpy's Cholesky of that matrix alone, bit for bit."""
    from nbvslr.models.discriminant.gaussian import _factored

    rng = np.random.default_rng(8)
    A = rng.normal(size=(5, 20, 4))
    A[1, :, 2] = 0.0  # a feature of variance 0: flagged before
    A[3, :, 3] = A[3, :, 0] + A[3, :, 1]  # collinear: flagged by its factorisation
    cov = np.swapaxes(A, 1, 2) @ A / 20.0  # (5, 4, 4)
    eps = np.array([1e-3, 2e-3, 3e-3, 4e-3, 5e-3])
    expect_flag = [False, True, False, True, False]
    for overwrite in (False, True):
        C = cov.copy()
        used, L, logdet, flag = _factored(C, lambda flat: eps[flat], 4.0, overwrite)
        assert flag.tolist() == expect_flag
        want = cov + np.where(flag, eps, 0.0)[:, None, None] * np.eye(4)
        np.testing.assert_array_equal(used, want)
        for a in range(5):
            np.testing.assert_array_equal(L[a], np.linalg.cholesky(want[a]))
        np.testing.assert_array_equal(logdet, 2.0 * np.log(np.einsum("nii->ni", L)).sum(axis=1))
        assert (used is C or np.shares_memory(used, C)) == overwrite
        if not overwrite:
            np.testing.assert_array_equal(C, cov)


def test_precision_from_the_factors_is_the_exactly_symmetric_inverse():
    """``singular: epsilon``'s precision, made from the Cholesky factors: symmetric bit for
    bit, the inverse of the covariance used (plus epsilon where singular)."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(4, 6, 3))  # rank 3 < 6: singular, epsilon added
    B = rng.normal(size=(4, 6, 9))
    cov = np.concatenate([A @ np.swapaxes(A, 1, 2), B @ np.swapaxes(B, 1, 2)])
    P, _, flag = precision(cov, lambda flat: np.full(flat.shape, 1e-2), "epsilon",
                           np.array([3] * 4 + [8] * 4))
    assert flag.tolist() == [True] * 4 + [False] * 4
    np.testing.assert_array_equal(P, np.swapaxes(P, 1, 2))
    used = cov + np.where(flag, 1e-2, 0.0)[:, None, None] * np.eye(6)
    np.testing.assert_allclose(P @ used, np.broadcast_to(np.eye(6), P.shape), atol=1e-8)


@pytest.mark.parametrize("K", [2, 4])
def test_compiled_class_stats_are_the_numpy_steps_to_the_last_bit(K):
    """The compiled class statistics: counts exact, each mean the sum of its class's rows in
    row order over the count (within rounding of the one-hot product), the deviations and
    their stable sort by class equal to numpy's subtraction and argsort gather bit for bit."""
    from nbvslr.models.discriminant.gaussian import _class_stats

    rng = np.random.default_rng(11)
    S, m, d = 5, 40, 7
    X = rng.normal(size=(S, m, d)) * 10.0 ** rng.integers(-3, 4, size=d)
    y = np.stack([rng.permutation(np.arange(m) % K) for _ in range(S)])
    n, mu, _, Xc = _class_stats(X, y, K)
    Y = (y[..., None] == np.arange(K)).astype(float)  # (S, m, K)
    np.testing.assert_array_equal(n, Y.sum(axis=1))
    rows = np.zeros((S, K, d))
    for i in range(m):  # row order
        rows[np.arange(S), y[:, i]] += X[:, i]
    np.testing.assert_array_equal(mu, rows / n[:, :, None])
    np.testing.assert_allclose(mu, np.matmul(np.swapaxes(Y, 1, 2), X) / n[:, :, None],
                               rtol=1e-13, atol=0)
    np.testing.assert_array_equal(Xc, X - mu[np.arange(S)[:, None], y])
    _, _, _, Xs = _class_stats(X, y, K, by_class=True)
    order = np.argsort(y, axis=1, kind="stable")
    np.testing.assert_array_equal(Xs, Xc[np.arange(S)[:, None], order])


@pytest.mark.parametrize("d", [1, 6])
def test_epsilon_variance_is_numpys_to_the_last_bit(d):
    """The largest feature variance behind epsilon equals numpy's ``var(axis=1).max(1)`` bit
    for bit, from the stacked rows or from the data's rows and their indices, the compiled
    pass (d > 1) and numpy's own pairwise sum (one feature) alike."""
    from nbvslr.models.discriminant.gaussian import _class_stats, _epsilon

    rng = np.random.default_rng(12)
    data = rng.normal(size=(500, d)) * 1e3 + 7.0
    rows = np.stack([rng.choice(500, 300, replace=False) for _ in range(4)])
    y = np.stack([rng.permutation(np.arange(300) % 2) for _ in range(4)])
    expect = data[rows].var(axis=1).max(axis=1)
    for X, r in ((data[rows], None), (data, rows)):
        _, _, v_max, _ = _class_stats(X, y, 2, rows=r)
        np.testing.assert_array_equal(v_max, expect)
        eps = _epsilon(v_max, 1.0, 1e-300, per=2)
        np.testing.assert_array_equal(eps(np.arange(8)), np.repeat(expect, 2))


def test_compiled_precision_steps_are_numpys_fancy_indexing():
    """The mirror of a precision's lower triangle and QDA's product weights (-P_ii / 2,
    -P_ij) equal numpy's fancy-indexed versions bit for bit."""
    from nbvslr.kernels.gaussian import mirror_lower, quadratic_weights

    rng = np.random.default_rng(13)
    d = 5
    P = rng.normal(size=(3, d, d))
    expect = P.copy()
    i, j = np.triu_indices(d, 1)
    expect[:, i, j] = expect[:, j, i]
    mirror_lower(P)
    np.testing.assert_array_equal(P, expect)
    out = np.full((3, 2 + d * (d + 1) // 2 + 1), 9.0)
    quadratic_weights(P, out, 2)
    i, j = quadratic_terms(d)
    np.testing.assert_array_equal(out[:, 2:-1], np.where(i == j, -0.5, -1.0) * P[:, i, j])
    assert (out[:, :2] == 9.0).all() and (out[:, -1] == 9.0).all()
