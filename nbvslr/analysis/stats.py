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
The interval is clipped to what the mean can be (``value_range``): [0, 1] for an error
(the training error and the two-class Brier score too), [0, 2] for the Brier score of K > 2
classes, [0, inf) for the log-loss; a paired difference to plus or minus that width.
With few splits the t multiplier is large (12.7 at n = 2) and the unclipped ends would
leave that range; the mean itself cannot, so the clipped interval covers it
whenever the unclipped one does (the same coverage), and every reader accepts it.

Paired differences use the same formulas on ``d_i = e_i(a) - e_i(b)`` over the splits that
both models have at that m.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from nbvslr.config.pairs import pick_pair
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
)

# --------------------------------------------------------------------------------------
# Quantiles of the normal and Student t distributions (scipy.special's ndtri and stdtrit)
# --------------------------------------------------------------------------------------


def normal_quantile(p: float) -> float:
    """Quantile of the standard normal distribution, ``Phi^{-1}(p)`` for ``0 < p < 1``
    (``scipy.special.ndtri``, Cephes: full double precision)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"normal_quantile: p must be in (0, 1), got {p}")
    return float(special.ndtri(p))


def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t with integer ``df >= 1`` degrees of freedom, ``p`` in [0.5, 1)
    (``scipy.special.stdtrit``, Boost's inverse incomplete beta)."""
    if not 0.5 <= p < 1.0:
        raise ValueError(f"t_quantile: p must be in [0.5, 1), got {p}")
    if int(df) != df or df < 1:
        raise ValueError(f"t_quantile: df must be a positive integer, got {df}")
    if p == 0.5:
        return 0.0
    return float(special.stdtrit(int(df), p))


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


def value_range(run_info) -> tuple[float, float]:
    """What a mean of the metric a task's tables hold can be (run.json's ``metric``, the
    error when absent): the log-loss [0, inf), the Brier score [0, 2] on K > 2 classes (the
    squared distance to the one-hot label), else [0, 1]."""
    info = run_info or {}
    metric = str(info.get("metric") or "error")
    if metric == "log_loss":
        return 0.0, np.inf
    classes = (info.get("task") or {}).get("classes") or ()
    return 0.0, 2.0 if metric == "brier" and len(classes) > 2 else 1.0


def _mean_sd_ci(groups, level: float, low: float, high: float) -> pd.DataFrame:
    """n, mean, sd (ddof=1), sem and the t interval of one value column per group, the
    interval clipped to ``[low, high]`` (what the mean can be)."""
    out = groups.agg(n_splits="count", mean="mean", sd="std").reset_index()
    n = out["n_splits"].to_numpy(dtype=np.int64)
    sd = out["sd"].to_numpy(dtype=float, copy=True)
    sd[n < 2] = np.nan  # pandas already gives NaN for n == 1; make it explicit
    sem = sd / np.sqrt(np.maximum(n, 1))
    half = _t_multipliers(n, level) * sem
    mean = out["mean"].to_numpy(dtype=float)
    out["sd"] = sd
    out["sem"] = sem
    out["ci_low"] = np.clip(mean - half, low, high)  # NaN stays NaN
    out["ci_high"] = np.clip(mean + half, low, high)
    return out


# --------------------------------------------------------------------------------------
# summary.csv and paired.csv
# --------------------------------------------------------------------------------------

def summarize(splits: pd.DataFrame, level: float = 0.95,
              bounds: tuple[float, float] = (0.0, 1.0)) -> pd.DataFrame:
    """Mean test error per (task, model, m) with its sd, sem and t interval.

    Parameters
    ----------
    splits : DataFrame
        One row per (task, model, m, split); needs ``task, model, family, m, split, error``.
        Missing errors (NaN) are left out of the count and of every statistic.
    level : float
        Confidence level of the interval for the mean.
    bounds : (low, high)
        What the mean can be, the interval clipped to it (``value_range``).

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
    out = _mean_sd_ci(groups, level, *bounds)
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
    """The default comparison: the first generative model vs the first discriminative one
    (``nbvslr.config.pairs.pick_pair``, by the models' families).

    ``models`` gives the order (e.g. the keys of run.json's ``models``); without it, the
    order in which models first appear in ``splits``.
    """
    _require_columns(splits, ("model", "family"), "splits table")
    family = dict(zip(splits["model"], splits["family"], strict=False))
    order = list(models) if models is not None else list(pd.unique(splits["model"]))
    pair = pick_pair([(m, family.get(m)) for m in order])
    if pair is None:
        raise ResultsError(
            f"need one generative and one discriminative model to compare, found "
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
    splits: pd.DataFrame, model_a: str, model_b: str, level: float = 0.95,
    width: float = 1.0,
) -> pd.DataFrame:
    """Mean paired difference ``error(model_a) - error(model_b)`` per (task, m).

    The difference is taken split by split (same training and test set), then summarised
    with the formulas of the module docstring: ``diff_mean``, ``diff_sem = sd / sqrt(n)``
    and the t interval ``ci_low, ci_high``. ``n_splits`` counts the splits both models have.
    A positive difference means model_b has the lower error. ``width``: the largest
    difference there can be (the value range's width, ``value_range``), the interval
    clipped to plus or minus it.

    Returns a DataFrame with columns ``task, model_a, model_b, m, n_splits, diff_mean,
    diff_sem, ci_low, ci_high``, sorted by task, m.
    """
    _check_level(level)
    diffs = paired_differences(splits, model_a, model_b)
    if diffs.empty:
        return pd.DataFrame({c: pd.Series(dtype=float) for c in PAIRED_COLUMNS})
    out = _mean_sd_ci(diffs.groupby(["task", "m"], sort=True)["diff"], level, -width, width)
    out = out.rename(columns={"mean": "diff_mean", "sem": "diff_sem"})
    out["model_a"] = model_a
    out["model_b"] = model_b
    out["m"] = out["m"].astype(np.int64)
    out["n_splits"] = out["n_splits"].astype(np.int64)
    return out.loc[:, list(PAIRED_COLUMNS)].reset_index(drop=True)


def task_paired(task) -> pd.DataFrame:
    """A task's paired rows: its ``paired.csv``, or (when absent) the run's pairs (run.json's
    ``config.compare``, else the default pair) computed from its splits; no rows when the
    run has no pair to compare (no generative and discriminative model both).

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
        if pair is None:  # one side only (e.g. a run of nb alone): nothing to pair
            return pd.DataFrame({c: pd.Series(dtype=float) for c in PAIRED_COLUMNS})
        pairs = [pair]
    low, high = value_range(task.run_info)
    return pd.concat([paired_summary(splits, a, b, width=high - low) for a, b in pairs],
                     ignore_index=True)


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
