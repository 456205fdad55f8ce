"""Summarise finished results folders: a Markdown table, or the same rows as a tidy CSV.

Everything here works from saved files alone (``summary.csv``, ``run.json``, and
``paired.csv`` or ``splits.csv.gz``), read through ``nbvslr.results``; nothing is re-run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

import nbvslr.views.extrapolation as extrapolation
from nbvslr.analysis import fidelity
from nbvslr.analysis.crossovers import (
    CROSSOVER_COLUMNS,
    DEFAULT_N_BOOT,
    Crossovers,
    crossover_fields,
    crossover_table,
    task_crossovers,
)
from nbvslr.analysis.extrapolate import check_extrapolable
from nbvslr.analysis.fidelity import panel_order
from nbvslr.analysis.formatting import MISSING, m_text, number
from nbvslr.analysis.metrics import LABELS, for_metric, missing_counts
from nbvslr.analysis.stats import task_pairs
from nbvslr.analysis.winner import winner
from nbvslr.models.family import DISCRIMINATIVE
from nbvslr.models.registry import approach
from nbvslr.results.read import PathLike, TaskResults, load_results
from nbvslr.views.naming import GENERIC, family_of, shared_titles, task_label

# --------------------------------------------------------------------------------------
# The Markdown table
# --------------------------------------------------------------------------------------

def _crossover_cell(cross: Crossovers, m_lo: int, m_hi: int,
                    have_splits: bool = True) -> str:
    if cross.first_crossover is None:
        text = "none in range"
    else:
        text = m_text(cross.first_crossover)
        if cross.interval is not None:
            low, high = cross.interval
            lo = f"<{m_lo}" if low == -math.inf else m_text(low)
            hi = f">{m_hi}" if high == math.inf else m_text(high)
            text += f" [{lo}, {hi}]"
        elif not have_splits:
            text += " [no interval: no splits file]"
        if len(cross.crossings) > 1:
            text += "; also " + ", ".join(m_text(c) for c in cross.crossings[1:])
    if cross.tie_everywhere:
        text += " (tie at every m)"
    return text


def _row_at(summary: pd.DataFrame, model: str, m: int) -> pd.Series | None:
    hit = summary[(summary["model"] == model) & (summary["m"] == m)]
    return None if hit.empty else hit.iloc[0]


def _half_width(row: pd.Series | None) -> float:
    """The interval's half-width; of an interval clipped at 0 or 1 (few splits), the longer
    side, so ``mean +- half`` holds the whole interval."""
    if row is None:
        return math.nan
    low, high = float(row["ci_low"]), float(row["ci_high"])
    if low <= 0.0 or high >= 1.0:
        mean = float(row["error_mean"])
        return max(high - mean, mean - low)
    return (high - low) / 2.0


def _value(row: pd.Series | None, column: str) -> float:
    return math.nan if row is None else float(row[column])


def _number(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _crossover_cells(cross: Crossovers | None) -> dict[str, Any]:
    """``CROSSOVER_COLUMNS`` of a row: missing numbers as NaN, a missing model as ``""``."""
    fields = crossover_fields(cross)
    return {k: ("" if k == "better_after" else math.nan) if v is None else v
            for k, v in fields.items()}


def comparison(task: TaskResults, pair: tuple[str, str], *, n_boot: int = DEFAULT_N_BOOT,
               seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """One row of the report as plain values: a task and a pair ``(a, b)`` of its models.

    Keys are ``COLUMNS``; errors are means over the splits, ``*_halfwidth_*`` the
    half-width of their ``level`` interval (NaN for a single split), winners name a model
    or ``tie``, the crossover columns are ``crossovers.CROSSOVER_COLUMNS`` (NaN where
    missing: ``b_better_from`` when b is not significantly better at the end, the crossover
    when the curves do not cross in the range; the interval's ends may be -inf / inf,
    before / after the range).
    """
    paired, cross = task_crossovers(task, pair, n_boot=n_boot, seed=seed, level=level)
    a, b = str(paired["model_a"].iloc[0]), str(paired["model_b"].iloc[0])
    m_lo, m_hi = int(paired["m"].iloc[0]), int(paired["m"].iloc[-1])
    asym = task.run_info.get("asymptotic_error") or {}
    row: dict[str, Any] = {"task": task.name, "model_a": a, "model_b": b,
                           "m_min": m_lo, "m_max": m_hi}
    for end, m in (("min", m_lo), ("max", m_hi)):
        for role, model in (("a", a), ("b", b)):
            hit = _row_at(task.summary, model, m)
            row[f"{role}_error_{end}_m"] = _value(hit, "error_mean")
            row[f"{role}_halfwidth_{end}_m"] = _half_width(hit)
            # the splits of that mean (fewer than the run's where a metric has no value)
            row[f"_{role}_n_{end}_m"] = None if hit is None else int(hit["n_splits"])
        row[f"winner_{end}_m"] = winner(paired[paired["m"] == m].iloc[0])
    row.update(_crossover_cells(cross))
    row["a_asymptotic"] = _number(asym.get(a))
    row["b_asymptotic"] = _number(asym.get(b))
    row["majority"] = _number(task.run_info.get("majority_error"))
    row["splits"] = int(paired["n_splits"].max())
    row["folder"] = str(task.folder)
    row["_cross"] = cross
    row["_families"] = (family_of(task, a), family_of(task, b))
    return row


def single(task: TaskResults, model: str) -> dict[str, Any]:
    """A report row of one model of a task that has no pair to compare (no generative and
    discriminative model both, e.g. a run of nb alone): the a side is the model, the b side,
    winners and crossover are missing (NaN, or ``MISSING`` for the winners)."""
    rows = task.summary[task.summary["model"] == model]
    m_lo, m_hi = int(rows["m"].min()), int(rows["m"].max())
    asym = task.run_info.get("asymptotic_error") or {}
    row: dict[str, Any] = {"task": task.name, "model_a": model, "model_b": "",
                           "m_min": m_lo, "m_max": m_hi}
    for end, m in (("min", m_lo), ("max", m_hi)):
        hit = _row_at(task.summary, model, m)
        row[f"a_error_{end}_m"] = _value(hit, "error_mean")
        row[f"a_halfwidth_{end}_m"] = _half_width(hit)
        row[f"b_error_{end}_m"] = row[f"b_halfwidth_{end}_m"] = math.nan
        row[f"winner_{end}_m"] = MISSING
    row.update(_crossover_cells(None))
    row["b_asymptotic"] = math.nan
    row["a_asymptotic"] = _number(asym.get(model))
    row["majority"] = _number(task.run_info.get("majority_error"))
    row["splits"] = int(rows["n_splits"].max())
    row["folder"] = str(task.folder)
    row["_cross"] = None
    row["_families"] = (family_of(task, model), "")
    return row


COLUMNS = (
    "task", "model_a", "model_b", "m_min", "m_max",
    "a_error_min_m", "a_halfwidth_min_m", "b_error_min_m", "b_halfwidth_min_m", "winner_min_m",
    "a_error_max_m", "a_halfwidth_max_m", "b_error_max_m", "b_halfwidth_max_m", "winner_max_m",
    *CROSSOVER_COLUMNS, "a_asymptotic", "b_asymptotic", "majority", "splits", "folder",
)
"""The columns of ``report --format csv``: one row per task and compared pair; the crossover
columns are ``Results.crossovers``'s (``crossovers.CROSSOVER_COLUMNS``)."""


def titles(rows: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """The headings of the rows' a and b columns: their families in capitals when every
    compared pair is of the same two families (``naming.shared_titles``), else None (the
    columns are then "a" and "b")."""
    return shared_titles(r["_families"] for r in rows if r["_cross"] is not None)


def _label(row: Mapping[str, Any], titled: bool = True) -> str:
    a, b = row["model_a"], row["model_b"]
    if row["_cross"] is None:
        return f"{row['task']} ({a} only)"
    return task_label(row["task"], (a, b), row["_families"], titled)


def markdown_cells(row: Mapping[str, Any], have_splits: bool, titled: bool) -> list[str]:
    """The Markdown cells of one row of ``report_rows`` under ``header``: its name, sizes,
    the means at each end with their winners, the crossover, where b stays better, the
    asymptotic and majority errors."""
    label = _label(row, titled)
    cells = [label, f"{row['m_min']}–{row['m_max']}"]
    for end in ("min", "max"):
        for role in ("a", "b"):
            mean, half = row[f"{role}_error_{end}_m"], row[f"{role}_halfwidth_{end}_m"]
            if math.isnan(mean):
                cells.append(MISSING)
            elif not math.isfinite(half):
                n = row.get(f"_{role}_n_{end}_m")
                cells.append(f"{number(mean)} (n={row['splits'] if n is None else n})")
            else:
                cells.append(f"{number(mean)} ± {number(half)}")
        cells.append(row[f"winner_{end}_m"])
    if row["_cross"] is None:  # one model, no pair
        cells += [MISSING, MISSING]
    else:
        cells.append(_crossover_cell(row["_cross"], row["m_min"], row["m_max"], have_splits))
        sig = row["b_better_from"]
        cells.append("never" if math.isnan(sig) else str(int(sig)))
    cells.append(f"{number(row['a_asymptotic'])} / {number(row['b_asymptotic'])}")
    cells.append(number(row["majority"]))
    return cells


def header(names: tuple[str, str] | None) -> tuple[str, ...]:
    """The table's header, its a and b columns headed ``names`` (``titles``), else
    ``naming.GENERIC``."""
    a, b = names or GENERIC
    return ("task", "m", f"{a} @ min m", f"{b} @ min m", "winner", f"{a} @ max m",
            f"{b} @ max m", "winner", "crossover [95% CI]", f"{b} better from",
            f"asymptotic {a} / {b}", "majority")


NOTES = """\
- Errors are mean test errors over the splits ± the half-width of the 95% Student t
  interval of the mean (`mean (n=1)`: a single split, no interval).
- winner: from the paired differences {A} − {B} on the same splits; {wb} (or {wa}) when
  their 95% interval lies entirely above (below) 0, `tie` when it contains 0.
- crossover: the first m where the mean of {A} − {B} changes sign, linearly interpolated
  between sizes (later sign changes follow "also"); the bracket is a {pct}% bootstrap
  percentile interval ({n_boot} resamples of the splits within each m); `<m` / `>m`: the
  resampled curves often cross before / after the plotted range.
- {B} better from: the smallest m from which {B} is significantly better at every larger m.
- asymptotic: the error of each model trained on all the rows and scored on the same rows
  (run.json), an optimistic estimate of the paper's ε(h, ∞){rest}"""

#: The end of NOTES: with the clause on the side whose models are all discriminative (LR,
#: whose all-rows error is 0 on a linearly separable dataset), or without it.
NOTES_END_ZERO = """: 0 for {X} when the whole dataset
  is linearly separable; majority: the error of always predicting the majority class."""
NOTES_END = """; majority: the error of always
  predicting the majority class."""

GENERIC_NOTE = """\
- a, b: the two models of the row's pair, named after its task (`task (a vs b)`); the
  table's pairs are of different families."""

PAIR_NOTE = """\
- A row `task (a vs b)` compares two other models of the run (the config's `compare`) in the
  same way: a in the {A} columns, b in the {B} columns; its winners name the model."""

SINGLE_NOTE = """\
- A row `task (a only)` is a model of a run that has no pair to compare (no model on one
  side of it): its errors in the {A} columns, `n/a` where a pair is needed."""


def discriminative_side(rows: Sequence[Mapping[str, Any]],
                        names: tuple[str, str] | None) -> str | None:
    """The heading (of ``names``, else ``GENERIC``) of the side of the rows' pairs whose
    models are all of a discriminative family (b before a), or None when neither side is:
    the side whose all-rows error is 0 on a linearly separable dataset."""
    pairs = [r["_families"] for r in rows if r["_cross"] is not None]
    A, B = names or GENERIC
    for side, heading in ((1, B), (0, A)):
        if pairs and all(approach(p[side]) == DISCRIMINATIVE for p in pairs):
            return heading
    return None


def notes_text(names: tuple[str, str] | None, *, level: float, n_boot: int,
               rows: Sequence[Mapping[str, Any]] | None = None) -> str:
    """The definitions under the table, for its headings ``names`` (``titles``) and its
    ``rows`` (which side the asymptotic note's separable clause names,
    ``discriminative_side``; without rows, b)."""
    A, B = names or GENERIC
    if names is None:  # a winner is the model's name
        wa, wb = "a's name", "b's name"
    else:
        wa, wb = f"`{A.lower()}`", f"`{B.lower()}`"
    side = B if rows is None else discriminative_side(rows, names)
    rest = NOTES_END if side is None else NOTES_END_ZERO.format(X=side)
    text = NOTES.format(A=A, B=B, wa=wa, wb=wb, pct=round(100 * level), n_boot=n_boot,
                        rest=rest)
    return text if names is not None else text + "\n" + GENERIC_NOTE


def row_notes(rows: Sequence[Mapping[str, Any]], names: tuple[str, str] | None) -> str:
    """The notes on the rows' names under the headings ``names`` (``titles``): a row
    ``task (a vs b)`` of another pair of the same families (``PAIR_NOTE``), a row of one
    model (``SINGLE_NOTE``); "" when there are none."""
    A, B = names or GENERIC
    text = ""
    if names is not None and any(
            _label(r, True) != r["task"] for r in rows if r["_cross"] is not None):
        text += PAIR_NOTE.format(A=A, B=B) + "\n"
    if any(r["_cross"] is None for r in rows):
        text += SINGLE_NOTE.format(A=A, B=B) + "\n"
    return text


def tasks_of(results: PathLike | Iterable[PathLike] | Sequence[TaskResults]
              ) -> list[TaskResults]:
    """The tasks of results folders, or the given tasks themselves (tables in memory, as
    ``nbvslr.run(..., out=None)`` returns them)."""
    if not isinstance(results, PathLike):
        results = list(results)
        if results and all(isinstance(r, TaskResults) for r in results):
            return results
    return load_results(results)


def missing_note(rows: Sequence[Mapping[str, Any]], metric: str) -> str:
    """The note under a metric's table: which models' splits had no value and why (those
    splits are left out of its means and paired differences)."""
    lines = []
    for task in {id(r["_task"]): r["_task"] for r in rows}.values():
        missing = missing_counts(task.splits(), "error")  # the metric is the view's error
        if not missing:
            continue
        why = task.run_info.get("no_probabilities") or {}
        for model, count in missing.items():
            reason = (why.get(model) or {}).get("reason") or "no value"
            lines.append(f"- {task.name}: {count} splits of {model} have no {metric} "
                         f"({reason}); the means and paired differences leave them out.")
    return "\n".join(lines) + "\n" if lines else ""


def report_rows(
    results_dirs: PathLike | Iterable[PathLike] | Sequence[TaskResults],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
    metric: str = "error",
) -> list[dict[str, Any]]:
    """``comparison`` of every task found under ``results_dirs`` and every pair it compared,
    tasks in the figure's panel order (``fidelity.panel_order``), pairs in ``paired.csv``
    order.

    A row's ``"_cross"`` holds the task's ``Crossovers`` (for the Markdown).
    ``results_dirs`` may also be a list of ``TaskResults`` (tables in memory). ``metric``:
    the rows of that metric (``analysis.metrics.for_metric``; their columns keep the
    error's names).
    """
    tasks = [for_metric(t, metric) for t in tasks_of(results_dirs)]
    names = [t.name for t in tasks]
    rows = []
    for i in panel_order(names):
        task = tasks[i]
        pairs = task_pairs(task)
        made = [comparison(task, pair, n_boot=n_boot, seed=seed, level=level)
                for pair in pairs] or [single(task, model) for model in task.model_order()]
        for row in made:
            row["_duplicate"] = names.count(task.name) > 1
            row["_splits_file"] = task.has_splits()
            row["_task"] = task
            rows.append(row)
    return rows


def report_csv(
    results_dirs: PathLike | Iterable[PathLike] | Sequence[TaskResults],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
    metric: str = "error",
) -> str:
    """The report as a tidy CSV: one row per task and compared pair, columns ``COLUMNS``,
    plain numbers (``pandas.read_csv`` reads it back as it is); of ``metric`` (the columns
    keep the error's names; asymptotic and majority empty for another metric)."""
    rows = report_rows(results_dirs, n_boot=n_boot, seed=seed, level=level, metric=metric)
    return csv_text(csv_table(rows))


def csv_table(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """``report_rows`` as the table of ``report_csv``: columns ``COLUMNS``."""
    return crossover_table([{c: row[c] for c in COLUMNS} for row in rows], COLUMNS)


def csv_text(table: pd.DataFrame) -> str:
    """A report table as ``report_csv`` writes it (6 significant digits, ``\\n`` lines)."""
    return table.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def verdict_lines(rows: Sequence[Mapping[str, Any]]) -> str:
    """One line per row of ``report_rows``: the task, its sizes, the winner at the smallest
    and the largest m (the table's rule), the crossover and where b stays better, aligned::

        boston   m 2–59   winner nb → lr   crossover 40.6 [37.8, 42.2]   lr better from 44
    """
    cells = []
    titled = titles(rows) is not None
    for row in rows:
        b = row["model_b"]
        label = _label(row, titled)
        if row["_duplicate"]:  # one task name in two folders: which one, as the table says
            label += f" ({row['folder']})"
        if row["_cross"] is None:  # one model, no pair
            cells.append([label, f"m {row['m_min']}–{row['m_max']}",
                          f"error {number(row['a_error_min_m'])} → "
                          f"{number(row['a_error_max_m'])}", "no pair to compare", ""])
            continue
        cross = _crossover_cell(row["_cross"], row["m_min"], row["m_max"], row["_splits_file"])
        cross = cross.split(" [no interval")[0]  # the table's note says why; one line here
        sig = row["b_better_from"]
        cells.append([label, f"m {row['m_min']}–{row['m_max']}",
                      f"winner {row['winner_min_m']} → {row['winner_max_m']}",
                      "no crossover" if cross == "none in range" else f"crossover {cross}",
                      "" if math.isnan(sig) else f"{b} better from {int(sig)}"])
    widths = [max((len(c[k]) for c in cells), default=0) for k in range(5)]
    return "".join("   ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                   + "\n" for line in cells)


def separation_lines(tasks: Sequence[TaskResults]) -> str:
    """One line per (task, model) whose summary has quasi-separated training sets (its
    ``share_quasi``): the sizes that have them and the largest share; "" when none."""
    lines = []
    for task in tasks:
        summary = task.summary
        if "share_quasi" not in summary.columns:
            continue  # written before the shares existed
        for model, rows in summary.groupby("model", sort=False):
            quasi = rows[rows["share_quasi"].fillna(0.0) > 0.0]
            if quasi.empty:
                continue
            top = quasi.loc[quasi["share_quasi"].idxmax()]
            share = top["share_quasi"]
            shown = f"{share:.0%}" if share >= 0.01 else f"{share:.1%}"
            lines.append(f"- {task.name} ({model}): quasi-separated training sets at m = "
                         f"{int(quasi['m'].min())}–{int(quasi['m'].max())}, up to {shown} of "
                         f"the splits (m = {int(top['m'])})")
    if not lines:
        return ""
    return ("\nTraining sets that some direction separates only in part (`separation: quasi` in "
            "splits.csv, docs/results.md):\n\n" + "\n".join(lines) + "\n")


def report_table(
    results_dirs: PathLike | Iterable[PathLike] | Sequence[TaskResults],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
    notes: bool = True,
    paper: bool = True,
    rows: Sequence[dict[str, Any]] | None = None,
    extrapolate: bool = False,
    beyond_reach: bool = False,
    metric: str = "error",
) -> str:
    """A Markdown table with one row per task found under ``results_dirs`` and pair it
    compared (``report_rows``).

    Per row: the pair's (a, b) error at the smallest and the largest m with the 95%
    interval's half-width, the winner at each end (``analysis.winner.winner``), the
    first crossover with its bootstrap interval (``crossovers``, seeded from ``seed`` and
    the task name), the first m from which b stays significantly better, the asymptotic
    errors and the majority-class error (run.json). ``paired.csv`` is used when present,
    else computed from ``splits.csv.gz``; without ``splits.csv.gz`` the crossover has no
    interval. Rows follow the figure's panel order (``fidelity.panel_order``). ``notes``
    appends the definitions. ``paper`` appends, when there are panels of Figure 1 among the
    tasks, their comparison with the paper's curves (``fidelity.markdown``). ``rows``:
    ``report_rows`` of the same arguments, when already made. The a and b columns are
    headed by the pairs' families when all pairs have the same two (``titles``), else "a"
    and "b". ``extrapolate`` appends the section past the grid (``extrapolation.section``,
    its own number of draws), ``beyond_reach`` looks there for crossovers past the reach.
    ``metric``: the table of that metric instead of the test error (a line above the table
    names it, the notes say which splits had no value and why; no comparison with the
    paper, which plots the test error alone; the extrapolation only of the metrics
    ``check_extrapolable`` allows).
    """
    if extrapolate:
        check_extrapolable(metric)
    if rows is None:
        rows = report_rows(results_dirs, n_boot=n_boot, seed=seed, level=level,
                           metric=metric)
    names = titles(rows)
    head = header(names)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    if metric != "error":
        lines[:0] = [f"Metric: {LABELS[metric]} (the columns headed for the error show it; "
                     "no asymptotic or majority value).", ""]
    for row in rows:
        cells = markdown_cells(row, row["_splits_file"], names is not None)
        if row["_duplicate"]:
            cells[0] += f" ({row['folder']})"
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + notes_text(names, level=level, n_boot=n_boot, rows=rows) + "\n"
        text += row_notes(rows, names)
        if metric != "error":
            text += missing_note(rows, metric)
    text += separation_lines(list({id(row["_task"]): row["_task"] for row in rows}.values()))
    if paper and metric == "error":
        tasks = list({id(row["_task"]): row["_task"] for row in rows}.values())
        panels = fidelity.compare_tasks(tasks, strict=False)
        if panels:
            text += ("\nAgainst the paper's Figure 1:\n\n"
                     + fidelity.markdown(panels, notes=notes))
    if extrapolate:
        tasks = list({id(row["_task"]): row["_task"] for row in rows}.values())
        text += ("\nBeyond the grid (fitted learning curves):\n\n"
                 + extrapolation.section(tasks, seed=seed, level=level, notes=notes,
                                         beyond=beyond_reach))
    return text
