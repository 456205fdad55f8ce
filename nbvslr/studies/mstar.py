"""m*: the smallest training-set size at which a learning curve is within delta of its limit.

Pure functions on arrays; nothing here reads files.

Definition
----------
For one model on one task, with mean test errors ``e(m_1) > ... `` on an increasing grid
``m_1 < ... < m_M``, its asymptotic error ``a`` and a tolerance ``delta``, the curve
``D(m) = e(m) - (a + delta)`` is positive while the model is further than delta from its
limit. ``m*`` is the first grid point ``m_j`` with ``D(m_j) <= 0``, refined by linear
interpolation of D in ``log m`` between ``m_{j-1}`` and ``m_j`` (the grid is geometric, so
this is where a straight line through the two points crosses zero on the plot's axis):

    log m* = log m_{j-1} + (log m_j - log m_{j-1}) D_{j-1} / (D_{j-1} - D_j)

Edge cases: ``D(m_1) <= 0`` gives ``m* = m_1`` (the curve is already within delta at the
smallest size: a censored value, at most m_1); no ``D(m_j) <= 0`` gives ``m* = inf`` (not
reached inside the grid). The first crossing counts, even if noise lifts the curve above
the line again later.

Interval: the splits at each m are resampled with replacement (the splits of different
sizes are independent draws), the mean curve recomputed, m* found on it; the interval is the
pair of percentiles at ``(1 -+ level) / 2`` of the B resampled m* (order statistics, so an
end may be ``inf``).

Fits: ``m* ~ a + b log n`` and ``m* ~ a + b n`` by ordinary least squares over the n with a
finite m*; both have two parameters, so the smaller residual sum of squares is the better
fit. The slope of ``log m*`` on ``log n`` (the exponent of a power law ``m* ~ c n^beta``) is
reported beside them: about 1 for linear growth, near 0 for logarithmic growth.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def m_star(ms: np.ndarray, D: np.ndarray) -> np.ndarray:
    """m* of many curves at once (see the module docstring).

    Parameters
    ----------
    ms : ndarray of shape (M,)
        Increasing training-set sizes (> 0).
    D : ndarray of shape (B, M) or (M,)
        ``mean error - (asymptotic error + delta)`` of each curve at each size (finite).

    Returns
    -------
    ndarray of shape (B,) (or a 0-d array for one curve): m*, ``inf`` where no size is
    within delta.
    """
    ms = np.asarray(ms, dtype=float)
    D = np.asarray(D, dtype=float)
    one = D.ndim == 1
    D = np.atleast_2d(D)  # (B, M)
    if ms.ndim != 1 or ms.size != D.shape[1] or ms.size == 0:
        raise ValueError(f"m_star: {ms.size} sizes for curves of length {D.shape[1]}")
    if np.any(ms <= 0) or np.any(np.diff(ms) <= 0):
        raise ValueError("m_star: sizes must be positive and increasing")
    if not np.all(np.isfinite(D)):
        raise ValueError("m_star: a curve has a missing (non-finite) mean error")
    within = D <= 0  # (B, M)
    has = within.any(axis=1)
    j = within.argmax(axis=1)  # first size within delta (0 where none)
    out = np.full(D.shape[0], np.inf)
    logm = np.log(ms)
    first = has & (j == 0)
    out[first] = ms[0]
    mid = has & (j > 0)
    r, jj = np.flatnonzero(mid), j[mid]
    d0, d1 = D[r, jj - 1], D[r, jj]  # d0 > 0 >= d1, so d0 - d1 > 0
    frac = d0 / (d0 - d1)
    out[mid] = np.exp(logm[jj - 1] + (logm[jj] - logm[jj - 1]) * frac)
    return out[0] if one else out


def bootstrap_m_star(
    ms: Sequence[float], errors: Sequence[np.ndarray], target: float,
    rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95,
) -> tuple[float, float, float]:
    """m* of the mean curve and its bootstrap percentile interval.

    Parameters
    ----------
    ms : sequence of M increasing sizes.
    errors : sequence of M arrays, ``errors[k]`` of shape (n_k,): the per-split test errors
        at ``ms[k]``.
    target : float
        ``asymptotic error + delta``.
    rng : numpy.random.Generator
        The only source of randomness.
    n_boot : int
        Resamples B.
    level : float
        Level of the interval, in (0, 1).

    Returns
    -------
    (m_star, low, high); any of them may be ``inf`` (not reached in the grid).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if len(errors) != len(ms):
        raise ValueError(f"{len(errors)} error arrays for {len(ms)} sizes")
    means = np.array([np.mean(e) for e in errors])  # (M,)
    point = float(m_star(np.asarray(ms), means - target))
    curves = np.empty((n_boot, len(ms)))  # (B, M)
    for k, e in enumerate(errors):
        e = np.asarray(e, dtype=float)
        idx = rng.integers(0, e.size, size=(n_boot, e.size))  # (B, n_k)
        curves[:, k] = e[idx].mean(axis=1)
    boot = m_star(np.asarray(ms), curves - target)  # (B,)
    alpha = 1 - level
    low = float(np.quantile(boot, alpha / 2, method="inverted_cdf"))
    high = float(np.quantile(boot, 1 - alpha / 2, method="inverted_cdf"))
    return point, low, high


def fit_growth(n: Sequence[float], m: Sequence[float]) -> dict[str, float]:
    """Least-squares fits of m* against n: ``a + b log n``, ``a + b n``, and the power law.

    Parameters
    ----------
    n, m : sequences of equal length: numbers of features and their m* (non-finite m* are
        left out; at least 3 finite points are needed, else every value is NaN).

    Returns
    -------
    dict with ``points``; ``log_a, log_b, log_rss``; ``lin_a, lin_b, lin_rss``; ``better``
    (``"log n"`` or ``"n"``, the smaller residual sum of squares, or ``""`` when undecided);
    ``power_beta`` (slope of log m* on log n).
    """
    n = np.asarray(n, dtype=float)
    m = np.asarray(m, dtype=float)
    keep = np.isfinite(m) & np.isfinite(n) & (n > 0)
    n, m = n[keep], m[keep]
    out: dict[str, float] = {"points": int(n.size)}
    nan = float("nan")
    if n.size < 3 or np.unique(n).size < 2:
        return {**out, "log_a": nan, "log_b": nan, "log_rss": nan, "lin_a": nan,
                "lin_b": nan, "lin_rss": nan, "better": "", "power_beta": nan}
    for name, x in (("log", np.log(n)), ("lin", n)):
        A = np.stack([np.ones_like(x), x], axis=1)  # (k, 2)
        coef, *_ = np.linalg.lstsq(A, m, rcond=None)
        resid = m - A @ coef
        out[f"{name}_a"], out[f"{name}_b"] = float(coef[0]), float(coef[1])
        out[f"{name}_rss"] = float(resid @ resid)
    better = ""
    if out["log_rss"] < out["lin_rss"]:
        better = "log n"
    elif out["lin_rss"] < out["log_rss"]:
        better = "n"
    out["better"] = better  # type: ignore[assignment]
    out["power_beta"] = float(np.polyfit(np.log(n), np.log(m), 1)[0]) if np.all(m > 0) else nan
    return out
