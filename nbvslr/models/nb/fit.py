"""Naive Bayes for S training sets at once, returned as linear models.

Both variants have log-odds ``log p(y=1|x) - log p(y=0|x)`` linear in a design (see
``design.py``), so a fit returns ``theta`` of shape (S, D + 1), intercept last.

Class prior (both variants), Laplace-smoothed with l = ``smoothing``:
``p(y) = (count(y) + l) / (m + 2 l)``; or, with ``prior="uniform"``, p(y) = 1/2 (the log
prior ratio is 0: the rule a normal discriminant without a prior term would use).

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
    ``epsilon_form="absolute"``: epsilon = ``max(var_smoothing, var_floor)`` on the scale of
    the inputs. ``epsilon_mode="floor"``: the variance is ``max(var, epsilon)`` instead of
    ``var + epsilon``. ``var_estimator="unbiased"`` divides the sums of squares by ``m - 2``
    (shared) or ``count(y) - 1`` (class) instead of ``m`` or ``count(y)`` (at least 1).
  * ``rescale="training"``: each split's training rows are first rescaled to [0, 1] over
    those rows (a constant column keeps range 1), and the fitted rule is mapped back to the
    original inputs (``theta_to_original``).

Categorical NB (discrete attributes with k_j levels), Laplace smoothing on every conditional:
``p(x_j = v | y) = (count(x_j = v, y) + l) / (count(y) + k_j l)``. Unseen values get their
smoothed probability. Log-odds are linear in the full one-hot encoding:
``w_{j,v} = log p(x_j = v | 1) - log p(x_j = v | 0)``. With l = 0 (the plain
maximum-likelihood fit, Mitchell's eq. 6) a level unseen in class y has probability 0 there:
``w_{j,v}`` is ``+inf`` (unseen in class 0), ``-inf`` (in class 1) or NaN (in both), and a
row holding such a level is scored by ``evaluate_zeros``: a class in which the row has
probability 0 loses to one in which it has not; a row of probability 0 in both is a tie.
"""

from __future__ import annotations

import numpy as np

from nbvslr.models.design import onehot_offsets
from nbvslr.models.family import Option, choice, defaults, number, one_of
from nbvslr.models.stacks import check_both_classes

#: The options of the ``nb`` model name, shared by Gaussian and categorical NB (the entries
#: of ``nbvslr.models.nb.entry``); the fits below take their defaults from it.
NB_OPTIONS: tuple[Option, ...] = (
    Option("smoothing", 1.0, number(0.0, strict=False), "a number >= 0",
           "Laplace smoothing l of the class prior and of every categorical conditional; 0: "
           "the plain maximum-likelihood fit, a level unseen in a class has probability 0 "
           "there (docs/discriminant.md, \"Plain maximum likelihood\")"),
    Option("variance", "shared", choice("shared", "class"), one_of("shared", "class"),
           "`shared`: the paper's Gaussian NB, one variance per feature pooled over the "
           "classes; `class`: class-specific variances"),
    Option("var_smoothing", 1e-9, number(0.0, strict=False), "a number >= 0",
           "epsilon added to every variance: `max(var_smoothing × largest feature variance of "
           "the training set, var_floor)`"),
    Option("var_floor", 1e-12, number(0.0, strict=True), "a number > 0",
           "the smallest epsilon (an all-equal training set keeps a positive variance)"),
    Option("prior", "empirical", choice("empirical", "uniform", "uniform-gaussian"),
           one_of("empirical", "uniform", "uniform-gaussian"),
           "`empirical`: the Laplace-smoothed class prior, as stated; `uniform`: equal priors; "
           "`uniform-gaussian`: equal priors in Gaussian NB only"),
    Option("var_estimator", "ml", choice("ml", "unbiased"), one_of("ml", "unbiased"),
           "`ml`: the Gaussian variances divide by m (maximum likelihood); `unbiased`: by "
           "m − 2 (shared) or the class count − 1"),
    Option("epsilon_form", "relative", choice("relative", "absolute"),
           one_of("relative", "absolute"),
           "`absolute`: epsilon is `max(var_smoothing, var_floor)` itself, on the [0, 1] scale"),
    Option("epsilon_mode", "add", choice("add", "floor"), one_of("add", "floor"),
           "`floor`: the variance is `max(variance, epsilon)` instead of `variance + epsilon`"),
    Option("rescale", "dataset", choice("dataset", "training"), one_of("dataset", "training"),
           "`dataset`: the [0, 1] rescaling over all rows; `training`: each split's training "
           "rows are rescaled again over themselves"),
    Option("ties", "half", choice("half", "positive", "negative"),
           one_of("half", "positive", "negative"),
           "a test row with log-odds exactly 0 counts half an error; `positive` / `negative` "
           "predict class 1 / class 0 there"),
)

_NB = defaults(NB_OPTIONS)


def _log_prior_ratio(
    n1: np.ndarray, n0: np.ndarray, smoothing: float, prior: str = "empirical"
) -> np.ndarray:
    """``log p(y=1) - log p(y=0)``, shape (S,): Laplace-smoothed, or 0 for a uniform prior."""
    if prior == "uniform":
        return np.zeros(np.shape(n1))
    if prior != "empirical":
        raise ValueError(f"prior must be 'empirical' or 'uniform', got {prior!r}")
    return np.log(n1 + smoothing) - np.log(n0 + smoothing)


def _epsilon(
    v_max: np.ndarray, var_smoothing: float, var_floor: float, epsilon_form: str
) -> np.ndarray:
    """Epsilon of each split, shape (S, 1): relative to ``v_max`` (S,) or absolute."""
    if epsilon_form == "relative":
        return np.maximum(var_smoothing * v_max, var_floor)[:, None]
    if epsilon_form == "absolute":
        return np.full((v_max.shape[0], 1), max(var_smoothing, var_floor))
    raise ValueError(f"epsilon_form must be 'relative' or 'absolute', got {epsilon_form!r}")


def _with_epsilon(var: np.ndarray, eps: np.ndarray, epsilon_mode: str) -> np.ndarray:
    """The variance used by the rule: ``var + eps`` ("add") or ``max(var, eps)`` ("floor")."""
    if epsilon_mode == "add":
        return var + eps
    if epsilon_mode == "floor":
        return np.maximum(var, eps)
    raise ValueError(f"epsilon_mode must be 'add' or 'floor', got {epsilon_mode!r}")


def _divisor(n: np.ndarray, groups: int, var_estimator: str) -> np.ndarray:
    """The variance denominator: ``n`` (ML) or ``n - groups`` (unbiased), at least 1."""
    if var_estimator == "ml":
        return n
    if var_estimator == "unbiased":
        # guard: n = groups leaves no degree of freedom; the sum of squares is 0 there
        return np.maximum(n - groups, 1.0)
    raise ValueError(f"var_estimator must be 'ml' or 'unbiased', got {var_estimator!r}")


def rescale_to_training(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rescale each split's training rows to [0, 1] over those rows.

    Returns ``(U, lo, r)`` with ``U = (X - lo) / r``: ``lo`` (S, d) the training minimum and
    ``r`` (S, d) the training range (1 for a column that is constant in the split).
    """
    lo = X.min(axis=1)  # (S, d)
    r = X.max(axis=1) - lo  # (S, d)
    r = np.where(r > 0, r, 1.0)  # guard: a constant column keeps its (zero) spread
    return (X - lo[:, None, :]) / r[:, None, :], lo, r


def theta_to_original(theta: np.ndarray, lo: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Map linear models fitted on ``u = (x - lo) / r`` back to ``x``.

    ``theta`` (..., d + 1) over design ``x`` or (..., 2 d + 1) over ``[x, x^2]`` (intercept
    last); ``lo``, ``r`` (..., d) broadcast against its leading axes. The scores of every row
    are unchanged (up to rounding).
    """
    d = lo.shape[-1]
    a = theta[..., :d] / r  # coefficient of x from the linear term
    b = theta[..., -1] - (a * lo).sum(axis=-1)
    if theta.shape[-1] == d + 1:
        return np.concatenate([a, b[..., None]], axis=-1)
    c = theta[..., d : 2 * d] / (r * r)  # coefficient of x^2
    a = a - 2.0 * c * lo
    b = b + (c * lo * lo).sum(axis=-1)
    return np.concatenate([a, c, b[..., None]], axis=-1)


def fit_gaussian_nb(
    X: np.ndarray,
    y: np.ndarray,
    *,
    smoothing: float = _NB["smoothing"],
    variance: str = _NB["variance"],
    var_smoothing: float = _NB["var_smoothing"],
    var_floor: float = _NB["var_floor"],
    prior: str = _NB["prior"],
    var_estimator: str = _NB["var_estimator"],
    epsilon_form: str = _NB["epsilon_form"],
    epsilon_mode: str = _NB["epsilon_mode"],
    rescale: str = _NB["rescale"],
) -> np.ndarray:
    """Fit Gaussian NB to S training sets.

    Parameters
    ----------
    X : ndarray of shape (S, m, d)
        Continuous attributes of each split's training rows.
    y : ndarray of shape (S, m)
        Labels in {0, 1}; every split must hold both classes.
    smoothing, variance, var_smoothing, var_floor, prior, var_estimator, epsilon_form,
    epsilon_mode, rescale
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
    if rescale == "training":
        U, lo, r = rescale_to_training(X)
        options = dict(smoothing=smoothing, variance=variance, var_smoothing=var_smoothing,
                       var_floor=var_floor, prior=prior, var_estimator=var_estimator,
                       epsilon_form=epsilon_form, epsilon_mode=epsilon_mode)
        return theta_to_original(fit_gaussian_nb(U, y, **options), lo, r)
    if rescale != "dataset":
        raise ValueError(f"rescale must be 'dataset' or 'training', got {rescale!r}")
    y1 = np.asarray(y, dtype=np.float64)  # (S, m)
    y0 = 1.0 - y1  # (S, m)
    m = X.shape[1]
    n1 = y1.sum(axis=1)  # (S,)
    n0 = m - n1  # (S,)
    mu1 = np.matmul(y1[:, None, :], X)[:, 0, :] / n1[:, None]  # (S, d)
    mu0 = np.matmul(y0[:, None, :], X)[:, 0, :] / n0[:, None]  # (S, d)
    # squared deviations from each row's own class mean (direct, no E[x^2] - E[x]^2 cancellation)
    if variance == "shared" and X.shape[2] > 1:  # one compiled pass, the same sums
        from nbvslr.kernels.nb_stats import pooled_squares  # numba, loaded where it runs

        ss = pooled_squares(np.ascontiguousarray(X), y1, mu1, mu0)  # (S, d)
    else:
        # (one (S, m, d) temporary: the class means, then the deviations and their squares)
        dev2 = np.where(y1[:, :, None] > 0, mu1[:, None, :], mu0[:, None, :])  # (S, m, d)
        np.subtract(X, dev2, out=dev2)
        dev2 *= dev2
        ss = dev2.sum(axis=1)  # (S, d) pooled within-class sums of squares
    within_ml = ss / m  # (S, d) pooled within-class ML variance
    # epsilon: relative to the largest total variance of the training X, floored at var_floor;
    # total = within + between (the law of total variance: a sum of non-negative terms, no
    # second pass over X)
    between = (n1 * n0 / (m * m))[:, None] * (mu1 - mu0) ** 2  # (S, d)
    v_max = (within_ml + between).max(axis=1)  # (S,)
    eps = _epsilon(v_max, var_smoothing, var_floor, epsilon_form)  # (S, 1)
    log_prior = _log_prior_ratio(n1, n0, smoothing, prior)  # (S,)
    if variance == "shared":
        within = ss / _divisor(np.full(n1.shape, float(m)), 2, var_estimator)[:, None]
        var = _with_epsilon(within, eps, epsilon_mode)  # (S, d) pooled variance + epsilon
        w = (mu1 - mu0) / var  # (S, d)
        b = ((mu0**2 - mu1**2) / (2.0 * var)).sum(axis=1) + log_prior  # (S,)
        return np.concatenate([w, b[:, None]], axis=1)
    if variance == "class":
        ss1 = np.matmul(y1[:, None, :], dev2)[:, 0, :]  # (S, d) class sums of squares
        ss0 = np.matmul(y0[:, None, :], dev2)[:, 0, :]  # (S, d)
        var1 = _with_epsilon(ss1 / _divisor(n1, 1, var_estimator)[:, None], eps, epsilon_mode)
        var0 = _with_epsilon(ss0 / _divisor(n0, 1, var_estimator)[:, None], eps, epsilon_mode)
        w_x = mu1 / var1 - mu0 / var0  # (S, d)
        w_x2 = 0.5 / var0 - 0.5 / var1  # (S, d)
        b = (
            mu0**2 / (2.0 * var0) - mu1**2 / (2.0 * var1) + 0.5 * np.log(var0 / var1)
        ).sum(axis=1) + log_prior  # (S,)
        return np.concatenate([w_x, w_x2, b[:, None]], axis=1)
    raise ValueError(f"variance must be 'shared' or 'class', got {variance!r}")


def fit_categorical_nb(
    codes: np.ndarray,
    y: np.ndarray,
    n_values: tuple[int, ...],
    *,
    smoothing: float = _NB["smoothing"],
    prior: str = _NB["prior"],
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
    prior : {"empirical", "uniform"}
        The smoothed class frequencies, or equal priors.

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
    # the rows at each level (column offset_j + code) of each split, in one compiled pass
    from nbvslr.kernels.nb_stats import onehot_counts  # numba, loaded where it runs

    count_all, count1, ok = onehot_counts(codes, y1, onehot_offsets(n_values), k, K)  # (S, K)
    if not ok:
        raise ValueError(f"level codes outside 0 .. k_j - 1 (n_values {tuple(n_values)})")
    count0 = count_all - count1  # (S, K)
    k_col = np.repeat(k, k).astype(np.float64)  # (K,) k_j of each one-hot column
    l = smoothing
    with np.errstate(divide="ignore", invalid="ignore"):  # l = 0: log 0 = -inf, by design
        log_p1 = np.log(count1 + l) - np.log(n1[:, None] + k_col * l)  # (S, K)
        log_p0 = np.log(count0 + l) - np.log(n0[:, None] + k_col * l)  # (S, K)
        w = log_p1 - log_p0  # +inf: unseen in class 0; -inf: in class 1; nan: in both
    b = _log_prior_ratio(n1, n0, l, prior)  # (S,)
    return np.concatenate([w, b[:, None]], axis=1)
