"""Which (row, class) pairs a K-class linear rule can separate: overlap, complete or quasi.

The K-class counterpart of ``separation`` (two classes). A rule is K weight vectors
``W = (w_0 .. w_{K-1})`` over rows ``z_i`` (trailing 1, the intercept), taken to sum to 0
over the classes (``sum_zero``: adding one vector to every ``w_k`` changes nothing). Each
training row i and each class ``k != y_i`` is a *pair* with the margin
``a_ik . W = (w_{y_i} - w_k) . z_i``. The *recession cone* of the multinomial likelihood is
``{D : a_ik . D >= 0 for every pair}``: along such a D no row's probability of its own
class ever falls. The pairs that some D of the cone makes strictly positive form one
largest set Q (the sum of two cone directions is one); the others, R, are the *overlap
pairs*. As for two classes (Albert & Anderson 1984):

- ``overlap`` (Q empty): the maximum-likelihood fit exists;
- ``complete`` (Q = every pair): the set is separable (the paper's separable-set rule);
- ``quasi`` (otherwise): no maximum-likelihood fit and no separating rule. A row may have
  some of its pairs in Q and others not: the classes it can never be taken for, and those it
  still can.

How it is decided (``detect_multi``), without reading where a solver stopped:

0. ``FIRST_STEPS`` Newton-CG steps on every split (``softmax.fit_softmax``, the fit the
   ``lr`` entry makes anyway): a split whose iterate classifies every training row correctly
   is ``complete`` (its certificate); one whose fit converged with every pair's probability
   ``p_ik >= CERTIFICATE_FLOOR`` is ``overlap`` (step 2's certificate, with every pair
   live).
1. ``pure_pairs`` peels the pairs that one column separates (on a one-hot design: a level
   seen in some classes only separates its rows from the classes it was never seen with).
   A column j gives directions ``c (x) e_j`` (c in R^K); the live pairs with ``z_ij != 0``
   ask ``c_{y_i} >= c_k`` (``z_ij > 0``) or ``<=`` (``z_ij < 0``): a graph on the K classes.
   Such a c is strict exactly on the edges between different strongly connected components
   of the graph (c constant on each, rising along their order), so those pairs are in Q.
   Repeated on the pairs left until no column peels one; a direction of the remaining
   pairs plus large multiples of the earlier ones is a direction of all pairs.
2. The likelihood of the live pairs alone (each row's softmax over its own class and the
   classes of its live pairs) is fitted by Newton-CG with every class free
   (``fit_softmax(symmetric=True, allowed=...)``, from 0). Its minimum exists when no live
   pair can be separated, and it is then the limit of the overlap part. Certificate (Gordan's
   alternative, as for two classes): at a converged fit the gradient is ``-sum_R p_ik a_ik``,
   so with every ``p_ik >= CERTIFICATE_FLOOR`` a cone direction D has ``sum_R a_ik . D <=
   tol m ||D||_1 / CERTIFICATE_FLOOR``, far below the margin of any direction that
   separates a pair of a design of small integers. Q is then the peeled pairs.
3. Otherwise the linear program of Konis (2007) on the live pairs decides
   (``separated_pairs_lp``): ``max sum t, a_ik . phi >= t_ik, 0 <= t <= 1`` in the
   sum-zero coordinates ``phi`` (``sum_zero``), ``t = 1`` exactly on Q.

``max_margin_direction_multi`` gives the direction a quasi set's penalised fit runs off in
as the penalty vanishes (Rosset, Zhu & Hastie 2004, who cover the multinomial margin
``min (w_y - w_k) . x``): the least ``sum_k ||w_k||^2`` (intercepts free) with every pair of
Q at margin >= 1 and every pair of R at 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from nbvslr.models.lr.least_distance import ldp_matrices, least_distance
from nbvslr.models.lr.separation import (
    CERTIFICATE_FLOOR,
    COMPLETE,
    FIRST_STEPS,
    LP,
    OVERLAP,
    PEEL,
    QUASI,
    RANK_RTOL,
)
from nbvslr.models.lr.softmax import fit_softmax
from nbvslr.models.lr.sum_zero import basis, to_weights

#: The intercepts' share of the norm in ``max_margin_direction_multi`` when the overlap
#: pairs leave some intercept-only direction free (their classes fall into groups that no
#: overlap pair links): the least norm of the intercepts among the max-margin directions,
#: as this weight goes to 0; a knob of the rounding, not of the answer (the tests change it).
INTERCEPT_WEIGHT = 1e-9


@dataclass(frozen=True)
class DetectedMulti:
    """What ``detect_multi`` finds for S training sets of K classes.

    code : (S,) int8, ``OVERLAP``, ``COMPLETE`` or ``QUASI`` (``separation``'s codes).
    separated : (S, m, K) bool, the pairs in Q (never a row's own class).
    theta : (S, K, P) the fit: of an overlap set, Newton-CG's (the reference-class form, or
        the symmetric one when step 2 decided); of a quasi set, the symmetric fit of its
        overlap pairs (sum-zero); of a complete set, a rule that classifies every training
        row correctly (Newton-CG's certified iterate where it has one: the sampler's start).
    direction : (S, K, P) ``max_margin_direction_multi`` of a quasi set (0 for the others).
    n_iter : (S,) int64 Newton-CG steps of the fit in ``theta``.
    converged : (S,) bool, its gradient criterion met.
    how : (S,) int8, which step decided: ``PEEL`` (steps 0-2) or ``LP``.
    """

    code: np.ndarray
    separated: np.ndarray
    theta: np.ndarray
    direction: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    how: np.ndarray


def own_class(y: np.ndarray, n_classes: int) -> np.ndarray:
    """The one-hot labels (S, m, K) bool of labels y (S, m)."""
    return np.arange(int(n_classes)) == np.asarray(y, dtype=np.int64)[..., None]


# --------------------------------------------------------------------------- step 1
def pure_pairs(Z1: np.ndarray, y: np.ndarray, n_classes: int,
               extra: np.ndarray | None = None) -> np.ndarray:
    """The pairs that single columns peel off (step 1 of the module docstring), (S, m, K)
    bool.

    Z1 : (S, m, P) rows with the intercept column; y : (S, m) labels ``0 .. K - 1``;
    extra : (P, L) more directions to try as columns (``design.level_directions``).
    """
    S, m, _ = Z1.shape
    K = int(n_classes)
    scores = Z1 if extra is None else np.concatenate([Z1, Z1 @ extra], axis=2)
    W = scores.shape[2]
    a, i, j = np.nonzero(scores)  # the non-zeros, as (split, row, column)
    pos = scores[a, i, j] > 0
    yi = np.asarray(y, dtype=np.int64)[a, i]
    live = ~own_class(y, K)  # (S, m, K) the pairs not yet peeled
    eye = np.eye(K, dtype=bool)
    steps = max(1, int(np.ceil(np.log2(K))))
    while True:
        # per split and column, the graph of the live pairs: an edge lo -> hi asks
        # c_lo <= c_hi (lo = k, hi = y_i where z_ij > 0; the other way round where < 0)
        adj = np.zeros((S, W, K, K), dtype=bool)
        ends = []
        for k in range(K):
            on = live[a, i, k]
            lo = np.where(pos, k, yi)[on]
            hi = np.where(pos, yi, k)[on]
            adj[a[on], j[on], lo, hi] = True
            ends.append((on, lo, hi))
        reach = (adj | eye).astype(np.uint8)  # (S, W, K, K): paths of length <= 1
        for _ in range(steps):  # paths of length <= 2^steps >= K: the transitive closure
            reach = (np.matmul(reach, reach) > 0).astype(np.uint8)
        newly = np.zeros((S, m, K), dtype=bool)
        for k, (on, lo, hi) in enumerate(ends):
            # strict unless hi reaches lo back (the pair's two classes in one component)
            cut = reach[a[on], j[on], hi, lo] == 0
            newly[a[on][cut], i[on][cut], k] = True
        if not newly.any():
            return ~live & ~own_class(y, K)
        live &= ~newly


# --------------------------------------------------------------------------- step 2
def overlap_fit(Z1: np.ndarray, y: np.ndarray, n_classes: int, separated: np.ndarray, *,
                tol: float, max_iter: int, stop_when_separable: bool = False):
    """The symmetric Newton-CG fit of each split's live pairs (every class free, from 0;
    each row's softmax over its own class and its live pairs' classes), and whether it
    certifies that no live pair can be separated (step 2), ``(SoftmaxResult, (S,) bool)``.

    Z1 : (S, m, P); y : (S, m); separated : (S, m, K) bool, the pairs taken out.
    """
    K = int(n_classes)
    allowed = ~separated  # (S, m, K), the own class always allowed
    res = fit_softmax(Z1, y, K, tol=tol, max_iter=max_iter, symmetric=True,
                      allowed=allowed, stop_when_separable=stop_when_separable)
    return res, certified(Z1, y, K, res.theta, res.converged, allowed) & ~res.separable


def pair_probabilities(Z1: np.ndarray, theta: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """The probabilities (S, m, K) of rules theta (S, K, P), each row's softmax over its
    ``allowed`` classes (S, m, K) (0 on the others)."""
    s = np.matmul(Z1, theta.transpose(0, 2, 1))  # (S, m, K)
    s = np.where(allowed, s, -np.inf)
    e = np.exp(s - s.max(axis=2, keepdims=True))  # the largest allowed score is finite
    return e / e.sum(axis=2, keepdims=True)


def certified(Z1: np.ndarray, y: np.ndarray, n_classes: int, theta: np.ndarray,
              converged: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Step 2's certificate, (S,) bool: the fit theta (S, K, P) converged and every live
    pair (``allowed`` and not the row's own class) has ``p_ik >= CERTIFICATE_FLOOR``."""
    p = pair_probabilities(Z1, theta, allowed)
    pair = allowed & ~own_class(y, n_classes)
    return converged & ((p >= CERTIFICATE_FLOOR) | ~pair).all(axis=(1, 2))


# --------------------------------------------------------------------------- step 3
def pair_rows(Z1: np.ndarray, y: np.ndarray, n_classes: int, pairs: np.ndarray) -> np.ndarray:
    """The margins ``a_ik`` of one split's chosen pairs in the sum-zero coordinates,
    (n, (K - 1) P): ``(h_{y_i} - h_k) (x) z_i`` (``sum_zero.basis``), so that ``a_ik . phi``
    is the margin of the rule ``sum_zero.to_weights(phi)``.

    Z1 : (m, P); y : (m,); pairs : (m, K) bool (row-major order of the pairs).
    """
    H = basis(n_classes)  # (K, K - 1)
    i, k = np.nonzero(pairs)
    diff = H[np.asarray(y, dtype=np.int64)[i]] - H[k]  # (n, K - 1)
    return (diff[:, :, None] * Z1[i][:, None, :]).reshape(i.size, -1)


def _distinct(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (k, Q) of ``rows`` (n, Q) and each row's index among them (n,)."""
    if not rows.shape[0]:
        return rows, np.zeros(0, dtype=np.int64)
    uniq, back = np.unique(rows, axis=0, return_inverse=True)
    return uniq, back.reshape(-1)


def separated_pairs_lp(Z1: np.ndarray, y: np.ndarray, n_classes: int,
                       live: np.ndarray) -> np.ndarray:
    """Step 3 for one split: which of its ``live`` pairs (m, K) a cone direction separates,
    (m, K) bool, by the LP ``max sum t, a_ik . phi >= t_ik, 0 <= t <= 1`` over the live
    pairs (repeated pairs one constraint, coordinates no pair uses left out).

    Z1 : (m, P); y : (m,). The pairs taken out before are not constraints: a direction of
    the live ones plus a large multiple of theirs is a direction of all pairs.
    """
    out = np.zeros(live.shape, dtype=bool)
    A = pair_rows(Z1, y, n_classes, live)  # (n, (K - 1) P)
    if not A.shape[0]:
        return out
    cols = np.flatnonzero((A != 0.0).any(axis=0))
    rows, back = _distinct(A[:, cols])
    k, P = rows.shape
    cost = np.concatenate([np.zeros(P), -np.ones(k)])
    a_ub = sp.hstack([sp.csr_matrix(-rows), sp.identity(k, format="csr")], format="csr")
    bounds = [(None, None)] * P + [(0.0, 1.0)] * k
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(k), bounds=bounds, method="highs")
    if res.status != 0:  # bounded and feasible (phi = 0, t = 0): only a solver failure
        raise ArithmeticError(f"the K-class separation LP failed: {res.message}")
    i, c = np.nonzero(live)
    hit = (res.x[P:] > 0.5)[back]
    out[i[hit], c[hit]] = True
    return out


# --------------------------------------------------------------------------- the direction
def max_margin_direction_multi(
    Z1: np.ndarray, y: np.ndarray, n_classes: int, separated: np.ndarray,
    rank_rtol: float | None = None, intercept_weight: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The direction in which a quasi set's penalised fit runs off as the penalty vanishes,
    (S, K, P), summing to 0 over the classes: the least ``sum_k ||w_k||^2`` (intercepts
    unpenalised) with margin ``a_ik . D >= 1`` on the pairs of Q and ``= 0`` on the others,
    and whether each problem was feasible (S,) bool.

    Z1 : (S, m, P); y : (S, m); separated : (S, m, K) bool, Q of each split (not empty,
    not every pair). In the sum-zero coordinates phi (``sum_zero``), which keep norms,
    this is ``separation.max_margin_direction``'s problem with the pair rows for the signed
    rows and K - 1 unpenalised intercept coordinates, solved the same way: phi = N u over an
    orthonormal basis N of the null space of the overlap pairs' rows (eigenvalues of
    ``A_R^T A_R`` at most ``rank_rtol`` of the largest are 0), ``||phi_w||^2 = u^T M u``,
    ``M = L L^T``, then the least-distance problem by the non-negative least squares of
    Lawson & Hanson (1974). M is singular when an intercept-only direction keeps every
    overlap pair's margin at 0 (classes no overlap pair links); the intercepts then count
    with weight ``intercept_weight`` in the norm. None: the module's ``RANK_RTOL`` and
    ``INTERCEPT_WEIGHT``.
    """
    rank_rtol = RANK_RTOL if rank_rtol is None else rank_rtol
    intercept_weight = INTERCEPT_WEIGHT if intercept_weight is None else intercept_weight
    S, m, P = Z1.shape
    K = int(n_classes)
    out = np.zeros((S, K, P))
    feasible = np.ones(S, dtype=bool)
    pairs = ~own_class(y, K)
    icpt = np.zeros((K - 1) * P, dtype=bool)
    icpt[P - 1::P] = True  # the intercept coordinate of each of the K - 1 blocks
    for a in range(S):
        q = separated[a]
        AR = _distinct(pair_rows(Z1[a], y[a], K, pairs[a] & ~q))[0]  # (r, (K - 1) P)
        AQ = _distinct(pair_rows(Z1[a], y[a], K, q))[0]  # (n, (K - 1) P)
        ev, V = np.linalg.eigh(AR.T @ AR)  # ascending
        N = V[:, ev <= ev[-1] * rank_rtol]  # (Q, k)
        M = N[~icpt].T @ N[~icpt]
        mev = np.linalg.eigvalsh(M)
        if mev[0] <= mev[-1] * rank_rtol:  # an intercept-only direction is free
            M = M + intercept_weight * (N[icpt].T @ N[icpt])
        L = np.linalg.cholesky(M)  # (k, k)
        G = np.linalg.solve(L, (AQ @ N).T).T  # (n, k) = A_Q N L^-T
        k = G.shape[1]
        E, f = ldp_matrices(G)
        z, ok, _ = least_distance(G)  # certified optimal (models/lr/least_distance.py)
        r = E @ z - f
        if not ok:  # infeasible: some pair of Q cannot be separated
            feasible[a] = False
            continue
        phi = N @ np.linalg.solve(L.T, -r[:k] / r[k])
        if mev[0] <= mev[-1] * rank_rtol:
            phi = _polished(phi, AQ, AR, ~icpt)
        out[a] = to_weights(phi, K)
        feasible[a] = (AQ @ phi).min() >= 0.5  # >= 1 but for rounding
    return out, feasible


def _polished(phi: np.ndarray, AQ: np.ndarray, AR: np.ndarray,
              penalised: np.ndarray) -> np.ndarray:
    """The least-norm direction of the active set of ``phi`` ((Q,), a solution with the
    intercepts weighted by ``INTERCEPT_WEIGHT``, whose small weight costs digits), solved
    exactly: ``A_E phi = (1, 0)`` on the pairs of Q at margin about 1 and the overlap pairs,
    the least ``||phi_w||^2`` and, among those, the least ``||phi||`` (``phi_p + N t`` with
    ``phi_p`` the least-norm solution, N a basis of the null space of ``A_E`` and t the
    least-norm least squares of ``(phi_p + N t)_w = 0``). Kept only when it is feasible and
    no longer (else ``phi`` as given)."""
    act = AQ @ phi <= 1.0 + 1e-3
    A = np.concatenate([AQ[act], AR])  # (e, Q)
    b = np.r_[np.ones(act.sum()), np.zeros(AR.shape[0])]
    base = np.linalg.lstsq(A, b, rcond=None)[0]
    _, sv, Vt = np.linalg.svd(A)
    N = Vt[(sv > sv[0] * RANK_RTOL).sum():].T  # (Q, k) the null space of A_E
    t = np.linalg.lstsq(N[penalised], -base[penalised], rcond=None)[0]
    new = base + N @ t
    ok = ((AQ @ new).min() >= 1.0 - 1e-9 and np.abs(AR @ new).max(initial=0.0) <= 1e-9
          and (new[penalised] ** 2).sum() <= (phi[penalised] ** 2).sum() * (1.0 + 1e-6))
    return new if ok else phi


# --------------------------------------------------------------------------- detection
def detect_multi(
    Z1: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    extra: np.ndarray | None = None,
) -> DetectedMulti:
    """Overlap, complete or quasi for S training sets of K classes (the module docstring's
    steps).

    Z1 : (S, m, P) training rows, trailing column of ones; y : (S, m) labels ``0 .. K - 1``.
    ``tol`` and ``max_iter`` are Newton-CG's (``softmax.fit_softmax``); ``extra`` (P, L) as
    for ``pure_pairs``.
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    S, m, P = Z1.shape
    K = int(n_classes)
    stop = dict(tol=tol, max_iter=max_iter)
    code = np.full(S, OVERLAP, dtype=np.int8)
    theta = np.zeros((S, K, P))
    direction = np.zeros((S, K, P))
    n_iter = np.zeros(S, dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    how = np.full(S, PEEL, dtype=np.int8)
    own = own_class(y, K)
    everything = np.ones((S, m, K), dtype=bool)
    # step 0: a few steps of the entry's own fit settle most splits
    first = fit_softmax(Z1, y, K, stop_when_separable=True, tol=tol,
                        max_iter=min(max_iter, FIRST_STEPS))
    sure = first.separable | certified(Z1, y, K, first.theta, first.converged, everything)
    code[first.separable] = COMPLETE
    theta[sure], n_iter[sure], converged[sure] = (first.theta[sure], first.n_iter[sure],
                                                  first.converged[sure])
    ready = first.separable.copy()  # complete with Newton-CG's certified iterate
    separated = np.zeros((S, m, K), dtype=bool)
    rest = np.flatnonzero(~sure)
    if rest.size:
        separated[rest] = pure_pairs(Z1[rest], y[rest], K, extra)
    n_pairs = m * (K - 1)
    every = (separated.sum(axis=(1, 2)) == n_pairs) & ~sure
    code[every] = COMPLETE
    todo = np.flatnonzero(~sure & ~every)
    left = np.empty(0, dtype=np.int64)
    if todo.size:
        res, ok = overlap_fit(Z1[todo], y[todo], K, separated[todo], stop_when_separable=True,
                              **stop)
        code[todo[res.separable]] = COMPLETE  # the live pairs separable too
        peeled = separated[todo].any(axis=(1, 2))
        code[todo[ok]] = np.where(peeled[ok], QUASI, OVERLAP)
        theta[todo], n_iter[todo], converged[todo] = res.theta, res.n_iter, res.converged
        left = todo[~ok & ~res.separable]
    for a in left:  # step 3: the LP on the pairs the peel left
        how[a] = LP
        live = ~separated[a] & ~own[a]
        separated[a] |= separated_pairs_lp(Z1[a], y[a], K, live)
        n = separated[a].sum()
        code[a] = COMPLETE if n == n_pairs else QUASI if n else OVERLAP
    again = left[code[left] != COMPLETE]  # the fit of the overlap pairs the LP left
    if again.size:
        res, _ = overlap_fit(Z1[again], y[again], K, separated[again], **stop)
        theta[again], n_iter[again], converged[again] = res.theta, res.n_iter, res.converged
    quasi = np.flatnonzero(code == QUASI)
    if quasi.size:
        direction[quasi], feasible = max_margin_direction_multi(Z1[quasi], y[quasi], K,
                                                                separated[quasi])
        # pairs the LP took within its feasibility tolerance (1e-7) that no exact direction
        # separates (continuous rows nearly, not exactly, separable): only the peel's pairs,
        # separated by construction, count
        doubt = quasi[~feasible]
        if doubt.size:
            separated[doubt] = pure_pairs(Z1[doubt], y[doubt], K, extra)
            code[doubt] = np.where(separated[doubt].any(axis=(1, 2)), QUASI, OVERLAP)
            res, _ = overlap_fit(Z1[doubt], y[doubt], K, separated[doubt], **stop)
            theta[doubt], n_iter[doubt], converged[doubt] = (res.theta, res.n_iter,
                                                             res.converged)
            still = doubt[code[doubt] == QUASI]
            direction[still], _ = max_margin_direction_multi(Z1[still], y[still], K,
                                                             separated[still])
    complete = code == COMPLETE
    separated[complete] = ~own[complete]
    separated[code == OVERLAP] = False
    direction[code != QUASI] = 0.0
    # a complete set: Newton-CG's certified iterate on all pairs (the sampler's start, as
    # the separable-set rule has always started from), else the LP's separating direction
    done = np.flatnonzero(complete & ~ready)
    if done.size:  # step 0's fit, on from where it stopped: the steps of one never stopped
        res = fit_softmax(Z1[done], y[done], K, stop_when_separable=True, tol=tol,
                          max_iter=max_iter - min(max_iter, FIRST_STEPS),
                          theta0=first.theta[done])
        theta[done], converged[done] = res.theta, res.converged
        n_iter[done] = first.n_iter[done] + res.n_iter
        for b in np.flatnonzero(~res.separable):
            theta[done[b]] = separating_rule(Z1[done[b]], y[done[b]], K)
    return DetectedMulti(code, separated, theta, direction, n_iter, converged, how)


def separating_rule(Z1: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """A rule (K, P) that classifies every row of one separable training set (Z1 (m, P),
    y (m,)) with every margin >= 1: a feasible point of ``a_ik . phi >= 1`` by HiGHS."""
    K = int(n_classes)
    A = pair_rows(Z1, y, K, ~own_class(y, K))  # (n, (K - 1) P)
    res = linprog(np.zeros(A.shape[1]), A_ub=-A, b_ub=-np.ones(A.shape[0]),
                  bounds=[(None, None)] * A.shape[1], method="highs")
    if res.status != 0:
        raise ArithmeticError(f"no separating rule found: {res.message}")
    return to_weights(res.x, K)
