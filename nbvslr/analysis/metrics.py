"""One metric of a task's splits as the statistics read it: the task's results seen through
one column of ``splits.csv.gz``.

Every statistic of nbvslr (the summary, the paired differences, the crossovers, the report,
the curves) reads the column ``error`` of a splits table. A run that measured more
(``metrics: [error, log_loss, brier, train_error]``) holds one column per metric; the view of
a task for a metric is the same task with that column in the place of ``error``, its summary
computed from the splits, its paired rows computed for its pairs (``stats.task_paired``),
and no asymptotic or majority-class error (those are of the 0-1 error alone). So the same
functions give every metric's tables.

A split without a value (NaN: a model without class probabilities there,
``nbvslr.models.no_probabilities``) is left out of the metric's statistics, as any missing
value is: ``n_splits`` counts the splits that have one, and a pair is compared on the
splits both models have.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

import nbvslr.analysis.stats as stats
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.results.layout import METRICS, metrics_of
from nbvslr.results.read import TaskResults

LABELS: dict[str, str] = {
    "error": "test error",
    "log_loss": "test log-loss",
    "brier": "test Brier score",
    "train_error": "training error",
}
"""How a figure or a report names each metric (its axis: ``mean <label>``)."""


def check_metric(metric: str) -> str:
    """``metric`` if it is one of ``METRICS``, else a ``ConfigError`` listing them."""
    if metric not in METRICS:
        raise ConfigError(f"--metric {metric!r}: not a metric; use one of {', '.join(METRICS)}")
    return metric


def metric_of(task: Any) -> str:
    """The metric a task's tables hold (``error`` unless it is a ``for_metric`` view)."""
    return str((getattr(task, "run_info", None) or {}).get("metric") or "error")


def label(task: Any) -> str:
    """``LABELS`` of the metric of ``task``."""
    return LABELS[metric_of(task)]


def metric_view(splits: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A splits table with the column ``metric`` as its ``error`` (the other metrics'
    columns dropped); ``ResultsError`` when the table has no such column."""
    check_metric(metric)
    if metric not in splits.columns:
        raise ResultsError(
            f"no {metric} in the splits (measured: {', '.join(metrics_of(splits))}); "
            f"rerun with metrics: [error, {metric}] in the config")
    others = [m for m in METRICS if m in splits.columns and m not in ("error", metric)]
    view = splits.drop(columns=[*others, "error"]).rename(columns={metric: "error"})
    return view.loc[:, [c if c != metric else "error" for c in splits.columns
                        if c not in others and c != "error"]]


@dataclass(frozen=True)
class MetricTask(TaskResults):
    """A task's results for one metric (``for_metric``): ``view`` its splits table with the
    metric as ``error``, ``paired`` the run's pairs computed from it (``stats.task_paired``,
    once: every table, figure and winner of the view reads it), ``whole`` the task it is a
    view of (``whole_of``)."""

    view: pd.DataFrame | None = None
    paired: pd.DataFrame | None = None
    whole: TaskResults | None = None

    def has_splits(self) -> bool:
        return True

    def splits(self) -> pd.DataFrame:
        return self.view

    def saved_paired(self) -> pd.DataFrame | None:
        return self.paired


def for_metric(task: TaskResults, metric: str) -> TaskResults:
    """``task`` seen through ``metric``: the task itself for ``error``, else a
    ``MetricTask`` (the module docstring). ``ResultsError`` naming the folder when its
    splits were not kept or do not hold the metric."""
    check_metric(metric)
    if metric_of(task) == metric:  # the error itself, or a view of it already
        return task
    if metric_of(task) != "error":
        raise ResultsError(f"{task.folder}: a view of {metric_of(task)}, not of the whole "
                           f"results; take the {metric} of those")
    if not task.has_splits():
        raise ResultsError(f"{task.folder}: the splits were not kept, and {metric} is "
                           "summarised from them; rerun the config")
    try:
        view = metric_view(task.splits(), metric)
    except ResultsError as exc:
        raise ResultsError(f"{task.folder}: {exc}") from None
    info: Mapping[str, Any] = {**task.run_info, "metric": metric, "asymptotic_error": None,
                               "majority_error": None}
    summary = stats.summarize(view, bounds=stats.value_range(info)).sort_values(
        ["model", "m"], kind="stable")
    seen = MetricTask(name=task.name, folder=task.folder, summary=summary.reset_index(drop=True),
                      run_info=info, manifest=task.manifest, sealed=task.sealed, view=view,
                      whole=task)
    return replace(seen, paired=stats.task_paired(seen))


def whole_of(task: TaskResults) -> TaskResults:
    """The task whose files ``task`` reads: ``task`` itself, or the task a ``for_metric``
    view was made from (its splits hold every metric; the view's hold one, as ``error``)."""
    whole = getattr(task, "whole", None)
    return whole if whole is not None else task


def measured(task: TaskResults) -> tuple[str, ...]:
    """The metrics ``task`` measured, in ``METRICS`` order (``error`` first): its splits
    table's columns, or without the table (a committed run keeps its tables alone) the
    config's ``metrics`` in its run.json (the default, ``[error]``, when not written)."""
    if task.has_splits():
        return metrics_of(task.splits())
    listed = (task.run_info.get("config") or {}).get("metrics") or ["error"]
    return tuple(m for m in METRICS if m == "error" or m in listed)


def missing_counts(splits: pd.DataFrame, metric: str) -> dict[str, int]:
    """How many splits of each model lack a value of ``metric`` (models with none missing
    left out)."""
    if metric not in splits.columns:
        return {}
    nan = splits[metric].isna().to_numpy()
    if not nan.any():
        return {}
    counts = pd.Series(nan).groupby(splits["model"].astype(str).to_numpy()).sum()
    return {str(k): int(v) for k, v in counts.items() if v}


def no_probabilities(splits: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """For run.json: per model, the splits without class probabilities (NaN log-loss and
    Brier score) and why, from the table's ``separable`` and ``separation`` columns."""
    col = next((m for m in ("log_loss", "brier") if m in splits.columns), None)
    if col is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    nan = splits[col].isna().to_numpy()
    sep = splits["separable"].to_numpy(dtype=bool)
    quasi = (splits["separation"].astype(str) == "quasi").to_numpy() \
        if "separation" in splits.columns else np.zeros(len(splits), dtype=bool)
    for model in pd.unique(splits["model"].astype(str)):
        mine = (splits["model"].astype(str) == model).to_numpy() & nan
        if not mine.any():
            continue
        reasons = {}
        for key, which in (("separable", mine & sep), ("quasi", mine & quasi),
                           ("not_converged", mine & ~sep & ~quasi)):
            if which.any():
                reasons[key] = int(which.sum())
        out[model] = {"splits": int(mine.sum()), **reasons,
                      "reason": "; ".join(REASONS[k] for k in reasons)}
    return out


REASONS = {
    "separable": ("a linearly separable training set: the rule is a direction (hyperplanes "
                  "drawn from the separating ones, or the capped Newton iterate), not a "
                  "scale, so it gives no class probabilities"),
    "quasi": ("a quasi-separated training set: the rule is the limit of the penalised fit "
              "as the penalty vanishes, a direction on the separated rows (their "
              "probabilities 0 or 1), so it gives no class probabilities"),
    "not_converged": ("the fit did not converge: its probabilities would be those of "
                      "wherever the solver stopped"),
}
"""Why a split has no log-loss or Brier score (``nbvslr.models.no_probabilities``)."""
