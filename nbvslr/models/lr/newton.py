"""Logistic regression by Newton's method (IRLS) for S training sets at once.

Conventions
-----------
* ``Z1`` : ndarray of shape (S, m, D + 1), the training rows of each split with a trailing
  column of ones; ``theta = (w, b)`` of shape (S, D + 1) with the intercept ``b`` LAST.
* ``sign`` : ndarray of shape (S, m), ``2 y - 1`` in {-1, +1}.
* margins ``mu_i = sign_i * Z1_i @ theta``; the loss is SUMMED over the m rows (not averaged):

      L(theta) = sum_i log(1 + exp(-mu_i)) + ||w||^2 / (2 C)

  with the penalty on ``w`` only (intercept unpenalised); ``C = None`` means no penalty.
  Its minimiser is scikit-learn's ``LogisticRegression(C=C)``, which minimises
  ``C * sum_i loss_i + ||w||^2 / 2`` (the same function times C).
* gradient ``-sum_i sign_i sigma(-mu_i) Z1_i + (w, 0) / C``;
  Hessian ``sum_i sigma(mu_i) sigma(-mu_i) Z1_i Z1_i^T + diag(1/C, ..., 1/C, 0)``.

The fitting loop (``fit_newton``) stops a split when ``max_j |grad_j| / m <= tol``
(converged), after ``max_iter`` Newton steps, when the line search cannot decrease the loss,
or (with ``stop_when_separable``) at the first iterate whose training margins are all > 0:
a certificate that the training set is linearly separable, so that the unpenalised likelihood
has no maximum. Finished splits leave the active set.

Unpenalised fits with ``2 m <= D + 1`` (``DUAL``) solve each Newton system in the row
space of the training rows: with ``Z^T = Q R`` (once per fit), ``delta = Q v`` where
``(R W R^T + ridge) v = R r`` -- the (D+1)-dimensional system restricted to the only
directions its solution can take (it is ``Z^T`` times something), so the same steps from
(m, m) instead of (D+1, D+1) systems.

Penalised fits started at 0 with ``4 (m + 1) <= 3 (D + 1)`` do the same in the span of the
training rows' weight parts plus the intercept direction, which holds every iterate and the
optimum (``w = C X^T a``): ``(m + 1, m + 1)`` systems.

Each Newton system (the Hessian plus a tiny ridge, positive definite) is solved by Cholesky
factorisation (``kernels.cholesky``). Unpenalised fits on a sparse (one-hot) design work on
the columns each split's training rows use: a column no row uses has a zero gradient and a
zero Hessian row, so it never moves; the others are packed to the front, and each split
factors only its own columns.

Splits are fitted in blocks of about ``budget.cache`` bytes of training rows (of their
non-zeros, for a sparse design): every operation acts on each split separately, so a split's
fit does not depend on the block it shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.stacks import check_both_classes

#: Armijo sufficient-decrease constant and the number of step halvings tried.
ARMIJO = 1e-4
MAX_HALVINGS = 40
#: Largest change of any margin in one Newton step (a guard, see ``fit_newton``).
MAX_MARGIN_STEP = 1e4
#: ``fit_newton`` works on blocks of splits whose (m, D+1) stacks total about ``budget.cache``
#: bytes (``nbvslr.models.budget``), at least ``MIN_BLOCK`` splits.
MIN_BLOCK = 8
#: Solve unpenalised Newton systems with 2 m <= D + 1 in the row space of Z (m x m); with
#: more rows the one-time QR costs more than the smaller systems save (measured).
DUAL = True
#: Form the Hessian from each row's non-zeros (``kernels.sparse_gram``) when at most this
#: share of a block's entries is non-zero: faster than the dense product on every discrete
#: panel, the densest (voting) included (benchmarks/RESULTS.md).
SPARSE_DENSITY = 0.3
#: A sparse stack's blocks hold this many times the splits of a dense one (fewer passes of
#: the Newton loop; 15% less CPU on adult (discrete) than equal blocks, benchmarks/RESULTS.md).
SPARSE_BLOCK = 4


# ----------------------------------------------------------------------------- pure functions
def log1p_exp_neg(mu: np.ndarray) -> np.ndarray:
    """``log(1 + exp(-mu))`` elementwise, stable for any real ``mu``.

    Written ``max(-mu, 0) + log1p(exp(-|mu|))``: the exponent is never positive, so exp
    cannot overflow, and log1p keeps precision when ``exp(-|mu|)`` is tiny.
    """
    return np.maximum(-mu, 0.0) + np.log1p(np.exp(-np.abs(mu)))


def sigmoid_neg(mu: np.ndarray) -> np.ndarray:
    """``sigma(-mu) = 1 / (1 + exp(mu))`` elementwise, stable (exp of a non-positive number)."""
    e = np.exp(-np.abs(mu))
    return np.where(mu >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def _margins(theta: np.ndarray, Z1: np.ndarray, sign: np.ndarray) -> np.ndarray:
    return sign * np.matmul(Z1, theta[:, :, None])[:, :, 0]  # (S, m)


def _penalty_diag(n_params: int, C: float | None) -> np.ndarray:
    """``(1/C, ..., 1/C, 0)``: the penalty's Hessian diagonal (zeros when C is None)."""
    d = np.full(n_params, 0.0 if C is None else 1.0 / C)
    d[-1] = 0.0  # the intercept is never penalised
    return d


def loss_at(mu: np.ndarray, theta: np.ndarray, pen: np.ndarray) -> np.ndarray:
    """``logistic_loss`` from the margins ``mu`` (S, m) of ``theta`` (S, P), shape (S,).

    ``pen`` (P,) is ``_penalty_diag``: the loss is summed over rows, plus
    ``sum_j pen_j theta_j^2 / 2``.
    """
    return log1p_exp_neg(mu).sum(axis=1) + 0.5 * (pen * theta * theta).sum(axis=1)


def gradient_at(
    p: np.ndarray, Z1: np.ndarray, sign: np.ndarray, theta: np.ndarray, pen: np.ndarray
) -> np.ndarray:
    """``logistic_gradient`` from ``p = sigma(-mu)`` (S, m), shape (S, P)."""
    return -np.matmul((sign * p)[:, None, :], Z1)[:, 0, :] + pen * theta


def hessian_at(p: np.ndarray, Z1: np.ndarray, pen: np.ndarray | None = None) -> np.ndarray:
    """``logistic_hessian`` from ``p = sigma(-mu)`` (S, m), shape (S, P, P).

    ``sum_i p_i (1 - p_i) z_i z_i^T`` over the rows of ``Z1`` (S, m, P) -- any basis of the
    parameters, e.g. the rows' coordinates in a subspace -- plus ``diag(pen)`` when given.
    """
    Zh = Z1 * np.sqrt(p * (1.0 - p))[:, :, None]  # (S, m, P)
    H = np.matmul(Zh.transpose(0, 2, 1), Zh)  # (S, P, P)
    if pen is not None:
        P = H.shape[1]
        H[:, np.arange(P), np.arange(P)] += pen
    return H


def logistic_loss(
    theta: np.ndarray, Z1: np.ndarray, sign: np.ndarray, C: float | None = None
) -> np.ndarray:
    """Penalised log-loss summed over rows (see the module's Conventions), shape (S,).

    theta : (S, D+1); Z1 : (S, m, D+1); sign : (S, m).
    """
    return loss_at(_margins(theta, Z1, sign), theta, _penalty_diag(theta.shape[1], C))


def logistic_gradient(
    theta: np.ndarray, Z1: np.ndarray, sign: np.ndarray, C: float | None = None
) -> np.ndarray:
    """Gradient of ``logistic_loss`` with respect to theta, shape (S, D+1)."""
    p = sigmoid_neg(_margins(theta, Z1, sign))  # (S, m)
    return gradient_at(p, Z1, sign, theta, _penalty_diag(theta.shape[1], C))


def logistic_hessian(
    theta: np.ndarray, Z1: np.ndarray, sign: np.ndarray, C: float | None = None
) -> np.ndarray:
    """Hessian of ``logistic_loss`` with respect to theta, shape (S, D+1, D+1)."""
    p = sigmoid_neg(_margins(theta, Z1, sign))  # (S, m)
    return hessian_at(p, Z1, _penalty_diag(theta.shape[1], C))


# ----------------------------------------------------------------------------- Newton
@dataclass(frozen=True)
class NewtonResult:
    """What ``fit_newton`` returns for S splits.

    theta : (S, D+1) final iterate (intercept last).
    n_iter : (S,) int64, Newton steps taken.
    converged : (S,) bool, gradient criterion met.
    separable : (S,) bool, some iterate had every training margin > 0 (a certificate of
        strict linear separability; with a penalty, or when the cap comes first, a separable
        set can go uncertified).
    """

    theta: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    separable: np.ndarray


def _solve(
    H: np.ndarray, rhs: np.ndarray, n_params: int | None = None, k: np.ndarray | None = None
) -> np.ndarray:
    """Solve ``(H + r I) x = rhs`` for a stack, H (A, n, n) symmetric PSD, rhs (A, n).

    The tiny ridge ``r = 1e-10 trace(H) / n_params + 1e-30`` (``n_params`` default n) is
    always added: one-hot columns plus an intercept, a constant column or m < D + 1 make H
    singular. The ridge changes the step, not the fixed point (the gradient is 0 there
    whatever the ridge), and makes the system positive definite: Cholesky factors
    (``kernels.cholesky``), one split at a time. With ``k`` (A,), split a's system is the
    leading ``k[a] x k[a]`` block of ``H[a]`` and ``x[a, k[a]:] = 0``. A split whose system
    is not numerically positive definite is solved by LU instead, and by least squares when
    LAPACK finds it singular.
    """
    # compiled (numba): imported where it runs, as the other kernels
    from nbvslr.kernels.cholesky import cholesky_solve

    A, n = rhs.shape
    k = np.full(A, n, dtype=np.int64) if k is None else np.asarray(k, dtype=np.int64)
    out = np.empty((A, n))
    H = np.ascontiguousarray(H)
    ok = cholesky_solve(H, k, n_params or n, np.ascontiguousarray(rhs), out)
    for a in np.flatnonzero(~ok):
        q = int(k[a])
        M = H[a, :q, :q] + (1e-10 * np.trace(H[a, :q, :q]) / (n_params or n) + 1e-30) * np.eye(q)
        try:
            out[a, :q] = np.linalg.solve(M, rhs[a, :q])
        except np.linalg.LinAlgError:
            out[a, :q] = np.linalg.lstsq(M, rhs[a, :q], rcond=None)[0]
    return out


def fit_newton(
    Z1: np.ndarray,
    sign: np.ndarray,
    *,
    C: float | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
    stop_when_separable: bool = False,
    theta0: np.ndarray | None = None,
    budget: Budget = DEFAULT_BUDGET,
    rows: np.ndarray | None = None,
    nonzeros: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> NewtonResult:
    """Minimise ``logistic_loss`` for S splits at once by damped Newton.

    Parameters
    ----------
    Z1 : ndarray of shape (S, m, D+1)
        Training rows of each split, trailing column of ones.
    sign : ndarray of shape (S, m)
        ``2 y - 1``; every split must hold both classes.
    C : float or None
        Inverse penalty strength (None: unpenalised).
    tol : float
        Convergence when ``max_j |grad_j| / m <= tol``.
    max_iter : int
        At most this many Newton steps per split.
    stop_when_separable : bool
        Stop a split at the first iterate with every training margin > 0.
    theta0 : ndarray of shape (S, D+1), optional
        Starting point (default 0).
    budget : Budget
        The memory budget; splits are fitted in blocks of ``budget.cache`` bytes.
    rows : ndarray of shape (S, m), bool, optional
        The rows each split fits, its other rows being zero in ``Z1`` (a zero row adds a
        constant to the loss and nothing to its gradient or Hessian); the separability
        certificate reads these rows' margins only. Default: every row.
    nonzeros : (cols, vals, nnz), optional
        Z1's non-zeros as ``kernels.sparse_gram.sparse_rows`` lists them (cols and vals
        (S, m, K) for any K at least the largest count, nnz (S, m)), when the caller has
        them: the same fit, without the passes over the dense stack that find them. Where
        ``reads_stack`` says the fit reads no entry of Z1, Z1 may be a stand-in of its
        shape (``np.broadcast_to(0.0, (S, m, D + 1))``).

    Returns
    -------
    NewtonResult

    Raises
    ------
    DataError
        A training set holds one class only.
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    sign = np.asarray(sign, dtype=np.float64)
    check_both_classes(sign > 0)
    S, m, P = Z1.shape
    live = np.ones((S, m), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    th0 = np.zeros((S, P)) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    # a sparse stack's blocks work on its non-zeros (``kernels.sparse_gram``), a fraction of
    # the dense rows' bytes: SPARSE_BLOCK times as many splits per block. Each split's
    # non-zeros counted once (one pass over the stack): the stack's and each block's share
    nz = np.zeros(S + 1, dtype=np.int64)
    if nonzeros is not None:
        np.cumsum(nonzeros[2].sum(axis=1), out=nz[1:])
    else:
        for a in range(S):
            nz[a + 1] = nz[a] + np.count_nonzero(Z1[a])
    sparse = nz[S] <= SPARSE_DENSITY * Z1.size
    step = budget.step(budget.cache, 8.0 * m * P / (SPARSE_BLOCK if sparse else 1), MIN_BLOCK)
    parts = [
        _fit_block(
            Z1[lo : lo + step],
            sign[lo : lo + step],
            th0[lo : lo + step],
            C,
            tol,
            max_iter,
            stop_when_separable,
            live[lo : lo + step],
            nz[min(S, lo + step)] - nz[lo] <= SPARSE_DENSITY * Z1[lo : lo + step].size,
            None if nonzeros is None else tuple(a[lo : lo + step] for a in nonzeros),
        )
        for lo in range(0, S, step)
    ]
    if not parts:
        parts = [_fit_block(Z1, sign, th0, C, tol, max_iter, stop_when_separable, live,
                            sparse, nonzeros)]
    return NewtonResult(
        *(
            np.concatenate([getattr(r, f) for r in parts])
            for f in ("theta", "n_iter", "converged", "separable")
        )
    )


def reads_stack(m: int, P: int, nnz: np.ndarray, C: float | None = None) -> bool:
    """Whether ``fit_newton`` given the non-zeros of a stack (S, m, P), ``nnz`` (S, m) the
    count of each row's, reads the stack's entries: penalised, in the unpenalised row-space
    form (``DUAL``, ``2 m <= P``), or where a block of splits is not sparse (no row with
    more than ``SPARSE_DENSITY P`` non-zeros: then no block has more than that share)."""
    if C is not None or (DUAL and 2 * m <= P):
        return True
    return bool(nnz.max(initial=0) > SPARSE_DENSITY * P)


def _fit_block(
    Z1: np.ndarray,
    sign: np.ndarray,
    theta0: np.ndarray,
    C: float | None,
    tol: float,
    max_iter: int,
    stop_when_separable: bool,
    live: np.ndarray,
    sparse: bool,
    nonzeros: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> NewtonResult:
    """``fit_newton`` on one block of splits (arguments as there, theta0 given; ``live``
    the rows fitted, (S, m); ``sparse``: at most ``SPARSE_DENSITY`` of Z1's entries are
    non-zero; ``nonzeros`` the block's, if given)."""
    # compiled (numba): imported where it runs, as the other kernels
    from nbvslr.kernels.cholesky import row_dots

    if nonzeros is None or not sparse:  # else only its shape is read (``reads_stack``)
        Z1 = np.ascontiguousarray(Z1)
    S, m, P = Z1.shape
    pen = _penalty_diag(P, C)  # (P,)
    theta_out = np.array(theta0, dtype=np.float64)
    n_iter = np.zeros(S, dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    separable = np.zeros(S, dtype=bool)

    act = np.arange(S)  # global index of each active split
    Z, s, th = Z1, sign, theta_out.copy()  # (A, m, P), (A, m), (A, P)
    # unpenalised, at most half as many rows as parameters: steps in the row space of Z
    # (Z^T = Q R): delta = Q v with (R W R^T + ridge) v = R r, the (P, P) system's
    # restriction to the only directions its solution (and the loss) can move along
    QR = np.linalg.qr(Z.transpose(0, 2, 1)) if DUAL and C is None and 2 * m <= P else None
    # penalised, from 0, with m + 1 well below P: the iterates and the optimum stay in
    # span{(x_i, 0)} + span{e_intercept} (the gradient and H map it into itself), so each
    # step solves the (m + 1)-dimensional restriction (orthonormal basis Q of that span)
    QP = None
    if DUAL and C is not None and 4 * (m + 1) <= 3 * P and not th.any():
        U = Z.transpose(0, 2, 1).copy()  # (A, P, m)
        U[:, -1, :] = 0.0
        e = np.zeros((U.shape[0], P, 1))
        e[:, -1, 0] = 1.0
        Qp = np.linalg.qr(np.concatenate([U, e], axis=2))[0]  # (A, P, m + 1)
        pen_r = np.matmul(Qp.transpose(0, 2, 1) * pen, Qp)  # (A, m + 1, m + 1) = Q^T Pen Q
        QP = (Qp, np.matmul(Z, Qp), pen_r)  # Z Q: (A, m, m + 1)
    # a sparse design (one-hot) outside the row-space forms: the Hessian from each row's
    # non-zeros (``kernels.sparse_gram``), listed once per block
    SP = None
    if QR is None and QP is None and sparse:
        from nbvslr.kernels.sparse_gram import (
            sparse_matvec,
            sparse_rmatvec,
            sparse_rows,
            weighted_gram,
        )

        SP = sparse_rows(Z) if nonzeros is None else nonzeros
    # unpenalised and sparse: a column no training row of a split uses never moves (its
    # gradient and its Hessian row are 0), so each split works on the columns its rows use,
    # packed into the block's first W <= P columns (``_packed``); POS maps them back
    POS, KU, W = None, None, P
    if SP is not None and C is None:
        SP, POS, th = _packed(SP, Z, th)
        KU = (POS < P).sum(axis=1)  # (A,) the columns each split uses
        W = POS.shape[1]
        pen = np.zeros(W)
    if SP is not None:
        Z = Z[:, :0]  # the stack itself is not read again: nothing to copy as splits finish

    def store(sel: np.ndarray) -> None:  # theta_out[act[sel]] = th[sel], mapped back
        if POS is None:
            theta_out[act[sel]] = th[sel]
            return
        full = np.concatenate([theta_out[act[sel]], np.zeros((int(sel.sum()), 1))], axis=1)
        np.put_along_axis(full, POS[sel], th[sel], axis=1)  # the padding goes to column P
        theta_out[act[sel]] = full[:, :P]

    def times_Z(x: np.ndarray) -> np.ndarray:  # (A, P) -> (A, m)
        if SP is not None:
            return sparse_matvec(*SP, x)
        return np.matmul(Z, x[:, :, None])[:, :, 0]

    def Z_times(r: np.ndarray) -> np.ndarray:  # (A, m) -> (A, P)
        if SP is not None:
            return sparse_rmatvec(*SP, r, W)
        return np.matmul(r[:, None, :], Z)[:, 0, :]

    mu = s * times_Z(th)  # (A, m)
    it = 0
    while act.size:
        p = sigmoid_neg(mu)  # (A, m)
        if SP is not None:  # gradient_at from the non-zeros
            g = -Z_times(s * p) + pen * th  # (A, P)
        else:
            g = gradient_at(p, Z, s, th, pen)  # (A, P)
        done = np.zeros(act.size, dtype=bool)
        sep = ((mu > 0) | ~live).all(axis=1)  # (A,) a certificate of strict separability
        separable[act[sep]] = True
        if stop_when_separable:
            done |= sep
        conv = np.abs(g).max(axis=1) <= tol * m  # (A,)
        converged[act[conv & ~done]] = True
        done |= conv
        if it == max_iter:
            done[:] = True
        if done.any():
            store(done)
            n_iter[act[done]] = it
            keep = ~done
            act, Z, s, th, live = act[keep], Z[keep], s[keep], th[keep], live[keep]
            mu, p, g = mu[keep], p[keep], g[keep]
            QR = None if QR is None else (QR[0][keep], QR[1][keep])
            QP = None if QP is None else tuple(a[keep] for a in QP)
            SP = None if SP is None else tuple(a[keep] for a in SP)
            POS, KU = (None, None) if POS is None else (POS[keep], KU[keep])
            if not act.size:
                break
        # Newton direction
        if QR is not None:
            Q, R = QR  # (A, P, m), (A, m, m)
            Rh = R * np.sqrt(p * (1.0 - p))[:, None, :]  # (A, m, m) the rows of R^T, weighted
            Hr = np.matmul(Rh, Rh.transpose(0, 2, 1))  # (A, m, m) = Q^T H Q
            v = _solve(Hr, np.matmul(R, (s * p)[:, :, None])[:, :, 0], P)  # (A, m)
            delta = np.matmul(Q, v[:, :, None])[:, :, 0]  # (A, P)
        elif QP is not None:
            Qp, ZQ, pen_r = QP
            Hr = hessian_at(p, ZQ) + pen_r  # (A, m + 1, m + 1) = Q^T H Q
            v = _solve(Hr, -np.matmul(g[:, None, :], Qp)[:, 0, :], P)  # (A, m + 1)
            delta = np.matmul(Qp, v[:, :, None])[:, :, 0]  # (A, P)
        else:
            if SP is not None:  # hessian_at from the non-zeros
                H = np.empty((act.size, W, W))
                weighted_gram(*SP, p * (1.0 - p), H)  # (A, W, W)
                H[:, np.arange(W), np.arange(W)] += pen
            else:
                H = hessian_at(p, Z, pen)  # (A, P, P)
            delta = _solve(H, -g, P, KU)  # (A, W)
        dmu = s * times_Z(delta)  # (A, m) margins are linear in t
        # guard: a nearly singular H can give a huge step; no margin moves by more than
        # MAX_MARGIN_STEP in one step (the loss saturates long before), and exp stays finite
        big = np.abs(dmu).max(axis=1)  # (A,)
        scale = np.where(big > MAX_MARGIN_STEP, MAX_MARGIN_STEP / np.maximum(big, 1e-300), 1.0)
        delta *= scale[:, None]
        dmu *= scale[:, None]
        # backtracking line search, O(m) per trial
        f0 = loss_at(mu, th, pen)  # (A,)
        slope = row_dots(g, delta)  # (A,) directional derivative, < 0 for descent
        pen_lin = (pen * th * delta).sum(axis=1)  # (A,)
        pen_quad = 0.5 * (pen * delta * delta).sum(axis=1)  # (A,)
        # rounding slack: near the optimum f(t) - f(0) is at the level of rounding errors
        slack = 1e-13 * np.abs(f0) + 1e-300
        t = np.ones(act.size)
        ok = np.zeros(act.size, dtype=bool)
        for _ in range(MAX_HALVINGS):
            trial = ~ok
            tt = t[trial][:, None]
            # the loss at th + t delta: margins are linear in t, the penalty quadratic
            f = (
                loss_at(mu[trial] + tt * dmu[trial], th[trial], pen)
                + tt[:, 0] * pen_lin[trial]
                + tt[:, 0] ** 2 * pen_quad[trial]
            )
            ok[trial] = f <= f0[trial] + ARMIJO * tt[:, 0] * slope[trial] + slack[trial]
            if ok.all():
                break
            t[~ok] *= 0.5
        t = np.where(ok, t, 0.0)  # a split whose line search failed stays put...
        th = th + t[:, None] * delta
        mu = s * times_Z(th)  # (A, m) recomputed, so no rounding drift accumulates
        it += 1
        stalled = ~ok  # ...and stops, not converged
        if stalled.any():
            store(stalled)
            n_iter[act[stalled]] = it
            keep = ~stalled
            act, Z, s, th, mu = act[keep], Z[keep], s[keep], th[keep], mu[keep]
            live = live[keep]
            QR = None if QR is None else (QR[0][keep], QR[1][keep])
            QP = None if QP is None else tuple(a[keep] for a in QP)
            SP = None if SP is None else tuple(a[keep] for a in SP)
            POS, KU = (None, None) if POS is None else (POS[keep], KU[keep])
    return NewtonResult(theta=theta_out, n_iter=n_iter, converged=converged, separable=separable)


def _packed(
    SP: tuple[np.ndarray, np.ndarray, np.ndarray], Z: np.ndarray, th: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    """The columns each split's rows use, packed: ``sparse_rows`` of Z (A, m, P) with the
    column indices renumbered, POS (A, W) the column of Z of each packed column (P for the
    padding of splits that use fewer than W), and th (A, P) packed (A, W).

    A split's used columns keep their order, so each row's packed indices still increase
    (``weighted_gram`` relies on it); the padding columns are 0 in every row.
    """
    # compiled (numba): imported where it runs, as the other kernels
    from nbvslr.kernels.sparse_gram import pack_columns

    cols, vals, nnz = SP
    A, _, P = Z.shape
    packed, pos = pack_columns(np.ascontiguousarray(cols), np.ascontiguousarray(nnz), P)
    th_ext = np.concatenate([th, np.zeros((A, 1))], axis=1)  # (A, P + 1), column P is 0
    return (packed, vals, nnz), pos, np.take_along_axis(th_ext, pos, axis=1)
