"""The names and columns of a results folder: the one place that defines them.

For each task, in ``<out>/<task>/``:

- ``SPLITS_FILE`` (``splits.csv.gz``): one row per (model, m, split), columns
  ``SPLIT_COLUMNS``, sorted by model, m, split; gzip with ``mtime = 0`` and no file name, so
  the bytes depend only on the numbers.
- ``SUMMARY_FILE`` (``summary.csv``): ``nbvslr.analysis.stats.summarize`` of it, columns
  ``SUMMARY_COLUMNS``, floats written as ``FLOAT_FORMAT``.
- ``PAIRED_FILE`` (``paired.csv``): ``nbvslr.analysis.stats.paired_summary`` of every
  compared pair (the config's ``compare``; by default every generative model against every
  discriminative one, ``nbvslr.config.pairs.pick_pairs``), one pair after the other, columns
  ``PAIRED_COLUMNS``.
- ``RUN_FILE`` (``run.json``): the resolved config, the task, the models, asymptotic and
  majority-class errors, package versions, timings and the machine.
- ``CURVE_FILE`` (``curve.png``): ``nbvslr.views.plots.plot_task``, drawn by the runner.
- ``MANIFEST_FILE`` (``files.sha256``): the sha256 of each of the files above, in the format
  of ``sha256sum`` (``sha256sum -c files.sha256`` checks them), written last: the files it
  lists are one unit, read only if each has its listed sha256 (``nbvslr.results.read``).
- ``CHECKPOINTS/m=<m>.csv.gz``: the rows of one finished size, plus
  ``CHECKPOINTS/FINGERPRINT_FILE`` (what they were computed for, and the sha256 of each).
- ``.lock`` (``nbvslr.results.lock.LOCK_FILE``): the lock of the run writing the task.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nbvslr.errors import ResultsError

DEFAULT_OUT = Path("results")
"""Where ``nbvslr run`` writes, relative to the current folder."""

SPLITS_FILE = "splits.csv.gz"
SUMMARY_FILE = "summary.csv"
PAIRED_FILE = "paired.csv"
RUN_FILE = "run.json"
CURVE_FILE = "curve.png"
MANIFEST_FILE = "files.sha256"
SEALED_FILES = (SPLITS_FILE, SUMMARY_FILE, PAIRED_FILE, CURVE_FILE, RUN_FILE)
"""The files a finished run writes in a task folder, each listed in ``MANIFEST_FILE``."""
CHECKPOINTS = ".checkpoints"
FINGERPRINT_FILE = "fingerprint.json"

SPLIT_COLUMNS = (
    "task", "model", "family", "m", "split", "error", "separable", "separation", "n_iter",
    "converged",
)
"""Columns of a splits table, in file order."""

SEPARATIONS = ("overlap", "complete", "quasi")
"""The values of the splits table's ``separation`` column (a two-class unpenalised LR's
training set: ``nbvslr.models.lr.separation``); empty for a model that does not tell them
apart, and in a folder written before the column existed."""

STATS_COLUMNS = SPLIT_COLUMNS[: SPLIT_COLUMNS.index("error") + 1]
"""The columns of a splits table that the statistics read (the others describe the fit)."""

METRICS = ("error", "log_loss", "brier", "train_error")
"""What a run can measure of each split (the config's ``metrics``), in column order:
``error`` the test 0-1 error (always measured), ``log_loss`` and ``brier`` the test
log-loss and Brier score of the model's class probabilities, ``train_error`` the 0-1 error
on the split's own training rows (``nbvslr.models.probabilities``)."""
DEFAULT_METRICS = ("error",)
EXTRA_METRICS = METRICS[1:]
"""The metrics written as columns of their own after ``error`` when a run measures them."""


def split_columns(metrics: tuple[str, ...] = DEFAULT_METRICS) -> tuple[str, ...]:
    """The columns of a splits table of a run measuring ``metrics``: ``SPLIT_COLUMNS`` with
    one column per metric other than ``error`` right after it, in ``METRICS`` order (the
    default, ``error`` alone, gives ``SPLIT_COLUMNS``)."""
    at = SPLIT_COLUMNS.index("error") + 1
    extra = tuple(m for m in EXTRA_METRICS if m in metrics)
    return SPLIT_COLUMNS[:at] + extra + SPLIT_COLUMNS[at:]


def metrics_of(df: pd.DataFrame) -> tuple[str, ...]:
    """The metrics a splits table holds, in ``METRICS`` order (``error`` always first)."""
    return ("error",) + tuple(m for m in EXTRA_METRICS if m in df.columns)


SPLITS_LEVEL = 6
"""gzip's level for ``splits.csv.gz`` of a run measuring the test error alone (its bytes as
they always were)."""
METRICS_SPLITS_LEVEL = 4
"""gzip's level for ``splits.csv.gz`` with other metrics' columns: floats of up to 17
digits, which level 6 compresses 7% smaller than 4 at 2.4 times the time (pima, 1000
splits: 879 kB in 0.10 s against 944 kB in 0.04 s; benchmarks/RESULTS.md, "Metrics")."""


def splits_level(df: pd.DataFrame) -> int:
    """gzip's level for the splits file of ``df`` (``SPLITS_LEVEL`` or
    ``METRICS_SPLITS_LEVEL``)."""
    return SPLITS_LEVEL if metrics_of(df) == DEFAULT_METRICS else METRICS_SPLITS_LEVEL


SUMMARY_COLUMNS = (
    "task", "model", "family", "m", "n_splits",
    "error_mean", "error_sd", "error_sem", "ci_low", "ci_high",
)
SHARE_COLUMNS = tuple(f"share_{name}" for name in SEPARATIONS)
"""Columns of ``summary.csv`` after ``SUMMARY_COLUMNS``: the share of each ``separation``
among a model's splits of one size (empty when the model does not tell them apart; absent
from a folder written before they existed, which the readers accept)."""
PAIRED_COLUMNS = (
    "task", "model_a", "model_b", "m", "n_splits",
    "diff_mean", "diff_sem", "ci_low", "ci_high",
)
TEXT_COLUMNS = ("task", "model", "family", "model_a", "model_b")
"""The columns of the tables that hold names: read back as the text written, whatever it
looks like (a model named ``1`` or ``NaN`` is that name, not a number or a missing value)."""
FLOAT_FORMAT = "%.10g"
"""How ``summary.csv`` and ``paired.csv`` write floats."""

HOW_TO_MAKE = "run `nbvslr run CONFIG --out DIR` first"
"""The fix named by every error about a missing or unreadable results file."""
HOW_TO_REBUILD = ("run the command again if a run was writing the task, else rebuild the "
                  "task's files with the same `nbvslr run CONFIG --out DIR`")
"""The fix named by every error about a damaged results file."""


def task_dir(out: Path, task: str) -> Path:
    """``out / task``, refusing any name that would leave ``out``."""
    if not task or "/" in task or "\\" in task or ".." in task or task.startswith("."):
        raise ResultsError(f"task name {task!r} is not a plain folder name; rename the task")
    base = Path(out).resolve()
    path = (base / task).resolve()
    if path.parent != base:
        raise ResultsError(f"task name {task!r} leaves the results folder {out}")
    return Path(out) / task


def sort_splits(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in file order (model, m, split) and columns in ``split_columns`` order (a table
    without ``separation``, made before it existed, gets it empty)."""
    if "separation" not in df.columns:
        df = df.assign(separation="")
    df = df.loc[:, list(split_columns(metrics_of(df)))]
    order = row_order(df)
    if order is None:
        return df.sort_values(["model", "m", "split"], kind="mergesort").reset_index(drop=True)
    if (order == np.arange(len(order))).all():  # a table in order is kept as is
        return df.reset_index(drop=True)
    return df.take(order).reset_index(drop=True)


def row_order(df: pd.DataFrame) -> np.ndarray | None:
    """The rows of ``df`` in file order (model, m, split), as the stable order
    ``sort_splits`` puts them in: (n,) positions; None when m and split are not integer
    columns or a model is not a string (``sort_splits`` then sorts by the values)."""
    model = df["model"]
    if (not _integers(df["m"]) or not _integers(df["split"])
            or pd.api.types.infer_dtype(model, skipna=False) != "string"):
        return None
    # the models' ranks among their sorted distinct names (a sort by name), then m, split
    codes, _ = pd.factorize(model, sort=True)
    return np.lexsort((df["split"].to_numpy(), df["m"].to_numpy(), codes))


def _integers(column: pd.Series) -> bool:
    return isinstance(column.dtype, np.dtype) and column.dtype.kind in "iu"
