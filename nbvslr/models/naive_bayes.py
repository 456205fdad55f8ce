"""Naive Bayes for S training sets at once, returned as linear models.

Both variants have log-odds ``log p(y=1|x) - log p(y=0|x)`` linear in a design (see
``design.py``), so a fit returns ``theta`` of shape (S, D + 1), intercept last.

Class prior (both variants), Laplace-smoothed with l = ``smoothing``:
``p(y) = (count(y) + l) / (m + 2 l)``.

Gaussian NB (continuous attributes in [0, 1]):
  * ``variance="shared"`` (the paper's): class means ``mu_yj``; one variance per feature,
    the pooled within-class ML variance ``sum_i (x_ij - mu_{y_i j})^2 / m``, plus epsilon.
    The log-odds are linear in ``x``:  ``w_j = (mu_1j - mu_0j) / var_j``.
    At m = 2 (one example per class) every within-class variance is 0, every ``var_j`` is
    epsilon, and the rule is "nearest class mean" in Euclidean distance.
  * ``variance="class"``: textbook GNB, class-specific ML variances plus epsilon; log-odds
    are linear in ``[x, x^2]``.
  * epsilon = ``max(var_smoothing * v_max, var_floor)``, with ``v_max`` the largest
    per-feature (total, not within-class) ML variance of the split's training X. The
    relative part follows scikit-learn's ``GaussianNB(var_smoothing=1e-9)``; the floor keeps
    the variance positive when all training points are identical.

Categorical NB (discrete attributes with k_j levels), Laplace smoothing on every conditional:
``p(x_j = v | y) = (count(x_j = v, y) + l) / (count(y) + k_j l)``. Unseen values get their
smoothed probability. Log-odds are linear in the full one-hot encoding:
``w_{j,v} = log p(x_j = v | 1) - log p(x_j = v | 0)``.
"""

from __future__ import annotations

import numpy as np

from nbvslr.models.design import onehot_offsets
from nbvslr.models.stacks import check_both_classes


def _log_prior_ratio(n1: np.ndarray, n0: np.ndarray, smoothing: float) -> np.ndarray:
    """``log p(y=1) - log p(y=0)`` with Laplace smoothing, shape (S,)."""
    return np.log(n1 + smoothing) - np.log(n0 + smoothing)


def fit_gaussian_nb(
    X: np.ndarray,
    y: np.ndarray,
    *,
    smoothing: float = 1.0,
    variance: str = "shared",
    var_smoothing: float = 1e-9,
    var_floor: float = 1e-12,
) -> np.ndarray:
    """Fit Gaussian NB to S training sets.

    Parameters
    ----------
    X : ndarray of shape (S, m, d)
        Continuous attributes of each split's training rows.
    y : ndarray of shape (S, m)
        Labels in {0, 1}; every split must hold both classes.
    smoothing, variance, var_smoothing, var_floor
        See the module docstring.

    Returns
    -------
    theta : ndarray of shape (S, d + 1) for ``variance="shared"`` (design ``x``),
        or (S, 2 d + 1) for ``variance="class"`` (design ``[x, x^2]``); intercept last.

    Raises
    ------
    DataError
        A training set holds one class only.
    """
    X = np.asarray(X, dtype=np.float64)
    check_both_classes(y)
    y1 = np.asarray(y, dtype=np.float64)  # (S, m)
    y0 = 1.0 - y1  # (S, m)
    m = X.shape[1]
    n1 = y1.sum(axis=1)  # (S,)
    n0 = m - n1  # (S,)
    mu1 = np.matmul(y1[:, None, :], X)[:, 0, :] / n1[:, None]  # (S, d)
    mu0 = np.matmul(y0[:, None, :], X)[:, 0, :] / n0[:, None]  # (S, d)
    # squared deviations from each row's own class mean (direct, no E[x^2] - E[x]^2 cancellation)
    dev2 = X - np.where(y1[:, :, None] > 0, mu1[:, None, :], mu0[:, None, :])  # (S, m, d)
    dev2 *= dev2
    within = dev2.sum(axis=1) / m  # (S, d) pooled within-class ML variance
    # epsilon: relative to the largest total variance of the training X, floored at var_floor;
    # total = within + between (the law of total variance: a sum of non-negative terms, no
    # second pass over X)
    between = (n1 * n0 / (m * m))[:, None] * (mu1 - mu0) ** 2  # (S, d)
    v_max = (within + between).max(axis=1)  # (S,)
    eps = np.maximum(var_smoothing * v_max, var_floor)[:, None]  # (S, 1)
    prior = _log_prior_ratio(n1, n0, smoothing)  # (S,)
    if variance == "shared":
        var = within + eps  # (S, d) pooled within-class ML variance + epsilon
        w = (mu1 - mu0) / var  # (S, d)
        b = ((mu0**2 - mu1**2) / (2.0 * var)).sum(axis=1) + prior  # (S,)
        return np.concatenate([w, b[:, None]], axis=1)
    if variance == "class":
        var1 = np.matmul(y1[:, None, :], dev2)[:, 0, :] / n1[:, None] + eps  # (S, d)
        var0 = np.matmul(y0[:, None, :], dev2)[:, 0, :] / n0[:, None] + eps  # (S, d)
        w_x = mu1 / var1 - mu0 / var0  # (S, d)
        w_x2 = 0.5 / var0 - 0.5 / var1  # (S, d)
        b = (
            mu0**2 / (2.0 * var0) - mu1**2 / (2.0 * var1) + 0.5 * np.log(var0 / var1)
        ).sum(axis=1) + prior  # (S,)
        return np.concatenate([w_x, w_x2, b[:, None]], axis=1)
    raise ValueError(f"variance must be 'shared' or 'class', got {variance!r}")


def fit_categorical_nb(
    codes: np.ndarray,
    y: np.ndarray,
    n_values: tuple[int, ...],
    *,
    smoothing: float = 1.0,
) -> np.ndarray:
    """Fit categorical NB to S training sets.

    Parameters
    ----------
    codes : ndarray of shape (S, m, d)
        Level codes, column j in ``0 .. n_values[j] - 1``.
    y : ndarray of shape (S, m)
        Labels in {0, 1}; every split must hold both classes.
    n_values : tuple of int, length d
        k_j, the number of levels of each attribute.
    smoothing : float
        Laplace smoothing l of every conditional and of the prior.

    Returns
    -------
    theta : ndarray of shape (S, sum(n_values) + 1)
        Weights over the full one-hot design (design ``onehot``), intercept last.

    Raises
    ------
    DataError
        A training set holds one class only.
    """
    codes = np.asarray(codes, dtype=np.int64)
    check_both_classes(y)
    S, m, _ = codes.shape
    k = np.asarray(n_values, dtype=np.int64)  # (d,)
    K = int(k.sum())
    y1 = np.asarray(y, dtype=np.float64)  # (S, m)
    n1 = y1.sum(axis=1)  # (S,)
    n0 = m - n1  # (S,)
    # counting: flat column s * K + offset_j + code of every (split, row, attribute)
    flat = (np.arange(S)[:, None, None] * K + onehot_offsets(n_values) + codes).reshape(-1)
    y_flat = np.broadcast_to(y1[:, :, None], codes.shape).reshape(-1)
    count_all = np.bincount(flat, minlength=S * K).reshape(S, K)  # (S, K)
    count1 = np.bincount(flat, weights=y_flat, minlength=S * K).reshape(S, K)  # (S, K)
    count0 = count_all - count1  # (S, K)
    k_col = np.repeat(k, k).astype(np.float64)  # (K,) k_j of each one-hot column
    l = smoothing
    log_p1 = np.log(count1 + l) - np.log(n1[:, None] + k_col * l)  # (S, K)
    log_p0 = np.log(count0 + l) - np.log(n0[:, None] + k_col * l)  # (S, K)
    b = _log_prior_ratio(n1, n0, l)  # (S,)
    return np.concatenate([log_p1 - log_p0, b[:, None]], axis=1)
