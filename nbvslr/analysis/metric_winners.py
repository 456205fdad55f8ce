"""Where two metrics name different winners: a pair's winner at each m, by metric, set side
by side.

Each metric's winner at m is ``winner.winner`` of that metric's paired row (``a - b`` on
the same splits, ``stats.task_paired`` of ``metrics.for_metric``): the rows every metric's
report reads, nothing computed anew. ``winners_by_m`` tabulates them; ``disagreement``
sets one metric against the test error, size by size: where the two name opposite models
(naive Bayes on the 0-1 error, logistic regression on the log-loss), where one names a
model and the other a tie, where they agree, and where the metric has no paired row (a
model without class probabilities on every split there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from nbvslr.analysis.metrics import for_metric
from nbvslr.analysis.stats import task_paired
from nbvslr.analysis.winner import NEITHER, winner
from nbvslr.results.read import TaskResults

AGAINST_ERROR = ("log_loss", "brier")
"""The metrics set against the test 0-1 error: the scores of the class probabilities on
the same test rows (the training error is of other rows, its winner another question)."""

KEYS = ("model_a", "model_b", "m")


def winners_by_m(task: TaskResults, metrics: Sequence[str],
                 views: Mapping[str, TaskResults] | None = None) -> pd.DataFrame:
    """The winner of each compared pair at each m, by metric (``views``: the task's views
    of some metrics already made, ``for_metric``'s, read instead of made again).

    Returns one row per (pair, m) that any metric has, columns ``model_a, model_b, m`` and
    one per metric of ``metrics``: the winner (a model's name, or ``NEITHER``), None where
    that metric has no paired row at m. Pairs in the first metric's ``task_paired`` order,
    sizes increasing.
    """
    table: pd.DataFrame | None = None
    for metric in metrics:
        view = (views or {}).get(metric)
        if view is None:
            view = for_metric(task, metric)
        paired = task_paired(view)
        got = pd.DataFrame({
            "model_a": paired["model_a"].astype(str), "model_b": paired["model_b"].astype(str),
            "m": paired["m"].astype(int),
            metric: [winner(row) for _, row in paired.iterrows()]})
        table = got if table is None else table.merge(got, on=list(KEYS), how="outer",
                                                     sort=False)
    if table is None:
        return pd.DataFrame(columns=list(KEYS))
    order = {pair: k for k, pair in enumerate(dict.fromkeys(
        zip(table["model_a"], table["model_b"], strict=True)))}
    table["_pair"] = [order[p] for p in zip(table["model_a"], table["model_b"], strict=True)]
    table = table.sort_values(["_pair", "m"], kind="stable").drop(columns="_pair")
    return table.astype({m: object for m in metrics}).where(table.notna(), None) \
        .reset_index(drop=True)


@dataclass(frozen=True)
class Disagreement:
    """One metric set against the test error for one pair, size by size.

    ``sizes``: the sizes m with a paired row of the error, increasing. ``opposite``: the
    sizes where the two name different models, as ``(m, on the error, on the metric)``;
    ``tie_one_side``: where one names a model and the other a tie, likewise; ``same``: how
    many sizes agree (the same model, or a tie on both); ``missing``: the sizes of
    ``sizes`` where the metric has no paired row.
    """

    model_a: str
    model_b: str
    metric: str
    sizes: tuple[int, ...]
    opposite: tuple[tuple[int, str, str], ...]
    tie_one_side: tuple[tuple[int, str, str], ...]
    same: int
    missing: tuple[int, ...]

    @property
    def differs(self) -> bool:
        """Whether the metric names another winner than the error at some m."""
        return bool(self.opposite or self.tie_one_side)


def disagreement(winners: pd.DataFrame, metric: str) -> list[Disagreement]:
    """``metric`` against the error in ``winners`` (``winners_by_m`` with both columns),
    one ``Disagreement`` per pair that the error compares."""
    out = []
    for (a, b), rows in winners.groupby(["model_a", "model_b"], sort=False):
        rows = rows[rows["error"].notna()]  # None or NaN: no paired row of that metric
        if rows.empty:
            continue
        opposite, one_side, missing, same = [], [], [], 0
        for m, on_error, on_metric in zip(rows["m"], rows["error"], rows[metric], strict=True):
            if on_metric is None or pd.isna(on_metric):
                missing.append(int(m))
            elif on_error == on_metric:
                same += 1
            elif NEITHER in (on_error, on_metric):
                one_side.append((int(m), str(on_error), str(on_metric)))
            else:
                opposite.append((int(m), str(on_error), str(on_metric)))
        out.append(Disagreement(str(a), str(b), metric, tuple(int(m) for m in rows["m"]),
                                tuple(opposite), tuple(one_side), same, tuple(missing)))
    return out
