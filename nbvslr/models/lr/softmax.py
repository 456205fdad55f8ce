"""Multinomial (softmax) logistic regression for S training sets at once, by Newton-CG.

Conventions
-----------
* ``Z1`` : ndarray of shape (S, m, P), the training rows of each split with a trailing
  column of ones (``P = D + 1``); ``y`` : ndarray of shape (S, m), labels ``0 .. K - 1``.
* ``theta`` : ndarray of shape (S, K, P), one weight vector per class, intercept LAST. The
  scores are ``s_ik = Z1_i @ theta_k`` and ``p(k | x_i) = exp(s_ik) / sum_l exp(s_il)``.
* Unpenalised (``C = None``): the K - 1 weight vectors of classes ``0 .. K - 2`` are free
  and the last class is the reference (``theta_{K-1} = 0``), as Mitchell's chapter writes it:
  ``(K - 1) P`` parameters. The loss, SUMMED over the m rows, is

      L(theta) = sum_i [log sum_k exp(s_ik) - s_{i y_i}].

* With ``C``: all K weight vectors are free and penalised alike (the symmetric form that
  scikit-learn and glmnet use, so that the fit does not depend on a reference class), the
  intercepts unpenalised: ``L(theta) + sum_k ||w_k||^2 / (2 C)``, whose minimiser is
  scikit-learn's ``LogisticRegression(C=C)`` (multinomial), which minimises C times it.
* gradient ``sum_i (p_i - e_{y_i}) Z1_i^T`` (+ ``w / C``), shape (S, F, P) over the F free
  classes; the Hessian acts on a direction V (S, F, P) as
  ``sum_i [p_i * a_i - p_i (p_i . a_i)] Z1_i^T`` with ``a_i = V Z1_i`` (F,) (+ ``V_w / C``):
  one product costs O(m F P), and the (F P)^2 Hessian is never formed.

Newton-CG: each step solves ``H d = -g`` by conjugate gradients (at most ``CG_MAX``
iterations, stopped at a residual of ``min(1/2, sqrt(|g|)) |g|``: the forcing term of an
inexact Newton method with a superlinear rate; with a penalty of ``C <= 1 / PC_MIN_INV_C``,
preconditioned by ``PC_SCALE Z^T Z + I / C`` on each class's block, made once per fit,
which about halves the Hessian products at C = 1 on optdigits-10), then backtracks along d
(Armijo; a predicted decrease below the loss's rounding, ``ROUNDING (1 + |L|)``, takes the
full step).
A split stops when ``max_j |g_j| / m <= tol`` (converged), after ``max_iter`` steps, when the line
search cannot decrease the loss, or (with ``stop_when_separable``) at the first iterate
that classifies every training row correctly, by more than the scoring's tie band
(``s_{i y_i} > s_ik + tau`` for every i and k != y_i, ``tau = TIE_RTOL ||W||_1`` as in
``evaluate_multi``; a margin that only rounding makes positive certifies nothing, and would
start the separable-set samplers on a wall): the certificate that the training set is
separable, so the unpenalised likelihood has no maximum. Why not a dense Newton solve: with
optdigits' 10 classes F P = 9 x 63 = 567 parameters, so forming the Hessian costs m (F P)^2
and solving it (F P)^3 per split and step against a few dozen products of O(m F P)
(benchmarks/softmax_solvers.py measures both).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nbvslr.models.evaluate import TIE_RTOL

#: Armijo constant and step halvings of the line search.
ARMIJO = 1e-4
MAX_HALVINGS = 40
#: A predicted decrease below ROUNDING * (1 + |loss|) takes the full step unchecked.
ROUNDING = 1e-12
#: Conjugate-gradient iterations per Newton step, at most.
CG_MAX = 250
#: The stack of the CG products is cut to the unfinished splits below this share of it.
SHRINK = 0.5
#: The preconditioner ``PC_SCALE Z^T Z + I / C`` (``preconditioner``), used with a penalty
#: of at least ``PC_MIN_INV_C`` (``1 / C``): fewer Hessian products by about half at C = 1
#: on optdigits-10, more at C = 1e4, where the fit's probabilities are far from 1/2;
#: PC_RIDGE keeps it invertible (pixels never on).
PC_SCALE = 0.1
PC_MIN_INV_C = 0.01
PC_RIDGE = 1e-8


@dataclass(frozen=True)
class SoftmaxResult:
    """The fits of S training sets.

    Attributes
    ----------
    theta : ndarray of shape (S, K, P)
        One weight vector per class (the reference class's is 0 when unpenalised).
    n_iter : ndarray of shape (S,), int64
        Newton steps taken.
    converged : ndarray of shape (S,), bool
        ``max |grad| / m <= tol`` was met.
    separable : ndarray of shape (S,), bool
        An iterate classified every training row correctly (checked when unpenalised).
    """

    theta: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    separable: np.ndarray


def _full(W: np.ndarray, K: int) -> np.ndarray:
    """The K weight vectors (S, K, P) from the F free ones (S, F, P): a zero reference row
    appended when F = K - 1."""
    if W.shape[1] == K:
        return W
    return np.concatenate([W, np.zeros((W.shape[0], 1, W.shape[2]))], axis=1)


def _scores(Z1: np.ndarray, W: np.ndarray, K: int, off: np.ndarray | None = None) -> np.ndarray:
    """``s`` (S, m, K) of the free weights W (S, F, P), plus ``off`` (S, m, K) when given
    (-inf on barred classes)."""
    s = np.matmul(Z1, W.transpose(0, 2, 1))  # (S, m, F)
    if W.shape[1] < K:
        s = np.concatenate([s, np.zeros(s.shape[:2] + (1,))], axis=2)
    if off is not None:
        s += off
    return s


def sum_last(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=-1)`` for a short last axis (the K classes), the same numbers in the
    same order as numpy's own pairwise sum (``0 + ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
    (r6 + r7)) + x_8 + ...``, the r_j the sums of every eighth entry), made with whole
    (S, m) slices instead of numpy's loop over rows, which costs more than the sums at
    K = 10 (``tests/unit/test_multiclass_models.py`` compares them bit for bit)."""
    n = x.shape[-1]
    if n > 128:  # numpy halves longer rows first; not a number of classes met here
        return x.sum(axis=-1)
    if n < 8:
        res = x[..., 0] + 0.0
        for i in range(1, n):
            res += x[..., i]
        return res
    r = [x[..., j].copy() for j in range(8)]
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += x[..., i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for k in range(i, n):
        res += x[..., k]
    return res + 0.0


def max_last(x: np.ndarray) -> np.ndarray:
    """``x.max(axis=-1)`` from whole slices (the largest entry is the same in any order)."""
    res = x[..., 0].copy()
    for i in range(1, x.shape[-1]):
        np.maximum(res, x[..., i], out=res)
    return res


def _own(s: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Each row's score of its own class (S, m): ``sum_k s_ik Y_ik``, or, where some
    scores are -inf (classes a row is barred from, ``fit_softmax``'s ``allowed``), the
    one entry Y marks (-inf times 0 would be nan)."""
    if np.isinf(s).any():
        return sum_last(np.where(Y > 0, s, 0.0))
    return sum_last(s * Y)


def _loss_probs(s: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The summed loss (S,) and the probabilities p (S, m, K) of scores s (S, m, K)."""
    top = max_last(s)[:, :, None]
    e = np.exp(s - top)  # exp(-inf) = 0: a barred class has probability 0
    tot = sum_last(e)[:, :, None]
    lse = np.log(tot) + top  # (S, m, 1)
    loss = (lse[:, :, 0] - _own(s, Y)).sum(axis=1)  # (S,)
    return loss, e / tot


def _penalty(W: np.ndarray, inv_c: float) -> np.ndarray:
    """``sum_k ||w_k||^2 / (2 C)`` per split (S,), intercepts excluded."""
    if not inv_c:
        return np.zeros(W.shape[0])
    w = W[:, :, :-1]
    return 0.5 * inv_c * (w * w).sum(axis=(1, 2))


def _masked(V: np.ndarray, inv_c: float) -> np.ndarray:
    """``V / C`` with the intercept column 0 (the penalty's gradient or Hessian product)."""
    out = V * inv_c
    out[:, :, -1] = 0.0
    return out


def _hvp(Z1: np.ndarray, p: np.ndarray, V: np.ndarray, inv_c: float) -> np.ndarray:
    """The Hessian (at probabilities p (S, m, F)) times V (S, F, P)."""
    a = np.matmul(Z1, V.transpose(0, 2, 1))  # (S, m, F)
    pa = p * a
    u = pa - p * sum_last(pa)[:, :, None]  # (S, m, F)
    hv = np.matmul(u.transpose(0, 2, 1), Z1)  # (S, F, P)
    if inv_c:
        hv += _masked(V, inv_c)
    return hv


def _dot(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``sum(A * B)`` per split (S,) of two (S, F, P) stacks."""
    return np.einsum("sfp,sfp->s", A, B)


def preconditioner(Z1: np.ndarray, inv_c: float) -> np.ndarray:
    """The inverse (S, P, P) of ``PC_SCALE Z1^T Z1 + (1 / C) I`` (the intercept's diagonal
    unpenalised), applied to each class's block of a direction: a bound on the Hessian's
    blocks, ``p (1 - p) <= 1/4``, scaled down to where the probabilities of a fit near its
    optimum put them. Made once per fit: O(m P^2 + P^3) a split, a few Hessian products."""
    S, m, P = Z1.shape
    G = np.matmul(Z1.transpose(0, 2, 1), Z1)
    G *= PC_SCALE
    reg = np.full(P, inv_c)
    reg[-1] = 0.0
    G[:, np.arange(P), np.arange(P)] += reg + PC_RIDGE * (1.0 + np.einsum("spp->sp", G))
    return np.linalg.inv(G)


def _cg(Z1: np.ndarray, p: np.ndarray, g: np.ndarray, inv_c: float,
        Minv: np.ndarray | None = None) -> np.ndarray:
    """An approximate Newton direction d (S, F, P): ``H d = -g`` by conjugate gradients,
    preconditioned by ``Minv`` (S, P, P) when given, each split stopped at its own residual
    ``min(1/2, sqrt(|g|)) |g|``. The products are made on a stack of splits that is cut
    down to the unfinished ones when fewer than ``SHRINK`` of it are left (copying the rows
    of the unfinished splits at every iteration cost more than the products it saved)."""
    S = g.shape[0]
    d = np.zeros_like(g)
    r = -g
    z = r if Minv is None else np.matmul(r, Minv)
    q = z.copy()
    rz = _dot(r, z)  # (S,)
    gnorm = np.sqrt(_dot(g, g))
    goal = np.minimum(0.5, np.sqrt(gnorm)) * gnorm
    act = np.flatnonzero(gnorm > 0)
    cur = np.arange(S)  # the splits whose rows Zc, pc hold
    Zc, pc = Z1, p
    for _ in range(CG_MAX):
        if not act.size:
            break
        if act.size < SHRINK * cur.size:
            cur, Zc, pc = act, Z1[act], p[act]
        hq = _hvp(Zc, pc, q if cur.size == S else q[cur], inv_c)
        if act.size < cur.size:
            hq = hq[np.searchsorted(cur, act)]
        qa = q[act]
        qhq = _dot(qa, hq)
        # a direction of no curvature (a singular Hessian, e.g. a shift of every
        # intercept) ends that split's iterations
        ok = qhq > 1e-300
        if not ok.all():
            act, hq, qhq, qa = act[ok], hq[ok], qhq[ok], qa[ok]
        alpha = (rz[act] / qhq)[:, None, None]
        d[act] += alpha * qa
        ra = r[act] - alpha * hq
        r[act] = ra
        going = np.sqrt(_dot(ra, ra)) > goal[act]
        act, ra, qa = act[going], ra[going], qa[going]
        za = ra if Minv is None else np.matmul(ra, Minv[act])
        rz_new = _dot(ra, za)
        q[act] = za + (rz_new / rz[act])[:, None, None] * qa
        rz[act] = rz_new
    return d


def fit_softmax(
    Z1: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    C: float | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
    stop_when_separable: bool = False,
    symmetric: bool = False,
    allowed: np.ndarray | None = None,
    theta0: np.ndarray | None = None,
) -> SoftmaxResult:
    """Fit softmax LR to S training sets (see the module docstring).

    Parameters
    ----------
    Z1 : ndarray of shape (S, m, P)
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``.
    n_classes : int
        K.
    C : float or None
        The penalty (None: unpenalised, with the last class as reference).
    tol, max_iter, stop_when_separable
        The stopping rules.
    symmetric : bool
        Unpenalised with all K weight vectors free instead of a reference class: Newton-CG
        from 0 never leaves the span of the gradients (``sum_i (e_k - e_l) (x) z_i``), so it
        ends at the one minimiser in that span, the least-norm one, which sums to 0 over
        the classes and names no class.
    allowed : ndarray of shape (S, m, K), bool, optional
        The classes each row's softmax runs over (its own class always among them): the
        others' scores are -inf, probability 0. The likelihood of a quasi-separated set's
        overlap part (``separation_multi``).
    theta0 : ndarray of shape (S, K, P), optional
        The start (0 by default): a fit stopped after some steps and started again from its
        iterate takes the same steps as one never stopped (nothing else is carried over).

    Returns
    -------
    SoftmaxResult
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    S, m, P = Z1.shape
    K = int(n_classes)
    y = np.asarray(y, dtype=np.int64)
    Y = np.zeros((S, m, K))
    np.put_along_axis(Y, y[:, :, None], 1.0, axis=2)  # (S, m, K) one-hot labels
    F = K if C is not None or symmetric else K - 1
    inv_c = 0.0 if C is None else 1.0 / C
    # -inf on the barred classes (S, m, K), added to every score made
    off = None if allowed is None else np.where(np.asarray(allowed, dtype=bool), 0.0, -np.inf)
    W = np.zeros((S, F, P)) if theta0 is None else np.array(theta0[:, :F], dtype=np.float64)
    n_iter = np.zeros(S, dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    separable = np.zeros(S, dtype=bool)
    act = np.arange(S)
    Minv = preconditioner(Z1, inv_c) if inv_c >= PC_MIN_INV_C else None
    # the scores, probabilities and loss of each split's accepted iterate, kept from the
    # line search that tried it (the same numbers a new evaluation gives), and which
    # splits have them (a split that took its step unchecked has not)
    kept: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    for _ in range(max_iter + 1):
        if not act.size:
            break
        if act.size == S:
            Za, Ya, Wa, Ma, Oa = Z1, Y, W.copy(), Minv, off
        else:
            Za, Ya, Wa = Z1[act], Y[act], W[act]
            Ma = None if Minv is None else Minv[act]
            Oa = None if off is None else off[act]
        if kept is None:
            s = _scores(Za, Wa, K, Oa)  # (a, m, K)
            loss, p = _loss_probs(s, Ya)
            loss += _penalty(Wa, inv_c)
        else:
            s, p, loss, have = kept
            if not have.all():
                miss = ~have
                s[miss] = _scores(Za[miss], Wa[miss], K, None if Oa is None else Oa[miss])
                loss[miss], p[miss] = _loss_probs(s[miss], Ya[miss])
                loss[miss] += _penalty(Wa[miss], inv_c)
        g = np.matmul((p - Ya)[:, :, :F].transpose(0, 2, 1), Za)  # (a, F, P)
        if inv_c:
            g += _masked(Wa, inv_c)
        done = np.abs(g).max(axis=(1, 2)) / m <= tol
        converged[act[done]] = True
        if stop_when_separable:
            own = _own(s, Ya)  # (a, m)
            other = max_last(np.where(Ya > 0, -np.inf, s))
            tau = TIE_RTOL * np.abs(Wa).sum(axis=(1, 2))  # (a,)
            sep = (own > other + tau[:, None]).all(axis=1) & ~done
            separable[act[sep]] = True
            done |= sep
        done |= n_iter[act] >= max_iter
        keep = ~done
        if not keep.all():
            act, Za, Ya, Wa = act[keep], Za[keep], Ya[keep], Wa[keep]
            s, p, g, loss = s[keep], p[keep], g[keep], loss[keep]
            Ma = None if Ma is None else Ma[keep]
            Oa = None if Oa is None else Oa[keep]
        if not act.size:
            break
        d = _cg(Za, p[:, :, :F], g, inv_c, Ma)
        slope = _dot(g, d)  # (a,) < 0 for a descent direction
        step = np.ones(act.size)
        # a decrease below the loss's rounding cannot be seen: near the optimum the full
        # Newton step is taken (the region of quadratic convergence)
        moved = -slope <= ROUNDING * (1.0 + np.abs(loss))
        Wa = np.where(moved[:, None, None], Wa + d, Wa)
        have = np.zeros(act.size, dtype=bool)
        for _ in range(MAX_HALVINGS):
            if moved.all():
                break
            trial = Wa + step[:, None, None] * d
            s_try = _scores(Za, trial, K, Oa)
            new, p_try = _loss_probs(s_try, Ya)
            new += _penalty(trial, inv_c)
            ok = ~moved & (new <= loss + ARMIJO * step * slope)
            Wa = np.where(ok[:, None, None], trial, Wa)
            s[ok], p[ok], loss[ok] = s_try[ok], p_try[ok], new[ok]
            have |= ok
            moved |= ok
            step = np.where(moved, step, 0.5 * step)
        W[act] = Wa
        n_iter[act] += 1
        kept = (s[moved], p[moved], loss[moved], have[moved])
        act = act[moved]  # a split whose loss cannot decrease stops here
    return SoftmaxResult(_full(W, K), n_iter, converged, separable)
