"""Read a results folder back: the one reader of every file a run writes.

It reads files and computes nothing: the statistics of what it reads (a task's paired rows
when it has no ``paired.csv``, the crossovers) are ``nbvslr.analysis``'s.

A *results folder* is either one task folder (holding ``summary.csv`` or ``run.json``) or a
root holding one such folder per task; ``find_task_dirs`` accepts both. Everything here
works from saved files alone; nothing is re-run.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nbvslr.errors import MissingResultsError, ResultsError
from nbvslr.results.layout import (
    HOW_TO_MAKE,
    PAIRED_COLUMNS,
    PAIRED_FILE,
    RUN_FILE,
    SPLIT_COLUMNS,
    SPLITS_FILE,
    SUMMARY_COLUMNS,
    SUMMARY_FILE,
)

PathLike = str | os.PathLike


def read_table(path: Path, columns: Sequence[str], fix: str = HOW_TO_MAKE) -> pd.DataFrame:
    """A CSV (or gzipped CSV) results file, floats parsed exactly; ``ResultsError`` naming
    the file and ``fix`` when it cannot be read or lacks one of ``columns``."""
    try:
        df = pd.read_csv(path)  # pandas >= 3 parses floats exactly (round trip) by default
    except (OSError, EOFError, ValueError, zlib.error) as exc:  # truncated gzip, bad CSV
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResultsError(f"{path}: cannot be read ({reason}); {fix}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: missing column(s) {', '.join(missing)}; {fix}")
    return df


def read_splits(path: Path, fix: str = HOW_TO_MAKE) -> pd.DataFrame:
    """A ``splits.csv.gz`` or a checkpoint, every column of ``SPLIT_COLUMNS`` present."""
    return read_table(path, SPLIT_COLUMNS, fix)


def read_run_info(path: Path) -> dict[str, Any]:
    """A ``run.json``."""
    try:
        run_info = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: cannot be read ({exc}); {HOW_TO_MAKE}") from None
    if not isinstance(run_info, dict):
        raise ResultsError(f"{path}: expected a JSON object; {HOW_TO_MAKE}")
    return run_info


def model_order(summary: pd.DataFrame, run_info: Mapping[str, Any]) -> list[str]:
    """Models in the run's config order (run.json ``models``), then any others in the table."""
    listed = run_info.get("models") or []
    if isinstance(listed, Mapping):
        names = [str(k) for k in listed]
    else:
        names = [str(m["name"]) if isinstance(m, Mapping) else str(m) for m in listed]
    present = [str(m) for m in pd.unique(summary["model"])]
    return [m for m in names if m in present] + [m for m in present if m not in names]


@dataclass(frozen=True)
class TaskResults:
    """What one task folder holds (the splits table is read on demand: it can be large).

    Attributes
    ----------
    name : str
        The task name (``run.json`` task.name, else the folder name).
    folder : Path
    summary : DataFrame
        ``summary.csv``: one row per (model, m).
    run_info : dict
        ``run.json``.
    """

    name: str
    folder: Path
    summary: pd.DataFrame
    run_info: Mapping[str, Any]

    @property
    def title(self) -> str:
        task = self.run_info.get("task") or {}
        return str(task.get("title") or self.name)

    def model_order(self) -> list[str]:
        """Models in config order (run.json ``models``), then any others in summary order."""
        return model_order(self.summary, self.run_info)

    def has_splits(self) -> bool:
        return (self.folder / SPLITS_FILE).is_file()

    def saved_paired(self) -> pd.DataFrame | None:
        """``paired.csv`` when the folder has one, else None (never computed here: see
        ``nbvslr.analysis.stats.task_paired``)."""
        path = self.folder / PAIRED_FILE
        return read_table(path, PAIRED_COLUMNS) if path.is_file() else None

    def splits(self) -> pd.DataFrame:
        """``splits.csv.gz``, floats read exactly; ResultsError if absent or malformed."""
        if not self.has_splits():
            raise ResultsError(f"{self.folder}: {SPLITS_FILE} is missing; {HOW_TO_MAKE}")
        return read_splits(self.folder / SPLITS_FILE)


def _is_task_dir(path: Path) -> bool:
    return (path / SUMMARY_FILE).is_file() or (path / RUN_FILE).is_file()


def find_task_dirs(results_dirs: PathLike | Iterable[PathLike]) -> list[Path]:
    """The task folders under each results folder, in the order given (sorted within a root).

    A folder holding ``summary.csv`` or ``run.json`` is a task folder; otherwise its
    sub-folders that do are. Raises ``MissingResultsError`` (a usage error, exit 2) for a
    folder that does not exist or holds no task results.
    """
    if isinstance(results_dirs, str | os.PathLike):
        results_dirs = [results_dirs]
    found: list[Path] = []
    for raw in results_dirs:
        path = Path(raw)
        if not path.is_dir():
            what = "is not a folder" if path.exists() else "does not exist"
            raise MissingResultsError(f"results folder {path} {what}; {HOW_TO_MAKE}")
        if _is_task_dir(path):
            found.append(path)
            continue
        tasks = sorted(p for p in path.iterdir() if p.is_dir() and _is_task_dir(p))
        if not tasks:
            raise MissingResultsError(
                f"results folder {path} holds no task results (no {SUMMARY_FILE} and "
                f"{RUN_FILE}, nor sub-folders with them); {HOW_TO_MAKE}"
            )
        found.extend(tasks)
    return found


def load_task(folder: PathLike) -> TaskResults:
    """Read one task folder's ``summary.csv`` and ``run.json``; ResultsError if incomplete."""
    folder = Path(folder)
    missing = [f for f in (SUMMARY_FILE, RUN_FILE) if not (folder / f).is_file()]
    if missing:
        raise ResultsError(f"results folder {folder} is incomplete: {' and '.join(missing)} "
                           f"missing; {HOW_TO_MAKE}")
    summary = read_table(folder / SUMMARY_FILE, SUMMARY_COLUMNS)
    run_info = read_run_info(folder / RUN_FILE)
    name = str((run_info.get("task") or {}).get("name") or folder.name)
    summary = summary.sort_values(["model", "m"], kind="stable").reset_index(drop=True)
    return TaskResults(name=name, folder=folder, summary=summary, run_info=run_info)


def load_results(results_dirs: PathLike | Iterable[PathLike]) -> list[TaskResults]:
    """``load_task`` of every task folder ``find_task_dirs`` finds."""
    return [load_task(p) for p in find_task_dirs(results_dirs)]


def _empty_paired() -> pd.DataFrame:
    return pd.DataFrame(columns=list(PAIRED_COLUMNS))


@dataclass(frozen=True)
class Tables:
    """The summaries of one run: ``summary.csv`` and ``paired.csv`` rows of every task.

    ``paired`` may be empty (a run without one nb-family and one lr-family model).
    """

    summary: pd.DataFrame
    paired: pd.DataFrame = field(default_factory=_empty_paired)


def load_tables(folder: PathLike) -> Tables:
    """Read ``summary.csv`` and ``paired.csv`` of every task under ``folder``.

    ``folder`` is a results folder (``<folder>/<task>/summary.csv``) or one task's folder.
    A task without ``paired.csv`` contributes no paired rows.
    """
    summaries, paired = [], []
    for task_dir in find_task_dirs(folder):
        summaries.append(read_table(task_dir / SUMMARY_FILE, SUMMARY_COLUMNS)
                         .loc[:, list(SUMMARY_COLUMNS)])
        if (task_dir / PAIRED_FILE).is_file():
            paired.append(read_table(task_dir / PAIRED_FILE, PAIRED_COLUMNS)
                          .loc[:, list(PAIRED_COLUMNS)])
    return Tables(
        pd.concat(summaries, ignore_index=True),
        pd.concat(paired, ignore_index=True) if paired else _empty_paired(),
    )
