"""Statistics of learning curves: per-size summaries and paired differences.

Pure functions on DataFrames and arrays; nothing here reads files or global state.

Conventions
-----------
- A *splits table* has one row per (task, model, m, split) with columns
  ``task, model, family, m, split, error`` (more columns are ignored). The same ``split``
  index at the same ``m`` is the same training set for every model, so two models can be
  compared split by split (a *paired* comparison).
- ``n`` is the number of splits at one m (non-missing errors only).
- Every interval is two-sided at ``level`` (default 0.95).

Formulas (for one model at one m, errors ``e_1 .. e_n``)
--------------------------------------------------------
- mean       ``x = sum(e_i) / n``
- sd         ``s = sqrt(sum((e_i - x)^2) / (n - 1))``              (ddof = 1)
- sem        ``s / sqrt(n)``
- CI         ``x -+ t_{(1 + level)/2, n - 1} * sem``               (Student t interval)

With ``n == 1`` the sd is undefined: sd, sem and both CI ends are NaN (never a zero-width
interval that would look exact). Plots draw no band there; ``analysis.winner`` calls it a
tie.
The interval is not clipped to [0, 1]: it is an interval for a mean, and a mean error near
0 with a few non-zero splits can have a lower end slightly below 0.

Paired differences use the same formulas on ``d_i = e_i(a) - e_i(b)`` over the splits that
both models have at that m.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from nbvslr.errors import ResultsError
from nbvslr.results.layout import (
    HOW_TO_MAKE,
    PAIRED_COLUMNS,
    PAIRED_FILE,
    SEPARATIONS,
    SHARE_COLUMNS,
    SPLITS_FILE,
    STATS_COLUMNS,
    SUMMARY_COLUMNS,
    pick_pair,
)

# --------------------------------------------------------------------------------------
# Quantiles of the normal and Student t distributions (no scipy inside the package)
# --------------------------------------------------------------------------------------

# Acklam's rational approximation of the normal quantile (relative error < 1.2e-9),
# refined below by one Halley step on erfc to full double precision.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771972e01, -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
      3.754408661907416e00)


def normal_quantile(p: float) -> float:
    """Quantile of the standard normal distribution, ``Phi^{-1}(p)`` for ``0 < p < 1``.

    Acklam's rational approximation followed by one Halley step on
    ``Phi(x) = erfc(-x / sqrt(2)) / 2``; accurate to about 1e-15 in the central range.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"normal_quantile: p must be in (0, 1), got {p}")
    if p > 0.5:
        # symmetry; 1 - p is exact here (Sterbenz), and the lower-tail erfc below is accurate
        return -normal_quantile(1.0 - p)
    p_low = 0.02425
    if p < p_low:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0)
    else:
        q = p - 0.5
        r = q * q
        x = (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q / (
            ((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
    # Halley step: e = Phi(x) - p, u = e / phi(x); x <- x - u / (1 + x u / 2)
    e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
    u = e * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
    return x - u / (1.0 + x * u / 2.0)


def _t_abs_cdf(t: float, df: int) -> float:
    """``A(t | df) = P(|T| <= t)`` for integer ``df >= 1`` and ``t >= 0``, exactly.

    Abramowitz & Stegun 26.7.3-4, with ``theta = atan(t / sqrt(df))`` and ``c = cos(theta)^2``:
    odd df:  ``A = (2/pi) (theta + sin(theta) cos(theta) sum_{k=0}^{(df-3)/2} a_k c^k)``,
             ``a_0 = 1, a_k = a_{k-1} 2k / (2k + 1)`` (the sum is empty for df = 1);
    even df: ``A = sin(theta) sum_{k=0}^{(df-2)/2} b_k c^k``,
             ``b_0 = 1, b_k = b_{k-1} (2k - 1) / (2k)``.
    All terms are positive, so the finite sums have no cancellation.
    """
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        n_terms = (df - 1) // 2  # k = 0 .. (df - 3) / 2
        k = np.arange(1, n_terms)
        coef = np.concatenate([[1.0], np.cumprod(2 * k / (2 * k + 1.0))]) if n_terms else []
        total = float(np.sum(np.asarray(coef) * c ** np.arange(n_terms)))
        return 2.0 / math.pi * (theta + s * math.sqrt(c) * total)
    n_terms = df // 2  # k = 0 .. (df - 2) / 2
    k = np.arange(1, n_terms)
    coef = np.concatenate([[1.0], np.cumprod((2 * k - 1) / (2.0 * k))])
    return s * float(np.sum(coef * c ** np.arange(n_terms)))


def _t_density(t: float, df: int) -> float:
    """Student t density, computed in log space (``lgamma``) so large df cannot overflow."""
    log_f = (math.lgamma((df + 1) / 2.0) - math.lgamma(df / 2.0)
             - 0.5 * math.log(df * math.pi) - (df + 1) / 2.0 * math.log1p(t * t / df))
    return math.exp(log_f)


def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t with integer ``df >= 1`` degrees of freedom, ``p`` in [0.5, 1).

    Hill's approximation (G. W. Hill, "Algorithm 396: Student's t-quantiles", CACM 1970,
    as used by R's ``qt``) gives a start accurate to ~1e-6 or better; for ``df <= 2000``
    a few Newton steps on the exact integer-df CDF (``_t_abs_cdf``) polish it to ~1e-13.
    Above 2000 Hill's normal-based expansion alone is already far below 1e-9 in error.
    """
    if not 0.5 <= p < 1.0:
        raise ValueError(f"t_quantile: p must be in [0.5, 1), got {p}")
    if int(df) != df or df < 1:
        raise ValueError(f"t_quantile: df must be a positive integer, got {df}")
    df = int(df)
    if p == 0.5:
        return 0.0
    two_tail = 2.0 * (1.0 - p)  # P(|T| > q)
    if df == 1:  # Cauchy: exact
        return math.tan(math.pi * (p - 0.5))
    if df == 2:  # exact closed form
        return math.sqrt(2.0 / (two_tail * (2.0 - two_tail)) - 2.0)
    a = 1.0 / (df - 0.5)
    b = 48.0 / (a * a)
    c = ((20700.0 * a / b - 98.0) * a - 16.0) * a + 96.36
    d = ((94.5 / (b + c) - 3.0) / b + 1.0) * math.sqrt(a * math.pi / 2.0) * df
    y = (d * two_tail) ** (2.0 / df)
    if y > 0.05 + a:
        # asymptotic inverse expansion about the normal quantile
        x = normal_quantile(0.5 * two_tail)
        y = x * x
        if df < 5:
            c += 0.3 * (df - 4.5) * (x + 0.6)
        c = (((0.05 * d * x - 5.0) * x - 7.0) * x - 2.0) * x + b + c
        y = (((((0.4 * y + 6.3) * y + 36.0) * y + 94.5) / c - y - 3.0) / b + 1.0) * x
        y = math.expm1(a * y * y)
    else:
        y = ((1.0 / (((df + 6.0) / (df * y) - 0.089 * d - 0.822) * (df + 2.0) * 3.0)
              + 0.5 / (df + 4.0)) * y - 1.0) * (df + 1.0) / (df + 2.0) + 1.0 / y
    q = math.sqrt(df * y)
    if df <= 2000:
        for _ in range(4):
            # F(q) - p with F(q) = (1 + A(q)) / 2 for q >= 0
            step = ((1.0 + _t_abs_cdf(q, df)) / 2.0 - p) / _t_density(q, df)
            q -= step
            if abs(step) <= 1e-15 * q:
                break
    return q


def _t_multipliers(n: np.ndarray, level: float) -> np.ndarray:
    """``t_{(1 + level)/2, n - 1}`` for each n (NaN where ``n < 2``).

    n : ndarray of shape (K,) of split counts. One quantile per distinct n.
    """
    n = np.asarray(n, dtype=np.int64)
    out = np.full(n.shape, np.nan)
    p = (1.0 + level) / 2.0
    for value in np.unique(n[n >= 2]):
        out[n == value] = t_quantile(p, int(value) - 1)
    return out


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _require_columns(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ResultsError(
            f"{what}: missing column(s) {', '.join(missing)}; "
            f"expected {', '.join(columns)}"
        )


def _mean_sd_ci(groups, level: float) -> pd.DataFrame:
    """n, mean, sd (ddof=1), sem and the t interval of one value column per group."""
    out = groups.agg(n_splits="count", mean="mean", sd="std").reset_index()
    n = out["n_splits"].to_numpy(dtype=np.int64)
    sd = out["sd"].to_numpy(dtype=float, copy=True)
    sd[n < 2] = np.nan  # pandas already gives NaN for n == 1; make it explicit
    sem = sd / np.sqrt(np.maximum(n, 1))
    half = _t_multipliers(n, level) * sem
    mean = out["mean"].to_numpy(dtype=float)
    out["sd"] = sd
    out["sem"] = sem
    out["ci_low"] = mean - half
    out["ci_high"] = mean + half
    return out


# --------------------------------------------------------------------------------------
# summary.csv and paired.csv
# --------------------------------------------------------------------------------------

def summarize(splits: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Mean test error per (task, model, m) with its sd, sem and t interval.

    Parameters
    ----------
    splits : DataFrame
        One row per (task, model, m, split); needs ``task, model, family, m, split, error``.
        Missing errors (NaN) are left out of the count and of every statistic.
    level : float
        Confidence level of the interval for the mean.

    Returns
    -------
    DataFrame with columns ``task, model, family, m, n_splits, error_mean, error_sd,
    error_sem, ci_low, ci_high, share_overlap, share_complete, share_quasi``, one row per
    (task, model, m), sorted by task, model, m. See the module docstring for the formulas
    and the ``n == 1`` rule. The shares are those of the splits table's ``separation``
    among the model's splits of that size (NaN where the column is absent or empty).
    """
    _check_level(level)
    _require_columns(splits, STATS_COLUMNS, "splits table")
    if splits.empty:
        return pd.DataFrame({c: pd.Series(dtype=float)
                             for c in (*SUMMARY_COLUMNS, *SHARE_COLUMNS)})
    df = splits.loc[:, list(STATS_COLUMNS)].copy()
    df["error"] = df["error"].astype(float)
    groups = df.groupby(["task", "model", "family", "m"], sort=True)["error"]
    out = _mean_sd_ci(groups, level)
    out = out.rename(columns={"mean": "error_mean", "sd": "error_sd", "sem": "error_sem"})
    out["m"] = out["m"].astype(np.int64)
    out["n_splits"] = out["n_splits"].astype(np.int64)
    out = out.sort_values(["task", "model", "m"], kind="stable").reset_index(drop=True)
    for column in SHARE_COLUMNS:
        out[column] = np.nan
    if "separation" in splits.columns:  # each separation's share, where a model tells them
        named = splits["separation"].astype(object)
        named = named.where(named.notna(), "").astype(str)
        told = splits.loc[named != "", ["task", "model", "m"]].assign(sep=named[named != ""])
        if not told.empty:
            shares = pd.crosstab([told["task"], told["model"], told["m"]], told["sep"],
                                 normalize="index")
            shares = shares.reindex(columns=list(SEPARATIONS), fill_value=0.0)
            keys = pd.MultiIndex.from_frame(out[["task", "model", "m"]])
            for name, column in zip(SEPARATIONS, SHARE_COLUMNS, strict=True):
                out[column] = shares[name].reindex(keys).to_numpy(dtype=np.float64)
    return out.loc[:, [*SUMMARY_COLUMNS, *SHARE_COLUMNS]]


def default_pair(splits: pd.DataFrame, models: Sequence[str] | None = None) -> tuple[str, str]:
    """The default comparison: the first nb-family model vs the first lr-family model.

    ``models`` gives the order (e.g. the keys of run.json's ``models``); without it, the
    order in which models first appear in ``splits``.
    """
    _require_columns(splits, ("model", "family"), "splits table")
    family = dict(zip(splits["model"], splits["family"], strict=False))
    order = list(models) if models is not None else list(pd.unique(splits["model"]))
    pair = pick_pair([(m, family.get(m)) for m in order])
    if pair is None:
        raise ResultsError(
            f"need one nb-family and one lr-family model to compare, found "
            f"{', '.join(f'{m} ({family.get(m)})' for m in order) or 'no models'}"
        )
    return pair


def paired_differences(splits: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """Per-split differences ``diff = error(model_a) - error(model_b)`` on the same split.

    Returns a DataFrame with columns ``task, m, split, diff``, one row per (task, m, split)
    that both models have with a non-missing error, sorted by task, m, split.
    Raises ``ResultsError`` if a model is absent or a (task, model, m, split) repeats.
    """
    _require_columns(splits, STATS_COLUMNS, "splits table")
    present = set(splits["model"].unique())
    for name in (model_a, model_b):
        if name not in present:
            raise ResultsError(
                f"model '{name}' is not in the splits table (models: "
                f"{', '.join(sorted(map(str, present)))})"
            )
    keys = ["task", "m", "split"]
    sides = []
    for name, col in ((model_a, "error_a"), (model_b, "error_b")):
        part = splits.loc[splits["model"] == name, [*keys, "error"]]
        if part.duplicated(keys).any():
            raise ResultsError(f"splits table: model '{name}' has repeated (task, m, split) rows")
        sides.append(part.rename(columns={"error": col}))
    both = sides[0].merge(sides[1], on=keys, how="inner").dropna(subset=["error_a", "error_b"])
    both["diff"] = both["error_a"].astype(float) - both["error_b"].astype(float)
    both = both.sort_values(keys, kind="stable").reset_index(drop=True)
    return both.loc[:, [*keys, "diff"]]


def paired_summary(
    splits: pd.DataFrame, model_a: str, model_b: str, level: float = 0.95
) -> pd.DataFrame:
    """Mean paired difference ``error(model_a) - error(model_b)`` per (task, m).

    The difference is taken split by split (same training and test set), then summarised
    with the formulas of the module docstring: ``diff_mean``, ``diff_sem = sd / sqrt(n)``
    and the t interval ``ci_low, ci_high``. ``n_splits`` counts the splits both models have.
    A positive difference means model_b (by default LR) has the lower error.

    Returns a DataFrame with columns ``task, model_a, model_b, m, n_splits, diff_mean,
    diff_sem, ci_low, ci_high``, sorted by task, m.
    """
    _check_level(level)
    diffs = paired_differences(splits, model_a, model_b)
    if diffs.empty:
        return pd.DataFrame({c: pd.Series(dtype=float) for c in PAIRED_COLUMNS})
    out = _mean_sd_ci(diffs.groupby(["task", "m"], sort=True)["diff"], level)
    out = out.rename(columns={"mean": "diff_mean", "sem": "diff_sem"})
    out["model_a"] = model_a
    out["model_b"] = model_b
    out["m"] = out["m"].astype(np.int64)
    out["n_splits"] = out["n_splits"].astype(np.int64)
    return out.loc[:, list(PAIRED_COLUMNS)].reset_index(drop=True)


def task_paired(task) -> pd.DataFrame:
    """A task's paired rows: its ``paired.csv``, or (when absent) the run's pairs (run.json's
    ``config.compare``, else the default pair) computed from its splits; no rows when the
    run has no pair to compare (its models all of one family).

    task : ``results.TaskResults`` (``saved_paired()``, ``has_splits()``, ``splits()``,
    ``model_order()``, ``run_info``, ``folder``). Raises ``ResultsError`` when the folder has
    neither file.
    """
    saved = task.saved_paired()
    if saved is not None:
        return saved
    if not task.has_splits():
        raise ResultsError(f"{task.folder}: both {PAIRED_FILE} and {SPLITS_FILE} are "
                           f"missing, the report needs one of them; {HOW_TO_MAKE}")
    splits = task.splits()
    compare = (task.run_info.get("config") or {}).get("compare") or []
    pairs = [(str(a), str(b)) for a, b in compare]
    if not pairs:
        family = dict(zip(splits["model"], splits["family"], strict=False))
        order = task.model_order() or list(pd.unique(splits["model"]))
        pair = pick_pair([(m, family.get(m)) for m in order])
        if pair is None:  # one family only (e.g. a run of nb alone): nothing to pair
            return pd.DataFrame({c: pd.Series(dtype=float) for c in PAIRED_COLUMNS})
        pairs = [pair]
    return pd.concat([paired_summary(splits, a, b) for a, b in pairs], ignore_index=True)


def task_pairs(task) -> list[tuple[str, str]]:
    """The compared pairs ``(model_a, model_b)`` of a task, in ``task_paired`` order."""
    paired = task_paired(task)
    return list(dict.fromkeys(zip(paired["model_a"].astype(str),
                                  paired["model_b"].astype(str), strict=True)))


def task_rng(seed: int, task: str) -> np.random.Generator:
    """The random stream of one task's analysis (the report's bootstrap, the guard's
    simulated curves), from ``(seed, crc32 of the task name)``: independent of the order of
    the tasks, the same on every machine."""
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(task.encode())]))
