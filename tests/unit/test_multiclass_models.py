"""Naive Bayes and softmax LR of K > 2 classes: against scikit-learn, batched, the tie
rule, the K = 2 case and the separable-set refusal."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLR
from sklearn.naive_bayes import CategoricalNB as SkCNB
from sklearn.naive_bayes import GaussianNB as SkGNB

from nbvslr import models
from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models import ModelSpec, resolve_options
from nbvslr.models.design import get_design
from nbvslr.models.evaluate_multi import count_mistakes_multi
from nbvslr.models.lr.softmax import fit_softmax
from nbvslr.models.nb.fit import fit_gaussian_nb
from nbvslr.models.nb.fit_multi import fit_categorical_nb_multi, fit_gaussian_nb_multi
from nbvslr.models.registry import lookup
from nbvslr.splits import split_seeds


def _blobs(m: int = 120, K: int = 3, d: int = 4, seed: int = 0):
    """Overlapping Gaussian classes (not separable), every class present."""
    rng = np.random.default_rng(seed)
    y = np.arange(m) % K
    X = rng.normal(size=(m, d)) + 0.8 * np.eye(K, d)[y]
    return (X - X.min(0)) / (X.max(0) - X.min(0)), y


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _prior(y: np.ndarray, K: int, l: float = 1.0) -> np.ndarray:
    return (np.bincount(y, minlength=K) + l) / (y.size + K * l)


def test_gaussian_nb_class_variance_is_sklearns():
    """variance: class is scikit-learn's GaussianNB with the Laplace prior: the same
    predictions, probabilities within 1e-6."""
    X, y = _blobs()
    theta = fit_gaussian_nb_multi(X[None], y[None], 3, variance="class")[0]  # (K, 2d + 1)
    Z1 = np.concatenate([X, X * X, np.ones((len(X), 1))], axis=1)
    ours = _softmax(Z1 @ theta.T)
    sk = SkGNB(priors=_prior(y, 3), var_smoothing=1e-9).fit(X, y)
    np.testing.assert_allclose(ours, sk.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(ours.argmax(1), sk.predict(X))


def test_gaussian_nb_shared_variance_pools_over_k_classes():
    """variance: shared is the Gaussian rule with one ML variance per feature pooled over
    the K classes (plus epsilon), computed here row by row."""
    X, y = _blobs(K=4, m=80)
    theta = fit_gaussian_nb_multi(X[None], y[None], 4)[0]
    mu = np.stack([X[y == k].mean(0) for k in range(4)])
    var = ((X - mu[y]) ** 2).sum(0) / len(X) + 1e-9 * X.var(0).max()
    logp = np.stack([-((X - mu[k]) ** 2 / (2 * var)).sum(1) for k in range(4)], 1)
    logp += np.log(_prior(y, 4))
    Z1 = np.concatenate([X, np.ones((len(X), 1))], axis=1)
    np.testing.assert_allclose(_softmax(Z1 @ theta.T), _softmax(logp), atol=1e-9)


def test_gaussian_nb_with_two_classes_is_the_binary_rule():
    """With K = 2 the class-1 minus class-0 scores are the binary fit's log-odds."""
    X, y = _blobs(K=2)
    multi = fit_gaussian_nb_multi(X[None], y[None], 2)[0]
    binary = fit_gaussian_nb(X[None], y[None].astype(np.int8))[0]
    np.testing.assert_allclose(multi[1] - multi[0], binary, rtol=1e-9, atol=1e-9)


def test_categorical_nb_is_sklearns():
    """Categorical NB of K classes is scikit-learn's CategoricalNB (alpha 1, every level
    counted, the Laplace prior): the same predictions, probabilities within 1e-6."""
    rng = np.random.default_rng(1)
    n_values = (3, 2, 4)
    y = np.arange(90) % 3
    codes = np.stack([(rng.integers(0, k, 90) + y) % k for k in n_values], axis=1)
    theta = fit_categorical_nb_multi(codes[None], y[None], 3, n_values)[0]
    onehot = np.concatenate([np.eye(k)[codes[:, j]] for j, k in enumerate(n_values)], axis=1)
    Z1 = np.concatenate([onehot, np.ones((90, 1))], axis=1)
    ours = _softmax(Z1 @ theta.T)
    sk = SkCNB(alpha=1.0, min_categories=list(n_values), class_prior=_prior(y, 3))
    sk.fit(codes, y)
    np.testing.assert_allclose(ours, sk.predict_proba(codes), atol=1e-6)
    np.testing.assert_array_equal(ours.argmax(1), sk.predict(codes))


@pytest.mark.parametrize("C", [1.0, None])
def test_softmax_is_sklearns_multinomial(C):
    """Softmax LR with C = 1 (all K vectors penalised, intercepts free) and unpenalised
    (K - 1 vectors and a reference class) is scikit-learn's multinomial LogisticRegression
    at C = 1 and at C = 1e12: the same predictions, probabilities within 1e-6."""
    X, y = _blobs(m=150, K=3, d=3)
    Z1 = np.concatenate([X, np.ones((len(X), 1))], axis=1)
    res = fit_softmax(Z1[None], y[None], 3, C=C)
    assert res.converged.all() and not res.separable.any()
    ours = _softmax(Z1 @ res.theta[0].T)
    sk = SkLR(C=1e12 if C is None else C, tol=1e-12, max_iter=10_000, solver="newton-cg")
    sk.fit(X, y)
    np.testing.assert_allclose(ours, sk.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(ours.argmax(1), sk.predict(X))
    if C is None:
        np.testing.assert_array_equal(res.theta[0, -1], 0.0)  # the reference class


def test_softmax_fits_each_split_as_if_alone():
    """A batch of splits gives each split the fit it gets alone (to rounding)."""
    X, y = _blobs(m=200, K=4, d=3)
    rng = np.random.default_rng(2)
    idx = np.stack([np.sort(rng.choice(200, 60, replace=False)) for _ in range(5)])
    Z1 = np.concatenate([X, np.ones((200, 1))], axis=1)[idx]
    batch = fit_softmax(Z1, y[idx], 4, C=1.0)
    for s in range(5):
        alone = fit_softmax(Z1[s : s + 1], y[idx][s : s + 1], 4, C=1.0)
        np.testing.assert_allclose(batch.theta[s], alone.theta[0], atol=1e-8)


def _task(X: np.ndarray, y: np.ndarray, K: int) -> Dataset:
    return Dataset(name="blobs", title="blobs", X=X, y=y.astype(np.int8), kind="continuous",
                   classes=tuple(str(k) for k in range(K)))


def test_ties_among_t_classes_count_t_minus_one_over_t():
    """A rule with every score equal ties all K = 3 classes: (t - 1)/t = 2/3 of an error per
    row; two tied top classes count 1/2 when the true class is one of them, else 1."""
    X, y = _blobs(m=30, K=3)
    data = _task(X, y, 3)
    design = get_design(data, "x")
    zero = np.zeros((1, 3, X.shape[1] + 1))
    wrong, _ = count_mistakes_multi(design, data, zero, None)
    assert wrong[0] == pytest.approx(30 * 2 / 3)
    two = zero.copy()
    two[0, :2, -1] = 1.0  # classes 0 and 1 tie on top, class 2 below
    wrong, _ = count_mistakes_multi(design, data, two, None)
    assert wrong[0] == pytest.approx(10 * 0.5 + 10 * 0.5 + 10 * 1.0)


def test_heldout_error_is_error_outside_the_training_rows():
    """score_splits' error of each split is the error of its rule on the rows it did not
    train on, counted directly."""
    X, y = _blobs(m=90, K=3)
    data = _task(X, y, 3)
    rng = np.random.default_rng(3)
    idx = np.stack([np.sort(rng.choice(90, 12, replace=False)) for _ in range(6)])
    spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", {"C": 1.0}))
    _, seeds = split_seeds(0, "blobs", 12, range(6))
    got = models.score_splits(spec, data, idx, seeds)["error"]
    entry = lookup("lr", "continuous", multiclass=True)
    fit = entry.fit(data, get_design(data, "x"), idx, spec.options, seeds)
    Z1 = np.concatenate([X, np.ones((90, 1))], axis=1)
    for s in range(6):
        test = np.setdiff1d(np.arange(90), idx[s])
        pred = (Z1[test] @ fit.theta[s].T).argmax(1)
        assert got[s] == pytest.approx(np.mean(pred != y[test]))


def test_separable_sets_sample_the_cone_or_refit():
    """An unpenalised multiclass lr meeting a separable training set averages the test error
    of weight matrices drawn from the cone (each draw classifies every training row
    correctly and sums to 0 over the classes: no reference class); separable: l2 refits the
    split with C_separable instead."""
    X, y = _blobs(m=90, K=3)
    data = _task(X, y, 3)
    idx = np.array([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]])  # six rows, three classes
    _, seeds = split_seeds(0, "blobs", 6, range(2))
    opts = resolve_options("lr", "lr", {})
    fit = lookup("lr", "continuous", multiclass=True).fit(
        data, get_design(data, "x"), idx, opts, seeds)
    kept = opts["mcmc_chains"] * opts["mcmc_draws"]
    assert list(fit.sampled) == [0, 1] and fit.draws.shape[:3] == (2, kept, 3)
    Z1 = np.concatenate([X, np.ones((90, 1))], axis=1)
    for s in range(2):
        scores = np.einsum("mp,nkp->nmk", Z1[idx[s]], fit.draws[s])  # (n, m, K)
        assert (scores.argmax(2) == y[idx[s]]).all()
        np.testing.assert_allclose(fit.draws[s].sum(axis=1), 0.0, atol=1e-12)
    out = models.score_splits(ModelSpec("lr", "lr", opts), data, idx, seeds)
    assert out["separable"].all() and not out["converged"].any()
    l2 = ModelSpec("lr", "lr", resolve_options("lr", "lr", {"separable": "l2"}))
    refit = models.score_splits(l2, data, idx, seeds)
    assert refit["separable"].all() and refit["converged"].all()


def test_cone_sampler_is_uniform_on_a_small_cone():
    """The HMC draws of a three-class cone in 4 coordinates have the law of rejection
    sampling (a Gaussian kept when it classifies every row correctly, normalised): the
    two-sample KS test of each coordinate does not reject at 0.1 %."""
    from scipy.stats import ks_2samp

    from nbvslr.models.lr.cone_hmc import sample_cone_hmc
    from nbvslr.models.lr.entry_multi import cone_rows
    from nbvslr.models.lr.sum_zero import to_coordinates, to_weights

    Z1 = np.array([[0.0, 1.0], [0.5, 1.0], [1.0, 1.0]])[None]  # one feature, intercept
    y = np.array([[0, 1, 2]])
    A = cone_rows(Z1, y, 3)[0]  # (6, 4)
    rng = np.random.default_rng(0)
    g = rng.standard_normal((400_000, 4))
    ref = g[(g @ A.T > 0).all(axis=1)]
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    start = ref[0]
    S = 300
    seeds = [np.random.SeedSequence(7, spawn_key=(i,)) for i in range(S)]
    draws = sample_cone_hmc(np.repeat(Z1, S, 0), np.repeat(y, S, 0), 3,
                            np.repeat(to_weights(start, 3)[None], S, 0), seeds, chains=1,
                            draws=5, burn_in=20, thin=5)
    draws = to_coordinates(draws).reshape(-1, 4)
    assert (draws @ A.T > 0).all()
    for j in range(4):
        assert ks_2samp(draws[:, j], ref[:2000, j]).pvalue > 1e-3


@pytest.mark.parametrize("K, m, d", [(3, 6, 2), (4, 12, 5), (10, 30, 20)])
def test_cone_sampler_is_the_binary_sampler_on_the_cone_rows(K, m, d):
    """The K-class sampler, which never forms the cone's rows, takes the binary sampler's
    steps on them (``cone_rows``): the same seeds give the same draws up to rounding, each
    classifying its training rows correctly."""
    from nbvslr.models.lr.cone_hmc import sample_cone_hmc, separates
    from nbvslr.models.lr.entry_multi import cone_rows
    from nbvslr.models.lr.hmc import sample_separating_hmc
    from nbvslr.models.lr.sum_zero import to_coordinates, to_weights

    rng = np.random.default_rng(1)
    Z1 = np.concatenate([rng.random((8, m, d)), np.ones((8, m, 1))], axis=2)
    y = np.tile(np.arange(m) % K, (8, 1))
    res = fit_softmax(Z1, y, K, stop_when_separable=True)
    sep = np.flatnonzero(res.separable)
    assert sep.size >= 4
    seeds = [np.random.SeedSequence(3, spawn_key=(int(i),)) for i in sep]
    start = res.theta[sep]  # (s, K, P), the reference form's
    kw = dict(chains=2, draws=3, burn_in=5, thin=2)
    A = cone_rows(Z1[sep], y[sep], K)
    binary = sample_separating_hmc(A, np.ones(A.shape[:2]), to_coordinates(start), seeds,
                                   **kw)
    ours = sample_cone_hmc(Z1[sep], y[sep], K, start, seeds, **kw)
    np.testing.assert_allclose(ours, to_weights(binary, K), atol=1e-9)
    assert separates(np.repeat(Z1[sep], 6, 0), np.repeat(y[sep], 6, 0),
                     ours.reshape(-1, K, d + 1)).all()
    with pytest.raises(ValueError, match="classify every training row"):
        sample_cone_hmc(Z1[sep], y[sep], K, -start, seeds, **kw)


def _correct_reference(scores, counts, tau):
    """Rows counted correct per rule by numpy: ``sum_u sum_{k top} c_uk / t_u``."""
    top = scores >= scores.max(axis=2, keepdims=True) - tau[None, :, None]  # (R, n, K)
    t = top.sum(axis=2)
    hit = np.where(top, counts if counts.ndim == 3 else counts[:, None, :], 0.0).sum(axis=2)
    return (hit / t).sum(axis=0)


def test_compiled_counts_are_numpys_to_the_last_bit():
    """The compiled pass counts ties among t classes as numpy's sums do, bit for bit
    (scores with many ties: integers)."""
    from nbvslr.kernels.classes import add_correct, add_train_correct

    rng = np.random.default_rng(5)
    scores = rng.integers(0, 3, (500, 7, 5)).astype(np.float64)  # ties among 1 .. 5
    counts = rng.integers(0, 4, (500, 5)).astype(np.float64)
    tau = np.full(7, 1e-9)
    out = np.zeros(7)
    add_correct(scores, counts, tau, out)
    assert np.array_equal(out, _correct_reference(scores, counts, tau))
    rows = rng.integers(0, 500, (7, 60))  # each rule's training rows among the 500
    labels = rng.integers(0, 5, (7, 60))
    onehot = np.zeros((60, 7, 5))
    np.put_along_axis(onehot, labels.T[:, :, None], 1.0, axis=2)
    got = np.zeros(7)
    add_train_correct(scores, rows, labels, tau, got)
    own = scores[rows.T, np.arange(7)[None, :], :]  # (60, 7, 5) each rule's rows' scores
    assert np.array_equal(got, _correct_reference(own, onehot, tau))
    assert not np.array_equal(got, np.round(got))  # thirds and fifths were counted


def test_nb_ties_option_other_than_half_is_refused_for_k_classes():
    """ties: positive names a class of two: a K-class task refuses it in one line."""
    X, y = _blobs(m=30, K=3)
    spec = ModelSpec("nb", "nb", resolve_options("nb", "nb", {"ties": "positive"}))
    _, seeds = split_seeds(0, "blobs", 6, range(1))
    with pytest.raises(ConfigError, match="remove ties:"):
        models.score_splits(spec, _task(X, y, 3), np.array([[0, 1, 2, 3, 4, 5]]), seeds)


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
@pytest.mark.parametrize("family, options", [
    ("nb", {}), ("nb", {"variance": "class"}), ("lr", {"C": 1.0}), ("lr", {"coding": "full"}),
])
def test_memory_plan_bounds_the_k_class_entries(kind, family, options):
    """The width a K-class entry declares for the memory plan is at least what it holds."""
    rng = np.random.default_rng(4)
    y = np.arange(40) % 3
    if kind == "continuous":
        data = _task(rng.random((40, 5)), y, 3)
    else:
        data = Dataset(name="d", title="d", X=rng.integers(0, 3, (40, 4)), y=y.astype(np.int8),
                       kind="discrete", n_values=(3, 3, 3, 3), classes=("a", "b", "c"))
    opts = resolve_options(family, family, options)
    entry = lookup(family, kind, multiclass=True)
    width, kept = entry.planned(data, opts)
    assert width >= entry.width(data, get_design(data, entry.design(data, opts)))
    sampled = family == "lr" and opts["C"] is None and opts["separable"] == "sample"
    assert kept == (opts["mcmc_chains"] * opts["mcmc_draws"] if sampled else 0)


def test_memory_plan_counts_the_k_class_sampler():
    """The paper's rule adds the K-class sampler's holdings per training row to the plan
    (its work arrays and a row of the Gram matrix it may hold), hit-and-run the cone's
    m (K - 1) rows; a penalised fit samples nothing."""
    from nbvslr.models.lr.cone_hmc import gram_rows, per_row

    rng = np.random.default_rng(4)
    data = _task(rng.random((900, 5)), np.arange(900) % 3, 3)
    entry = lookup("lr", "continuous", multiclass=True)
    penalised, kept_c = entry.planned(data, resolve_options("lr", "lr", {"C": 1.0}))
    sampled, kept = entry.planned(data, resolve_options("lr", "lr", {}))
    assert kept_c == 0 and kept > 0
    assert per_row(900, 3, 6) == 12 + 9 + 6 + gram_rows() and gram_rows() < 900
    assert sampled == penalised + -(-per_row(900, 3, 6) // 3)
    walk, _ = entry.planned(data, resolve_options("lr", "lr", {"mcmc_method": "hit-and-run"}))
    assert walk == penalised * 5  # (K - 1)^2 + 1 times the fit's width


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 10, 16, 17, 26, 64, 127, 128, 129])
def test_short_axis_sums_and_maxima_are_numpys_to_the_last_bit(n):
    # sum_last replaces numpy's per-row reduction over the K classes in the softmax fit;
    # the fits (and so every committed multiclass curve) stay bit for bit the same only if
    # the sums are made in numpy's own order
    from nbvslr.models.lr.softmax import max_last, sum_last

    rng = np.random.default_rng(n)
    x = rng.standard_normal((5, 40, n)) * np.exp(5 * rng.standard_normal((5, 40, n)))
    x[0, 0, 0] = -0.0
    assert np.array_equal(sum_last(x), x.sum(axis=2))
    assert np.array_equal(max_last(x), x.max(axis=2))
    with_nan = x.copy()
    with_nan[1, 2, n // 2] = np.nan
    assert np.isnan(sum_last(with_nan)[1, 2]) and np.isnan(max_last(with_nan)[1, 2])
    assert np.array_equal(sum_last(with_nan)[0], with_nan.sum(axis=2)[0])


def test_compiled_variance_sums_are_numpys_to_the_last_bit():
    # K-class Gaussian NB takes its epsilon from the largest variance and its shared
    # variance from the within-class sums: compiled, they must stay numpy's numbers
    from nbvslr.kernels.classes import largest_variance, within_squares

    rng = np.random.default_rng(3)
    S, m, d, K = 6, 57, 9, 4
    X = rng.standard_normal((S, m, d)) * np.exp(3 * rng.standard_normal((1, 1, d))) + 50.0
    y = rng.integers(0, K, size=(S, m))
    mu = rng.standard_normal((S, K, d))
    out = np.empty(S)
    largest_variance(X, out)
    assert np.array_equal(out, X.var(axis=1).max(axis=1))
    ss = np.empty((S, d))
    within_squares(X, mu, y, ss)
    own = np.take_along_axis(mu, y[:, :, None], axis=1)  # (S, m, d) each row's class mean
    assert np.array_equal(ss, ((X - own) ** 2).sum(axis=1))
    X[2, 5, 3] = np.nan
    largest_variance(X, out)
    assert np.isnan(out[2]) and np.array_equal(out[3:], X[3:].var(axis=1).max(axis=1))


def _numpy_largest_variance(X, out):
    out[:] = X.var(axis=1).max(axis=1)


def _numpy_within_squares(X, mu, y, out):
    dev = X - np.take_along_axis(mu, y[:, :, None], axis=1)
    out[:] = (dev * dev).sum(axis=1)


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("variance", ["shared", "class"])
@pytest.mark.parametrize("K", [2, 3])
def test_gaussian_nb_of_any_width_keeps_numpys_variance_sums(monkeypatch, d, variance, K):
    # numpy sums one feature's column (d = 1) pairwise, not row by row: K-class Gaussian NB
    # on a single feature must still give the numbers of numpy's own sums, to the last bit
    import nbvslr.kernels.classes as classes

    rng = np.random.default_rng(d)
    S, m = 5, 150
    X = rng.random((S, m, d)) * np.exp(2 * rng.standard_normal((1, 1, d)))
    y = np.stack([rng.permutation(np.arange(m) % K) for _ in range(S)])
    for opts in ({}, {"var_estimator": "unbiased"}, {"rescale": "training"},
                 {"var_smoothing": 0.5}):  # epsilon half the largest variance: its bits show
        got = fit_gaussian_nb_multi(X, y, K, variance=variance, **opts)
        with monkeypatch.context() as patch:
            patch.setattr(classes, "largest_variance", _numpy_largest_variance)
            patch.setattr(classes, "within_squares", _numpy_within_squares)
            want = fit_gaussian_nb_multi(X, y, K, variance=variance, **opts)
        assert np.array_equal(got, want), opts


@pytest.mark.parametrize("variance", ["shared", "class"])
def test_gaussian_nb_feature_constant_in_the_training_rows_ties_no_row(variance):
    """K-class Gaussian NB with a feature equal to 1 in every training row (0 in a few test
    rows): its weights of about 1/epsilon are the same in every class, so they change no
    prediction, and the tie band (relative to the rule's size) must not turn the rows into
    ties: the mistakes counted are those of the scores' argmax."""
    X, y = _blobs(300, 3, 3, seed=4)
    one = np.ones((300, 1))
    held = np.array([5, 50, 95, 140, 185, 230, 275])
    one[held] = 0.0
    data = _task(np.hstack([X, one]), y, 3)
    rows = np.setdiff1d(np.arange(300), held)
    rng = np.random.default_rng(2)
    idx = np.stack([np.concatenate([rows[:3], rng.choice(rows[3:], 27, replace=False)])
                    for _ in range(8)])  # rows[:3] are of classes 0, 1, 2
    opts = resolve_options("nb", "nb", {"variance": variance})
    entry = lookup("nb", "continuous", multiclass=True)
    design = get_design(data, entry.design(data, opts))
    theta = entry.fit(data, design, idx, opts).theta  # (S, K, P)
    mistakes, _ = count_mistakes_multi(design, data, theta, None)
    scores = np.einsum("np,skp->snk", design.Z1, theta)  # (S, N, K)
    assert np.all(mistakes == (scores.argmax(axis=2) != data.y).sum(axis=1))
