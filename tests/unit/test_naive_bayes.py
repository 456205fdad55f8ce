"""Naive Bayes: the paper's Gaussian and categorical models against hand computations and
scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.naive_bayes import CategoricalNB, GaussianNB

from nbvslr.errors import DataError
from nbvslr.models.design import onehot_offsets
from nbvslr.models.nb.fit import fit_categorical_nb, fit_gaussian_nb


def _scores_x(theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Log-odds of a linear theta over design x: (n,)."""
    return X @ theta[:-1] + theta[-1]


def _onehot(codes: np.ndarray, n_values: tuple[int, ...]) -> np.ndarray:
    Z = np.zeros((codes.shape[0], sum(n_values)))
    np.put_along_axis(Z, codes + onehot_offsets(n_values), 1.0, axis=1)
    return Z


def test_gaussian_shared_matches_hand_computation():
    """Shared-variance GNB = class means, pooled ML variance + epsilon, smoothed prior."""
    X = np.array([[0.0, 0.2], [0.4, 0.6], [1.0, 0.9], [0.8, 0.5], [0.6, 1.0]])  # (5, 2)
    y = np.array([0, 0, 1, 1, 1])
    theta = fit_gaussian_nb(X[None], y[None], var_smoothing=1e-3)[0]
    mu0, mu1 = np.array([0.2, 0.4]), np.array([0.8, 0.8])
    var = (((X[:2] - mu0) ** 2).sum(0) + ((X[2:] - mu1) ** 2).sum(0)) / 5
    eps = 1e-3 * X.var(axis=0).max()
    var = var + eps
    x = np.array([0.3, 0.7])
    log_odds = (
        np.log((3 + 1) / 7) - np.log((2 + 1) / 7)
        - ((x - mu1) ** 2 / (2 * var)).sum() + ((x - mu0) ** 2 / (2 * var)).sum()
    )
    assert _scores_x(theta, x[None])[0] == pytest.approx(log_odds, rel=1e-12)


def test_gaussian_shared_matches_sklearn_with_pooled_variance():
    """Shared-variance GNB = sklearn GaussianNB with its variances replaced by the pooled one."""
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = (rng.random(40) < 0.4).astype(int)
    n1 = y.sum()
    priors = np.array([(40 - n1 + 1) / 42, (n1 + 1) / 42])
    ref = GaussianNB(priors=priors, var_smoothing=1e-9).fit(X, y)
    eps = ref.epsilon_
    counts = np.array([40 - n1, n1])[:, None]
    pooled = ((ref.var_ - eps) * counts).sum(axis=0) / 40 + eps
    ref.var_ = np.tile(pooled, (2, 1))
    lp = ref.predict_log_proba(X)
    theta = fit_gaussian_nb(X[None], y[None])[0]
    np.testing.assert_allclose(_scores_x(theta, X), lp[:, 1] - lp[:, 0], rtol=1e-9, atol=1e-9)


def test_gaussian_class_variance_matches_sklearn():
    """Class-variance GNB over design [x, x^2] = sklearn GaussianNB (same epsilon, our prior)."""
    rng = np.random.default_rng(1)
    X = rng.random((30, 4))
    y = (rng.random(30) < 0.5).astype(int)
    n1 = y.sum()
    priors = np.array([(30 - n1 + 1) / 32, (n1 + 1) / 32])
    ref = GaussianNB(priors=priors, var_smoothing=1e-9).fit(X, y)
    lp = ref.predict_log_proba(X)
    theta = fit_gaussian_nb(X[None], y[None], variance="class")[0]
    scores = np.concatenate([X, X**2], axis=1) @ theta[:-1] + theta[-1]
    np.testing.assert_allclose(scores, lp[:, 1] - lp[:, 0], rtol=1e-8, atol=1e-8)
    assert (np.sign(scores) > 0).astype(int).tolist() == ref.predict(X).tolist()


def test_gaussian_m2_is_nearest_class_mean():
    """At m = 2 every variance is epsilon, so the rule is the nearest class mean."""
    X = np.array([[[0.1, 0.9], [0.7, 0.2]]])  # (1, 2, 2)
    theta = fit_gaussian_nb(X, np.array([[0, 1]]))[0]
    pts = np.random.default_rng(2).random((50, 2))
    nearer1 = np.linalg.norm(pts - X[0, 1], axis=1) < np.linalg.norm(pts - X[0, 0], axis=1)
    assert ((_scores_x(theta, pts) > 0) == nearer1).all()


def test_categorical_matches_hand_computation_with_unseen_value():
    """Laplace-smoothed conditionals and prior by hand, incl. a level never seen in training."""
    codes = np.array([[0, 1], [1, 1], [0, 0], [1, 0]])  # level 2 of attribute 0 is unseen
    y = np.array([1, 1, 1, 0])
    n_values = (3, 2)
    theta = fit_categorical_nb(codes[None], y[None], n_values)[0]
    # p(x0 = 2 | y=1) = (0 + 1) / (3 + 3), p(x0 = 2 | y=0) = (0 + 1) / (1 + 3)
    # p(x1 = 1 | y=1) = (2 + 1) / (3 + 2), p(x1 = 1 | y=0) = (0 + 1) / (1 + 2)
    # p(y=1) = (3 + 1) / 6, p(y=0) = (1 + 1) / 6
    expected = (
        np.log(1 / 6) - np.log(1 / 4) + np.log(3 / 5) - np.log(1 / 3) + np.log(4 / 6)
        - np.log(2 / 6)
    )
    row = _onehot(np.array([[2, 1]]), n_values)
    assert (row @ theta[:-1] + theta[-1])[0] == pytest.approx(expected, rel=1e-12)


def test_categorical_matches_sklearn():
    """Categorical NB = sklearn CategoricalNB(alpha=1, min_categories) with the smoothed prior."""
    rng = np.random.default_rng(3)
    n_values = (2, 3, 5)
    codes = np.stack([rng.integers(0, k - (j == 2), 25) for j, k in enumerate(n_values)], 1)
    y = (rng.random(25) < 0.6).astype(int)
    n1 = y.sum()
    prior = [(25 - n1 + 1) / 27, (n1 + 1) / 27]
    ref = CategoricalNB(alpha=1.0, min_categories=np.array(n_values), class_prior=prior)
    ref.fit(codes, y)
    test = np.array([[0, 2, 4], [1, 0, 0], [1, 1, 3]])  # level 4 of attribute 2 is unseen
    lp = ref.predict_log_proba(test)
    theta = fit_categorical_nb(codes[None], y[None], n_values)[0]
    scores = _onehot(test, n_values) @ theta[:-1] + theta[-1]
    np.testing.assert_allclose(scores, lp[:, 1] - lp[:, 0], rtol=1e-10)


def test_batched_equals_single_fits():
    """Fitting S splits at once gives each split's own parameters."""
    rng = np.random.default_rng(4)
    X = rng.random((5, 12, 3))
    y = np.tile([0, 1], (5, 6))
    batch = fit_gaussian_nb(X, y)
    for s in range(5):
        np.testing.assert_array_equal(batch[s], fit_gaussian_nb(X[s : s + 1], y[s : s + 1])[0])


@pytest.mark.parametrize("kind", ["gaussian", "categorical"])
def test_one_class_training_set_is_rejected(kind):
    """A training set with one class only raises a DataError naming the split."""
    y = np.array([[0, 1, 1], [1, 1, 1]])
    with pytest.raises(DataError, match="split 1 .*only class 1"):
        if kind == "gaussian":
            fit_gaussian_nb(np.zeros((2, 3, 2)), y)
        else:
            fit_categorical_nb(np.zeros((2, 3, 2), dtype=int), y, (2, 2))


def test_pooled_squares_pass_equals_numpy_passes():
    """The compiled pooled sums of squares are numpy's four passes bit for bit (d > 1; a
    lone column, which numpy sums pairwise, keeps numpy)."""
    from nbvslr.kernels.nb_stats import pooled_squares

    rng = np.random.default_rng(5)
    for S, m, d in [(3, 5, 2), (10, 300, 64), (4, 1000, 6), (6, 37, 3)]:
        X = rng.random((S, m, d))
        y1 = np.zeros((S, m))
        y1[:, : m // 3] = 1.0
        y1 = rng.permuted(y1, axis=1)
        n1 = y1.sum(axis=1)
        mu1 = np.matmul(y1[:, None, :], X)[:, 0, :] / n1[:, None]
        mu0 = np.matmul((1.0 - y1)[:, None, :], X)[:, 0, :] / (m - n1)[:, None]
        dev2 = np.where(y1[:, :, None] > 0, mu1[:, None, :], mu0[:, None, :])
        np.subtract(X, dev2, out=dev2)
        dev2 *= dev2
        np.testing.assert_array_equal(pooled_squares(X, y1, mu1, mu0), dev2.sum(axis=1))


def test_onehot_counts_pass_equals_bincount():
    """The compiled level counts are the two ``np.bincount`` counts over the flat one-hot
    columns; a code outside its attribute's levels is refused, not counted elsewhere."""
    from nbvslr.kernels.nb_stats import onehot_counts

    rng = np.random.default_rng(6)
    n_values = (3, 1, 5, 2)
    k = np.array(n_values, dtype=np.int64)
    K = int(k.sum())
    S, m = 7, 40
    codes = np.stack([rng.integers(0, kj, (S, m)) for kj in n_values], axis=2)  # (S, m, d)
    y1 = (rng.random((S, m)) < 0.4).astype(np.float64)
    flat = (np.arange(S)[:, None, None] * K + onehot_offsets(n_values) + codes).reshape(-1)
    y_flat = np.broadcast_to(y1[:, :, None], codes.shape).reshape(-1)
    want_all = np.bincount(flat, minlength=S * K).reshape(S, K)
    want1 = np.bincount(flat, weights=y_flat, minlength=S * K).reshape(S, K)
    got_all, got1, ok = onehot_counts(codes, y1, onehot_offsets(n_values), k, K)
    assert ok
    np.testing.assert_array_equal(got_all, want_all)
    np.testing.assert_array_equal(got1, want1)
    codes[2, 5, 0] = 3  # level 3 of an attribute of 3 levels
    assert not onehot_counts(codes, y1, onehot_offsets(n_values), k, K)[2]
    with pytest.raises(ValueError, match="level codes"):
        fit_categorical_nb(codes, (y1 > 0).astype(np.int8), n_values)
