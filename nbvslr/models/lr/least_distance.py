"""The least-distance problem ``min ||x||`` subject to ``G x >= 1``, solved with a certificate.

Lawson & Hanson (1974, ch. 23) turn it into a non-negative least squares problem: with
``E = [G^T; 1^T]`` ((k + 1, n)) and ``f = e_{k+1}``, let ``y >= 0`` minimise ``||E y - f||``
and ``r = E y - f``; the problem is feasible exactly when, at the optimum, ``r[k] < 0``; then
``x = -r[:k] / r[k]`` and the multipliers ``lam = y / -r[k]`` satisfy ``x = G^T lam`` by
construction (stationarity). ``x`` is the optimum if and only if, besides ``lam >= 0``,

- primal feasibility: every slack ``s_j = G_j x - 1`` is ``>= -tol_j``;
- complementary slackness: ``|s_j| <= tol_j`` wherever ``y_j > 0``;

with ``tol_j = rtol * sqrt((1 + ||G_j||^2)(1 + ||x||^2))``, the size of the rounding of
``s_j`` times ``rtol``: up to the factor ``|r[k]|`` it is the angle between the column
``E_j`` and the residual, which is what Lawson-Hanson's own stopping rule reads (``NNLS``'s
gradient ``w = E^T (f - E y) = -r[k] (1 - G x)``, so ``w_j <= 0`` is the first condition and
``w_j = 0`` on the support the second). Together they bound the objective's excess by the
duality gap ``sum_j lam_j s_j`` and the distance to the optimum by ``sqrt(2 gap)``. An
infeasible answer is certified by Farkas' alternative: ``y >= 0`` with ``E y = f`` (``G^T y
= 0``, ``sum y = 1``), to rounding (``kkt_violation``); the sign of ``r[k]`` alone does not
decide, since on an infeasible problem it is rounding.

``least_distance`` first asks scipy's ``nnls`` (fast, and what the committed results were
computed with; its answer is kept bit for bit whenever it passes the check), and where its
point fails the check (scipy 1.17's ``nnls`` sometimes stops at a point whose gradient
on the support is far from 0, feasible or with a negative slack; how often:
benchmarks/RESULTS.md)
asks ``nnls`` once more with the constraints (the columns of ``E``) in reverse order, whose
path differs and which mostly ends at the optimum there (its point checked the same way),
and only where that fails too solves the problem again with ``lawson_hanson`` below, written
here from the book's algorithm with its safeguards, and checks that answer too. Why our own
active-set solver rather than another of scipy's: ``lsq_linear(method="bvls")`` is an
active-set method of the same family (its answer would need the same check and a further
fallback), and the interior-point and trust-region solvers (``trust-constr``,
``lsq_linear``'s ``trf``) stop at a tolerance, which is the dependence this module
removes; an active-set method ends on an exact active set, whose point is then the solution
of a linear least-squares problem.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import nnls

#: The KKT check's relative tolerance (``tol_j`` above); rounding in a problem of a few
#: hundred rows is about 1e-13 of the same scale.
KKT_RTOL = 1e-9
#: ``lawson_hanson``'s point is also accepted with a violation up to this many times
#: ``eps cond(E_P)`` (E_P its passive columns, independent by its safeguard): the rounding of
#: a least-squares solve on an ill-conditioned problem (a K-class problem with continuous
#: rows and a small intercept weight). Not for ``nnls``'s point, whose passive columns can
#: be dependent where it stops early (their cond is then near 1 / eps).
ROUNDING = 1e3
#: ``lawson_hanson``'s cap on its inner steps, per column of ``E``.
ITER_PER_COLUMN = 3


def ldp_matrices(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lawson-Hanson's ``E`` ((k + 1, n)) and ``f`` ((k + 1,)) of ``G`` (n, k)."""
    k = G.shape[1]
    E = np.concatenate([G.T, np.ones((1, G.shape[0]))], axis=0)  # (k + 1, n)
    f = np.zeros(k + 1)
    f[k] = 1.0
    return E, f


def kkt_violation(G: np.ndarray, y: np.ndarray,
                  rtol: float = KKT_RTOL) -> tuple[bool, float]:
    """Whether the NNLS point ``y`` (n,) of the problem of ``G`` (n, k) says feasible, and
    the largest violation of the optimality conditions (module docstring) in units of
    ``tol_j / rtol``: the point is certified when it is ``<= rtol``. Compiled
    (``kernels.direction.kkt_check``).

    Infeasible: the residual ``r = E y - f`` is 0 to rounding (``||r||_inf <= rtol sum_j
    y_j ||E_j||``, floored at ``rtol``), Farkas' certificate (``G^T y = 0``, ``sum y = 1``;
    a feasible ``x`` would need ``||x|| >= 1 / ||G^T y||``, beyond 1e9 at that size). A
    point with ``r[k] >= 0`` and a larger residual is not optimal (at the optimum of a
    feasible problem ``r[k] = -||r||^2``): ``inf``, as for a negative ``y_j``.
    """
    # compiled (numba): imported where it runs, as the other kernels
    from nbvslr.kernels.direction import kkt_check

    feasible, bad = kkt_check(np.ascontiguousarray(G, dtype=np.float64),
                              np.ascontiguousarray(y, dtype=np.float64), float(rtol))
    return bool(feasible), float(bad)


def rounding(E: np.ndarray, y: np.ndarray) -> float:
    """``ROUNDING eps cond(E_P)``: the violation a least-squares solve on the passive columns
    ``E_P`` (``y > 0``) of ``E`` (p, n) can leave by rounding alone."""
    on = y > 0
    if not on.any():
        return 0.0
    return float(ROUNDING * np.finfo(float).eps * np.linalg.cond(E[:, on]))


def lawson_hanson(E: np.ndarray, f: np.ndarray, *, rtol: float = KKT_RTOL,
                  max_iter: int | None = None) -> np.ndarray:
    """``y >= 0`` minimising ``||E y - f||`` (E (p, n), f (p,)), (n,): Lawson & Hanson's
    NNLS (1974, ch. 23, algorithm 23.10). A column enters the passive set while its
    gradient ``w_j`` exceeds ``rtol ||E_j|| ||E y - f||`` (its angle to the residual); a
    column whose least-squares coefficient is not positive the moment it enters (it lies,
    to rounding, in the span of the passive ones) is refused, the book's safeguard against
    cycling. ``max_iter``: cap on the least-squares solves (``ITER_PER_COLUMN`` per column).
    """
    p, n = E.shape
    cap = ITER_PER_COLUMN * n if max_iter is None else max_iter
    cnorm = np.sqrt((E * E).sum(axis=0))  # (n,)
    y = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    refused = np.zeros(n, dtype=bool)  # refused since the last accepted column
    steps = 0
    while True:
        res = f - E @ y
        if np.abs(res).max() <= rtol * max(1.0, float(y @ cnorm)):
            return y  # f in the cone of E's columns, to rounding (an infeasible problem)
        w = E.T @ res  # (n,) minus the gradient of ||E y - f||^2 / 2
        open_ = ~passive & ~refused & (w > rtol * cnorm * np.linalg.norm(res))
        if not open_.any():
            return y
        j = int(np.argmax(np.where(open_, w, -np.inf)))
        passive[j] = True
        first = True
        while True:
            steps += 1
            if steps > cap:
                raise ArithmeticError(
                    f"the least-distance solver took more than {cap} steps (max_iter)")
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(E[:, passive], f, rcond=None)[0]
            if first and z[j] <= 0.0:  # j adds nothing the passive columns span
                passive[j] = False
                refused[j] = True
                break
            first = False
            if (z[passive] > 0.0).all():
                y = z
                refused[:] = False
                break
            # step back to the boundary: the largest move from y toward z keeping y >= 0
            neg = passive & (z <= 0.0)
            ratio = y[neg] / (y[neg] - z[neg])
            alpha = ratio.min()
            y = y + alpha * (z - y)
            y[np.flatnonzero(neg)[ratio == alpha]] = 0.0  # the column that reached 0
            passive &= y > 0.0
            y[~passive] = 0.0


def least_distance(G: np.ndarray, *, rtol: float = KKT_RTOL,
                   max_iter: int | None = None) -> tuple[np.ndarray, bool, float]:
    """The NNLS point ``y`` (n,) of the least-distance problem of ``G`` (n, k), certified
    optimal (module docstring), whether the problem is feasible, and the point's
    ``kkt_violation``: scipy's ``nnls`` point if it passes the check at ``rtol``, else its
    point on the constraints in reverse order if that one passes, else ``lawson_hanson``'s
    (``rtol``, ``max_iter`` its knobs; its point passes at ``rtol`` or within ``rounding``).
    Raises ArithmeticError if none passes (never seen)."""
    E, f = ldp_matrices(G)
    y, _ = nnls(E, f, maxiter=50 * E.shape[1])
    feasible, bad = kkt_violation(G, y, rtol)
    if bad <= rtol:
        return y, feasible, bad
    # nnls again with the constraints in reverse order: its path differs, and it usually
    # ends at the optimum where the first stopped early (checked the same way)
    y = nnls(np.ascontiguousarray(E[:, ::-1]), f, maxiter=50 * E.shape[1])[0][::-1]
    feasible, bad = kkt_violation(G, y, rtol)
    if bad <= rtol:
        return np.ascontiguousarray(y), feasible, bad
    # lawson_hanson's entry rule at rtol / 4 leaves the slacks well inside the check's rtol
    y = lawson_hanson(E, f, rtol=rtol / 4, max_iter=max_iter)
    feasible, bad = kkt_violation(G, y, rtol)
    if not bad <= max(rtol, rounding(E, y)):
        raise ArithmeticError(
            f"the least-distance problem ({G.shape[0]} rows, {G.shape[1]} columns) has no "
            f"certified solution: KKT violation {bad:.3g} > {rtol:.3g}")
    return y, feasible, bad
