"""Learning curves beyond the grid: parametric curve families fitted to the mean errors, the
asymptote each implies, and where two fitted curves are predicted to cross past the last m.

The families (``m`` the training-set size, ``e(m)`` the mean test error; LCDB, Mohr et al.,
names them the same way):

=======  ===================================  ==========  ==========================
family   e(m)                                 asymptote   nonlinear parameters
=======  ===================================  ==========  ==========================
pow3     ``a + b m^(-c)``                     ``a``       ``c > 0``
exp3     ``a + b exp(-c m)``                  ``a``       ``c > 0``
mmf4     ``(a b + c m^d) / (b + m^d)``        ``c``       ``b > 0, d > 0``
wbl4     ``a - b exp(-c m^d)``                ``a``       ``c > 0, d > 0``
=======  ===================================  ==========  ==========================

Every family is linear in two of its parameters once the others are fixed (pow3: ``a, b``
given ``c``; mmf4: ``a`` and ``c`` given ``b, d``), so a fit is *variable projection*: for
each value of the nonlinear parameters on a log-spaced grid the linear ones are the exact
weighted least-squares solution, and the grid is refined around its best point. No starting
values, no local optimiser that can wander off; the fits of many bootstrap curves are one
batched computation.

Weights: each mean is weighted by ``1 / sem^2`` (its standard error over the splits, floored
at ``SEM_FLOOR`` so a size where every split had the same error does not take all the
weight).

Choosing a family by how it extrapolates (``choose``): each family is fitted to the first
``FIT_SHARE`` of the sizes and scored by the mean absolute error of its predictions at the
remaining, larger sizes; the family that predicts best is refitted to every size. In-sample
fit would always prefer the 4-parameter families.

Uncertainty (``extrapolate``): the splits are resampled within each m (the same resample
for both models of a pair, so the pairing of the splits is kept, as the crossover's
interval does), every resampled mean curve is refitted with the chosen family, and the
percentile intervals of the asymptotes and of the predicted crossover are reported. A
resample that predicts no crossover before ``horizon`` rows counts as ``+inf``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nbvslr.analysis.stats import task_paired, task_rng
from nbvslr.errors import ResultsError

#: The share of the sizes (the smaller ones) that a family is fitted to when it is scored by
#: how well it predicts the rest.
FIT_SHARE = 2 / 3
#: The smallest standard error a mean is weighted with (errors are in [0, 1]).
SEM_FLOOR = 1e-3
#: Fewest sizes to choose a family and extrapolate: the three-parameter families fitted to the
#: first four (``FIT_SHARE``) and scored on the fifth.
MIN_SIZES = 5
#: Bootstrap resamples of the intervals.
DEFAULT_N_BOOT = 200

_GRID = 64  # grid points of a family with one nonlinear parameter, per round
_GRID_2D = 24  # per axis, with two
_ROUNDS = 4  # zoom rounds around the best grid point
_BLOCK = 16  # curves fitted at once (bounds the (B, G, M, 2) bases)


@dataclass(frozen=True)
class _Family:
    name: str
    n_params: int
    #: log10 ranges of the nonlinear parameters
    ranges: tuple[tuple[float, float], ...]
    #: (m (M,), nonlinear params (G, k)) -> the two basis columns (G, M, 2); e = basis @ lin
    basis: Callable[[np.ndarray, np.ndarray], np.ndarray]
    #: (linear (.., 2), nonlinear (.., k)) -> the asymptote (..)
    asymptote: Callable[[np.ndarray, np.ndarray], np.ndarray]
    formula: str


# Each basis takes m (M,) and nonlinear parameters q (..., k) and returns (..., M, 2).
def _pow3(m, q):
    t = m ** -q[..., :1]  # (..., M)
    return np.stack([np.ones_like(t), t], axis=-1)


def _exp3(m, q):
    t = np.exp(-q[..., :1] * m)
    return np.stack([np.ones_like(t), t], axis=-1)


def _mmf4(m, q):
    # (a b + c m^d) / (b + m^d) = a * b / (b + m^d) + c * m^d / (b + m^d)
    md = m ** q[..., 1:2]  # (..., M)
    den = q[..., :1] + md
    return np.stack([q[..., :1] / den, md / den], axis=-1)


def _wbl4(m, q):
    # a - b exp(-c m^d): the second linear coefficient is -b
    t = np.exp(-q[..., :1] * m ** q[..., 1:2])
    return np.stack([np.ones_like(t), t], axis=-1)


FAMILIES: dict[str, _Family] = {
    f.name: f for f in (
        _Family("pow3", 3, ((-2.0, 1.5),), _pow3, lambda lin, q: lin[..., 0],
                "a + b·m^(−c)"),
        _Family("exp3", 3, ((-5.0, 0.5),), _exp3, lambda lin, q: lin[..., 0],
                "a + b·exp(−c·m)"),
        _Family("mmf4", 4, ((-2.0, 5.0), (-1.5, 0.7)), _mmf4, lambda lin, q: lin[..., 1],
                "(a·b + c·m^d) / (b + m^d)"),
        _Family("wbl4", 4, ((-5.0, 1.0), (-1.5, 0.7)), _wbl4, lambda lin, q: lin[..., 0],
                "a − b·exp(−c·m^d)"),
    )
}


@dataclass(frozen=True)
class CurveFit:
    """One family fitted to one or many mean curves (leading axis B).

    Attributes
    ----------
    family : str
    linear : ndarray of shape (B, 2)
        The linear parameters of each curve.
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
        return FAMILIES[self.family].asymptote(self.linear, self.nonlinear)


def _weights(sem: np.ndarray) -> np.ndarray:
    sem = np.where(np.isfinite(sem), sem, SEM_FLOOR)
    return 1.0 / np.maximum(sem, SEM_FLOOR)  # (M,) square roots of the WLS weights


def _unit_grid(k: int, n: int) -> np.ndarray:
    """Every point of an n^k grid on the unit cube: shape (n^k, k)."""
    axes = np.meshgrid(*[np.linspace(0.0, 1.0, n)] * k, indexing="ij")
    return np.stack([g.ravel() for g in axes], axis=1)


def _solve(basis: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted LS of each curve on each of its grid points' bases.

    basis (B, G, M, 2), y (B, M), w (M,) -> linear parameters (B, G, 2) and SSE (B, G).
    """
    u = basis[..., 0] * w  # (B, G, M) the two weighted columns
    v = basis[..., 1] * w
    Y = (y * w)[:, None, :]  # (B, 1, M)
    uu, uv, vv = (u * u).sum(-1), (u * v).sum(-1), (v * v).sum(-1)  # (B, G)
    uy, vy = (u * Y).sum(-1), (v * Y).sum(-1)
    det = uu * vv - uv**2
    # a near-singular basis (its two columns almost proportional) is a useless grid point
    ok = det > 1e-10 * uu * vv
    det = np.where(ok, det, 1.0)
    p, q = (vv * uy - uv * vy) / det, (uu * vy - uv * uy) / det  # (B, G)
    lin = np.stack([p, q], axis=-1)  # (B, G, 2)
    resid = u * p[..., None] + v * q[..., None] - Y  # (B, G, M)
    sse = (resid * resid).sum(-1)
    return lin, np.where(ok, sse, np.inf)


def _fit_block(f: _Family, m: np.ndarray, Y: np.ndarray, w: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Variable projection over a zooming log grid for curves Y (B, M)."""
    B, k = Y.shape[0], len(f.ranges)
    n = _GRID if k == 1 else _GRID_2D
    lo = np.tile(np.array([r[0] for r in f.ranges]), (B, 1))  # (B, k) log10 box
    hi = np.tile(np.array([r[1] for r in f.ranges]), (B, 1))
    frac = _unit_grid(k, n)  # (G, k): where in each curve's box
    rows = np.arange(B)
    for _ in range(_ROUNDS):
        q = 10.0 ** (lo[:, None, :] + frac[None] * (hi - lo)[:, None, :])  # (B, G, k)
        lin, sse = _solve(f.basis(m, q), Y, w)
        asym = f.asymptote(lin, q)  # (B, G)
        sse = np.where((asym >= 0.0) & (asym <= 1.0), sse, np.inf)  # an error rate's limit
        g = np.argmin(sse, axis=1)  # (B,)
        best_q, best_lin = q[rows, g], lin[rows, g]
        feasible = np.isfinite(sse[rows, g])[:, None]  # (B, 1)
        centre = np.log10(best_q)  # (B, k)
        step = (hi - lo) / (n - 1)
        lo = np.where(feasible, centre - 2 * step, lo)
        hi = np.where(feasible, centre + 2 * step, hi)
    # a curve that no limit in [0, 1] fits anywhere on the grid has no fit
    return np.where(feasible, best_lin, np.nan), np.where(feasible, best_q, np.nan)


def fit(family: str, m: Sequence[float], y: np.ndarray, sem: Sequence[float]) -> CurveFit:
    """Fit ``family`` to mean curves.

    Parameters
    ----------
    family : str
        A key of ``FAMILIES``.
    m : sequence of float, shape (M,)
        The sizes, increasing.
    y : ndarray of shape (M,) or (B, M)
        One mean error curve, or B of them (bootstrap resamples), all at the sizes ``m``.
    sem : sequence of float, shape (M,)
        The standard error of each mean (the weights; the same for every curve).

    Returns
    -------
    CurveFit
        B = 1 for a single curve. The fit is constrained to curves whose limit lies in
        [0, 1]; a curve no grid point can fit that way gets NaN parameters.
    """
    f = FAMILIES[family]
    m = np.asarray(m, dtype=float)
    Y = np.atleast_2d(np.asarray(y, dtype=float))  # (B, M)
    if m.size < f.n_params + 1:
        raise ValueError(f"{family} needs at least {f.n_params + 1} sizes, got {m.size}")
    w = _weights(np.asarray(sem, dtype=float))
    lins, qs = [], []
    for start in range(0, Y.shape[0], _BLOCK):
        lin, q = _fit_block(f, m, Y[start : start + _BLOCK], w)
        lins.append(lin)
        qs.append(q)
    return CurveFit(family, np.concatenate(lins), np.concatenate(qs))


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
    """

    family: str
    scores: dict[str, float]
    n_fit: int


def holdout_scores(m: Sequence[float], y: Sequence[float], sem: Sequence[float], n_fit: int,
                   families: Sequence[str] = tuple(FAMILIES)) -> dict[str, float]:
    """Each family fitted to the first ``n_fit`` sizes of one curve, scored by the mean
    absolute error of its predictions at the other, larger sizes. Families with more
    parameters than ``n_fit - 1``, or with no fit whose limit lies in [0, 1], are left
    out."""
    m = np.asarray(m, dtype=float)
    y = np.asarray(y, dtype=float)
    sem = np.asarray(sem, dtype=float)
    if not 1 <= n_fit < m.size:
        raise ValueError(f"n_fit must leave sizes on both sides: {n_fit} of {m.size}")
    scores = {}
    for name in families:
        if n_fit < FAMILIES[name].n_params + 1:
            continue
        cf = fit(name, m[:n_fit], y[:n_fit], sem[:n_fit])
        score = float(np.mean(np.abs(cf.predict(m[n_fit:])[0] - y[n_fit:])))
        if math.isfinite(score):  # NaN: the family has no fit with a limit in [0, 1]
            scores[name] = score
    return scores


def choose(m: Sequence[float], y: Sequence[float], sem: Sequence[float],
           families: Sequence[str] = tuple(FAMILIES)) -> Choice:
    """The family that best predicts the larger sizes of one curve from its smaller ones
    (the first ``FIT_SHARE`` of the sizes; ``holdout_scores``). With too few sizes to score
    any family, ``ValueError``."""
    n = len(m)
    n_fit = min(max(int(math.ceil(FIT_SHARE * n)), 1), n - 1)
    if n < MIN_SIZES:
        raise ValueError(f"too few sizes ({n}) to score any family; at least "
                         f"{MIN_SIZES} are needed")
    scores = holdout_scores(m, y, sem, n_fit, families)
    if not scores:
        raise ValueError("no family fits the curve with a limit between 0 and 1")
    return Choice(min(scores, key=scores.get), scores, n_fit)


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


@dataclass(frozen=True)
class Extrapolation:
    """One task's curves past the grid, for one pair of models.

    Attributes
    ----------
    model_a, model_b : str
        The pair (by default NB and LR).
    family : dict
        model -> the chosen family.
    scores : dict
        model -> {family: mean absolute error predicting the larger sizes}.
    asymptote : dict
        model -> the fitted curve's limit as m grows.
    asymptote_interval : dict
        model -> its bootstrap percentile interval (None without the splits).
    crossover : float or None
        The first m past the last size where the fitted curves cross, None when they do not
        before ``horizon``.
    crossover_interval : (float, float) or None
        Its bootstrap interval; an end of ``inf`` means "not before ``horizon``".
    horizon : int
        The largest m looked at (the task's rows).
    last_m : int
        The largest size measured.
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


def _horizon_grid(last_m: float, horizon: float) -> np.ndarray:
    return np.unique(np.geomspace(last_m, max(horizon, last_m * 1.0001), 400))


def extrapolate(
    summary: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    pair: tuple[str, str],
    horizon: int,
    per_split: dict[str, np.ndarray] | None = None,
    *,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    level: float = 0.95,
) -> Extrapolation:
    """Fit, choose and extrapolate the curves of a pair of models.

    Parameters
    ----------
    summary : dict
        model -> ``(m (M,), mean error (M,), sem (M,))``, the same sizes for both models.
    pair : (str, str)
        ``(model_a, model_b)``; the crossover is where ``a - b`` changes sign past the grid.
    horizon : int
        The largest m considered (the task's rows).
    per_split : dict, optional
        model -> per-split errors, shape (M, n), the same split in the same column for both
        models. With ``rng``, the bootstrap intervals.
    rng : numpy.random.Generator, optional
    n_boot : int
    level : float

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
    fam, scores, fits = {}, {}, {}
    for model in pair:
        _, y, sem = summary[model]
        c = choose(m, y, sem)
        fam[model], scores[model] = c.family, c.scores
        fits[model] = fit(c.family, m, y, sem)
    grid = _horizon_grid(m[-1], horizon)
    diff = fits[a].predict(grid) - fits[b].predict(grid)  # (1, G)
    cross = _first_crossing_beyond(diff, grid)[0]
    asym = {model: float(fits[model].asymptote[0]) for model in pair}
    asym_iv: dict[str, tuple[float, float] | None] = {model: None for model in pair}
    cross_iv = None
    if per_split is not None and rng is not None:
        alpha = (1.0 - level) / 2.0
        n = per_split[a].shape[1]
        boot = {}
        idx = rng.integers(0, n, size=(n_boot, m.size, n))  # (B, M, n), shared by the pair
        for model in pair:
            E = per_split[model]  # (M, n)
            Y = np.take_along_axis(E[None, :, :], idx, axis=2).mean(axis=2)  # (B, M)
            boot[model] = fit(fam[model], m, Y, summary[model][2])
            fitted = boot[model].asymptote[np.isfinite(boot[model].asymptote)]
            if fitted.size:
                q = np.quantile(fitted, [alpha, 1 - alpha])
                asym_iv[model] = (float(q[0]), float(q[1]))
        d = boot[a].predict(grid) - boot[b].predict(grid)  # (B, G)
        loc = _first_crossing_beyond(d, grid)
        loc = np.where(np.isnan(loc), np.inf, loc)
        q = np.quantile(loc, [alpha, 1 - alpha], method="inverted_cdf")
        cross_iv = (float(q[0]), float(q[1]))
    return Extrapolation(
        model_a=a, model_b=b, family=fam, scores=scores, asymptote=asym,
        asymptote_interval=asym_iv,
        crossover=None if np.isnan(cross) else float(cross),
        crossover_interval=cross_iv, horizon=int(horizon), last_m=int(m[-1]),
        n_boot=int(n_boot), level=level,
    )


def task_extrapolation(task, pair: tuple[str, str] | None = None, *,
                       n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                       level: float = 0.95) -> Extrapolation:
    """``extrapolate`` one task's saved results (``results.TaskResults``).

    ``pair`` is ``(model_a, model_b)``, by default the task's first pair (the figure's). The
    intervals need ``splits.csv.gz``; without it (committed summaries) only the point
    estimates. The horizon is the task's rows (run.json), and the bootstrap's stream comes
    from ``(seed, task name)`` (``stats.task_rng``), like the crossover's interval.
    """
    paired = task_paired(task)
    if pair is None:
        if paired.empty:
            raise ResultsError(f"{task.folder}: no pair of models to extrapolate")
        pair = (str(paired["model_a"].iloc[0]), str(paired["model_b"].iloc[0]))
    summary = task.summary
    curves = {}
    for model in pair:
        rows = summary[summary["model"] == model].sort_values("m", kind="stable")
        if rows.empty:
            raise ResultsError(f"{task.folder}: no results for model '{model}'")
        curves[model] = (rows["m"].to_numpy(dtype=float),
                         rows["error_mean"].to_numpy(dtype=float),
                         rows["error_sem"].to_numpy(dtype=float))
    common = np.intersect1d(curves[pair[0]][0], curves[pair[1]][0])
    curves = {k: tuple(a[np.isin(v[0], common)] for a in v) for k, v in curves.items()}
    info = task.run_info.get("task") or {}
    horizon = int(info.get("rows") or 0) or int(common[-1]) * 100
    per_split = rng = None
    if task.has_splits():
        splits = task.splits()
        per_split = {}
        for model in pair:
            table = splits[splits["model"] == model].pivot(index="m", columns="split",
                                                           values="error")
            per_split[model] = table.loc[common].to_numpy(dtype=float)  # (M, n)
        if per_split[pair[0]].shape != per_split[pair[1]].shape or any(
                np.isnan(v).any() for v in per_split.values()):
            per_split = None  # unpaired or missing splits: point estimates only
        elif per_split[pair[0]].shape[1] < 2:
            per_split = None  # one split: nothing to resample
        else:
            rng = task_rng(seed, task.name)
    try:
        return extrapolate(curves, pair, horizon, per_split, rng=rng, n_boot=n_boot,
                           level=level)
    except ValueError as err:
        raise ResultsError(f"{task.name}: {err}") from None
