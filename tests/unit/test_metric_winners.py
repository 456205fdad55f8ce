"""Where a metric's winner differs from the test error's (analysis/metric_winners.py), and
how the report says it (views/every_metric.py)."""

from __future__ import annotations

import pandas as pd

from nbvslr.analysis.metric_winners import disagreement
from nbvslr.views.every_metric import disagreement_line


def _winners() -> pd.DataFrame:
    """A pair over six sizes: the log-loss's winner opposite at 2 and 4, a tie on one side
    at 8, no log-loss at 16, the same at 32 and 64."""
    return pd.DataFrame({
        "model_a": ["nb"] * 6, "model_b": ["lr"] * 6, "m": [2, 4, 8, 16, 32, 64],
        "error": ["nb", "nb", "tie", "nb", "lr", "lr"],
        "log_loss": ["lr", "lr", "lr", None, "lr", "lr"],
    })


def test_sizes_are_sorted_into_opposite_one_sided_missing_and_same():
    """Each size lands in exactly one class, with the two winners it compares."""
    (d,) = disagreement(_winners(), "log_loss")
    assert d.sizes == (2, 4, 8, 16, 32, 64)
    assert d.opposite == ((2, "nb", "lr"), (4, "nb", "lr"))
    assert d.tie_one_side == ((8, "tie", "lr"),)
    assert d.missing == (16,) and d.same == 2 and d.differs


def test_the_line_names_the_sizes_as_runs_of_the_grid():
    """Neighbouring sizes of the grid are written as a range, each class once."""
    (d,) = disagreement(_winners(), "log_loss")
    assert disagreement_line(d) == (
        "- nb vs lr, log-loss: **opposite winners** at m = 2–4 (nb on the test error, lr on "
        "the log-loss); at m = 8 a tie on the test error, lr on the log-loss; not compared at "
        "m = 16 (no paired log-loss: splits without class probabilities, see the notes); the "
        "same winner at the other 2 sizes.")


def test_agreement_everywhere_is_said_once():
    """A metric that names the error's winner at every m: one clause, no difference."""
    table = _winners().assign(log_loss=_winners()["error"])
    (d,) = disagreement(table, "log_loss")
    assert not d.differs
    assert disagreement_line(d) == "- nb vs lr, log-loss: the same winner at every m."


def test_the_list_above_the_tasks_names_each_opposite_winner():
    """The page's first list: a line per task, pair and direction of the opposite winners,
    and a line saying there are none when the metrics only tie against the error."""
    from types import SimpleNamespace

    from nbvslr.views.every_metric import EveryMetric, opposite_markdown

    task = SimpleNamespace(name="pima", folder="runs/pima")
    (d,) = disagreement(_winners(), "log_loss")
    every = EveryMetric((task,), ("error", "log_loss"), {}, {}, {("pima", "runs/pima"): [d]})
    assert opposite_markdown(every).splitlines()[2:] == [
        "- pima (nb vs lr): m = 2–4, nb on the test error, lr on the log-loss"]
    (same,) = disagreement(_winners().assign(log_loss=["nb", "nb", "lr", "nb", "lr", "lr"]),
                           "log_loss")
    assert same.tie_one_side and not same.opposite
    quiet = EveryMetric((task,), ("error", "log_loss"), {}, {}, {("pima", "runs/pima"): [same]})
    assert opposite_markdown(quiet).startswith("The log-loss never names the other model")
