"""Summarise finished results folders as a Markdown table.

Everything here works from saved files alone (``summary.csv``, ``run.json``, and
``paired.csv`` or ``splits.csv.gz``), read through ``nbvslr.results``; nothing is re-run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from nbvslr import stats
from nbvslr.errors import ResultsError
from nbvslr.results.read import PathLike, TaskResults, load_results
from nbvslr.stats import DEFAULT_N_BOOT

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


def task_crossovers(task: TaskResults, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
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
    splits = task.splits() if task.has_splits() else None
    rng = stats.task_rng(seed, task.name)  # independent of the order of the tasks
    return paired, stats.crossovers(paired, splits, rng=rng, n_boot=n_boot, level=level)


def _task_row(task: TaskResults, *, n_boot: int, seed: int, level: float) -> list[str]:
    paired, cross = task_crossovers(task, n_boot=n_boot, seed=seed, level=level)
    model_a, model_b = str(paired["model_a"].iloc[0]), str(paired["model_b"].iloc[0])
    m_lo, m_hi = int(paired["m"].iloc[0]), int(paired["m"].iloc[-1])
    have_splits = task.has_splits()
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
    n_boot: int = DEFAULT_N_BOOT,
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
