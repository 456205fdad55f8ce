"""Learning curves beyond the grid: parametric curve families fitted to the mean errors, the
limit each implies, the error predicted at any m, and where two fitted curves are predicted
to cross past the last m, each with an interval that counts both the noise of the means and
the choice of the family.

The families (``m`` the training-set size, ``e(m)`` the mean test error; LCDB, Mohr et al.,
names them the same way):

=======  ===================================  ==========  ==========================
family   e(m)                                 limit       nonlinear parameters
=======  ===================================  ==========  ==========================
pow3     ``a + b m^(-c)``                     ``a``       ``c > 0``
exp3     ``a + b exp(-c m)``                  ``a``       ``c > 0``
mmf4     ``(a b + c m^d) / (b + m^d)``        ``c``       ``s = b^(1/d) > 0, d > 0``
wbl4     ``a - b exp(-c m^d)``                ``a``       ``s = c^(-1/d) > 0, d > 0``
=======  ===================================  ==========  ==========================

The 4-parameter families are searched over their midpoint ``s`` (in rows) and ``d``, far
less entangled than ``b`` or ``c`` and ``d``. Every family is linear in two of its
parameters once the others are fixed (pow3: ``a, b`` given ``c``; mmf4: ``a`` and ``c``
given ``s, d``), so a fit is *variable projection*: for
each value of the nonlinear parameters on a log-spaced grid the linear ones are the exact
weighted least-squares solution; every curve of a batch is scored on one shared grid (a
matrix product), then each curve's grid is refined around its own best point. No starting
values, no local optimiser that can wander off.

Weights: each mean is weighted by ``1 / sem^2`` (its standard error over the splits, floored
at ``SEM_FLOOR`` so a size where every split had the same error does not take all the
weight).

The floor (``floor_of``): a model's limit is not below its error when trained on all the
task's rows and scored on them (run.json's ``asymptotic_error``), less ``FLOOR_Z`` of that
error's binomial standard errors. Fits are constrained to limits in [floor, upper] (upper
1); where the unconstrained limit falls below the floor the fit is the least-squares curve
with its limit on the floor.

The Brier score's curves are extrapolated the same way (``EXTRAPOLATED``), the floor its
all-rows Brier score (run.json's ``asymptotic_brier``) less ``FLOOR_Z`` of its own standard
errors over the rows (``floor_of_brier``), upper 2 for K > 2 classes (``upper_of``), and
only for a model with a value on every split of every size (``check_complete``); the
log-loss and the training error are not (``NOT_EXTRAPOLATED``).

Choosing families by how they extrapolate (``choose``): each family is fitted to the first
``FIT_SHARE`` of the sizes and scored by the mean absolute error of its predictions at the
remaining, larger sizes. The best is the point estimate; every family within
``ACCEPT_RATIO`` times the best score plus ``ACCEPT_SEM`` held-out standard errors is
*acceptable*, and the intervals are the envelope of the acceptable families' intervals.

Uncertainty (``extrapolate``): the mean curves of a pair are drawn again ``n_boot`` times,
jointly for the two models (the pair's covariance at each m from its paired standard error,
so the pairing of the splits is kept; or, given the per-split errors, by resampling the
splits within each m); every drawn curve is refitted with every acceptable family. Past the
grid each drawn curve is moved by a shape error, ``SHAPE_K * score * xi * log(m / last m) /
log(last m / last fitted m)`` (``score`` the best family's held-out error, ``xi`` standard
normal per draw): the misfit of a family that predicted the held-out third within ``score``
grows with the distance in log m. A moved curve stays between the floor and its own value at
the last m (a learning curve does not climb back past the grid). Per family the percentile
interval of the limit (moved as far as the task's rows), of the prediction at each m and of
the crossover (over every pair of acceptable families); the envelope over the families is
the interval reported.

Reach (``REACH``): past ``REACH`` times the largest measured m, predictions are not
validated (docs/extrapolation.md) and are withheld unless asked for (``beyond=True``); the
crossover is looked for up to the reach (or the task's rows, if fewer).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nbvslr.analysis.metrics import LABELS, metric_of
from nbvslr.analysis.stats import task_paired, task_rng, value_range
from nbvslr.errors import ConfigError, ResultsError

#: The metrics whose curves are extrapolated: the test error, and the test Brier score with
#: the floor of its all-rows value (``floor_of_brier``; its coverage measured in
#: docs/extrapolation.md, "The Brier score").
EXTRAPOLATED = ("error", "brier")

#: Why the curves of the other metrics are not extrapolated (argued, with the committed
#: metrics run's curves, in docs/extrapolation.md, "Other metrics").
NOT_EXTRAPOLATED: dict[str, str] = {
    "log_loss": ("the fitted families fall to a limit, and log-loss curves need not fall "
                 "(naive Bayes' rises with m as its probabilities grow overconfident)"),
    "train_error": ("the fitted families fall to a limit, and the training error rises "
                    "with m (towards the test error's limit, from below)"),
}


def check_extrapolable(metric: str) -> None:
    """``ConfigError`` in one line when the curves of ``metric`` are not extrapolated
    (``NOT_EXTRAPOLATED``)."""
    if metric in NOT_EXTRAPOLATED:
        raise ConfigError(f"no extrapolation of the {LABELS[metric]}: "
                          f"{NOT_EXTRAPOLATED[metric]}; extrapolate the test error or the "
                          "Brier score instead (docs/extrapolation.md, \"Other metrics\")")


#: The share of the sizes (the smaller ones) that a family is fitted to when it is scored by
#: how well it predicts the rest.
FIT_SHARE = 2 / 3
#: The smallest standard error a mean is weighted with (errors are in [0, 1]).
SEM_FLOOR = 1e-3
#: Fewest sizes to choose a family and extrapolate: the three-parameter families fitted to the
#: first four (``FIT_SHARE``) and scored on the fifth.
MIN_SIZES = 5
#: Draws of the mean curves for the intervals.
DEFAULT_N_BOOT = 200
#: A family is acceptable when its held-out score is at most ``ACCEPT_RATIO`` times the
#: best family's plus ``ACCEPT_SEM`` times the mean standard error of the held-out means
#: (chosen on the paper's grids cut short: docs/extrapolation.md).
ACCEPT_RATIO = 3.0
ACCEPT_SEM = 2.0
#: Predictions reach this many times the largest measured m (chosen on the paper's grids
#: cut short: docs/extrapolation.md); past it they are "beyond reach".
REACH = 4.0
#: The floor of a limit: the all-rows error less this many of its binomial standard errors.
FLOOR_Z = 2.0
#: The shape error's scale: a drawn curve is moved by ``SHAPE_K * score * xi *
#: log(m / last m) / log(last m / last fitted m)`` past the grid (``score`` the best family's
#: held-out error, ``xi`` standard normal per draw; chosen on the paper's grids cut short:
#: docs/extrapolation.md).
SHAPE_K = 3.0

_GRID = 128  # shared grid points of a family with one nonlinear parameter
_GRID_2D = 24  # per axis, with two
_LOCAL = 9  # each curve's own grid, per axis, one parameter
_LOCAL_2D = 5  # per axis, with two
_ROUNDS = 6  # each curve's zoom rounds around its best point, two parameters
_ROUNDS_1D = 3  # one
_SHRINK = 0.5  # each round's span, of the one before
_BLOCK = 512  # curves scored at once on the shared grid (bounds the (B, G) arrays)
_HORIZON_POINTS = 400  # sizes the crossover is looked for at, log-spaced


@dataclass(frozen=True)
class _Family:
    name: str
    n_params: int
    #: log10 ranges of the nonlinear parameters
    ranges: tuple[tuple[float, float], ...]
    #: (m (M,), nonlinear params (..., k)) -> the two basis columns, each (..., M): the
    #: first, whose coefficient is the curve's limit (None: the constant 1), and the second,
    #: which tends to 0; e = linear[0] * first + linear[1] * second
    columns: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray | None, np.ndarray]]
    formula: str

    def basis(self, m: np.ndarray, q: np.ndarray) -> np.ndarray:
        """The two columns stacked: (..., M, 2)."""
        first, second = self.columns(m, q)
        if first is None:
            first = np.ones_like(second)
        return np.stack([first, second], axis=-1)


# Each family's columns at m (M,) for nonlinear parameters q (..., k).
def _pow3(m, q):
    return None, np.exp(-q[..., :1] * np.log(m))


def _exp3(m, q):
    return None, np.exp(-q[..., :1] * m)


def _mmf4(m, q):
    # (a b + c m^d) / (b + m^d) with b = s^d: c / (1 + (s/m)^d) + a / (1 + (m/s)^d), linear
    # (c, a); the midpoint s (in rows) and d are far less entangled than b and d
    r = np.exp(q[..., 1:2] * (np.log(m) - np.log(q[..., :1])))  # (..., M) (m/s)^d
    return r / (1.0 + r), 1.0 / (1.0 + r)


def _wbl4(m, q):
    # a - b exp(-c m^d) with c = s^-d: a - b exp(-(m/s)^d), the second coefficient -b
    return None, np.exp(-np.exp(q[..., 1:2] * (np.log(m) - np.log(q[..., :1]))))


FAMILIES: dict[str, _Family] = {
    f.name: f for f in (
        _Family("pow3", 3, ((-2.0, 1.5),), _pow3, "a + b·m^(−c)"),
        _Family("exp3", 3, ((-5.0, 0.5),), _exp3, "a + b·exp(−c·m)"),
        _Family("mmf4", 4, ((-1.0, 6.0), (-1.5, 0.7)), _mmf4, "(a·b + c·m^d) / (b + m^d)"),
        _Family("wbl4", 4, ((-1.0, 6.0), (-1.5, 0.7)), _wbl4, "a − b·exp(−c·m^d)"),
    )
}


@dataclass(frozen=True)
class CurveFit:
    """One family fitted to one or many mean curves (leading axis B).

    Attributes
    ----------
    family : str
    linear : ndarray of shape (B, 2)
        The linear parameters of each curve, the limit first.
    nonlinear : ndarray of shape (B, k)
        The nonlinear parameters of each curve.
    """

    family: str
    linear: np.ndarray
    nonlinear: np.ndarray

    def predict(self, m: Sequence[float] | np.ndarray) -> np.ndarray:
        """The fitted errors at ``m``: shape (B, len(m))."""
        m = np.asarray(m, dtype=float)
        basis = FAMILIES[self.family].basis(m, self.nonlinear)  # (B, len(m), 2)
        return np.einsum("bmi,bi->bm", basis, self.linear)

    @property
    def asymptote(self) -> np.ndarray:
        """The error each fitted curve tends to as m grows: shape (B,)."""
        return self.linear[:, 0]


def floor_of_brier(all_rows: Mapping[str, float | None] | None) -> float:
    """The lowest limit of a model's Brier-score curve: its Brier score when trained and
    scored on all the rows, less ``FLOOR_Z`` of that score's standard errors over the rows
    (run.json's ``asymptotic_brier``: ``{"value", "sem"}``); 0 where the all-rows rule has
    no probabilities (``value`` None).

    The noise is the Brier score's own: the standard deviation of the rows' squared
    distances over sqrt(N), not the binomial ``sqrt(e (1 - e) / N)`` of a 0-1 error, which
    would overstate it (a row's Brier term is spread far less than a 0/1 mistake of the
    same mean)."""
    if not all_rows:
        return 0.0
    value, sem = all_rows.get("value"), all_rows.get("sem")
    if value is None or not math.isfinite(float(value)):
        return 0.0
    sem = float(sem) if sem is not None and math.isfinite(float(sem)) else 0.0
    return max(0.0, float(value) - FLOOR_Z * sem)


def upper_of(metric: str, run_info: Mapping) -> float:
    """The largest value of ``metric`` on a task: 2 for the Brier score of K > 2 classes
    (the squared distance to the one-hot label), else 1."""
    return value_range({**run_info, "metric": metric})[1]


def floor_of(all_rows: float | None, rows: int | None) -> float:
    """The lowest limit a model's curve may have: its error when trained and scored on all
    ``rows`` rows, less ``FLOOR_Z`` binomial standard errors; 0 when unknown."""
    if all_rows is None or not rows or not math.isfinite(all_rows):
        return 0.0
    e = min(max(float(all_rows), 0.0), 1.0)
    return max(0.0, e - FLOOR_Z * math.sqrt(e * (1.0 - e) / rows))


def _weights(sem: np.ndarray) -> np.ndarray:
    sem = np.where(np.isfinite(sem), sem, SEM_FLOOR)
    return 1.0 / np.maximum(sem, SEM_FLOOR)  # (M,) square roots of the WLS weights


def _unit_grid(k: int, n: int) -> np.ndarray:
    """Every point of an n^k grid on [-1, 1]^k: shape (n^k, k)."""
    axes = np.meshgrid(*[np.linspace(-1.0, 1.0, n)] * k, indexing="ij")
    return np.stack([g.ravel() for g in axes], axis=1)


def _solve(uy, vy, uu, uv, vv, yy, floor, tiny, upper=1.0):
    """The weighted least-squares linear parameters with the limit (the first) in
    [floor, upper], from the inner products of the two weighted basis columns u, v and the
    weighted curve y; ``uy, vy`` (B, G), ``uu, uv, vv`` broadcast to them, ``yy`` (B, 1).

    Returns the limit, the second coefficient and the SSE, each (B, G); inf SSE where the
    basis is near singular (two columns almost proportional, or one almost 0: below
    ``tiny``) or the limit would exceed ``upper``.
    """
    det = uu * vv - uv**2
    ok = (uu > tiny) & (vv > tiny)
    ok &= det > 1e-10 * np.where(ok, uu * vv, 1.0)
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    vv_inv = np.where(ok, 1.0 / np.where(ok, vv, 1.0), 0.0)
    a = (vv * inv) * uy
    a -= (uv * inv) * vy
    b = (uu * inv) * vy
    b -= (uv * inv) * uy
    sse = a * uy
    sse += b * vy
    np.subtract(yy, sse, out=sse)
    low = a < floor  # the limit on the floor, the other coefficient refitted
    if low.any():
        r = vy - floor * uv
        b_low = r * vv_inv
        sse_low = (yy - 2.0 * floor * uy + floor**2 * uu) - r * b_low
        np.copyto(a, floor, where=low)
        np.copyto(b, b_low, where=low)
        np.copyto(sse, sse_low, where=low)
    sse[~(ok & (a <= upper))] = np.inf
    return a, b, sse


def _products(f: _Family, m: np.ndarray, q: np.ndarray, w: np.ndarray, Yw: np.ndarray
              ) -> tuple[np.ndarray, ...]:
    """The inner products of the weighted columns at each curve's own grid points q
    (B, L, k) with each other and with the weighted curves Yw (B, M): uy, vy, uu, uv, vv,
    each (B, L)."""
    first, second = f.columns(m, q)
    V = second * w  # (B, L, M)
    vy = np.einsum("blm,bm->bl", V, Yw)
    vv = np.einsum("blm,blm->bl", V, V)
    if first is None:  # the constant column: u = w
        uy = (Yw @ w)[:, None]
        uu = np.array(w @ w)
        uv = V @ w
    else:
        U = first * w
        uy = np.einsum("blm,bm->bl", U, Yw)
        uu = np.einsum("blm,blm->bl", U, U)
        uv = np.einsum("blm,blm->bl", U, V)
    return uy, vy, uu, uv, vv


def _fit_curves(f: _Family, m: np.ndarray, Y: np.ndarray, w: np.ndarray, floor: float,
                upper: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Variable projection for curves Y (B, M): the shared grid, then each curve's own
    zoom. Returns linear (B, 2) and nonlinear (B, k) parameters, NaN where no fit."""
    B, k = Y.shape[0], len(f.ranges)
    lo = np.array([r[0] for r in f.ranges])
    hi = np.array([r[1] for r in f.ranges])
    n = _GRID if k == 1 else _GRID_2D
    logq = lo + (_unit_grid(k, n) + 1.0) / 2.0 * (hi - lo)  # (G, k)
    first, second = f.columns(m, 10.0**logq)
    V = second * w  # (G, M)
    U = np.broadcast_to(w, V.shape) if first is None else first * w
    uu, uv, vv = (U * U).sum(-1), (U * V).sum(-1), (V * V).sum(-1)  # (G,)
    Yw = Y * w  # (B, M)
    yy = (Yw * Yw).sum(-1)[:, None]  # (B, 1)
    tiny = 1e-12 * float(w @ w)  # a column this small is no column
    best = np.empty((B, k))
    found = np.empty(B, dtype=bool)
    for s in range(0, B, _BLOCK):
        blk = slice(s, s + _BLOCK)
        uy = (Yw[blk] @ w)[:, None] if first is None else Yw[blk] @ U.T
        _, _, sse = _solve(uy, Yw[blk] @ V.T, uu, uv, vv, yy[blk], floor, tiny, upper)
        g = np.argmin(sse, axis=1)
        best[blk] = logq[g]
        found[blk] = np.isfinite(sse[np.arange(g.size), g])
    # each curve's own grid around its best point, zooming in; each round also tries the
    # minimum of the quadratic through the grid's centre and its neighbours (a Newton step,
    # kept only where it lowers the SSE): the valleys of mmf4 and wbl4 are narrow
    span = (hi - lo) / (n - 1)  # (k,) one shared-grid step
    n_loc = _LOCAL if k == 1 else _LOCAL_2D
    offsets = _unit_grid(k, n_loc)  # (L, k) in [-1, 1]
    centre, near = _stencil(k, n_loc)
    rows = np.arange(B)
    lin = np.full((B, 2), np.nan)
    for _ in range(_ROUNDS if k > 1 else _ROUNDS_1D):
        lq = np.clip(best[:, None, :] + offsets[None] * span, lo - 1.0, hi + 1.0)  # (B,L,k)
        a, b, sse = _solve(*_products(f, m, 10.0**lq, w, Yw), yy, floor, tiny, upper)
        h = span * 2.0 / (n_loc - 1)  # (k,) the local grid's step
        step = _newton_step(sse, centre, near, k)  # (B, k) in steps h
        nq = np.clip(best + step * h, lo - 1.0, hi + 1.0)[:, None, :]  # (B, 1, k)
        na, nb, nsse = _solve(*_products(f, m, 10.0**nq, w, Yw), yy, floor, tiny, upper)
        lq = np.concatenate([lq, nq], axis=1)
        a, b, sse = (np.concatenate(p, axis=1) for p in ((a, na), (b, nb), (sse, nsse)))
        g = np.argmin(sse, axis=1)
        ok = np.isfinite(sse[rows, g])
        best = np.where(ok[:, None], lq[rows, g], best)
        lin = np.where(ok[:, None], np.stack([a[rows, g], b[rows, g]], axis=1), lin)
        found &= ok
        span = span * _SHRINK
    lin[~found] = np.nan
    return lin, np.where(found[:, None], 10.0**best, np.nan)


def _stencil(k: int, n: int) -> tuple[int, np.ndarray]:
    """Indices into ``_unit_grid(k, n)`` (n odd) of its centre and of the centre's
    neighbours at offsets -1, 0, +1 steps on each axis: shape (3,) * k."""
    c = (n - 1) // 2
    idx = np.arange(n**k).reshape((n,) * k)
    return int(idx[(c,) * k]), idx[(slice(c - 1, c + 2),) * k]


def _newton_step(sse: np.ndarray, centre: int, near: np.ndarray, k: int) -> np.ndarray:
    """The minimum of the quadratic through the SSE (B, L) at the 3^k points ``near`` around
    ``centre``, in grid steps from the centre, at most 2 steps on each axis; 0 where the
    quadratic has no minimum or a point is infeasible: (B, k)."""
    with np.errstate(all="ignore"):  # inf where a point is infeasible: no step there
        return _newton(sse[:, near.ravel()].reshape((sse.shape[0],) + (3,) * k), k)


def _newton(f: np.ndarray, k: int) -> np.ndarray:
    if k == 1:
        g = (f[:, 2] - f[:, 0]) / 2.0
        hess = f[:, 2] - 2.0 * f[:, 1] + f[:, 0]
        x = np.where(hess > 0, -g / hess, 0.0)[:, None]
    else:
        g1 = (f[:, 2, 1] - f[:, 0, 1]) / 2.0
        g2 = (f[:, 1, 2] - f[:, 1, 0]) / 2.0
        h11 = f[:, 2, 1] - 2.0 * f[:, 1, 1] + f[:, 0, 1]
        h22 = f[:, 1, 2] - 2.0 * f[:, 1, 1] + f[:, 1, 0]
        h12 = (f[:, 2, 2] - f[:, 2, 0] - f[:, 0, 2] + f[:, 0, 0]) / 4.0
        det = h11 * h22 - h12**2
        pd = (h11 > 0) & (det > 0)
        x = np.stack([np.where(pd, -(h22 * g1 - h12 * g2) / det, 0.0),
                      np.where(pd, -(h11 * g2 - h12 * g1) / det, 0.0)], axis=1)
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0), -2.0, 2.0)


def fit(family: str, m: Sequence[float], y: np.ndarray, sem: Sequence[float],
        floor: float = 0.0, upper: float = 1.0) -> CurveFit:
    """Fit ``family`` to mean curves.

    Parameters
    ----------
    family : str
        A key of ``FAMILIES``.
    m : sequence of float, shape (M,)
        The sizes, increasing.
    y : ndarray of shape (M,) or (B, M)
        One mean error curve, or B of them (drawn again), all at the sizes ``m``.
    sem : sequence of float, shape (M,)
        The standard error of each mean (the weights; the same for every curve).
    floor : float
        The lowest limit allowed (``floor_of``).
    upper : float
        The highest: the metric's largest value (1 for an error rate or a two-class Brier
        score, 2 for a K-class Brier score).

    Returns
    -------
    CurveFit
        B = 1 for a single curve. The fit is constrained to curves whose limit lies in
        [floor, upper]; a curve whose means lie outside [0, upper], or that no grid point
        can fit that way, gets NaN parameters.
    """
    f = FAMILIES[family]
    m = np.asarray(m, dtype=float)
    Y = np.atleast_2d(np.asarray(y, dtype=float))  # (B, M)
    if m.size < f.n_params + 1:
        raise ValueError(f"{family} needs at least {f.n_params + 1} sizes, got {m.size}")
    w = _weights(np.asarray(sem, dtype=float))
    rates = np.all((Y >= 0.0) & (Y <= upper), axis=1)  # (B,)
    lin = np.full((Y.shape[0], 2), np.nan)
    q = np.full((Y.shape[0], len(f.ranges)), np.nan)
    if rates.any():
        lin[rates], q[rates] = _fit_curves(f, m, Y[rates], w, float(floor), float(upper))
    return CurveFit(family, lin, q)


@dataclass(frozen=True)
class Choice:
    """How each family predicted the larger sizes from the smaller ones, and the pick.

    Attributes
    ----------
    family : str
        The family whose predictions of the held-out sizes were closest.
    scores : dict
        family -> mean absolute error of its predictions at the held-out sizes.
    n_fit : int
        How many of the smallest sizes the families were fitted to when scored.
    acceptable : tuple of str
        The families whose scores are within ``ACCEPT_RATIO`` times the best plus
        ``ACCEPT_SEM`` held-out standard errors, the best first.
    """

    family: str
    scores: dict[str, float]
    n_fit: int
    acceptable: tuple[str, ...] = ()


def holdout_scores(m: Sequence[float], y: Sequence[float], sem: Sequence[float], n_fit: int,
                   families: Sequence[str] = tuple(FAMILIES), floor: float = 0.0,
                   upper: float = 1.0) -> dict[str, float]:
    """Each family fitted to the first ``n_fit`` sizes of one curve, scored by the mean
    absolute error of its predictions at the other, larger sizes. Families with more
    parameters than ``n_fit - 1``, or with no fit whose limit lies in [floor, upper], are
    left out."""
    m = np.asarray(m, dtype=float)
    y = np.asarray(y, dtype=float)
    sem = np.asarray(sem, dtype=float)
    if not 1 <= n_fit < m.size:
        raise ValueError(f"n_fit must leave sizes on both sides: {n_fit} of {m.size}")
    scores = {}
    for name in families:
        if n_fit < FAMILIES[name].n_params + 1:
            continue
        cf = fit(name, m[:n_fit], y[:n_fit], sem[:n_fit], floor, upper)
        score = float(np.mean(np.abs(cf.predict(m[n_fit:])[0] - y[n_fit:])))
        if math.isfinite(score):  # NaN: the family has no fit with a limit in the box
            scores[name] = score
    return scores


def acceptable(scores: Mapping[str, float], sem_heldout: float,
               ratio: float | None = None, n_sem: float | None = None) -> tuple[str, ...]:
    """The families whose held-out score is at most ``ratio`` times the best plus ``n_sem``
    standard errors of the held-out means (``ACCEPT_RATIO`` and ``ACCEPT_SEM`` by
    default), best first."""
    if not scores:
        return ()
    ratio = ACCEPT_RATIO if ratio is None else ratio
    n_sem = ACCEPT_SEM if n_sem is None else n_sem
    best = min(scores.values())
    limit = ratio * best + n_sem * sem_heldout
    return tuple(sorted((f for f, s in scores.items() if s <= limit), key=scores.get))


def choose(m: Sequence[float], y: Sequence[float], sem: Sequence[float],
           families: Sequence[str] = tuple(FAMILIES), floor: float = 0.0, *,
           ratio: float | None = None, n_sem: float | None = None,
           upper: float = 1.0) -> Choice:
    """The family that best predicts the larger sizes of one curve from its smaller ones
    (the first ``FIT_SHARE`` of the sizes; ``holdout_scores``), and the acceptable ones.
    With too few sizes to score any family, ``ValueError``."""
    n = len(m)
    n_fit = min(max(int(math.ceil(FIT_SHARE * n)), 1), n - 1)
    if n < MIN_SIZES:
        raise ValueError(f"too few sizes ({n}) to score any family; at least "
                         f"{MIN_SIZES} are needed")
    scores = holdout_scores(m, y, sem, n_fit, families, floor, upper)
    if not scores:
        raise ValueError(f"no family fits the curve with a limit between {floor:.3g} and "
                         f"{upper:g}")
    held = np.asarray(sem, dtype=float)[n_fit:]
    held = float(np.mean(np.where(np.isfinite(held), held, 0.0)))
    ok = acceptable(scores, held, ratio, n_sem)
    return Choice(ok[0], scores, n_fit, ok)


def _first_crossing_beyond(diff: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The first m of ``grid`` (G,) where each row of ``diff`` (B, G) has the other sign than
    at ``grid[0]``, interpolated linearly; NaN where none."""
    s0 = np.sign(diff[:, :1])  # (B, 1)
    other = (np.sign(diff) == -s0) & (s0 != 0)  # (B, G)
    has = other.any(axis=1)
    j = other.argmax(axis=1)
    out = np.full(diff.shape[0], np.nan)
    r = np.flatnonzero(has)
    j = j[has]
    i = j - 1
    di, dj = diff[r, i], diff[r, j]
    out[has] = grid[i] + (grid[j] - grid[i]) * di / (di - dj)
    return out


def draw_means(summary: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
               pair: tuple[str, str], diff_sem: np.ndarray | None, n_boot: int,
               rng: np.random.Generator, upper: float = 1.0) -> dict[str, np.ndarray]:
    """The pair's mean curves drawn again: normal at each m with the means' standard errors
    and the pair's covariance ``(sem_a² + sem_b² - diff_sem²) / 2`` (0 without
    ``diff_sem``), independent across m (each size has its own splits), clipped to
    [0, upper].

    Returns model -> (n_boot, M). This is the normal limit of resampling the splits within
    each m, the pairing kept; it needs only summary.csv and paired.csv.
    """
    a, b = pair
    ya, sa = summary[a][1], summary[a][2]
    yb, sb = summary[b][1], summary[b][2]
    cov = np.zeros_like(sa) if diff_sem is None else (sa**2 + sb**2 - diff_sem**2) / 2.0
    cov = np.clip(np.nan_to_num(cov), -sa * sb, sa * sb)
    z = rng.standard_normal((2, n_boot, ya.size))
    k = np.divide(cov, sa, out=np.zeros_like(cov), where=sa > 0)  # b's loading on a's draw
    rest = np.sqrt(np.maximum(sb**2 - k**2, 0.0))
    return {a: np.clip(ya + sa * z[0], 0.0, upper),
            b: np.clip(yb + k * z[0] + rest * z[1], 0.0, upper)}


def _resample_splits(per_split: Mapping[str, np.ndarray], pair: tuple[str, str],
                     n_boot: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The pair's mean curves from the splits resampled within each m (the same resample
    for both models): model -> (n_boot, M)."""
    M, n = per_split[pair[0]].shape
    idx = rng.integers(0, n, size=(n_boot, M, n))  # (B, M, n), shared by the pair
    return {model: np.take_along_axis(per_split[model][None], idx, axis=2).mean(axis=2)
            for model in pair}


@dataclass(frozen=True)
class Extrapolation:
    """One task's curves past the grid, for one pair of models.

    Attributes
    ----------
    model_a, model_b : str
        The pair (by default NB and LR).
    family : dict
        model -> the family that predicted the held-out sizes best (the point estimate).
    scores : dict
        model -> {family: mean absolute error predicting the larger sizes}.
    acceptable : dict
        model -> the families whose intervals make up the envelope, best first.
    floor : dict
        model -> the lowest limit its fits may have (``floor_of``).
    asymptote : dict
        model -> the best family's limit as m grows.
    asymptote_interval : dict
        model -> the envelope of the acceptable families' percentile intervals (None
        without draws).
    crossover : float or None
        The first m past the last size where the best families' curves cross, None when they
        do not before ``search_to``.
    crossover_interval : (float, float) or None
        Its envelope; an end of ``inf`` means "not before ``search_to``".
    horizon : int
        The task's rows.
    last_m : int
        The largest size measured.
    reach : float
        Predictions past ``reach * last_m`` are beyond reach.
    search_to : int
        The largest m the crossover was looked for at: the reach, or ``horizon`` if smaller
        (``horizon`` with ``beyond``).
    beyond : bool
        Whether predictions beyond reach were asked for.
    shape : dict
        model -> the shape error's slope: a draw is moved by ``shape * xi * log(m / last_m)``
        past the grid (``SHAPE_K``).
    metric : str
        The metric extrapolated (``error``, or ``brier``).
    upper : float
        The highest limit and prediction: 1, or 2 for a K-class Brier score.
    """

    model_a: str
    model_b: str
    family: dict[str, str]
    scores: dict[str, dict[str, float]]
    asymptote: dict[str, float]
    asymptote_interval: dict[str, tuple[float, float] | None]
    crossover: float | None
    crossover_interval: tuple[float, float] | None
    horizon: int
    last_m: int
    n_boot: int
    level: float
    acceptable: dict[str, tuple[str, ...]] = field(default_factory=dict)
    floor: dict[str, float] = field(default_factory=dict)
    reach: float = REACH
    search_to: int = 0
    beyond: bool = False
    shape: dict[str, float] = field(default_factory=dict)
    metric: str = "error"
    upper: float = 1.0
    fits: dict[str, dict[str, CurveFit]] = field(default_factory=dict, compare=False,
                                                  repr=False)
    draws: dict[str, dict[str, CurveFit]] = field(default_factory=dict, compare=False,
                                                   repr=False)
    xi: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @property
    def reach_m(self) -> float:
        """The largest m predicted without ``beyond``."""
        return self.reach * self.last_m

    def drawn(self, model: str, family: str, m: np.ndarray) -> np.ndarray:
        """The drawn curves of ``model`` fitted with ``family`` at ``m`` (L,), each moved by
        its shape error past the grid (``_shaped``): (B, L)."""
        cf = self.draws[model][family]
        return _shaped(cf.predict(m), m, self.last_m, self.shape[model], self.xi[model],
                       self.floor[model], cf.predict([self.last_m])[:, 0], self.upper)

    def predict(self, model: str, m: Sequence[float] | np.ndarray, *,
                beyond: bool | None = None) -> dict[str, np.ndarray]:
        """The predicted mean error of ``model`` at sizes ``m`` (L,): ``predicted`` (the best
        family), ``low`` and ``high`` (the envelope of the acceptable families' percentile
        intervals, NaN without draws) and ``within_reach``; NaN past the reach unless
        ``beyond`` (by default as extrapolated)."""
        m = np.asarray(m, dtype=float)
        within = m <= self.reach_m * (1 + 1e-12)
        show = np.ones_like(within) if (self.beyond if beyond is None else beyond) else within
        point = self.fits[model][self.family[model]].predict(m)[0]
        low = np.full(m.size, np.nan)
        high = np.full(m.size, np.nan)
        if self.draws.get(model):
            alpha = (1.0 - self.level) / 2.0
            for fam in self.acceptable[model]:
                pred = self.drawn(model, fam, m)  # (B, L)
                q = np.nanquantile(pred, [alpha, 1 - alpha], axis=0)
                low = np.fmin(low, q[0])
                high = np.fmax(high, q[1])
        nan = np.full(m.size, np.nan)
        return {"predicted": np.where(show, point, nan), "low": np.where(show, low, nan),
                "high": np.where(show, high, nan), "within_reach": within}


def _shaped(pred: np.ndarray, m: np.ndarray, last_m: float, slope: float, xi: np.ndarray,
            floor: float, top: np.ndarray, upper: float = 1.0) -> np.ndarray:
    """Drawn predictions (B, L) at m (L,) moved by ``slope * xi * log(m / last_m)`` past
    the grid (xi (B,)); past it each drawn curve stays between the floor and its own value
    at the last m, ``top`` (B,): a learning curve does not climb back once past the grid."""
    m = np.asarray(m, dtype=float)
    far = np.log(np.maximum(m / last_m, 1.0))  # (L,)
    moved = pred + slope * xi[:, None] * far
    capped = np.minimum(moved, np.maximum(top, floor)[:, None])
    return np.clip(np.where(m > last_m, capped, moved), floor, upper)


def _horizon_grid(last_m: float, horizon: float) -> np.ndarray:
    return np.unique(np.geomspace(last_m, max(horizon, last_m * 1.0001), _HORIZON_POINTS))


def _envelope(intervals: list[tuple[float, float]]) -> tuple[float, float] | None:
    if not intervals:
        return None
    return (min(iv[0] for iv in intervals), max(iv[1] for iv in intervals))


def extrapolate(
    summary: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    pair: tuple[str, str],
    horizon: int,
    per_split: dict[str, np.ndarray] | None = None,
    *,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    level: float = 0.95,
    diff_sem: np.ndarray | None = None,
    floor: Mapping[str, float] | None = None,
    reach: float = REACH,
    beyond: bool = False,
    upper: float = 1.0,
    metric: str = "error",
) -> Extrapolation:
    """Fit, choose and extrapolate the curves of a pair of models.

    Parameters
    ----------
    summary : dict
        model -> ``(m (M,), mean error (M,), sem (M,))``, the same sizes for both models.
    pair : (str, str)
        ``(model_a, model_b)``; the crossover is where ``a - b`` changes sign past the grid.
    horizon : int
        The task's rows: the largest m a crossover is looked for at.
    per_split : dict, optional
        model -> per-split errors, shape (M, n), the same split in the same column for both
        models: with ``rng``, the draws resample the splits.
    rng : numpy.random.Generator, optional
        Without ``per_split``, the draws are normal (``draw_means``, with ``diff_sem``);
        without ``rng``, point estimates only.
    n_boot : int
    level : float
    diff_sem : ndarray of shape (M,), optional
        The standard error of the pair's paired difference at each m.
    floor : dict, optional
        model -> the lowest limit its fits may have (``floor_of``; 0 by default).
    reach : float
        Predictions reach ``reach`` times the largest m.
    beyond : bool
        Look for the crossover up to ``horizon`` even past the reach.
    upper : float
        The metric's largest value: limits lie in [floor, upper] (1; 2 for a K-class Brier
        score).
    metric : str
        What the curves are (recorded in the result).

    Returns
    -------
    Extrapolation
    """
    a, b = pair
    m = np.asarray(summary[a][0], dtype=float)
    if not np.array_equal(m, np.asarray(summary[b][0], dtype=float)):
        raise ValueError("the two models must be measured at the same sizes")
    if m.size < MIN_SIZES:
        raise ValueError(f"{m.size} sizes are too few to choose and fit a learning curve; "
                         f"at least {MIN_SIZES} are needed")
    floor = {model: float((floor or {}).get(model, 0.0)) for model in pair}
    choice, fits = {}, {}
    for model in pair:
        _, y, sem = summary[model]
        choice[model] = choose(m, y, sem, floor=floor[model], upper=upper)
        fits[model] = {fam: fit(fam, m, y, sem, floor[model], upper)
                       for fam in choice[model].acceptable}
    fam = {model: choice[model].family for model in pair}
    search_to = float(horizon) if beyond else min(float(horizon), reach * m[-1])
    grid = _horizon_grid(m[-1], search_to)
    diff = fits[a][fam[a]].predict(grid) - fits[b][fam[b]].predict(grid)  # (1, G)
    cross = _first_crossing_beyond(diff, grid)[0]
    asym = {model: float(fits[model][fam[model]].asymptote[0]) for model in pair}
    asym_iv: dict[str, tuple[float, float] | None] = {model: None for model in pair}
    cross_iv = None
    draws: dict[str, dict[str, CurveFit]] = {}
    curves = None
    if rng is not None and per_split is not None:
        curves = _resample_splits(per_split, pair, n_boot, rng)
    elif rng is not None and all(np.isfinite(summary[mo][2]).all() for mo in pair):
        curves = draw_means(summary, pair, diff_sem, n_boot, rng, upper)
    shape = {}
    for model in pair:
        c = choice[model]
        spread = math.log(m[-1] / m[c.n_fit - 1])
        shape[model] = SHAPE_K * c.scores[c.family] / spread if spread > 0 else 0.0
    xi: dict[str, np.ndarray] = {}
    if curves is not None:
        alpha = (1.0 - level) / 2.0
        preds = {}
        end = np.array([float(horizon)])
        for model in pair:
            sem = summary[model][2]
            draws[model] = {f: fit(f, m, curves[model], sem, floor[model], upper)
                            for f in choice[model].acceptable}
            xi[model] = rng.standard_normal(n_boot)
            ivs = []
            for f, cf in draws[model].items():
                ok = np.isfinite(cf.asymptote)
                if ok.any():  # the limit, with the shape error as far as the task's rows
                    top = cf.predict(m[-1:])[:, 0]
                    lim = _shaped(cf.asymptote[ok, None], end, m[-1], shape[model],
                                  xi[model][ok], floor[model], top[ok], upper)[:, 0]
                    q = np.quantile(lim, [alpha, 1 - alpha])
                    ivs.append((float(q[0]), float(q[1])))
                preds[model, f] = _shaped(cf.predict(grid), grid, m[-1], shape[model],
                                          xi[model], floor[model],
                                          cf.predict(m[-1:])[:, 0], upper)  # (B, G)
            asym_iv[model] = _envelope(ivs)
        ivs = []
        for fa, fb in itertools.product(choice[a].acceptable, choice[b].acceptable):
            loc = _first_crossing_beyond(preds[a, fa] - preds[b, fb], grid)
            loc = np.where(np.isnan(loc), np.inf, loc)
            q = np.quantile(loc, [alpha, 1 - alpha], method="inverted_cdf")
            ivs.append((float(q[0]), float(q[1])))
        cross_iv = _envelope(ivs)
    return Extrapolation(
        model_a=a, model_b=b, family=fam,
        scores={model: choice[model].scores for model in pair}, asymptote=asym,
        asymptote_interval=asym_iv,
        crossover=None if np.isnan(cross) else float(cross),
        crossover_interval=cross_iv, horizon=int(horizon), last_m=int(m[-1]),
        n_boot=int(n_boot), level=level,
        acceptable={model: choice[model].acceptable for model in pair}, floor=floor,
        reach=float(reach), search_to=int(round(search_to)), beyond=beyond,
        shape=shape, metric=metric, upper=float(upper), fits=fits, draws=draws, xi=xi,
    )


def task_extrapolation(task, pair: tuple[str, str] | None = None, *,
                       n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                       level: float = 0.95, beyond: bool = False) -> Extrapolation:
    """``extrapolate`` one task's saved results (``results.TaskResults``).

    ``pair`` is ``(model_a, model_b)``, by default the task's first pair (the figure's;
    for another metric, the first pair whose curves have a value on every split, if any).
    Reads summary.csv and the pair's paired standard errors (paired.csv, or the splits when
    it is missing): the intervals come from ``draw_means``, so a committed run without its
    splits gets the same table as the run that kept them. The horizon is the task's rows
    and each model's floor its all-rows error (run.json), or for a view of the Brier score
    its all-rows Brier score (``floor_of_brier``; ``ResultsError`` when run.json has none:
    a run made before it was recorded); the draws' stream comes from
    ``(seed, task name)`` (``stats.task_rng``), like the crossover's interval.
    ``ConfigError`` for a view of a metric whose curves are not extrapolated
    (``check_extrapolable``).
    """
    metric = metric_of(task)
    check_extrapolable(metric)
    paired = task_paired(task)
    if pair is None:
        if paired.empty:
            raise ResultsError(f"{task.folder}: no pair of models to extrapolate")
        pairs = list(dict.fromkeys(zip(paired["model_a"].astype(str),
                                       paired["model_b"].astype(str), strict=True)))
        pair = pairs[0]
        if metric != "error":  # the first pair whose curves are both complete, if any
            pair = next((p for p in pairs if _complete(task, p)), pair)
    summary = task.summary
    curves = {}
    n_splits = []
    for model in pair:
        rows = summary[summary["model"] == model].sort_values("m", kind="stable")
        if rows.empty:
            raise ResultsError(f"{task.folder}: no results for model '{model}'")
        curves[model] = (rows["m"].to_numpy(dtype=float),
                         rows["error_mean"].to_numpy(dtype=float),
                         rows["error_sem"].to_numpy(dtype=float))
        n_splits.append(rows["n_splits"].to_numpy(dtype=float))
        if metric != "error":
            check_complete(task, model, rows)
    common = np.intersect1d(curves[pair[0]][0], curves[pair[1]][0])
    keep = {k: np.isin(v[0], common) for k, v in curves.items()}
    curves = {k: tuple(x[keep[k]] for x in v) for k, v in curves.items()}
    few = min(float(np.min(n[keep[k]])) for n, k in zip(n_splits, pair, strict=True))
    diff_sem = None
    if not paired.empty:
        rows = paired[(paired["model_a"] == pair[0]) & (paired["model_b"] == pair[1])]
        by_m = dict(zip(rows["m"].to_numpy(dtype=float),
                        rows["diff_sem"].to_numpy(dtype=float), strict=True))
        if all(x in by_m for x in common):
            diff_sem = np.array([by_m[x] for x in common])
    info = task.run_info.get("task") or {}
    n_rows = int(info.get("rows") or 0)
    horizon = n_rows or int(common[-1]) * 100
    floor = floors(task, pair)
    rng = task_rng(seed, task.name) if few >= 2 else None  # one split: nothing to draw
    try:
        return extrapolate(curves, pair, horizon, rng=rng, n_boot=n_boot, level=level,
                           diff_sem=diff_sem, floor=floor, beyond=beyond,
                           upper=upper_of(metric, task.run_info), metric=metric)
    except ValueError as err:
        raise ResultsError(f"{task.name}: {err}") from None


def _complete(task, pair: Sequence[str]) -> bool:
    """Whether every model of ``pair`` passes ``check_complete`` on ``task``."""
    try:
        for model in pair:
            check_complete(task, model, task.summary[task.summary["model"] == model])
    except ResultsError:
        return False
    return True


def check_complete(task, model: str, rows) -> None:
    """``ResultsError`` when ``model`` lacks a value of the task's metric on some split of
    some size (``rows``: its summary rows): its mean there is over the splits with a value
    (the paper's LR: the non-separable training sets), a subset that changes with m, not a
    learning curve to extrapolate (docs/extrapolation.md, "The Brier score")."""
    splits = int(task.run_info.get("splits") or 0)
    counts = rows["n_splits"].to_numpy(dtype=float)
    short = counts < splits if splits else np.zeros(counts.size, dtype=bool)
    if short.any():
        m = rows["m"].to_numpy()[short]
        raise ResultsError(
            f"{task.folder}: {model} has no {LABELS[metric_of(task)]} on some splits at "
            f"{short.sum()} of its {counts.size} sizes (m = {', '.join(map(str, m[:3]))}"
            f"{', ...' if m.size > 3 else ''}; why: run.json's no_probabilities): its mean "
            "there is over the other splits, a subset that changes with m, not a learning "
            "curve to extrapolate")


def floors(task, pair: Sequence[str]) -> dict[str, float]:
    """Each model's floor on ``task`` (``results.TaskResults`` or a metric's view of it):
    ``floor_of`` its all-rows error, or for the Brier score ``floor_of_brier`` its all-rows
    Brier score; ``ResultsError`` naming the folder when run.json has no all-rows Brier
    score (a run made before it was recorded, or one not measuring it)."""
    info = task.run_info
    if metric_of(task) == "brier":
        full = info.get("asymptotic_brier")
        if full is None:
            raise ResultsError(
                f"{task.folder}: run.json has no all-rows Brier score (asymptotic_brier), "
                "the floor of the Brier score's extrapolation: the run was made before it "
                "was recorded; rerun the config to extrapolate its Brier score")
        return {model: floor_of_brier(full.get(model)) for model in pair}
    full = info.get("asymptotic_error") or {}
    n_rows = int((info.get("task") or {}).get("rows") or 0)
    return {model: floor_of(full.get(model), n_rows) for model in pair}


def all_rows(task) -> dict[str, float | None]:
    """model -> its all-rows value of the task's metric (run.json's ``asymptotic_error``,
    or the ``value`` of ``asymptotic_brier`` for a view of the Brier score; None where
    there is none)."""
    info = task.run_info
    if metric_of(task) == "brier":
        return {str(model): (b or {}).get("value")
                for model, b in (info.get("asymptotic_brier") or {}).items()}
    return dict(info.get("asymptotic_error") or {})
