"""Write a finished task's files: splits, summary, paired, curve.png and run.json.

Every file is rendered before the first is written, and written one after the other
(``files.atomic_write_bytes``), run.json last: a run killed while writing them leaves at
worst a few of them new and the others from the previous finished run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nbvslr.results.files import atomic_write_bytes, csv_gz_bytes, json_bytes, table_bytes
from nbvslr.results.layout import (
    CURVE_FILE,
    PAIRED_FILE,
    RUN_FILE,
    SPLITS_FILE,
    SUMMARY_FILE,
    sort_splits,
)
from nbvslr.results.read import TaskResults


def write_task_outputs(
    folder: Path,
    splits: pd.DataFrame,
    run_info: Mapping[str, Any],
    pairs: Sequence[tuple[str, str]],
    *,
    plot: bool = True,
) -> dict[str, Path]:
    """Write splits, summary, paired (every pair of ``pairs``, when there is one), curve.png
    (marking the first pair's crossover) and run.json; return their paths by kind."""
    from nbvslr import stats

    folder = Path(folder)
    splits = sort_splits(splits)
    summary = stats.summarize(splits)
    paired = pd.concat([stats.paired_summary(splits, a, b) for a, b in pairs],
                       ignore_index=True) if pairs else None
    files: dict[str, tuple[Path, bytes]] = {
        "splits": (folder / SPLITS_FILE, csv_gz_bytes(splits)),
        "summary": (folder / SUMMARY_FILE, table_bytes(summary)),
    }
    if paired is not None:
        files["paired"] = (folder / PAIRED_FILE, table_bytes(paired))
    if plot:
        task = _Written(name=str((run_info.get("task") or {}).get("name") or folder.name),
                        folder=folder, summary=summary, run_info=run_info,
                        table=splits, pairs_table=paired)
        files["curve"] = (folder / CURVE_FILE, _curve_png(task))
    files["run"] = (folder / RUN_FILE, json_bytes(run_info))
    for path, data in files.values():
        atomic_write_bytes(path, data)
    return {key: path for key, (path, _) in files.items()}


@dataclass(frozen=True)
class _Written(TaskResults):
    """A task as it is being written: its tables in memory, read as ``nbvslr plot`` reads
    them from the folder."""

    table: pd.DataFrame | None = None
    pairs_table: pd.DataFrame | None = None

    def has_splits(self) -> bool:
        return self.table is not None

    def splits(self) -> pd.DataFrame:
        return self.table

    def saved_paired(self) -> pd.DataFrame | None:
        return self.pairs_table


def _curve_png(task: TaskResults) -> bytes:
    """The task's curve.png: the figure ``nbvslr plot <task folder>`` draws from the files,
    byte for byte (the crossover and its bootstrap interval included)."""
    from nbvslr import plots

    return plots.render(plots.figure_of_tasks([task]), "png")
