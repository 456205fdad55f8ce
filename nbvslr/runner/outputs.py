"""A finished task's files: its tables (``nbvslr.analysis.stats``) and its curve.png
(``nbvslr.views.plots``) made here, then written by ``nbvslr.results``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nbvslr.analysis import stats
from nbvslr.errors import import_held
from nbvslr.results.layout import row_order, sort_splits
from nbvslr.results.read import TaskResults
from nbvslr.results.write import write_task_outputs


def task_tables(
    folder: Path,
    splits: pd.DataFrame,
    run_info: Mapping[str, Any],
    pairs: Sequence[tuple[str, str]],
    *,
    splits_csv: bytes | None = None,
) -> Written:
    """A finished task's tables, as its files would hold them: splits in file order,
    summary, and paired (every pair of ``pairs``, None when there is none).
    ``splits_csv``: the CSV bytes of ``splits`` in file order, when already made (the
    checkpoints' lines, ``Checkpoints.load_csv``), written as they are."""
    if splits_csv is not None:
        order = row_order(splits)
        if order is None or not (order == np.arange(len(order))).all():
            splits_csv = None  # not in file order: its lines would be in another order
    ordered = sort_splits(splits)
    summary = stats.summarize(ordered)
    paired = pd.concat([stats.paired_summary(ordered, a, b) for a, b in pairs],
                       ignore_index=True) if pairs else None
    return Written(name=str((run_info.get("task") or {}).get("name") or Path(folder).name),
                   folder=Path(folder), summary=summary, run_info=run_info,
                   table=ordered, pairs_table=paired, table_csv=splits_csv)


def write_task(
    folder: Path,
    splits: pd.DataFrame,
    run_info: Mapping[str, Any],
    pairs: Sequence[tuple[str, str]],
    *,
    plot: bool = True,
) -> dict[str, Path]:
    """Write splits, summary, paired (every pair of ``pairs``, when there is one), curve.png
    (marking the first pair's crossover) and run.json; return their paths by kind."""
    return write_tables(task_tables(folder, splits, run_info, pairs), plot=plot)


def write_tables(task: Written, *, plot: bool = True) -> dict[str, Path]:
    """Write the files of ``task`` (``task_tables``) to its folder."""
    curve = curve_png(task) if plot else None
    return write_task_outputs(task.folder, task.table, task.run_info, summary=task.summary,
                              paired=task.pairs_table, curve=curve, splits_csv=task.table_csv)


@dataclass(frozen=True)
class Written(TaskResults):
    """A finished task's tables in memory (``task_tables``), read as ``nbvslr plot`` reads
    them from the folder: ``table`` the splits, ``pairs_table`` the paired rows."""

    table: pd.DataFrame | None = None
    pairs_table: pd.DataFrame | None = None
    table_csv: bytes | None = field(default=None, repr=False)
    """``table``'s CSV bytes when made with it (``task_tables``' ``splits_csv``)."""

    def has_splits(self) -> bool:
        return self.table is not None

    def splits(self) -> pd.DataFrame:
        return self.table

    def saved_paired(self) -> pd.DataFrame | None:
        return self.pairs_table


def curve_png(task: TaskResults) -> bytes:
    """The task's curve.png: the figure ``nbvslr plot <task folder>`` draws from the files,
    byte for byte (the crossover and its bootstrap interval included)."""
    # matplotlib, imported when a task is finished, with Ctrl-C and SIGTERM held until the
    # import is done (a signal inside an extension's initialisation would break the import)
    plots = import_held("nbvslr.views.plots")
    return plots.render(plots.figure_of_tasks([task]), "png")
