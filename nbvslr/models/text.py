"""Naive Bayes and logistic regression on word counts, batched over the splits of one size.

Every fit here is a hyperplane ``theta = (w, b)`` of shape (S, V + 1) over the task's V words
(``nbvslr.data.text.count_matrix``), intercept last, with ``w[s, j] = 0`` for a word split
``s`` does not keep (``split_vocabulary``): a word outside a split's vocabulary then counts
for nothing, as it does for ``CountVectorizer(vocabulary=...)``. The score of document
``x`` is ``z(x) @ w + b``, class 1 when positive, with ``z(x) = x`` (counts) for multinomial
NB and LR and ``z(x) = 1[x > 0]`` (presence) for Bernoulli NB (``design_of``). Scores are
sparse products ``Z @ w.T``; no (S, m, V) stack is made: the training sets are sums of
sparse rows (an (S, N) selector times the (N, V) counts) or the (S m, V) sparse rows.

Naive Bayes, with Laplace smoothing ``l`` and class prior ``(n_c + l) / (m + 2 l)``
(``n_c`` training documents of class ``c``), over the ``V_s`` words split ``s`` keeps:

- multinomial: ``p_cj = (N_cj + l) / (N_c + l V_s)``, ``N_cj`` the count of word ``j`` in
  class ``c``'s documents, ``N_c = sum_j N_cj``; ``w_j = log p_1j - log p_0j``,
  ``b = log pi_1 - log pi_0``.
- Bernoulli: ``p_cj = (d_cj + l) / (n_c + 2 l)``, ``d_cj`` the documents of class ``c``
  holding word ``j``; an absent word counts too, through ``log(1 - p_cj)``:
  ``w_j = log p_1j - log(1 - p_1j) - log p_0j + log(1 - p_0j)``,
  ``b = log pi_1 - log pi_0 + sum_j [log(1 - p_1j) - log(1 - p_0j)]``.

Logistic regression with L2 penalty, the intercept unpenalised (scikit-learn's objective):
``min_w  C sum_i log(1 + exp(-t_i (x_i w + b))) + ||w||^2 / 2``, ``t_i = +-1``, by Newton-CG,
one split at a time in compiled code (``nbvslr.kernels.text.lr_newton_cg``) on the split's
own training rows and words. It starts from ``w = 0`` and ``b`` = the log-odds of the
training classes; each Newton step solves ``H d = -g`` by conjugate gradients (Hessian-vector
products ``H v = C X^T D X v + v``, one pass over the split's non-zeros each) to a residual
of ``max(min(0.5, sqrt|g|) |g|, tol / 10)`` (truncated Newton's forcing term), then
backtracks (Armijo, sufficient decrease 1e-4; a rise within 1e-12 |f|, the objective's own
rounding, is no rise). A split stops when ``max_j |g_j| <= tol`` (``GRADIENT_TOL`` by
default), the largest component of the objective's gradient over its words and intercept:
the fits agree with any other solver's to that tolerance, not bit for bit.

Held-out errors (``heldout_errors``): each hyperplane's mistakes on the documents outside
its training set, a score within ``TIE_RTOL * ||theta||_1`` of zero a tie counting one half
(``nbvslr.models.evaluate``'s rule for the other tasks).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nbvslr.errors import ConfigError
from nbvslr.models.evaluate import TIE_RTOL

#: Stopping rule of ``fit_lr_text``: the largest gradient component of every split.
GRADIENT_TOL = 1e-8

EVENTS = ("multinomial", "bernoulli")


def design_of(X: sp.csr_matrix, event: str) -> sp.csr_matrix:
    """What a model reads of the counts (N, V): the counts, or for ``bernoulli`` presence."""
    if event == "bernoulli":
        Z = X.copy()
        Z.data[:] = 1.0
        return Z
    return X


def _csr_arrays(X: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """indptr, indices (int64) and data (float64) of a CSR matrix, as the compiled loops
    take them (one compiled version whatever scipy's index type)."""
    X = sp.csr_matrix(X)
    return (X.indptr.astype(np.int64, copy=False), X.indices.astype(np.int64, copy=False),
            X.data.astype(np.float64, copy=False))


def _rows(idx: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(idx, dtype=np.int64)


def fit_nb_text(
    X: sp.csr_matrix,
    y: np.ndarray,
    idx: np.ndarray,
    keep: np.ndarray,
    event: str = "multinomial",
    smoothing: float = 1.0,
) -> np.ndarray:
    """Naive Bayes on S training sets at once (see the module's formulas).

    Parameters
    ----------
    X : csr_matrix of shape (N, V)
        Word counts of the task's documents.
    y : ndarray of shape (N,)
        Classes 0/1.
    idx : ndarray of shape (S, m)
        The training rows of each split; each holds both classes.
    keep : ndarray of shape (S, V), bool
        The words each split keeps.
    event : {"multinomial", "bernoulli"}
    smoothing : float
        Laplace's ``l`` (> 0).

    Returns
    -------
    theta : ndarray of shape (S, V + 1)
    """
    if event not in EVENTS:
        raise ConfigError(f"nb option 'event' = {event!r} is invalid; it must be one of "
                          "'multinomial', 'bernoulli'")
    if not smoothing > 0:
        raise ConfigError(f"nb option 'smoothing' = {smoothing!r} is invalid; it must be > 0")
    from nbvslr.kernels.text import split_class_sums  # compiled: imported where it runs

    S, m = idx.shape
    l = float(smoothing)
    lab = y[idx]  # (S, m)
    n1 = lab.sum(axis=1).astype(np.float64)  # (S,)
    n0 = m - n1
    # Class sums (S, V) of each split's kept words: exact sums of counts (or presences).
    Z = design_of(X, event)
    sums = np.zeros((2, S, X.shape[1]))
    split_class_sums(*_csr_arrays(Z), _rows(idx), np.asarray(y, dtype=np.int64),
                     np.ascontiguousarray(keep, dtype=bool), sums)
    log_prior = np.log((n1 + l) / (m + 2 * l)) - np.log((n0 + l) / (m + 2 * l))
    theta = np.zeros((S, X.shape[1] + 1))
    if keep.mean() > 0.5:  # most words kept (vocabulary: all): the dense formulas
        sum0, sum1 = sums[0], sums[1]
        kf = keep.astype(np.float64)
        if event == "multinomial":
            V_s = kf.sum(axis=1)  # (S,)
            lp1 = np.log(sum1 + l) - np.log(sum1.sum(axis=1) + l * V_s)[:, None]
            lp0 = np.log(sum0 + l) - np.log(sum0.sum(axis=1) + l * V_s)[:, None]
            theta[:, :-1] = (lp1 - lp0) * kf
            theta[:, -1] = log_prior
        else:
            p1 = (sum1 + l) / (n1 + 2 * l)[:, None]
            p0 = (sum0 + l) / (n0 + 2 * l)[:, None]
            absent = (np.log1p(-p1) - np.log1p(-p0)) * kf  # (S, V)
            theta[:, :-1] = (np.log(p1) - np.log(p0)) * kf - absent
            theta[:, -1] = log_prior + absent.sum(axis=1)
        return theta
    # Else the same formulas at each split's kept words only (w = 0 at the others): numpy's
    # elementwise logs give an entry the value they give it in the dense array, and sums of
    # counts are exact in any order, so theta is the dense formulas' bit for bit (but for
    # the sign of a zero). Bernoulli's intercept sums its terms over the dense row, in the
    # dense formula's order.
    flat = np.flatnonzero(keep)  # (split, word) pairs kept, as s V + j
    s_of = np.repeat(np.arange(S), keep.sum(axis=1))
    at = flat + s_of  # the same pairs in theta (S, V + 1): s (V + 1) + j
    a0 = sums[0].ravel()[flat]
    a1 = sums[1].ravel()[flat]
    if event == "multinomial":
        V_s = keep.sum(axis=1).astype(np.float64)  # (S,)
        lp1 = np.log(a1 + l) - np.log(sums[1].sum(axis=1) + l * V_s)[s_of]
        lp0 = np.log(a0 + l) - np.log(sums[0].sum(axis=1) + l * V_s)[s_of]
        theta.ravel()[at] = lp1 - lp0
        theta[:, -1] = log_prior
    else:
        p1 = (a1 + l) / (n1 + 2 * l)[s_of]
        p0 = (a0 + l) / (n0 + 2 * l)[s_of]
        absent = np.log1p(-p1) - np.log1p(-p0)
        theta.ravel()[at] = (np.log(p1) - np.log(p0)) - absent
        row = sums[0]  # reused: (S, V), absent's terms at the kept words, 0 elsewhere
        row[:] = 0.0
        row.ravel()[flat] = absent
        theta[:, -1] = log_prior + row.sum(axis=1)
    return theta


def scores(Z: sp.csr_matrix, theta: np.ndarray) -> np.ndarray:
    """The scores (S, n) of the n documents ``Z`` (n, V) under S hyperplanes (S, V + 1)."""
    return (Z @ theta[:, :-1].T).T + theta[:, -1:]


def heldout_errors(Z: sp.csr_matrix, y: np.ndarray, theta: np.ndarray,
                   idx: np.ndarray) -> np.ndarray:
    """The 0-1 error of each hyperplane on the documents outside its training set.

    Parameters
    ----------
    Z : csr_matrix of shape (N, V)
        What the model reads of every document (``design_of``).
    y : ndarray of shape (N,)
        Classes 0/1.
    theta : ndarray of shape (S, V + 1)
    idx : ndarray of shape (S, m)
        The training rows of each split (distinct).

    Returns
    -------
    ndarray of shape (S,)
        Mistakes on the N - m held-out documents over N - m; a tie (a score within
        ``TIE_RTOL * ||theta_s||_1`` of zero) counts one half. No (S, N) matrix is made: each
        split's held-out scores are summed row by row in compiled code and counted at once.
    """
    from nbvslr.kernels.text import heldout_mistakes  # compiled: imported where it runs

    theta = np.ascontiguousarray(theta, dtype=np.float64)
    tau = np.maximum(TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)
    sign = np.where(np.asarray(y) == 1, 1.0, -1.0)
    mistakes = heldout_mistakes(*_csr_arrays(Z), sign, theta, tau, _rows(idx))
    return mistakes / (Z.shape[0] - idx.shape[1])


def fit_lr_text(
    X: sp.csr_matrix,
    y: np.ndarray,
    idx: np.ndarray,
    keep: np.ndarray,
    C: float | None,
    tol: float = GRADIENT_TOL,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L2-penalised logistic regression on the counts, S training sets at once (Newton-CG).

    Parameters
    ----------
    X, y, idx, keep : as ``fit_nb_text``
    C : float
        The inverse penalty (scikit-learn's ``C``); None (the unpenalised fit) is refused.
    tol : float
        Stop a split when ``max_j |g_j| <= tol`` (g: the objective's gradient).
    max_iter : int
        Newton steps at most.

    Returns
    -------
    theta : ndarray of shape (S, V + 1)
    n_iter : ndarray of shape (S,), int64
    converged : ndarray of shape (S,), bool
    """
    if C is None:
        raise ConfigError(
            "lr on a text task needs a penalty: the unpenalised fit (the paper's rule) is not "
            "available for text yet; set C: (e.g. C: 1)")
    if not C > 0:
        raise ConfigError(f"lr option 'C' = {C!r} is invalid; it must be > 0")
    from nbvslr.kernels.text import lr_newton_cg  # compiled: imported where it runs

    S, m = idx.shape
    theta = np.zeros((S, X.shape[1] + 1))
    n_iter = np.zeros(S, dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    sign = np.where(np.asarray(y) == 1, 1.0, -1.0)
    lr_newton_cg(*_csr_arrays(X), sign, _rows(idx), np.ascontiguousarray(keep, dtype=bool),
                 float(C), float(tol), int(max_iter), theta, n_iter, converged,
                 np.zeros(1, dtype=np.int64))
    return theta, n_iter, converged
