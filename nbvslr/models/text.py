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
``min_w  C sum_i log(1 + exp(-t_i (x_i w + b))) + ||w||^2 / 2``, ``t_i = +-1``, by Newton-CG:
each Newton step solves ``H d = -g`` by conjugate gradients whose Hessian-vector products
``H v = C X^T D X v + v`` are two sparse products over the training rows (O(nonzeros)), all
S splits at once, then backtracks (Armijo) where the objective did not fall. It stops when
``max_j |g_j| <= tol`` (``GRADIENT_TOL`` by default) for every split.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nbvslr.errors import ConfigError

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


def _selector(rows: np.ndarray, n: int, S: int, lengths: np.ndarray) -> sp.csr_matrix:
    """(S, n) sparse: row ``s`` has a 1 at each of its ``lengths[s]`` entries of ``rows``."""
    indptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return sp.csr_matrix((np.ones(rows.shape[0]), rows, indptr), shape=(S, n))


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
    S, m = idx.shape
    N = X.shape[0]
    Z = design_of(X, event)
    l = float(smoothing)
    lab = y[idx]  # (S, m)
    n1 = lab.sum(axis=1).astype(np.float64)  # (S,)
    n0 = m - n1
    # Class sums (S, V): a sparse (S, N) selector of each class's training rows times Z.
    rows1 = idx[lab == 1]
    rows0 = idx[lab == 0]
    sum1 = np.asarray((_selector(rows1, N, S, n1.astype(np.int64)) @ Z).todense())
    sum0 = np.asarray((_selector(rows0, N, S, n0.astype(np.int64)) @ Z).todense())
    kf = keep.astype(np.float64)
    sum1 *= kf
    sum0 *= kf
    log_prior = np.log((n1 + l) / (m + 2 * l)) - np.log((n0 + l) / (m + 2 * l))
    theta = np.zeros((S, X.shape[1] + 1))
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


def scores(Z: sp.csr_matrix, theta: np.ndarray) -> np.ndarray:
    """The scores (S, n) of the n documents ``Z`` (n, V) under S hyperplanes (S, V + 1)."""
    return (Z @ theta[:, :-1].T).T + theta[:, -1:]


def _training_rows(
    X: sp.csr_matrix, idx: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The S m training rows as COO entries restricted to each split's words: (row in 0 ..
    S m - 1, split, word, value), the row of ``idx`` flattened in split-major order."""
    S, m = idx.shape
    A = X[idx.ravel()].tocoo()
    split = A.row // m
    ok = keep[split, A.col]
    return A.row[ok].astype(np.int64), split[ok], A.col[ok].astype(np.int64), A.data[ok]


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
    S, m = idx.shape
    V = X.shape[1]
    P = V + 1
    row, split, col, val = _training_rows(X, idx, keep)
    # Append the intercept's column of ones to every training row.
    ones = np.arange(S * m, dtype=np.int64)
    row = np.concatenate([row, ones])
    split = np.concatenate([split, ones // m])
    col = np.concatenate([col, np.full(S * m, V, dtype=np.int64)])
    val = np.concatenate([val, np.ones(S * m)])
    flat = split * P + col  # index into the (S, P) parameters
    t = 2.0 * y[idx.ravel()] - 1.0  # (S m,)
    reg = np.ones(P)
    reg[-1] = 0.0  # the intercept is unpenalised

    def margins(W: np.ndarray) -> np.ndarray:  # X_s w_s for every training row, (S m,)
        return np.bincount(row, val * W.ravel()[flat], minlength=S * m)

    def xt(r: np.ndarray) -> np.ndarray:  # X_s^T r_s, (S, P)
        return np.bincount(flat, val * r[row], minlength=S * P).reshape(S, P)

    def objective(W: np.ndarray, z: np.ndarray) -> np.ndarray:
        loss = np.logaddexp(0.0, -t * z).reshape(S, m).sum(axis=1)
        return C * loss + 0.5 * (W * W * reg).sum(axis=1)

    W = np.zeros((S, P))
    z = margins(W)
    f = objective(W, z)
    n_iter = np.zeros(S, dtype=np.int64)
    done = np.zeros(S, dtype=bool)
    for _ in range(max_iter):
        sig = 0.5 * (1.0 + np.tanh(0.5 * t * z))  # sigma(t z), stable
        g = C * xt(-t * (1.0 - sig)) + W * reg  # (S, P)
        gmax = np.abs(g).max(axis=1)
        done = gmax <= tol
        if done.all():
            break
        D = C * sig * (1.0 - sig)  # (S m,)

        # Conjugate gradients on H d = -g, batched; a split stops at a relative residual of
        # min(0.5, sqrt(|g|)) (truncated Newton's forcing term).
        d = np.zeros_like(W)
        r = -g.copy()
        p = r.copy()
        rr = (r * r).sum(axis=1)
        gnorm = np.sqrt((g * g).sum(axis=1))
        stop = (np.minimum(0.5, np.sqrt(gnorm)) * gnorm) ** 2
        for _ in range(max(P, 1)):
            active = (rr > stop) & ~done
            if not active.any():
                break
            Hp = xt(D * margins(p)) + p * reg  # H p, two sparse products
            pHp = (p * Hp).sum(axis=1)
            alpha = np.where(active, rr / np.where(pHp > 0, pHp, 1.0), 0.0)
            d += alpha[:, None] * p
            r -= alpha[:, None] * Hp
            rr_new = (r * r).sum(axis=1)
            beta = np.where(active, rr_new / np.where(rr > 0, rr, 1.0), 0.0)
            p = np.where(active[:, None], r + beta[:, None] * p, p)
            rr = np.where(active, rr_new, rr)
        # Backtracking (Armijo) per split: halve the step where the objective did not fall.
        step = np.where(done, 0.0, 1.0)
        slope = (g * d).sum(axis=1)
        for _ in range(30):
            W_try = W + step[:, None] * d
            z_try = margins(W_try)
            f_try = objective(W_try, z_try)
            bad = (f_try > f + 1e-4 * step * slope) & (step > 0)
            if not bad.any():
                break
            step = np.where(bad, 0.5 * step, step)
        W, z, f = W_try, z_try, f_try
        n_iter += ~done
    return W, n_iter, done
