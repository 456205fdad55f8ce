"""Gaussian discriminant analysis for S training sets at once: LDA (one covariance shared by
the classes) and QDA (one per class), returned as linear rules over a design.

Each class k is a Gaussian ``N(mu_k, Sigma_k)`` with prior ``p(k)``, and a row goes to the
class of largest ``log p(k) + log N(x | mu_k, Sigma_k)``:

* LDA: ``Sigma_k = Sigma`` for every k, so the score of class k is linear in ``x``:
  ``w_k = P mu_k``, ``b_k = log p(k) - mu_k' P mu_k / 2`` with the precision ``P = Sigma^-1``
  (design ``"x"``: theta (S, K, d + 1); two classes: ``theta_1 - theta_0``).
* QDA: ``score_k = log p(k) - log|Sigma_k| / 2 - (x - mu_k)' P_k (x - mu_k) / 2``, linear in
  ``[x, x_i x_j for i <= j]`` (design ``"x_xx"``): the weights of ``x`` are ``P_k mu_k``,
  of ``x_i^2`` ``-P_k[i, i] / 2``, of ``x_i x_j`` (i < j) ``-P_k[i, j]``, and the intercept
  ``log p(k) - mu_k' P_k mu_k / 2 - log|Sigma_k| / 2``.

Estimates (the maximum-likelihood fit by default):

* means: the class means of the training rows;
* ``covariance="ml"``: the scatter about the class means divided by m (LDA, the pooled
  covariance) or by ``count(k)`` (QDA), as the installed scikit-learn (1.9) divides them;
  ``"unbiased"``: by ``m - K`` or ``count(k) - 1`` (at least 1), as its earlier releases'
  ``LinearDiscriminantAnalysis`` (solver ``svd``) and ``QuadraticDiscriminantAnalysis`` did;
* ``shrinkage`` lambda in [0, 1]: ``(1 - lambda) Sigma + lambda diag(Sigma)``, towards the
  diagonal: lambda = 1 is naive Bayes's covariance (LDA: the shared variances of Gaussian
  NB's ``variance: shared``; QDA: the class variances of ``variance: class``);
* the class prior as naive Bayes's: ``(count(k) + l) / (m + K l)`` with l = ``smoothing``
  (0: the maximum-likelihood ``count(k) / m``, never 0 as every training set holds every
  class), or uniform.

A singular covariance (always at ``m <= d`` for LDA and ``count(k) <= d`` for QDA; also
when a feature is constant in the training rows) has no inverse. ``singular`` says what
then:

* ``"epsilon"`` (the default): ``Sigma + epsilon I`` with naive Bayes's
  ``epsilon = max(var_smoothing * v_max, var_floor)`` (``v_max``: the largest total ML
  variance of a feature in the split's training rows). As epsilon -> 0 this is the
  limit of the ridge-regularised rule: directions in which the training rows do not vary
  count most, so two points that differ there are told apart by them (at m = 2, LDA is
  "nearest class mean", as naive Bayes is). A non-singular covariance is used as it is.
  Singular here (``regularised``): its rank bounded below d by its rows, a feature of
  variance 0, or a Cholesky pivot ``L_jj^2`` at most ``d * 2.2e-16`` times its largest
  diagonal entry (one factorisation of the stack, about 12 times quicker than its
  eigenvalues at d = 34).
* ``"pinv"``: the Moore-Penrose inverse (eigenvalues at most ``d * 2.2e-16`` times the
  largest count as 0, numpy's ``matrix_rank`` rule), and
  for QDA the pseudo-determinant (the product of the other eigenvalues): the rule sees
  only the directions the training rows span. Equal to the inverse where that exists.

docs/discriminant.md argues the default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.linalg.lapack import dpotri as _potri
from scipy.linalg.lapack import dpotrs as _potrs

from nbvslr.data.dataset import Dataset
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design
from nbvslr.models.family import Fit, Option, choice, number, one_of
from nbvslr.models.lr.sum_zero import centred
from nbvslr.models.nb.fit_multi import log_prior


def _fraction(value):
    """A number in [0, 1]."""
    v = number(0.0, strict=False)(value)
    if v > 1.0:
        raise ValueError
    return v


#: The options of the ``lda`` and ``qda`` model names (each name holds this table).
DISCRIMINANT_OPTIONS: tuple[Option, ...] = (
    Option("smoothing", 1.0, number(0.0, strict=False), "a number >= 0",
           "Laplace smoothing l of the class prior, as naive Bayes's; 0: the class "
           "frequencies count(k) / m, the maximum-likelihood prior"),
    Option("prior", "empirical", choice("empirical", "uniform"), one_of("empirical", "uniform"),
           "`empirical`: the Laplace-smoothed class prior; `uniform`: equal priors"),
    Option("covariance", "ml", choice("ml", "unbiased"), one_of("ml", "unbiased"),
           "`ml`: the scatter about the class means divided by m (LDA) or the class count "
           "(QDA), the maximum-likelihood fit; `unbiased`: by m − K or the class count − 1"),
    Option("shrinkage", 0.0, lambda v: _fraction(v), "a number in [0, 1]",
           "λ of `(1 − λ) Σ + λ diag(Σ)`: 0 the full covariance, 1 naive Bayes's diagonal"),
    Option("singular", "epsilon", choice("epsilon", "pinv"), one_of("epsilon", "pinv"),
           "a singular covariance (at m ≤ d, or with a feature constant in the training "
           "rows): `epsilon` inverts `Σ + ε I` with naive Bayes's epsilon; `pinv` takes its "
           "pseudo-inverse (docs/discriminant.md)"),
    Option("var_smoothing", 1e-9, number(0.0, strict=False), "a number >= 0",
           "`singular: epsilon`: epsilon is `max(var_smoothing × largest feature variance of "
           "the training set, var_floor)`"),
    Option("var_floor", 1e-12, number(0.0, strict=True), "a number > 0",
           "the smallest epsilon"),
)

RANK_TOL = float(np.finfo(np.float64).eps)
"""The relative threshold of a zero eigenvalue (``pinv``) or Cholesky pivot (``epsilon``),
times d (numpy's ``matrix_rank`` threshold)."""


def _epsilon(v_max: np.ndarray, var_smoothing: float, var_floor: float, per: int = 1):
    """Naive Bayes's epsilon of the splits, ``max(var_smoothing * v_max, var_floor)``, as a
    function of the flat indices ``s * per + k`` of covariances (split s, ``per`` of them a
    split); ``v_max`` (S,): the largest total ML variance of a feature in each split's rows
    (``_class_stats``)."""

    def eps(flat: np.ndarray) -> np.ndarray:
        return np.maximum(var_smoothing * v_max[flat // per], var_floor)

    return eps


def _shrink(cov: np.ndarray, shrinkage: float) -> np.ndarray:
    """``(1 - lambda) Sigma + lambda diag(Sigma)`` for a stack of covariances (..., d, d)."""
    if shrinkage == 0.0:
        return cov
    d = cov.shape[-1]
    diag = np.einsum("...ii->...i", cov)  # (..., d)
    out = (1.0 - shrinkage) * cov
    out[..., np.arange(d), np.arange(d)] = diag  # the diagonal is kept whole
    return out


#: numpy's Cholesky factorisation of a stack as ``numpy.linalg.cholesky`` calls it (LAPACK's
#: ``potrf`` on each matrix), without the check that raises when one is not positive definite:
#: its factor is then NaN. None where numpy has no such function (then one matrix at a time).
_CHOLESKY_LO = getattr(getattr(np.linalg, "_umath_linalg", None), "cholesky_lo", None)


def _cholesky_where(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lower Cholesky factors of a stack (S, d, d) and which exist (S,) bool (a failed
    factor is NaN): numpy's factorisation of the whole stack, a matrix that is not positive
    definite left NaN (each factor as ``numpy.linalg.cholesky`` makes it, alone or in a
    stack; factorising one matrix at a time after a failure cost a Python call each, and
    halving the stack instead factorised each matrix about log2(S) times when many fail,
    as on optdigits' collinear pixels)."""
    if _CHOLESKY_LO is not None:
        with np.errstate(invalid="ignore"):  # a failed factor: NaN, no error
            L = _CHOLESKY_LO(C, signature="d->d")
        return L, ~np.isnan(L).all(axis=(1, 2))
    try:
        return np.linalg.cholesky(C), np.ones(C.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    L = np.empty_like(C)
    ok = np.ones(C.shape[0], dtype=bool)
    for a in range(C.shape[0]):  # one at a time: each factor as in the stack
        try:
            L[a] = np.linalg.cholesky(C[a])
        except np.linalg.LinAlgError:
            L[a], ok[a] = np.nan, False
    return L, ok


def regularised(cov: np.ndarray, eps, rank_bound: np.ndarray | float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``singular: epsilon``: each covariance as it is, or plus ``epsilon I`` where singular.

    Parameters
    ----------
    cov : ndarray of shape (..., d, d)
        Symmetric positive semi-definite.
    eps : callable
        Naive Bayes's epsilon of the covariances of given flat indices (``_epsilon``).
    rank_bound : ndarray broadcasting to ``cov.shape[:-2]``
        The largest rank its scatter can have (m - K, or count(k) - 1).

    Returns
    -------
    used : ndarray of shape (..., d, d)
        The covariances the rule inverts.
    logdet : ndarray of shape (...)
        ``log|used|``.
    is_singular : ndarray of shape (...), bool
        Singular: ``rank_bound < d``, a feature of variance 0, or a Cholesky pivot
        ``L_jj^2`` at most ``d * RANK_TOL`` times the largest diagonal entry (numpy's
        factorisation failing included).
    """
    used, _, logdet, flagged = _factored(cov, eps, rank_bound)
    return used, logdet, flagged


def _factored(cov: np.ndarray, eps, rank_bound: np.ndarray | float,
              overwrite: bool = False
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``regularised``'s ``used``, its lower Cholesky factors (..., d, d), ``logdet`` and
    ``is_singular``; ``overwrite``: ``used`` is written over ``cov`` (a C-ordered stack the
    caller no longer needs), not a copy.

    Epsilon is added in place to the covariances singular before any factorisation (rank
    bound, a feature of variance 0), then the whole stack is factorised once (no gathered
    copies of the others: each factor is the one numpy gives the matrix alone); those
    that fail or show a tiny pivot then get epsilon too and are factorised again."""
    shape, d = cov.shape[:-2], cov.shape[-1]
    C = cov.reshape(-1, d, d)  # (n, d, d)
    n = C.shape[0]
    if not (overwrite and C.flags.c_contiguous):
        C = C.copy()
    flat = C.reshape(n, d * d)  # a view: the diagonals are its columns 0, d + 1, ...
    diag = flat[:, ::d + 1]  # (n, d) a view
    top = diag.max(axis=1)  # (n,)
    flagged = (np.broadcast_to(rank_bound, shape).reshape(-1) < d) | (diag.min(axis=1) <= 0.0)
    bad = np.flatnonzero(flagged)
    if bad.size == n:  # every one (m <= d)
        diag += eps(bad)[:, None]
    elif bad.size:
        flat[bad, ::d + 1] += eps(bad)[:, None]
    L, ok = _cholesky_where(C)
    if not ok[bad].all():  # epsilon below the rounding of this covariance's scale
        raise ValueError("a covariance plus epsilon is not positive definite; raise "
                         "var_smoothing or var_floor")
    if bad.size < n:  # the others: a failed factor or a tiny pivot is singular too
        with np.errstate(invalid="ignore"):
            tiny = np.einsum("nii->ni", L).min(axis=1) ** 2 <= d * RANK_TOL * top
        late = np.flatnonzero(~flagged & (~ok | tiny))
        if late.size:
            flagged[late] = True
            flat[late, ::d + 1] += eps(late)[:, None]
            L[late], ok = _cholesky_where(C[late])
            if not ok.all():
                raise ValueError("a covariance plus epsilon is not positive definite; "
                                 "raise var_smoothing or var_floor")
    logdet = 2.0 * np.log(np.einsum("nii->ni", L)).sum(axis=1)
    return (C.reshape(cov.shape), L.reshape(cov.shape), logdet.reshape(shape),
            flagged.reshape(shape))


def _cholesky_inverse(L: np.ndarray) -> np.ndarray:
    """``(L L')^-1`` of a stack of lower Cholesky factors (n, d, d), exactly symmetric,
    written over L (returned): LAPACK's ``potri`` on each (about 2.5 times quicker than
    ``numpy.linalg.inv`` of ``L L'`` at d = 34 to 64, which factorises it again by LU)."""
    from nbvslr.kernels.gaussian import mirror_lower

    for a in range(L.shape[0]):
        # L[a].T is the upper factor U = L' in Fortran order (no copy): potri overwrites it
        # with the upper triangle of the inverse, i.e. the lower one of L[a]
        _potri(L[a].T, lower=0, overwrite_c=1)
    mirror_lower(L)  # the upper triangle: the mirror of the lower
    return L


def _cholesky_solve(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``(L L')^-1 B`` of a stack of lower Cholesky factors (n, d, d) and right-hand sides
    (n, d, k), by LAPACK's ``potrs`` on each."""
    out = np.empty(B.shape)
    for a in range(L.shape[0]):
        out[a] = _potrs(L[a].T, B[a], lower=0)[0]
    return out


def pseudo_inverse(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``singular: pinv``: the Moore-Penrose inverse of each covariance of a stack
    (..., d, d), the log of its pseudo-determinant (...), and which were singular (...):
    an eigenvalue at most ``d * RANK_TOL`` times the largest counts as 0."""
    lam, V = np.linalg.eigh(cov)  # (..., d) ascending, (..., d, d)
    d = cov.shape[-1]
    cut = np.maximum(d * RANK_TOL * lam[..., -1], 0.0)  # (...)
    keep = lam > cut[..., None]
    inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    logdet = np.where(keep, np.log(np.where(keep, lam, 1.0)), 0.0).sum(axis=-1)
    P = np.matmul(V * inv[..., None, :], np.swapaxes(V, -1, -2))  # V diag(inv) V'
    P = 0.5 * (P + np.swapaxes(P, -1, -2))  # exactly symmetric
    return P, logdet, ~keep.all(axis=-1)


def precision(cov: np.ndarray, eps, singular: str,
              rank_bound: np.ndarray | int | None = None, overwrite: bool = False
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The inverse of each covariance of a stack (..., d, d) by ``singular``'s rule
    (``regularised`` or ``pseudo_inverse``), ``log|Sigma|`` of the covariance used (the
    pseudo-determinant's for ``pinv``) and which were singular; ``overwrite``: ``cov`` may
    be written over (``singular: epsilon``)."""
    if singular == "pinv":
        return pseudo_inverse(cov)
    if singular != "epsilon":
        raise ValueError(f"singular must be 'epsilon' or 'pinv', got {singular!r}")
    d = cov.shape[-1]
    _, L, logdet, flagged = _factored(cov, eps, d if rank_bound is None else rank_bound,
                                      overwrite)
    L = np.ascontiguousarray(L.reshape(-1, d, d))  # inverted in place: L is not kept
    return _cholesky_inverse(L).reshape(cov.shape), logdet, flagged


def _rank_bound(rank: np.ndarray | int, shrinkage: float) -> np.ndarray | float:
    """The largest rank a covariance can have: its scatter's (``rank``: m - K, count(k) - 1)
    unless shrinkage adds the diagonal (then unbounded by the rows: ``inf``)."""
    return np.inf if shrinkage > 0.0 else np.asarray(rank, dtype=np.float64)


def _class_stats(X: np.ndarray, y: np.ndarray, K: int, by_class: bool = False,
                 rows: np.ndarray | None = None):
    """Counts n (S, K), means mu (S, K, d), the largest total ML variance of a feature
    v_max (S,) (numpy's ``var(axis=1).max(axis=1)`` of the rows, to the last bit), and each
    row's deviation from its own class mean Xc (S, m, d): in the rows' order, or,
    ``by_class``, sorted by class (stably: class 0's rows first, in their order). The rows:
    X (S, m, d), or X (N, d) and their indices ``rows`` (S, m). One compiled pass
    (``kernels.gaussian.class_stats``) instead of a gathered copy, a one-hot matrix, its
    products with the rows and the means, an argsort gather and a variance."""
    from nbvslr.kernels.gaussian import class_stats

    y = np.ascontiguousarray(y, dtype=np.int64)
    S, m = y.shape
    X = np.ascontiguousarray(X, dtype=np.float64)
    if rows is None:  # the stack's rows, in order
        X = X.reshape(S * m, -1)
        rows = np.arange(S * m).reshape(S, m)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    d = X.shape[1]
    n = np.empty((S, K))
    mu = np.empty((S, K, d))
    Xc = np.empty((S, m, d))
    v_max = np.empty(S if d > 1 else 0)
    class_stats(X, rows, y, n, mu, by_class, Xc, v_max)
    if d == 1:  # one feature: numpy sums its column pairwise (the compiled pass row by row)
        v_max = X[rows].var(axis=1).max(axis=1)
    return n, mu, v_max, Xc


def _class_scatters(Xs: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Each class's scatter ``sum_i (x_i - mu_k)(x_i - mu_k)'`` over its own rows of each
    split, (S, K, d, d), from the deviations sorted by class (``_class_stats``'s
    ``by_class``): one symmetric product of each class's rows (BLAS ``syrk``), about
    m d^2 / 2 a split, where masking the other classes' rows costs K times that."""
    S, m, d = Xs.shape
    K = n.shape[1]
    ends = np.cumsum(n.astype(np.int64), axis=1)  # (S, K)
    out = np.empty((S, K, d, d))
    for s in range(S):
        lo = 0
        for k in range(K):
            hi = int(ends[s, k])
            rows = Xs[s, lo:hi]  # (n_k, d)
            np.matmul(rows.T, rows, out=out[s, k])
            lo = hi
    return out


def fit_lda(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    smoothing: float = 1.0,
    prior: str = "empirical",
    covariance: str = "ml",
    shrinkage: float = 0.0,
    singular: str = "epsilon",
    var_smoothing: float = 1e-9,
    var_floor: float = 1e-12,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """LDA of K classes fitted to S training sets.

    Parameters
    ----------
    X : ndarray of shape (S, m, d), or (N, d) with ``rows``
        The training rows of each split, or the data's rows, of which ``rows`` (S, m)
        are each split's (no gathered copy: the same fit).
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``, every class present in every split.
    n_classes : int
        K (2 for a two-class task).

    Returns
    -------
    theta : ndarray of shape (S, K, d + 1)
        Class k's score is ``[x, 1] @ theta[s, k]``.
    """
    K = int(n_classes)
    n, mu, v_max, Xc = _class_stats(X, y, K, rows=rows)
    S, m, d = Xc.shape
    scatter = np.matmul(np.swapaxes(Xc, 1, 2), Xc)  # (S, d, d)
    div = float(m) if covariance == "ml" else float(max(m - K, 1))
    if covariance not in ("ml", "unbiased"):
        raise ValueError(f"covariance must be 'ml' or 'unbiased', got {covariance!r}")
    scatter /= div  # in place: no fresh (S, d, d) array a block
    cov = _shrink(scatter, shrinkage)
    eps = _epsilon(v_max, var_smoothing, var_floor)
    if singular == "pinv":
        P, _, _ = pseudo_inverse(cov)  # (S, d, d)
        W = np.matmul(mu, P)  # (S, K, d): rows mu_k' P = (P mu_k)'
    elif singular == "epsilon":
        _, L, _, _ = _factored(cov, eps, _rank_bound(m - K, shrinkage), overwrite=True)
        W = np.swapaxes(_cholesky_solve(L, np.swapaxes(mu, 1, 2)), 1, 2)  # (S, K, d)
    else:
        raise ValueError(f"singular must be 'epsilon' or 'pinv', got {singular!r}")
    b = -0.5 * (W * mu).sum(axis=2) + log_prior(n, smoothing, prior)  # (S, K)
    return np.concatenate([W, b[:, :, None]], axis=2)


def quadratic_terms(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)``, ``i <= j``, of the products ``x_i x_j`` in the design
    ``"x_xx"``, in its column order (``numpy.triu_indices``): two arrays of d (d + 1) / 2."""
    return np.triu_indices(d)


def fit_qda(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    smoothing: float = 1.0,
    prior: str = "empirical",
    covariance: str = "ml",
    shrinkage: float = 0.0,
    singular: str = "epsilon",
    var_smoothing: float = 1e-9,
    var_floor: float = 1e-12,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """QDA of K classes fitted to S training sets.

    Parameters
    ----------
    X : ndarray of shape (S, m, d), or (N, d) with ``rows``
        The training rows of each split, or the data's rows, of which ``rows`` (S, m)
        are each split's (no gathered copy: the same fit).
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``, every class present in every split.
    n_classes : int
        K.

    Returns
    -------
    theta : ndarray of shape (S, K, d + d (d + 1) / 2 + 1)
        Class k's score is ``[x, x_i x_j (i <= j, quadratic_terms), 1] @ theta[s, k]``.
    """
    K = int(n_classes)
    n, mu, v_max, Xs = _class_stats(X, y, K, by_class=True, rows=rows)
    S, m, d = Xs.shape
    if covariance == "ml":
        div = n
    elif covariance == "unbiased":
        div = np.maximum(n - 1.0, 1.0)
    else:
        raise ValueError(f"covariance must be 'ml' or 'unbiased', got {covariance!r}")
    cov = _class_scatters(Xs, n)  # (S, K, d, d)
    cov /= div[:, :, None, None]
    cov = _shrink(cov, shrinkage)
    eps = _epsilon(v_max, var_smoothing, var_floor, per=K)
    P, logdet, _ = precision(cov, eps, singular, _rank_bound(n - 1, shrinkage),
                             overwrite=True)  # (S, K, d, d)
    from nbvslr.kernels.gaussian import quadratic_weights

    theta = np.empty((S, K, d + d * (d + 1) // 2 + 1))
    lin = np.matmul(P, mu[..., None])[..., 0]  # (S, K, d)
    theta[:, :, :d] = lin
    # the weights of x_i x_j, (S, K, d (d + 1) / 2): -P[i, i] / 2, -P[i, j] (i < j)
    quadratic_weights(P.reshape(S * K, d, d), theta.reshape(S * K, -1), d)
    theta[:, :, -1] = -0.5 * (lin * mu).sum(axis=2) - 0.5 * logdet + log_prior(n, smoothing,
                                                                               prior)
    return theta


# --------------------------------------------------------------------------- the entries
def fit_options(opts: Mapping[str, Any]) -> dict[str, Any]:
    """The fit's keyword arguments from a model's resolved options."""
    return {key: opts[key] for key in ("smoothing", "prior", "covariance", "shrinkage",
                                       "singular", "var_smoothing", "var_floor")}


def closed_form(theta: np.ndarray) -> Fit:
    """A fit without iterations or sampled hyperplanes, of two classes (S, P) or of K
    (S, K, P)."""
    S, P = theta.shape[0], theta.shape[-1]
    draws = np.empty((0, 1, *theta.shape[1:])) if theta.ndim == 3 else np.empty((0, 1, P))
    return Fit(theta, np.empty(0, dtype=np.int64), draws, np.zeros(S, dtype=bool),
               np.zeros(S, dtype=np.int64), np.ones(S, dtype=bool))


class DiscriminantEntry:
    """What the LDA and QDA entries share: the options, the stacks, the tie rule (a score
    of exactly 0 counts half an error; a tie among t classes (t - 1)/t).

    The K scores of a split are returned minus their mean over the classes (the same
    predictions): a feature constant in the training rows has weights of about
    ``1 / epsilon`` (``singular: epsilon``) that every class shares, and the tie band of
    the evaluation is relative to the rule's size, ``1e-10 * ||theta||_1``; left in, that
    shared part (1e10 on a [0, 1] feature of value 1) made the band wider than the
    scores' differences and counted nearly every row as a tie. Two classes: the log-odds
    ``theta_1 - theta_0`` has no shared part."""

    name = ""
    kinds = ("continuous",)
    options = DISCRIMINANT_OPTIONS
    multiclass = False
    #: "x" or "x_xx", and the fit of K classes on it.
    design_name = ""
    #: The fewest splits a block of the fit holds (``Budget.step``'s ``min_block``).
    min_block = 1

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return self.design_name

    def ties(self, opts: Mapping[str, Any]) -> float:
        return 0.0

    def _covariances(self, data: Dataset) -> int:
        raise NotImplementedError

    def _width(self, data: Dataset) -> int:
        """The stacks' width per training row: the gathered X (d + 1), or, when wider, W with
        W^2 >= the d x d covariances a split holds (one, or one per class): the memory plan
        counts a few W x W matrices per split (``runner.memory``), as for LR's Hessians. The
        design's rows (QDA's d (d + 1) / 2 products) are never stacked per split: they are
        held once, with the design, and scored in tiles."""
        d = data.n_features
        return max(d + 1, int(np.ceil(np.sqrt(self._covariances(data)) * d)) + 1)

    def width(self, data: Dataset, design: Design) -> int:
        return self._width(data)

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        return self._width(data), 0

    def fit(self, data: Dataset, design: Design, idx: np.ndarray, opts: Mapping[str, Any],
            seeds: Sequence[np.random.SeedSequence] = (),
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        """The closed-form fit of the training rows ``idx`` (S, m): theta (S, P), or
        (S, K, P) for K > 2 classes."""
        S, m = idx.shape
        K = max(data.n_classes, 2)
        # in blocks of splits whose stacks fit the cache budget (a few MB): a freed block's
        # memory is reused by the next instead of fresh arrays page-faulting (2 MB blocks
        # ran as fast as 8 MB ones and faster than one of all, benchmarks/RESULTS.md), and
        # at least ``min_block`` splits (LDA: its per-block steps); every split's numbers
        # are its own, whatever the block
        step = budget.step(budget.cache, 8.0 * m * self._width(data), self.min_block)
        X = np.ascontiguousarray(data.X, dtype=np.float64)  # (N, d): each block reads its rows
        y = np.asarray(data.y)
        theta = None
        for lo in range(0, S, step):
            block = self._theta(X, idx[lo:lo + step], y[idx[lo:lo + step]], K, opts)  # (s, K, P)
            if theta is None:
                theta = np.empty((S, *block.shape[1:]) if self.multiclass
                                 else (S, block.shape[2]))
            if not self.multiclass:  # the log-odds of class 1: (s, P)
                np.subtract(block[:, 1], block[:, 0], out=theta[lo:lo + step])
            else:  # the same rule, without the part every class shares (tie band: docstring)
                theta[lo:lo + step] = centred(block)
        return closed_form(theta)

    def _theta(self, X: np.ndarray, rows: np.ndarray, y: np.ndarray, K: int,
               opts: Mapping[str, Any]) -> np.ndarray:
        """The rule (s, K, P) of the training rows ``rows`` (s, m) of X (N, d), labels y
        (s, m)."""
        raise NotImplementedError
