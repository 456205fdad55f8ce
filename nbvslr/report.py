"""Read finished results folders, and summarise them as a Markdown table.

Everything here works from saved files alone (``summary.csv``, ``run.json``, and
``paired.csv`` or ``splits.csv.gz``); nothing is re-run.

A *results folder* is either one task folder (holding ``summary.csv`` and ``run.json``) or a
root holding one such folder per task. ``find_task_dirs`` accepts both.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nbvslr import stats
from nbvslr.errors import ResultsError

SUMMARY_FILE = "summary.csv"
RUN_FILE = "run.json"
PAIRED_FILE = "paired.csv"
SPLITS_FILE = "splits.csv.gz"
_HOW = "run `nbvslr run CONFIG --out DIR` first"

PathLike = str | os.PathLike


# --------------------------------------------------------------------------------------
# Reading results folders
# --------------------------------------------------------------------------------------

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
        from nbvslr.plots import model_order

        return model_order(self.summary, self.run_info)

    def saved_paired(self) -> pd.DataFrame | None:
        """``paired.csv`` when the folder has one, else None (never computed)."""
        path = self.folder / PAIRED_FILE
        if not path.is_file():
            return None
        df = _read_csv(path)
        _check_columns(df, stats.PAIRED_COLUMNS, path)
        return df

    def splits(self) -> pd.DataFrame:
        """``splits.csv.gz``, floats read exactly; ResultsError if absent or malformed."""
        path = self.folder / SPLITS_FILE
        if not path.is_file():
            raise ResultsError(f"{self.folder}: {SPLITS_FILE} is missing; {_HOW}")
        try:
            df = pd.read_csv(path)  # pandas >= 3 parses floats exactly (round trip)
        except (OSError, ValueError, EOFError, zlib.error) as exc:
            raise ResultsError(f"{path}: cannot be read ({exc}); {_HOW}") from None
        _check_columns(df, stats.SPLITS_COLUMNS, path)
        return df

    def paired(self) -> pd.DataFrame:
        """``paired.csv``, or (when absent) the default pair computed from the splits."""
        saved = self.saved_paired()
        if saved is not None:
            return saved
        if not (self.folder / SPLITS_FILE).is_file():
            raise ResultsError(f"{self.folder}: both {PAIRED_FILE} and {SPLITS_FILE} are "
                               f"missing, the report needs one of them; {_HOW}")
        splits = self.splits()
        return stats.paired_summary(splits, *stats.default_pair(splits, self.model_order()))


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: cannot be read ({exc}); {_HOW}") from None


def _check_columns(df: pd.DataFrame, columns: Sequence[str], path: Path) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: missing column(s) {', '.join(missing)}; {_HOW}")


def _is_task_dir(path: Path) -> bool:
    return (path / SUMMARY_FILE).is_file() or (path / RUN_FILE).is_file()


def find_task_dirs(results_dirs: PathLike | Iterable[PathLike]) -> list[Path]:
    """The task folders under each results folder, in the order given (sorted within a root).

    A folder holding ``summary.csv`` or ``run.json`` is a task folder; otherwise its
    sub-folders that do are. Raises ``ResultsError`` for a folder that does not exist or
    holds no task results.
    """
    if isinstance(results_dirs, str | os.PathLike):
        results_dirs = [results_dirs]
    found: list[Path] = []
    for raw in results_dirs:
        path = Path(raw)
        if not path.is_dir():
            raise ResultsError(f"results folder {path} does not exist; {_HOW}")
        if _is_task_dir(path):
            found.append(path)
            continue
        tasks = sorted(p for p in path.iterdir() if p.is_dir() and _is_task_dir(p))
        if not tasks:
            raise ResultsError(
                f"results folder {path} holds no task results (no {SUMMARY_FILE} and "
                f"{RUN_FILE}, nor sub-folders with them); {_HOW}"
            )
        found.extend(tasks)
    return found


def load_task(folder: PathLike) -> TaskResults:
    """Read one task folder's ``summary.csv`` and ``run.json``; ResultsError if incomplete."""
    folder = Path(folder)
    missing = [f for f in (SUMMARY_FILE, RUN_FILE) if not (folder / f).is_file()]
    if missing:
        raise ResultsError(f"results folder {folder} is incomplete: {' and '.join(missing)} "
                           f"missing; {_HOW}")
    summary = _read_csv(folder / SUMMARY_FILE)
    _check_columns(summary, stats.SUMMARY_COLUMNS, folder / SUMMARY_FILE)
    try:
        run_info = json.loads((folder / RUN_FILE).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{folder / RUN_FILE}: cannot be read ({exc}); {_HOW}") from None
    if not isinstance(run_info, dict):
        raise ResultsError(f"{folder / RUN_FILE}: expected a JSON object; {_HOW}")
    name = str((run_info.get("task") or {}).get("name") or folder.name)
    summary = summary.sort_values(["model", "m"], kind="stable").reset_index(drop=True)
    return TaskResults(name=name, folder=folder, summary=summary, run_info=run_info)


def load_results(results_dirs: PathLike | Iterable[PathLike]) -> list[TaskResults]:
    """``load_task`` of every task folder ``find_task_dirs`` finds."""
    return [load_task(p) for p in find_task_dirs(results_dirs)]


def write_text_atomic(path: PathLike, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path``, then rename it into place."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: PathLike, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``path``, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------------------
# The Markdown table
# --------------------------------------------------------------------------------------

def _num(x: float, digits: int = 3) -> str:
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    text = f"{float(x):.{digits}f}"
    # a rounding residue such as -2.5e-16 (an error of 0 summed in floating point) is 0
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _error_cell(row: pd.Series | None) -> str:
    """``mean ± half-width`` of the 95% interval (``mean (n=1)`` when it is undefined)."""
    if row is None:
        return "n/a"
    half = (row["ci_high"] - row["ci_low"]) / 2.0
    if not math.isfinite(half):
        return f"{_num(row['error_mean'])} (n={int(row['n_splits'])})"
    return f"{_num(row['error_mean'])} ± {_num(half)}"


def _m_text(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def _crossover_cell(cross: Mapping[str, Any], m_lo: int, m_hi: int,
                    have_splits: bool = True) -> str:
    if cross["first_crossover"] is None:
        text = "none in range"
    else:
        text = _m_text(cross["first_crossover"])
        if cross["interval"] is not None:
            low, high = cross["interval"]
            lo = f"<{m_lo}" if low == -math.inf else _m_text(low)
            hi = f">{m_hi}" if high == math.inf else _m_text(high)
            text += f" [{lo}, {hi}]"
        elif not have_splits:
            text += " [no interval: no splits file]"
        if len(cross["crossings"]) > 1:
            text += "; also " + ", ".join(_m_text(c) for c in cross["crossings"][1:])
    if cross["tie_everywhere"]:
        text += " (tie at every m)"
    return text


def _row_at(summary: pd.DataFrame, model: str, m: int) -> pd.Series | None:
    hit = summary[(summary["model"] == model) & (summary["m"] == m)]
    return None if hit.empty else hit.iloc[0]


def task_crossovers(task: TaskResults, *, n_boot: int = 1000, seed: int = 0,
                    level: float = 0.95) -> tuple[pd.DataFrame, dict]:
    """The task's paired rows (one pair, increasing m) and their ``stats.crossovers``.

    The bootstrap interval needs ``splits.csv.gz``; without it (e.g. committed summaries
    only) everything but the interval is there. Its seed is derived from (``seed``, task
    name), so the report and the figure give the same interval whatever the task order.
    """
    paired = task.paired()
    paired = paired[paired["task"] == paired["task"].iloc[0]] if not paired.empty else paired
    if paired.empty:
        raise ResultsError(f"{task.folder}: no size has results for both models of the pair")
    paired = paired.sort_values("m", kind="stable")
    # a splits file that exists but cannot be read is an error
    splits = task.splits() if (task.folder / SPLITS_FILE).is_file() else None
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(task.name.encode())]))
    return paired, stats.crossovers(paired, splits, rng=rng, n_boot=n_boot, level=level)


def _task_row(task: TaskResults, *, n_boot: int, seed: int, level: float) -> list[str]:
    paired, cross = task_crossovers(task, n_boot=n_boot, seed=seed, level=level)
    model_a, model_b = str(paired["model_a"].iloc[0]), str(paired["model_b"].iloc[0])
    m_lo, m_hi = int(paired["m"].iloc[0]), int(paired["m"].iloc[-1])
    have_splits = (task.folder / SPLITS_FILE).is_file()
    asym = task.run_info.get("asymptotic_error") or {}
    label = task.name if (model_a, model_b) == ("nb", "lr") else (
        f"{task.name} ({model_a} vs {model_b})")
    cells = [label, f"{m_lo}–{m_hi}"]
    for m in (m_lo, m_hi):
        cells.append(_error_cell(_row_at(task.summary, model_a, m)))
        cells.append(_error_cell(_row_at(task.summary, model_b, m)))
        cells.append(stats.winner(paired[paired["m"] == m].iloc[0]))
    cells.append(_crossover_cell(cross, m_lo, m_hi, have_splits))
    sig = cross["lr_significant_from"]
    cells.append("never" if sig is None else str(sig))
    cells.append(f"{_num(asym.get(model_a))} / {_num(asym.get(model_b))}")
    cells.append(_num(task.run_info.get("majority_error")))
    return cells


HEADER = (
    "task", "m", "NB @ min m", "LR @ min m", "winner", "NB @ max m", "LR @ max m", "winner",
    "crossover [95% CI]", "LR better from", "asymptotic NB / LR", "majority",
)

NOTES = """\
- Errors are mean test errors over the splits ± the half-width of the 95% Student t
  interval of the mean (`mean (n=1)`: a single split, no interval).
- winner: from the paired differences NB − LR on the same splits; `lr` (or `nb`) when
  their 95% interval lies entirely above (below) 0, `tie` when it contains 0.
- crossover: the first m where the mean of NB − LR changes sign, linearly interpolated
  between sizes (later sign changes follow "also"); the bracket is a {pct}% bootstrap
  percentile interval ({n_boot} resamples of the splits within each m); `<m` / `>m`: the
  resampled curves often cross before / after the plotted range.
- LR better from: the smallest m from which LR is significantly better at every larger m.
- asymptotic: the error of each model trained on all the rows and scored on the same rows
  (run.json), an optimistic estimate of the paper's ε(h, ∞): 0 for LR when the whole dataset
  is linearly separable; majority: the error of always predicting the majority class."""


def report_table(
    results_dirs: PathLike | Iterable[PathLike],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    notes: bool = True,
    paper: bool = True,
) -> str:
    """A Markdown table with one row per task found under ``results_dirs``.

    Per task: the pair's (default NB vs LR) error at the smallest and the largest m with
    the 95% interval's half-width, the winner at each end (``stats.winner``), the first
    crossover with its bootstrap interval (``stats.crossovers``, seeded from ``seed`` and
    the task name), the first m from which LR stays significantly better, the asymptotic
    errors and the majority-class error (run.json). ``paired.csv`` is used when present,
    else computed from ``splits.csv.gz``; without ``splits.csv.gz`` the crossover has no
    interval. Rows follow the figure's panel order (``plots.panel_order``). ``notes``
    appends the definitions. ``paper`` appends, when there are panels of Figure 1 among the
    tasks, their comparison with the paper's curves (``fidelity.markdown``).
    """
    from nbvslr.plots import panel_order

    tasks = load_results(results_dirs)
    names = [t.name for t in tasks]
    tasks = [tasks[i] for i in panel_order(names)]  # the rows follow the figure's panels
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for task in tasks:
        cells = _task_row(task, n_boot=n_boot, seed=seed, level=level)
        if names.count(task.name) > 1:
            cells[0] += f" ({task.folder})"
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + NOTES.format(pct=round(100 * level), n_boot=n_boot) + "\n"
    if paper:
        from nbvslr import fidelity

        panels = fidelity.compare_tasks(tasks, strict=False)
        if panels:
            text += ("\nAgainst the paper's Figure 1:\n\n"
                     + fidelity.markdown(panels, notes=notes))
    return text
