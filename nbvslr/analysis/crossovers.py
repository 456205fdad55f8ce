"""Where two learning curves cross: every sign change of the mean paired difference
``a - b`` of a pair of models, the first one's bootstrap interval, and where b is
significantly better (``Crossovers``, one typed object per task and pair); and the one
table of them (``crossover_table``) that ``Results.crossovers`` and ``nbvslr report
--format csv`` both show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nbvslr.analysis.stats import (
    _check_level,
    _require_columns,
    paired_differences,
    task_paired,
    task_rng,
)
from nbvslr.analysis.winner import NEITHER, winner
from nbvslr.errors import ResultsError
from nbvslr.results.layout import PAIRED_COLUMNS

DEFAULT_N_BOOT = 1000
"""Bootstrap resamples of a crossover's interval (the report, the figures)."""


def sign_changes(ms: np.ndarray, d: np.ndarray) -> list[tuple[float, float]]:
    """All sign changes of one curve: ``[(location, sign after), ...]`` in increasing m.

    ms : ndarray of shape (M,), increasing. d : ndarray of shape (M,), the mean differences.
    A crossing lies between consecutive non-zero points ``i < j`` of opposite sign:
    when they are neighbours (``j == i + 1``) at the linear interpolation
    ``m_i + (m_j - m_i) d_i / (d_i - d_j)``; when exact zeros sit between them, at the
    middle of that run of zeros ``(m_{i+1} + m_{j-1}) / 2``. A curve that touches 0 and
    returns to its sign does not cross.
    """
    out = []
    prev = None
    for j in np.flatnonzero(d != 0):
        if prev is not None and np.sign(d[j]) != np.sign(d[prev]):
            if j == prev + 1:
                loc = ms[prev] + (ms[j] - ms[prev]) * d[prev] / (d[prev] - d[j])
            else:
                loc = (ms[prev + 1] + ms[j - 1]) / 2.0
            out.append((float(loc), float(np.sign(d[j]))))
        prev = j
    return out


def first_crossing(ms: np.ndarray, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first sign change of each of many curves, vectorised; same rule as above.

    Parameters
    ----------
    ms : ndarray of shape (M,), increasing sizes.
    D : ndarray of shape (B, M), one curve of mean differences per row.

    Returns
    -------
    loc : ndarray of shape (B,), the first crossing, NaN for a curve that never changes sign.
    start : ndarray of shape (B,), the sign of each curve's first non-zero value (0 if none).
    """
    ms = np.asarray(ms, dtype=float)
    D = np.asarray(D, dtype=float)
    B, M = D.shape
    rows = np.arange(B)
    sgn = np.sign(D)  # (B, M)
    nonzero = sgn != 0  # (B, M)
    start = sgn[rows, nonzero.argmax(axis=1)]  # (B,) 0 when the whole row is 0
    opposite = (sgn == -start[:, None]) & (start != 0)[:, None]  # (B, M)
    has = opposite.any(axis=1)
    j = opposite.argmax(axis=1)  # first point of the other sign (>= 1 where has)
    last_nonzero = np.maximum.accumulate(np.where(nonzero, np.arange(M), -1), axis=1)  # (B, M)
    i = last_nonzero[rows, np.maximum(j - 1, 0)]  # last non-zero point before j
    loc = np.full(B, np.nan)
    r, i, j = rows[has], i[has], j[has]
    di, dj = D[r, i], D[r, j]  # opposite signs, so di - dj != 0
    interp = ms[i] + (ms[j] - ms[i]) * di / (di - dj)
    zero_run = (ms[np.minimum(i + 1, M - 1)] + ms[j - 1]) / 2.0
    loc[has] = np.where(j == i + 1, interp, zero_run)
    return loc, start


def crossing_from(ms: np.ndarray, D: np.ndarray, start: float) -> np.ndarray:
    """The first crossover of each of many curves, measured from a point curve's starting
    sign ``start`` (+1 or -1), (B,): the first sign change (``first_crossing``) of a curve
    that starts with ``start``'s sign, ``+inf`` if it keeps that sign throughout (the
    crossing moved past the largest m), ``-inf`` if it starts with the other sign (it has
    crossed before the smallest m, whatever it does after), NaN for a curve of exact zeros.
    The one rule of the bootstrap interval (``crossovers``) and of the curve guard's
    simulated curves (``compare``)."""
    loc, first = first_crossing(ms, D)
    out = np.where(np.isnan(loc), np.inf, loc)
    out = np.where(first == -start, -np.inf, out)
    return np.where(first == 0, np.nan, out)


def _bootstrap_first_crossing(
    ms: np.ndarray, diffs: list[np.ndarray], start: float, rng: np.random.Generator,
    n_boot: int, level: float,
) -> tuple[tuple[float, float], float]:
    """Percentile interval of the first crossing, resampling splits within each m.

    For each m (in increasing order) the n per-split differences are resampled with
    replacement, ``idx`` of shape (B, n), and averaged: one resampled curve per row of
    ``curves`` (B, M). Pairing is kept because a split's difference is resampled as one
    value. Each resampled curve's crossover is measured from the point curve's starting
    sign (``crossing_from``): its first sign change if it starts on the same side,
    ``+inf`` if it never leaves that side (the crossing moved past the largest m), ``-inf``
    if it starts on the other side (the crossing moved before the smallest m: a later
    crossing of such a curve goes the other way, and is not this crossover's location); a
    curve of exact zeros is left out. The interval is the pair of order statistics at
    ``(1 -+ level) / 2`` (``inverted_cdf``, no interpolation, so an end may be infinite).
    Also returns the share of resamples whose crossover lies inside the range.
    """
    curves = np.empty((n_boot, len(ms)))  # (B, M)
    for k, d in enumerate(diffs):
        idx = rng.integers(0, d.size, size=(n_boot, d.size))  # (B, n)
        curves[:, k] = d[idx].mean(axis=1)
    loc = crossing_from(ms, curves, start)
    inside = np.isfinite(loc)
    loc = loc[~np.isnan(loc)]
    alpha = 1.0 - level
    low = float(np.quantile(loc, alpha / 2.0, method="inverted_cdf"))
    high = float(np.quantile(loc, 1.0 - alpha / 2.0, method="inverted_cdf"))
    return (low, high), float(inside.mean())


@dataclass(frozen=True)
class Crossovers:
    """Where the mean difference ``a - b`` of one task's pair of models changes sign.

    Attributes
    ----------
    model_a, model_b : str
        The pair.
    m : tuple of int
        The sizes, increasing.
    crossings : tuple of float
        Every sign change of ``diff_mean`` in the plotted range, interpolated linearly in
        m (see ``sign_changes``); ``()`` when there is none.
    better_after : tuple of str
        For each crossing, the name of the model with the lower mean error just after it
        (``model_b`` or ``model_a``).
    interval : (float, float) or None
        Bootstrap interval of the first crossover (ends may be ``-inf``/``+inf``, i.e.
        before/after the range); None without splits/rng or without a crossover.
    boot_fraction : float or None
        Share of resamples that cross inside the range (None if not run).
    n_boot : int
    level : float
    first_b_better : int or None
        The smallest m whose paired interval lies entirely above 0 (b significantly
        better: ``winner`` is ``model_b``), or None.
    b_better_from : int or None
        The smallest m from which the interval lies above 0 at every larger m up to the
        last one, or None (b is not significantly better at the end).
    first_a_better : int or None
        The smallest m whose interval lies entirely below 0 (a significantly better).
    tie_everywhere : bool
        True when the interval contains 0 (or is undefined) at every m; any crossing is
        then a sign change of noise, never significant on either side.
    """

    model_a: str
    model_b: str
    m: tuple[int, ...]
    crossings: tuple[float, ...]
    better_after: tuple[str, ...]
    interval: tuple[float, float] | None
    boot_fraction: float | None
    n_boot: int
    level: float
    first_b_better: int | None
    b_better_from: int | None
    first_a_better: int | None
    tie_everywhere: bool

    @property
    def first_crossover(self) -> float | None:
        """``crossings[0]``, or None ("no crossover in the plotted range")."""
        return self.crossings[0] if self.crossings else None


def crossovers(
    paired_rows: pd.DataFrame,
    splits: pd.DataFrame | None = None,
    *,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    level: float = 0.95,
) -> Crossovers:
    """Where the mean difference ``a - b`` of a pair of models changes sign, for one task.

    Parameters
    ----------
    paired_rows : DataFrame
        The paired.csv rows of one task and one pair (``paired_summary`` output).
    splits : DataFrame, optional
        The task's splits table; with ``rng`` it enables the bootstrap interval.
    rng : numpy.random.Generator, optional
        The only source of randomness; the same seed gives the same interval.
    n_boot : int
        Bootstrap resamples B.
    level : float
        Level of the bootstrap interval.

    Returns
    -------
    Crossovers
    """
    _check_level(level)
    _require_columns(paired_rows, PAIRED_COLUMNS, "paired table")
    if paired_rows.empty:
        raise ResultsError("paired table is empty: no size has both models")
    for col in ("task", "model_a", "model_b"):
        if paired_rows[col].nunique() != 1:
            raise ResultsError(f"crossovers: paired rows must hold one {col}, got "
                               f"{sorted(map(str, paired_rows[col].unique()))}")
    rows = paired_rows.sort_values("m", kind="stable")
    if rows["m"].duplicated().any():
        raise ResultsError("crossovers: paired rows repeat a size m")
    ms = rows["m"].to_numpy(dtype=float)
    d = rows["diff_mean"].to_numpy(dtype=float)
    model_a, model_b = str(rows["model_a"].iloc[0]), str(rows["model_b"].iloc[0])
    changes = sign_changes(ms, d)
    calls = [winner(r) for _, r in rows.iterrows()]
    b_sig = np.array([c == model_b for c in calls])
    # the tail of sizes where b stays significantly better up to the last m
    tail = np.flatnonzero(~b_sig)
    start_tail = tail[-1] + 1 if tail.size else 0
    interval = boot_fraction = None
    if changes and splits is not None and rng is not None:
        if n_boot < 1:
            raise ValueError(f"n_boot must be >= 1, got {n_boot}")
        task = rows["task"].iloc[0]
        diffs = paired_differences(splits[splits["task"] == task], model_a, model_b)
        by_m = {m: g["diff"].to_numpy(dtype=float) for m, g in diffs.groupby("m")}
        missing = [int(m) for m in ms if m not in by_m]
        if missing:
            raise ResultsError(f"crossovers: the splits table has no paired splits at m = "
                               f"{missing} ({task})")
        start = float(np.sign(d[d != 0][0]))
        interval, boot_fraction = _bootstrap_first_crossing(
            ms, [by_m[m] for m in ms], start, rng, n_boot, level)
    return Crossovers(
        model_a=model_a,
        model_b=model_b,
        m=tuple(int(x) for x in ms),
        crossings=tuple(loc for loc, _ in changes),
        better_after=tuple(model_b if s > 0 else model_a for _, s in changes),
        interval=interval,
        boot_fraction=boot_fraction,
        n_boot=int(n_boot),
        level=level,
        first_b_better=next((int(m) for m, c in zip(ms, calls, strict=True)
                             if c == model_b), None),
        b_better_from=int(ms[start_tail]) if start_tail < len(ms) else None,
        first_a_better=next((int(m) for m, c in zip(ms, calls, strict=True)
                             if c == model_a), None),
        tie_everywhere=all(c == NEITHER for c in calls),
    )


def task_crossovers(task, pair: tuple[str, str] | None = None, *,
                    n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                    level: float = 0.95) -> tuple[pd.DataFrame, Crossovers]:
    """The paired rows of one pair of the task (increasing m) and their ``crossovers``.

    task : ``results.TaskResults``. ``pair`` is ``(model_a, model_b)``; None takes the first
    pair of ``paired.csv`` (the figure's). The bootstrap interval needs ``splits.csv.gz``;
    without it (e.g. committed summaries only) everything but the interval is there. Its
    seed is derived from (``seed``, task name), so the report and the figure give the same
    interval whatever the task order, and every pair of a task is resampled with the same
    draws of its splits.
    """
    paired = task_paired(task)
    paired = paired[paired["task"] == paired["task"].iloc[0]] if not paired.empty else paired
    if not paired.empty:
        a, b = pair if pair is not None else (paired["model_a"].iloc[0],
                                               paired["model_b"].iloc[0])
        paired = paired[(paired["model_a"] == a) & (paired["model_b"] == b)]
    if paired.empty:
        raise ResultsError(f"{task.folder}: no size has results for both models of the pair")
    paired = paired.sort_values("m", kind="stable")
    # a splits file that exists but cannot be read is an error
    splits = task.splits() if task.has_splits() else None
    rng = task_rng(seed, task.name)  # independent of the order of the tasks
    return paired, crossovers(paired, splits, rng=rng, n_boot=n_boot, level=level)


CROSSOVER_COLUMNS = (
    "crossover", "crossover_low", "crossover_high", "boot_fraction", "n_crossings",
    "better_after", "first_b_better", "b_better_from", "first_a_better", "tie_everywhere",
)
"""What a ``Crossovers`` says, one column each (``crossover_fields``): the first crossover
and its bootstrap interval (NaN when the curves do not cross; ends may be -inf / inf, before
/ after the range), the share of resamples crossing inside the range, the number of sign
changes, the model ahead after the first, the first m where b (a) is significantly better,
the m from which b stays so (NaN: never), and whether every m is a tie."""

_SIZE_COLUMNS = ("first_b_better", "b_better_from", "first_a_better")
_FLOAT_COLUMNS = ("crossover", "crossover_low", "crossover_high", "boot_fraction")


def crossover_fields(cross: Crossovers | None) -> dict[str, object]:
    """``CROSSOVER_COLUMNS`` of one pair; every field missing (None) for ``None`` (a model
    without a pair to compare), but ``n_crossings`` 0 and ``tie_everywhere`` False."""
    if cross is None:
        out: dict[str, object] = dict.fromkeys(CROSSOVER_COLUMNS)
        out.update(n_crossings=0, tie_everywhere=False)
        return out
    low, high = cross.interval if cross.interval is not None else (None, None)
    return {
        "crossover": cross.first_crossover, "crossover_low": low, "crossover_high": high,
        "boot_fraction": cross.boot_fraction, "n_crossings": len(cross.crossings),
        "better_after": cross.better_after[0] if cross.better_after else None,
        "first_b_better": cross.first_b_better, "b_better_from": cross.b_better_from,
        "first_a_better": cross.first_a_better, "tie_everywhere": bool(cross.tie_everywhere),
    }


def crossover_table(rows: list[dict[str, object]], columns: tuple[str, ...]) -> pd.DataFrame:
    """The rows (each with at least ``CROSSOVER_COLUMNS``) as one table of ``columns``: the
    crossover and its interval as floats (NaN when missing), the sizes as nullable
    integers, ``n_crossings`` an integer, ``tie_everywhere`` a bool."""
    table = pd.DataFrame([{c: row.get(c) for c in columns} for row in rows],
                         columns=list(columns))
    for col in _FLOAT_COLUMNS:
        table[col] = table[col].astype(float)
    for col in _SIZE_COLUMNS:
        table[col] = table[col].astype("Int64")
    table["n_crossings"] = table["n_crossings"].astype(np.int64)
    table["tie_everywhere"] = table["tie_everywhere"].astype(bool)
    return table
