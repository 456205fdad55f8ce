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

K > 2 classes (``fit_lr_text_multi``): softmax LR with the same penalty on all K weight
vectors, theta (S, K, V + 1), fitted one split at a time in numpy and scipy on the same
rows and words, by the same Newton-CG rules (its docstring states the objective).

Held-out errors (``heldout_errors``): each hyperplane's mistakes on the documents outside
its training set, a score within ``TIE_RTOL * ||theta||_1`` of zero a tie counting one half
(``nbvslr.models.evaluate``'s rule for the other tasks).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import daxpy as _axpy

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
            with np.errstate(divide="ignore", invalid="ignore"):
                lp1 = np.log(sum1 + l) - np.log(sum1.sum(axis=1) + l * V_s)[:, None]
                lp0 = np.log(sum0 + l) - np.log(sum0.sum(axis=1) + l * V_s)[:, None]
                diff = lp1 - lp0
            diff[V_s == 0] = 0.0  # a split keeping no word (log(0) there): its prior alone
            theta[:, :-1] = diff * kf
            theta[:, -1] = log_prior
        else:
            p1 = (sum1 + l) / (n1 + 2 * l)[:, None]
            p0 = (sum0 + l) / (n0 + 2 * l)[:, None]
            absent = (log_absent(p1, sum1, n1, l) - log_absent(p0, sum0, n0, l)) * kf  # (S, V)
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
        # a split that keeps no word (chance, at small m with min_df > 1) has a log(0) total,
        # never read (no kept pair indexes it): its hyperplane is the prior alone
        with np.errstate(divide="ignore"):
            total1 = np.log(sums[1].sum(axis=1) + l * V_s)
            total0 = np.log(sums[0].sum(axis=1) + l * V_s)
        lp1 = np.log(a1 + l) - total1[s_of]
        lp0 = np.log(a0 + l) - total0[s_of]
        theta.ravel()[at] = lp1 - lp0
        theta[:, -1] = log_prior
    else:
        p1 = (a1 + l) / (n1 + 2 * l)[s_of]
        p0 = (a0 + l) / (n0 + 2 * l)[s_of]
        absent = log_absent(p1, a1, n1[s_of], l) - log_absent(p0, a0, n0[s_of], l)
        theta.ravel()[at] = (np.log(p1) - np.log(p0)) - absent
        row = sums[0]  # reused: (S, V), absent's terms at the kept words, 0 elsewhere
        row[:] = 0.0
        row.ravel()[flat] = absent
        theta[:, -1] = log_prior + row.sum(axis=1)
    return theta


def log_absent(p: np.ndarray, d: np.ndarray, n: np.ndarray, l: float) -> np.ndarray:
    """log(1 - p) of Bernoulli NB's word probabilities p = (d + l) / (n + 2 l): ``log1p(-p)``,
    but where p rounds to 1 (a word in every document of a class, l tiny against n), where
    that is -inf, log((n - d + l) / (n + 2 l)), its exact value (finite for every l > 0).
    ``n`` broadcasts against ``d`` as (S,) against (S, V), or matches a flat ``d``."""
    n = np.asarray(n, dtype=np.float64)
    if d.ndim == 2 and n.ndim == 1:
        n = n[:, None]
    with np.errstate(divide="ignore"):
        out = np.log1p(-p)
    bad = np.isinf(out)
    if bad.any():
        nb = np.broadcast_to(n, out.shape)[bad]
        out[bad] = np.log(nb - d[bad] + l) - np.log(nb + 2 * l)
    return out


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


def _split_counts(X: sp.csr_matrix, rows: np.ndarray, keep: np.ndarray
                  ) -> tuple[sp.csr_matrix, np.ndarray]:
    """One split's training rows (m, n_w) over the words it keeps that they hold, and
    those words' numbers in X (n_w,): O(the rows' non-zeros), never O(V) per row."""
    Xs = X[rows]
    mask = keep[Xs.indices]
    if not mask.all():
        Xs = sp.csr_matrix((Xs.data * mask, Xs.indices, Xs.indptr), shape=Xs.shape)
        Xs.eliminate_zeros()
    words, col = np.unique(Xs.indices, return_inverse=True)
    Xs = sp.csr_matrix((Xs.data.astype(np.float64), col.ravel(), Xs.indptr),
                       shape=(Xs.shape[0], words.size))
    return Xs, words


def _softmax_loss(s: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """The summed loss ``sum_i [log sum_k exp(s_ik) - s_{i y_i}]`` and the probabilities
    (m, K) of scores s (m, K)."""
    top = s.max(axis=1, keepdims=True)
    e = np.exp(s - top)
    tot = e.sum(axis=1, keepdims=True)
    lse = np.log(tot[:, 0]) + top[:, 0]
    return float((lse - s[np.arange(s.shape[0]), y]).sum()), e / tot


def _newton_cg_multi(Xs: sp.csr_matrix, y: np.ndarray, K: int, C: float, tol: float,
                     max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Softmax LR on one split's rows Xs (m, n_w), classes y (m,): the weights (n_w + 1, K)
    (the intercepts last), the Newton steps taken and whether ``max |g| <= tol`` was met.

    The rows carry a column of ones (the intercepts), so a parameter is one (n_w + 1, K)
    array and the penalty is every row but the last. CG is preconditioned by the
    Hessian's diagonal, ``C sum_i x_ij^2 p_ik (1 - p_ik) (+ 1 off the intercepts)``: one
    more sparse product per Newton step, which cuts the CG steps where words' counts differ
    in scale; its stopping rule reads the residual itself, as ``fit_lr_text``'s."""
    m, nw = Xs.shape
    X1 = sp.hstack([Xs, np.ones((m, 1))], format="csr")
    XT = X1.T.tocsr()
    X2T = XT.multiply(XT).tocsr()  # x_ij^2, for the diagonal
    Y = np.zeros((m, K))
    Y[np.arange(m), y] = 1.0
    W = np.zeros((nw + 1, K))
    n_k = Y.sum(axis=0)
    W[-1] = np.log(np.maximum(n_k, 1.0) / m)  # every class is in every training set
    W[-1] -= W[-1].mean()
    s = np.broadcast_to(W[-1], (m, K)).copy()
    loss, p = _softmax_loss(s, y)
    f = C * loss
    steps = 0
    converged = False
    pen = np.ones((nw + 1, 1))
    pen[-1] = 0.0  # the penalty's rows: every word's, not the intercepts'
    for _ in range(max_iter + 1):
        g = XT @ (C * (p - Y))
        g[:-1] += W[:-1]
        gmax = float(np.abs(g).max())
        if gmax <= tol:
            converged = True
            break
        if steps >= max_iter:
            break
        # preconditioned conjugate gradients on H d = -g, stopped as fit_lr_text's CG: the
        # residual below min(0.5, |g|) |g|, or its largest component below tol / 2.
        # H v = C X1^T U + v (words), U = p * A - p (p . A)_row, A = X1 v: O(nnz K).
        gv = g.ravel()
        gg = float(gv @ gv)
        gnorm = np.sqrt(gg)
        stop = (min(0.5, gnorm) * gnorm) ** 2
        inv_diag = 1.0 / (X2T @ (C * p * (1.0 - p)) + pen + 1e-12)
        d = np.zeros_like(W)
        dv = d.ravel()
        Xd = np.zeros((m, K))  # X1 d, summed along CG for the line search
        r = -g
        rv = r.ravel()
        z = r * inv_diag
        q = z.copy()
        rz = float(r.ravel() @ z.ravel())
        rr = gg
        rinf = gmax
        for _k in range(W.size):
            if rr <= stop or rinf <= 0.5 * tol:
                break
            A = X1 @ q  # (m, K)
            U = p * A
            U -= p * U.sum(axis=1, keepdims=True)
            U *= C
            h = XT @ U
            h[:-1] += q[:-1]
            qh = float(q.ravel() @ h.ravel())
            if not qh > 0.0:
                break  # no curvature left (a shift of every intercept)
            alpha = rz / qh
            _axpy(q.ravel(), dv, a=alpha)
            _axpy(A.ravel(), Xd.ravel(), a=alpha)
            _axpy(h.ravel(), rv, a=-alpha)
            rr = float(rv @ rv)
            rinf = float(np.abs(rv).max())
            np.multiply(r, inv_diag, out=z)
            rz_new = float(rv @ z.ravel())
            q *= rz_new / rz
            _axpy(z.ravel(), q.ravel())
            rz = rz_new
        # backtracking (Armijo) along d, the scores s + step X1 d; a rise below 1e-12 |f|
        # is the objective's rounding (fit_lr_text's rule)
        slope = float(gv @ d.ravel())
        w, dw = W[:-1].ravel(), d[:-1].ravel()
        ww, wd, dd = float(w @ w), float(w @ dw), float(dw @ dw)
        step = 1.0
        for ls in range(30):  # the 30th trial is taken as it is
            loss, p_try = _softmax_loss(s + step * Xd, y)
            f_try = C * loss + 0.5 * (ww + 2.0 * step * wd + step * step * dd)
            if f_try <= f + 1e-4 * step * slope + 1e-12 * abs(f) or ls == 29:
                break
            step *= 0.5
        W += step * d
        s += step * Xd
        p = p_try
        f = f_try
        steps += 1
    return W, steps, converged


def fit_lr_text_multi(
    X: sp.csr_matrix,
    y: np.ndarray,
    idx: np.ndarray,
    keep: np.ndarray,
    n_classes: int,
    C: float | None,
    tol: float = GRADIENT_TOL,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L2-penalised softmax (K-class) logistic regression on the counts, one split at a time.

    The objective of ``nbvslr.models.softmax`` with ``C`` times C (scikit-learn's multinomial
    ``LogisticRegression(C=C)``): ``C sum_i [log sum_k exp(s_ik) - s_{i y_i}] + sum_k
    ||w_k||^2 / 2``, all K weight vectors penalised alike, the intercepts not, ``s_ik =
    x_i w_k + b_k``. Each split is fitted on its own training rows and the words it keeps
    that they hold (a word it does not keep, or that no training row holds, weighs 0), by
    Newton-CG from ``w = 0`` and ``b_k`` = the log class shares (centred): Hessian-vector
    products by two sparse products, O(nnz K); CG's and the line search's rules are
    ``fit_lr_text``'s. A split stops when the largest component of the objective's gradient
    (words and intercepts) is at most ``tol``, or after ``max_iter`` Newton steps.

    Parameters
    ----------
    X, idx, keep : as ``fit_nb_text``
    y : ndarray of shape (N,)
        Classes ``0 .. K - 1``; each training set holds every class.
    n_classes : int
        K.
    C : float
        The inverse penalty; None is refused.
    tol, max_iter : the stopping rules.

    Returns
    -------
    theta : ndarray of shape (S, K, V + 1)
        Class k's weights over the V words, its intercept last.
    n_iter : ndarray of shape (S,), int64
    converged : ndarray of shape (S,), bool
    """
    if C is None:
        raise ConfigError(
            "lr on a text task of more than two classes needs a penalty; set C: (e.g. C: 1)")
    if not C > 0:
        raise ConfigError(f"lr option 'C' = {C!r} is invalid; it must be > 0")
    X = sp.csr_matrix(X)
    y = np.asarray(y, dtype=np.int64)
    keep = np.asarray(keep, dtype=bool)
    S, m = idx.shape
    K = int(n_classes)
    V = X.shape[1]
    theta = np.zeros((S, K, V + 1))
    n_iter = np.zeros(S, dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    for s in range(S):
        rows = np.asarray(idx[s], dtype=np.int64)
        Xs, words = _split_counts(X, rows, keep[s])
        W, n_iter[s], converged[s] = _newton_cg_multi(Xs, y[rows], K, float(C), float(tol),
                                                      int(max_iter))
        theta[s, :, words] = W[:-1]
        theta[s, :, -1] = W[-1]
    return theta, n_iter, converged
