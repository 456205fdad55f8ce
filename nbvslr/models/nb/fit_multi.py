"""Naive Bayes of K > 2 classes for S training sets at once, returned as K linear scores.

The log posterior of class k is, up to a term common to every class, linear in a design
(``design.py``): a fit returns ``theta`` of shape (S, K, D + 1), intercept last, and the
rule predicts ``argmax_k Z1 @ theta_k``.

Class prior (both variants), Laplace-smoothed with l = ``smoothing``:
``p(y = k) = (count(k) + l) / (m + K l)``; or, with ``prior="uniform"``, 1 / K.

Gaussian NB (continuous attributes in [0, 1]):
  * ``variance="shared"``: class means ``mu_kj``; one variance per feature pooled over the
    K classes, ``var_j = sum_i (x_ij - mu_{y_i j})^2 / m`` plus epsilon (``unbiased``:
    divided by ``m - K``). The score is linear in ``x``:
    ``theta_k = (mu_k / var, -sum_j mu_kj^2 / (2 var_j) + log p(k))``.
  * ``variance="class"``: class-specific ML variances ``v_kj`` plus epsilon (``unbiased``:
    divided by ``count(k) - 1``, at least 1); linear in ``[x, x^2]``:
    ``theta_k = (mu_k / v_k, -1 / (2 v_k), -sum_j [mu_kj^2 / (2 v_kj) + log(v_kj) / 2]
    + log p(k))``, scikit-learn's ``GaussianNB`` with the same priors.
  * epsilon as for two classes (``fit``): ``max(var_smoothing * v_max, var_floor)``
    with ``v_max`` the largest per-feature ML variance of the split's training X
    (``epsilon_form``, ``epsilon_mode`` and ``rescale`` as there).

Categorical NB: ``p(x_j = v | k) = (count(x_j = v, k) + l) / (count(k) + k_j l)``; the score
is linear in the full one-hot design, ``theta_k = (log p(x_j = v | k), log p(k))``:
scikit-learn's ``CategoricalNB(alpha=l, min_categories=k_j)`` with the same priors.
"""

from __future__ import annotations

import numpy as np

from nbvslr.models.design import onehot_offsets
from nbvslr.models.nb.fit import (
    _divisor,
    _epsilon,
    _with_epsilon,
    rescale_to_training,
    theta_to_original,
)


def _onehot(y: np.ndarray, K: int) -> np.ndarray:
    """Labels (S, m) as float64 indicators (S, m, K)."""
    Y = np.zeros(y.shape + (K,))
    np.put_along_axis(Y, np.asarray(y, dtype=np.int64)[..., None], 1.0, axis=-1)
    return Y


def log_prior(n: np.ndarray, smoothing: float, prior: str) -> np.ndarray:
    """``log p(k)`` (S, K) from the class counts n (S, K): Laplace-smoothed, or uniform."""
    K = n.shape[1]
    if prior == "uniform":
        return np.full(n.shape, -np.log(K))
    m = n.sum(axis=1, keepdims=True)
    return np.log(n + smoothing) - np.log(m + K * smoothing)


def _squared_deviations(X: np.ndarray, mu: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(S, m, d) squared deviation of each row from its own class mean (a gather: the
    product with the one-hot labels it replaces gave the same numbers, 1 * mu + 0 * ...).
    X (S, m, d); mu (S, K, d); labels (S, m) int64."""
    S, m, d = X.shape
    K = mu.shape[1]
    own = (np.arange(S)[:, None] * K + labels).ravel()  # (S m,)
    dev2 = X - np.take(mu.reshape(S * K, d), own, axis=0).reshape(S, m, d)
    dev2 *= dev2
    return dev2


def fit_gaussian_nb_multi(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    smoothing: float = 1.0,
    variance: str = "shared",
    var_smoothing: float = 1e-9,
    var_floor: float = 1e-12,
    prior: str = "empirical",
    var_estimator: str = "ml",
    epsilon_form: str = "relative",
    epsilon_mode: str = "add",
    rescale: str = "dataset",
) -> np.ndarray:
    """Fit Gaussian NB of K classes to S training sets.

    Parameters
    ----------
    X : ndarray of shape (S, m, d)
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``, every class present in every split.
    n_classes : int
        K.

    Returns
    -------
    theta : ndarray of shape (S, K, d + 1) (``shared``) or (S, K, 2 d + 1) (``class``).
    """
    X = np.asarray(X, dtype=np.float64)
    if rescale == "training":
        U, lo, r = rescale_to_training(X)
        theta = fit_gaussian_nb_multi(
            U, y, n_classes, smoothing=smoothing, variance=variance,
            var_smoothing=var_smoothing, var_floor=var_floor, prior=prior,
            var_estimator=var_estimator, epsilon_form=epsilon_form, epsilon_mode=epsilon_mode)
        return theta_to_original(theta, lo[:, None, :], r[:, None, :])
    S, m, d = X.shape
    K = int(n_classes)
    Y = _onehot(y, K)  # (S, m, K)
    n = Y.sum(axis=1)  # (S, K)
    mu = np.matmul(Y.transpose(0, 2, 1), X) / n[:, :, None]  # (S, K, d)
    labels = np.ascontiguousarray(y, dtype=np.int64)
    # The compiled passes add each feature's column over the rows one row at a time, as
    # numpy does for C-ordered rows of d > 1 features; numpy sums a lone feature's column
    # (d = 1, one contiguous run per split) pairwise instead, so there (and for any other
    # layout) numpy makes the sums itself, as it always did.
    compiled = d > 1 and X.flags.c_contiguous
    if compiled:
        # compiled (numba) where it runs: a process that only plans and writes never loads it
        from nbvslr.kernels.classes import largest_variance, within_squares

        v_max = np.empty(S)
        largest_variance(X, v_max)  # (S,) largest total ML variance
    else:
        v_max = X.var(axis=1).max(axis=1)  # (S,) largest total ML variance
    eps = _epsilon(v_max, var_smoothing, var_floor, epsilon_form)[:, :, None]  # (S, 1, 1)
    lp = log_prior(n, smoothing, prior)  # (S, K)
    if variance == "shared":
        # the squared deviations from each row's own class mean, summed over the rows
        if compiled:
            ss = np.empty((S, d))
            within_squares(X, mu, labels, ss)
        else:
            ss = _squared_deviations(X, mu, labels).sum(axis=1)
        within = ss / _divisor(np.full(S, float(m)), K, var_estimator)[:, None]
        var = _with_epsilon(within[:, None, :], eps, epsilon_mode)  # (S, 1, d)
        w = mu / var  # (S, K, d)
        b = -(mu * mu / (2.0 * var)).sum(axis=2) + lp  # (S, K)
        return np.concatenate([w, b[:, :, None]], axis=2)
    if variance == "class":
        dev2 = _squared_deviations(X, mu, labels)
        ss = np.matmul(Y.transpose(0, 2, 1), dev2)  # (S, K, d) class sums of squares
        v = _with_epsilon(ss / _divisor(n, 1, var_estimator)[:, :, None], eps, epsilon_mode)
        b = -(mu * mu / (2.0 * v) + 0.5 * np.log(v)).sum(axis=2) + lp  # (S, K)
        return np.concatenate([mu / v, -0.5 / v, b[:, :, None]], axis=2)
    raise ValueError(f"variance must be 'shared' or 'class', got {variance!r}")


def fit_categorical_nb_multi(
    codes: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    n_values: tuple[int, ...],
    *,
    smoothing: float = 1.0,
    prior: str = "empirical",
) -> np.ndarray:
    """Fit categorical NB of K classes to S training sets.

    Parameters
    ----------
    codes : ndarray of shape (S, m, d)
        Level codes, column j in ``0 .. n_values[j] - 1``.
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``.
    n_classes : int
        K.
    n_values : tuple of int
        k_j of each attribute.

    Returns
    -------
    theta : ndarray of shape (S, K, sum(n_values) + 1), over the full one-hot design.
    """
    codes = np.asarray(codes, dtype=np.int64)
    S, m, _ = codes.shape
    K = int(n_classes)
    L = int(sum(n_values))
    Y = _onehot(y, K)  # (S, m, K)
    n = Y.sum(axis=1)  # (S, K)
    onehot = np.zeros((S, m, L))
    np.put_along_axis(onehot, codes + onehot_offsets(n_values), 1.0, axis=2)  # (S, m, L)
    count = np.matmul(Y.transpose(0, 2, 1), onehot)  # (S, K, L)
    k_col = np.repeat(np.asarray(n_values), n_values).astype(np.float64)  # (L,)
    l = smoothing
    with np.errstate(divide="ignore"):  # l = 0: a level unseen in class k has log p = -inf
        log_p = np.log(count + l) - np.log(n[:, :, None] + k_col * l)  # (S, K, L)
    return np.concatenate([log_p, log_prior(n, l, prior)[:, :, None]], axis=2)
