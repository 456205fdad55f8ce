"""Every metric a run measured, side by side (``nbvslr report --metric all``).

The rows are each metric's report rows (``report.report_rows`` of the metric: the same
means, paired statistics, winners and crossovers as ``nbvslr report --metric X``), grouped
by task and, within a task, by pair: a pair's test error, log-loss, Brier score and training
error one under the other. Under each task's table, where the winner on the log-loss or the
Brier score differs from the winner on the test error, size by size
(``analysis.metric_winners``, from the same paired rows). The columns' definitions follow
once, with each metric's note on the splits that have no value. The HTML page
(``views.html.every_metric_page``) puts each task's figures, one per metric, above its
table. A run that measured the test error alone gets its ordinary report, with a line that
says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nbvslr.analysis import fidelity
from nbvslr.analysis.crossovers import DEFAULT_N_BOOT
from nbvslr.analysis.formatting import m_text
from nbvslr.analysis.metric_winners import (
    AGAINST_ERROR,
    Disagreement,
    disagreement,
    winners_by_m,
)
from nbvslr.analysis.metrics import LABELS, measured, missing_counts
from nbvslr.analysis.winner import NEITHER
from nbvslr.results.layout import METRICS
from nbvslr.results.read import PathLike, TaskResults
from nbvslr.views.report import (
    csv_table,
    csv_text,
    header,
    markdown_cells,
    notes_text,
    report_rows,
    report_table,
    row_notes,
    separation_lines,
    tasks_of,
    titles,
    verdict_lines,
)

ALL = "all"
"""``--metric all``: every metric the runs measured."""

ERROR_ALONE = ("These runs measured the test error alone (the config's `metrics`, by default "
               "`[error]`): this is its report; `metrics: [error, log_loss, brier, "
               "train_error]` in the config measures the others.")
"""The line above the report of ``--metric all`` when there is no other metric to show."""


@dataclass(frozen=True)
class EveryMetric:
    """The report rows of every metric measured by some task.

    ``tasks``: the tasks, in the report's order (``fidelity.panel_order``); ``metrics``:
    the metrics any of them measured, in ``METRICS`` order; ``rows``: per metric, its
    ``report_rows`` over the tasks that measured it; ``measured``: per task (``key``),
    its metrics; ``differ``: per task, the log-loss and the Brier score against the test
    error (``metric_winners.disagreement``), by pair, then metric.
    """

    tasks: tuple[TaskResults, ...]
    metrics: tuple[str, ...]
    rows: Mapping[str, list[dict[str, Any]]]
    measured: Mapping[tuple[str, str], tuple[str, ...]]
    differ: Mapping[tuple[str, str], list[Disagreement]]

    @property
    def error_alone(self) -> bool:
        """Whether no task measured more than the test error."""
        return self.metrics == ("error",)

    def task_rows(self, task: TaskResults) -> list[dict[str, Any]]:
        """The rows of ``task`` of every metric it measured: by pair, then by metric."""
        mine = [(k, row) for metric in self.metrics for k, row in enumerate(self.rows[metric])
                if key(row["_task"]) == key(task)]
        pairs = list(dict.fromkeys((r["model_a"], r["model_b"]) for _, r in mine))
        return [row for pair in pairs for _, row in mine
                if (row["model_a"], row["model_b"]) == pair]

    def view(self, task: TaskResults, metric: str) -> TaskResults:
        """``task`` seen through ``metric`` (the tables of that metric's rows)."""
        for row in self.rows[metric]:
            if key(row["_task"]) == key(task):
                return row["_task"]
        raise KeyError((task.name, metric))


def key(task: TaskResults) -> tuple[str, str]:
    """What tells tasks apart across the metrics' views: the name and the folder."""
    return (str(task.name), str(task.folder))


def every_metric(
    results_dirs: PathLike | Iterable[PathLike] | Sequence[TaskResults],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
) -> EveryMetric:
    """Each metric's report rows (``report_rows``, these arguments) over the tasks found
    under ``results_dirs`` that measured it (``metrics.measured``). ``ResultsError`` as for
    ``--metric X`` when a task measured a metric but its splits were not kept."""
    tasks = tasks_of(results_dirs)
    got = {key(t): measured(t) for t in tasks}
    metrics = tuple(m for m in METRICS if any(m in ms for ms in got.values()))
    rows = {m: report_rows([t for t in tasks if m in got[key(t)]], n_boot=n_boot, seed=seed,
                           level=level, metric=m) for m in metrics}
    order = list(dict.fromkeys(key(r["_task"]) for r in rows["error"]))
    by_key = {key(t): t for t in tasks}
    views = {key(r["_task"]) + (m,): r["_task"] for m in metrics for r in rows[m]}
    return EveryMetric(tuple(by_key[k] for k in order), metrics, rows, got,
                       {key(t): _disagreements(t, got[key(t)], {
                           m: views[key(t) + (m,)] for m in got[key(t)]
                           if key(t) + (m,) in views}) for t in tasks})


def _disagreements(task: TaskResults, metrics: Sequence[str],
                   views: Mapping[str, TaskResults]) -> list[Disagreement]:
    """The log-loss and the Brier score (those of ``metrics``) against the test error, by
    pair, then metric; ``views`` the task's views the report rows made."""
    mine = [m for m in AGAINST_ERROR if m in metrics]
    if not mine:
        return []
    winners = winners_by_m(task, ["error", *mine], views)
    found = [d for m in mine for d in disagreement(winners, m)]
    pairs = list(dict.fromkeys((d.model_a, d.model_b) for d in found))
    return [d for pair in pairs for d in found if (d.model_a, d.model_b) == pair]


# --------------------------------------------------------------------------------------
# Where the winners differ
# --------------------------------------------------------------------------------------

def _short(metric: str) -> str:
    """A metric's name without "test " (the log-loss, the Brier score)."""
    return LABELS[metric].removeprefix("test ")


def _ranges(ms: Sequence[int], sizes: Sequence[int]) -> str:
    """The sizes ``ms`` as runs of neighbours on the grid ``sizes``: ``2–8, 20``."""
    at = sorted(sizes.index(m) for m in ms)
    runs: list[list[int]] = []
    for k in at:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ", ".join(m_text(sizes[r[0]]) if len(r) == 1 else
                     f"{m_text(sizes[r[0]])}–{m_text(sizes[r[-1]])}" for r in runs)


def _says(name: str) -> str:
    return "a tie" if name == NEITHER else name


def _grouped(cases: Sequence[tuple[int, str, str]]) -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = {}
    for m, on_error, on_metric in cases:
        out.setdefault((on_error, on_metric), []).append(m)
    return out


def disagreement_line(d: Disagreement) -> str:
    """One list item: where ``d``'s metric names another winner than the test error."""
    what = _short(d.metric)
    sizes = list(d.sizes)
    parts = []
    for (on_error, on_metric), ms in _grouped(d.opposite).items():
        parts.append(f"**opposite winners** at m = {_ranges(ms, sizes)} ({on_error} on the "
                     f"test error, {on_metric} on the {what})")
    for (on_error, on_metric), ms in _grouped(d.tie_one_side).items():
        parts.append(f"at m = {_ranges(ms, sizes)} {_says(on_error)} on the test error, "
                     f"{_says(on_metric)} on the {what}")
    if d.missing:
        where = ("at any m" if len(d.missing) == len(sizes)
                 else f"at m = {_ranges(d.missing, sizes)}")
        parts.append(f"not compared {where} (no paired {what}: splits without class "
                     "probabilities, see the notes)")
    if d.same == len(sizes):
        parts.append("the same winner at every m")
    elif d.same:
        parts.append(f"the same winner at the other {d.same} size{'s' if d.same > 1 else ''}")
    return f"- {d.model_a} vs {d.model_b}, {what}: " + "; ".join(parts) + "."


def winners_markdown(every: EveryMetric, task: TaskResults) -> str:
    """Under a task's table: per pair and metric of the class probabilities (log-loss,
    Brier score), where its winner differs from the test error's, size by size."""
    mine = [m for m in AGAINST_ERROR if m in every.measured[key(task)]]
    if not mine:
        return ("The test error's winner is set against the log-loss's and the Brier "
                "score's where a run measured them; this task measured neither.\n")
    lines = [disagreement_line(d) for d in every.differ[key(task)]]
    if not lines:
        return ""
    return ("Against the test error, by m (each metric's winner at m from its paired 95% "
            "interval, as in the table's winner columns).\n\n" + "\n".join(lines) + "\n")


def opposite_markdown(every: EveryMetric) -> str:
    """Above the tasks: every pair, metric and sizes where the log-loss or the Brier score
    names the other model than the test error (``Disagreement.opposite``); a line saying
    there is none when so; "" when no task measured either, or has a pair to compare."""
    if not any(every.differ.values()):  # no such metric, or no pair to compare
        return ""
    lines = []
    for task in every.tasks:
        for d in every.differ[key(task)]:
            for (on_error, on_metric), ms in _grouped(d.opposite).items():
                lines.append(f"- {heading(every, task)} ({d.model_a} vs {d.model_b}): "
                             f"m = {_ranges(ms, list(d.sizes))}, {on_error} on the test error, "
                             f"{on_metric} on the {_short(d.metric)}")
    if not lines:
        named = " and the ".join(_short(m) for m in AGAINST_ERROR if m in every.metrics)
        return (f"The {named} never name{'s' if ' and ' not in named else ''} the other "
                "model than the test error at the same m (where they differ, one of them is "
                "a tie: see each task).\n")
    return ("Opposite winners: where the test error names one model and the log-loss or "
            "the Brier score the other, at the same m (paired 95% intervals).\n\n"
            + "\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------
# The Markdown
# --------------------------------------------------------------------------------------

def _all_rows(every: EveryMetric) -> list[dict[str, Any]]:
    return [r for m in every.metrics for r in every.rows[m]]


def task_markdown(every: EveryMetric, task: TaskResults) -> str:
    """A task's table (a row per pair and metric: the report's columns but the asymptotic
    and majority errors, which are the test error's alone) and where the winners differ."""
    names = titles(_all_rows(every))
    head = ("metric", "pair", *header(names)[1:10])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in every.task_rows(task):
        a, b = row["model_a"], row["model_b"]
        pair = f"{a} only" if row["_cross"] is None else f"{a} vs {b}"
        cells = markdown_cells(row, row["_splits_file"], names is not None)[1:10]
        metric = str(row["_task"].run_info.get("metric") or "error")
        lines.append("| " + " | ".join(c.replace("|", "\\|")
                                        for c in [LABELS[metric], pair, *cells]) + " |")
    text = "\n".join(lines) + "\n"
    winners = winners_markdown(every, task)
    return text + ("\n" + winners if winners else "")


def notes_markdown(every: EveryMetric, *, level: float, n_boot: int, notes: bool = True,
                   paper: bool = True) -> str:
    """After the tasks: the columns' definitions (``notes``), each metric's splits without
    a value, the quasi-separated training sets, and (``paper``) the test error's comparison
    with the paper's Figure 1."""
    rows = _all_rows(every)
    names = titles(rows)
    text = ""
    if notes:
        text += notes_text(names, level=level, n_boot=n_boot, rows=rows) + "\n"
        text += ("- A metric's rows show that metric in the columns headed for the error "
                 "(`nbvslr report --metric log_loss` has each alone); the asymptotic and "
                 "majority-class errors, of the test error alone, are in `nbvslr report`.\n")
        text += row_notes(rows, names)
        text += missing_lines(every)
    text += separation_lines(list(every.tasks))
    if paper:
        panels = fidelity.compare_tasks(list(every.tasks), strict=False)
        if panels:
            text += ("\nAgainst the paper's Figure 1:\n\n"
                     + fidelity.markdown(panels, notes=notes))
    return text


def missing_lines(every: EveryMetric) -> str:
    """``report.missing_note`` of every metric, a line per task and model: the metrics
    with the same splits missing named together (the log-loss and the Brier score are
    missing on the same splits: those without class probabilities)."""
    lines = []
    for task in every.tasks:
        found: dict[tuple[str, int], list[str]] = {}
        for metric in every.metrics:
            if metric == "error" or metric not in every.measured[key(task)]:
                continue
            view = every.view(task, metric)  # its error column is the metric
            for model, count in missing_counts(view.splits(), "error").items():
                found.setdefault((model, count), []).append(metric)
        why = task.run_info.get("no_probabilities") or {}
        for (model, count), metrics in found.items():
            reason = (why.get(model) or {}).get("reason") or "no value"
            lines.append(f"- {task.name}: {count} splits of {model} have no "
                         f"{' or '.join(metrics)} ({reason}); the means and paired "
                         "differences leave them out.")
    return "\n".join(lines) + "\n" if lines else ""


def every_metric_table(
    every: EveryMetric,
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
    notes: bool = True,
    paper: bool = True,
) -> str:
    """The Markdown of ``--metric all``: a line naming the metrics, each task's section
    (``task_markdown``) headed by its name, then the notes (``notes_markdown``); the test
    error's report after ``ERROR_ALONE`` when no task measured another metric."""
    if every.error_alone:
        return ERROR_ALONE + "\n\n" + report_table(list(every.tasks), n_boot=n_boot,
                                                   seed=seed, level=level, notes=notes,
                                                   paper=paper, rows=every.rows["error"])
    text = intro(every) + "\n"
    opposite = opposite_markdown(every)
    if opposite:
        text += "\n" + opposite
    for task in every.tasks:
        text += f"\n{heading(every, task)}:\n\n" + task_markdown(every, task)
    tail = notes_markdown(every, level=level, n_boot=n_boot, notes=notes, paper=paper)
    if tail:
        text += ("\nNotes:\n\n" if notes else "\n") + tail.lstrip("\n")
    return text


def intro(every: EveryMetric) -> str:
    """The line above the tasks: which metrics, and where each comes from."""
    return ("Every metric the runs measured: " + ", ".join(LABELS[m] for m in every.metrics)
            + ". Each row has the paired statistics of that metric's own report (`nbvslr "
            "report --metric X`): its means at the smallest and largest m, the winner at "
            "each end, the crossover and where b stays better.")


def heading(every: EveryMetric, task: TaskResults) -> str:
    """A task's heading: its name, and its folder when two tasks share the name."""
    named = sum(t.name == task.name for t in every.tasks)
    return task.name if named == 1 else f"{task.name} ({task.folder})"


# --------------------------------------------------------------------------------------
# CSV and the brief lines
# --------------------------------------------------------------------------------------

def every_metric_csv(every: EveryMetric) -> str:
    """``report_csv``'s table of every metric, one under the other, with a first column
    ``metric``: its rows of metric X are ``nbvslr report --metric X --format csv``'s."""
    tables = []
    for metric in every.metrics:
        table = csv_table(every.rows[metric])
        table.insert(0, "metric", metric)
        tables.append(table)
    return csv_text(pd.concat(tables, ignore_index=True))


def every_metric_brief(every: EveryMetric) -> str:
    """``verdict_lines`` of each metric, each line led by the metric's name."""
    width = max(len(m) for m in every.metrics)
    return "".join(f"{metric.ljust(width)}   {line}\n" for metric in every.metrics
                   for line in verdict_lines(every.rows[metric]).splitlines())
